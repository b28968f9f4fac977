//! A run's config checked before any training: sizes, options and whether the model, its
//! activations and the data fit in memory (the estimates of [`super::memory`], which reads
//! configs), and a config read from a file.
use super::config::{MAX_EPOCHS, ModelSpec, TaskSource, TrainConfig};
use super::memory::{self, DataShape, Hints, MemoryEstimate};
use crate::data::{self, TaskData};
use crate::nn::{InputKind, ModelConfig, OutputKind, Pooling};
use std::path::Path;

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
