//! Elementwise maps: scale, shift, exp, ln, sqrt, powf, relu, gelu, sigmoid, tanh.
use super::zeros;
use super::{CHUNK, PAR_MIN};
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::kernels::wide;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// `f` applied to every element, in fixed chunks across threads for large tensors.
pub(crate) fn map_par<F: Float>(x: &[F], f: impl Fn(F) -> F + Sync) -> Vec<F> {
    let mut out = zeros(x.len());
    // Each chunk's loop is compiled for the CPU's vector unit (`kernels::wide`).
    let body =
        |(o, x): (&mut [F], &[F])| wide(|| o.iter_mut().zip(x).for_each(|(o, &v)| *o = f(v)));
    if x.len() < PAR_MIN {
        body((&mut out, x));
    } else {
        out.par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK))
            .for_each(body);
    }
    out
}

/// `grad(a) += g * df(x, y)` where x is a's value and y the op's output. The product is made
/// in fixed chunks of plain slices (so the loop vectorises) and moved into a's gradient when it
/// has none yet.
fn acc_local<F: Float>(
    tape: &Tape<F>,
    a: Var,
    out: &[F],
    g: &[F],
    grads: &mut Grads<F>,
    df: impl Fn(F, F) -> F + Sync,
) {
    if !tape.needs_grad(a) {
        return;
    }
    let x = &tape.value(a).data;
    let mut d = zeros(x.len());
    type Chunks<'a, F> = ((&'a mut [F], &'a [F]), (&'a [F], &'a [F]));
    let body = |((d, g), (x, y)): Chunks<'_, F>| {
        for (((d, &g), &x), &y) in d.iter_mut().zip(g).zip(x).zip(y) {
            *d = g * df(x, y);
        }
    };
    if d.len() < PAR_MIN {
        body(((&mut d, g), (x, out)));
    } else {
        d.par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(x.par_chunks(CHUNK).zip(out.par_chunks(CHUNK)))
            .for_each(body);
    }
    grads.add_owned(tape, a, d);
}

impl<F: Float> Tape<F> {
    fn unary(&mut self, op: Op<F>, a: Var, f: impl Fn(F) -> F + Sync) -> Var {
        let x = self.value(a);
        let t = Tensor::from_vec(&x.shape, map_par(&x.data, f));
        self.push(op, t)
    }
    /// `x * c` for a constant c.
    pub fn scale(&mut self, a: Var, c: f64) -> Var {
        let k = F::from_f64(c);
        self.unary(Op::Scale(a, c), a, |x| x * k)
    }
    /// `-x`.
    pub fn neg(&mut self, a: Var) -> Var {
        self.scale(a, -1.0)
    }
    /// `x + c` for a constant c.
    pub fn add_scalar(&mut self, a: Var, c: f64) -> Var {
        let k = F::from_f64(c);
        self.unary(Op::AddScalar(a), a, |x| x + k)
    }
    /// `e^x`; its backward reads the node's own output.
    pub fn exp(&mut self, a: Var) -> Var {
        self.unary(Op::Exp(a), a, F::exp)
    }
    /// `ln x` (the caller keeps `x > 0`).
    pub fn ln(&mut self, a: Var) -> Var {
        self.unary(Op::Ln(a), a, F::ln)
    }
    /// `√x` (the caller keeps `x > 0`).
    pub fn sqrt(&mut self, a: Var) -> Var {
        self.unary(Op::Sqrt(a), a, F::sqrt)
    }
    /// `x^p` for a constant exponent p.
    pub fn powf(&mut self, a: Var, p: f64) -> Var {
        let k = F::from_f64(p);
        self.unary(Op::Powf(a, p), a, move |x| x.powf(k))
    }
    /// `max(x, 0)`; the gradient is 0 at and below 0.
    pub fn relu(&mut self, a: Var) -> Var {
        self.unary(Op::Relu(a), a, |x| if x > F::ZERO { x } else { F::ZERO })
    }
    /// GELU in the tanh form BERT uses.
    pub fn gelu(&mut self, a: Var) -> Var {
        self.unary(Op::Gelu(a), a, |x| gelu_and_slope(x).0)
    }
    /// `1 / (1 + e^(-x))`.
    pub fn sigmoid(&mut self, a: Var) -> Var {
        self.unary(Op::Sigmoid(a), a, sigmoid)
    }
    /// `tanh x`.
    pub fn tanh(&mut self, a: Var) -> Var {
        self.unary(Op::Tanh(a), a, F::tanh)
    }
}

