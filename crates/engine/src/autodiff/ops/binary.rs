//! Add, sub, mul, div with numpy broadcasting, and the one place broadcasting is undone.
use super::zeros;
use super::{CHUNK, PAR_MIN};
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var, add_into};
use crate::float::Float;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// The numpy broadcast of two shapes, or `None` when they do not broadcast.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i + s.len() < r {
            1
        } else {
            s[i + s.len() - r]
        }
    };
    (0..r)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Strides of `shape` read in the coordinates of the larger `out` shape (0 on broadcast axes).
fn strides_in(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let mut st = vec![0; out.len()];
    let off = out.len() - shape.len();
    let mut s = 1;
    for i in (0..shape.len()).rev() {
        st[off + i] = if shape[i] == 1 { 0 } else { s };
        s *= shape[i];
    }
    st
}

/// Calls `f(i, ia, ib)` for every flat index `i` of `out` with the flat indices it reads in `a`
/// and `b`, in row-major order.
pub(crate) fn for_each_broadcast(
    out: &[usize],
    a: &[usize],
    b: &[usize],
    f: impl FnMut(usize, usize, usize),
) {
    let (rows, _) = runs(out);
    broadcast_rows(out, a, b, 0..rows, f);
}

/// `out` as (rows, inner): runs of its last axis, the unit the broadcast loops step by.
fn runs(out: &[usize]) -> (usize, usize) {
    match out.split_last() {
        None => (1, 1),
        Some((&inner, lead)) => (lead.iter().product(), inner),
    }
}

/// [`for_each_broadcast`] over the runs `rows` of `out`'s last axis only: an odometer over the
/// leading axes once per run, and within a run constant steps in `a` and `b` (0 where that
/// side is broadcast along the last axis, 1 where it is not).
fn broadcast_rows(
    out: &[usize],
    a: &[usize],
    b: &[usize],
    rows: std::ops::Range<usize>,
    mut f: impl FnMut(usize, usize, usize),
) {
    let (_, inner) = runs(out);
    if a == out && b == out {
        (rows.start * inner..rows.end * inner).for_each(|i| f(i, i, i));
        return;
    }
    let (sa, sb) = (strides_in(a, out), strides_in(b, out));
    let lead = out.len().saturating_sub(1);
    let (ja, jb) = (
        sa.get(lead).copied().unwrap_or(0),
        sb.get(lead).copied().unwrap_or(0),
    );
    // The leading axes' index of the first run, and where it reads in a and b.
    let mut idx = vec![0; lead];
    let mut rest = rows.start;
    for d in (0..lead).rev() {
        idx[d] = rest % out[d];
        rest /= out[d];
    }
    let mut ia: usize = (0..lead).map(|d| idx[d] * sa[d]).sum();
    let mut ib: usize = (0..lead).map(|d| idx[d] * sb[d]).sum();
    for row in rows {
        let base = row * inner;
        for j in 0..inner {
            f(base + j, ia + j * ja, ib + j * jb);
        }
        // odometer step over the leading axes: advance the last, carry into earlier ones
        for d in (0..lead).rev() {
            idx[d] += 1;
            ia += sa[d];
            ib += sb[d];
            if idx[d] < out[d] {
                break;
            }
            ia -= sa[d] * out[d];
            ib -= sb[d] * out[d];
            idx[d] = 0;
        }
    }
}

/// `data[i] = f(i, ia, ib)` for every flat index `i` of `out` (`data` has its size), with the
/// indices [`for_each_broadcast`] gives; in parallel over fixed blocks of runs when large. Each
/// element is its own `f`, so the blocks change nothing.
fn fill_broadcast<F: Float>(
    out: &[usize],
    a: &[usize],
    b: &[usize],
    data: &mut [F],
    f: impl Fn(usize, usize, usize) -> F + Sync,
) {
    let (rows, inner) = runs(out);
    if data.len() < PAR_MIN || inner == 0 {
        broadcast_rows(out, a, b, 0..rows, |i, ia, ib| data[i] = f(i, ia, ib));
        return;
    }
    let per = CHUNK.div_ceil(inner);
    data.par_chunks_mut(per * inner)
        .enumerate()
        .for_each(|(t, chunk)| {
            let (r0, first) = (t * per, t * per * inner);
            let r1 = r0 + chunk.len() / inner;
            broadcast_rows(out, a, b, r0..r1, |i, ia, ib| {
                chunk[i - first] = f(i, ia, ib)
            });
        });
}

