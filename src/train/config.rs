//! What a training run is: the task, the model, the optimiser and the budget, and the presets.
use super::memory::{self, DataShape, Hints, MemoryEstimate};
use crate::data::{
    self, AddingConfig, LagKConfig, Process50Config, ReberConfig, TaskConfig, TaskData, TaskKind,
};
use crate::nn::{BiasScope, Dropouts, InputKind, ModelConfig, OutputKind, PooledHead, Pooling};
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
        };
        probe.validate()?;
        if let BiasConfig::At5 { slope_min, .. } = self.bias
            && slope_min <= 0.0
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
        if self.epochs == 0 {
            return Err("epochs must be at least 1".into());
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

/// The paper's protocol, or a reduced one that runs in minutes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preset {
    /// The paper's sizes, epochs and learning rates (DESIGN §3).
    Paper,
    /// A small, fast-learning reduction that runs in minutes.
    Quick,
}

impl Preset {
    /// Parses `paper` or `quick`.
    pub fn from_name(s: &str) -> Result<Preset, String> {
        match s {
            "paper" => Ok(Preset::Paper),
            "quick" => Ok(Preset::Quick),
            o => Err(format!("unknown preset `{o}`; expected paper or quick")),
        }
    }
    /// `paper` or `quick`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Paper => "paper",
            Preset::Quick => "quick",
        }
    }
}

/// The task's dial: Adding's T, lag-k's L and k.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dial {
    /// Adding's T, lag-k's L, or Process-50's length.
    pub seq_len: Option<usize>,
    /// Lag-k's k.
    pub lag: Option<usize>,
}

/// The task config of a preset with the dial applied.
pub fn task_config(kind: TaskKind, preset: Preset, dial: Dial) -> TaskConfig {
    let paper = preset == Preset::Paper;
    match kind {
        TaskKind::Reber => TaskConfig::Reber(if paper {
            ReberConfig::paper()
        } else {
            ReberConfig::quick()
        }),
        TaskKind::Process50 => {
            let mut c = if paper {
                Process50Config::paper()
            } else {
                Process50Config::quick()
            };
            if let Some(l) = dial.seq_len {
                c.seq_len = l;
            }
            TaskConfig::Process50(c)
        }
        TaskKind::Adding => {
            let mut c = if paper {
                AddingConfig::paper()
            } else {
                AddingConfig::quick()
            };
            if let Some(t) = dial.seq_len {
                c.seq_len = t;
            }
            TaskConfig::Adding(c)
        }
        TaskKind::LagK => {
            let mut c = if paper {
                LagKConfig::paper()
            } else {
                LagKConfig::quick()
            };
            if let Some(l) = dial.seq_len {
                c.seq_len = l;
            }
            if let Some(k) = dial.lag {
                c.lag = k;
            }
            TaskConfig::LagK(c)
        }
    }
}

/// The sequence length a task config produces (the T5 max_distance of the adding problem).
pub fn task_length(cfg: &TaskConfig) -> usize {
    match cfg {
        TaskConfig::Reber(_) => 128,
        TaskConfig::Process50(c) => c.seq_len,
        TaskConfig::Adding(c) => c.seq_len,
        TaskConfig::LagK(c) => c.seq_len,
    }
}

/// A bias family with the options DESIGN §1/§3 give for this task, and AT5's MLP dropout:
/// its rate, and whether it is drawn per grid cell.
pub fn bias_for(
    name: &str,
    kind: TaskKind,
    len: usize,
    (mlp_dropout, per_cell): (f64, bool),
) -> Result<BiasConfig, String> {
    let mut b = BiasConfig::from_name(name)?;
    match &mut b {
        BiasConfig::T5 { max_distance, .. } => {
            // 32 buckets; max_distance 128 on Reber/Process-50, the sequence length otherwise.
            if matches!(kind, TaskKind::Adding | TaskKind::LagK) {
                *max_distance = len.max(16);
            }
        }
        BiasConfig::At5 {
            slope_min,
            slope_max,
            l1,
            l2,
            dropout: d,
            dropout_per_cell,
            ..
        } => {
            if kind == TaskKind::Reber {
                (*slope_min, *slope_max, *l1, *l2) = (0.1, 1.0, 100, 40);
            }
            (*d, *dropout_per_cell) = (mlp_dropout, per_cell);
        }
        BiasConfig::At5NoB {
            l1,
            l2,
            dropout: d,
            dropout_per_cell,
            ..
        } => {
            if kind == TaskKind::Reber {
                (*l1, *l2) = (100, 40);
            }
            (*d, *dropout_per_cell) = (mlp_dropout, per_cell);
        }
        _ => {}
    }
    Ok(b)
}

