//! What a training run is (the task, the model, the optimiser and the budget), and what a user
//! asks for: a [`RunRequest`], which [`RunRequest::resolve`] turns into the run's config.
use super::memory::{self, DataShape, Hints, MemoryEstimate};
use super::preset::{Dial, Preset, pooling_for, preset_config};
use crate::data::{self, TaskConfig, TaskData, TaskKind};
use crate::nn::{
    BiasScope, Dropouts, InputKind, ModelConfig, OutputInit, OutputKind, PooledHead, Pooling,
};
use crate::position::{At5Options, BiasConfig, MlpInit};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// Checks sizes, dropout rates and bias options without the data, by building the bias on
    /// a scratch store: a sweep's typo fails before its first run, not hours into it.
    pub fn validate(&self) -> Result<(), String> {
        let probe = ModelConfig {
            input: InputKind::Tokens { vocab: 2 },
            output: OutputKind::Classes(2),
            d_model: self.d_model,
            heads: self.heads,
            ffn: self.ffn,
            layers: self.layers,
            max_len: 16,
            bias: self.bias.clone(),
            bias_scope: self.bias_scope,
            pooling: Pooling::Last,
            dropout: self.dropout,
            head: self.head,
            unbiased_heads: self.unbiased_heads.clone(),
        };
        probe.validate()?;
        if let BiasConfig::At5(At5Options { slope_min, .. }) = &self.bias
            && *slope_min <= 0.0
        {
            // alpha = relu(a) / L: a slope starting at or below 0 is a dead bucket (no position
            // information, no gradient), not a run of AT5.
            return Err(format!(
                "slope-min must be positive (AT5's slopes pass through a relu), got {slope_min}"
            ));
        }
        // A size that cannot fit is said first, with the flag that sets it, before whether the
        // family's options fit together.
        let bias = MemoryEstimate {
            params: 28.0 * memory::bias_params(&self.bias, self.heads, 16),
            ..Default::default()
        };
        let hint = Hints {
            params: "lower the bias's sizes (--num-buckets, --l1, --l2)".into(),
            ..Default::default()
        };
        memory::check(&bias, memory::available_memory().as_ref(), &hint)?;
        self.bias.validate()
    }

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
        format!("{:016x}", super::checkpoint::fnv1a(json.as_bytes()))
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

    /// Generates or reads the run's data, refusing a run that will not fit in memory: once from
    /// the config (before generating, or from the files' sizes before reading them) and once
    /// from the data (before the model is allocated). Errors name the flag, or the file and
    /// line, that decides the size.
    pub fn load_data(&self) -> Result<TaskData, String> {
        let available = memory::available_memory();
        let fits = |shape: &DataShape, hints: &Hints| {
            let est = memory::estimate(self, shape);
            memory::check(&est, available.as_ref(), hints)
        };
        match &self.task {
            TaskSource::Generated { config, seed } => {
                let hints = Hints::flags(config.kind());
                self.check_planned_memory()?;
                let data = data::generate(config, *seed)?;
                fits(&DataShape::of(&data), &hints)?;
                Ok(data)
            }
            TaskSource::Files { dir, kind } => {
                let bytes: u64 = data::files::SPLIT_FILES
                    .iter()
                    .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
                    .map(|m| m.len())
                    .sum();
                let text = MemoryEstimate {
                    // The text, then up to 8 bytes per token of (at least) 2 characters.
                    data: 5.0 * bytes as f64,
                    ..Default::default()
                };
                let hints = Hints {
                    data: format!(
                        "the data files in {} are {} in all",
                        dir.display(),
                        memory::human(bytes as f64)
                    ),
                    ..Default::default()
                };
                memory::check(&text, available.as_ref(), &hints)?;
                let (data, ext) = data::files::load_dir_with_extremes(dir, *kind)?;
                let flags = Hints::flags(*kind);
                let (at, len) = &ext.longest;
                if *len < 2 {
                    // Named here, with the file: the model's own check would blame --seq-len.
                    return Err(format!(
                        "{}: the longest sequence is {at} ({len} position); a run needs \
                         sequences of at least 2",
                        dir.display()
                    ));
                }
                let hints = Hints {
                    params: match &ext.largest_id {
                        Some((at, id)) => format!(
                            "{}; the vocabulary runs to token id {id} ({at})",
                            flags.params
                        ),
                        None => flags.params,
                    },
                    activations: format!(
                        "the longest sequence is {at} ({len} positions): shorten it, or lower \
                         --heads or --d-model"
                    ),
                    data: format!("the data files in {} are too large", dir.display()),
                };
                fits(&DataShape::of(&data), &hints)?;
                Ok(data)
            }
        }
    }

    /// The memory check that needs no data: for generated data, from the sizes its config will
    /// generate (for files, [`TrainConfig::load_data`] checks once they are read). A sweep runs
    /// it on every run before the first starts.
    pub fn check_planned_memory(&self) -> Result<(), String> {
        let TaskSource::Generated { config, .. } = &self.task else {
            return Ok(());
        };
        let est = memory::estimate(self, &DataShape::planned(config));
        let available = memory::available_memory();
        memory::check(&est, available.as_ref(), &Hints::flags(config.kind()))
    }

    /// Impossible settings as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        if self.batch == 0 {
            return Err("batch must be at least 1".into());
        }
        if self.epochs == 0 || self.epochs > MAX_EPOCHS {
            return Err(format!(
                "epochs must be 1 to {MAX_EPOCHS}, got {}",
                self.epochs
            ));
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return Err(format!("lr must be a positive number, got {}", self.lr));
        }
        if self.patience == Some(0) {
            return Err("patience must be at least 1 epoch".into());
        }
        self.model.validate()
    }
}

