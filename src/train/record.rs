//! The JSON record of one run: config, per-epoch history, best-dev test metrics, timings.
use super::config::TrainConfig;
use super::trainer::{Best, EpochRecord, Trainer};
use crate::data::TaskStats;
use crate::nn::ModelConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub config: TrainConfig,
    pub model: ModelConfig,
    pub seed: u64,
    pub task: String,
    pub bias: String,
    pub task_stats: TaskStats,
    pub num_params: usize,
    /// `completed`, `stopped early (patience)`, `running`, or `failed: <why>`.
    pub status: String,
    pub epochs: Vec<EpochRecord>,
    pub best: Option<Best>,
    pub steps: u64,
    pub train_seconds: f64,
    pub steps_per_second: f64,
    pub params_without_grad: Vec<String>,
}

impl Trainer {
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
