//! AT5's per-head MLPs: a soft bucket in, a bias out, one MLP per head and direction, shared
//! by AT5 (the bucket `1 - exp(-alpha |n|)`) and AT5-NoB (the bucket `|n| / L`), with their
//! options and both inits.
use super::{DeadUnits, gather_offsets, offset_ids_rows};
use crate::autodiff::MaskRows;
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// How the per-head MLPs start (docs/why-at5-starts-flat.md derives and measures both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MlpInit {
    /// The original code's: weights truncated N(0, std²), biases the constant std. With std
    /// 0.01 the bias starts flat over offsets (its slope is O(std³)) and so do its gradients.
    #[default]
    Paper,
    /// The same function class started in its linear regime: weights truncated N(0, 1/fan_in),
    /// each ReLU's bias set so that the unit is active at every soft-bucket value in [0, 1]
    /// (with a margin of 0.1), last bias 0. The bias starts as a line in `f(n)` with a slope of
    /// order 1 (its sign random per head and direction), and no unit starts dead.
    Alive,
}

impl MlpInit {
    /// The command-line names, in the order `--at5-init` lists them.
    pub const NAMES: [&'static str; 2] = ["paper", "alive"];

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Result<MlpInit, String> {
        match name {
            "paper" => Ok(MlpInit::Paper),
            "alive" => Ok(MlpInit::Alive),
            other => Err(format!(
                "unknown AT5 init `{other}`; expected one of {}",
                MlpInit::NAMES.join(", ")
            )),
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            MlpInit::Paper => "paper",
            MlpInit::Alive => "alive",
        }
    }

    /// Whether this is the default (records leave the field out then, as before it existed).
    pub fn is_paper(&self) -> bool {
        *self == MlpInit::Paper
    }
}

/// The widths, init and dropout of the per-head MLPs AT5 and AT5-NoB share: AT5-NoB's options,
/// and AT5's beside its slopes. Records store the fields inline in the family's options, in
/// this order.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpOptions {
    /// Width of the first hidden layer.
    pub l1: usize,
    /// Width of the second hidden layer.
    pub l2: usize,
    /// Std of the truncated-normal weight init; biases start at this constant.
    /// Used by [`MlpInit::Paper`] only.
    pub init_std: f64,
    /// Dropout after the first hidden layer (training only; the input-dropout rate).
    pub dropout: f64,
    /// Draw that dropout per cell `(h, i, j)` of the bias grid, as the original code, instead
    /// of once per offset `n` (which keeps the training bias a function of `n` alone). Absent in
    /// records written before the option, which dropped per offset.
    #[serde(rename = "dropout_per_cell", default)]
    pub per_cell: bool,
    /// How the MLP starts; left out of records when it is the paper's (and so absent in every
    /// record written before the option).
    #[serde(default, skip_serializing_if = "MlpInit::is_paper")]
    pub init: MlpInit,
}

