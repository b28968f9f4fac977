//! Matrix products: 2-D and batched `[.., m, k] x [.., k, n]` with broadcast batch axes, and the
//! fused affine map `x W + b` of a Linear layer.
//!
//! One strided GEMM ([`crate::kernels`]' driver) serves the forward and both backward
//! products: a transposed operand is the same buffer read with swapped strides, never a copy.
use super::binary::{broadcast_shape, for_each_broadcast, sum_to_shape};
use super::elementwise::gelu_and_slope;
use super::zeros;
use super::{CHUNK, PAR_MIN};
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::kernels::{gemm, gemm_new, wide};
use crate::tensor::Tensor;
use rayon::prelude::*;

/// Batch axes of the product and, per output matrix, the matrices of a and b it reads.
fn batch_plan(a: &[usize], b: &[usize], name: &str) -> (Vec<usize>, Vec<(usize, usize)>) {
    let (ba, bb) = (&a[..a.len() - 2], &b[..b.len() - 2]);
    let out = broadcast_shape(ba, bb)
        .unwrap_or_else(|| panic!("{name}: batch axes of {a:?} and {b:?} do not broadcast"));
    let mut plan = Vec::with_capacity(out.iter().product());
    for_each_broadcast(&out, ba, bb, |_, ia, ib| plan.push((ia, ib)));
    (out, plan)
}

impl<F: Float> Tape<F> {
    /// `a @ b`; both at least 2-D, batch axes broadcast as in numpy.
    pub fn matmul(&mut self, a: Var, b: Var) -> Var {
        self.matmul_t(a, b, false, false)
    }
    /// `op(a) @ op(b)` where `ta`/`tb` transpose the last two axes of a/b without copying.
    pub fn matmul_t(&mut self, a: Var, b: Var, ta: bool, tb: bool) -> Var {
        let (x, y) = (self.value(a), self.value(b));
        let (ra, rb) = (x.shape.len(), y.shape.len());
        let ok = ra >= 2 && rb >= 2;
        let dims = |s: &[usize], t: bool| {
            let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
            if t { (c, r) } else { (r, c) }
        };
        assert!(
            ok && dims(&x.shape, ta).1 == dims(&y.shape, tb).0,
            "matmul: shapes {:?} and {:?} do not multiply (transposed: {ta}, {tb})",
            x.shape,
            y.shape
        );
        let ((m, k), (_, n)) = (dims(&x.shape, ta), dims(&y.shape, tb));
        let (batch, plan) = batch_plan(&x.shape, &y.shape, "matmul");
        let one = plan.len() == 1;
        if one {
            let out = gemm_new(m, k, n, &x.data, ta, &y.data, tb, true);
            let mut shape = batch;
            shape.extend([m, n]);
            return self.push(Op::Matmul { a, b, ta, tb }, Tensor::from_vec(&shape, out));
        }
        let mut out = zeros(plan.len() * m * n);
        let body = |(i, c): (usize, &mut [F])| {
            let (ia, ib) = plan[i];
            gemm(
                m,
                k,
                n,
                &x.data[ia * m * k..],
                ta,
                &y.data[ib * k * n..],
                tb,
                c,
                F::ZERO,
                one,
            )
        };
        if one || m * n == 0 {
            out.chunks_mut((m * n).max(1)).enumerate().for_each(body);
        } else {
            out.par_chunks_mut(m * n).enumerate().for_each(body);
        }
        let mut shape = batch;
        shape.extend([m, n]);
        self.push(Op::Matmul { a, b, ta, tb }, Tensor::from_vec(&shape, out))
    }

    /// `x W + b` over the last axis: x `[.., d_in]`, W `[d_in, d_out]`, b `[d_out]` →
    /// `[.., d_out]`, one GEMM over all leading positions with the bias added in place.
    pub fn linear(&mut self, x: Var, w: Var, b: Var) -> Var {
        let y = linear_forward(self.value(x), self.value(w), self.value(b), false);
        self.push(Op::Linear { x, w, b }, y)
    }
}

