//! Matrix products: 2-D and batched `[.., m, k] x [.., k, n]` with broadcast batch axes, and the
//! fused affine map `x W + b` of a Linear layer.
//!
//! One strided GEMM serves the forward and both backward products: a transposed operand is the
//! same buffer read with swapped strides, never a copy.
use super::binary::{broadcast_shape, for_each_broadcast, sum_to_shape};
use crate::autodiff::tape::{Grads, Op, Tape, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// Below this many multiply-adds a GEMM runs as one task.
const PAR_MIN_WORK: usize = 1 << 18;
/// Tiles of C per parallel GEMM: fixed, so results do not depend on the thread count. Few and
/// large, because every tile packs its own copy of the B panel it reads (at 256-row tiles the
/// weight repacking of the model's Linear layers cost more than a tenth of a training step).
const TASKS: usize = 8;
/// Row blocks are a multiple of this (a multiple of the microkernel's height).
const ROW_ALIGN: usize = 16;
/// Column blocks are a multiple of this (the microkernel's width), so that only the last block
/// of a row has a ragged edge.
const COL_ALIGN: usize = 32;
/// The shortest row block worth a task of its own.
const ROWS_MIN: usize = 128;

/// `C[m,n] (+)= op(A)[m,k] op(B)[k,n]`. `a` is stored `[m,k]`, or `[k,m]` when `ta`;
/// `b` is stored `[k,n]`, or `[n,k]` when `tb`. `beta` 0 overwrites C, 1 accumulates.
///
/// In parallel, C is cut into a grid of about `TASKS` tiles that depends only on (m, k, n): row
/// blocks, and, when m is too short for that (the tall-k products of weight gradients,
/// m = d_in), column blocks too. k is never split, so every element of C is the same
/// sum in the same order at any thread count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm<F: Float>(
    m: usize,
    k: usize,
    n: usize,
    a: &[F],
    ta: bool,
    b: &[F],
    tb: bool,
    c: &mut [F],
    beta: F,
    parallel: bool,
) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if n == 0 || m == 0 {
        return;
    }
    let (rsa, csa) = if ta { (1, m) } else { (k, 1) };
    let (rsb, csb) = if tb { (1, k) } else { (n, 1) };
    let (rows, col_width) = tiles(m, k, n, parallel);
    let (row_blocks, col_blocks) = (m.div_ceil(rows), n.div_ceil(col_width));
    let c_ptr = SendPtr(c.as_mut_ptr());
    let run = |t: usize| {
        let (r0, c0) = ((t / col_blocks) * rows, (t % col_blocks) * col_width);
        let (mr, nc) = (rows.min(m - r0), col_width.min(n - c0));
        // SAFETY: rows r0..r0+mr of op(A), columns c0..c0+nc of op(B) and that tile of C lie
        // inside the slices checked above; the strides describe exactly the stored layouts, and
        // tiles of C are disjoint, so no two tasks write the same element.
        unsafe {
            F::gemm(
                mr,
                k,
                nc,
                a.as_ptr().add(r0 * rsa),
                rsa as isize,
                csa as isize,
                b.as_ptr().add(c0 * csb),
                rsb as isize,
                csb as isize,
                beta,
                c_ptr.get().add(r0 * n + c0),
                n as isize,
                1,
            )
        }
    };
    let tasks = row_blocks * col_blocks;
    if tasks == 1 {
        run(0);
    } else {
        (0..tasks).into_par_iter().for_each(run);
    }
}

/// The tile of a GEMM's C: (rows, columns).
fn tiles(m: usize, k: usize, n: usize, parallel: bool) -> (usize, usize) {
    if !parallel || m * n * k < PAR_MIN_WORK {
        return (m, n);
    }
    let rows = m.div_ceil(TASKS).next_multiple_of(ROW_ALIGN).max(ROWS_MIN);
    let row_blocks = m.div_ceil(rows);
    if row_blocks >= TASKS / 2 {
        return (rows.min(m), n);
    }
    let width = n
        .div_ceil(TASKS.div_ceil(row_blocks))
        .next_multiple_of(COL_ALIGN);
    (rows.min(m), width.min(n))
}

/// A raw pointer that may cross threads: each task writes its own disjoint tile through it.
#[derive(Clone, Copy)]
struct SendPtr<F>(*mut F);
// SAFETY: only used to hand disjoint tiles of one live buffer to parallel tasks.
unsafe impl<F> Send for SendPtr<F> {}
unsafe impl<F> Sync for SendPtr<F> {}
impl<F> SendPtr<F> {
    fn get(self) -> *mut F {
        self.0
    }
}

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
        let mut out = vec![F::ZERO; plan.len() * m * n];
        let one = plan.len() == 1;
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
        let (xv, wv, bv) = (self.value(x), self.value(w), self.value(b));
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
        let mut out = vec![F::ZERO; rows * d_out];
        gemm(
            rows,
            d_in,
            d_out,
            &xv.data,
            false,
            &wv.data,
            false,
            &mut out,
            F::ZERO,
            true,
        );
        if d_out > 0 {
            for row in out.chunks_mut(d_out) {
                row.iter_mut().zip(&bv.data).for_each(|(o, &c)| *o += c);
            }
        }
        let mut shape = xv.shape.clone();
        *shape.last_mut().unwrap() = d_out;
        self.push(Op::Linear { x, w, b }, Tensor::from_vec(&shape, out))
    }
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
