//! How much memory a run will take, against how much the machine has: a run that cannot fit is
//! refused before its data is generated or its model allocated, instead of aborting mid-way.
//!
//! The estimate counts parameters with their gradient and Adam state (and the checkpoint's
//! copies), the activations of the larger of the training and the evaluation batch (a tape
//! keeps about 2.5 `[B, H, L, L]` grids and 12·D + 6·F floats per position for each layer
//! computed whole; the input, and a last block pruned to the pooled row, a few `[B, L, D]`
//! tensors, twice that with gradients), and the examples. Its coefficients were fitted to the
//! peak RSS of one-epoch runs; it errs high.
use super::config::TrainConfig;
use super::metrics::EVAL_BATCH;
use crate::data::{self, TaskConfig, TaskData, TaskKind};
use crate::nn::BiasScope;
use crate::nn::Pooling;
use crate::position::BiasConfig;

/// Bytes per parameter: value, gradient, Adam's two moments, and the copies a checkpoint save
/// makes while encoding.
const BYTES_PER_PARAM: f64 = 28.0;
/// The process before any run: code, thread stacks, allocator slack.
const BASE_BYTES: f64 = 64.0 * 1024.0 * 1024.0;
/// Refused even where the machine's memory cannot be read: no machine holds this (1 PiB).
const NO_MACHINE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0;

/// What the estimate needs to know about the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataShape {
    /// The padded length; `None` before generation when only a bound is known (Reber).
    pub max_len: Option<usize>,
    /// Token vocabulary; 0 for the adding problem's feature input.
    pub vocab: usize,
    /// Classes; 0 for regression.
    pub classes: usize,
    /// Examples over all splits.
    pub examples: usize,
    /// Positions over all splits (an upper bound before generation).
    pub positions: f64,
    /// Train examples actually used.
    pub training_nums: usize,
    /// The larger of the dev and test splits.
    pub eval_examples: usize,
    /// How the model pools (last or first pooling lets the last block compute one row).
    pub pooling: Pooling,
}

impl DataShape {
    /// The shape a task config will generate (positions and, for Reber, the length are bounds).
    pub fn planned(cfg: &TaskConfig) -> DataShape {
        let (len, exact, vocab, classes, [tr, dv, te], nums) = match cfg {
            TaskConfig::Reber(c) => (
                c.max_string_len,
                false,
                data::reber::VOCAB_SIZE,
                data::reber::VOCAB_SIZE,
                [c.train, c.dev, c.test],
                c.training_nums,
            ),
            TaskConfig::Process50(c) => (
                c.seq_len,
                true,
                data::process50::VOCAB_SIZE,
                2,
                [
                    2 * c.train_per_class,
                    2 * c.dev_per_class,
                    2 * c.test_per_class,
                ],
                c.training_nums,
            ),
            TaskConfig::Adding(c) => (
                c.seq_len,
                true,
                0,
                0,
                [c.train, c.dev, c.test],
                c.training_nums,
            ),
            TaskConfig::LagK(c) => (
                c.seq_len,
                true,
                c.vocab + 1,
                c.vocab + 1,
                [c.train, c.dev, c.test],
                c.training_nums,
            ),
        };
        let examples = tr.saturating_add(dv).saturating_add(te);
        DataShape {
            max_len: exact.then_some(len),
            vocab,
            classes,
            examples,
            positions: examples as f64 * len as f64,
            training_nums: nums,
            eval_examples: dv.max(te),
            pooling: super::pooling::pooling_for(cfg.kind()),
        }
    }

    /// The shape of loaded data.
    pub fn of(d: &TaskData) -> DataShape {
        let all = || d.train.iter().chain(&d.dev).chain(&d.test);
        DataShape {
            max_len: Some(d.max_len),
            vocab: if d.kind == TaskKind::Adding {
                0
            } else {
                d.vocab_size
            },
            classes: d.num_classes,
            examples: all().count(),
            positions: all().map(|e| e.input.len() as f64).sum(),
            training_nums: d.training_nums,
            eval_examples: d.dev.len().max(d.test.len()),
            pooling: super::pooling::pooling_for(d.kind),
        }
    }
}

/// A run's memory in bytes, by what takes it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemoryEstimate {
    /// Parameters, gradients and optimizer state.
    pub params: f64,
    /// The largest batch's tape (training or evaluation); 0 where the length is not yet known.
    pub activations: f64,
    /// The examples (generation keeps a copy for deduplication).
    pub data: f64,
    /// The batch and length the activations are for.
    pub batch_len: (usize, usize),
    /// Whether that batch is evaluation's fixed one rather than the training batch.
    pub eval_batch: bool,
}

impl MemoryEstimate {
    /// Everything, with the process's base.
    pub fn total(&self) -> f64 {
        BASE_BYTES + self.params + self.activations + self.data
    }
}

/// Trainable scalars of the bias of one layer at length `l`.
pub fn bias_params(bias: &BiasConfig, heads: usize, l: usize) -> f64 {
    bias.param_count(heads, l)
}

