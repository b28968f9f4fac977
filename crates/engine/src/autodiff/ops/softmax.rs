//! Softmax and log-softmax over the last axis, max-subtracted, parallel over rows.
use super::zeros;
use super::{Op, Tape};
use super::{PAR_MIN, dot_lanes, sum_lanes};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// Rows per parallel task: fixed, so the split never depends on the thread count.
const ROWS: usize = 64;

/// Runs `f(row_in, row_out)` over rows of length n, in parallel for large inputs.
pub(crate) fn rows_par<F: Float>(
    x: &[F],
    out: &mut [F],
    n: usize,
    f: impl Fn(&[F], &mut [F]) + Sync,
) {
    let n = n.max(1);
    if x.len() < PAR_MIN {
        x.chunks(n)
            .zip(out.chunks_mut(n))
            .for_each(|(x, o)| f(x, o));
    } else {
        x.par_chunks(ROWS * n)
            .zip(out.par_chunks_mut(ROWS * n))
            .for_each(|(x, o)| x.chunks(n).zip(o.chunks_mut(n)).for_each(|(x, o)| f(x, o)));
    }
}

/// Log-softmax (or softmax when `exp_out`) of one row. The max is a constant, so no exp can
/// overflow; a row of only -inf (every key masked) gives NaN, which is a caller's bug.
pub(crate) fn log_softmax_row<F: Float>(x: &[F], out: &mut [F], exp_out: bool) {
    // The max in eight lanes (max is exact, so the order cannot change it), not one chain.
    let mut lanes = [F::NEG_INFINITY; 8];
    for c in x.chunks(8) {
        for (a, &v) in lanes.iter_mut().zip(c) {
            *a = a.max(v);
        }
    }
    let m = lanes.into_iter().fold(F::NEG_INFINITY, F::max);
    if exp_out {
        // One exp per element: e^(v - m) / sum, the max a constant so nothing overflows.
        for (o, &v) in out.iter_mut().zip(x) {
            *o = v - m;
        }
        F::exp_in_place(out);
        let inv = F::ONE / sum_lanes(out);
        out.iter_mut().for_each(|o| *o *= inv);
    } else {
        let lse = m + x.iter().map(|&v| (v - m).exp()).sum::<F>().ln();
        for (o, &v) in out.iter_mut().zip(x) {
            *o = v - lse;
        }
    }
}

impl<F: Float> Tape<F> {
    /// Softmax over the last axis.
    pub fn softmax(&mut self, a: Var) -> Var {
        self.softmax_like(a, true)
    }
    /// Log-softmax over the last axis.
    pub fn log_softmax(&mut self, a: Var) -> Var {
        self.softmax_like(a, false)
    }
    fn softmax_like(&mut self, a: Var, exp_out: bool) -> Var {
        let x = self.value(a);
        let n = *x.shape.last().unwrap_or(&1);
        let mut out = zeros(x.len());
        rows_par(&x.data, &mut out, n, |x, o| log_softmax_row(x, o, exp_out));
        let t = Tensor::from_vec(&x.shape, out);
        let op = if exp_out {
            Op::Softmax(a)
        } else {
            Op::LogSoftmax(a)
        };
        self.push(op, t)
    }
}

/// Softmax: dx = y * (g - sum(g * y)); log-softmax: dx = g - exp(y) * sum(g), per row.
fn backward_rows<F: Float>(
    tape: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    grads: &mut Grads<F>,
    log: bool,
) {
    let n = (*out.shape.last().unwrap_or(&1)).max(1);
    let Some(d) = grads.slot(tape, a) else { return };
    let body = |(c, dc): (usize, &mut [F])| {
        for (r, d) in dc.chunks_mut(n).enumerate() {
            let off = (c * ROWS + r) * n;
            let (y, g) = (&out.data[off..off + n], &g[off..off + n]);
            if log {
                let s: F = sum_lanes(g);
                for ((d, &y), &g) in d.iter_mut().zip(y).zip(g) {
                    *d += g - y.exp() * s;
                }
            } else {
                let s: F = dot_lanes(y, g);
                for ((d, &y), &g) in d.iter_mut().zip(y).zip(g) {
                    *d += y * (g - s);
                }
            }
        }
    };
    if d.len() < PAR_MIN {
        d.chunks_mut(ROWS * n).enumerate().for_each(body);
    } else {
        d.par_chunks_mut(ROWS * n).enumerate().for_each(body);
    }
}

pub(crate) fn softmax_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    backward_rows(t, a, out, g, gr, false)
}
pub(crate) fn log_softmax_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    backward_rows(t, a, out, g, gr, true)
}