/// Undo broadcasting: `dst (shape) += g (out)` summed over the broadcast axes. Every element of
/// dst collects its terms in increasing order of the flat output index, on every path.
pub(crate) fn sum_to_shape<F: Float>(g: &[F], out: &[usize], dst: &mut [F], shape: &[usize]) {
    if shape == out {
        add_into(dst, g);
        return;
    }
    if let Some(n) = row_broadcast(out, shape) {
        let rows = g.len() / n.max(1);
        if g.len() < PAR_MIN || rows < 2 * SUM_BLOCKS {
            for row in g.chunks(n) {
                dst.iter_mut().zip(row).for_each(|(d, s)| *d += *s);
            }
            return;
        }
        // SUM_BLOCKS fixed blocks of rows, each summed in row order, then added in block
        // order: the same sums at any thread count.
        let per = rows.div_ceil(SUM_BLOCKS);
        let parts: Vec<Vec<F>> = g
            .par_chunks(per * n)
            .map(|block| {
                let mut acc = block[..n].to_vec();
                for row in block[n..].chunks(n) {
                    acc.iter_mut().zip(row).for_each(|(d, s)| *d += *s);
                }
                acc
            })
            .collect();
        for part in &parts {
            dst.iter_mut().zip(part).for_each(|(d, s)| *d += *s);
        }
        return;
    }
    for_each_broadcast(out, shape, shape, |i, ia, _| dst[ia] += g[i]);
}

/// Row blocks of a parallel sum over rows (a bias gradient over B·L rows).
const SUM_BLOCKS: usize = 8;

/// `Some(n)` when `shape` (n elements) is repeated over the leading axes of `out`: the
/// `[rows, n] + [n]` case of a bias added to every row.
fn row_broadcast(out: &[usize], shape: &[usize]) -> Option<usize> {
    let shape = &shape[shape.iter().position(|&d| d != 1).unwrap_or(shape.len())..];
    let lead = out.len().checked_sub(shape.len())?;
    (out[lead..] == *shape).then(|| shape.iter().product())
}

/// `dst += src` in place, `src` of `dst`'s shape or of a trailing part of it (a `[L, D]`
/// encoding added to each sequence of a `[B, L, D]` batch): the values [`Tape::add`] gives,
/// bit for bit (IEEE addition is commutative), without a new buffer.
pub fn add_assign_forward<F: Float>(dst: &mut Tensor<F>, src: &Tensor<F>) {
    assert!(
        dst.shape.ends_with(&src.shape) && !src.data.is_empty(),
        "add_assign: {:?} does not end with {:?}",
        dst.shape,
        src.shape
    );
    if dst.len() == src.len() {
        crate::autodiff::tape::add_into(&mut dst.data, &src.data);
    } else {
        for d in dst.data.chunks_mut(src.len()) {
            crate::autodiff::tape::add_into(d, &src.data);
        }
    }
}

