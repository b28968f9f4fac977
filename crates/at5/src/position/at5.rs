//! `at5`: AT5's learnable soft bucket `1 - exp(-alpha |n|)` per head and direction, then the
//! per-head MLPs of [`super::mlp`].
use super::config::{Family, Setting, parse_real};
use super::mlp::{BucketMlp, MlpOptions, mlp_param_count, mlp_settings};
use super::{DeadUnits, PerHead, PositionBias, abs_offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// AT5's soft bucket: `1 - exp(-alpha n)` for `n > 0`, `1 - exp(beta n)` for `n <= 0`.
///
/// `f(0) = 0` and `f ∈ [0, 1)`; `-expm1` keeps full precision near 0 and, the exponent being
/// `-rate·|n| <= 0`, cannot overflow however large `rate·|n|` is.
///
/// ```
/// use at5::position::soft_bucket;
/// assert_eq!(soft_bucket(0, 0.3, 0.3), 0.0);
/// assert_eq!(soft_bucket(1_000_000, 1.0, 1.0), 1.0);
/// ```
pub fn soft_bucket(n: i64, alpha: f64, beta: f64) -> f64 {
    let rate = if n > 0 { alpha } else { beta };
    if n == 0 {
        return 0.0;
    }
    -(-rate * n.unsigned_abs() as f64).exp_m1()
}

/// Refuses a slope init range that is not finite, starts at or below 0, or is reversed.
pub fn check_slopes(slope_min: f64, slope_max: f64) -> Result<(), String> {
    if !(slope_min.is_finite() && slope_max.is_finite()) {
        return Err(format!(
            "at5: slope_min and slope_max must be finite, got {slope_min} and {slope_max}"
        ));
    }
    if slope_min <= 0.0 {
        // alpha = relu(a) / L: a slope starting at or below 0 is a dead bucket (no position
        // information, no gradient), not AT5.
        return Err(format!(
            "slope-min must be positive (AT5's slopes pass through a relu), got {slope_min}"
        ));
    }
    if slope_min > slope_max {
        return Err(format!(
            "at5: slope_min ({slope_min}) must not exceed slope_max ({slope_max})"
        ));
    }
    Ok(())
}

/// The AT5 bias: slopes `{prefix}.a`, `{prefix}.c` `[H]` and the two directions' MLPs,
/// `2H + 2·H·(l1 + l1 + l1·l2 + l2 + l2 + 1)` parameters in all.
pub struct At5 {
    /// The training length `L` the slopes are divided by; fixed at build.
    max_len: usize,
    a: ParamId,
    c: ParamId,
    mlp: BucketMlp,
}

impl At5 {
    /// Registers `{prefix}.a` and `{prefix}.c` ~ U(slope_min, slope_max), then the MLPs.
    pub fn new<F: Float>(
        (slope_min, slope_max): (f64, f64),
        mlp: &MlpOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<At5, String> {
        check_slopes(slope_min, slope_max)?;
        mlp.check("at5")?;
        let slopes = |rng: &mut StdRng| {
            if slope_min == slope_max {
                Tensor::full(&[heads], F::from_f64(slope_min))
            } else {
                Tensor::uniform_from(&[heads], slope_min, slope_max, rng)
            }
        };
        let a = store.add(&format!("{prefix}.a"), slopes(rng));
        let c = store.add(&format!("{prefix}.c"), slopes(rng));
        let mlp = BucketMlp::new(heads, mlp, store, prefix, rng);
        Ok(At5 { max_len, a, c, mlp })
    }

    /// The soft bucket of every offset of [`super::offsets`] as `[lq + lk - 1, H]`: the rows
    /// `n <= 0` use `beta = relu(c)/L`, the rows `n > 0` `alpha = relu(a)/L`. The exponent is
    /// `-rate·|n| <= 0`, so `exp` never overflows.
    pub fn soft_buckets<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
    ) -> Var {
        let inv_l = 1.0 / self.max_len as f64;
        let rate = |tape: &mut Tape<F>, id: ParamId| {
            let r = tape.relu(params.var(id));
            tape.scale(r, inv_l)
        };
        let (alpha, beta) = (rate(tape, self.a), rate(tape, self.c));
        let abs_n = abs_offsets(tape, lq, lk);
        let side = |tape: &mut Tape<F>, rate: Var, start: usize, end: usize| {
            let n = tape.slice(abs_n, 0, start, end);
            let x = tape.mul(n, rate);
            let x = tape.neg(x);
            let e = tape.exp(x);
            let e = tape.neg(e);
            tape.add_scalar(e, 1.0)
        };
        let mut parts = vec![side(tape, beta, 0, lq)];
        if lk > 1 {
            parts.push(side(tape, alpha, lq, lq + lk - 1));
        }
        tape.concat(&parts, 0)
    }
}

/// AT5's options: the slope init range and its MLPs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct At5Options {
    /// Lower end of the uniform init of the slope parameters `a_h`, `c_h`.
    pub slope_min: f64,
    /// Upper end of that range.
    pub slope_max: f64,
    /// The MLPs.
    #[serde(flatten)]
    pub mlp: MlpOptions,
}

