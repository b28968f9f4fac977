//! The tape: nodes in creation order, `Var` a Copy index, backward one reverse loop.
//! Each op's forward and backward sit side by side in `Tape::push_*` and `backward_node`.
use crate::tensor::Tensor;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Var(pub usize);

/// What each node's backward needs, and nothing more.
#[derive(Clone, Debug)]
enum Op {
    Leaf,
    Add(Var, Var),
    Sub(Var, Var),
    Mul(Var, Var),
    Exp(Var),
    Tanh(Var),
    Relu(Var),
    /// [m,k] x [k,n]
    Matmul(Var, Var),
    Sum(Var),
    Ln(Var),
    /// Sum over one axis; the backward spreads the gradient back along it.
    SumAxis(Var, usize),
    Reshape(Var),
    /// Swap of the last two axes.
    Transpose(Var),
    /// Mean cross-entropy of logits [N, C] against class indices; keeps the softmax.
    CrossEntropy(Var, Vec<usize>, Tensor),
    /// Mean squared error between two same-shape tensors.
    Mse(Var, Var),
    Div(Var, Var),
    Sigmoid(Var),
    Sqrt(Var),
    /// GELU, the tanh form BERT uses.
    Gelu(Var),
    /// x * c for a constant c.
    Scale(Var, f64),
    /// Softmax over the last axis; backward uses the saved output.
    Softmax(Var),
    /// Log-softmax over the last axis; backward uses the saved output.
    LogSoftmax(Var),
}

struct Node {
    op: Op,
    value: Tensor,
}

#[derive(Default)]
pub struct Tape {
    nodes: Vec<Node>,
}

