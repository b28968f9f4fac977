//! Position biases: one trait, one file per family, and the offset grid they share.
//!
//! Every family here produces a scalar `b_h(n)` per head for the relative offset
//! `n = j - i` (key position minus query position), added to the attention scores; the
//! sinusoidal baseline is the exception and adds an absolute encoding to the input instead.
mod config;
mod mlp;
mod per_head;

// The bias families: one line each (see `config::Family` for what a family's file declares).
config::families! {
    None: none::NoBias,
    Sinusoidal: sinusoidal::Sinusoidal,
    T5: t5::T5,
    T5NoB: t5_nob::T5NoB,
    At5: at5::At5,
    At5NoB: at5_nob::At5NoB,
    Alibi: alibi::Alibi,
    KerpleLog: kerple::KerpleLog,
    Fire: fire::Fire,
}

// `self::` because the crate is also called `at5`, and a doctest sees both.
pub use self::alibi::alibi_slopes;
pub use self::at5::{At5Options, soft_bucket};
pub use self::fire::FireOptions;
pub use self::kerple::KERPLE_MIN;
pub use self::mlp::{MlpInit, MlpOptions};
pub use self::sinusoidal::sinusoidal_encoding;
pub(crate) use self::t5::t5_bucket_with;
pub use self::t5::{T5Options, check_t5_config, t5_bucket};
pub use config::{Family, FamilyFlag, NoOptions, Setting, build, parse_count, parse_real};
pub use per_head::PerHead;

use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use std::ops::Range;

/// A bias family bound to its parameters in a model's [`ParamStore`].
pub trait PositionBias<F: Float>: Send + Sync {
    /// The family's command-line name (`t5`, `at5`, ...).
    fn family(&self) -> &'static str;

    /// The bias grid `[H, lq, lk]` with entry `b_h(j - i)`, or `None` when the family adds
    /// nothing to the scores. `seed` drives any dropout inside the family (training tapes only).
    fn grid(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
        seed: u64,
    ) -> Option<Var> {
        self.grid_rows(tape, params, lq, lk, 0..lq, seed)
    }

    /// The query rows `rows` of [`PositionBias::grid`], `[H, rows.len(), lk]`, with the same
    /// values and the same dropout masks (a pruned last block reads one row). Families that
    /// learn a per-offset function still evaluate it on all `lq + lk - 1` offsets, O(L), but
    /// gather only the rows asked for.
    fn grid_rows(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
        rows: Range<usize>,
        seed: u64,
    ) -> Option<Var>;

    /// An absolute encoding `[len, d_model]` added to the input embeddings (sinusoidal only).
    fn input_encoding(&self, _len: usize, _d_model: usize) -> Option<Tensor<F>> {
        None
    }

    /// Puts constrained parameters back into their domain after an optimizer step.
    fn project(&self, _params: &mut ParamStore<F>) {}

    /// For a family whose offsets share parameters in buckets (T5): the bucket of offset `n`.
    /// `None` for a family whose bias is its own function of every offset.
    fn bucket_of(&self, _n: i64) -> Option<usize> {
        None
    }

    /// The family's own numbers per head, by name, that run records keep after every epoch and
    /// `prior` and the playground show (AT5: its slopes); none by default.
    fn per_head(&self, _params: &ParamStore<F>) -> PerHead {
        PerHead::default()
    }

    /// For families whose bias is an MLP of a per-offset input (AT5, AT5-NoB): per head, the
    /// fraction of each hidden layer's ReLU units that are zero at every offset of a direction,
    /// over the `2·len - 1` offsets of a length-`len` sequence. Such a unit passes no gradient
    /// for that direction: it stays dead unless the other weights move it.
    fn dead_units(&self, _params: &ParamStore<F>, _len: usize) -> Option<Vec<DeadUnits>> {
        None
    }

    /// The parameters this family owns, in registration order.
    fn param_ids(&self) -> Vec<ParamId>;
}

/// Per head: the fraction of dead ReLU units of each hidden layer, for the directions `n <= 0`
/// and `n > 0` (see [`PositionBias::dead_units`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadUnits {
    /// First hidden layer (width l1): `[n <= 0, n > 0]`.
    pub layer1: [f64; 2],
    /// Second hidden layer (width l2): `[n <= 0, n > 0]`.
    pub layer2: [f64; 2],
}

/// Index of offset `n = j - i` in a per-offset table of `lq + lk - 1` rows: `n + lq - 1`.
/// Row-major over `(i, j)`, so a `[lq + lk - 1, H]` table gathered with these ids is `[lq·lk, H]`.
pub fn offset_ids(lq: usize, lk: usize) -> Vec<usize> {
    offset_ids_rows(lq, lk, 0..lq)
}

/// [`offset_ids`] for the query rows `rows` only.
pub fn offset_ids_rows(lq: usize, lk: usize, rows: Range<usize>) -> Vec<usize> {
    assert!(
        rows.end <= lq,
        "offset_ids: rows {rows:?} outside {lq} queries"
    );
    let mut ids = Vec::with_capacity(rows.len() * lk);
    for i in rows {
        for j in 0..lk {
            ids.push(j + lq - 1 - i);
        }
    }
    ids
}

/// The offsets `n = -(lq-1) ..= lk-1` in the order of the rows [`offset_ids`] indexes.
pub fn offsets(lq: usize, lk: usize) -> Vec<i64> {
    (0..lq + lk - 1)
        .map(|r| r as i64 - (lq as i64 - 1))
        .collect()
}

/// For each offset of [`offsets`], its row in a table of the `2·max_len - 1` offsets seen in
/// training (`n + max_len - 1`), with `|n| > max_len - 1` clamped to the edge row: a family that
/// learns one value per offset extrapolates by reusing its outermost value.
pub fn clamped_offset_rows(lq: usize, lk: usize, max_len: usize) -> Vec<usize> {
    let edge = max_len as i64 - 1;
    offsets(lq, lk)
        .into_iter()
        .map(|n| (n.clamp(-edge, edge) + edge) as usize)
        .collect()
}

/// `|n|` for every offset of [`offsets`], as a column `[lq + lk - 1, 1]` to broadcast over heads.
pub(crate) fn abs_offsets<F: Float>(tape: &mut Tape<F>, lq: usize, lk: usize) -> Var {
    let d: Vec<F> = offsets(lq, lk)
        .into_iter()
        .map(|n| F::from_f64(n.unsigned_abs() as f64))
        .collect();
    tape.constant(Tensor::from_vec(&[lq + lk - 1, 1], d))
}

/// Spreads a per-offset table `[lq + lk - 1, H]` over the query rows `rows` of the grid
/// `[H, lq, lk]`, giving `[H, rows.len(), lk]`.
///
/// Learnable biases depend on `n` alone, so they are evaluated on the `lq + lk - 1` offsets and
/// gathered here: O(L) function evaluations instead of O(L²); the gather's backward scatter-adds.
pub fn gather_offsets<F: Float>(
    tape: &mut Tape<F>,
    per_offset: Var,
    lq: usize,
    lk: usize,
    rows: Range<usize>,
) -> Var {
    let shape = tape.shape(per_offset).to_vec();
    assert!(
        shape.len() == 2 && shape[0] == lq + lk - 1,
        "gather_offsets: table {shape:?} does not cover {lq}x{lk} offsets"
    );
    let h = shape[1];
    let n = rows.len();
    let cells = tape.embedding(per_offset, &offset_ids_rows(lq, lk, rows));
    let grid = tape.reshape(cells, &[n, lk, h]);
    tape.permute(grid, &[2, 0, 1])
}
