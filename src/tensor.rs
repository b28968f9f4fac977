//! Tensor: a shape plus contiguous row-major f64 data (no strides, no views).
use rand::{RngExt, SeedableRng, rngs::StdRng};

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Tensor {
    pub fn from_vec(shape: &[usize], data: Vec<f64>) -> Tensor {
        let n: usize = shape.iter().product();
        assert_eq!(
            n,
            data.len(),
            "Tensor::from_vec: shape {shape:?} needs {n} values, got {}",
            data.len()
        );
        Tensor {
            shape: shape.to_vec(),
            data,
        }
    }
    pub fn zeros(shape: &[usize]) -> Tensor {
        Tensor::from_vec(shape, vec![0.0; shape.iter().product()])
    }
    pub fn scalar(x: f64) -> Tensor {
        Tensor::from_vec(&[], vec![x])
    }
    /// Uniform in [lo, hi) from a seeded generator: the same seed gives the same tensor.
    pub fn uniform(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = shape.iter().product();
        Tensor::from_vec(shape, (0..n).map(|_| rng.random_range(lo..hi)).collect())
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}
