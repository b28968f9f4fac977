//! Gradient checks of a bias family inside a tiny f64 model, per parameter tensor, and the
//! probe showing that T5's bucket boundaries have no gradient.
use super::model::{
    Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model, ModelConfig, OutputKind,
    PooledHead, Pooling, Targets,
};
use crate::autodiff::gradcheck::compare_central;
use crate::autodiff::{GradcheckReport, Tape, Var};
use crate::params::{Bound, ParamId, ParamStore};
use crate::position::{At5Options, BiasConfig, FireOptions, MlpOptions, T5Options};
use crate::tensor::Tensor;

/// The sequence length of the checked model (and of its training length `L`).
pub const CHECK_LEN: usize = 6;

/// Every ReLU input must be at least this far from 0: the central-difference step (1e-5) moves
/// a pre-activation by far less, so no difference straddles the kink.
pub const MIN_RELU_MARGIN: f64 = 1e-3;

/// The row label of the summary check over every parameter outside the bias.
pub const REST: &str = "(rest of the model)";

/// How much the weights outside the bias are scaled up before checking: BERT's 0.02 init
/// gives gradients too small to compare meaningfully. The bias keeps its init (the small
/// variants of [`small_bias`] already use a larger MLP std): scaled, its MLP would output
/// biases in the hundreds, saturate every softmax and leave nothing to compare, and AT5's
/// `1 - exp(-alpha n)` would saturate at n = 1.
const SCALE: f64 = 8.0;

/// One parameter tensor (or the rest of the model) compared against central differences.
#[derive(Clone, Debug)]
pub struct ParamCheck {
    /// The store name (`bias.a`, `bias.neg.w1`, ...) or [`REST`].
    pub name: String,
    /// Number of scalars covered.
    pub size: usize,
    /// How the tape gradient compared with central differences.
    pub report: GradcheckReport,
    /// The largest `|tape gradient|` over the checked coordinates: a check of a gradient that
    /// is exactly 0 everywhere (a dead ReLU, a branch the loss never reads) shows nothing.
    pub max_grad: f64,
    /// The parameter holding the worst relative error (itself, for a single tensor).
    pub worst: String,
}

/// All checks of one family.
#[derive(Clone, Debug)]
pub struct BiasCheck {
    /// The family's command-line name.
    pub family: &'static str,
    /// The smallest `|x|` fed to a ReLU, `None` when the model has no ReLU on a gradient path.
    pub relu_margin: Option<f64>,
    /// The bias tensors in registration order, then [`REST`].
    pub params: Vec<ParamCheck>,
}

impl BiasCheck {
    /// Every tensor passed and no ReLU input sat near its kink.
    pub fn passed(&self) -> bool {
        self.relu_margin.is_none_or(|m| m >= MIN_RELU_MARGIN)
            && self.params.iter().all(|p| p.report.passed)
    }
}

/// A family's small variant for the check: T5 with 8 buckets up to distance 6 (so several
/// buckets are hit at L = 6), MLP widths 4 and 3 with init std 0.5, FIRE width 6, no dropout.
pub fn small_bias(name: &str) -> Result<BiasConfig, String> {
    Ok(match BiasConfig::from_name(name)? {
        BiasConfig::T5(o) => BiasConfig::T5(T5Options {
            num_buckets: 8,
            max_distance: CHECK_LEN,
            ..o
        }),
        BiasConfig::At5(o) => BiasConfig::At5(At5Options {
            mlp: small_mlp(o.mlp),
            ..o
        }),
        BiasConfig::At5NoB(o) => BiasConfig::At5NoB(small_mlp(o)),
        BiasConfig::Fire(_) => BiasConfig::Fire(FireOptions { hidden: 6 }),
        other => other,
    })
}

/// Widths 4 and 3, init std 0.5: at the paper's 0.01 the bias and its gradients start almost
/// flat (docs/why-at5-starts-flat.md), too small for a central difference to check.
fn small_mlp(o: MlpOptions) -> MlpOptions {
    MlpOptions {
        l1: 4,
        l2: 3,
        init_std: 0.5,
        ..o
    }
}

/// D = 8, H = 2, FFN 16, one layer, vocab 5, 3 classes, L = 6. Mean pooling, so every query
/// reaches the loss: pooling one slot of a one-layer model would leave one direction of the
/// bias (n > 0 from the last slot) without any gradient to check.
fn tiny_config(bias: &BiasConfig) -> ModelConfig {
    ModelConfig {
        input: InputKind::Tokens { vocab: 5 },
        output: OutputKind::Classes(3),
        d_model: 8,
        heads: 2,
        ffn: 16,
        layers: 1,
        max_len: CHECK_LEN,
        bias: bias.clone(),
        bias_scope: BiasScope::Shared,
        pooling: Pooling::Mean,
        dropout: Dropouts::NONE,
        head: PooledHead::default(),
        unbiased_heads: Vec::new(),
    }
}