/// The pooling the paper uses for a task: the last slot, or the mean for Process-50 (whose
/// label is a property of the whole sequence).
pub fn pooling_for(kind: TaskKind) -> Pooling {
    match kind {
        TaskKind::Process50 => Pooling::Mean,
        TaskKind::Reber | TaskKind::Adding | TaskKind::LagK => Pooling::Last,
    }
}

/// A run's config from a JSON file: a `TrainConfig` itself, or a run record (its `config`
/// replays the run). Validated; errors name the file.
pub fn read_config(path: &std::path::Path) -> Result<TrainConfig, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    // A record holds its config under `config`, next to its `status` and `epochs`.
    let cfg = match value.get("config") {
        Some(c) if value.get("status").is_some() => c.clone(),
        _ => value,
    };
    let cfg: TrainConfig = serde_json::from_value(cfg)
        .map_err(|e| format!("{shown}: not a run config or run record: {e}"))?;
    cfg.validate().map_err(|e| format!("{shown}: {e}"))?;
    Ok(cfg)
}

/// The paper's protocol (DESIGN §3) for a task and bias, or the quick preset's reduction.
pub fn preset_config(
    kind: TaskKind,
    bias: &str,
    preset: Preset,
    dial: Dial,
    seed: u64,
) -> Result<TrainConfig, String> {
    let task = task_config(kind, preset, dial);
    task.validate()?;
    let dropout = match kind {
        TaskKind::Adding => Dropouts {
            input: 0.0,
            hidden: 0.5,
            attention: 0.5,
        },
        _ => Dropouts {
            input: 0.4,
            hidden: 0.1,
            attention: 0.3,
        },
    };
    let at5 = bias.starts_with("at5");
    // The original scripts: AT5 trains 1000 epochs on Reber and 500 on Adding (T5 500 and 300).
    let (lr, epochs) = match kind {
        TaskKind::Reber => (5e-4, if at5 { 1000 } else { 500 }),
        TaskKind::Process50 => (if at5 { 2e-4 } else { 1e-4 }, 100),
        TaskKind::Adding => (1e-4, if at5 { 500 } else { 300 }),
        TaskKind::LagK => (5e-4, 100),
    };
    // As the original code: AT5's MLP drops at the input rate, 0.4, on every task (Adding
    // included, where the inputs themselves are not dropped), per grid cell; the pooled vector
    // drops at the input rate, and on Adding neither drops nor is normalised.
    let paper_mlp = (0.4, true);
    let paper_head = if kind == TaskKind::Adding {
        PooledHead {
            dropout: Some(0.0),
            norm: false,
        }
    } else {
        PooledHead {
            dropout: Some(dropout.input),
            norm: true,
        }
    };
    let (d_model, heads, lr, epochs, dropout, mlp, head) = match preset {
        Preset::Paper => (256, 8, lr, epochs, dropout, paper_mlp, paper_head),
        // Small, fast-learning and unregularised: a few hundred steps instead of thousands.
        // Epochs: where the paper's methods have separated at D = 32 on 2 cores (AT5 finds
        // Reber's offset near epoch 27; Adding-100 leaves the constant predictor after about
        // 20 epochs at lr 3e-3), within the 15-minute budget of `reproduce --preset quick`.
        Preset::Quick => (
            32,
            4,
            if kind == TaskKind::Adding { 3e-3 } else { 2e-3 },
            match kind {
                TaskKind::Reber => 35,
                TaskKind::Process50 => 40,
                TaskKind::Adding => 30,
                TaskKind::LagK => 20,
            },
            Dropouts::NONE,
            (0.0, false),
            PooledHead::default(),
        ),
    };
    let len = task_length(&task);
    Ok(TrainConfig {
        model: ModelSpec {
            d_model,
            heads,
            ffn: 2 * d_model,
            layers: 1,
            bias: bias_for(bias, kind, len, mlp)?,
            bias_scope: BiasScope::Shared,
            dropout,
            head,
        },
        task: TaskSource::Generated {
            config: task,
            seed: 2021,
        },
        lr,
        batch: 64,
        epochs,
        seed,
        patience: None,
        whole_graph: false,
    })
}
