//! The x86-64 kernels: AVX2+FMA (8 lanes) and AVX-512F (16 lanes), and the packing GEMM that
//! runs on either's register tile.
pub(super) mod avx2;
pub(super) mod avx512;
pub(super) mod packed;