impl Tape {
    pub fn new() -> Tape {
        Tape::default()
    }
    /// Drop all nodes but keep the allocation of the node list for the next step.
    pub fn clear(&mut self) {
        self.nodes.clear();
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    pub fn value(&self, v: Var) -> &Tensor {
        &self.nodes[v.0].value
    }
    fn push(&mut self, op: Op, value: Tensor) -> Var {
        self.nodes.push(Node { op, value });
        Var(self.nodes.len() - 1)
    }
    pub fn leaf(&mut self, t: Tensor) -> Var {
        self.push(Op::Leaf, t)
    }
    fn same_shape(&self, op: &str, a: Var, b: Var) {
        let (sa, sb) = (&self.value(a).shape, &self.value(b).shape);
        assert_eq!(sa, sb, "{op}: shapes {sa:?} and {sb:?} differ");
    }
    fn zip(&mut self, op: Op, name: &str, a: Var, b: Var, f: fn(f64, f64) -> f64) -> Var {
        self.same_shape(name, a, b);
        let (x, y) = (self.value(a), self.value(b));
        let data = x.data.iter().zip(&y.data).map(|(&p, &q)| f(p, q)).collect();
        let t = Tensor::from_vec(&x.shape, data);
        self.push(op, t)
    }
    fn map(&mut self, op: Op, a: Var, f: fn(f64) -> f64) -> Var {
        let x = self.value(a);
        let t = Tensor::from_vec(&x.shape, x.data.iter().map(|&p| f(p)).collect());
        self.push(op, t)
    }
    pub fn add(&mut self, a: Var, b: Var) -> Var {
        self.zip(Op::Add(a, b), "add", a, b, |p, q| p + q)
    }
    pub fn sub(&mut self, a: Var, b: Var) -> Var {
        self.zip(Op::Sub(a, b), "sub", a, b, |p, q| p - q)
    }
    pub fn mul(&mut self, a: Var, b: Var) -> Var {
        self.zip(Op::Mul(a, b), "mul", a, b, |p, q| p * q)
    }
    pub fn exp(&mut self, a: Var) -> Var {
        self.map(Op::Exp(a), a, f64::exp)
    }
    pub fn tanh(&mut self, a: Var) -> Var {
        self.map(Op::Tanh(a), a, f64::tanh)
    }
    pub fn relu(&mut self, a: Var) -> Var {
        self.map(Op::Relu(a), a, |p| p.max(0.0))
    }
    pub fn div(&mut self, a: Var, b: Var) -> Var {
        self.zip(Op::Div(a, b), "div", a, b, |p, q| p / q)
    }
    pub fn sigmoid(&mut self, a: Var) -> Var {
        self.map(Op::Sigmoid(a), a, sigmoid)
    }
    pub fn sqrt(&mut self, a: Var) -> Var {
        self.map(Op::Sqrt(a), a, f64::sqrt)
    }
    pub fn gelu(&mut self, a: Var) -> Var {
        self.map(Op::Gelu(a), a, |x| gelu_and_slope(x).0)
    }
    pub fn scale(&mut self, a: Var, c: f64) -> Var {
        let x = self.value(a);
        let t = Tensor::from_vec(&x.shape, x.data.iter().map(|&p| p * c).collect());
        self.push(Op::Scale(a, c), t)
    }
    pub fn neg(&mut self, a: Var) -> Var {
        self.scale(a, -1.0)
    }
    /// Mean over rows of -log softmax(logits)[target], from a max-subtracted log-softmax.
    pub fn cross_entropy(&mut self, logits: Var, targets: &[usize]) -> Var {
        let x = self.value(logits);
        assert!(
            x.shape.len() == 2 && x.shape[0] == targets.len(),
            "cross_entropy: logits {:?} and {} targets",
            x.shape,
            targets.len()
        );
        let c = x.shape[1];
        let ls = last_axis_log_softmax(x, false);
        let loss = targets.iter().enumerate().map(|(i, &y)| {
            assert!(
                y < c,
                "cross_entropy: target {y} out of range for {c} classes"
            );
            -ls.data[i * c + y]
        });
        let mean = loss.sum::<f64>() / targets.len() as f64;
        let p = Tensor::from_vec(&ls.shape, ls.data.iter().map(|v| v.exp()).collect());
        self.push(
            Op::CrossEntropy(logits, targets.to_vec(), p),
            Tensor::scalar(mean),
        )
    }
    pub fn mse(&mut self, pred: Var, target: Var) -> Var {
        self.same_shape("mse", pred, target);
        let (p, y) = (self.value(pred), self.value(target));
        let s: f64 = p
            .data
            .iter()
            .zip(&y.data)
            .map(|(p, y)| (p - y) * (p - y))
            .sum();
        let n = p.len() as f64;
        self.push(Op::Mse(pred, target), Tensor::scalar(s / n))
    }
    pub fn reshape(&mut self, a: Var, shape: &[usize]) -> Var {
        let x = self.value(a);
        let n: usize = shape.iter().product();
        assert_eq!(n, x.len(), "reshape: {:?} cannot become {shape:?}", x.shape);
        let t = Tensor::from_vec(shape, x.data.clone());
        self.push(Op::Reshape(a), t)
    }
    /// Transpose of the last two axes, `[.., m, n] -> [.., n, m]`.
    pub fn transpose(&mut self, a: Var) -> Var {
        let x = self.value(a);
        assert!(
            x.shape.len() >= 2,
            "transpose: needs 2 or more axes, got {:?}",
            x.shape
        );
        let r = x.shape.len();
        let (m, n) = (x.shape[r - 2], x.shape[r - 1]);
        let mut shape = x.shape.clone();
        shape.swap(r - 2, r - 1);
        let t = Tensor::from_vec(&shape, transpose_last2(&x.data, m, n));
        self.push(Op::Transpose(a), t)
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
        let mut out = vec![0.0; outer * inner];
        for o in 0..outer {
            for k in 0..n {
                for i in 0..inner {
                    out[o * inner + i] += x.data[(o * n + k) * inner + i];
                }
            }
        }
        let mut shape = x.shape.clone();
        if keepdim {
            shape[axis] = 1;
        } else {
            shape.remove(axis);
        }
        self.push(Op::SumAxis(a, axis), Tensor::from_vec(&shape, out))
    }
    /// Mean over `axis`.
    pub fn mean_axis(&mut self, a: Var, axis: usize, keepdim: bool) -> Var {
        let n = self.value(a).shape[axis] as f64;
        let s = self.sum_axis(a, axis, keepdim);
        self.scale(s, 1.0 / n)
    }
    pub fn ln(&mut self, a: Var) -> Var {
        self.map(Op::Ln(a), a, f64::ln)
    }
    /// Softmax over the last axis. The row max is subtracted as a constant, so no exp overflows.
    pub fn softmax(&mut self, a: Var) -> Var {
        let t = last_axis_log_softmax(self.value(a), true);
        self.push(Op::Softmax(a), t)
    }
    pub fn log_softmax(&mut self, a: Var) -> Var {
        let t = last_axis_log_softmax(self.value(a), false);
        self.push(Op::LogSoftmax(a), t)
    }
    pub fn sum(&mut self, a: Var) -> Var {
        let s = self.value(a).data.iter().sum();
        self.push(Op::Sum(a), Tensor::scalar(s))
    }
    pub fn matmul(&mut self, a: Var, b: Var) -> Var {
        let (x, y) = (self.value(a), self.value(b));
        assert!(
            x.shape.len() == 2 && y.shape.len() == 2 && x.shape[1] == y.shape[0],
            "matmul: shapes {:?} and {:?} do not multiply",
            x.shape,
            y.shape
        );
        let (m, k, n) = (x.shape[0], x.shape[1], y.shape[1]);
        let out = matmul_raw(&x.data, &y.data, m, k, n, false, false);
        self.push(Op::Matmul(a, b), Tensor::from_vec(&[m, n], out))
    }

    /// Reverse pass from a scalar `loss`: returns one gradient per node (zeros where none flowed).
    pub fn backward(&self, loss: Var) -> Vec<Tensor> {
        assert_eq!(
            self.value(loss).len(),
            1,
            "backward: loss must be a scalar, got {:?}",
            self.value(loss).shape
        );
        let mut grads: Vec<Tensor> = self
            .nodes
            .iter()
            .map(|n| Tensor::zeros(&n.value.shape))
            .collect();
        grads[loss.0].data[0] = 1.0;
        for i in (0..=loss.0).rev() {
            let g = std::mem::replace(&mut grads[i], Tensor::zeros(&[]));
            if g.data.iter().all(|&v| v == 0.0) {
                grads[i] = g;
                continue;
            }
            self.backward_node(i, &g, &mut grads);
            grads[i] = g;
        }
        grads
    }

    fn backward_node(&self, i: usize, g: &Tensor, grads: &mut [Tensor]) {
        let out = &self.nodes[i].value;
        match self.nodes[i].op {
            Op::Leaf => {}
            Op::Add(a, b) => {
                acc(&mut grads[a.0], g.data.iter().copied());
                acc(&mut grads[b.0], g.data.iter().copied());
            }
            Op::Sub(a, b) => {
                acc(&mut grads[a.0], g.data.iter().copied());
                acc(&mut grads[b.0], g.data.iter().map(|v| -v));
            }
            Op::Mul(a, b) => {
                let (x, y) = (&self.value(a).data, &self.value(b).data);
                acc(&mut grads[a.0], g.data.iter().zip(y).map(|(g, y)| g * y));
                acc(&mut grads[b.0], g.data.iter().zip(x).map(|(g, x)| g * x));
            }
            Op::Exp(a) => acc(
                &mut grads[a.0],
                g.data.iter().zip(&out.data).map(|(g, y)| g * y),
            ),
            Op::Tanh(a) => acc(
                &mut grads[a.0],
                g.data.iter().zip(&out.data).map(|(g, y)| g * (1.0 - y * y)),
            ),
            Op::Relu(a) => {
                let x = &self.value(a).data;
                acc(
                    &mut grads[a.0],
                    g.data
                        .iter()
                        .zip(x)
                        .map(|(g, &x)| if x > 0.0 { *g } else { 0.0 }),
                )
            }
            Op::Div(a, b) => {
                let (x, y) = (&self.value(a).data, &self.value(b).data);
                acc(&mut grads[a.0], g.data.iter().zip(y).map(|(g, y)| g / y));
                acc(
                    &mut grads[b.0],
                    g.data
                        .iter()
                        .zip(x)
                        .zip(y)
                        .map(|((g, x), y)| -g * x / (y * y)),
                );
            }
            Op::Sigmoid(a) => acc(
                &mut grads[a.0],
                g.data.iter().zip(&out.data).map(|(g, y)| g * y * (1.0 - y)),
            ),
            Op::Sqrt(a) => acc(
                &mut grads[a.0],
                g.data.iter().zip(&out.data).map(|(g, y)| g * 0.5 / y),
            ),
            Op::Gelu(a) => {
                let x = &self.value(a).data;
                acc(
                    &mut grads[a.0],
                    g.data.iter().zip(x).map(|(g, &x)| g * gelu_and_slope(x).1),
                )
            }
            Op::Scale(a, c) => acc(&mut grads[a.0], g.data.iter().map(|g| g * c)),
            Op::CrossEntropy(a, ref targets, ref p) => {
                // d/dlogits = (softmax - onehot) / N
                let (n, c) = (targets.len(), p.shape[1]);
                let k = g.data[0] / n as f64;
                let mut dx: Vec<f64> = p.data.iter().map(|v| v * k).collect();
                for (i, &y) in targets.iter().enumerate() {
                    dx[i * c + y] -= k;
                }
                acc(&mut grads[a.0], dx.into_iter())
            }
            Op::Mse(a, b) => {
                let (p, y) = (&self.value(a).data, &self.value(b).data);
                let k = 2.0 * g.data[0] / p.len() as f64;
                acc(&mut grads[a.0], p.iter().zip(y).map(|(p, y)| k * (p - y)));
                acc(&mut grads[b.0], p.iter().zip(y).map(|(p, y)| -k * (p - y)));
            }
            Op::Reshape(a) => acc(&mut grads[a.0], g.data.iter().copied()),
            Op::Transpose(a) => {
                let r = out.shape.len();
                let (n, m) = (out.shape[r - 2], out.shape[r - 1]);
                acc(&mut grads[a.0], transpose_last2(&g.data, n, m).into_iter())
            }
            Op::SumAxis(a, axis) => {
                let (outer, n, inner) = split_at_axis(&self.value(a).shape, axis);
                let spread =
                    (0..outer * n * inner).map(|e| g.data[(e / (n * inner)) * inner + e % inner]);
                acc(&mut grads[a.0], spread)
            }
            Op::Ln(a) => {
                let x = &self.value(a).data;
                acc(&mut grads[a.0], g.data.iter().zip(x).map(|(g, x)| g / x))
            }
            Op::Softmax(a) => acc(
                &mut grads[a.0],
                softmax_rows_backward(out, g, false).into_iter(),
            ),
            Op::LogSoftmax(a) => acc(
                &mut grads[a.0],
                softmax_rows_backward(out, g, true).into_iter(),
            ),
            Op::Sum(a) => {
                let n = self.value(a).len();
                acc(&mut grads[a.0], std::iter::repeat_n(g.data[0], n))
            }
            Op::Matmul(a, b) => {
                let (x, y) = (self.value(a), self.value(b));
                let (m, k, n) = (x.shape[0], x.shape[1], y.shape[1]);
                // dA = G B^T, dB = A^T G
                let da = matmul_raw(&g.data, &y.data, m, n, k, false, true);
                let db = matmul_raw(&x.data, &g.data, k, m, n, true, false);
                acc(&mut grads[a.0], da.into_iter());
                acc(&mut grads[b.0], db.into_iter());
            }
        }
    }
}

/// Logistic function written so that neither branch can overflow exp.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// GELU (tanh form) and its derivative: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
fn gelu_and_slope(x: f64) -> (f64, f64) {
    let k = (2.0 / std::f64::consts::PI).sqrt();
    let u = k * (x + 0.044715 * x * x * x);
    let t = u.tanh();
    let du = k * (1.0 + 3.0 * 0.044715 * x * x);
    (
        0.5 * x * (1.0 + t),
        0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du,
    )
}

/// Row-wise log-softmax (or softmax when `exp_out`) over the last axis, max-subtracted.
fn last_axis_log_softmax(x: &Tensor, exp_out: bool) -> Tensor {
    let n = *x.shape.last().unwrap_or(&1);
    let mut out = x.data.clone();
    for row in out.chunks_mut(n) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + row.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
        for v in row.iter_mut() {
            *v = if exp_out { (*v - lse).exp() } else { *v - lse };
        }
    }
    Tensor::from_vec(&x.shape, out)
}

