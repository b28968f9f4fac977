//! The small layers an encoder is built from: Linear, LayerNorm, Embedding.
use crate::autodiff::{Tape, Var, forward};
use crate::float::Float;
use crate::params::{Bound, ParamId, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;

/// BERT's initialiser: truncated normal with std 0.02.
pub const INIT_STD: f64 = 0.02;

/// `y = x W + b` over the last axis; W `[d_in, d_out]` so the product needs no transpose.
#[derive(Clone, Debug)]
pub struct Linear {
    /// Weight `[d_in, d_out]`.
    pub w: ParamId,
    /// Bias `[d_out]`.
    pub b: ParamId,
    /// Input width.
    pub d_in: usize,
    /// Output width.
    pub d_out: usize,
}

impl Linear {
    /// Registers `{name}.w` (truncated N(0, 0.02²)) and `{name}.b` (zeros).
    pub fn new<F: Float>(
        store: &mut ParamStore<F>,
        name: &str,
        d_in: usize,
        d_out: usize,
        rng: &mut StdRng,
    ) -> Linear {
        let w = store.add(
            &format!("{name}.w"),
            Tensor::truncated_normal_from(&[d_in, d_out], INIT_STD, rng),
        );
        let b = store.add(&format!("{name}.b"), Tensor::zeros(&[d_out]));
        Linear { w, b, d_in, d_out }
    }

    /// Registers `{name}.w` Glorot-uniform (U(±√(6 / (d_in + d_out)))) and `{name}.b` all
    /// `bias`: TensorFlow's default dense-layer init, which the paper's code gives its output
    /// layer (with a bias of 0.1).
    pub fn glorot<F: Float>(
        store: &mut ParamStore<F>,
        name: &str,
        (d_in, d_out): (usize, usize),
        bias: f64,
        rng: &mut StdRng,
    ) -> Linear {
        let limit = (6.0 / (d_in + d_out) as f64).sqrt();
        let w = store.add(
            &format!("{name}.w"),
            Tensor::uniform_from(&[d_in, d_out], -limit, limit, rng),
        );
        let b = store.add(
            &format!("{name}.b"),
            Tensor::full(&[d_out], F::from_f64(bias)),
        );
        Linear { w, b, d_in, d_out }
    }

    /// x `[.., d_in]` → `[.., d_out]`, as one 2-D product over all leading positions.
    pub fn forward<F: Float>(&self, tape: &mut Tape<F>, p: &Bound, x: Var) -> Var {
        let shape = tape.shape(x).to_vec();
        let d = *shape.last().expect("linear: scalar input");
        assert_eq!(
            d, self.d_in,
            "linear: input {shape:?}, weight [{}, {}]",
            self.d_in, self.d_out
        );
        tape.linear(x, p.var(self.w), p.var(self.b))
    }

    /// [`Linear::forward`] without a tape, and with `gelu` the GELU after it: the tape's
    /// values bit for bit, for a forward-only evaluation.
    pub fn apply<F: Float>(&self, store: &ParamStore<F>, x: &Tensor<F>, gelu: bool) -> Tensor<F> {
        forward::linear(x, store.get(self.w), store.get(self.b), gelu)
    }
}

/// Layer normalisation over the last axis with a learned gain (ones) and bias (zeros).
#[derive(Clone, Debug)]
pub struct LayerNorm {
    /// Scale `[d]`, initialised to 1.
    pub gain: ParamId,
    /// Shift `[d]`, initialised to 0.
    pub bias: ParamId,
    /// Added to the variance before the square root.
    pub eps: f64,
}

impl LayerNorm {
    /// BERT's epsilon, 1e-12, is below f32 resolution of typical variances; it only guards 0/0.
    pub fn new<F: Float>(store: &mut ParamStore<F>, name: &str, d: usize) -> LayerNorm {
        let gain = store.add(&format!("{name}.gain"), Tensor::full(&[d], F::ONE));
        let bias = store.add(&format!("{name}.bias"), Tensor::zeros(&[d]));
        LayerNorm {
            gain,
            bias,
            eps: 1e-12,
        }
    }
    /// Normalises each row of `x` over its last axis, then scales and shifts it.
    pub fn forward<F: Float>(&self, tape: &mut Tape<F>, p: &Bound, x: Var) -> Var {
        tape.layer_norm(x, p.var(self.gain), p.var(self.bias), self.eps)
    }
    /// [`LayerNorm::forward`] without a tape (the tape's values bit for bit).
    pub fn apply<F: Float>(&self, store: &ParamStore<F>, x: &Tensor<F>) -> Tensor<F> {
        let (gain, bias) = (store.get(self.gain), store.get(self.bias));
        forward::layer_norm(x, gain, bias, self.eps).0
    }
}

/// A token embedding table `[V, D]`.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// The embedding table `[vocab, d]`.
    pub table: ParamId,
    /// Number of token ids.
    pub vocab: usize,
    /// Embedding width.
    pub d: usize,
}

impl Embedding {
    /// Registers `{name}.table` `[vocab, d]`, truncated N(0, 0.02²).
    pub fn new<F: Float>(
        store: &mut ParamStore<F>,
        name: &str,
        vocab: usize,
        d: usize,
        rng: &mut StdRng,
    ) -> Embedding {
        let table = store.add(
            &format!("{name}.table"),
            Tensor::truncated_normal_from(&[vocab, d], INIT_STD, rng),
        );
        Embedding { table, vocab, d }
    }
    /// ids `[B·L]` → `[B, L, D]`.
    pub fn forward<F: Float>(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        ids: &[usize],
        b: usize,
        l: usize,
    ) -> Var {
        tape.embedding_shaped(p.var(self.table), ids, &[b, l])
    }
    /// [`Embedding::forward`] without a tape.
    pub fn apply<F: Float>(
        &self,
        store: &ParamStore<F>,
        ids: &[usize],
        b: usize,
        l: usize,
    ) -> Tensor<F> {
        forward::embedding(store.get(self.table), ids, &[b, l])
    }
}