impl Default for At5Options {
    /// The paper's: slopes U(1, 10), the MLPs' defaults.
    fn default() -> At5Options {
        At5Options {
            slope_min: 1.0,
            slope_max: 10.0,
            mlp: MlpOptions::default(),
        }
    }
}

impl Family for At5 {
    const NAME: &'static str = "at5";
    const LEARNED: bool = true;
    type Options = At5Options;
    fn settings() -> Vec<Setting<At5Options>> {
        let mut s = vec![
            Setting {
                flag: "slope-min",
                value: "X",
                help: "slopes a_h, c_h start uniform in [slope-min, slope-max]",
                set: |o: &mut At5Options, v: &str| parse_real("slope-min", v).map(|x| o.slope_min = x),
                get: |o: &At5Options| o.slope_min.to_string(),
            },
            Setting {
                flag: "slope-max",
                value: "X",
                help: "upper end of the initial slope range",
                set: |o: &mut At5Options, v: &str| parse_real("slope-max", v).map(|x| o.slope_max = x),
                get: |o: &At5Options| o.slope_max.to_string(),
            },
        ];
        s.extend(mlp_settings!(At5Options, .mlp));
        s
    }
    fn validate(o: &At5Options) -> Result<(), String> {
        check_slopes(o.slope_min, o.slope_max)?;
        o.mlp.check("at5")
    }
    fn param_count(o: &At5Options, heads: usize, _len: usize) -> f64 {
        2.0 * heads as f64 + mlp_param_count(&o.mlp, heads)
    }
    fn build<F: Float>(
        o: &At5Options,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<At5, String> {
        let slopes = (o.slope_min, o.slope_max);
        At5::new(slopes, &o.mlp, heads, max_len, store, prefix, rng)
    }
}

impl<F: Float> PositionBias<F> for At5 {
    fn family(&self) -> &'static str {
        "at5"
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
        let f = self.soft_buckets(tape, params, lq, lk);
        Some(self.mlp.grid(tape, params, f, (lq, lk, rows), seed))
    }
    fn dead_units(&self, params: &ParamStore<F>, len: usize) -> Option<Vec<DeadUnits>> {
        let mut tape = Tape::eval();
        let p = params.bind(&mut tape);
        let f = self.soft_buckets(&mut tape, &p, len, len);
        Some(self.mlp.dead_units(&mut tape, &p, f, len))
    }
    /// `alpha_h = relu(a_h)/L` (keys right of the query) and `beta_h = relu(c_h)/L` (left):
    /// `1/alpha` and `1/beta` are the distances where the soft bucket saturates.
    fn per_head(&self, params: &ParamStore<F>) -> PerHead {
        let rate = |id| -> Vec<f64> {
            let t: &Tensor<F> = params.get(id);
            t.data
                .iter()
                .map(|v| v.to_f64().max(0.0) / self.max_len as f64)
                .collect()
        };
        PerHead::from_iter([("alpha", rate(self.a)), ("beta", rate(self.c))])
    }
    fn param_ids(&self) -> Vec<ParamId> {
        let mut ids = vec![self.a, self.c];
        ids.extend(self.mlp.param_ids());
        ids
    }
}
