//! `t5`: T5's fixed log-spaced buckets with one learned scalar per (bucket, head).
use super::config::{Family, Setting, parse_count};
use super::{PositionBias, offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Checks that a T5 bucket configuration gives in-range, monotone buckets.
///
/// HF transformers accepts `max_exact > max_distance` (e.g. 64 buckets up to distance 20) and
/// then returns negative, non-monotone buckets; we refuse it instead of reproducing it.
pub fn check_t5_config(
    num_buckets: usize,
    max_distance: usize,
    bidirectional: bool,
) -> Result<(), String> {
    let nb = if bidirectional {
        num_buckets / 2
    } else {
        num_buckets
    };
    let need = if bidirectional { 4 } else { 2 };
    if num_buckets < need {
        return Err(format!(
            "t5: num_buckets must be at least {need} ({} buckets), got {num_buckets}",
            if bidirectional {
                "bidirectional"
            } else {
                "causal"
            }
        ));
    }
    let max_exact = nb / 2;
    if max_exact > max_distance {
        return Err(format!(
            "t5: {num_buckets} buckets give {max_exact} exact buckets per direction, more than \
             max_distance = {max_distance}; use fewer buckets or a larger max_distance"
        ));
    }
    Ok(())
}

/// T5's bucket of `relative_position` (= memory position - query position), as HF's
/// `_relative_position_bucket`: exact buckets for `|n| < max_exact`, then log-spaced up to
/// `max_distance`, clamped to the last bucket beyond. The log is taken in f32 and truncated
/// toward zero, as there. Bidirectional: buckets `0..nb/2` for `n <= 0`, `nb/2..nb` for `n > 0`.
/// Causal: only `n <= 0` is distinguished; every `n > 0` falls in bucket 0.
///
/// Panics on a configuration [`check_t5_config`] rejects.
///
/// ```
/// use at5::position::t5_bucket;
/// assert_eq!(t5_bucket(-20, 32, 128, true), 10);
/// assert_eq!(t5_bucket(128, 32, 128, true), 31);
/// ```
pub fn t5_bucket(
    relative_position: i64,
    num_buckets: usize,
    max_distance: usize,
    bidirectional: bool,
) -> usize {
    if let Err(e) = check_t5_config(num_buckets, max_distance, bidirectional) {
        panic!("{e}");
    }
    bucket_of_checked(relative_position, num_buckets, max_distance, bidirectional)
}

/// [`t5_bucket`] for a configuration already accepted by [`check_t5_config`] (a [`T5`] checks
/// its own once, when built, rather than at every offset of every forward).
fn bucket_of_checked(
    relative_position: i64,
    num_buckets: usize,
    max_distance: usize,
    bidirectional: bool,
) -> usize {
    t5_bucket_with(
        relative_position as f64,
        num_buckets,
        bidirectional,
        |m, max_exact, nb| {
            if max_distance == max_exact {
                // The log ratio's denominator is zero: everything from max_exact on saturates.
                return nb;
            }
            // HF computes the denominator with Python's f64 log, then divides an f32 tensor by it.
            let denom = (max_distance as f64 / max_exact as f64).ln() as f32;
            let x = (m as f32 / max_exact as f32).ln() / denom * (nb - max_exact) as f32;
            x as usize
        },
    )
}

/// The one statement of T5's bucketing: the direction split (bidirectional: `n <= 0` in the
/// lower half, `n > 0` in the upper), the exact buckets below `max_exact = nb / 2`, and the clamp
/// to the direction's last bucket. `log_steps(m, max_exact, nb)` says how many log-spaced
/// buckets past `max_exact` a distance `m >= max_exact` lies; [`t5_bucket`] takes that log in f32
/// as HF does, the gradient check's relaxation (`nn::check::t5_bucket_relaxed`) in f64 with a
/// real-valued boundary. `relative_position` is an integer offset here, or a real one there.
pub(crate) fn t5_bucket_with(
    relative_position: f64,
    num_buckets: usize,
    bidirectional: bool,
    log_steps: impl Fn(f64, usize, usize) -> usize,
) -> usize {
    let mut m = -relative_position;
    let mut ret = 0usize;
    let mut nb = num_buckets;
    if bidirectional {
        nb /= 2;
        if m < 0.0 {
            ret += nb;
        }
        m = m.abs();
    } else {
        m = m.max(0.0);
    }
    let max_exact = nb / 2;
    if m < max_exact as f64 {
        return ret + m as usize;
    }
    ret + (max_exact + log_steps(m, max_exact, nb)).min(nb - 1)
}

/// The T5 bias: a table `[num_buckets, H]`, gathered by bucket for every (query, key) cell.
pub struct T5 {
    num_buckets: usize,
    max_distance: usize,
    bidirectional: bool,
    table: ParamId,
}

impl T5 {
    /// Registers `{prefix}.table`, initialised truncated N(0, 0.02²) (redrawn beyond two std), as
    /// the original code.
    pub fn new<F: Float>(
        num_buckets: usize,
        max_distance: usize,
        bidirectional: bool,
        heads: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<T5, String> {
        check_t5_config(num_buckets, max_distance, bidirectional)?;
        let init = Tensor::truncated_normal_from(&[num_buckets, heads], 0.02, rng);
        let table = store.add(&format!("{prefix}.table"), init);
        Ok(T5 {
            num_buckets,
            max_distance,
            bidirectional,
            table,
        })
    }

    /// The bucket of every offset `-(lq-1) ..= lk-1`.
    pub fn buckets(&self, lq: usize, lk: usize) -> Vec<usize> {
        offsets(lq, lk)
            .into_iter()
            .map(|n| bucket_of_checked(n, self.num_buckets, self.max_distance, self.bidirectional))
            .collect()
    }
}

/// T5's bucket layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct T5Options {
    /// Buckets over both directions together (32 in the paper).
    pub num_buckets: usize,
    /// Distance from which every offset shares the last bucket.
    pub max_distance: usize,
    /// Whether keys before and after the query get separate buckets (an encoder: yes).
    pub bidirectional: bool,
}

impl Default for T5Options {
    /// The paper's: 32 buckets up to distance 128, both directions.
    fn default() -> T5Options {
        T5Options {
            num_buckets: 32,
            max_distance: 128,
            bidirectional: true,
        }
    }
}

impl Family for T5 {
    const NAME: &'static str = "t5";
    const LEARNED: bool = true;
    type Options = T5Options;
    fn settings() -> Vec<Setting<T5Options>> {
        vec![
            Setting {
                flag: "num-buckets",
                value: "N",
                help: "number of buckets",
                set: |o: &mut T5Options, v: &str| parse_count("num-buckets", v).map(|x| o.num_buckets = x),
                get: |o: &T5Options| o.num_buckets.to_string(),
            },
            Setting {
                flag: "max-distance",
                value: "N",
                help: "distance where the last bucket starts",
                set: |o: &mut T5Options, v: &str| parse_count("max-distance", v).map(|x| o.max_distance = x),
                get: |o: &T5Options| o.max_distance.to_string(),
            },
        ]
    }
    fn validate(o: &T5Options) -> Result<(), String> {
        check_t5_config(o.num_buckets, o.max_distance, o.bidirectional)
    }
    fn param_count(o: &T5Options, heads: usize, _len: usize) -> f64 {
        o.num_buckets as f64 * heads as f64
    }
    fn build<F: Float>(
        o: &T5Options,
        heads: usize,
        _max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<T5, String> {
        T5::new(o.num_buckets, o.max_distance, o.bidirectional, heads, store, prefix, rng)
    }
}

impl<F: Float> PositionBias<F> for T5 {
    fn family(&self) -> &'static str {
        "t5"
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
        let per_offset = tape.embedding(params.var(self.table), &self.buckets(lq, lk));
        Some(super::gather_offsets(tape, per_offset, lq, lk, rows))
    }
    fn bucket_of(&self, n: i64) -> Option<usize> {
        Some(bucket_of_checked(
            n,
            self.num_buckets,
            self.max_distance,
            self.bidirectional,
        ))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        vec![self.table]
    }
}
