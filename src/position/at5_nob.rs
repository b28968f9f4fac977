//! `at5-nob`: AT5 with its soft bucket replaced by a free table `sigmoid(w_h[n])`.
//!
//! The original code's NoB variant also dropped the last MLP layer (and kept dropout on at
//! evaluation); here the MLP is AT5's own, so the ablation changes the bucketization alone.
use super::at5::{BucketMlp, MlpInit, MlpOptions, mlp_param_count};
use super::config::Family;
use super::{DeadUnits, PositionBias, clamped_offset_rows};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
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

/// AT5-NoB's options: AT5's MLPs (its table has none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct At5NoBOptions {
    /// Width of the MLP's first hidden layer.
    pub l1: usize,
    /// Width of the MLP's second hidden layer.
    pub l2: usize,
    /// Std of the MLP's truncated-normal weight init.
    pub init_std: f64,
    /// Dropout inside the MLP (the input-dropout rate).
    pub dropout: f64,
    /// As AT5's.
    #[serde(default)]
    pub dropout_per_cell: bool,
    /// As AT5's.
    #[serde(default, skip_serializing_if = "MlpInit::is_paper")]
    pub init: MlpInit,
}

impl Default for At5NoBOptions {
    /// AT5's MLP defaults.
    fn default() -> At5NoBOptions {
        At5NoBOptions {
            l1: 15,
            l2: 2,
            init_std: 0.01,
            dropout: 0.0,
            dropout_per_cell: false,
            init: MlpInit::Paper,
        }
    }
}

impl At5NoBOptions {
    /// The options of its per-head MLPs.
    pub fn mlp(&self) -> MlpOptions {
        MlpOptions {
            l1: self.l1,
            l2: self.l2,
            init_std: self.init_std,
            init: self.init,
            dropout: self.dropout,
            per_cell: self.dropout_per_cell,
        }
    }
}

impl Family for At5NoB {
    const NAME: &'static str = "at5-nob";
    const LEARNED: bool = true;
    type Options = At5NoBOptions;
    fn validate(o: &At5NoBOptions) -> Result<(), String> {
        o.mlp().check("at5-nob")
    }
    /// `(2L - 1)·H` table entries (estimated as `2L·H`) and the MLPs.
    fn param_count(o: &At5NoBOptions, heads: usize, len: usize) -> f64 {
        heads as f64 * 2.0 * len as f64 + mlp_param_count(&o.mlp(), heads)
    }
    fn build<F: Float>(
        o: &At5NoBOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<At5NoB, String> {
        At5NoB::new(&o.mlp(), heads, max_len, store, prefix, rng)
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