impl<F: Float> Tape<F> {
    fn broadcast_op(
        &mut self,
        name: &str,
        op: Op<F>,
        a: Var,
        b: Var,
        f: impl Fn(F, F) -> F + Sync,
    ) -> Var {
        let (x, y) = (self.value(a), self.value(b));
        let out = broadcast_shape(&x.shape, &y.shape).unwrap_or_else(|| {
            panic!(
                "{name}: shapes {:?} and {:?} do not broadcast",
                x.shape, y.shape
            )
        });
        let mut data = zeros(out.iter().product());
        if x.shape == out && y.shape == out {
            let body = |(o, (x, y)): (&mut [F], (&[F], &[F]))| {
                for ((o, &p), &q) in o.iter_mut().zip(x).zip(y) {
                    *o = f(p, q);
                }
            };
            if data.len() < PAR_MIN {
                body((&mut data, (&x.data, &y.data)));
            } else {
                data.par_chunks_mut(CHUNK)
                    .zip(x.data.par_chunks(CHUNK).zip(y.data.par_chunks(CHUNK)))
                    .for_each(body);
            }
        } else if let (true, Some(n)) = (x.shape == out, row_broadcast(&out, &y.shape)) {
            for (o, xr) in data.chunks_mut(n).zip(x.data.chunks(n)) {
                for ((o, &p), &q) in o.iter_mut().zip(xr).zip(&y.data) {
                    *o = f(p, q);
                }
            }
        } else {
            fill_broadcast(&out, &x.shape, &y.shape, &mut data, |_, ia, ib| {
                f(x.data[ia], y.data[ib])
            });
        }
        self.push(op, Tensor::from_vec(&out, data))
    }
    /// `a + b`, broadcasting numpy-style.
    pub fn add(&mut self, a: Var, b: Var) -> Var {
        self.broadcast_op("add", Op::Add(a, b), a, b, |p, q| p + q)
    }
    /// `a - b`, broadcasting numpy-style.
    pub fn sub(&mut self, a: Var, b: Var) -> Var {
        self.broadcast_op("sub", Op::Sub(a, b), a, b, |p, q| p - q)
    }
    /// `a * b` elementwise, broadcasting numpy-style.
    pub fn mul(&mut self, a: Var, b: Var) -> Var {
        self.broadcast_op("mul", Op::Mul(a, b), a, b, |p, q| p * q)
    }
    /// `a / b` elementwise, broadcasting numpy-style.
    pub fn div(&mut self, a: Var, b: Var) -> Var {
        self.broadcast_op("div", Op::Div(a, b), a, b, |p, q| p / q)
    }
    /// `x + mask`, the constant `mask` broadcast onto x's shape (use -inf to exclude entries from
    /// a following softmax: they get exactly zero weight, which no finite adder guarantees).
    pub fn add_mask(&mut self, x: Var, mask: &Tensor<F>) -> Var {
        let v = self.value(x);
        let out = broadcast_shape(&v.shape, &mask.shape);
        assert!(
            out.as_deref() == Some(&v.shape[..]),
            "add_mask: mask {:?} does not broadcast onto {:?}",
            mask.shape,
            v.shape
        );
        let mut data = v.data.clone();
        for_each_broadcast(&v.shape, &v.shape, &mask.shape, |i, _, im| {
            data[i] += mask.data[im]
        });
        let shape = v.shape.clone();
        self.push(Op::AddConst(x), Tensor::from_vec(&shape, data))
    }
}

/// Backward of a broadcast binary op: `da = sum_to_shape(g * dfa)`, and the same for b.
fn backward_with<F: Float>(
    tape: &Tape<F>,
    (a, b): (Var, Var),
    out: &Tensor<F>,
    g: &[F],
    grads: &mut Grads<F>,
    dfa: impl Fn(F, F, F) -> F + Sync,
    dfb: impl Fn(F, F, F) -> F + Sync,
) {
    let (x, y) = (tape.value(a), tape.value(b));
    for (v, df) in [(a, &dfa as &(dyn Fn(F, F, F) -> F + Sync)), (b, &dfb)] {
        if !tape.needs_grad(v) {
            continue;
        }
        let mut full = zeros(out.len());
        fill_broadcast(&out.shape, &x.shape, &y.shape, &mut full, |i, ia, ib| {
            df(g[i], x.data[ia], y.data[ib])
        });
        let shape = &tape.value(v).shape;
        if let Some(d) = grads.slot(tape, v) {
            sum_to_shape(&full, &out.shape, d, shape);
        }
    }
}

/// The gradient passes to both sides unchanged, summed back over broadcast axes.
pub(crate) fn add_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    b: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    for v in [a, b] {
        let shape = &t.value(v).shape;
        if let Some(d) = gr.slot(t, v) {
            sum_to_shape(g, &out.shape, d, shape);
        }
    }
}
pub(crate) fn sub_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    b: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    let shape = &t.value(a).shape;
    if let Some(d) = gr.slot(t, a) {
        sum_to_shape(g, &out.shape, d, shape);
    }
    if t.needs_grad(b) {
        let neg: Vec<F> = g.iter().map(|&x| -x).collect();
        let shape = &t.value(b).shape;
        if let Some(d) = gr.slot(t, b) {
            sum_to_shape(&neg, &out.shape, d, shape);
        }
    }
}
pub(crate) fn mul_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    b: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    backward_with(t, (a, b), out, g, gr, |g, _, y| g * y, |g, x, _| g * x)
}
pub(crate) fn div_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    b: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    backward_with(
        t,
        (a, b),
        out,
        g,
        gr,
        |g, _, y| g / y,
        |g, x, y| -g * x / (y * y),
    )
}
