//! What a training run is: the task, the model, the optimiser and the budget. What a user asks
//! for is a [`super::RunRequest`]; the checks before a run are in [`super::checks`].
use super::pooling::pooling_for;
use crate::data::{self, TaskConfig, TaskData, TaskKind};
use crate::nn::{BiasScope, Dropouts, InputKind, ModelConfig, OutputKind, PooledHead};
use crate::position::BiasConfig;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where the examples come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskSource {
    /// Generated from a config and a data seed (fixed across trials, as in the paper).
    Generated {
        /// The task and its sizes.
        config: TaskConfig,
        /// The data seed.
        seed: u64,
    },
    /// Loaded from `train.txt`/`dev.txt`/`test.txt` in the original format.
    Files {
        /// The directory holding the three files.
        dir: PathBuf,
        /// Which task the files hold.
        kind: TaskKind,
    },
}

impl TaskSource {
    /// Generates or reads the task's splits.
    pub fn load(&self) -> Result<TaskData, String> {
        match self {
            TaskSource::Generated { config, seed } => data::generate(config, *seed),
            TaskSource::Files { dir, kind } => data::files::load_dir(dir, *kind),
        }
    }
    /// Which task this is.
    pub fn kind(&self) -> TaskKind {
        match self {
            TaskSource::Generated { config, .. } => config.kind(),
            TaskSource::Files { kind, .. } => *kind,
        }
    }
}

/// The model's size and bias; input, output and length come from the task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Model width D.
    pub d_model: usize,
    /// Attention heads H.
    pub heads: usize,
    /// Feed-forward width.
    pub ffn: usize,
    /// Encoder layers.
    pub layers: usize,
    /// The position-bias family and its options.
    pub bias: BiasConfig,
    /// Which layers receive the bias.
    pub bias_scope: BiasScope,
    /// Dropout rates.
    pub dropout: Dropouts,
    /// The pooled vector's dropout and LayerNorm (absent in older records: the default).
    #[serde(default)]
    pub head: PooledHead,
    /// Heads that get no position bias (left out of records when empty, as before it existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unbiased_heads: Vec<usize>,
}

impl ModelSpec {
    /// The full model config for a task.
    pub fn for_task(&self, data: &TaskData) -> ModelConfig {
        let input = if data.kind == TaskKind::Adding {
            InputKind::Features { dim: 2 }
        } else {
            InputKind::Tokens {
                vocab: data.vocab_size,
            }
        };
        let output = if data.num_classes == 0 {
            OutputKind::Regression
        } else {
            OutputKind::Classes(data.num_classes)
        };
        ModelConfig {
            input,
            output,
            d_model: self.d_model,
            heads: self.heads,
            ffn: self.ffn,
            layers: self.layers,
            max_len: data.max_len,
            bias: self.bias.clone(),
            bias_scope: self.bias_scope,
            pooling: pooling_for(data.kind),
            dropout: self.dropout,
            head: self.head,
            unbiased_heads: self.unbiased_heads.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Everything that defines a training run; stored in its checkpoint and record.
pub struct TrainConfig {
    /// Where the data comes from.
    pub task: TaskSource,
    /// The model, less what the data decides.
    pub model: ModelSpec,
    /// Adam learning rate.
    pub lr: f64,
    /// Examples per optimizer step.
    pub batch: usize,
    /// Training epochs.
    pub epochs: usize,
    /// Seeds the initialisation, the shuffling and the dropout masks.
    pub seed: u64,
    /// Stop after this many epochs without a strict dev improvement.
    pub patience: Option<usize>,
    /// Compute every row of every block (`--no-prune`), for comparison. By default the last
    /// block computes only the pooled row where that is exact (last or first pooling). Records
    /// written before this option existed lack it and read as `false`.
    #[serde(default)]
    pub whole_graph: bool,
}

impl TrainConfig {
    /// The config for comparing runs: the data directory resolved to one spelling (`..` and
    /// links followed where it exists; made absolute otherwise), since configs written before
    /// data directories were stored absolute hold the path as typed, and one folder can be
    /// typed many ways from many working directories.
    pub fn normalized(&self) -> TrainConfig {
        let mut c = self.clone();
        if let TaskSource::Files { dir, .. } = &mut c.task
            && let Ok(resolved) =
                std::fs::canonicalize(&*dir).or_else(|_| std::path::absolute(&*dir))
        {
            *dir = resolved;
        }
        c
    }

    /// A short name of the run this config makes: 16 hex digits of a hash of its normalized
    /// settings, as JSON with sorted keys. Checkpoints and the caches derived from a run carry
    /// it, and messages that refuse a file of another run name both runs by it. Settings added
    /// later are left out of a config's JSON while they hold their default, so the id of an
    /// existing run stays what it was.
    pub fn id(&self) -> String {
        let json = serde_json::to_value(self.normalized())
            .map(|v| v.to_string())
            .unwrap_or_default();
        format!("{:016x}", super::hash::fnv1a(json.as_bytes()))
    }

    /// Whether `other` is the same run as this one, possibly with another budget (`--epochs`).
    pub fn same_run(&self, other: &TrainConfig) -> bool {
        let (mut a, b) = (self.normalized(), other.normalized());
        a.epochs = b.epochs;
        a == b
    }

    /// The first setting where `other` differs from this config, labelled, for messages that
    /// refuse a run of other settings: `first_difference(b, ("there", "here"))` reads
    /// `seed is 1 there, 2 here`.
    pub fn first_difference(&self, other: &TrainConfig, (this, that): (&str, &str)) -> String {
        let as_json = |c: &TrainConfig| serde_json::to_value(c.normalized()).unwrap_or_default();
        match first_difference(&as_json(self), &as_json(other), "") {
            Some((path, a, b)) => format!("{path} is {a} {this}, {b} {that}"),
            None => "the same settings".into(),
        }
    }
}

/// The longest budget a run may ask for: far beyond any protocol here (1000 at most), and small
/// enough that step and example counts stay exact in 64 bits.
pub const MAX_EPOCHS: usize = 1_000_000;

/// The first place where two JSON values differ: its dotted path and the two values there.
fn first_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    path: &str,
) -> Option<(String, String, String)> {
    use serde_json::Value::Object;
    if a == b {
        return None;
    }
    if let (Object(x), Object(y)) = (a, b) {
        // An enum is stored as `{"Variant": {...}}`: another variant is named, not its fields.
        if let ([(va, _)], [(vb, _)]) = (
            x.iter().collect::<Vec<_>>().as_slice(),
            y.iter().collect::<Vec<_>>().as_slice(),
        ) && va != vb
        {
            let path = if path.is_empty() { "the config" } else { path };
            return Some((path.to_string(), va.to_string(), vb.to_string()));
        }
        let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
        for k in keys {
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            // A setting left out of one config holds its default there (see `id`).
            let found = match (x.get(k), y.get(k)) {
                (Some(a), Some(b)) => first_difference(a, b, &at),
                (Some(a), None) => Some((at, a.to_string(), "its default".into())),
                (None, Some(b)) => Some((at, "its default".into(), b.to_string())),
                (None, None) => None,
            };
            if found.is_some() {
                return found;
            }
        }
    }
    let path = if path.is_empty() { "the config" } else { path };
    Some((path.to_string(), a.to_string(), b.to_string()))
}