pub(crate) fn scale_backward<F: Float>(t: &Tape<F>, a: Var, c: f64, g: &[F], gr: &mut Grads<F>) {
    let k = F::from_f64(c);
    let x = &t.value(a).data;
    acc_local(t, a, x, g, gr, |_, _| k)
}
pub(crate) fn exp_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    acc_local(t, a, &out.data, g, gr, |_, y| y)
}
pub(crate) fn ln_backward<F: Float>(t: &Tape<F>, a: Var, g: &[F], gr: &mut Grads<F>) {
    let x = &t.value(a).data;
    acc_local(t, a, x, g, gr, |x, _| F::ONE / x)
}
pub(crate) fn sqrt_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    let half = F::from_f64(0.5);
    acc_local(t, a, &out.data, g, gr, |_, y| half / y)
}
pub(crate) fn powf_backward<F: Float>(t: &Tape<F>, a: Var, p: f64, g: &[F], gr: &mut Grads<F>) {
    let (k, k1) = (F::from_f64(p), F::from_f64(p - 1.0));
    let x = &t.value(a).data;
    acc_local(t, a, x, g, gr, |x, _| k * x.powf(k1))
}
pub(crate) fn relu_backward<F: Float>(t: &Tape<F>, a: Var, g: &[F], gr: &mut Grads<F>) {
    let x = &t.value(a).data;
    acc_local(
        t,
        a,
        x,
        g,
        gr,
        |x, _| if x > F::ZERO { F::ONE } else { F::ZERO },
    )
}
pub(crate) fn gelu_backward<F: Float>(t: &Tape<F>, a: Var, g: &[F], gr: &mut Grads<F>) {
    if !t.needs_grad(a) {
        return;
    }
    // The slope as a one-input map, which `kernels::wide` vectorises (the four-slice loop of
    // `acc_local` stays scalar without target-cpu=native), then g times it: the same products.
    let slope = map_par(&t.value(a).data, |x| gelu_and_slope(x).1);
    acc_local(t, a, &slope, g, gr, |_, s| s)
}
pub(crate) fn sigmoid_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    acc_local(t, a, &out.data, g, gr, |_, y| y * (F::ONE - y))
}
pub(crate) fn tanh_backward<F: Float>(
    t: &Tape<F>,
    a: Var,
    out: &Tensor<F>,
    g: &[F],
    gr: &mut Grads<F>,
) {
    acc_local(t, a, &out.data, g, gr, |_, y| F::ONE - y * y)
}

/// Logistic function written so that neither branch can overflow exp.
pub fn sigmoid<F: Float>(x: F) -> F {
    if x >= F::ZERO {
        F::ONE / (F::ONE + (-x).exp())
    } else {
        let e = x.exp();
        e / (F::ONE + e)
    }
}

/// GELU (tanh form) and its derivative: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
pub fn gelu_and_slope<F: Float>(x: F) -> (F, F) {
    let k = F::from_f64((2.0 / std::f64::consts::PI).sqrt());
    let c = F::from_f64(0.044715);
    let half = F::from_f64(0.5);
    let u = k * (x + c * x * x * x);
    // tanh(u) through one exp: several times faster than libm's tanhf, exact at both tails
    // (exp overflowing to inf gives 1, underflowing to 0 gives -1).
    let t = F::ONE - F::from_f64(2.0) / (F::ONE + (u + u).exp());
    let du = k * (F::ONE + F::from_f64(3.0) * c * x * x);
    (
        half * x * (F::ONE + t),
        half * (F::ONE + t) + half * x * (F::ONE - t * t) * du,
    )
}
