//! at5: a from-scratch reverse-mode autodiff engine and a small transformer encoder for studying
//! scalar relative-position biases in attention (T5, AT5 and their baselines).
pub mod autodiff;
pub mod cli;
pub mod data;
pub mod experiments;
pub mod float;
pub mod nn;
pub mod optim;
pub mod params;
pub mod position;
pub mod report;
pub mod small_gemm;
pub mod sweep;
pub mod tensor;
pub mod train;

pub use autodiff::{GradcheckReport, Gradients, Tape, Var, gradcheck};
pub use float::Float;
pub use params::{Bound, ParamId, ParamStore};
pub use tensor::Tensor;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
