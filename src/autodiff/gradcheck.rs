//! Central-difference gradient checking in f64.
use super::tape::{Tape, Var};
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

/// Checks the tape gradient of `f` at `inputs` against central differences (h = 1e-5).
///
/// A non-scalar output is reduced to a scalar by a dot product with a fixed random tensor, so
/// every output element matters. A coordinate passes when |a - n| <= 1e-8 + 1e-6 max(|a|, |n|).
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
    let h = 1e-5;
    let mut rep = GradcheckReport {
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        worst: (0, 0),
        checked: 0,
        passed: true,
    };
    for (i, x) in inputs.iter().enumerate() {
        let step = x.len().div_ceil(MAX_COORDS).max(1);
        for e in (0..x.len()).step_by(step) {
            let mut xs = inputs.to_vec();
            xs[i].data[e] = x.data[e] + h;
            let (tp, _, op) = eval(&xs);
            xs[i].data[e] = x.data[e] - h;
            let (tm, _, om) = eval(&xs);
            let num = (tp.value(op).data[0] - tm.value(om).data[0]) / (2.0 * h);
            let ana = grads.get(vars[i]).map_or(0.0, |g| g.data[e]);
            let abs = (ana - num).abs();
            let scale = ana.abs().max(num.abs());
            let rel = abs / scale.max(1e-12);
            if abs > 1e-8 + 1e-6 * scale {
                rep.passed = false;
            }
            rep.max_abs_err = rep.max_abs_err.max(abs);
            // a relative error only means something where the gradient is not ~0
            if abs > 1e-8 && rel > rep.max_rel_err {
                rep.max_rel_err = rel;
                rep.worst = (i, e);
            }
            rep.checked += 1;
        }
    }
    rep
}