/// Two length-6 sequences, the second ending in two padding slots (so masking is on the path).
fn tiny_batch() -> (Batch, Targets) {
    let ids = vec![1, 2, 3, 4, 1, 2, 3, 3, 1, 4, 0, 0];
    let pad = ids.iter().map(|&t| t == 0).collect();
    let batch = Batch {
        b: 2,
        l: CHECK_LEN,
        input: BatchInput::Tokens(ids),
        pad,
    };
    (batch, Targets::Classes(vec![2, 0]))
}

/// The tiny model of `bias` with its weights scaled as the check uses them.
fn tiny_model(bias: &BiasConfig, seed: u64) -> Result<(Model<f64>, ParamStore<f64>), String> {
    let mut store = ParamStore::<f64>::new();
    let model = Model::new(tiny_config(bias), &mut store, seed)?;
    for id in store.ids().collect::<Vec<_>>() {
        if !store.name(id).starts_with("bias.") {
            store.get_mut(id).data.iter_mut().for_each(|x| *x *= SCALE);
        }
    }
    Ok((model, store))
}

fn loss(model: &Model<f64>, tape: &mut Tape<f64>, p: &Bound, batch: &Batch, y: &Targets) -> Var {
    let fwd = model.forward(tape, p, batch, &ForwardOpts::default());
    model.loss(tape, fwd.output, y)
}

/// The loss of the store's current values on an evaluation tape (nothing recorded).
fn loss_value(model: &Model<f64>, store: &ParamStore<f64>, batch: &Batch, y: &Targets) -> f64 {
    let mut t = Tape::eval();
    let p = store.bind(&mut t);
    let l = loss(model, &mut t, &p, batch, y);
    t.value(l).data[0]
}

/// Tape gradient of the loss vs central differences over the tensors `subset`, by the rule of
/// [`compare_central`]; with the largest `|tape gradient|`.
fn compare(
    model: &Model<f64>,
    store: &ParamStore<f64>,
    subset: &[ParamId],
    batch: &Batch,
    y: &Targets,
) -> (GradcheckReport, f64) {
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    let l = loss(model, &mut tape, &p, batch, y);
    let grads = tape.backward(l);
    let sizes: Vec<usize> = subset.iter().map(|&id| store.get(id).len()).collect();
    let analytic = |k: usize, e: usize| grads.get(p.var(subset[k])).map_or(0.0, |g| g.data[e]);
    let mut probe = store.clone();
    let shifted = |k: usize, e: usize, d: f64| {
        let id = subset[k];
        let x = store.get(id).data[e];
        probe.get_mut(id).data[e] = x + d;
        let v = loss_value(model, &probe, batch, y);
        probe.get_mut(id).data[e] = x;
        v
    };
    compare_central(&sizes, analytic, shifted)
}

/// Checks the tape gradient of a tiny classifier's loss against central differences for every
/// parameter tensor of `bias` (one row each) and for the rest of the model (one row).
/// `seed` initialises the model; the ReLU margin says whether the check is meaningful there.
pub fn check_bias_gradients(bias: &BiasConfig, seed: u64) -> Result<BiasCheck, String> {
    let (model, store) = tiny_model(bias, seed)?;
    let (batch, y) = tiny_batch();
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    loss(&model, &mut tape, &p, &batch, &y);
    let relu_margin = tape.min_relu_input();

    let bias_ids = model.biases[0].param_ids();
    let mut params: Vec<ParamCheck> = bias_ids
        .iter()
        .map(|&id| {
            let (report, max_grad) = compare(&model, &store, &[id], &batch, &y);
            ParamCheck {
                name: store.name(id).to_string(),
                size: store.get(id).len(),
                report,
                max_grad,
                worst: store.name(id).to_string(),
            }
        })
        .collect();
    let rest: Vec<ParamId> = store.ids().filter(|id| !bias_ids.contains(id)).collect();
    let (report, max_grad) = compare(&model, &store, &rest, &batch, &y);
    params.push(ParamCheck {
        max_grad,
        name: REST.to_string(),
        size: rest.iter().map(|&id| store.get(id).len()).sum(),
        worst: store.name(rest[report.worst.0]).to_string(),
        report,
    });
    Ok(BiasCheck {
        family: bias.name(),
        relu_margin,
        params,
    })
}

/// T5's bucket with the offset and the boundary `max_distance` real-valued, in f64: the
/// continuous relaxation in which a derivative with respect to the boundary can be asked.
/// On integers it is [`crate::position::t5_bucket`] (which takes the log in f32, as HF).
pub fn t5_bucket_relaxed(
    relative_position: f64,
    num_buckets: usize,
    max_distance: f64,
    bidirectional: bool,
) -> usize {
    let mut m = -relative_position;
    let mut ret = 0;
    let mut nb = num_buckets;
    if bidirectional {
        nb /= 2;
        if m < 0.0 {
            ret += nb;
        }
        m = m.abs();
    } else {
        m = m.max(0.0);
    }
    let me = (nb / 2) as f64;
    if m < me {
        return ret + m as usize;
    }
    if max_distance <= me {
        return ret + nb - 1;
    }
    let x = (m / me).ln() / (max_distance / me).ln() * (nb as f64 - me);
    ret + (nb / 2 + x as usize).min(nb - 1)
}

