//! The frozen layouts of version-1 checkpoints (`AT5CKPT1`), so files written before the data
//! fingerprint still load. bincode is not self-describing: a field added to a config (even with
//! a serde default) shifts every byte after it, and version-1 files were written by four
//! layouts of the same types, each adding fields at the end of a struct or variant:
//!
//! - L0: the first;
//! - L1: `TrainConfig::whole_graph`;
//! - L2: also `ModelSpec::head` and AT5's / AT5-NoB's `dropout_per_cell`;
//! - L3: also `EpochRecord::diagnostics`.
//!
//! The copies below take the added fields as type parameters, [`Absent`] (zero bytes) where a
//! layout lacks them. A file is decoded by the newest layout that reads it whole, then
//! converted through JSON, where absent fields take their serde defaults exactly as in old run
//! records. Do not edit these types: they describe files that exist.
use super::decoded::Decoded;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A field a layout does not have: no bytes in bincode; in JSON a marker whose key is removed
/// before the conversion, so the field takes its default.
struct Absent;

const ABSENT: &str = "\u{0}absent";

impl Serialize for Absent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(ABSENT)
    }
}

impl<'de> Deserialize<'de> for Absent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Absent, D::Error> {
        <()>::deserialize(d).map(|()| Absent)
    }
}

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
enum BiasConfig<P> {
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
        dropout_per_cell: P,
    },
    At5NoB {
        l1: usize,
        l2: usize,
        init_std: f64,
        dropout: f64,
        dropout_per_cell: P,
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
struct PooledHead {
    dropout: Option<f64>,
    norm: bool,
}

#[derive(Serialize, Deserialize)]
struct ModelSpec<H, P> {
    d_model: usize,
    heads: usize,
    ffn: usize,
    layers: usize,
    bias: BiasConfig<P>,
    bias_scope: BiasScope,
    dropout: Dropouts,
    head: H,
}

#[derive(Serialize, Deserialize)]
struct Config<W, H, P> {
    task: TaskSource,
    model: ModelSpec<H, P>,
    lr: f64,
    batch: usize,
    epochs: usize,
    seed: u64,
    patience: Option<usize>,
    whole_graph: W,
}

#[derive(Serialize, Deserialize)]
struct DeadUnits {
    layer1: [f64; 2],
    layer2: [f64; 2],
}

#[derive(Serialize, Deserialize)]
struct BiasDiagnostics {
    grad_norms: Vec<(String, f64)>,
    dead_units: Option<Vec<DeadUnits>>,
    prior_entropy: Vec<f64>,
    prior_radius90: Vec<usize>,
}

#[derive(Serialize, Deserialize)]
struct Metrics {
    loss: f64,
    accuracy: f64,
    mse: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct EpochRecord<G> {
    epoch: usize,
    train_loss: f64,
    dev: Metrics,
    test: Option<Metrics>,
    alpha: Option<Vec<f64>>,
    beta: Option<Vec<f64>>,
    seconds: f64,
    diagnostics: G,
}

#[derive(Serialize, Deserialize)]
struct Best {
    epoch: usize,
    dev: Metrics,
    test: Metrics,
}

#[derive(Serialize, Deserialize)]
struct State<G> {
    epoch: usize,
    step: u64,
    best: Option<Best>,
    stale_epochs: usize,
    history: Vec<EpochRecord<G>>,
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
struct Checkpoint<W, H, P, G> {
    config: Config<W, H, P>,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    values: Vec<Vec<f32>>,
    adam: Adam,
    state: State<G>,
    without_grad: Vec<String>,
}

/// Removes every object key whose value is the [`Absent`] marker.
fn drop_absent(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|_, x| x.as_str() != Some(ABSENT));
            map.values_mut().for_each(drop_absent);
        }
        serde_json::Value::Array(xs) => xs.iter_mut().for_each(drop_absent),
        _ => {}
    }
}

/// Today's type from the old one's JSON (fields added since take their serde defaults).
fn convert<T: Serialize, U: DeserializeOwned>(old: &T, what: &str) -> Result<U, String> {
    let mut v = serde_json::to_value(old)
        .map_err(|e| format!("the version-1 {what} does not convert: {e}"))?;
    drop_absent(&mut v);
    serde_json::from_value(v).map_err(|e| format!("the version-1 {what} does not convert: {e}"))
}

/// The payload read as layout `<W, H, P, G>`, if that reads all of it.
fn try_layout<W, H, P, G>(payload: &[u8]) -> Option<Result<Decoded, String>>
where
    W: Serialize + DeserializeOwned,
    H: Serialize + DeserializeOwned,
    P: Serialize + DeserializeOwned,
    G: Serialize + DeserializeOwned,
{
    let (ck, used): (Checkpoint<W, H, P, G>, usize) =
        bincode::serde::decode_from_slice(payload, bincode::config::standard()).ok()?;
    if used != payload.len() {
        return None;
    }
    let convert_all = || -> Result<Decoded, String> {
        Ok(Decoded {
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
        })
    };
    Some(convert_all())
}

/// Decodes a version-1 payload by the newest layout that reads it whole.
pub(super) fn decode(payload: &[u8]) -> Result<(Decoded, usize), String> {
    type A = Absent;
    let found = try_layout::<bool, PooledHead, bool, Option<BiasDiagnostics>>(payload)
        .or_else(|| try_layout::<bool, PooledHead, bool, A>(payload))
        .or_else(|| try_layout::<bool, A, A, A>(payload))
        .or_else(|| try_layout::<A, A, A, A>(payload))
        .ok_or("cannot decode checkpoint: no version-1 layout reads it")?;
    Ok((found?, payload.len()))
}
