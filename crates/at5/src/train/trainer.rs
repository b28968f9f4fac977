//! The training loop: shuffled minibatches, Adam, dev evaluation every epoch, test at best dev.
use super::batch::make_batch;
use super::config::TrainConfig;
use super::diagnostics::{BiasDiagnostics, GradNorms, diagnose};
use super::metrics::{Metrics, evaluate};
use crate::autodiff::Tape;
use crate::data::{Example, TaskData};
use crate::nn::{ForwardOpts, Model, ModelConfig, mix_seed};
use crate::optim::{Adam, AdamConfig};
use crate::params::ParamStore;
use crate::position::PerHead;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
use std::time::Instant;

/// In a browser (wasm32-unknown-unknown) std has no clock and `Instant::now` panics: epochs
/// time as 0 s there, and the page times them itself.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
struct Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
impl Instant {
    fn now() -> Instant {
        Instant
    }
    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// One epoch's numbers, as the run record stores them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochRecord {
    /// The epoch, counted from 1.
    pub epoch: usize,
    /// Mean training loss over its steps.
    pub train_loss: f64,
    /// Metrics on the dev split after the epoch.
    pub dev: Metrics,
    /// Set on the epochs where dev strictly improved (the paper's protocol).
    pub test: Option<Metrics>,
    /// The bias family's own numbers per head after the epoch (AT5: `alpha`, `beta`), each a
    /// field of the epoch in the record.
    #[serde(flatten)]
    pub per_head: PerHead,
    /// Seconds the epoch took, evaluation included.
    pub seconds: f64,
    /// The bias's gradients, dead units and prior shape after the epoch (absent in records
    /// written before they were kept).
    #[serde(default)]
    pub diagnostics: Option<BiasDiagnostics>,
}

/// The best-dev epoch and the test metrics recorded there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// The epoch, counted from 1.
    pub epoch: usize,
    /// Its dev metrics.
    pub dev: Metrics,
    /// Its test metrics.
    pub test: Metrics,
}

/// Everything besides parameters and optimizer that a resumed run needs. The random state is
/// the counters: epoch e shuffles with a generator seeded from (seed, e) and step s draws its
/// dropout masks from (seed, s), so (epoch, step) restore it exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// Epochs finished.
    pub epoch: usize,
    /// Optimizer steps taken.
    pub step: u64,
    /// The best-dev epoch so far.
    pub best: Option<Best>,
    /// Epochs since dev last improved.
    pub stale_epochs: usize,
    /// Every finished epoch's numbers.
    pub history: Vec<EpochRecord>,
    /// Training seconds so far, over every resumed part.
    pub seconds: f64,
}

/// A training run in memory: its data, model, parameters, optimizer and loop counters.
/// [`crate::train::run`] drives one to the end with checkpoints (an example is there).
pub struct Trainer {
    /// The run's configuration.
    pub config: TrainConfig,
    /// The task's splits.
    pub data: TaskData,
    /// The model (f32).
    pub model: Model<f32>,
    /// Its parameters.
    pub store: ParamStore<f32>,
    /// The optimizer state.
    pub adam: Adam<f32>,
    /// The loop counters and history.
    pub state: TrainState,
    /// Names of parameters that got no gradient on the first step (should be empty).
    pub without_grad: Vec<String>,
    /// The bias's gradient norms over the current epoch's steps (emptied at each epoch's end,
    /// so a checkpoint, written between epochs, needs none of it).
    grad_norms: GradNorms,
    tape: Tape<f32>,
}

impl Trainer {
    /// A fresh run: loads the data and initialises the model from the seed.
    pub fn new(config: TrainConfig) -> Result<Trainer, String> {
        config.validate()?;
        let data = config.load_data()?;
        let model_cfg = config.model.for_task(&data);
        let mut store = ParamStore::new();
        let model = Model::new(model_cfg, &mut store, mix_seed(config.seed, 0))?;
        let adam = Adam::new(AdamConfig::tf(config.lr), &store);
        let grad_norms = GradNorms::new(&model);
        Ok(Trainer {
            config,
            data,
            model,
            store,
            adam,
            state: TrainState {
                epoch: 0,
                step: 0,
                best: None,
                stale_epochs: 0,
                history: Vec::new(),
                seconds: 0.0,
            },
            without_grad: Vec::new(),
            grad_norms,
            tape: Tape::new(),
        })
    }

