//! The tape: nodes in creation order, `Var` a Copy index, backward one reverse loop.
//!
//! Push order is already a topological order, so the reverse pass needs no graph search. Each
//! node keeps only what its backward needs (the `Op` variant); the op families in `ops/` hold
//! each forward next to its backward.
use super::ops::{attention, binary, elementwise, loss, matmul, nn, reduce, shape, softmax};
use crate::float::Float;
use crate::tensor::Tensor;

/// A handle to a node on a tape. Copy, and only meaningful on the tape that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Var(pub usize);

/// What each node's backward needs, and nothing more. Closed on purpose: a new op must add a
/// variant here, a backward in the dispatch below, and a gradcheck (see the test at the bottom).
#[derive(Clone, Debug)]
pub(crate) enum Op<F> {
    Leaf,
    // binary, with numpy broadcasting
    Add(Var, Var),
    Sub(Var, Var),
    Mul(Var, Var),
    Div(Var, Var),
    /// x + a constant tensor broadcast onto it (additive masks): the gradient passes through.
    AddConst(Var),
    // elementwise
    Scale(Var, f64),
    AddScalar(Var),
    Exp(Var),
    Ln(Var),
    Sqrt(Var),
    Powf(Var, f64),
    Relu(Var),
    Gelu(Var),
    Sigmoid(Var),
    Tanh(Var),
    // matrix products and layout
    Matmul {
        a: Var,
        b: Var,
        ta: bool,
        tb: bool,
    },
    Permute(Var, Vec<usize>),
    Reshape(Var),
    Concat(Vec<Var>, usize),
    Slice {
        x: Var,
        axis: usize,
        start: usize,
    },
    // reductions
    Sum(Var),
    SumAxis(Var, usize),
    /// Keeps the flat input index of each maximum (the first on ties).
    MaxAxis(Var, Vec<usize>),
    // normalisers
    Softmax(Var),
    LogSoftmax(Var),
    LayerNorm {
        x: Var,
        gain: Var,
        bias: Var,
        mean: Vec<F>,
        rstd: Vec<F>,
    },
    // network pieces
    Embedding {
        table: Var,
        ids: Vec<usize>,
    },
    /// The keep-mask drawn in forward, one bit per element.
    Dropout {
        x: Var,
        p: f64,
        keep: nn::KeepMask,
    },
    Where {
        cond: Vec<bool>,
        a: Var,
        b: Var,
    },
    // losses
    CrossEntropy {
        logits: Var,
        targets: Vec<usize>,
        probs: Vec<F>,
    },
    Mse(Var, Var),
    // fused blocks
    /// `x W + b` over the last axis.
    Linear {
        x: Var,
        w: Var,
        b: Var,
    },
    /// Multi-head attention; `probs` is the constant node holding the softmax output.
    Attention {
        q: Var,
        k: Var,
        v: Var,
        bias: Option<Var>,
        probs: Var,
        heads: usize,
        p: f64,
        /// The dropout keep-mask of the `[B, H, L, L]` weights (`None`: no dropout).
        keep: Option<nn::KeepMask>,
    },
}

struct Node<F> {
    op: Op<F>,
    value: Tensor<F>,
    /// Whether any gradient can reach a leaf that wants one through this node.
    needs_grad: bool,
}

/// A recording of one forward computation.
///
/// Each op computes its value at once and records what its backward needs; [`Tape::backward`]
/// walks the records in reverse. A var used twice receives both contributions, and
/// [`crate::gradcheck()`] compares the result with central differences:
///
/// ```
/// use at5_engine::{Tape, Tensor, Var, gradcheck};
/// // y = sum(softmax(x) * x): x is used twice, once through the softmax.
/// let f = |t: &mut Tape, v: &[Var]| {
///     let p = t.softmax(v[0]);
///     let px = t.mul(p, v[0]);
///     t.sum(px)
/// };
/// let x = Tensor::from_vec(&[2, 3], vec![0.1, -0.4, 0.3, 0.7, 0.2, -0.5]);
///
/// let mut t = Tape::new();
/// let v = t.leaf(x.clone());
/// let y = f(&mut t, &[v]);
/// let g = t.backward(y);
/// assert_eq!(g.get(v).unwrap().shape, vec![2, 3]);
///
/// let report = gradcheck(f, &[x]);
/// assert!(report.passed, "{report:?}");
/// assert_eq!(report.checked, 6);
/// ```
pub struct Tape<F = f64> {
    nodes: Vec<Node<F>>,
    recording: bool,
    training: bool,
    /// Wall time per op kind, when profiling (see [`Tape::set_profiling`]).
    profile: Option<OpProfile>,
}

