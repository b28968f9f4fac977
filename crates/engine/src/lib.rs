//! at5-engine: a from-scratch reverse-mode autodiff engine on CPU tensors.
//!
//! - [`Tensor`]: a dense row-major array of a [`Float`] (f32 for training, f64 for gradient
//!   checks);
//! - [`Tape`]: records a computation on tensors as it runs and takes its gradients
//!   ([`autodiff`]; `docs/autodiff.md` in the repository explains the engine);
//! - [`gradcheck()`]: compares the tape's gradients with central differences in f64;
//! - [`ParamStore`] and [`optim`]: parameters and their optimizers (Adam, SGD);
//! - [`kernels`]: the SIMD and `unsafe` code of the engine's arithmetic, one plain-Rust path
//!   and vector paths that give the same bits.
//!
//! It knows nothing of attention biases or tasks. The smallest use: `y = Σ x²` and its
//! gradient `2x`.
//!
//! ```
//! use at5_engine::{Tape, Tensor};
//! let mut t: Tape = Tape::new(); // Tape<f64>; training uses Tape<f32>
//! let x = t.leaf(Tensor::from_vec(&[3], vec![1.0, -2.0, 0.5]));
//! let sq = t.mul(x, x);
//! let y = t.sum(sq);
//! let g = t.backward(y);
//! assert_eq!(t.value(y).data, vec![5.25]);
//! assert_eq!(g.get(x).unwrap().data, vec![2.0, -4.0, 1.0]);
//! ```
pub mod autodiff;
pub mod float;
pub mod kernels;
pub mod optim;
pub mod params;
pub mod tensor;

pub use autodiff::{GradcheckReport, Gradients, Tape, Var, gradcheck};
pub use float::Float;
pub use params::{Bound, ParamId, ParamStore};
pub use tensor::Tensor;

/// The README's code blocks, run as doc tests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
