//! The frozen layout of version-1 checkpoints (`AT5CKPT1`), so files written before the data
//! fingerprint still load. bincode is not self-describing: a field added to a config since
//! (even with a serde default) shifts every byte after it, so these files are read through
//! copies of the types as they were, then converted through JSON, where the fields added
//! since take their serde defaults exactly as in old run records. Do not edit these types.
use super::checkpoint::Decoded;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct ReberConfig {
    train: usize,
    dev: usize,
    test: usize,
    training_nums: usize,
    max_string_len: usize,
}

#[derive(Serialize, Deserialize)]
struct Process50Config {
    seq_len: usize,
    train_per_class: usize,
    dev_per_class: usize,
    test_per_class: usize,
    training_nums: usize,
}

#[derive(Serialize, Deserialize)]
struct AddingConfig {
    seq_len: usize,
    train: usize,
    dev: usize,
    test: usize,
    training_nums: usize,
}

#[derive(Serialize, Deserialize)]
struct LagKConfig {
    seq_len: usize,
    lag: usize,
    vocab: usize,
    train: usize,
    dev: usize,
    test: usize,
    training_nums: usize,
}

#[derive(Serialize, Deserialize)]
enum TaskConfig {
    Reber(ReberConfig),
    Process50(Process50Config),
    Adding(AddingConfig),
    LagK(LagKConfig),
}

#[derive(Serialize, Deserialize)]
enum TaskKind {
    Reber,
    Process50,
    Adding,
    LagK,
}

#[derive(Serialize, Deserialize)]
enum TaskSource {
    Generated {
        config: TaskConfig,
        seed: u64,
    },
    Files {
        dir: std::path::PathBuf,
        kind: TaskKind,
    },
}

#[derive(Serialize, Deserialize)]
enum BiasConfig {
    None,
    Sinusoidal,
    T5 {
        num_buckets: usize,
        max_distance: usize,
        bidirectional: bool,
    },
    T5NoB,
    At5 {
        slope_min: f64,
        slope_max: f64,
        l1: usize,
        l2: usize,
        init_std: f64,
        dropout: f64,
    },
    At5NoB {
        l1: usize,
        l2: usize,
        init_std: f64,
        dropout: f64,
    },
    Alibi,
    KerpleLog,
    Fire {
        hidden: usize,
    },
}

#[derive(Serialize, Deserialize)]
enum BiasScope {
    Shared,
    FirstLayer,
    PerLayer,
}

#[derive(Serialize, Deserialize)]
struct Dropouts {
    input: f64,
    hidden: f64,
    attention: f64,
}

#[derive(Serialize, Deserialize)]
struct ModelSpec {
    d_model: usize,
    heads: usize,
    ffn: usize,
    layers: usize,
    bias: BiasConfig,
    bias_scope: BiasScope,
    dropout: Dropouts,
}

#[derive(Serialize, Deserialize)]
struct Config {
    task: TaskSource,
    model: ModelSpec,
    lr: f64,
    batch: usize,
    epochs: usize,
    seed: u64,
    patience: Option<usize>,
}

#[derive(Serialize, Deserialize)]
struct Metrics {
    loss: f64,
    accuracy: f64,
    mse: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct EpochRecord {
    epoch: usize,
    train_loss: f64,
    dev: Metrics,
    test: Option<Metrics>,
    alpha: Option<Vec<f64>>,
    beta: Option<Vec<f64>>,
    seconds: f64,
}

#[derive(Serialize, Deserialize)]
struct Best {
    epoch: usize,
    dev: Metrics,
    test: Metrics,
}

#[derive(Serialize, Deserialize)]
struct State {
    epoch: usize,
    step: u64,
    best: Option<Best>,
    stale_epochs: usize,
    history: Vec<EpochRecord>,
    seconds: f64,
}

#[derive(Serialize, Deserialize)]
struct Adam {
    config: AdamV1,
    step: u64,
    m: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

#[derive(Serialize, Deserialize)]
struct AdamV1 {
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
}

#[derive(Deserialize)]
struct Checkpoint {
    config: Config,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    values: Vec<Vec<f32>>,
    adam: Adam,
    state: State,
    without_grad: Vec<String>,
}

/// Today's type from the old one's JSON (fields added since take their serde defaults).
fn convert<T: Serialize, U: serde::de::DeserializeOwned>(old: &T, what: &str) -> Result<U, String> {
    serde_json::to_value(old)
        .and_then(serde_json::from_value)
        .map_err(|e| format!("the version-1 {what} does not convert: {e}"))
}

/// Decodes a version-1 payload; returns it and the bytes used.
pub(super) fn decode(payload: &[u8]) -> Result<(Decoded, usize), String> {
    let (ck, used): (Checkpoint, usize) =
        bincode::serde::decode_from_slice(payload, bincode::config::standard())
            .map_err(|e| format!("cannot decode checkpoint: {e}"))?;
    Ok((
        Decoded {
            config: convert(&ck.config, "config")?,
            names: ck.names,
            shapes: ck.shapes,
            values: ck.values,
            adam_config: convert(&ck.adam.config, "optimizer config")?,
            adam_step: ck.adam.step,
            m: ck.adam.m,
            v: ck.adam.v,
            state: convert(&ck.state, "training state")?,
            without_grad: ck.without_grad,
            data: None,
        },
        used,
    ))
}