/// Wall time spent per op kind, forward and backward, summed over the steps profiled.
///
/// The forward time of an op is the time since the previous node was recorded, so it includes
/// whatever the caller did in between (small next to the ops of a model). Rows are in order of
/// first appearance; no hashing, so the report is the same run to run.
#[derive(Clone, Debug, Default)]
pub struct OpProfile {
    /// (op kind, seconds, calls) in forward.
    pub forward: Vec<(&'static str, f64, usize)>,
    /// (op kind, seconds, calls) in backward.
    pub backward: Vec<(&'static str, f64, usize)>,
    last: Option<std::time::Instant>,
}

impl OpProfile {
    fn add(rows: &mut Vec<(&'static str, f64, usize)>, name: &'static str, secs: f64) {
        match rows.iter_mut().find(|r| r.0 == name) {
            Some(r) => {
                r.1 += secs;
                r.2 += 1;
            }
            None => rows.push((name, secs, 1)),
        }
    }
}

impl<F: Float> Default for Tape<F> {
    fn default() -> Self {
        Tape::new()
    }
}

impl<F: Float> Tape<F> {
    /// A training tape: records ops for backward; dropout is active.
    pub fn new() -> Tape<F> {
        Tape {
            nodes: Vec::new(),
            recording: true,
            training: true,
            profile: None,
        }
    }
    /// An evaluation tape: nothing is saved for backward and dropout is the identity.
    pub fn eval() -> Tape<F> {
        Tape {
            nodes: Vec::new(),
            recording: false,
            training: false,
            profile: None,
        }
    }
    /// Whether dropout is active: true for [`Tape::new`], false for [`Tape::eval`].
    pub fn is_training(&self) -> bool {
        self.training
    }
    /// Drop all nodes but keep the allocation of the node list for the next step.
    pub fn clear(&mut self) {
        self.nodes.clear();
        if let Some(p) = &mut self.profile {
            p.last = Some(std::time::Instant::now());
        }
    }
    /// Start (or stop) timing ops by kind; read the result with [`Tape::profile`]. Off by
    /// default: it costs two clock reads per op.
    pub fn set_profiling(&mut self, on: bool) {
        self.profile = on.then(|| OpProfile {
            last: Some(std::time::Instant::now()),
            ..OpProfile::default()
        });
    }
    /// The op timings gathered since [`Tape::set_profiling`], if profiling.
    pub fn profile(&self) -> Option<&OpProfile> {
        self.profile.as_ref()
    }
    /// Number of nodes recorded so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// Whether no node has been recorded.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// The value of `v`, computed when its op was recorded.
    pub fn value(&self, v: Var) -> &Tensor<F> {
        &self.nodes[v.0].value
    }
    /// The shape of `v`'s value.
    pub fn shape(&self, v: Var) -> &[usize] {
        &self.nodes[v.0].value.shape
    }
    /// An input that wants a gradient (a parameter, or an input under gradcheck).
    pub fn leaf(&mut self, t: Tensor<F>) -> Var {
        let needs_grad = self.recording;
        self.nodes.push(Node {
            op: Op::Leaf,
            value: t,
            needs_grad,
        });
        Var(self.nodes.len() - 1)
    }
    /// An input no gradient is computed for (data, masks).
    pub fn constant(&mut self, t: Tensor<F>) -> Var {
        self.nodes.push(Node {
            op: Op::Leaf,
            value: t,
            needs_grad: false,
        });
        Var(self.nodes.len() - 1)
    }
    /// Appends a node. Branches that reach no gradient-wanting leaf store no backward state.
    pub(crate) fn push(&mut self, op: Op<F>, value: Tensor<F>) -> Var {
        let needs_grad =
            self.recording && op_inputs(&op).iter().any(|v| self.nodes[v.0].needs_grad);
        if let Some(p) = &mut self.profile {
            let now = std::time::Instant::now();
            let secs = p.last.map_or(0.0, |t| (now - t).as_secs_f64());
            OpProfile::add(&mut p.forward, op_name(&op), secs);
            p.last = Some(now);
        }
        let op = if needs_grad { op } else { Op::Leaf };
        self.nodes.push(Node {
            op,
            value,
            needs_grad,
        });
        Var(self.nodes.len() - 1)
    }
    /// The smallest `|x|` over the inputs of the ReLUs recorded for backward, or `None` when
    /// there are none. A central difference is only meaningful where every such input is
    /// farther from the kink at 0 than the step moves it, so gradient checks assert a margin.
    pub fn min_relu_input(&self) -> Option<f64> {
        self.nodes
            .iter()
            .filter_map(|n| match n.op {
                Op::Relu(a) => Some(a),
                _ => None,
            })
            .flat_map(|a| self.value(a).data.iter().map(|v| v.to_f64().abs()))
            .reduce(f64::min)
    }
    pub(crate) fn needs_grad(&self, v: Var) -> bool {
        self.nodes[v.0].needs_grad
    }

    /// Reverse pass from a scalar `loss`. Gradients are returned for the leaves a gradient
    /// reached; intermediate ones are freed during the pass.
    pub fn backward(&self, loss: Var) -> Gradients<F> {
        self.backward_timed(loss, None)
    }

    /// [`Tape::backward`], adding each op's backward time to the profile when profiling.
    pub fn backward_profiled(&mut self, loss: Var) -> Gradients<F> {
        let mut profile = self.profile.take();
        let grads = self.backward_timed(loss, profile.as_mut());
        if let Some(p) = &mut profile {
            p.last = Some(std::time::Instant::now());
        }
        self.profile = profile;
        grads
    }

    fn backward_timed(&self, loss: Var, mut profile: Option<&mut OpProfile>) -> Gradients<F> {
        assert!(self.recording, "backward: this tape was made by Tape::eval");
        assert_eq!(
            self.value(loss).len(),
            1,
            "backward: loss must be a scalar, got {:?}",
            self.value(loss).shape
        );
        let mut g = Grads {
            bufs: (0..self.nodes.len()).map(|_| None).collect(),
        };
        if self.nodes[loss.0].needs_grad {
            g.bufs[loss.0] = Some(vec![F::ONE]);
        }
        for i in (0..=loss.0).rev() {
            let Some(gi) = g.bufs[i].take() else { continue };
            let t0 = profile.is_some().then(std::time::Instant::now);
            self.backward_node(i, &gi, &mut g);
            if let (Some(p), Some(t0)) = (profile.as_deref_mut(), t0) {
                let name = op_name(&self.nodes[i].op);
                OpProfile::add(&mut p.backward, name, t0.elapsed().as_secs_f64());
            }
            // An intermediate gradient is dead once passed on: free it now, keep leaves only.
            if matches!(self.nodes[i].op, Op::Leaf) {
                g.bufs[i] = Some(gi);
            }
        }
        let grads = g
            .bufs
            .into_iter()
            .zip(&self.nodes)
            .map(|(b, n)| b.map(|d| Tensor::from_vec(&n.value.shape, d)))
            .collect();
        Gradients { grads }
    }

    fn backward_node(&self, i: usize, gi: &[F], g: &mut Grads<F>) {
        let node = &self.nodes[i];
        let out = &node.value;
        match &node.op {
            Op::Leaf => {}
            &Op::Add(a, b) => binary::add_backward(self, a, b, out, gi, g),
            &Op::Sub(a, b) => binary::sub_backward(self, a, b, out, gi, g),
            &Op::Mul(a, b) => binary::mul_backward(self, a, b, out, gi, g),
            &Op::Div(a, b) => binary::div_backward(self, a, b, out, gi, g),
            &Op::AddConst(a) => g.add(self, a, gi),
            &Op::Scale(a, c) => elementwise::scale_backward(self, a, c, gi, g),
            &Op::AddScalar(a) => g.add(self, a, gi),
            &Op::Exp(a) => elementwise::exp_backward(self, a, out, gi, g),
            &Op::Ln(a) => elementwise::ln_backward(self, a, gi, g),
            &Op::Sqrt(a) => elementwise::sqrt_backward(self, a, out, gi, g),
            &Op::Powf(a, p) => elementwise::powf_backward(self, a, p, gi, g),
            &Op::Relu(a) => elementwise::relu_backward(self, a, gi, g),
            &Op::Gelu(a) => elementwise::gelu_backward(self, a, gi, g),
            &Op::Sigmoid(a) => elementwise::sigmoid_backward(self, a, out, gi, g),
            &Op::Tanh(a) => elementwise::tanh_backward(self, a, out, gi, g),
            &Op::Matmul { a, b, ta, tb } => matmul::matmul_backward(self, a, b, ta, tb, gi, g),
            Op::Permute(a, perm) => shape::permute_backward(self, *a, perm, out, gi, g),
            &Op::Reshape(a) => g.add(self, a, gi),
            Op::Concat(xs, axis) => shape::concat_backward(self, xs, *axis, out, gi, g),
            &Op::Slice { x, axis, start } => {
                shape::slice_backward(self, x, axis, start, out, gi, g)
            }
            &Op::Sum(a) => reduce::sum_backward(self, a, gi, g),
            &Op::SumAxis(a, axis) => reduce::sum_axis_backward(self, a, axis, gi, g),
            Op::MaxAxis(a, arg) => reduce::max_axis_backward(self, *a, arg, gi, g),
            &Op::Softmax(a) => softmax::softmax_backward(self, a, out, gi, g),
            &Op::LogSoftmax(a) => softmax::log_softmax_backward(self, a, out, gi, g),
            Op::LayerNorm {
                x,
                gain,
                bias,
                mean,
                rstd,
            } => nn::layer_norm_backward(self, (*x, *gain, *bias), mean, rstd, gi, g),
            Op::Embedding { table, ids } => nn::embedding_backward(self, *table, ids, gi, g),
            Op::Dropout { x, p, keep } => nn::dropout_backward(self, (*x, *p, keep), gi, g),
            Op::Where { cond, a, b } => nn::where_backward(self, cond, *a, *b, gi, g),
            Op::CrossEntropy {
                logits,
                targets,
                probs,
            } => loss::cross_entropy_backward(self, *logits, targets, probs, gi, g),
            &Op::Mse(a, b) => loss::mse_backward(self, a, b, gi, g),
            &Op::Linear { x, w, b } => matmul::linear_backward(self, (x, w, b), gi, g),
            Op::Attention {
                q,
                k,
                v,
                bias,
                probs,
                heads,
                p,
                keep,
            } => attention::attention_backward(
                self,
                (*q, *k, *v),
                *bias,
                *probs,
                *heads,
                *p,
                keep.as_ref(),
                gi,
                g,
            ),
        }
    }
}

/// The kind of an op, for profiles.
fn op_name<F>(op: &Op<F>) -> &'static str {
    match op {
        Op::Leaf => "leaf",
        Op::Add(..) => "add",
        Op::Sub(..) => "sub",
        Op::Mul(..) => "mul",
        Op::Div(..) => "div",
        Op::AddConst(..) => "add_const",
        Op::Scale(..) => "scale",
        Op::AddScalar(..) => "add_scalar",
        Op::Exp(..) => "exp",
        Op::Ln(..) => "ln",
        Op::Sqrt(..) => "sqrt",
        Op::Powf(..) => "powf",
        Op::Relu(..) => "relu",
        Op::Gelu(..) => "gelu",
        Op::Sigmoid(..) => "sigmoid",
        Op::Tanh(..) => "tanh",
        Op::Matmul { .. } => "matmul",
        Op::Permute(..) => "permute",
        Op::Reshape(..) => "reshape",
        Op::Concat(..) => "concat",
        Op::Slice { .. } => "slice",
        Op::Sum(..) => "sum",
        Op::SumAxis(..) => "sum_axis",
        Op::MaxAxis(..) => "max_axis",
        Op::Softmax(..) => "softmax",
        Op::LogSoftmax(..) => "log_softmax",
        Op::LayerNorm { .. } => "layer_norm",
        Op::Embedding { .. } => "embedding",
        Op::Dropout { .. } => "dropout",
        Op::Where { .. } => "where",
        Op::CrossEntropy { .. } => "cross_entropy",
        Op::Mse(..) => "mse",
        Op::Linear { .. } => "linear",
        Op::Attention { .. } => "attention",
    }
}

/// The vars an op reads, for deciding whether a gradient can flow through it.
fn op_inputs<F>(op: &Op<F>) -> Vec<Var> {
    match op {
        Op::Leaf => vec![],
        &Op::Add(a, b) | &Op::Sub(a, b) | &Op::Mul(a, b) | &Op::Div(a, b) | &Op::Mse(a, b) => {
            vec![a, b]
        }
        &Op::Matmul { a, b, .. } | &Op::Where { a, b, .. } => vec![a, b],
        &Op::AddConst(a)
        | &Op::Scale(a, _)
        | &Op::AddScalar(a)
        | &Op::Exp(a)
        | &Op::Ln(a)
        | &Op::Sqrt(a)
        | &Op::Powf(a, _)
        | &Op::Relu(a)
        | &Op::Gelu(a)
        | &Op::Sigmoid(a)
        | &Op::Tanh(a)
        | &Op::Permute(a, _)
        | &Op::Reshape(a)
        | &Op::Slice { x: a, .. }
        | &Op::Sum(a)
        | &Op::SumAxis(a, _)
        | &Op::MaxAxis(a, _)
        | &Op::Softmax(a)
        | &Op::LogSoftmax(a)
        | &Op::Embedding { table: a, .. }
        | &Op::Dropout { x: a, .. }
        | &Op::CrossEntropy { logits: a, .. } => vec![a],
        Op::Concat(xs, _) => xs.clone(),
        &Op::LayerNorm { x, gain, bias, .. } => vec![x, gain, bias],
        &Op::Linear { x, w, b } => vec![x, w, b],
        &Op::Attention { q, k, v, bias, .. } => [q, k, v].into_iter().chain(bias).collect(),
    }
}

/// Gradient buffers during a reverse pass; they only ever accumulate.
pub(crate) struct Grads<F> {
    bufs: Vec<Option<Vec<F>>>,
}

impl<F: Float> Grads<F> {
    /// The gradient buffer of `v`, created as zeros on first use; `None` when `v` wants none.
    pub(crate) fn slot(&mut self, tape: &Tape<F>, v: Var) -> Option<&mut [F]> {
        if !tape.needs_grad(v) {
            return None;
        }
        let n = tape.value(v).len();
        Some(self.bufs[v.0].get_or_insert_with(|| super::ops::zeros(n)))
    }
    /// `grad(v) += src` for a freshly computed `src` of v's size: moved in when v has no
    /// gradient yet (no zeroed buffer, no extra pass), added otherwise.
    pub(crate) fn add_owned(&mut self, tape: &Tape<F>, v: Var, src: Vec<F>) {
        if !tape.needs_grad(v) {
            return;
        }
        assert_eq!(src.len(), tape.value(v).len(), "gradient of the wrong size");
        match &mut self.bufs[v.0] {
            Some(d) => binary::add_into(d, &src),
            empty => *empty = Some(src),
        }
    }
    /// `grad(v) += src`, elementwise, for a source of v's size.
    pub(crate) fn add(&mut self, tape: &Tape<F>, v: Var, src: &[F]) {
        if let Some(d) = self.slot(tape, v) {
            binary::add_into(d, src);
        }
    }
}

/// The gradients of one backward pass, indexed by `Var`.
pub struct Gradients<F = f64> {
    grads: Vec<Option<Tensor<F>>>,
}

impl<F: Float> Gradients<F> {
    /// The gradient of the loss with respect to leaf `v`, or `None` where no gradient reached
    /// it (and for every non-leaf var: intermediate gradients are not kept).
    pub fn get(&self, v: Var) -> Option<&Tensor<F>> {
        self.grads.get(v.0).and_then(|g| g.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradcheck test that covers each op. No wildcard arm: a new `Op` variant fails to
    /// compile here until it names its test, and the test below fails until that test exists.
    fn covering_test(op: &Op<f64>) -> &'static str {
        match op {
            Op::Leaf => "fn leaf_gets_gradient",
            Op::Add(..) => "fn gradcheck_add",
            Op::Sub(..) => "fn gradcheck_sub",
            Op::Mul(..) => "fn gradcheck_mul",
            Op::Div(..) => "fn gradcheck_div",
            Op::AddConst(..) => "fn gradcheck_add_mask",
            Op::Scale(..) => "fn gradcheck_scale_neg",
            Op::AddScalar(..) => "fn gradcheck_add_scalar",
            Op::Exp(..) => "fn gradcheck_exp",
            Op::Ln(..) => "fn gradcheck_ln",
            Op::Sqrt(..) => "fn gradcheck_sqrt",
            Op::Powf(..) => "fn gradcheck_powf",
            Op::Relu(..) => "fn gradcheck_relu",
            Op::Gelu(..) => "fn gradcheck_gelu",
            Op::Sigmoid(..) => "fn gradcheck_sigmoid",
            Op::Tanh(..) => "fn gradcheck_tanh",
            Op::Matmul { .. } => "fn gradcheck_matmul",
            Op::Permute(..) => "fn gradcheck_permute_transpose",
            Op::Reshape(..) => "fn gradcheck_reshape",
            Op::Concat(..) => "fn gradcheck_concat",
            Op::Slice { .. } => "fn gradcheck_slice",
            Op::Sum(..) => "fn gradcheck_sum",
            Op::SumAxis(..) => "fn gradcheck_sum_mean_axis",
            Op::MaxAxis(..) => "fn gradcheck_max_axis",
            Op::Softmax(..) => "fn gradcheck_softmax",
            Op::LogSoftmax(..) => "fn gradcheck_log_softmax",
            Op::LayerNorm { .. } => "fn gradcheck_layer_norm",
            Op::Embedding { .. } => "fn gradcheck_embedding",
            Op::Dropout { .. } => "fn gradcheck_dropout",
            Op::Where { .. } => "fn gradcheck_where",
            Op::CrossEntropy { .. } => "fn gradcheck_cross_entropy",
            Op::Mse(..) => "fn gradcheck_mse",
            Op::Linear { .. } => "fn gradcheck_linear",
            Op::Attention { .. } => "fn gradcheck_attention",
        }
    }

    #[test]
    fn every_op_has_a_gradcheck_test() {
        assert_eq!(covering_test(&Op::Leaf), "fn leaf_gets_gradient");
        // The match above is exhaustive, so its arms name every variant's test.
        let this = include_str!("tape.rs");
        let body =
            &this[this.find("fn covering_test").unwrap()..this.find("fn every_op_has").unwrap()];
        let names: Vec<&str> = body
            .split("=> \"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        assert!(names.len() >= 30, "found only {} names", names.len());
        let tests = include_str!("../../tests/ops.rs");
        for name in names {
            assert!(tests.contains(name), "no `{name}` in tests/ops.rs");
        }
    }
}
