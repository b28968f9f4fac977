//! Central-difference gradient checking in f64.
use super::ops::Tape;
use super::tape::Var;
use crate::tensor::Tensor;

/// The outcome of one [`gradcheck`].
#[derive(Debug, Clone)]
pub struct GradcheckReport {
    /// The largest `|tape - numeric|` over the checked coordinates.
    pub max_abs_err: f64,
    /// The largest relative error `|a - n| / max(|a|, |n|)` over the checked coordinates.
    pub max_rel_err: f64,
    /// (input index, flat element index) of the worst relative error.
    pub worst: (usize, usize),
    /// How many coordinates were compared.
    pub checked: usize,
    /// Whether every checked coordinate passed `|a - n| <= 1e-8 + 1e-6·max(|a|, |n|)`.
    pub passed: bool,
}

/// Coordinates compared per input at most; larger inputs are sampled evenly.
pub const MAX_COORDS: usize = 200;

/// The central-difference step of [`gradcheck`] (and the `gradcheck` binary's default).
pub const STEP: f64 = 1e-5;

/// The absolute tolerance: below it a difference is f64 rounding of the loss divided by `2h`.
pub const ABS_TOL: f64 = 1e-8;

/// The relative tolerance, applied to `max(|a|, |n|)`.
pub const REL_TOL: f64 = 1e-6;

/// Checks the tape gradient of `f` at `inputs` against central differences, by the rule of
/// [`compare_central`].
///
/// A non-scalar output is reduced to a scalar by a dot product with a fixed random tensor, so
/// every output element matters.
pub fn gradcheck<G: Fn(&mut Tape<f64>, &[Var]) -> Var>(f: G, inputs: &[Tensor]) -> GradcheckReport {
    let scalar = |t: &mut Tape<f64>, out: Var| {
        let n = t.value(out).len();
        if n == 1 {
            return out;
        }
        let shape = t.value(out).shape.clone();
        let w = t.constant(Tensor::uniform(&shape, -1.0, 1.0, 0x9e37_79b9));
        let p = t.mul(out, w);
        t.sum(p)
    };
    let eval = |xs: &[Tensor]| {
        let mut t = Tape::new();
        let vs: Vec<Var> = xs.iter().map(|x| t.leaf(x.clone())).collect();
        let out = f(&mut t, &vs);
        let s = scalar(&mut t, out);
        (t, vs, s)
    };
    let (tape, vars, out) = eval(inputs);
    let grads = tape.backward(out);
    let sizes: Vec<usize> = inputs.iter().map(Tensor::len).collect();
    let mut xs = inputs.to_vec();
    let shifted = |i: usize, e: usize, d: f64| {
        xs[i].data[e] = inputs[i].data[e] + d;
        let (t, _, o) = eval(&xs);
        xs[i].data[e] = inputs[i].data[e];
        t.value(o).data[0]
    };
    let analytic = |i: usize, e: usize| grads.get(vars[i]).map_or(0.0, |g| g.data[e]);
    compare_central(&sizes, STEP, analytic, shifted).0
}

/// The rule of every gradient check in the crate: the tape's derivative `analytic(i, e)` of
/// coordinate `e` of tensor `i` (of `sizes[i]` scalars) against the central difference
/// `(f(x + h) - f(x - h)) / 2h`, where `shifted(i, e, d)` evaluates `f` with that coordinate
/// moved by `d`. Tensors larger than [`MAX_COORDS`] are sampled evenly. A coordinate passes
/// when `|a - n| <= ABS_TOL + REL_TOL·max(|a|, |n|)`; the relative error is reported among
/// coordinates whose absolute error exceeds [`ABS_TOL`] (below it a relative error measures
/// rounding, not the gradient). Also returns the largest `|a|`: a check of a gradient that is
/// 0 everywhere, or far below `ABS_TOL`, passes without showing anything.
pub fn compare_central(
    sizes: &[usize],
    h: f64,
    analytic: impl Fn(usize, usize) -> f64,
    mut shifted: impl FnMut(usize, usize, f64) -> f64,
) -> (GradcheckReport, f64) {
    let mut rep = GradcheckReport {
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        worst: (0, 0),
        checked: 0,
        passed: true,
    };
    let mut max_grad: f64 = 0.0;
    for (i, &n) in sizes.iter().enumerate() {
        for e in (0..n).step_by(n.div_ceil(MAX_COORDS).max(1)) {
            let num = (shifted(i, e, h) - shifted(i, e, -h)) / (2.0 * h);
            let ana = analytic(i, e);
            max_grad = max_grad.max(ana.abs());
            let abs = (ana - num).abs();
            let scale = ana.abs().max(num.abs());
            if abs > ABS_TOL + REL_TOL * scale {
                rep.passed = false;
            }
            rep.max_abs_err = rep.max_abs_err.max(abs);
            if abs > ABS_TOL && abs / scale > rep.max_rel_err {
                rep.max_rel_err = abs / scale;
                rep.worst = (i, e);
            }
            rep.checked += 1;
        }
    }
    (rep, max_grad)
}