/// The boundaries `D` in `(lo, hi]` where some integer distance `m <= max_offset` changes
/// bucket: `ln(m/me) / ln(D/me) · (nb - me) = k`, i.e. `D = me · (m/me)^((nb - me)/k)`, for
/// the buckets `k` below the clamp. Returned as `(D, m, me + k)`, sorted by `D`.
pub fn t5_boundary_jumps(
    num_buckets: usize,
    bidirectional: bool,
    max_offset: usize,
    (lo, hi): (f64, f64),
) -> Vec<(f64, usize, usize)> {
    let nb = if bidirectional {
        num_buckets / 2
    } else {
        num_buckets
    };
    let me = nb / 2;
    let mut jumps = Vec::new();
    for m in me + 1..=max_offset {
        for k in 1..nb - me {
            let d = me as f64 * (m as f64 / me as f64).powf((nb - me) as f64 / k as f64);
            if d > lo && d <= hi {
                jumps.push((d, m, me + k));
            }
        }
    }
    jumps.sort_by(|a, b| a.0.total_cmp(&b.0));
    jumps
}

/// The T5 bias of the checked model as a function of its boundary: a bucket table and the
/// offsets it is read at.
pub struct T5Probe {
    /// `[num_buckets, H]`, the checked model's (scaled) table.
    pub table: Tensor<f64>,
    /// T5's bucket count.
    pub num_buckets: usize,
    /// T5's distance where the last bucket starts.
    pub max_distance: usize,
    /// Whether the buckets distinguish both directions.
    pub bidirectional: bool,
    /// The offsets `-(L-1) ..= L-1` of the checked length.
    pub offsets: Vec<i64>,
}

impl T5Probe {
    /// The probe of the small T5 of [`small_bias`], initialised from `seed` as the check is.
    pub fn new(seed: u64) -> Result<T5Probe, String> {
        let cfg = small_bias("t5")?;
        let BiasConfig::T5(T5Options {
            num_buckets,
            max_distance,
            bidirectional,
        }) = cfg
        else {
            unreachable!("small_bias(\"t5\") is a T5 config")
        };
        let (_, store) = tiny_model(&cfg, seed)?;
        let id = store
            .id("bias.table")
            .ok_or("t5 probe: no bias.table in the model")?;
        Ok(T5Probe {
            table: store.get(id).clone(),
            num_buckets,
            max_distance,
            bidirectional,
            offsets: crate::position::offsets(CHECK_LEN, CHECK_LEN),
        })
    }

    /// `max |b_h(n; D + h) - b_h(n; D - h)| / 2h` over every offset and head: the central
    /// difference of the bias with respect to the boundary `D`.
    pub fn quotient(&self, d: f64, h: f64) -> f64 {
        let heads = self.table.shape[1];
        let bias = |n: i64, dd: f64, head: usize| {
            let b = t5_bucket_relaxed(n as f64, self.num_buckets, dd, self.bidirectional);
            self.table.data[b * heads + head]
        };
        let mut worst: f64 = 0.0;
        for &n in &self.offsets {
            for head in 0..heads {
                let q = (bias(n, d + h, head) - bias(n, d - h, head)).abs() / (2.0 * h);
                worst = worst.max(q);
            }
        }
        worst
    }

    /// The jump points of [`t5_boundary_jumps`] for this probe's offsets in `(lo, hi]`.
    pub fn jumps(&self, range: (f64, f64)) -> Vec<(f64, usize, usize)> {
        let max_offset = self
            .offsets
            .iter()
            .map(|n| n.unsigned_abs())
            .max()
            .unwrap_or(0);
        t5_boundary_jumps(
            self.num_buckets,
            self.bidirectional,
            max_offset as usize,
            range,
        )
    }

    /// Scans `D` from `lo` to `hi` in `steps` equal steps: how many points have a non-zero
    /// quotient at step `h`, and whether each of those lies within `h` of a jump point.
    pub fn scan(&self, (lo, hi): (f64, f64), steps: usize, h: f64) -> (usize, usize, bool) {
        let jumps = self.jumps((lo - 1.0, hi + 1.0));
        let mut nonzero = 0;
        let mut all_near = true;
        for s in 0..=steps {
            let d = lo + (hi - lo) * s as f64 / steps as f64;
            if self.quotient(d, h) != 0.0 {
                nonzero += 1;
                all_near &= jumps.iter().any(|j| (j.0 - d).abs() <= h * (1.0 + 1e-9));
            }
        }
        (steps + 1, nonzero, all_near)
    }
}
