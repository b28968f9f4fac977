//! Layout ops: reshape, permute (and the last-two-axes transpose), concat and slice.
use super::zeros;
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::tensor::Tensor;

/// (product of axes before, the axis, product of axes after).
pub(crate) fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

/// `out[idx] = x[idx permuted back]`: out axis i is input axis perm[i]. With `add`, accumulates.
///
/// When the last axis stays last (splitting heads, `[D, H, dh] → [H, D, dh]`), each output row
/// is a contiguous input row, copied whole; otherwise one element at a time. Either way every
/// output element is the one input element (or the one sum), so the bits do not depend on it.
fn permute_into<F: Float>(x: &[F], shape: &[usize], perm: &[usize], out: &mut [F], add: bool) {
    let r = shape.len();
    if out.is_empty() {
        return;
    }
    let mut in_strides = vec![1; r];
    for i in (0..r.saturating_sub(1)).rev() {
        in_strides[i] = in_strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let st: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    // The odometer runs over the axes before the copied run: all of them, or all but the last.
    let keep_last = r > 0 && perm[r - 1] == r - 1;
    let (run, axes) = if keep_last {
        (shape[r - 1], r - 1)
    } else {
        (1, r)
    };
    let mut idx = vec![0; axes];
    let mut src = 0;
    for o in out.chunks_exact_mut(run) {
        let from = &x[src..src + run];
        if add {
            o.iter_mut().zip(from).for_each(|(a, &b)| *a += b);
        } else {
            o.copy_from_slice(from);
        }
        for d in (0..axes).rev() {
            idx[d] += 1;
            src += st[d];
            if idx[d] < out_shape[d] {
                break;
            }
            src -= st[d] * out_shape[d];
            idx[d] = 0;
        }
    }
}

impl<F: Float> Tape<F> {
    /// The same data under a new shape with the same number of elements.
    pub fn reshape(&mut self, a: Var, shape: &[usize]) -> Var {
        let x = self.value(a);
        let n: usize = shape.iter().product();
        assert_eq!(n, x.len(), "reshape: {:?} cannot become {shape:?}", x.shape);
        let t = Tensor::from_vec(shape, x.data.clone());
        self.push(Op::Reshape(a), t)
    }
    /// Reorders axes: output axis i is input axis `perm[i]`.
    pub fn permute(&mut self, a: Var, perm: &[usize]) -> Var {
        let x = self.value(a);
        let mut seen = perm.to_vec();
        seen.sort_unstable();
        assert!(
            seen == (0..x.shape.len()).collect::<Vec<_>>(),
            "permute: {perm:?} is not a permutation of the axes of {:?}",
            x.shape
        );
        let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
        let mut out = zeros(x.len());
        permute_into(&x.data, &x.shape, perm, &mut out, false);
        self.push(Op::Permute(a, perm.to_vec()), Tensor::from_vec(&shape, out))
    }
    /// Swap of the last two axes, `[.., m, n] -> [.., n, m]`.
    pub fn transpose(&mut self, a: Var) -> Var {
        let r = self.shape(a).len();
        assert!(
            r >= 2,
            "transpose: needs 2 or more axes, got {:?}",
            self.shape(a)
        );
        let mut perm: Vec<usize> = (0..r).collect();
        perm.swap(r - 2, r - 1);
        self.permute(a, &perm)
    }
    /// Joins tensors along `axis`; all other axes must agree.
    pub fn concat(&mut self, xs: &[Var], axis: usize) -> Var {
        assert!(!xs.is_empty(), "concat: no inputs");
        let first = self.shape(xs[0]).to_vec();
        assert!(
            axis < first.len(),
            "concat: axis {axis} out of range for {first:?}"
        );
        let mut total = 0;
        for &v in xs {
            let s = self.shape(v);
            let ok = s.len() == first.len()
                && s.iter()
                    .zip(&first)
                    .enumerate()
                    .all(|(i, (a, b))| i == axis || a == b);
            assert!(
                ok,
                "concat: shapes {first:?} and {s:?} differ off axis {axis}"
            );
            total += s[axis];
        }
        let (outer, _, inner) = split_at_axis(&first, axis);
        let mut out = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for &v in xs {
                let x = self.value(v);
                let w = x.shape[axis] * inner;
                out.extend_from_slice(&x.data[o * w..(o + 1) * w]);
            }
        }
        let mut shape = first;
        shape[axis] = total;
        self.push(Op::Concat(xs.to_vec(), axis), Tensor::from_vec(&shape, out))
    }
    /// `x[.., start..end, ..]` along `axis`.
    pub fn slice(&mut self, x: Var, axis: usize, start: usize, end: usize) -> Var {
        let s = self.shape(x).to_vec();
        assert!(
            axis < s.len() && start <= end && end <= s[axis],
            "slice: {start}..{end} on axis {axis} out of range for {s:?}"
        );
        let (outer, n, inner) = split_at_axis(&s, axis);
        let v = &self.value(x).data;
        let mut out = Vec::with_capacity(outer * (end - start) * inner);
        for o in 0..outer {
            out.extend_from_slice(&v[(o * n + start) * inner..(o * n + end) * inner]);
        }
        let mut shape = s;
        shape[axis] = end - start;
        self.push(Op::Slice { x, axis, start }, Tensor::from_vec(&shape, out))
    }
}

pub(crate) fn permute_backward<F: Float>(
    tape: &Tape<F>,
    a: Var,
    perm: &[usize],
    out: &Tensor<F>,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    if let Some(d) = grads.slot(tape, a) {
        permute_into(g, &out.shape, &inv, d, true);
    }
}

pub(crate) fn concat_backward<F: Float>(
    tape: &Tape<F>,
    xs: &[Var],
    axis: usize,
    out: &Tensor<F>,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (outer, total, inner) = split_at_axis(&out.shape, axis);
    let mut offset = 0;
    for &v in xs {
        let w = tape.shape(v)[axis] * inner;
        if let Some(d) = grads.slot(tape, v) {
            for o in 0..outer {
                let src = &g[o * total * inner + offset..][..w];
                d[o * w..(o + 1) * w]
                    .iter_mut()
                    .zip(src)
                    .for_each(|(d, s)| *d += *s);
            }
        }
        offset += w;
    }
}

pub(crate) fn slice_backward<F: Float>(
    tape: &Tape<F>,
    x: Var,
    axis: usize,
    start: usize,
    out: &Tensor<F>,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (outer, n, inner) = split_at_axis(tape.shape(x), axis);
    let w = out.shape[axis] * inner;
    if let Some(d) = grads.slot(tape, x) {
        for o in 0..outer {
            let dst = &mut d[(o * n + start) * inner..][..w];
            dst.iter_mut()
                .zip(&g[o * w..(o + 1) * w])
                .for_each(|(d, s)| *d += *s);
        }
    }
}
