//! The ops: their table (the `Op` variants a tape records, each with its name, inputs,
//! backward and gradcheck test), the tape that records them, and the op families, each file
//! holding its forwards (as `Tape` methods) next to their backwards.
use super::tape::{Grads, Recorded, TapeOf, Var};
use crate::float::Float;
use crate::tensor::Tensor;

pub mod attention;
pub mod binary;
pub mod elementwise;
pub mod loss;
pub mod matmul;
pub mod nn;
pub mod reduce;
pub mod shape;
pub mod softmax;

/// The tape of the engine: a [`TapeOf`] recording the [`Op`]s of this table. `Tape<f64>` (the
/// default) for gradient checks, `Tape<f32>` for training.
pub type Tape<F = f64> = TapeOf<F, Op<F>>;

/// What each node's backward needs, and nothing more. Closed on purpose: a new op adds a
/// variant here and its line in the op table below (name, inputs, backward, gradcheck test).
///
/// Public only as the parameter of [`Tape`]; nothing outside the engine builds one.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Op<F> {
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

/// The op table: one line per [`Op`] variant, with the pattern that reads it, its name (for
/// profiles), the vars it reads, its backward (the `*_backward` beside its forward in `ops/`),
/// and the gradcheck test in `tests/ops.rs` that covers it. It generates the ops' [`Recorded`]
/// implementation (name, inputs, backward) and `OP_TESTS`; each is one exhaustive `match`, so a new variant
/// does not compile until it has its line, and `every_op_has_a_gradcheck_test` fails until
/// the test it names exists.
macro_rules! op_table {
    (
        ($t:ident, $out:ident, $gi:ident, $g:ident);
        $( $p:pat => $name:literal, inputs $inputs:expr, backward $bw:expr, test $test:literal; )*
    ) => {
        impl<F: Float> Recorded<F> for Op<F> {
            const LEAF: Self = Op::Leaf;
            fn is_leaf(&self) -> bool {
                matches!(self, Op::Leaf)
            }
            fn relu_input(&self) -> Option<Var> {
                match self {
                    &Op::Relu(a) => Some(a),
                    _ => None,
                }
            }
            #[allow(unused_variables)]
            fn name(&self) -> &'static str {
                match self { $( $p => $name, )* }
            }
            #[allow(unused_variables)]
            fn inputs(&self) -> Vec<Var> {
                match self { $( $p => $inputs, )* }
            }
            #[allow(unused_variables)]
            fn backward(&self, $t: &Tape<F>, $out: &Tensor<F>, $gi: &[F], $g: &mut Grads<F>) {
                match self { $( $p => $bw, )* }
            }
        }

        /// Each op's name and the gradcheck test that covers it.
        #[cfg(test)]
        const OP_TESTS: &[(&str, &str)] = &[ $( ($name, $test), )* ];
    };
}