/// The longest budget a run may ask for: far beyond any protocol here (1000 at most), and small
/// enough that step and example counts stay exact in 64 bits.
pub const MAX_EPOCHS: usize = 1_000_000;

/// A run's config from a JSON file: a `TrainConfig` itself, or a run record (its `config`
/// replays the run). Validated; errors name the file.
pub fn read_config(path: &Path) -> Result<TrainConfig, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    // A record holds its config under `config`, next to its `status` and `epochs`.
    let (json, written) = match value.get("config") {
        Some(c) if value.get("status").is_some() => (c.clone(), true),
        _ => (value, false),
    };
    let cfg: TrainConfig = serde_json::from_value(json.clone())
        .map_err(|e| format!("{shown}: not a run config or run record: {e}"))?;
    // serde skips fields it does not know, so a misspelled `patience` would silently run with
    // none. A config written by hand is checked for them; a record was written by `train`.
    if !written && let Some(key) = ignored_field(&json, &json, &mut Vec::new()) {
        return Err(format!(
            "{shown}: unknown field `{key}` (misspelled? a config holds the fields a record's \
             `config` holds)"
        ));
    }
    cfg.validate().map_err(|e| format!("{shown}: {e}"))?;
    Ok(cfg)
}

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
            let null = serde_json::Value::Null;
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            let found = first_difference(x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null), &at);
            if found.is_some() {
                return found;
            }
        }
    }
    let path = if path.is_empty() { "the config" } else { path };
    Some((path.to_string(), a.to_string(), b.to_string()))
}

