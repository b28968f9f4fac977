//! Named parameters that live outside the tape; each step binds them as leaves.
use crate::autodiff::{Gradients, Tape, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// A parameter's index in its store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParamId(pub usize);

/// Parameters in registration order, each with a unique dotted name like `encoder.0.attn.q`.
#[derive(Clone, Debug, Default)]
pub struct ParamStore<F = f32> {
    names: Vec<String>,
    values: Vec<Tensor<F>>,
}

/// The vars a store's parameters got on one tape, indexed by `ParamId`.
#[derive(Clone, Debug)]
pub struct Bound(Vec<Var>);

impl Bound {
    /// Vars in `ParamId` order, e.g. the inputs [`crate::gradcheck()`] hands its function.
    pub fn from_vars(vars: Vec<Var>) -> Bound {
        Bound(vars)
    }
    /// The tape var bound to parameter `id`.
    pub fn var(&self, id: ParamId) -> Var {
        self.0[id.0]
    }
}

impl<F: Float> ParamStore<F> {
    /// An empty store.
    pub fn new() -> Self {
        ParamStore {
            names: Vec::new(),
            values: Vec::new(),
        }
    }
    /// Registers a parameter; a repeated name is a bug in the model code.
    pub fn add(&mut self, name: &str, value: Tensor<F>) -> ParamId {
        assert!(
            !self.names.iter().any(|n| n == name),
            "ParamStore::add: `{name}` registered twice"
        );
        self.names.push(name.to_string());
        self.values.push(value);
        ParamId(self.values.len() - 1)
    }
    /// Number of parameter tensors.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// Whether the store holds no parameters.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// Total number of scalars.
    pub fn num_scalars(&self) -> usize {
        self.values.iter().map(|t| t.len()).sum()
    }
    /// The name `id` was registered under.
    pub fn name(&self, id: ParamId) -> &str {
        &self.names[id.0]
    }
    /// The value of parameter `id`.
    pub fn get(&self, id: ParamId) -> &Tensor<F> {
        &self.values[id.0]
    }
    /// The value of parameter `id`, mutably (optimizers, projections, checkpoints).
    pub fn get_mut(&mut self, id: ParamId) -> &mut Tensor<F> {
        &mut self.values[id.0]
    }
    /// The id registered under `name`, if any.
    pub fn id(&self, name: &str) -> Option<ParamId> {
        self.names.iter().position(|n| n == name).map(ParamId)
    }
    /// Every id, in registration order.
    pub fn ids(&self) -> impl Iterator<Item = ParamId> + use<F> {
        (0..self.values.len()).map(ParamId)
    }
    /// Pushes every parameter onto `tape` as a gradient-wanting leaf.
    pub fn bind(&self, tape: &mut Tape<F>) -> Bound {
        Bound(self.values.iter().map(|v| tape.leaf(v.clone())).collect())
    }
    /// Gradient of each parameter from one backward pass, `None` where none reached it.
    pub fn grads<'g>(&self, bound: &Bound, grads: &'g Gradients<F>) -> Vec<Option<&'g Tensor<F>>> {
        bound.0.iter().map(|&v| grads.get(v)).collect()
    }
    /// Names of parameters that received no gradient: a disconnected parameter is reported,
    /// not silently skipped by the optimizer.
    pub fn without_grad(&self, bound: &Bound, grads: &Gradients<F>) -> Vec<&str> {
        bound
            .0
            .iter()
            .zip(&self.names)
            .filter(|(v, _)| grads.get(**v).is_none())
            .map(|(_, n)| n.as_str())
            .collect()
    }
    /// The same parameters in another float type (f32 models into f64 gradchecks).
    pub fn cast<G: Float>(&self) -> ParamStore<G> {
        ParamStore {
            names: self.names.clone(),
            values: self.values.iter().map(|t| t.cast()).collect(),
        }
    }
    /// Every value, in registration order.
    pub fn values(&self) -> &[Tensor<F>] {
        &self.values
    }
    /// Every value mutably, in registration order.
    pub fn values_mut(&mut self) -> &mut [Tensor<F>] {
        &mut self.values
    }
    /// Every name, in registration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}
