//! Evaluation: loss and accuracy (for regression the tolerance accuracy and MSE), no tape memory.
use super::batch::make_batch;
use crate::autodiff::Tape;
use crate::data::{ADDING_TOLERANCE, Example};
use crate::nn::{ForwardOpts, Model, OutputKind, Targets};
use crate::params::ParamStore;
use serde::{Deserialize, Serialize};

/// Examples per evaluation forward.
pub const EVAL_BATCH: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
/// Loss and accuracy of the model on one split.
pub struct Metrics {
    /// Mean loss (cross-entropy, or MSE for regression). JSON writes a non-finite value (a
    /// diverged model's) as null; it reads back as NaN rather than failing the whole file.
    #[serde(deserialize_with = "nan_if_null")]
    pub loss: f64,
    /// Fraction correct; for regression the fraction with |pred - target| <= 0.04.
    #[serde(deserialize_with = "nan_if_null")]
    pub accuracy: f64,
    /// Mean squared error (regression only).
    pub mse: Option<f64>,
}

fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Evaluates `examples` padded to `l` without a recorded graph ([`Model::predict`]: no dropout,
/// nothing kept for a backward), with `opts`' head ablation and graph choice. The metrics are
/// those of the model's forward on an evaluation tape, bit for bit.
pub fn evaluate(
    model: &Model<f32>,
    store: &ParamStore<f32>,
    examples: &[Example],
    l: usize,
    opts: &ForwardOpts,
) -> Metrics {
    let (mut loss, mut correct, mut sq) = (0.0f64, 0usize, 0.0f64);
    for chunk in examples.chunks(EVAL_BATCH) {
        let refs: Vec<&Example> = chunk.iter().collect();
        let (batch, targets) = make_batch(&refs, l);
        let y = model.predict(store, &batch, opts);
        let mut tape = Tape::<f32>::eval();
        let out = tape.constant(y);
        let l_var = model.loss(&mut tape, out, &targets);
        loss += tape.value(l_var).data[0] as f64 * chunk.len() as f64;
        let y = &tape.value(out).data;
        match (&targets, model.config.output) {
            (Targets::Classes(c), OutputKind::Classes(n)) => {
                for (row, &label) in y.chunks(n).zip(c) {
                    correct += (argmax(row) == label) as usize;
                }
            }
            (Targets::Real(t), _) => {
                for (&p, &t) in y.iter().zip(t) {
                    let e = p as f64 - t;
                    sq += e * e;
                    correct += (e.abs() <= ADDING_TOLERANCE) as usize;
                }
            }
            _ => unreachable!("targets match the model's output"),
        }
    }
    let n = examples.len().max(1) as f64;
    Metrics {
        loss: loss / n,
        accuracy: correct as f64 / n,
        mse: (model.config.output == OutputKind::Regression).then_some(sq / n),
    }
}

/// Index of the largest value, the first on ties.
pub fn argmax(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best
}