/// Swap the last two axes of a stack of [m, n] matrices.
fn transpose_last2(x: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for (o, i) in out.chunks_mut(m * n).zip(x.chunks(m * n)) {
        for r in 0..m {
            for c in 0..n {
                o[c * m + r] = i[r * n + c];
            }
        }
    }
    out
}

/// (product of axes before, the axis, product of axes after).
fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

/// Backward of softmax over the last axis, from its saved output `out` (log-probabilities when
/// `log`): softmax gives y * (g - sum(g * y)), log-softmax gives g - exp(y) * sum(g), per row.
fn softmax_rows_backward(out: &Tensor, g: &Tensor, log: bool) -> Vec<f64> {
    let n = *out.shape.last().unwrap_or(&1);
    let mut dx = vec![0.0; out.len()];
    for ((d, y), gr) in dx
        .chunks_mut(n)
        .zip(out.data.chunks(n))
        .zip(g.data.chunks(n))
    {
        if log {
            let s: f64 = gr.iter().sum();
            for ((d, y), g) in d.iter_mut().zip(y).zip(gr) {
                *d = g - y.exp() * s;
            }
        } else {
            let s: f64 = y.iter().zip(gr).map(|(y, g)| y * g).sum();
            for ((d, y), g) in d.iter_mut().zip(y).zip(gr) {
                *d = y * (g - s);
            }
        }
    }
    dx
}

/// Gradients only ever accumulate.
fn acc(dst: &mut Tensor, src: impl Iterator<Item = f64>) {
    for (d, s) in dst.data.iter_mut().zip(src) {
        *d += s;
    }
}

/// C[m,n] = op(A)[m,k] op(B)[k,n], where a transposed operand is read by strides (no copy).
fn matmul_raw(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, ta: bool, tb: bool) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let av = if ta { a[p * m + i] } else { a[i * k + p] };
            for j in 0..n {
                let bv = if tb { b[j * k + p] } else { b[p * n + j] };
                c[i * n + j] += av * bv;
            }
        }
    }
    c
}
