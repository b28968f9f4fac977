//! at5: a from-scratch reverse-mode autodiff engine for studying scalar relative-position
//! biases in attention (T5, AT5 and their baselines).
pub mod gradcheck;
pub mod tape;
pub mod tensor;

pub use gradcheck::{GradcheckReport, gradcheck};
pub use tape::{Tape, Var};
pub use tensor::Tensor;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