/// The MLP's options as a run sets them, for the family whose options hold an [`MlpOptions`]
/// `$ty` at `$($field)*` (AT5: `At5Options, .mlp`; AT5-NoB: `MlpOptions,`, the options
/// themselves): one list for both families.
macro_rules! mlp_settings {
    ($ty:ty, $($field:tt)*) => {
        [
            $crate::position::Setting {
                flag: "l1",
                value: "N",
                help: "width of the MLP's first hidden layer",
                set: |o: &mut $ty, v: &str| $crate::position::parse_count("l1", v).map(|x| o$($field)*.l1 = x),
                get: |o: &$ty| o$($field)*.l1.to_string(),
            },
            $crate::position::Setting {
                flag: "l2",
                value: "N",
                help: "width of the MLP's second hidden layer",
                set: |o: &mut $ty, v: &str| $crate::position::parse_count("l2", v).map(|x| o$($field)*.l2 = x),
                get: |o: &$ty| o$($field)*.l2.to_string(),
            },
            $crate::position::Setting {
                flag: "init-std",
                value: "STD",
                help: "std of the MLP's init (the paper init's; biases start at it)",
                set: |o: &mut $ty, v: &str| $crate::position::parse_real("init-std", v).map(|x| o$($field)*.init_std = x),
                get: |o: &$ty| o$($field)*.init_std.to_string(),
            },
            $crate::position::Setting {
                flag: "at5-dropout-mask",
                value: "cell|offset",
                help: "draw the MLP's dropout per grid cell (`cell`, the original code's way and \
                       the paper preset's) or once per offset (`offset`)",
                set: |o: &mut $ty, v: &str| {
                    o$($field)*.per_cell = match v {
                        "cell" => true,
                        "offset" => false,
                        _ => return Err(format!("--at5-dropout-mask {v}: expected cell or offset")),
                    };
                    Ok(())
                },
                get: |o: &$ty| (if o$($field)*.per_cell { "cell" } else { "offset" }).to_string(),
            },
            $crate::position::Setting {
                flag: "at5-init",
                value: "paper|alive",
                help: "how the MLP starts: `paper` (the default: std --init-std, a flat start) or \
                       `alive` (every unit active at every offset, a bias with a slope of order 1)",
                set: |o: &mut $ty, v: &str| {
                    o$($field)*.init = $crate::position::MlpInit::from_name(v)
                        .map_err(|e| format!("--at5-init: {e}"))?;
                    Ok(())
                },
                get: |o: &$ty| o$($field)*.init.name().to_string(),
            },
        ]
    };
}
pub(super) use mlp_settings;

impl Default for MlpOptions {
    /// The paper's: widths 15 and 2, init std 0.01, no dropout, the paper's init.
    fn default() -> MlpOptions {
        MlpOptions {
            l1: 15,
            l2: 2,
            init_std: 0.01,
            dropout: 0.0,
            per_cell: false,
            init: MlpInit::Paper,
        }
    }
}

