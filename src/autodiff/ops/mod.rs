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

/// Lanes of [`sum_lanes`] and [`dot_lanes`].
const LANES: usize = 8;

/// `Σ x` with eight running sums (element i goes to sum i mod 8) combined pairwise at the end.
///
/// A single running sum is a chain of dependent adds that no compiler may reorder, one add
/// latency per element; eight independent chains vectorise. The order is fixed by the length
/// alone, so results stay the same at any thread count and on any CPU.
pub(crate) fn sum_lanes<F: crate::float::Float>(x: &[F]) -> F {
    dot_like(x, None)
}

/// `Σ x·y` in the order of [`sum_lanes`].
pub(crate) fn dot_lanes<F: crate::float::Float>(x: &[F], y: &[F]) -> F {
    dot_like(x, Some(y))
}

#[inline]
fn dot_like<F: crate::float::Float>(x: &[F], y: Option<&[F]>) -> F {
    let mut acc = [F::ZERO; LANES];
    let n = x.len() - x.len() % LANES;
    match y {
        None => {
            for c in x[..n].chunks_exact(LANES) {
                for (a, &v) in acc.iter_mut().zip(c) {
                    *a += v;
                }
            }
        }
        Some(y) => {
            assert_eq!(x.len(), y.len(), "dot of slices of different lengths");
            for (c, d) in x[..n].chunks_exact(LANES).zip(y[..n].chunks_exact(LANES)) {
                for ((a, &v), &w) in acc.iter_mut().zip(c).zip(d) {
                    *a += v * w;
                }
            }
        }
    }
    for (i, &v) in x[n..].iter().enumerate() {
        acc[i] += y.map_or(v, |y| v * y[n + i]);
    }
    let (a, b) = acc.split_at(LANES / 2);
    let q: [F; 4] = std::array::from_fn(|i| a[i] + b[i]);
    (q[0] + q[2]) + (q[1] + q[3])
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