op_table! {
    (t, out, gi, g);
    Op::Leaf => "leaf", inputs vec![], backward {}, test "fn leaf_gets_gradient";
    &Op::Add(a, b) => "add", inputs vec![a, b],
        backward binary::add_backward(t, a, b, out, gi, g), test "fn gradcheck_add";
    &Op::Sub(a, b) => "sub", inputs vec![a, b],
        backward binary::sub_backward(t, a, b, out, gi, g), test "fn gradcheck_sub";
    &Op::Mul(a, b) => "mul", inputs vec![a, b],
        backward binary::mul_backward(t, a, b, out, gi, g), test "fn gradcheck_mul";
    &Op::Div(a, b) => "div", inputs vec![a, b],
        backward binary::div_backward(t, a, b, out, gi, g), test "fn gradcheck_div";
    &Op::AddConst(a) => "add_const", inputs vec![a],
        backward g.add(t, a, gi), test "fn gradcheck_add_mask";
    &Op::Scale(a, c) => "scale", inputs vec![a],
        backward elementwise::scale_backward(t, a, c, gi, g), test "fn gradcheck_scale_neg";
    &Op::AddScalar(a) => "add_scalar", inputs vec![a],
        backward g.add(t, a, gi), test "fn gradcheck_add_scalar";
    &Op::Exp(a) => "exp", inputs vec![a],
        backward elementwise::exp_backward(t, a, out, gi, g), test "fn gradcheck_exp";
    &Op::Ln(a) => "ln", inputs vec![a],
        backward elementwise::ln_backward(t, a, gi, g), test "fn gradcheck_ln";
    &Op::Sqrt(a) => "sqrt", inputs vec![a],
        backward elementwise::sqrt_backward(t, a, out, gi, g), test "fn gradcheck_sqrt";
    &Op::Powf(a, p) => "powf", inputs vec![a],
        backward elementwise::powf_backward(t, a, p, gi, g), test "fn gradcheck_powf";
    &Op::Relu(a) => "relu", inputs vec![a],
        backward elementwise::relu_backward(t, a, gi, g), test "fn gradcheck_relu";
    &Op::Gelu(a) => "gelu", inputs vec![a],
        backward elementwise::gelu_backward(t, a, gi, g), test "fn gradcheck_gelu";
    &Op::Sigmoid(a) => "sigmoid", inputs vec![a],
        backward elementwise::sigmoid_backward(t, a, out, gi, g), test "fn gradcheck_sigmoid";
    &Op::Tanh(a) => "tanh", inputs vec![a],
        backward elementwise::tanh_backward(t, a, out, gi, g), test "fn gradcheck_tanh";
    &Op::Matmul { a, b, ta, tb } => "matmul", inputs vec![a, b],
        backward matmul::matmul_backward(t, a, b, ta, tb, gi, g), test "fn gradcheck_matmul";
    Op::Permute(a, perm) => "permute", inputs vec![*a],
        backward shape::permute_backward(t, *a, perm, out, gi, g),
        test "fn gradcheck_permute_transpose";
    &Op::Reshape(a) => "reshape", inputs vec![a],
        backward g.add(t, a, gi), test "fn gradcheck_reshape";
    Op::Concat(xs, axis) => "concat", inputs xs.clone(),
        backward shape::concat_backward(t, xs, *axis, out, gi, g), test "fn gradcheck_concat";
    &Op::Slice { x, axis, start } => "slice", inputs vec![x],
        backward shape::slice_backward(t, x, axis, start, out, gi, g), test "fn gradcheck_slice";
    &Op::Sum(a) => "sum", inputs vec![a],
        backward reduce::sum_backward(t, a, gi, g), test "fn gradcheck_sum";
    &Op::SumAxis(a, axis) => "sum_axis", inputs vec![a],
        backward reduce::sum_axis_backward(t, a, axis, gi, g), test "fn gradcheck_sum_mean_axis";
    Op::MaxAxis(a, arg) => "max_axis", inputs vec![*a],
        backward reduce::max_axis_backward(t, *a, arg, gi, g), test "fn gradcheck_max_axis";
    &Op::Softmax(a) => "softmax", inputs vec![a],
        backward softmax::softmax_backward(t, a, out, gi, g), test "fn gradcheck_softmax";
    &Op::LogSoftmax(a) => "log_softmax", inputs vec![a],
        backward softmax::log_softmax_backward(t, a, out, gi, g), test "fn gradcheck_log_softmax";
    Op::LayerNorm { x, gain, bias, mean, rstd } => "layer_norm", inputs vec![*x, *gain, *bias],
        backward nn::layer_norm_backward(t, (*x, *gain, *bias), mean, rstd, gi, g),
        test "fn gradcheck_layer_norm";
    Op::Embedding { table, ids } => "embedding", inputs vec![*table],
        backward nn::embedding_backward(t, *table, ids, gi, g), test "fn gradcheck_embedding";
    Op::Dropout { x, p, keep } => "dropout", inputs vec![*x],
        backward nn::dropout_backward(t, (*x, *p, keep), gi, g), test "fn gradcheck_dropout";
    Op::Where { cond, a, b } => "where", inputs vec![*a, *b],
        backward nn::where_backward(t, cond, *a, *b, gi, g), test "fn gradcheck_where";
    Op::CrossEntropy { logits, targets, probs } => "cross_entropy", inputs vec![*logits],
        backward loss::cross_entropy_backward(t, *logits, targets, probs, gi, g),
        test "fn gradcheck_cross_entropy";
    &Op::Mse(a, b) => "mse", inputs vec![a, b],
        backward loss::mse_backward(t, a, b, gi, g), test "fn gradcheck_mse";
    &Op::Linear { x, w, b } => "linear", inputs vec![x, w, b],
        backward matmul::linear_backward(t, (x, w, b), gi, g), test "fn gradcheck_linear";
    Op::Attention { q, k, v, bias, probs, heads, p, keep } => "attention",
        inputs [*q, *k, *v].into_iter().chain(*bias).collect(),
        backward attention::attention_backward(
            t, (*q, *k, *v), *bias, *probs, *heads, *p, keep.as_ref(), gi, g,
        ),
        test "fn gradcheck_attention";
}

/// How work is split across threads, owned by the kernels and shared by every op.
pub(crate) use crate::kernels::{CHUNK, PAR_MIN};

/// `Σ x` in eight fixed lanes: [`crate::kernels::portable::sum_lanes`] on the process's path.
pub(crate) fn sum_lanes<F: crate::float::Float>(x: &[F]) -> F {
    F::sum_lanes(x)
}

/// `Σ x·y` in the order of [`sum_lanes`].
pub(crate) fn dot_lanes<F: crate::float::Float>(x: &[F], y: &[F]) -> F {
    F::dot_lanes(x, y)
}

/// `n` zeros, written in parallel chunks when large (the kernels' allocation, shared).
pub(crate) use crate::kernels::zeros;

#[cfg(test)]
mod tests {
    use super::OP_TESTS;

    #[test]
    fn every_op_has_a_gradcheck_test() {
        // The table's matches are exhaustive, so OP_TESTS names a test for every variant.
        assert!(OP_TESTS.len() >= 30, "found only {} ops", OP_TESTS.len());
        let tests = include_str!("../../../tests/ops.rs");
        for (op, test) in OP_TESTS {
            assert!(
                tests.contains(test),
                "no `{test}` in tests/ops.rs for the op {op}"
            );
        }
    }

    use super::{dot_lanes, sum_lanes};

    #[test]
    fn lane_sums_match_plain_sums() {
        for n in 0..40 {
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let y: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
            let plain: f64 = x.iter().sum();
            let dot: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!((sum_lanes(&x) - plain).abs() < 1e-12, "sum of {n}");
            assert!((dot_lanes(&x, &y) - dot).abs() < 1e-12, "dot of {n}");
        }
        // Element i goes to lane i mod 8: an exact check of the order on a length-9 input.
        let x = [1e16, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1e16];
        assert_eq!(sum_lanes(&x), 1.0);
    }
}
