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

/// How work is split across threads, owned by the kernels and shared by every op.
pub(crate) use crate::kernels::{CHUNK, PAR_MIN};

/// `Σ x` in eight fixed lanes: [`crate::kernels::portable::sum_lanes`] on the process's path.
pub(crate) fn sum_lanes<F: crate::float::Float>(x: &[F]) -> F {
    F::sum_lanes(x)
}

/// `Σ x·y` in the order of [`sum_lanes`].
pub(crate) fn dot_lanes<F: crate::float::Float>(x: &[F], y: &[F]) -> F {
    F::dot_lanes(x, y)
}

/// `n` zeros, written in parallel chunks when large (the kernels' allocation, shared).
pub(crate) use crate::kernels::zeros;

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
