//! The x86-64 kernels: AVX2+FMA (8 lanes) and AVX-512F (16 lanes).
pub(super) mod avx2;
pub(super) mod avx512;
