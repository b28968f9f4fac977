//! at5: a small transformer encoder for studying scalar relative-position biases in attention
//! (T5, AT5 and their baselines), on the autodiff engine of `at5-engine` (re-exported here).
//!
//! An attention score with a scalar relative bias, `q_i·k_j/√d + b_h(j - i)`, splits into a
//! prior over positions, `softmax_j(b_h(j - i))`, and a likelihood from the content; the
//! attention row is their posterior (`docs/theory.md`). This crate learns such priors and looks
//! at them. The main entry points, each with a runnable example:
//!
//! - [`Tape`]: record a computation on tensors and take gradients (`docs/autodiff.md` in the
//!   repository explains the engine);
//! - [`position::build`]: a bias family (T5, AT5, ALiBi, ...) and the prior it induces;
//! - [`nn::Model`]: the encoder, its forward, loss and backward, and [`nn::Model::inspect`] for
//!   the prior, context scores and posterior of every head;
//! - [`train::Trainer`] and [`train::run`]: a training run on a synthetic task, with
//!   checkpoints and a JSON record.
//!
//! The smallest use of the engine: `y = Σ x²` and its gradient `2x`.
//!
//! ```
//! use at5::{Tape, Tensor};
//! let mut t: Tape = Tape::new(); // Tape<f64>; training uses Tape<f32>
//! let x = t.leaf(Tensor::from_vec(&[3], vec![1.0, -2.0, 0.5]));
//! let sq = t.mul(x, x);
//! let y = t.sum(sq);
//! let g = t.backward(y);
//! assert_eq!(t.value(y).data, vec![5.25]);
//! assert_eq!(g.get(x).unwrap().data, vec![2.0, -4.0, 1.0]);
//! ```
// The engine, re-exported: the library's modules and its users reach the tape, tensors and
// kernels by the same paths whether they depend on `at5` alone or on the engine too.
pub use at5_engine::{autodiff, float, kernels, optim, params, tensor};

pub mod data;
pub mod nn;
pub mod position;
pub mod report;
pub mod train;

pub use at5_engine::{
    Bound, Float, GradcheckReport, Gradients, ParamId, ParamStore, Tape, Tensor, Var, gradcheck,
};

/// The README's code blocks, run as doc tests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
