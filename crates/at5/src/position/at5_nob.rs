//! `at5-nob`: AT5 with its soft bucket replaced by a free table `sigmoid(w_h[n])`.
//!
//! The original code's NoB variant also dropped the last MLP layer (and kept dropout on at
//! evaluation); here the MLP is AT5's own, so the ablation changes the bucketization alone.
use super::config::Setting;
use super::mlp::{BucketMlp, MlpOptions, mlp_param_count, mlp_settings};
use super::config::Family;
use super::{DeadUnits, PositionBias, clamped_offset_rows};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use std::ops::Range;

/// `{prefix}.w` `[2L - 1, H]` (row `n + L - 1`) and AT5's two MLPs:
/// `(2L - 1)·H + 2·H·(l1 + l1 + l1·l2 + l2 + l2 + 1)` parameters. Offsets beyond the training
/// length reuse the edge row, as in `t5-nob`.
pub struct At5NoB {
    max_len: usize,
    w: ParamId,
    mlp: BucketMlp,
}

impl At5NoB {
    /// Registers `{prefix}.w` ~ N(0, 0.1²), then the MLPs as in AT5.
    pub fn new<F: Float>(
        mlp: &MlpOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<At5NoB, String> {
        mlp.check("at5-nob")?;
        let init = Tensor::normal_from(&[2 * max_len - 1, heads], 0.0, 0.1, rng);
        let w = store.add(&format!("{prefix}.w"), init);
        let mlp = BucketMlp::new(heads, mlp, store, prefix, rng);
        Ok(At5NoB { max_len, w, mlp })
    }
}

impl Family for At5NoB {
    const NAME: &'static str = "at5-nob";
    const LEARNED: bool = true;
    type Options = MlpOptions;
    fn settings() -> Vec<Setting<MlpOptions>> {
        mlp_settings!(MlpOptions,).into()
    }
    fn validate(o: &MlpOptions) -> Result<(), String> {
        o.check("at5-nob")
    }
    /// `(2L - 1)·H` table entries (estimated as `2L·H`) and the MLPs.
    fn param_count(o: &MlpOptions, heads: usize, len: usize) -> f64 {
        heads as f64 * 2.0 * len as f64 + mlp_param_count(o, heads)
    }
    fn build<F: Float>(
        o: &MlpOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<At5NoB, String> {
        At5NoB::new(o, heads, max_len, store, prefix, rng)
    }
}

impl<F: Float> PositionBias<F> for At5NoB {
    fn family(&self) -> &'static str {
        "at5-nob"
    }
    fn grid_rows(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
        rows: Range<usize>,
        seed: u64,
    ) -> Option<Var> {
        // Clamping keeps each offset's sign, so rows split into directions as in AT5.
        let table_rows = clamped_offset_rows(lq, lk, self.max_len);
        let w = tape.embedding(params.var(self.w), &table_rows);
        let f = tape.sigmoid(w);
        Some(self.mlp.grid(tape, params, f, (lq, lk, rows), seed))
    }
    fn dead_units(&self, params: &ParamStore<F>, len: usize) -> Option<Vec<DeadUnits>> {
        let mut tape = Tape::eval();
        let p = params.bind(&mut tape);
        let rows = clamped_offset_rows(len, len, self.max_len);
        let w = tape.embedding(p.var(self.w), &rows);
        let f = tape.sigmoid(w);
        Some(self.mlp.dead_units(&mut tape, &p, f, len))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        let mut ids = vec![self.w];
        ids.extend(self.mlp.param_ids());
        ids
    }
}
