//! Adam with TensorFlow's defaults and update rule (the paper's models were trained in TF).
use crate::float::Float;
use crate::params::ParamStore;
use crate::tensor::Tensor;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
/// Adam's hyperparameters.
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f64,
    /// Decay of the first-moment average.
    pub beta1: f64,
    /// Decay of the second-moment average.
    pub beta2: f64,
    /// Added to the square root of the second moment.
    pub eps: f64,
}

impl AdamConfig {
    /// `tf.train.AdamOptimizer` defaults: beta1 0.9, beta2 0.999, eps 1e-8.
    pub fn tf(lr: f64) -> AdamConfig {
        AdamConfig {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// Adam's state: the step count and first/second moments per parameter (kept in f64 would
/// double the memory; f32 moments are what TF and PyTorch keep for f32 models).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Adam<F = f32> {
    /// The hyperparameters.
    pub config: AdamConfig,
    /// Updates made so far (for the bias correction).
    pub step: u64,
    /// First moments, one buffer per parameter in store order.
    pub m: Vec<Vec<F>>,
    /// Second moments, one buffer per parameter in store order.
    pub v: Vec<Vec<F>>,
}

impl<F: Float> Adam<F> {
    /// Zero moments shaped like `store`'s parameters.
    pub fn new<G: Float>(config: AdamConfig, store: &ParamStore<G>) -> Adam<F> {
        let zeros = || {
            store
                .values()
                .iter()
                .map(|t| vec![F::ZERO; t.len()])
                .collect()
        };
        Adam {
            config,
            step: 0,
            m: zeros(),
            v: zeros(),
        }
    }

    /// One update. TF's form: `lr_t = lr·sqrt(1-β2^t)/(1-β1^t)`, `p -= lr_t·m/(sqrt(v)+ε)`
    /// (ε is added to the uncorrected sqrt(v), unlike PyTorch's). Returns how many parameters
    /// had no gradient (they are left untouched, moments included).
    pub fn update(&mut self, store: &mut ParamStore<F>, grads: &[Option<&Tensor<F>>]) -> usize {
        assert_eq!(
            grads.len(),
            store.len(),
            "adam: {} grads for {} params",
            grads.len(),
            store.len()
        );
        assert_eq!(
            self.m.len(),
            store.len(),
            "adam: state for {} params, store has {}",
            self.m.len(),
            store.len()
        );
        self.step += 1;
        let c = self.config;
        let t = self.step as f64;
        let lr_t = F::from_f64(c.lr * (1.0 - c.beta2.powf(t)).sqrt() / (1.0 - c.beta1.powf(t)));
        let (b1, b2, eps) = (
            F::from_f64(c.beta1),
            F::from_f64(c.beta2),
            F::from_f64(c.eps),
        );
        let (one_b1, one_b2) = (F::ONE - b1, F::ONE - b2);
        let mut missing = 0;
        let tensors = store.values_mut().iter_mut();
        for (((p, g), m), v) in tensors.zip(grads).zip(&mut self.m).zip(&mut self.v) {
            let Some(g) = g else {
                missing += 1;
                continue;
            };
            // Elementwise and independent, so splitting it cannot change a single bit.
            let body = |(((x, &d), mi), vi): (((&mut F, &F), &mut F), &mut F)| {
                *mi = b1 * *mi + one_b1 * d;
                *vi = b2 * *vi + one_b2 * d * d;
                *x -= lr_t * *mi / (vi.sqrt() + eps);
            };
            if p.len() >= 1 << 15 {
                p.data
                    .par_iter_mut()
                    .zip(g.data.par_iter())
                    .zip(m.par_iter_mut())
                    .zip(v.par_iter_mut())
                    .for_each(body);
            } else {
                p.data
                    .iter_mut()
                    .zip(&g.data)
                    .zip(m.iter_mut())
                    .zip(v.iter_mut())
                    .for_each(body);
            }
        }
        missing
    }
}
