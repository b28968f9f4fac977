//! Tensor: a shape plus contiguous row-major data (no strides, no views).
use crate::float::Float;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use rand_distr::{Distribution, Normal};

#[derive(Clone, Debug, PartialEq)]
/// A dense tensor: a shape and its elements in row-major order (no strides or views).
pub struct Tensor<F = f64> {
    /// The size of each axis; `[]` for a scalar.
    pub shape: Vec<usize>,
    /// The elements, row-major; `data.len()` is the product of `shape`.
    pub data: Vec<F>,
}

impl<F: Float> Tensor<F> {
    /// A tensor of `shape` holding `data`; panics when the sizes differ.
    pub fn from_vec(shape: &[usize], data: Vec<F>) -> Tensor<F> {
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
    /// All zeros.
    pub fn zeros(shape: &[usize]) -> Tensor<F> {
        Tensor::full(shape, F::ZERO)
    }
    /// Every element `v`.
    pub fn full(shape: &[usize], v: F) -> Tensor<F> {
        Tensor::from_vec(shape, vec![v; shape.iter().product()])
    }
    /// A scalar (shape `[]`).
    pub fn scalar(x: F) -> Tensor<F> {
        Tensor::from_vec(&[], vec![x])
    }
    /// Uniform in [lo, hi) from a seeded generator: the same seed gives the same tensor.
    pub fn uniform(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor<F> {
        let mut rng = StdRng::seed_from_u64(seed);
        Tensor::uniform_from(shape, lo, hi, &mut rng)
    }
    /// Elements drawn uniformly from `[lo, hi)`.
    pub fn uniform_from(shape: &[usize], lo: f64, hi: f64, rng: &mut StdRng) -> Tensor<F> {
        let n = shape.iter().product();
        let data = (0..n)
            .map(|_| F::from_f64(rng.random_range(lo..hi)))
            .collect();
        Tensor::from_vec(shape, data)
    }
    /// Normal(mean, std^2) from a seeded generator.
    pub fn normal(shape: &[usize], mean: f64, std: f64, seed: u64) -> Tensor<F> {
        let mut rng = StdRng::seed_from_u64(seed);
        Tensor::normal_from(shape, mean, std, &mut rng)
    }
    /// Elements drawn from N(mean, std²).
    pub fn normal_from(shape: &[usize], mean: f64, std: f64, rng: &mut StdRng) -> Tensor<F> {
        let d = Normal::new(mean, std).expect("normal: std must be finite and >= 0");
        let n = shape.iter().product();
        Tensor::from_vec(shape, (0..n).map(|_| F::from_f64(d.sample(rng))).collect())
    }
    /// Normal(0, std^2) redrawn outside two standard deviations, as TF's truncated_normal (BERT).
    pub fn truncated_normal_from(shape: &[usize], std: f64, rng: &mut StdRng) -> Tensor<F> {
        let d = Normal::new(0.0, 1.0).expect("unit normal");
        let n = shape.iter().product();
        let data = (0..n)
            .map(|_| {
                loop {
                    let z: f64 = d.sample(rng);
                    if z.abs() <= 2.0 {
                        break F::from_f64(z * std);
                    }
                }
            })
            .collect();
        Tensor::from_vec(shape, data)
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// The element at a multi-index; panics naming the index and shape when out of range.
    pub fn get(&self, index: &[usize]) -> F {
        assert!(
            index.len() == self.shape.len() && index.iter().zip(&self.shape).all(|(i, n)| i < n),
            "Tensor::get: index {index:?} out of range for shape {:?}",
            self.shape
        );
        let flat = index
            .iter()
            .zip(&self.shape)
            .fold(0, |acc, (i, n)| acc * n + i);
        self.data[flat]
    }
    /// The same values in another float type (f32 training state into f64 checks, and back).
    pub fn cast<G: Float>(&self) -> Tensor<G> {
        Tensor::from_vec(
            &self.shape,
            self.data.iter().map(|v| G::from_f64(v.to_f64())).collect(),
        )
    }
}
