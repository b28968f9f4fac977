//! `fire`: FIRE's learned function of a progressively interpolated distance (Li et al. 2024).
//!
//! `b(i, j) = MLP(ψ(j - i) / (ψ(max(L_thr, i)) + 1e-6))`, `ψ(x) = ln(|c·x| + 1)`,
//! `L_thr = |s·L0|`, as the paper's listing (the epsilon is added after the log).
use super::config::Family;
use super::{PositionBias, abs_offsets, gather_offsets};
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use std::ops::Range;

const EPS: f64 = 1e-6;

/// `{prefix}.c` and `{prefix}.s` (`[1]`), then one MLP `1 → hidden → ReLU → H` per direction
/// (`{prefix}.neg.*` for `n <= 0`, `{prefix}.pos.*` for `n > 0`), since ψ forgets the sign:
/// `2 + 2·(hidden + hidden + hidden·H + H)` parameters.
pub struct Fire {
    /// `L0`, the training length the threshold scales.
    max_len: usize,
    c: ParamId,
    s: ParamId,
    /// `w1 [1, hidden]`, `b1 [hidden]`, `w2 [hidden, H]`, `b2 [H]`.
    neg: [ParamId; 4],
    pos: [ParamId; 4],
}

/// `|x|` as `relu(x) + relu(-x)`: the tape's own ops, so the gradient is `sign(x)` and exact
/// everywhere but at 0.
fn abs<F: Float>(tape: &mut Tape<F>, x: Var) -> Var {
    let p = tape.relu(x);
    let m = tape.neg(x);
    let m = tape.relu(m);
    tape.add(p, m)
}

/// `ψ(x) = ln(|c|·x + 1)` for a constant `x >= 0`, so `|c·x| = |c|·x`.
fn psi<F: Float>(tape: &mut Tape<F>, x: Var, c_abs: Var) -> Var {
    let y = tape.mul(x, c_abs);
    let y = tape.add_scalar(y, 1.0);
    tape.ln(y)
}

impl Fire {
    /// `c` starts at 0.1 and `s` at 1, as the paper; the MLP layers as PyTorch's `nn.Linear`
    /// default, weights and biases U(-1/√fan_in, 1/√fan_in).
    pub fn new<F: Float>(
        hidden: usize,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<Fire, String> {
        check_hidden(hidden)?;
        let c = store.add(&format!("{prefix}.c"), Tensor::full(&[1], F::from_f64(0.1)));
        let s = store.add(&format!("{prefix}.s"), Tensor::full(&[1], F::ONE));
        let mut mlp = |dir: &str| {
            let k2 = 1.0 / (hidden as f64).sqrt();
            let layers: [(&str, Vec<usize>, f64); 4] = [
                ("w1", vec![1, hidden], 1.0),
                ("b1", vec![hidden], 1.0),
                ("w2", vec![hidden, heads], k2),
                ("b2", vec![heads], k2),
            ];
            layers.map(|(name, shape, k)| {
                let init = Tensor::uniform_from(&shape, -k, k, rng);
                store.add(&format!("{prefix}.{dir}.{name}"), init)
            })
        };
        let neg = mlp("neg");
        let pos = mlp("pos");
        Ok(Fire {
            max_len,
            c,
            s,
            neg,
            pos,
        })
    }

    /// `x [m, 1] -> [m, H]` through one direction's MLP.
    fn mlp<F: Float>(&self, tape: &mut Tape<F>, params: &Bound, ids: &[ParamId; 4], x: Var) -> Var {
        let [w1, b1, w2, b2] = ids.map(|id| params.var(id));
        let h = tape.matmul(x, w1);
        let h = tape.add(h, b1);
        let h = tape.relu(h);
        let h = tape.matmul(h, w2);
        tape.add(h, b2)
    }

    /// `x [N, 1]` to `[N, H]`, rows with `neg[r]` through the `n <= 0` MLP, the others through
    /// the `n > 0` one; each MLP sees only its rows, and a gather restores the row order.
    fn by_direction<F: Float>(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        x: Var,
        neg: &[bool],
    ) -> Var {
        let rows =
            |want: bool| -> Vec<usize> { (0..neg.len()).filter(|&r| neg[r] == want).collect() };
        let (neg_rows, pos_rows) = (rows(true), rows(false));
        let mut parts = Vec::new();
        for (ids, sel) in [(&self.neg, &neg_rows), (&self.pos, &pos_rows)] {
            if !sel.is_empty() {
                let xs = tape.embedding(x, sel);
                parts.push(self.mlp(tape, params, ids, xs));
            }
        }
        let joined = tape.concat(&parts, 0);
        let mut back = vec![0; neg.len()];
        for (k, &r) in neg_rows.iter().chain(&pos_rows).enumerate() {
            back[r] = k;
        }
        if back.iter().enumerate().all(|(k, &r)| k == r) {
            return joined;
        }
        tape.embedding(joined, &back)
    }
}

/// FIRE's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FireOptions {
    /// Width of the MLP's hidden layer (32 in the paper).
    pub hidden: usize,
}