/// The first field of `node` (inside the whole config `root`, at `path`) that deserialising
/// ignores (objects only: a config holds no arrays of settings): replaced by a string and then
/// by an object, neither of which names anything here,
/// the config still parses. A known field refuses one of the two (a struct whose fields all
/// have defaults takes the object but not the string; a path takes the string, not the object).
fn ignored_field(
    root: &serde_json::Value,
    node: &serde_json::Value,
    path: &mut Vec<String>,
) -> Option<String> {
    let serde_json::Value::Object(map) = node else {
        return None;
    };
    for (key, child) in map {
        path.push(key.clone());
        let accepts = |value: serde_json::Value| {
            let mut probe = root.clone();
            let mut at = &mut probe;
            for k in path.iter() {
                at = &mut at[k.as_str()];
            }
            *at = value;
            serde_json::from_value::<TrainConfig>(probe).is_ok()
        };
        const ODD: &str = "\u{0}at5-probe";
        if accepts(ODD.into()) && accepts(serde_json::json!({ ODD: 0 })) {
            return Some(path.join("."));
        }
        if let Some(found) = ignored_field(root, child, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// The bias family a run asks for, with only that family's own options (`None`: the preset's),
/// so an option of another family cannot be expressed: the parser refuses it.
#[derive(Clone, Debug, PartialEq)]
pub enum BiasRequest {
    /// T5, with its bucket layout.
    T5 {
        /// Number of buckets.
        num_buckets: Option<usize>,
        /// Distance where the last bucket starts.
        max_distance: Option<usize>,
    },
    /// AT5, with its slope init range and its MLPs.
    At5 {
        /// Lower end of the slopes' init range.
        slope_min: Option<f64>,
        /// Upper end of the slopes' init range.
        slope_max: Option<f64>,
        /// The MLPs.
        mlp: MlpRequest,
    },
    /// AT5-NoB, with its MLPs.
    At5NoB {
        /// The MLPs.
        mlp: MlpRequest,
    },
    /// Any other family, by name: none of them has an option a run sets.
    Named(String),
}

/// AT5's and AT5-NoB's MLP options a run sets (`None`: the preset's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MlpRequest {
    /// The first hidden width.
    pub l1: Option<usize>,
    /// The second hidden width.
    pub l2: Option<usize>,
    /// The paper init's std.
    pub init_std: Option<f64>,
    /// The dropout drawn per grid cell (`true`) or per offset.
    pub per_cell: Option<bool>,
    /// How the MLP starts.
    pub init: Option<MlpInit>,
}

impl BiasRequest {
    /// The family called `name` with none of its options set.
    pub fn family(name: &str) -> BiasRequest {
        match name {
            "t5" => BiasRequest::T5 {
                num_buckets: None,
                max_distance: None,
            },
            "at5" => BiasRequest::At5 {
                slope_min: None,
                slope_max: None,
                mlp: MlpRequest::default(),
            },
            "at5-nob" => BiasRequest::At5NoB {
                mlp: MlpRequest::default(),
            },
            other => BiasRequest::Named(other.to_string()),
        }
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        match self {
            BiasRequest::T5 { .. } => "t5",
            BiasRequest::At5 { .. } => "at5",
            BiasRequest::At5NoB { .. } => "at5-nob",
            BiasRequest::Named(name) => name,
        }
    }

    /// The MLP options of AT5 or AT5-NoB.
    pub fn mlp(&self) -> Option<&MlpRequest> {
        match self {
            BiasRequest::At5 { mlp, .. } | BiasRequest::At5NoB { mlp } => Some(mlp),
            _ => None,
        }
    }

    /// [`BiasRequest::mlp`], to set them.
    pub fn mlp_mut(&mut self) -> Option<&mut MlpRequest> {
        match self {
            BiasRequest::At5 { mlp, .. } | BiasRequest::At5NoB { mlp } => Some(mlp),
            _ => None,
        }
    }

    /// Sets the given options on `bias`, the preset's config of the same family; a given
    /// input-dropout rate is also the MLPs' dropout (the paper ties the two).
    fn apply(&self, bias: &mut BiasConfig, dropout_input: Option<f64>) -> Result<(), String> {
        match (self, &mut *bias) {
            (
                BiasRequest::T5 {
                    num_buckets,
                    max_distance,
                },
                BiasConfig::T5(o),
            ) => {
                set(&mut o.num_buckets, *num_buckets);
                set(&mut o.max_distance, *max_distance);
            }
            (
                BiasRequest::At5 {
                    slope_min,
                    slope_max,
                    ..
                },
                BiasConfig::At5(o),
            ) => {
                set(&mut o.slope_min, *slope_min);
                set(&mut o.slope_max, *slope_max);
            }
            _ => {}
        }
        if let Some(o) = bias.mlp_options_mut() {
            let r = self.mlp().copied().unwrap_or_default();
            if r.init == Some(MlpInit::Alive) && r.init_std.is_some() {
                return Err(
                    "--init-std sets the paper init's std; drop it with --at5-init alive".into(),
                );
            }
            set(&mut o.l1, r.l1);
            set(&mut o.l2, r.l2);
            set(&mut o.init_std, r.init_std);
            set(&mut o.dropout, dropout_input);
            set(&mut o.per_cell, r.per_cell);
            set(&mut o.init, r.init);
        }
        Ok(())
    }
}

/// What one run asks for: a task, a bias family and a preset, and only the settings that differ
/// from the preset's protocol (`None`: the preset's). Each field is the `train` flag of the
/// same name, and errors name it that way.
///
/// [`RunRequest::resolve`] is the one place a setting is applied: the preset's protocol for the
/// task and family, then each given setting, then the checks. A setting travels downward only:
/// from the request into the config, and from the config into the family or layer that reads
/// it (`num_buckets`: here → [`crate::position::T5Options`] → `T5::new` → `t5_bucket`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunRequest {
    /// The task.
    pub task: TaskKind,
    /// The bias family, with the options of its own that are set.
    pub bias: BiasRequest,
    /// The protocol every unset setting comes from.
    pub preset: Preset,
    /// Seeds initialisation, shuffling and dropout.
    pub seed: u64,
    /// Adding's T, lag-k's L, Process-50's length.
    pub seq_len: Option<usize>,
    /// Lag-k's k.
    pub lag: Option<usize>,
    /// The generated data's seed.
    pub data_seed: Option<u64>,
    /// Train on the files in this directory instead of generated data.
    pub data_dir: Option<PathBuf>,
    /// Model width D.
    pub d_model: Option<usize>,
    /// Attention heads H.
    pub heads: Option<usize>,
    /// Feed-forward width (2·D when D is given and this is not).
    pub ffn: Option<usize>,
    /// Encoder layers.
    pub layers: Option<usize>,
    /// Which layers receive the bias.
    pub bias_scope: Option<BiasScope>,
    /// Dropout on the input embeddings (and inside AT5's MLPs).
    pub dropout_input: Option<f64>,
    /// Dropout after attention and the feed-forward block.
    pub dropout_hidden: Option<f64>,
    /// Dropout on the attention probabilities.
    pub dropout_attention: Option<f64>,
    /// Examples per optimizer step.
    pub batch: Option<usize>,
    /// Adam learning rate.
    pub lr: Option<f64>,
    /// Training epochs.
    pub epochs: Option<usize>,
    /// Stop after this many epochs without a dev improvement.
    pub patience: Option<usize>,
    /// Compute every row of the last block (`--no-prune`).
    pub whole_graph: bool,
    /// How the output layer starts (`--head-init`).
    pub head_init: Option<OutputInit>,
    /// Heads that get no position bias (`--unbiased-heads`; empty: every head gets it).
    pub unbiased_heads: Vec<usize>,
}

impl RunRequest {
    /// The preset's run of `bias` on `task` with `seed`, nothing changed.
    pub fn new(task: TaskKind, bias: &str, preset: Preset, seed: u64) -> RunRequest {
        RunRequest {
            task,
            bias: BiasRequest::family(bias),
            preset,
            seed,
            seq_len: None,
            lag: None,
            data_seed: None,
            data_dir: None,
            d_model: None,
            heads: None,
            ffn: None,
            layers: None,
            bias_scope: None,
            dropout_input: None,
            dropout_hidden: None,
            dropout_attention: None,
            batch: None,
            lr: None,
            epochs: None,
            patience: None,
            whole_graph: false,
            head_init: None,
            unbiased_heads: Vec::new(),
        }
    }

    /// This request with the task's length (and lag) set by `dial`.
    pub fn with_dial(self, dial: Dial) -> RunRequest {
        RunRequest {
            seq_len: dial.seq_len,
            lag: dial.lag,
            ..self
        }
    }

    /// The run's config: the preset's protocol for the task and family, every given setting
    /// applied, checked once. A setting the task, data source or family would ignore is an
    /// error naming it.
    pub fn resolve(&self) -> Result<TrainConfig, String> {
        let family = BiasConfig::from_name(self.bias.name())?;
        self.check_applicable(&family)?;
        if let Some(l) = self.seq_len
            && l < 2
        {
            return Err(format!("--seq-len must be at least 2, got {l}"));
        }
        let dial = Dial {
            seq_len: self.seq_len,
            lag: self.lag,
        };
        let mut c = preset_config(self.task, self.bias.name(), self.preset, dial, self.seed)?;
        if let (TaskSource::Generated { seed, .. }, Some(s)) = (&mut c.task, self.data_seed) {
            *seed = s;
        }
        if let Some(dir) = &self.data_dir {
            if !dir.is_dir() {
                return Err(format!("--data-dir {}: no such directory", dir.display()));
            }
            // Absolute, so the run's checkpoint resumes from any working directory.
            let dir = std::path::absolute(dir)
                .map_err(|e| format!("--data-dir {}: {e}", dir.display()))?;
            // Records and checkpoints keep the path as JSON text: refused here, not when the
            // first checkpoint cannot be written after an epoch of training.
            if dir.to_str().is_none() {
                return Err(format!(
                    "--data-dir {}: the path is not valid UTF-8, and a run's record and \
                     checkpoints store it as text; rename the folder, or give a link to it \
                     whose path is UTF-8",
                    dir.display()
                ));
            }
            c.task = TaskSource::Files {
                dir,
                kind: self.task,
            };
        }
        let m = &mut c.model;
        set(&mut m.d_model, self.d_model);
        set(&mut m.heads, self.heads);
        set(&mut m.ffn, self.ffn.or(self.d_model.map(|d| 2 * d)));
        set(&mut m.layers, self.layers);
        set(&mut m.bias_scope, self.bias_scope);
        set(&mut m.dropout.input, self.dropout_input);
        set(&mut m.dropout.hidden, self.dropout_hidden);
        set(&mut m.dropout.attention, self.dropout_attention);
        self.bias.apply(&mut m.bias, self.dropout_input)?;
        set(&mut m.head.init, self.head_init);
        if !self.unbiased_heads.is_empty() {
            m.unbiased_heads = self.unbiased_heads.clone();
        }
        set(&mut c.batch, self.batch);
        set(&mut c.lr, self.lr);
        set(&mut c.epochs, self.epochs);
        if self.patience.is_some() {
            c.patience = self.patience;
        }
        c.whole_graph = self.whole_graph;
        c.validate()?;
        Ok(c)
    }

    /// Refuses settings this task, data source or bias family would silently ignore, so a run
    /// is never quietly other than what was asked.
    fn check_applicable(&self, family: &BiasConfig) -> Result<(), String> {
        let drop = |flag: &str, why: String| Err(format!("--{flag} {why}; drop it"));
        let kind = self.task;
        if self.data_dir.is_some() {
            for (flag, given) in [
                ("seq-len", self.seq_len.is_some()),
                ("lag", self.lag.is_some()),
                ("data-seed", self.data_seed.is_some()),
            ] {
                if given {
                    return drop(
                        flag,
                        "does not apply with --data-dir (the files are the data)".into(),
                    );
                }
            }
        }
        if self.seq_len.is_some() && kind == TaskKind::Reber {
            return drop(
                "seq-len",
                "does not apply to reber (the grammar decides its lengths)".into(),
            );
        }
        if self.lag.is_some() && kind != TaskKind::LagK {
            return drop("lag", format!("applies to lagk only, not {}", kind.name()));
        }
        let name = family.name();
        for (flag, given) in [
            ("bias-scope", self.bias_scope.is_some()),
            ("unbiased-heads", !self.unbiased_heads.is_empty()),
        ] {
            if given && matches!(family, BiasConfig::None(_) | BiasConfig::Sinusoidal(_)) {
                return drop(
                    flag,
                    format!("has no effect with --bias {name} (no attention bias)"),
                );
            }
        }
        Ok(())
    }
}

fn set<T>(slot: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *slot = v;
    }
}
