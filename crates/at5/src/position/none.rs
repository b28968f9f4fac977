//! `none`: no position information; the encoder is permutation-equivariant.
use super::config::{Family, NoOptions};
use super::PositionBias;
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use rand::rngs::StdRng;
use std::ops::Range;

/// The "Non-PE" baseline: adds nothing.
pub struct NoBias;

impl<F: Float> PositionBias<F> for NoBias {
    fn family(&self) -> &'static str {
        "none"
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
    fn param_ids(&self) -> Vec<ParamId> {
        Vec::new()
    }
}

impl Family for NoBias {
    const NAME: &'static str = "none";
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
    ) -> Result<NoBias, String> {
        Ok(NoBias)
    }
}
