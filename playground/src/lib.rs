//! The browser playground's binding (`docs/playground/`, feature `playground`, built for
//! `wasm32-unknown-unknown` by `playground/build.sh`).
//!
//! The page describes a run with the flags of the `train` binary; [`Playground::new`] parses
//! them with the same [`RunArgs`] and builds the same [`Trainer`], and
//! [`Playground::train_epoch`] is the library's own epoch, so a run in the page is the native
//! run of the same flags (up to the last bits of the kernels). [`Playground::set_epochs`] moves
//! the budget of a run in progress; no epoch depends on the budget, so the longer run is the
//! native run with the new `--epochs`. Everything crosses the boundary as JSON strings.
use at5::data::{Label, Sequence};
use at5::position::PerHead;
use at5::train::{EpochRecord, MAX_EPOCHS, Trainer, make_batch, pooled_query, prior_series};
use at5_app::cli::RunArgs;
use clap::Parser;
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The page's progress hook, a global function of the worker: `(done, total, loss)` after
    /// every optimizer step.
    #[wasm_bindgen(js_name = at5Progress)]
    fn progress(done: u32, total: u32, loss: f64);
    /// The page's panic hook, a global function of the worker: a panic's message, before the
    /// wasm traps.
    #[wasm_bindgen(js_name = at5Panic)]
    fn report_panic(message: String);
}

/// The `train` binary's run flags, parsed as it parses them.
#[derive(Parser)]
#[command(name = "train")]
struct Flags {
    #[command(flatten)]
    run: RunArgs,
}

/// One training run in the page.
#[wasm_bindgen]
pub struct Playground {
    trainer: Trainer,
    /// The flags the run was built from, `--epochs` kept at the budget now.
    flags: Vec<String>,
}

/// What the page needs to draw a run before it trains.
#[derive(Serialize)]
struct Info<'a> {
    command: &'a str,
    task: &'a str,
    family: &'a str,
    heads: usize,
    len: usize,
    query: usize,
    epochs: usize,
    steps_per_epoch: usize,
    lr: f64,
    /// T5's bucket of every offset `n = j - query`, `j = 0..len` (absent for other families).
    buckets: Option<Vec<usize>>,
}

/// The model's state after an epoch (or at initialisation, with no `record`).
#[derive(Serialize)]
struct View<'a> {
    epoch: usize,
    record: Option<&'a EpochRecord>,
    /// Per head, the pooled query's prior over keys `j = 0..len` (offset `j - query`).
    prior: Vec<Vec<f64>>,
    /// The family's own numbers per head, each a field (AT5: `alpha`, `beta`).
    #[serde(flatten)]
    per_head: PerHead,
    example: Example,
}

/// One dev example through the first layer: per head `[len][len]` maps (query i, key j).
#[derive(Serialize)]
struct Example {
    index: usize,
    input: Vec<String>,
    label: String,
    prior: Vec<Vec<Vec<f64>>>,
    context: Vec<Vec<Vec<f64>>>,
    posterior: Vec<Vec<Vec<f64>>>,
}

