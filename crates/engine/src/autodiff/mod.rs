//! The reverse-mode engine: the tape, its op families, and gradient checking.
pub mod gradcheck;
pub mod ops;
pub mod tape;

pub use gradcheck::{GradcheckReport, gradcheck};
pub use ops::Tape;
pub use ops::attention::AttentionVars;
pub use ops::nn::MaskRows;
pub use tape::{Gradients, OpProfile, Recorded, TapeOf, Var};
