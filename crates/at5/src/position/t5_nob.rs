//! `t5-nob`: T5 without bucketing, one learned scalar per (offset, head).
use super::config::{Family, NoOptions};
use super::{PositionBias, clamped_offset_rows, gather_offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use std::ops::Range;

/// A free table `[2·max_len - 1, H]`, row `n + max_len - 1` for offset `n`: `(2L - 1)·H`
/// parameters. Offsets beyond the training length reuse the edge row.
pub struct T5NoB {
    max_len: usize,
    table: ParamId,
}

impl T5NoB {
    /// Registers `{prefix}.table`, initialised truncated N(0, 0.02²) as T5's bucket table.
    pub fn new<F: Float>(
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> T5NoB {
        let init = Tensor::truncated_normal_from(&[2 * max_len - 1, heads], 0.02, rng);
        let table = store.add(&format!("{prefix}.table"), init);
        T5NoB { max_len, table }
    }
}

impl Family for T5NoB {
    const NAME: &'static str = "t5-nob";
    const LEARNED: bool = true;
    type Options = NoOptions;
    /// `(2L - 1)·H`, estimated as `2L·H`.
    fn param_count(_: &NoOptions, heads: usize, len: usize) -> f64 {
        heads as f64 * 2.0 * len as f64
    }
    fn build<F: Float>(
        _: &NoOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<T5NoB, String> {
        Ok(T5NoB::new(heads, max_len, store, prefix, rng))
    }
}

impl<F: Float> PositionBias<F> for T5NoB {
    fn family(&self) -> &'static str {
        "t5-nob"
    }
    fn grid_rows(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
        rows: Range<usize>,
        _: u64,
    ) -> Option<Var> {
        let table_rows = clamped_offset_rows(lq, lk, self.max_len);
        let per_offset = tape.embedding(params.var(self.table), &table_rows);
        Some(gather_offsets(tape, per_offset, lq, lk, rows))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        vec![self.table]
    }
}