/// The forward of [`Tape::linear`] on plain tensors, `x W + b`, and with `gelu` the GELU of
/// it in the same pass over the output: `gelu(x W + b)` equals [`Tape::linear`] followed by
/// [`Tape::gelu`] bit for bit (each element is rounded after the bias add, as the tape stores
/// it, before the GELU reads it).
pub fn linear_forward<F: Float>(
    xv: &Tensor<F>,
    wv: &Tensor<F>,
    bv: &Tensor<F>,
    gelu: bool,
) -> Tensor<F> {
    let d_in = *xv.shape.last().expect("linear: scalar input");
    assert!(
        wv.shape.len() == 2 && wv.shape[0] == d_in && bv.shape == [wv.shape[1]],
        "linear: input {:?}, weight {:?}, bias {:?}",
        xv.shape,
        wv.shape,
        bv.shape
    );
    let d_out = wv.shape[1];
    let rows = xv.len() / d_in.max(1);
    let mut out = gemm_new(rows, d_in, d_out, &xv.data, false, &wv.data, false, true);
    if d_out > 0 {
        let add_bias = |rows: &mut [F]| {
            for row in rows.chunks_mut(d_out) {
                row.iter_mut().zip(&bv.data).for_each(|(o, &c)| *o += c);
            }
            if gelu {
                wide(|| rows.iter_mut().for_each(|o| *o = gelu_and_slope(*o).0));
            }
        };
        if out.len() < PAR_MIN {
            add_bias(&mut out);
        } else {
            out.par_chunks_mut(d_out * CHUNK.div_ceil(d_out))
                .for_each(add_bias);
        }
    }
    let mut shape = xv.shape.clone();
    *shape.last_mut().unwrap() = d_out;
    Tensor::from_vec(&shape, out)
}

/// dx = G Wᵀ, dW = xᵀ G, db = G summed over rows (in row order), as the composed
/// `matmul` + broadcast `add` would give them.
pub(crate) fn linear_backward<F: Float>(
    tape: &Tape<F>,
    (x, w, b): (Var, Var, Var),
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (xv, wv) = (tape.value(x), tape.value(w));
    let (d_in, d_out) = (wv.shape[0], wv.shape[1]);
    let rows = xv.len() / d_in.max(1);
    if let Some(dx) = grads.slot(tape, x) {
        gemm(
            rows,
            d_out,
            d_in,
            g,
            false,
            &wv.data,
            true,
            dx,
            F::ONE,
            true,
        );
    }
    if let Some(dw) = grads.slot(tape, w) {
        gemm(
            d_in,
            rows,
            d_out,
            &xv.data,
            true,
            g,
            false,
            dw,
            F::ONE,
            true,
        );
    }
    if let Some(db) = grads.slot(tape, b) {
        sum_to_shape(g, &[rows, d_out], db, &[d_out]);
    }
}

/// dA = G op(B)^T (or its transpose when `ta`), dB = op(A)^T G (or its transpose when `tb`),
/// summed over the output matrices that read each input matrix, in a fixed order.
pub(crate) fn matmul_backward<F: Float>(
    tape: &Tape<F>,
    a: Var,
    b: Var,
    ta: bool,
    tb: bool,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (x, y) = (tape.value(a), tape.value(b));
    let dims = |s: &[usize], t: bool| {
        let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
        if t { (c, r) } else { (r, c) }
    };
    let ((m, k), (_, n)) = (dims(&x.shape, ta), dims(&y.shape, tb));
    let (_, plan) = batch_plan(&x.shape, &y.shape, "matmul");
    let (mk, kn, mn) = (m * k, k * n, m * n);
    // Each input matrix collects from the output matrices listed for it, in output order.
    let gather = |count: usize, pick: &dyn Fn(&(usize, usize)) -> usize| {
        let mut users = vec![Vec::new(); count];
        for (i, p) in plan.iter().enumerate() {
            users[pick(p)].push(i);
        }
        users
    };
    if let Some(da) = grads.slot(tape, a) {
        let users = gather(da.len() / mk.max(1), &|p| p.0);
        let one = users.len() == 1;
        let body = |(ia, d): (usize, &mut [F])| {
            for &i in &users[ia] {
                let (gi, yb) = (&g[i * mn..], &y.data[plan[i].1 * kn..]);
                if ta {
                    gemm(k, n, m, yb, tb, gi, true, d, F::ONE, one);
                } else {
                    gemm(m, n, k, gi, false, yb, !tb, d, F::ONE, one);
                }
            }
        };
        if mk > 0 {
            if one {
                da.chunks_mut(mk).enumerate().for_each(body);
            } else {
                da.par_chunks_mut(mk).enumerate().for_each(body);
            }
        }
    }
    if let Some(db) = grads.slot(tape, b) {
        let users = gather(db.len() / kn.max(1), &|p| p.1);
        let one = users.len() == 1;
        let body = |(ib, d): (usize, &mut [F])| {
            for &i in &users[ib] {
                let (gi, xa) = (&g[i * mn..], &x.data[plan[i].0 * mk..]);
                if tb {
                    gemm(n, m, k, gi, true, xa, ta, d, F::ONE, one);
                } else {
                    gemm(k, m, n, xa, !ta, gi, false, d, F::ONE, one);
                }
            }
        };
        if kn > 0 {
            if one {
                db.chunks_mut(kn).enumerate().for_each(body);
            } else {
                db.par_chunks_mut(kn).enumerate().for_each(body);
            }
        }
    }
}
