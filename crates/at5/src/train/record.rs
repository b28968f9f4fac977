//! The JSON record of one run: config, per-epoch history, best-dev test metrics, timings.
use super::config::TrainConfig;
use super::trainer::{Best, EpochRecord, Trainer};
use crate::data::TaskStats;
use crate::nn::ModelConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// The JSON record of one run (`record.json`).
pub struct RunRecord {
    /// The run's configuration.
    pub config: TrainConfig,
    /// The model configuration it produced for the data.
    pub model: ModelConfig,
    /// The training seed.
    pub seed: u64,
    /// The task's name.
    pub task: String,
    /// The bias family.
    pub bias: String,
    /// Sizes and label statistics of the data.
    pub task_stats: TaskStats,
    /// Number of trainable scalars.
    pub num_params: usize,
    /// `completed`, `stopped early (patience)`, `running`, or `failed: <why>`.
    pub status: String,
    /// One entry per epoch trained.
    pub epochs: Vec<EpochRecord>,
    /// The best-dev epoch and its test metrics.
    pub best: Option<Best>,
    /// Optimizer steps taken.
    pub steps: u64,
    /// Training seconds over every resumed part.
    pub train_seconds: f64,
    /// Steps per training second.
    pub steps_per_second: f64,
    /// Parameters the first step's backward did not reach (should be empty).
    pub params_without_grad: Vec<String>,
}

impl RunRecord {
    /// The run's config as a run would state it today ([`TrainConfig::normalized`]).
    pub fn config_now(&self) -> TrainConfig {
        self.config.normalized()
    }
    /// Whether the run ended: its budget, or patience.
    pub fn is_finished(&self) -> bool {
        self.status == "completed" || self.status.starts_with("stopped early")
    }
    /// What the run trained, in 16 hex digits: a hash of each epoch's number, training loss
    /// and dev metrics, and the best epoch's test metrics. Two records (or a record and its
    /// checkpoint's history) of one training agree on it whatever else they hold: timings, or
    /// fields added to records later. A cache derived from a finished run carries it.
    pub fn digest(&self) -> String {
        history_digest(&self.epochs, self.best.as_ref())
    }

    /// Which run this is, in a few words: `lagk with at5, seed 2`.
    pub fn summary_of_run(&self) -> String {
        format!("{} with {}, seed {}", self.task, self.bias, self.seed)
    }

    /// The run in a few words: `lagk with at5, completed`.
    pub fn summary(&self) -> String {
        format!("{} with {}, {}", self.task, self.bias, self.status)
    }
}

impl Trainer {
    /// The run's record as of now, with `status` (e.g. `running`, `completed`).
    pub fn record(&self, status: &str) -> RunRecord {
        let s = &self.state;
        RunRecord {
            config: self.config.clone(),
            model: self.model.config.clone(),
            seed: self.config.seed,
            task: self.data.name.clone(),
            bias: self.model.family().to_string(),
            task_stats: self.data.stats.clone(),
            num_params: self.store.num_scalars(),
            status: status.to_string(),
            epochs: s.history.clone(),
            best: s.best.clone(),
            steps: s.step,
            train_seconds: s.seconds,
            steps_per_second: if s.seconds > 0.0 {
                s.step as f64 / s.seconds
            } else {
                0.0
            },
            params_without_grad: self.without_grad.clone(),
        }
    }
}

/// [`RunRecord::digest`] of a history and its best epoch (a checkpoint holds both).
pub(super) fn history_digest(epochs: &[EpochRecord], best: Option<&Best>) -> String {
    let mut bytes = Vec::new();
    let mut word = |x: u64| bytes.extend_from_slice(&x.to_le_bytes());
    for e in epochs {
        word(e.epoch as u64);
        word(e.train_loss.to_bits());
        word(e.dev.loss.to_bits());
        word(e.dev.accuracy.to_bits());
    }
    if let Some(b) = best {
        word(b.epoch as u64);
        word(b.test.loss.to_bits());
        word(b.test.accuracy.to_bits());
    }
    format!("{:016x}", super::hash::fnv1a(&bytes))
}
