//! `alibi`: ALiBi's fixed linear penalty `-m_h |n|` (Press, Smith, Lewis 2022), symmetric.
use super::config::{Family, NoOptions};
use super::{PositionBias, offset_ids_rows, offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use rand::rngs::StdRng;
use crate::tensor::Tensor;
use std::ops::Range;

/// The head slopes of the official `get_slopes`: `2^(-8h/H)`, h = 1..H, for H a power of two;
/// otherwise those of the largest power of two `n2 < H`, then every other slope of `2·n2`
/// (its 1st, 3rd, 5th, ...) until there are H.
///
/// ```
/// use at5::position::alibi_slopes;
/// assert_eq!(alibi_slopes(2), vec![1.0 / 16.0, 1.0 / 256.0]);
/// ```
pub fn alibi_slopes(heads: usize) -> Vec<f64> {
    let power_of_two = |n: usize| -> Vec<f64> {
        (1..=n)
            .map(|h| 2f64.powf(-8.0 * h as f64 / n as f64))
            .collect()
    };
    if heads == 0 || heads.is_power_of_two() {
        return power_of_two(heads);
    }
    let n2 = 1 << heads.ilog2();
    let mut slopes = power_of_two(n2);
    slopes.extend(power_of_two(2 * n2).into_iter().step_by(2).take(heads - n2));
    slopes
}

/// Not learned: the grid is a constant, no parameters.
pub struct Alibi {
    slopes: Vec<f64>,
}

impl Alibi {
    /// ALiBi for `heads` heads with [`alibi_slopes`]; it has no parameters.
    pub fn new(heads: usize) -> Alibi {
        Alibi {
            slopes: alibi_slopes(heads),
        }
    }
}

impl Family for Alibi {
    const NAME: &'static str = "alibi";
    const LEARNED: bool = false;
    type Options = NoOptions;
    fn param_count(_: &NoOptions, _heads: usize, _len: usize) -> f64 {
        0.0
    }
    fn build<F: Float>(
        _: &NoOptions,
        heads: usize,
        _max_len: usize,
        _: &mut ParamStore<F>,
        _prefix: &str,
        _: &mut StdRng,
    ) -> Result<Alibi, String> {
        Ok(Alibi::new(heads))
    }
}

impl<F: Float> PositionBias<F> for Alibi {
    fn family(&self) -> &'static str {
        "alibi"
    }
    fn grid_rows(
        &self,
        tape: &mut Tape<F>,
        _: &Bound,
        lq: usize,
        lk: usize,
        rows: Range<usize>,
        _: u64,
    ) -> Option<Var> {
        let n_rows = rows.len();
        let ns = offsets(lq, lk);
        let ids = offset_ids_rows(lq, lk, rows);
        let mut data = Vec::with_capacity(self.slopes.len() * ids.len());
        for &m in &self.slopes {
            data.extend(
                ids.iter()
                    .map(|&r| F::from_f64(-m * ns[r].unsigned_abs() as f64)),
            );
        }
        let grid = Tensor::from_vec(&[self.slopes.len(), n_rows, lk], data);
        Some(tape.constant(grid))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        Vec::new()
    }
}