fn js(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn to_json(v: &impl Serialize) -> Result<String, JsError> {
    serde_json::to_string(v).map_err(js)
}

#[wasm_bindgen]
impl Playground {
    /// A fresh run from `train`'s flags (`--task lagk --lag 4 ...`): the same config, data
    /// and initialisation as `train` with those flags.
    #[wasm_bindgen(constructor)]
    pub fn new(flags: Vec<String>) -> Result<Playground, JsError> {
        std::panic::set_hook(Box::new(|p| report_panic(p.to_string())));
        let argv = std::iter::once("train".to_string()).chain(flags.iter().cloned());
        let parsed = Flags::try_parse_from(argv).map_err(|e| js(e.render()))?;
        let config = parsed.run.to_config().map_err(js)?;
        let trainer = Trainer::new(config).map_err(js)?;
        Ok(Playground { trainer, flags })
    }

    /// Sets the run's budget to `epochs` in all (at least the epochs already trained), so a
    /// finished or paused run can train on. Training never reads the budget except to stop,
    /// so the run stays the native run of its flags with `--epochs` replaced.
    pub fn set_epochs(&mut self, epochs: usize) -> Result<(), JsError> {
        let trained = self.trainer.state.epoch;
        if epochs < trained.max(1) || epochs > MAX_EPOCHS {
            return Err(js(format!(
                "epochs must be {} to {MAX_EPOCHS}, got {epochs}",
                trained.max(1)
            )));
        }
        self.trainer.config.epochs = epochs;
        match self.flags.iter().position(|f| f == "--epochs") {
            Some(i) if i + 1 < self.flags.len() => self.flags[i + 1] = epochs.to_string(),
            _ => self.flags.extend(["--epochs".into(), epochs.to_string()]),
        }
        Ok(())
    }

    /// The run's shape as JSON: the native command, task, family, heads, length, the pooled
    /// query, epochs, steps per epoch, learning rate and, for a family that buckets offsets (T5), each key's bucket.
    pub fn info(&self) -> Result<String, JsError> {
        let t = &self.trainer;
        let len = t.data.max_len;
        let query = pooled_query(t.model.config.pooling, len);
        let buckets = t.model.buckets((0..len).map(|j| j as i64 - query as i64));
        let command = format!(
            "cargo run --release --bin train -- {}",
            self.flags.join(" ")
        );
        to_json(&Info {
            command: &command,
            task: &t.data.name,
            family: t.model.family(),
            heads: t.model.config.heads,
            len,
            query,
            epochs: t.config.epochs,
            steps_per_epoch: t.steps_per_epoch(),
            lr: t.config.lr,
            buckets,
        })
    }

    /// Whether the run has trained all its epochs.
    pub fn done(&self) -> bool {
        self.trainer.done()
    }

    /// Trains one epoch with the library's loop (calling the global `at5Progress` after every
    /// step) and returns [`Playground::view`] of the result.
    pub fn train_epoch(&mut self, example: usize) -> Result<String, JsError> {
        self.trainer
            .train_epoch(|done, total, loss| progress(done as u32, total as u32, loss))
            .map_err(js)?;
        self.view(example)
    }

    /// The model now, as JSON: the last epoch's record, each head's prior over offsets, the
    /// family's own per-head numbers (AT5's slopes), and dev example `example`'s prior, context scores and posterior.
    pub fn view(&self, example: usize) -> Result<String, JsError> {
        let t = &self.trainer;
        let per_head = t.model.per_head(&t.store);
        let prior = prior_series(t)
            .into_iter()
            .map(|s| s.points.into_iter().map(|(_, p)| p).collect())
            .collect();
        to_json(&View {
            epoch: t.state.epoch,
            record: t.state.history.last(),
            prior,
            per_head,
            example: self.example(example)?,
        })
    }
}

impl Playground {
    fn example(&self, index: usize) -> Result<Example, JsError> {
        let t = &self.trainer;
        let index = index % t.data.dev.len().max(1);
        let ex = t.data.dev.get(index).ok_or_else(|| js("no dev examples"))?;
        let len = t.data.max_len;
        let (batch, _) = make_batch(&[ex], len);
        let views = t.model.inspect(&t.store, &batch, None).map_err(js)?;
        let view = views.first().ok_or_else(|| js("the model has no layers"))?;
        let h = t.model.config.heads;
        // [1, H, L, L] as [H][L][L].
        let maps = |x: &at5::Tensor<f64>| -> Vec<Vec<Vec<f64>>> {
            (0..h)
                .map(|hh| {
                    (0..len)
                        .map(|i| x.data[(hh * len + i) * len..][..len].to_vec())
                        .collect()
                })
                .collect()
        };
        let input = match &ex.input {
            Sequence::Tokens(toks) => toks.iter().map(|t| t.to_string()).collect(),
            Sequence::Pairs(p) => p
                .iter()
                .map(|[v, m]| {
                    if *m == 0.0 {
                        format!("{v:.2}")
                    } else {
                        format!("{v:.2}|{m}")
                    }
                })
                .collect(),
        };
        let label = match ex.label {
            Label::Class(c) => c.to_string(),
            Label::Real(r) => format!("{r:.4}"),
        };
        Ok(Example {
            index,
            input,
            label,
            prior: maps(&view.prior),
            context: maps(&view.context),
            posterior: maps(&view.posterior),
        })
    }
}
