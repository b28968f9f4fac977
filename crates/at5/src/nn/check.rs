//! Gradient checks of a bias family inside a tiny f64 model, per parameter tensor, and the
//! probe showing that T5's bucket boundaries have no gradient.
use super::model::{
    Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model, ModelConfig, OutputKind,
    PooledHead, Pooling, Targets,
};
use crate::autodiff::gradcheck::{ABS_TOL, compare_central};
use crate::autodiff::{GradcheckReport, Tape, Var};
use crate::params::{Bound, ParamId, ParamStore};
use crate::position::{At5Options, BiasConfig, FireOptions, MlpOptions, T5Options};
use crate::tensor::Tensor;

/// The default sequence length of the checked model (and of its training length `L`).
pub const CHECK_LEN: usize = 6;

/// The default init std of the small AT5 and AT5-NoB MLPs: at the paper's 0.01 the bias and
/// its gradients start almost flat (docs/why-at5-starts-flat.md), too small to check.
pub const CHECK_INIT_STD: f64 = 0.5;

/// The default central-difference step. The ops' checks use 1e-5; here the weights outside the
/// bias are scaled up (see `SCALE`) and the pruned path stacks two layers, so the loss has large
/// third derivatives and the step's own error, `O(h²)`, reaches 1e-6 relative at 1e-5 (the
/// embedding table on the pruned path), while rounding at 1e-6 stays near 1e-10.
pub const CHECK_STEP: f64 = 1e-6;

/// The lengths the check accepts: the padded second sequence needs a real token, and past 64
/// the check only gets slower.
pub const CHECK_LENS: std::ops::RangeInclusive<usize> = 3..=64;

/// A tensor whose largest tape gradient is below this many times the absolute tolerance passes
/// whatever its backward computes: its pass says nothing.
pub const VACUOUS_FACTOR: f64 = 100.0;

/// Which graph the check differentiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckPath {
    /// One layer, mean pooling: every query row of every block is computed and reaches the loss.
    Whole,
    /// Two layers, last-slot pooling: the last block computes the pooled row alone, as training
    /// does for Reber, Adding and lag-k (the first block keeps every row, so both directions of
    /// the shared bias still reach the loss).
    Pruned,
}

impl CheckPath {
    /// Both paths, whole first.
    pub const ALL: [CheckPath; 2] = [CheckPath::Whole, CheckPath::Pruned];

    /// `whole` or `pruned`, as the binary's table prints it.
    pub fn name(self) -> &'static str {
        match self {
            CheckPath::Whole => "whole",
            CheckPath::Pruned => "pruned",
        }
    }
}

/// What the check varies: the length, the MLP init, the step, and a planted error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CheckOptions {
    /// The sequence length `L` (also the model's training length).
    pub len: usize,
    /// The init std of the small AT5 and AT5-NoB MLPs.
    pub init_std: f64,
    /// The central-difference step.
    pub h: f64,
    /// The negative control: flip the sign of the tape gradient of every bias tensor before
    /// comparing, as a backward with a sign error would, so every tensor with a gradient fails.
    pub perturb_backward: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            len: CHECK_LEN,
            init_std: CHECK_INIT_STD,
            h: CHECK_STEP,
            perturb_backward: false,
        }
    }
}

impl CheckOptions {
    /// Refuses a length outside [`CHECK_LENS`], an init std that is not finite and positive (at
    /// most 10), and a step that is not in `(0, 0.1]`; each message names the flag.
    pub fn check(&self) -> Result<(), String> {
        if !CHECK_LENS.contains(&self.len) {
            return Err(format!(
                "--len {}: must be between {} and {}",
                self.len,
                CHECK_LENS.start(),
                CHECK_LENS.end()
            ));
        }
        if !(self.init_std.is_finite() && self.init_std > 0.0 && self.init_std <= 10.0) {
            return Err(format!(
                "--init-std {}: must be a number in (0, 10]",
                self.init_std
            ));
        }
        if !(self.h.is_finite() && self.h > 0.0 && self.h <= 0.1) {
            return Err(format!("--h {}: must be a number in (0, 0.1]", self.h));
        }
        Ok(())
    }
}

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

impl ParamCheck {
    /// The largest gradient is below [`VACUOUS_FACTOR`] times the absolute tolerance: any
    /// backward would pass here.
    pub fn vacuous(&self) -> bool {
        self.max_grad < VACUOUS_FACTOR * ABS_TOL
    }
}

