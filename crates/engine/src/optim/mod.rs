//! Optimizers over a [`crate::ParamStore`]: Adam (the paper's) and plain SGD.
mod adam;

pub use adam::{Adam, AdamConfig};

use crate::float::Float;
use crate::params::ParamStore;
use crate::tensor::Tensor;

/// Plain gradient descent, `p -= lr * g`; parameters without a gradient stay as they are.
pub fn sgd_step<F: Float>(store: &mut ParamStore<F>, grads: &[Option<&Tensor<F>>], lr: f64) {
    let lr = F::from_f64(lr);
    for (p, g) in store.values_mut().iter_mut().zip(grads) {
        if let Some(g) = g {
            for (x, d) in p.data.iter_mut().zip(&g.data) {
                *x -= lr * *d;
            }
        }
    }
}
