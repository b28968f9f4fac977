//! Neural-network modules: layers, attention, the encoder, the whole model, the probabilistic
//! view of its attention (prior, context, posterior), and gradient checks of its biases.
mod attention;
pub mod check;
mod encoder;
mod inspect;
mod layers;
mod model;
mod predict;

pub use attention::{Attention, AttentionTrace, key_mask};
pub use encoder::{Block, BlockDropout};
pub use inspect::{LayerView, kl_divergence, mass_radius, mean_kl};
pub use layers::{Embedding, INIT_STD, LayerNorm, Linear};
pub use model::{
    Batch, BatchInput, BiasScope, Dropouts, Forward, ForwardOpts, InputKind, Model, ModelConfig,
    OutputInit, OutputKind, PooledHead, Pooling, Targets,
};

/// A seed for the `k`-th random draw of a step (splitmix64 of the pair), so each dropout mask
/// is fixed by the step seed and its place in the model, never by call order elsewhere.
pub fn mix_seed(seed: u64, k: u64) -> u64 {
    let mut z = seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