    /// The model's configuration (the run's, completed by the data).
    pub fn model_config(&self) -> &ModelConfig {
        &self.model.config
    }

    /// Whether the budget is spent or patience ran out.
    pub fn done(&self) -> bool {
        self.state.epoch >= self.config.epochs
            || self
                .config
                .patience
                .is_some_and(|p| self.state.stale_epochs >= p)
    }

    /// Steps per epoch.
    pub fn steps_per_epoch(&self) -> usize {
        self.data
            .training_indices()
            .len()
            .div_ceil(self.config.batch)
    }

    /// One optimizer step on `examples`; returns the loss, or an error on a non-finite loss
    /// (parameters are then untouched).
    pub fn step(&mut self, examples: &[&Example]) -> Result<f64, String> {
        let (batch, targets) = make_batch(examples, self.data.max_len);
        self.tape.clear();
        let p = self.store.bind(&mut self.tape);
        let opts = ForwardOpts {
            seed: mix_seed(self.config.seed ^ 0xD0_0D, self.state.step),
            bias_heads: None,
            whole_graph: self.config.whole_graph,
        };
        let out = self.model.forward(&mut self.tape, &p, &batch, &opts).output;
        let loss = self.model.loss(&mut self.tape, out, &targets);
        let value = self.tape.value(loss).data[0] as f64;
        if !value.is_finite() {
            return Err(format!(
                "non-finite loss {value} at step {} (epoch {})",
                self.state.step + 1,
                self.state.epoch + 1
            ));
        }
        let grads = self.tape.backward(loss);
        if self.state.step == 0 {
            self.without_grad = self
                .store
                .without_grad(&p, &grads)
                .into_iter()
                .map(String::from)
                .collect();
        }
        let g = self.store.grads(&p, &grads);
        self.grad_norms.add(&g);
        self.adam.update(&mut self.store, &g);
        self.model.project(&mut self.store);
        self.state.step += 1;
        Ok(value)
    }

    /// One epoch: shuffle, train, evaluate dev (and test when dev strictly improves).
    /// `on_step(done, total, loss)` reports progress.
    pub fn train_epoch(
        &mut self,
        mut on_step: impl FnMut(usize, usize, f64),
    ) -> Result<EpochRecord, String> {
        let start = Instant::now();
        let mut order = self.data.training_indices();
        let epoch = self.state.epoch;
        let mut rng = StdRng::seed_from_u64(mix_seed(self.config.seed ^ 0x5EED, epoch as u64));
        order.shuffle(&mut rng);
        let steps = order.len().div_ceil(self.config.batch);
        let mut total = 0.0;
        let train = std::mem::take(&mut self.data.train);
        let mut result = Ok(());
        for (k, chunk) in order.chunks(self.config.batch).enumerate() {
            let batch: Vec<&Example> = chunk.iter().map(|&i| &train[i]).collect();
            match self.step(&batch) {
                Ok(l) => {
                    total += l;
                    on_step(k + 1, steps, l);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.data.train = train;
        result?;
        let l = self.data.max_len;
        let opts = ForwardOpts {
            whole_graph: self.config.whole_graph,
            ..ForwardOpts::default()
        };
        let dev = evaluate(&self.model, &self.store, &self.data.dev, l, &opts);
        let improved = self
            .state
            .best
            .as_ref()
            .is_none_or(|b| dev.accuracy > b.dev.accuracy);
        let test = improved.then(|| evaluate(&self.model, &self.store, &self.data.test, l, &opts));
        if let Some(t) = test {
            self.state.best = Some(Best {
                epoch: epoch + 1,
                dev,
                test: t,
            });
            self.state.stale_epochs = 0;
        } else {
            self.state.stale_epochs += 1;
        }
        let per_head = self.model.per_head(&self.store);
        let norms = self.grad_norms.take(&self.store);
        let diagnostics = Some(diagnose(&self.model, &self.store, l, norms));
        let seconds = start.elapsed().as_secs_f64();
        self.state.seconds += seconds;
        let rec = EpochRecord {
            epoch: epoch + 1,
            train_loss: total / steps.max(1) as f64,
            dev,
            test,
            per_head,
            seconds,
            diagnostics,
        };
        self.state.history.push(rec.clone());
        self.state.epoch += 1;
        Ok(rec)
    }
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("task", &self.data.name)
            .field("model", &self.model)
            .field("epoch", &self.state.epoch)
            .field("step", &self.state.step)
            .finish_non_exhaustive()
    }
}