impl Default for FireOptions {
    fn default() -> FireOptions {
        FireOptions { hidden: 32 }
    }
}

impl Family for Fire {
    const NAME: &'static str = "fire";
    const LEARNED: bool = true;
    type Options = FireOptions;
    fn validate(o: &FireOptions) -> Result<(), String> {
        check_hidden(o.hidden)
    }
    fn param_count(o: &FireOptions, heads: usize, _len: usize) -> f64 {
        let h = heads as f64;
        2.0 * (o.hidden as f64 * (h + 2.0) + h) + 2.0
    }
    fn build<F: Float>(
        o: &FireOptions,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<Fire, String> {
        Fire::new(o.hidden, heads, max_len, store, prefix, rng)
    }
}

impl<F: Float> PositionBias<F> for Fire {
    fn family(&self) -> &'static str {
        "fire"
    }
    /// When every query index is at most `L_thr` (the usual case up to the training length)
    /// the normalizer is `ψ(L_thr)` for all rows, so the bias depends on `n` alone and the MLP
    /// runs on the `lq + lk - 1` offsets; the function computed is the same, so are its
    /// gradients. Otherwise rows `i > L_thr` normalise by `ψ(i)` and the MLP runs on every cell
    /// of the rows asked for.
    fn grid_rows(
        &self,
        tape: &mut Tape<F>,
        params: &Bound,
        lq: usize,
        lk: usize,
        rows: Range<usize>,
        _: u64,
    ) -> Option<Var> {
        let c_abs = abs(tape, params.var(self.c));
        let s_abs = abs(tape, params.var(self.s));
        let thr = tape.scale(s_abs, self.max_len as f64);
        let thr_value = tape.value(thr).data[0].to_f64();
        if (lq - 1) as f64 <= thr_value {
            let den = psi(tape, thr, c_abs);
            let den = tape.add_scalar(den, EPS);
            let abs_n = abs_offsets(tape, lq, lk);
            let num = psi(tape, abs_n, c_abs);
            let x = tape.div(num, den);
            let neg: Vec<bool> = (0..lq + lk - 1).map(|r| r < lq).collect();
            let per_offset = self.by_direction(tape, params, x, &neg);
            return Some(gather_offsets(tape, per_offset, lq, lk, rows));
        }
        let n = rows.len();
        let f = |v: usize| F::from_f64(v as f64);
        let i_col = tape.constant(Tensor::from_vec(&[n, 1], rows.clone().map(f).collect()));
        let zeros = tape.constant(Tensor::zeros(&[n, 1]));
        let thr_col = tape.add(zeros, thr);
        let past: Vec<bool> = rows.clone().map(|i| i as f64 > thr_value).collect();
        let norm = tape.where_(&past, i_col, thr_col);
        let den = psi(tape, norm, c_abs);
        let den = tape.add_scalar(den, EPS);
        let dist: Vec<F> = rows
            .clone()
            .flat_map(|i| (0..lk).map(move |j| f(j.abs_diff(i))))
            .collect();
        let dist = tape.constant(Tensor::from_vec(&[n, lk], dist));
        let num = psi(tape, dist, c_abs);
        let x = tape.div(num, den);
        let x = tape.reshape(x, &[n * lk, 1]);
        let neg: Vec<bool> = rows.flat_map(|i| (0..lk).map(move |j| j <= i)).collect();
        let cells = self.by_direction(tape, params, x, &neg);
        let heads = tape.shape(cells)[1];
        let grid = tape.reshape(cells, &[n, lk, heads]);
        Some(tape.permute(grid, &[2, 0, 1]))
    }
    fn param_ids(&self) -> Vec<ParamId> {
        let mut ids = vec![self.c, self.s];
        ids.extend(self.neg.iter().chain(&self.pos));
        ids
    }
}

/// Refuses an MLP with no hidden unit.
pub fn check_hidden(hidden: usize) -> Result<(), String> {
    if hidden == 0 {
        return Err("fire: hidden must be at least 1, got 0".into());
    }
    Ok(())
}
