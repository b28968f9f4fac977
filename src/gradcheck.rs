//! Central-difference gradient checking in f64.
use crate::tape::{Tape, Var};
use crate::tensor::Tensor;

#[derive(Debug)]
pub struct GradcheckReport {
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    /// (input index, flat element index) of the worst relative error.
    pub worst: (usize, usize),
    pub passed: bool,
}

/// Checks `f` (which must return a scalar) at `inputs` against central differences with step h = 1e-5.
/// Pass when |a - n| <= 1e-8 + 1e-6 * max(|a|, |n|) for every coordinate.
pub fn gradcheck<F: Fn(&mut Tape, &[Var]) -> Var>(f: F, inputs: &[Tensor]) -> GradcheckReport {
    let eval = |xs: &[Tensor]| {
        let mut t = Tape::new();
        let vs: Vec<Var> = xs.iter().map(|x| t.leaf(x.clone())).collect();
        let out = f(&mut t, &vs);
        (t, vs, out)
    };
    let (tape, vars, out) = eval(inputs);
    let grads = tape.backward(out);
    let h = 1e-5;
    let mut rep = GradcheckReport {
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        worst: (0, 0),
        passed: true,
    };
    for (i, x) in inputs.iter().enumerate() {
        for e in 0..x.len() {
            let mut xs = inputs.to_vec();
            xs[i].data[e] = x.data[e] + h;
            let (tp, _, op) = eval(&xs);
            let fp = tp.value(op).data[0];
            xs[i].data[e] = x.data[e] - h;
            let (tm, _, om) = eval(&xs);
            let fm = tm.value(om).data[0];
            let num = (fp - fm) / (2.0 * h);
            let ana = grads[vars[i].0].data[e];
            let abs = (ana - num).abs();
            let rel = abs / ana.abs().max(num.abs()).max(1e-12);
            if abs > 1e-8 + 1e-6 * ana.abs().max(num.abs()) {
                rep.passed = false;
            }
            rep.max_abs_err = rep.max_abs_err.max(abs);
            if rel > rep.max_rel_err {
                rep.max_rel_err = rel;
                rep.worst = (i, e);
            }
        }
    }
    rep
}