/// The memory `config`'s run needs on data of `shape`.
pub fn estimate(config: &TrainConfig, shape: &DataShape) -> MemoryEstimate {
    let spec = &config.model;
    let (d, f, h, layers) = (
        spec.d_model as f64,
        spec.ffn as f64,
        spec.heads as f64,
        spec.layers as f64,
    );
    let l = shape.max_len.unwrap_or(0);
    let lf = l as f64;
    let input = if shape.vocab > 0 {
        shape.vocab as f64 * d
    } else {
        3.0 * d
    };
    let per_layer = 4.0 * (d * d + d) + 2.0 * d * f + f + 5.0 * d;
    let classes = shape.classes.max(1) as f64;
    let head = d * classes + classes + 4.0 * d;
    let bias_copies = if spec.bias_scope == BiasScope::PerLayer {
        layers
    } else {
        1.0
    };
    let bias = bias_copies * bias_params(&spec.bias, spec.heads, l.max(16));
    let params = BYTES_PER_PARAM * (input + layers * per_layer + head + bias);

    // With last or first pooling the last block computes only the pooled row: no [H, L, L]
    // grid there (and none at all for one layer), only work linear in L.
    let pruned = !config.whole_graph && matches!(shape.pooling, Pooling::Last | Pooling::First);
    let whole = if pruned { layers - 1.0 } else { layers };
    let linear = if pruned { 2.0 } else { 1.0 } * lf * d;
    let per_layer_act = 2.5 * h * lf * lf + lf * (12.0 * d + 6.0 * f);
    let train_b = config.batch.min(shape.training_nums).max(1);
    let eval_b = EVAL_BATCH.min(shape.eval_examples);
    let train = train_b as f64 * (whole * per_layer_act + 12.0 * linear);
    let eval = eval_b as f64 * (whole * per_layer_act + 6.0 * linear);
    let grid = if whole > 0.0 {
        3.0 * bias_copies * h * lf * lf
    } else {
        0.0
    };
    let activations = 4.0 * (train.max(eval) + grid);
    let data = 3.0 * (64.0 * shape.examples as f64 + 8.0 * shape.positions);
    MemoryEstimate {
        params,
        activations,
        data,
        batch_len: if eval > train {
            (eval_b, l)
        } else {
            (train_b, l)
        },
        eval_batch: eval > train,
    }
}

/// Kilobytes of a `/proc/self/status` field of this process, such as `VmHWM` (its peak
/// resident set) or `VmRSS` (its resident set now); `None` where there is no such file.
pub fn own_status_kb(field: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The memory this process may use: `MemAvailable` (else `MemTotal`) from `/proc/meminfo`,
/// lowered to a cgroup v2 limit where one is set; `None` where neither can be read.
pub fn available_memory() -> Option<(f64, String)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| {
        meminfo.lines().find_map(|line| {
            let kb: f64 = line
                .strip_prefix(name)?
                .strip_prefix(':')?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()?;
            Some(kb * 1024.0)
        })
    };
    let (mut bytes, mut source) = match (field("MemAvailable"), field("MemTotal")) {
        (Some(a), _) => (a, "MemAvailable in /proc/meminfo".to_string()),
        (None, Some(t)) => (t, "MemTotal in /proc/meminfo".to_string()),
        _ => return None,
    };
    let read = |p: &str| -> Option<f64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    if let (Some(max), Some(cur)) = (
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    ) && max - cur < bytes
    {
        bytes = (max - cur).max(0.0);
        source = "the cgroup's memory.max".into();
    }
    Some((bytes, source))
}

/// What to tell the user to change, per part of the estimate.
#[derive(Clone, Debug, Default)]
pub struct Hints {
    /// When the parameters dominate.
    pub params: String,
    /// When the activations dominate.
    pub activations: String,
    /// When the data dominates.
    pub data: String,
}

impl Hints {
    /// The hints for the flags of a generated run of `kind` (Reber has no length flag).
    pub fn flags(kind: TaskKind) -> Hints {
        let seq_len = if kind == TaskKind::Reber {
            ""
        } else {
            "--seq-len, "
        };
        Hints {
            params: "lower --d-model, --ffn, --layers or the bias's sizes".into(),
            activations: format!("lower {seq_len}--heads or --d-model"),
            data: if kind == TaskKind::Reber {
                "the Reber sizes of this preset do not fit".into()
            } else {
                "lower --seq-len".into()
            },
        }
    }
}

/// `Err` naming the estimate, its largest part and what to change, when `est` exceeds
/// `available` (`None`: unknown, where only sizes no machine holds are refused).
pub fn check(
    est: &MemoryEstimate,
    available: Option<&(f64, String)>,
    hints: &Hints,
) -> Result<(), String> {
    let total = est.total();
    let (limit, have) = match available {
        Some((bytes, source)) => (*bytes, format!("{} available ({source})", human(*bytes))),
        None => (
            NO_MACHINE_BYTES,
            "the 1 PiB no machine has (this machine's memory could not be read)".to_string(),
        ),
    };
    if total <= limit {
        return Ok(());
    }
    let (b, l) = est.batch_len;
    let parts = [
        (est.params, "parameters and optimizer state", &hints.params),
        (est.activations, "activations", &hints.activations),
        (est.data, "data", &hints.data),
    ];
    let (_, largest, hint) = parts
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("three parts");
    let mut hint = hint.to_string();
    if *largest == "activations" && !est.eval_batch {
        hint.push_str(", or --batch");
    }
    let listed: Vec<String> = parts
        .iter()
        .filter(|p| p.0 > 0.0)
        .map(|(bytes, what, _)| {
            let at = match (*what, est.eval_batch) {
                ("activations", true) => format!(" at length {l} (evaluation runs {b} at a time)"),
                ("activations", false) => format!(" at batch {b} and length {l}"),
                _ => String::new(),
            };
            format!("{what} {}{at}", human(*bytes))
        })
        .collect();
    Err(format!(
        "not enough memory: the run needs about {} ({}), more than the {have}; {hint}",
        human(total),
        listed.join(", ")
    ))
}

/// Bytes in binary units with one decimal (`1.5 GiB`).
pub fn human(bytes: f64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = bytes;
    for u in UNITS {
        if x < 1024.0 || u == "EiB" {
            return if u == "EiB" && x >= 1024.0 {
                format!("{bytes:.1e} B")
            } else {
                format!("{x:.1} {u}")
            };
        }
        x /= 1024.0;
    }
    unreachable!("the loop returns at EiB")
}
