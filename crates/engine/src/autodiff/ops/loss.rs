//! Losses: fused cross-entropy from logits with class indices, and mean squared error.
use super::softmax::log_softmax_row;
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::tensor::Tensor;

impl<F: Float> Tape<F> {
    /// Mean over rows of `-log softmax(logits)[target]`, from a max-subtracted log-softmax.
    pub fn cross_entropy(&mut self, logits: Var, targets: &[usize]) -> Var {
        let x = self.value(logits);
        assert!(
            x.shape.len() == 2 && x.shape[0] == targets.len(),
            "cross_entropy: logits {:?} and {} targets",
            x.shape,
            targets.len()
        );
        let c = x.shape[1];
        let mut ls = vec![F::ZERO; x.len()];
        let mut total = F::ZERO;
        for (i, (row, out)) in x.data.chunks(c).zip(ls.chunks_mut(c)).enumerate() {
            let y = targets[i];
            assert!(
                y < c,
                "cross_entropy: target {y} out of range for {c} classes"
            );
            log_softmax_row(row, out, false);
            total -= out[y];
        }
        let mean = total / F::from_f64(targets.len() as f64);
        let probs = ls.into_iter().map(F::exp).collect();
        let op = Op::CrossEntropy {
            logits,
            targets: targets.to_vec(),
            probs,
        };
        self.push(op, Tensor::scalar(mean))
    }
    /// Mean over all elements of (pred - target)^2.
    pub fn mse(&mut self, pred: Var, target: Var) -> Var {
        let (p, y) = (self.value(pred), self.value(target));
        assert_eq!(
            p.shape, y.shape,
            "mse: shapes {:?} and {:?} differ",
            p.shape, y.shape
        );
        let s: F = p
            .data
            .iter()
            .zip(&y.data)
            .map(|(&p, &y)| (p - y) * (p - y))
            .sum();
        let n = F::from_f64(p.len() as f64);
        self.push(Op::Mse(pred, target), Tensor::scalar(s / n))
    }
}

/// d/dlogits = (softmax - onehot) / N.
pub(crate) fn cross_entropy_backward<F: Float>(
    tape: &Tape<F>,
    logits: Var,
    targets: &[usize],
    probs: &[F],
    g: &[F],
    grads: &mut Grads<F>,
) {
    let c = probs.len() / targets.len().max(1);
    let k = g[0] / F::from_f64(targets.len() as f64);
    if let Some(d) = grads.slot(tape, logits) {
        d.iter_mut().zip(probs).for_each(|(d, &p)| *d += p * k);
        for (i, &y) in targets.iter().enumerate() {
            d[i * c + y] -= k;
        }
    }
}

pub(crate) fn mse_backward<F: Float>(
    tape: &Tape<F>,
    a: Var,
    b: Var,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (p, y) = (&tape.value(a).data, &tape.value(b).data);
    let k = F::from_f64(2.0) * g[0] / F::from_f64(p.len() as f64);
    for (v, sign) in [(a, F::ONE), (b, -F::ONE)] {
        if let Some(d) = grads.slot(tape, v) {
            for ((d, &p), &y) in d.iter_mut().zip(p).zip(y) {
                *d += sign * k * (p - y);
            }
        }
    }
}