impl MlpOptions {
    /// Refuses widths of zero, a negative or non-finite init std, and dropout outside [0, 1).
    pub fn check(&self, family: &str) -> Result<(), String> {
        if self.l1 == 0 {
            return Err(format!("{family}: l1 must be at least 1, got 0"));
        }
        if self.l2 == 0 {
            return Err(format!("{family}: l2 must be at least 1, got 0"));
        }
        if !(self.init_std.is_finite() && self.init_std >= 0.0) {
            return Err(format!(
                "{family}: init_std must be finite and >= 0, got {}",
                self.init_std
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(format!(
                "{family}: dropout must be in [0, 1), got {}",
                self.dropout
            ));
        }
        Ok(())
    }
}

/// One MLP `1 → l1 → ReLU → dropout → l2 → ReLU → 1` per head, the heads batched as the
/// leading axis of every weight: `H·(l1 + l1 + l1·l2 + l2 + l2 + 1)` parameters.
struct HeadMlp {
    /// `[H, 1, l1]`, `[H, 1, l1]`, `[H, l1, l2]`, `[H, 1, l2]`, `[H, l2, 1]`, `[H, 1, 1]`.
    ids: [ParamId; 6],
}

impl HeadMlp {
    fn new<F: Float>(
        heads: usize,
        o: &MlpOptions,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> HeadMlp {
        let tensors = match o.init {
            MlpInit::Paper => paper_init(heads, o, rng),
            MlpInit::Alive => alive_init(heads, o, rng),
        };
        let names = ["w1", "b1", "w2", "b2", "w3", "b3"];
        let mut i = 0;
        let ids = tensors.map(|t| {
            let id = store.add(&format!("{prefix}.{}", names[i]), t);
            i += 1;
            id
        });
        HeadMlp { ids }
    }

    /// `x [H, m, 1] -> [H, m, 1]`.
    fn forward<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        x: Var,
        dropout: f64,
        seed: u64,
    ) -> Var {
        let h = self.first_layer(tape, params, x);
        let h = tape.dropout(h, dropout, seed);
        self.last_layers(tape, params, h)
    }

    /// `x [H, m, 1] -> relu(x w1 + b1)`, `[H, m, l1]`.
    fn first_layer<F: Float>(&self, tape: &mut Tape<F>, params: &Bound, x: Var) -> Var {
        let [w1, b1] = [self.ids[0], self.ids[1]].map(|id| params.var(id));
        let h = tape.matmul(x, w1);
        let h = tape.add(h, b1);
        tape.relu(h)
    }

    /// `x [H, m, 1]` → per head, the fraction of units of each hidden layer that are zero at
    /// all `m` inputs.
    fn dead_fractions<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        x: Var,
    ) -> Vec<[f64; 2]> {
        let h1 = self.first_layer(tape, params, x);
        let [w2, b2] = [2, 3].map(|k| params.var(self.ids[k]));
        let h2 = tape.matmul(h1, w2);
        let h2 = tape.add(h2, b2);
        let h2 = tape.relu(h2);
        let dead = |t: &Tensor<F>| -> Vec<f64> {
            let (heads, m, w) = (t.shape[0], t.shape[1], t.shape[2]);
            (0..heads)
                .map(|h| {
                    let block = &t.data[h * m * w..(h + 1) * m * w];
                    let n = (0..w)
                        .filter(|&u| (0..m).all(|i| block[i * w + u] <= F::ZERO))
                        .count();
                    n as f64 / w as f64
                })
                .collect()
        };
        let (d1, d2) = (dead(tape.value(h1)), dead(tape.value(h2)));
        d1.into_iter().zip(d2).map(|(a, b)| [a, b]).collect()
    }

    /// `h [H, m, l1] -> relu(h w2 + b2) w3 + b3`, `[H, m, 1]`.
    fn last_layers<F: Float>(&self, tape: &mut Tape<F>, params: &Bound, h: Var) -> Var {
        let [w2, b2, w3, b3] = [2, 3, 4, 5].map(|k| params.var(self.ids[k]));
        let h = tape.matmul(h, w2);
        let h = tape.add(h, b2);
        let h = tape.relu(h);
        let h = tape.matmul(h, w3);
        tape.add(h, b3)
    }
}

/// The shapes of `w1, b1, w2, b2, w3, b3` for `heads` MLPs `1 → l1 → l2 → 1`.
fn mlp_shapes(heads: usize, l1: usize, l2: usize) -> [[usize; 3]; 6] {
    let h = heads;
    [
        [h, 1, l1],
        [h, 1, l1],
        [h, l1, l2],
        [h, 1, l2],
        [h, l2, 1],
        [h, 1, 1],
    ]
}

/// [`MlpInit::Paper`]: weights truncated N(0, std²), biases the constant std, as the original
/// AT5 code.
fn paper_init<F: Float>(heads: usize, o: &MlpOptions, rng: &mut StdRng) -> [Tensor<F>; 6] {
    let s = o.init_std;
    let mut k = 0;
    mlp_shapes(heads, o.l1, o.l2).map(|shape| {
        let weight = k % 2 == 0;
        k += 1;
        if weight {
            Tensor::truncated_normal_from(&shape, s, rng)
        } else {
            Tensor::full(&shape, F::from_f64(s))
        }
    })
}

/// [`MlpInit::Alive`]: weights truncated N(0, 1/fan_in); then, layer by layer and head by head,
/// each unit's bias is the smallest that keeps its pre-activation at least 0.1 at both ends
/// of the input range [0, 1]. A layer that is affine in `x` on [0, 1] (every unit below it
/// active) is positive on the whole range once it is at both ends, so every unit is active at
/// every offset and the MLP starts as the line its weights compose to.
fn alive_init<F: Float>(heads: usize, o: &MlpOptions, rng: &mut StdRng) -> [Tensor<F>; 6] {
    const MARGIN: f64 = 0.1;
    let (l1, l2) = (o.l1, o.l2);
    let shapes = mlp_shapes(heads, l1, l2);
    let weight = |shape: &[usize; 3], rng: &mut StdRng| -> Vec<f64> {
        let std = 1.0 / (shape[1] as f64).sqrt();
        let t: Tensor<f64> = Tensor::truncated_normal_from(shape, std, rng);
        t.data
    };
    let w1 = weight(&shapes[0], rng);
    let w2 = weight(&shapes[2], rng);
    let w3 = weight(&shapes[4], rng);
    let mut b1 = vec![0.0; heads * l1];
    let mut b2 = vec![0.0; heads * l2];
    for h in 0..heads {
        // Layer 1 at x = 0 is b1 and at x = 1 is w1 + b1.
        let (w1h, b1h) = (&w1[h * l1..(h + 1) * l1], &mut b1[h * l1..(h + 1) * l1]);
        for (b, &w) in b1h.iter_mut().zip(w1h) {
            *b = MARGIN + (-w).max(0.0);
        }
        // Layer 2's pre-activation without its bias, at both ends.
        let ends = [0.0, 1.0].map(|x| {
            let h1: Vec<f64> = w1h.iter().zip(b1h.iter()).map(|(w, b)| w * x + b).collect();
            (0..l2)
                .map(|v| {
                    (0..l1)
                        .map(|u| h1[u] * w2[h * l1 * l2 + u * l2 + v])
                        .sum::<f64>()
                })
                .collect::<Vec<f64>>()
        });
        for v in 0..l2 {
            b2[h * l2 + v] = MARGIN + (-ends[0][v].min(ends[1][v])).max(0.0);
        }
    }
    let to = |shape: &[usize; 3], v: Vec<f64>| {
        Tensor::from_vec(shape, v.into_iter().map(F::from_f64).collect())
    };
    let b3 = vec![0.0; heads];
    let [s0, s1, s2, s3, s4, s5] = shapes;
    [
        to(&s0, w1),
        to(&s1, b1),
        to(&s2, w2),
        to(&s3, b2),
        to(&s4, w3),
        to(&s5, b3),
    ]
}

/// The MLPs of both directions (`{prefix}.neg.*` for `n <= 0`, `{prefix}.pos.*` for `n > 0`)
/// that turn a per-offset input in [0, 1] into the bias; AT5 feeds them its soft bucket, AT5-NoB
/// a free table, so the two differ in the bucketization alone.
pub(super) struct BucketMlp {
    neg: HeadMlp,
    pos: HeadMlp,
    dropout: f64,
    per_cell: bool,
}

/// Independent dropout streams per direction from one seed (splitmix64 of the stream index).
fn stream(seed: u64, k: u64) -> u64 {
    let mut z = seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Rows `start..end` of a per-offset input `[N, H]` as the MLPs' batched input `[H, m, 1]`.
fn direction_input<F: Float>(tape: &mut Tape<F>, input: Var, start: usize, end: usize) -> Var {
    let heads = tape.shape(input)[1];
    let x = tape.slice(input, 0, start, end);
    let x = tape.permute(x, &[1, 0]);
    tape.reshape(x, &[heads, end - start, 1])
}

impl BucketMlp {
    pub(super) fn new<F: Float>(
        heads: usize,
        o: &MlpOptions,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> BucketMlp {
        let neg = HeadMlp::new(heads, o, store, &format!("{prefix}.neg"), rng);
        let pos = HeadMlp::new(heads, o, store, &format!("{prefix}.pos"), rng);
        BucketMlp {
            neg,
            pos,
            dropout: o.dropout,
            per_cell: o.per_cell,
        }
    }

    pub(super) fn param_ids(&self) -> Vec<ParamId> {
        self.neg.ids.iter().chain(&self.pos.ids).copied().collect()
    }

    /// [`super::PositionBias::dead_units`] for the per-offset input `input [2·len - 1, H]`.
    pub(super) fn dead_units<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        input: Var,
        len: usize,
    ) -> Vec<DeadUnits> {
        let side = |tape: &mut Tape<F>, mlp: &HeadMlp, start: usize, end: usize| {
            let x = direction_input(tape, input, start, end);
            mlp.dead_fractions(tape, params, x)
        };
        let neg = side(tape, &self.neg, 0, len);
        let pos = side(tape, &self.pos, len, 2 * len - 1);
        neg.into_iter()
            .zip(pos)
            .map(|(n, p)| DeadUnits {
                layer1: [n[0], p[0]],
                layer2: [n[1], p[1]],
            })
            .collect()
    }

    /// `input [lq + lk - 1, H]`, one row per offset of [`super::offsets`], to the query rows
    /// `rows` of the grid `[H, lq, lk]`. The first `lq` rows of `input` are the offsets
    /// `n <= 0`, the rest `n > 0`. The MLP runs once per offset, so a dropout mask is shared by
    /// all cells of one offset, whichever rows are gathered; with per-cell dropout on a
    /// training tape, see [`BucketMlp::grid_per_cell`].
    pub(super) fn grid<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        input: Var,
        (lq, lk, rows): (usize, usize, Range<usize>),
        seed: u64,
    ) -> Var {
        if self.per_cell && self.dropout > 0.0 && tape.is_training() {
            return self.grid_per_cell(tape, params, input, (lq, lk, rows), seed);
        }
        let heads = tape.shape(input)[1];
        let run = |tape: &mut Tape<F>, mlp: &HeadMlp, start: usize, end: usize, k: u64| {
            let x = direction_input(tape, input, start, end);
            let y = mlp.forward(tape, params, x, self.dropout, stream(seed, k));
            tape.reshape(y, &[heads, end - start])
        };
        let mut parts = vec![run(tape, &self.neg, 0, lq, 0)];
        if lk > 1 {
            parts.push(run(tape, &self.pos, lq, lq + lk - 1, 1));
        }
        let by_head = tape.concat(&parts, 1);
        let per_offset = tape.permute(by_head, &[1, 0]);
        gather_offsets(tape, per_offset, lq, lk, rows)
    }

    /// [`BucketMlp::grid`] with its dropout drawn per cell `(h, i, j)`: the first layer still
    /// runs once per offset, its output is spread over the cells of `rows`, dropped there (the
    /// masks of those rows of the whole `[H, lq, lk, l1]` grid), and the last layers run per
    /// cell, each direction's on every cell with a select by the sign of `n`. O(H·rows·lk·l1·l2)
    /// per step: one row when the last block is pruned, `lq` rows otherwise.
    fn grid_per_cell<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        input: Var,
        (lq, lk, rows): (usize, usize, Range<usize>),
        seed: u64,
    ) -> Var {
        let heads = tape.shape(input)[1];
        let first = |tape: &mut Tape<F>, mlp: &HeadMlp, start: usize, end: usize| {
            let x = direction_input(tape, input, start, end);
            mlp.first_layer(tape, params, x)
        };
        let n = lq + lk - 1;
        let mut parts = vec![first(tape, &self.neg, 0, lq)];
        if lk > 1 {
            parts.push(first(tape, &self.pos, lq, n));
        }
        let hidden = tape.concat(&parts, 1); // (H, offsets, l1)
        let l1 = tape.shape(hidden)[2];
        let by_offset = tape.permute(hidden, &[1, 0, 2]);
        let by_offset = tape.reshape(by_offset, &[n, heads * l1]);
        let r = rows.len();
        let cond: Vec<bool> = (0..heads)
            .flat_map(|_| rows.clone().flat_map(|i| (0..lk).map(move |j| j <= i)))
            .collect();
        let window = MaskRows {
            full: lq,
            first: rows.start,
        };
        let cells = tape.embedding(by_offset, &offset_ids_rows(lq, lk, rows));
        let cells = tape.reshape(cells, &[r, lk, heads, l1]);
        let cells = tape.permute(cells, &[2, 0, 1, 3]);
        let cells = tape.reshape(cells, &[heads, r, lk * l1]);
        let cells = tape.dropout_window(cells, self.dropout, stream(seed, 2), Some(window));
        let cells = tape.reshape(cells, &[heads, r * lk, l1]);
        let neg = self.neg.last_layers(tape, params, cells);
        let pos = self.pos.last_layers(tape, params, cells);
        let y = tape.where_(&cond, neg, pos);
        tape.reshape(y, &[heads, r, lk])
    }
}

/// The parameters of the two directions' MLPs `1 → l1 → l2 → 1` (with biases) for every head.
pub(super) fn mlp_param_count(mlp: &MlpOptions, heads: usize) -> f64 {
    let (h, a, b) = (heads as f64, mlp.l1 as f64, mlp.l2 as f64);
    2.0 * h * (2.0 * a + a * b + 2.0 * b + 1.0)
}
