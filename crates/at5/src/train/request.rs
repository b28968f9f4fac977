//! What a user asks for: a [`RunRequest`], which [`RunRequest::resolve`] turns into the run's
//! config on top of the preset's protocol.
use super::config::{TaskSource, TrainConfig};
use super::preset::{Dial, Preset, preset_config};
use crate::data::TaskKind;
use crate::nn::{BiasScope, OutputInit};
use crate::position::{BiasConfig, MlpInit, family_flags};
use std::path::PathBuf;

/// The bias family a run asks for, with only the options of its own that are set (the rest are
/// the preset's). An option is set by its flag through the family's settings
/// ([`crate::position::Family::settings`]), so an option of another family cannot be
/// expressed: [`BiasRequest::set`] refuses it.
#[derive(Clone, Debug, PartialEq)]
pub struct BiasRequest {
    family: String,
    /// (flag, value as the flag writes it), in the family's own order.
    options: Vec<(&'static str, String)>,
}

impl BiasRequest {
    /// The family called `name` with none of its options set.
    pub fn family(name: &str) -> BiasRequest {
        BiasRequest {
            family: name.to_string(),
            options: Vec::new(),
        }
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.family
    }

    /// Sets the family's option `flag` (without dashes) from `text`; an unknown family, an
    /// option of another family or a value that does not read is one line naming it.
    pub fn set(&mut self, flag: &str, text: &str) -> Result<(), String> {
        let mut probe = BiasConfig::from_name(&self.family)?;
        let Some(value) = probe.set_option(flag, text)? else {
            let owners: Vec<&str> = family_flags()
                .into_iter()
                .find(|f| f.flag == flag)
                .map(|f| f.families)
                .ok_or_else(|| format!("--{flag} is no option of any bias family"))?;
            return Err(format!(
                "--{flag} is an option of --bias {}, not {}; drop it",
                owners.join(" or "),
                self.family
            ));
        };
        let order = probe.option_flags();
        let at = order
            .iter()
            .position(|f| *f == flag)
            .expect("set_option found it");
        self.options.retain(|(f, _)| *f != flag);
        self.options.push((order[at], value));
        self.options
            .sort_by_key(|(f, _)| order.iter().position(|o| o == f));
        Ok(())
    }

    /// The options set, as (flag, value text), in the family's own order.
    pub fn options(&self) -> &[(&'static str, String)] {
        &self.options
    }

    /// The value set for option `flag`, if any.
    pub fn get(&self, flag: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// Sets the given options on `bias`, the preset's config of the same family; a given
    /// input-dropout rate is also the MLPs' dropout (the paper ties the two).
    fn apply(&self, bias: &mut BiasConfig, dropout_input: Option<f64>) -> Result<(), String> {
        if self.get("at5-init") == Some(MlpInit::Alive.name()) && self.get("init-std").is_some() {
            return Err(
                "--init-std sets the paper init's std; drop it with --at5-init alive".into(),
            );
        }
        for (flag, value) in &self.options {
            bias.set_option(flag, value)?;
        }
        if let (Some(o), Some(p)) = (bias.mlp_options_mut(), dropout_input) {
            o.dropout = p;
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

    /// Spells out what `--preset paper` meant in `revision` (see [`super::PAPER_REVISION`]),
    /// where today's preset means something else; a setting the request gives itself is kept.
    pub fn pin_paper_revision(&mut self, revision: u32) {
        if self.preset == Preset::Paper && revision < 2 && self.head_init.is_none() {
            self.head_init = Some(OutputInit::Bert);
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
