//! Op families: each file holds its forwards (as `Tape` methods) next to their backwards.
pub mod attention;
pub mod binary;
pub mod elementwise;
pub mod loss;
pub mod matmul;
pub mod nn;
pub mod reduce;
pub mod shape;
pub mod softmax;

/// Work below this many elements runs on the calling thread: rayon's overhead would dominate.
pub(crate) const PAR_MIN: usize = 1 << 15;
/// Fixed chunk for parallel elementwise work; results never depend on the thread count.
pub(crate) const CHUNK: usize = 1 << 13;
