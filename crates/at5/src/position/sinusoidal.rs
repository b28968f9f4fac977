//! `sinusoidal`: Vaswani et al.'s absolute sine/cosine encoding, added to the input, no bias.
use super::config::{Family, NoOptions};
use super::PositionBias;
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use rand::rngs::StdRng;
use crate::tensor::Tensor;
use std::ops::Range;

/// `pe[pos, 2i] = sin(pos / 10000^(2i/d))`, `pe[pos, 2i+1] = cos(pos / 10000^(2i/d))`, as
/// `[len, d]`. An odd `d` ends on a sine column.
pub fn sinusoidal_encoding<F: Float>(len: usize, d: usize) -> Tensor<F> {
    let mut data = Vec::with_capacity(len * d);
    for pos in 0..len {
        for k in 0..d {
            let i2 = (k - k % 2) as f64;
            let angle = pos as f64 / 10000f64.powf(i2 / d as f64);
            let v = if k % 2 == 0 { angle.sin() } else { angle.cos() };
            data.push(F::from_f64(v));
        }
    }
    Tensor::from_vec(&[len, d], data)
}

/// The absolute baseline: no parameters, nothing added to the scores.
pub struct Sinusoidal;

impl<F: Float> PositionBias<F> for Sinusoidal {
    fn family(&self) -> &'static str {
        "sinusoidal"
    }
    fn grid_rows(
        &self,
        _: &mut Tape<F>,
        _: &Bound,
        _: usize,
        _: usize,
        _: Range<usize>,
        _: u64,
    ) -> Option<Var> {
        None
    }
    fn input_encoding(&self, len: usize, d_model: usize) -> Option<Tensor<F>> {
        Some(sinusoidal_encoding(len, d_model))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        Vec::new()
    }
}

impl Family for Sinusoidal {
    const NAME: &'static str = "sinusoidal";
    const LEARNED: bool = false;
    type Options = NoOptions;
    fn param_count(_: &NoOptions, _heads: usize, _len: usize) -> f64 {
        0.0
    }
    fn build<F: Float>(
        _: &NoOptions,
        _heads: usize,
        _max_len: usize,
        _: &mut ParamStore<F>,
        _prefix: &str,
        _: &mut StdRng,
    ) -> Result<Sinusoidal, String> {
        Ok(Sinusoidal)
    }
}
