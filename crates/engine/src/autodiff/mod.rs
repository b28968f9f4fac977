//! The reverse-mode engine: the tape, its op families, and gradient checking.
pub mod gradcheck;
pub mod ops;
pub mod tape;

pub use gradcheck::{GradcheckReport, gradcheck};
pub use ops::Tape;
pub use ops::attention::AttentionVars;
pub use ops::nn::MaskRows;
pub use tape::{Gradients, OpProfile, Recorded, TapeOf, Var};

/// The forwards of the fused ops on plain tensors, without a tape: what a forward-only
/// evaluation calls, keeping nothing for a backward and freeing each buffer when it is dead.
/// The tape's methods call these same functions, so each value equals the tape's bit for bit.
pub mod forward {
    pub use super::ops::attention::{AttentionKeeps, attention_forward as attention};
    pub use super::ops::binary::add_assign_forward as add_assign;
    pub use super::ops::matmul::linear_forward as linear;
    pub use super::ops::nn::{embedding_forward as embedding, layer_norm_forward as layer_norm};
}
