//! `kerple-log`: KERPLE's logarithmic kernel `-r1 ln(1 + r2 |n|)` (Chi et al. 2022).
use super::config::{Family, NoOptions};
use super::{PositionBias, abs_offsets, gather_offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use std::ops::Range;

/// The floor both KERPLE parameters are projected onto after every update.
pub const KERPLE_MIN: f64 = 0.01;

/// `{prefix}.r1` ~ U(0, 2) and `{prefix}.r2` ~ U(0, 1), both `[H]`: 2H parameters.
pub struct KerpleLog {
    r1: ParamId,
    r2: ParamId,
}

impl KerpleLog {
    /// Registers r1 and r2, already projected, so the first forward sees the constrained domain.
    pub fn new<F: Float>(
        heads: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> KerpleLog {
        let r1 = Tensor::uniform_from(&[heads], 0.0, 2.0, rng);
        let r2 = Tensor::uniform_from(&[heads], 0.0, 1.0, rng);
        let k = KerpleLog {
            r1: store.add(&format!("{prefix}.r1"), r1),
            r2: store.add(&format!("{prefix}.r2"), r2),
        };
        PositionBias::<F>::project(&k, store);
        k
    }
}

impl Family for KerpleLog {
    const NAME: &'static str = "kerple-log";
    const LEARNED: bool = true;
    type Options = NoOptions;
    fn param_count(_: &NoOptions, heads: usize, _len: usize) -> f64 {
        2.0 * heads as f64
    }
    fn build<F: Float>(
        _: &NoOptions,
        heads: usize,
        _max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<KerpleLog, String> {
        Ok(KerpleLog::new(heads, store, prefix, rng))
    }
}

impl<F: Float> PositionBias<F> for KerpleLog {
    fn family(&self) -> &'static str {
        "kerple-log"
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
        let abs_n = abs_offsets(tape, lq, lk);
        let x = tape.mul(abs_n, params.var(self.r2));
        let x = tape.add_scalar(x, 1.0);
        let x = tape.ln(x);
        let x = tape.mul(x, params.var(self.r1));
        let per_offset = tape.neg(x);
        Some(gather_offsets(tape, per_offset, lq, lk, rows))
    }
    /// Clamps r1 and r2 to at least [`KERPLE_MIN`]: the kernel is conditionally positive
    /// definite only for positive parameters, and r2 > 0 keeps the log's argument >= 1.
    fn project(&self, params: &mut ParamStore<F>) {
        let lo = F::from_f64(KERPLE_MIN);
        for id in [self.r1, self.r2] {
            for v in &mut params.get_mut(id).data {
                *v = v.max(lo);
            }
        }
    }
    fn param_ids(&self) -> Vec<ParamId> {
        vec![self.r1, self.r2]
    }
}