/// All checks of one family on one path.
#[derive(Clone, Debug)]
pub struct BiasCheck {
    /// The family's command-line name.
    pub family: &'static str,
    /// The graph differentiated.
    pub path: CheckPath,
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

/// A family's small variant for the check at the default options: T5 with 8 buckets up to
/// distance 6 (so several buckets are hit at L = 6), MLP widths 4 and 3 with init std 0.5, FIRE
/// width 6, no dropout.
pub fn small_bias(name: &str) -> Result<BiasConfig, String> {
    small_bias_with(name, &CheckOptions::default())
}

/// [`small_bias`] at length `opts.len` (T5's last bucket starts there) and MLP init std
/// `opts.init_std`.
pub fn small_bias_with(name: &str, opts: &CheckOptions) -> Result<BiasConfig, String> {
    Ok(match BiasConfig::from_name(name)? {
        BiasConfig::T5(o) => BiasConfig::T5(T5Options {
            num_buckets: 8,
            max_distance: opts.len,
            ..o
        }),
        BiasConfig::At5(o) => BiasConfig::At5(At5Options {
            mlp: small_mlp(o.mlp, opts.init_std),
            ..o
        }),
        BiasConfig::At5NoB(o) => BiasConfig::At5NoB(small_mlp(o, opts.init_std)),
        BiasConfig::Fire(_) => BiasConfig::Fire(FireOptions { hidden: 6 }),
        other => other,
    })
}

/// Widths 4 and 3 at `init_std`.
fn small_mlp(o: MlpOptions, init_std: f64) -> MlpOptions {
    MlpOptions {
        l1: 4,
        l2: 3,
        init_std,
        ..o
    }
}

/// D = 8, H = 2, FFN 16, vocab 5, 3 classes, length `len`. The whole path is one layer with
/// mean pooling, so every query reaches the loss: pooling one slot of a one-layer model would
/// leave one direction of the bias (n > 0 from the last slot) without any gradient to check.
/// The pruned path is two layers pooled at the last slot: its last block computes one row.
fn tiny_config(bias: &BiasConfig, len: usize, path: CheckPath) -> ModelConfig {
    let (layers, pooling) = match path {
        CheckPath::Whole => (1, Pooling::Mean),
        CheckPath::Pruned => (2, Pooling::Last),
    };
    ModelConfig {
        input: InputKind::Tokens { vocab: 5 },
        output: OutputKind::Classes(3),
        d_model: 8,
        heads: 2,
        ffn: 16,
        layers,
        max_len: len,
        bias: bias.clone(),
        bias_scope: BiasScope::Shared,
        pooling,
        dropout: Dropouts::NONE,
        head: PooledHead::default(),
        unbiased_heads: Vec::new(),
    }
}

/// Two sequences of length `len`, the second ending in two padding slots (so masking is on
/// the path): `1 2 3 4 1 2 …` and `3 3 1 4 3 3 … 0 0`.
fn tiny_batch(len: usize) -> (Batch, Targets) {
    let first = (0..len).map(|k| [1, 2, 3, 4][k % 4]);
    let second = (0..len).map(|k| if k + 2 < len { [3, 3, 1, 4][k % 4] } else { 0 });
    let ids: Vec<usize> = first.chain(second).collect();
    let pad = ids.iter().map(|&t| t == 0).collect();
    let batch = Batch {
        b: 2,
        l: len,
        input: BatchInput::Tokens(ids),
        pad,
    };
    (batch, Targets::Classes(vec![2, 0]))
}

/// The tiny model of `bias` with its weights scaled as the check uses them.
fn tiny_model(
    bias: &BiasConfig,
    seed: u64,
    len: usize,
    path: CheckPath,
) -> Result<(Model<f64>, ParamStore<f64>), String> {
    let mut store = ParamStore::<f64>::new();
    let model = Model::new(tiny_config(bias, len, path), &mut store, seed)?;
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

/// Tape gradient of the loss vs central differences at step `h` over the tensors `subset`, by
/// the rule of [`compare_central`]; with the largest `|tape gradient|`. `sign` multiplies the
/// tape gradient (-1: the negative control).
fn compare(
    model: &Model<f64>,
    store: &ParamStore<f64>,
    subset: &[ParamId],
    (batch, y): (&Batch, &Targets),
    h: f64,
    sign: f64,
) -> (GradcheckReport, f64) {
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    let l = loss(model, &mut tape, &p, batch, y);
    let grads = tape.backward(l);
    let sizes: Vec<usize> = subset.iter().map(|&id| store.get(id).len()).collect();
    let analytic =
        |k: usize, e: usize| sign * grads.get(p.var(subset[k])).map_or(0.0, |g| g.data[e]);
    let mut probe = store.clone();
    let shifted = |k: usize, e: usize, d: f64| {
        let id = subset[k];
        let x = store.get(id).data[e];
        probe.get_mut(id).data[e] = x + d;
        let v = loss_value(model, &probe, batch, y);
        probe.get_mut(id).data[e] = x;
        v
    };
    compare_central(&sizes, h, analytic, shifted)
}

/// Checks the tape gradient of a tiny classifier's loss against central differences for every
/// parameter tensor of `bias` (one row each) and for the rest of the model (one row), on the
/// whole graph at the default options. `seed` initialises the model; the ReLU margin says
/// whether the check is meaningful there.
pub fn check_bias_gradients(bias: &BiasConfig, seed: u64) -> Result<BiasCheck, String> {
    check_bias_gradients_with(bias, seed, CheckPath::Whole, &CheckOptions::default())
}

/// [`check_bias_gradients`] on `path` with `opts` (`bias` should come from
/// [`small_bias_with`] at the same options). On the pruned path it first confirms that the
/// last block computed the pooled row alone.
pub fn check_bias_gradients_with(
    bias: &BiasConfig,
    seed: u64,
    path: CheckPath,
    opts: &CheckOptions,
) -> Result<BiasCheck, String> {
    opts.check()?;
    let (model, store) = tiny_model(bias, seed, opts.len, path)?;
    let (batch, y) = tiny_batch(opts.len);
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    let fwd = model.forward(&mut tape, &p, &batch, &ForwardOpts::default());
    model.loss(&mut tape, fwd.output, &y);
    let relu_margin = tape.min_relu_input();
    if let Some(last) = fwd.traces.last() {
        let rows = tape.shape(last.probs)[2];
        let want = if path == CheckPath::Pruned {
            1
        } else {
            opts.len
        };
        if rows != want {
            return Err(format!(
                "{} on the {} path: the last block computed {rows} query rows, not {want}",
                bias.name(),
                path.name()
            ));
        }
    }
    let sign = |bias_tensor: bool| {
        if bias_tensor && opts.perturb_backward {
            -1.0
        } else {
            1.0
        }
    };
    let data = (&batch, &y);

    let bias_ids = model.biases[0].param_ids();
    let mut params: Vec<ParamCheck> = bias_ids
        .iter()
        .map(|&id| {
            let (report, max_grad) = compare(&model, &store, &[id], data, opts.h, sign(true));
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
    let (report, max_grad) = compare(&model, &store, &rest, data, opts.h, sign(false));
    params.push(ParamCheck {
        max_grad,
        name: REST.to_string(),
        size: rest.iter().map(|&id| store.get(id).len()).sum(),
        worst: store.name(rest[report.worst.0]).to_string(),
        report,
    });
    Ok(BiasCheck {
        family: bias.name(),
        path,
        relu_margin,
        params,
    })
}

/// T5's bucket with the offset and the boundary `max_distance` real-valued, in f64: the
/// continuous relaxation in which a derivative with respect to the boundary can be asked.
/// On integers it is [`crate::position::t5_bucket`] (which takes the log in f32, as HF); both
/// are the one bucketing of `position::t5`, with the log step taken at their own precision.
pub fn t5_bucket_relaxed(
    relative_position: f64,
    num_buckets: usize,
    max_distance: f64,
    bidirectional: bool,
) -> usize {
    crate::position::t5_bucket_with(
        relative_position,
        num_buckets,
        bidirectional,
        |m, max_exact, nb| {
            let me = max_exact as f64;
            if max_distance <= me {
                return nb;
            }
            ((m / me).ln() / (max_distance / me).ln() * (nb as f64 - me)) as usize
        },
    )
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
        T5Probe::with_len(seed, CHECK_LEN)
    }

    /// [`T5Probe::new`] for the check at length `len` (T5's last bucket starts there).
    pub fn with_len(seed: u64, len: usize) -> Result<T5Probe, String> {
        let opts = CheckOptions {
            len,
            ..CheckOptions::default()
        };
        opts.check()?;
        let cfg = small_bias_with("t5", &opts)?;
        let BiasConfig::T5(T5Options {
            num_buckets,
            max_distance,
            bidirectional,
        }) = cfg
        else {
            unreachable!("small_bias(\"t5\") is a T5 config")
        };
        let (_, store) = tiny_model(&cfg, seed, len, CheckPath::Whole)?;
        let id = store
            .id("bias.table")
            .ok_or("t5 probe: no bias.table in the model")?;
        Ok(T5Probe {
            table: store.get(id).clone(),
            num_buckets,
            max_distance,
            bidirectional,
            offsets: crate::position::offsets(len, len),
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
