//! `none`: no position information; the encoder is permutation-equivariant.
use super::PositionBias;
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId};
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
