//! Reductions: sum of all elements, sum / mean over an axis, max over an axis.
use super::CHUNK;
use super::shape::split_at_axis;
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// Sum in fixed chunks, partial sums added in chunk order: the same bits at any thread count.
pub(crate) fn sum_fixed<F: Float>(x: &[F]) -> F {
    let parts: Vec<F> = x
        .par_chunks(CHUNK)
        .map(|c| c.iter().copied().sum())
        .collect();
    parts.into_iter().fold(F::ZERO, |a, b| a + b)
}

fn reduced_shape(shape: &[usize], axis: usize, keepdim: bool) -> Vec<usize> {
    let mut s = shape.to_vec();
    if keepdim {
        s[axis] = 1;
    } else {
        s.remove(axis);
    }
    s
}

impl<F: Float> Tape<F> {
    /// Sum of all elements, a scalar.
    pub fn sum(&mut self, a: Var) -> Var {
        let s = sum_fixed(&self.value(a).data);
        self.push(Op::Sum(a), Tensor::scalar(s))
    }
    /// Mean of all elements, a scalar.
    pub fn mean(&mut self, a: Var) -> Var {
        let n = self.value(a).len() as f64;
        let s = self.sum(a);
        self.scale(s, 1.0 / n)
    }
    /// Sum over `axis`, keeping it as size 1 when `keepdim`.
    pub fn sum_axis(&mut self, a: Var, axis: usize, keepdim: bool) -> Var {
        let x = self.value(a);
        assert!(
            axis < x.shape.len(),
            "sum_axis: axis {axis} out of range for {:?}",
            x.shape
        );
        let (outer, n, inner) = split_at_axis(&x.shape, axis);
        let mut out = vec![F::ZERO; outer * inner];
        for o in 0..outer {
            let dst = &mut out[o * inner..(o + 1) * inner];
            for k in 0..n {
                let src = &x.data[(o * n + k) * inner..][..inner];
                dst.iter_mut().zip(src).for_each(|(d, s)| *d += *s);
            }
        }
        let shape = reduced_shape(&x.shape, axis, keepdim);
        self.push(Op::SumAxis(a, axis), Tensor::from_vec(&shape, out))
    }
    /// Mean over `axis`.
    pub fn mean_axis(&mut self, a: Var, axis: usize, keepdim: bool) -> Var {
        let n = self.shape(a)[axis] as f64;
        let s = self.sum_axis(a, axis, keepdim);
        self.scale(s, 1.0 / n)
    }
    /// Sum over several axes (given in any order).
    pub fn sum_axes(&mut self, a: Var, axes: &[usize], keepdim: bool) -> Var {
        let mut axes = axes.to_vec();
        axes.sort_unstable_by(|x, y| y.cmp(x));
        axes.iter().fold(a, |v, &ax| self.sum_axis(v, ax, keepdim))
    }
    /// Max over `axis`; the gradient goes to the first maximum of each slice.
    pub fn max_axis(&mut self, a: Var, axis: usize, keepdim: bool) -> Var {
        let x = self.value(a);
        assert!(
            axis < x.shape.len() && x.shape[axis] > 0,
            "max_axis: axis {axis} empty or out of range for {:?}",
            x.shape
        );
        let (outer, n, inner) = split_at_axis(&x.shape, axis);
        let mut out = vec![F::NEG_INFINITY; outer * inner];
        let mut arg = vec![0; outer * inner];
        for o in 0..outer {
            for k in 0..n {
                for i in 0..inner {
                    let src = (o * n + k) * inner + i;
                    if k == 0 || x.data[src] > out[o * inner + i] {
                        out[o * inner + i] = x.data[src];
                        arg[o * inner + i] = src;
                    }
                }
            }
        }
        let shape = reduced_shape(&x.shape, axis, keepdim);
        self.push(Op::MaxAxis(a, arg), Tensor::from_vec(&shape, out))
    }
}

pub(crate) fn sum_backward<F: Float>(tape: &Tape<F>, a: Var, g: &[F], grads: &mut Grads<F>) {
    if let Some(d) = grads.slot(tape, a) {
        d.iter_mut().for_each(|d| *d += g[0]);
    }
}

pub(crate) fn sum_axis_backward<F: Float>(
    tape: &Tape<F>,
    a: Var,
    axis: usize,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (outer, n, inner) = split_at_axis(tape.shape(a), axis);
    if let Some(d) = grads.slot(tape, a) {
        for o in 0..outer {
            let src = &g[o * inner..(o + 1) * inner];
            for k in 0..n {
                let dst = &mut d[(o * n + k) * inner..][..inner];
                dst.iter_mut().zip(src).for_each(|(d, s)| *d += *s);
            }
        }
    }
}

pub(crate) fn max_axis_backward<F: Float>(
    tape: &Tape<F>,
    a: Var,
    arg: &[usize],
    g: &[F],
    grads: &mut Grads<F>,
) {
    if let Some(d) = grads.slot(tape, a) {
        for (&src, &gv) in arg.iter().zip(g) {
            d[src] += gv;
        }
    }
}
