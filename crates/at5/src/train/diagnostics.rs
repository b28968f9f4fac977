//! Per-epoch diagnostics of the position bias: its gradients, its dead units, its prior's shape.
use super::pooling::pooled_query;
use crate::nn::{Model, mass_radius};
use crate::params::{ParamId, ParamStore};
use crate::position::DeadUnits;
use crate::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// What the run record keeps per epoch about the bias (cheap: a norm per bias tensor per step,
/// one evaluation of the bias per epoch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BiasDiagnostics {
    /// Per bias parameter tensor (its name, e.g. `bias.a`, `bias.neg.w1`): the root mean
    /// square over the epoch's steps of its gradient's L2 norm.
    pub grad_norms: Vec<(String, f64)>,
    /// Per head, the share of dead ReLU units of AT5's (or AT5-NoB's) MLPs, per direction.
    pub dead_units: Option<Vec<DeadUnits>>,
    /// Per head, the entropy (nats) of the pooled query's prior over the keys.
    pub prior_entropy: Vec<f64>,
    /// Per head, the radius around that prior's mode that holds 90 % of its mass.
    pub prior_radius90: Vec<usize>,
}

/// Sums of squared gradient norms of the bias parameters over one epoch's steps.
#[derive(Clone, Debug, Default)]
pub struct GradNorms {
    ids: Vec<ParamId>,
    sums: Vec<f64>,
    steps: usize,
}

impl GradNorms {
    /// An empty accumulator for the bias parameters of `model`.
    pub fn new(model: &Model<f32>) -> GradNorms {
        let ids: Vec<ParamId> = model.biases.iter().flat_map(|b| b.param_ids()).collect();
        GradNorms {
            sums: vec![0.0; ids.len()],
            ids,
            steps: 0,
        }
    }

    /// Adds one step's gradients (`grads[k]` of the store's parameter `k`).
    pub fn add(&mut self, grads: &[Option<&Tensor<f32>>]) {
        for (s, id) in self.sums.iter_mut().zip(&self.ids) {
            if let Some(g) = grads[id.0] {
                *s += g.data.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>();
            }
        }
        self.steps += 1;
    }

    /// `(name, RMS over steps of the norm)` per bias parameter; then starts over.
    pub fn take(&mut self, store: &ParamStore<f32>) -> Vec<(String, f64)> {
        let n = self.steps.max(1) as f64;
        let out = self
            .ids
            .iter()
            .zip(&self.sums)
            .map(|(&id, &s)| (store.name(id).to_string(), (s / n).sqrt()))
            .collect();
        self.sums.iter_mut().for_each(|s| *s = 0.0);
        self.steps = 0;
        out
    }
}

/// The epoch's diagnostics: `grad_norms` from the epoch's steps, the rest from the parameters
/// as they are now, for a length-`len` input.
pub fn diagnose(
    model: &Model<f32>,
    store: &ParamStore<f32>,
    len: usize,
    grad_norms: Vec<(String, f64)>,
) -> BiasDiagnostics {
    let query = pooled_query(model.config.pooling, len);
    let rows = model.prior_row(store, len, query);
    BiasDiagnostics {
        grad_norms,
        dead_units: model.biases[0].dead_units(store, len),
        prior_entropy: rows
            .iter()
            .map(|r| {
                -r.iter()
                    .filter(|&&p| p > 0.0)
                    .map(|p| p * p.ln())
                    .sum::<f64>()
            })
            .collect(),
        prior_radius90: rows.iter().map(|r| mass_radius(r, 0.9).1).collect(),
    }
}
