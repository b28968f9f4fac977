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

/// `Σ x` in eight fixed lanes: [`crate::kernels::portable::sum_lanes`] on the process's path.
pub(crate) fn sum_lanes<F: crate::float::Float>(x: &[F]) -> F {
    F::sum_lanes(x)
}

/// `Σ x·y` in the order of [`sum_lanes`].
pub(crate) fn dot_lanes<F: crate::float::Float>(x: &[F], y: &[F]) -> F {
    F::dot_lanes(x, y)
}

/// `n` zeros, written in parallel chunks when large. `vec![0; n]` zeroes on the calling
/// thread (the freed buffers are kept in the heap, so no fresh zero pages): at two threads the
/// other core sat idle through every large allocation of a step.
pub(crate) fn zeros<F: crate::float::Float>(n: usize) -> Vec<F> {
    use rayon::prelude::*;
    if n < PAR_MIN {
        return vec![F::ZERO; n];
    }
    let mut v = Vec::with_capacity(n);
    v.par_extend(rayon::iter::repeat_n(F::ZERO, n).with_min_len(CHUNK));
    v
}

#[cfg(test)]
mod tests {
    use super::{dot_lanes, sum_lanes};

    #[test]
    fn lane_sums_match_plain_sums() {
        for n in 0..40 {
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let y: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
            let plain: f64 = x.iter().sum();
            let dot: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!((sum_lanes(&x) - plain).abs() < 1e-12, "sum of {n}");
            assert!((dot_lanes(&x, &y) - dot).abs() < 1e-12, "dot of {n}");
        }
        // Element i goes to lane i mod 8: an exact check of the order on a length-9 input.
        let x = [1e16, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1e16];
        assert_eq!(sum_lanes(&x), 1.0);
    }
}
