//! What a checkpoint decodes to, whichever version's layout it was written in
//! ([`super::checkpoint`] reads version 2, [`super::checkpoint_v1`] version 1).
use super::config::TrainConfig;
use super::fingerprint::DataFingerprint;
use super::trainer::TrainState;
use crate::optim::AdamConfig;

/// A checkpoint of either version, decoded.
pub(super) struct Decoded {
    pub config: TrainConfig,
    pub names: Vec<String>,
    pub shapes: Vec<Vec<usize>>,
    pub values: Vec<Vec<f32>>,
    pub adam_config: AdamConfig,
    pub adam_step: u64,
    pub m: Vec<Vec<f32>>,
    pub v: Vec<Vec<f32>>,
    pub state: TrainState,
    pub without_grad: Vec<String>,
    /// `None` for a version-1 file, which predates fingerprints: it resumes unchecked.
    pub data: Option<DataFingerprint>,
}
