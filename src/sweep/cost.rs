//! What a plan costs on this machine (`--plan`): counts from the configs, seconds from a few
//! timed steps.

use super::{Plan, RunSpec, finished};
use at5::train::Trainer;
use serde::Serialize;
use std::path::Path;

/// Steps timed per cell of a cost plan (after one untimed warm-up step).
const PLAN_STEPS: usize = 3;

/// The share of epochs assumed to improve dev, and so to evaluate test, in a cost plan. In the
/// committed runs dev improves often early and rarely late; a tenth is a middle estimate.
pub const PLAN_TEST_SHARE: f64 = 0.1;

/// What one cell (task × family) of a plan costs: counts from the configs, seconds measured
/// on this machine with the thread pool as configured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellCost {
    /// The plan's row.
    pub group: String,
    /// The bias family.
    pub bias: String,
    /// Runs in the cell, and how many of them are not finished yet.
    pub runs: usize,
    /// Runs without a finished record.
    pub left: usize,
    /// Optimizer steps of the unfinished runs.
    pub steps: usize,
    /// Dev examples evaluated by the unfinished runs (every epoch).
    pub dev_examples: usize,
    /// Test examples, assuming [`PLAN_TEST_SHARE`] of epochs improve dev.
    pub test_examples: usize,
    /// Seconds per training step (median of a few timed steps).
    pub step_seconds: f64,
    /// Seconds per evaluated example (one evaluation batch).
    pub eval_seconds_per_example: f64,
}

impl CellCost {
    /// Estimated seconds of the unfinished runs, one after another.
    pub fn seconds(&self) -> f64 {
        self.steps as f64 * self.step_seconds
            + (self.dev_examples + self.test_examples) as f64 * self.eval_seconds_per_example
    }
}

/// Times a few steps and one evaluation batch of each cell's first run and counts the work of
/// its unfinished runs. Nothing is written; finished runs under `root` cost nothing.
pub fn estimate_costs(plan: &Plan, root: &Path) -> Result<Vec<CellCost>, String> {
    use std::time::Instant;
    let mut cells: Vec<(String, String)> = Vec::new();
    for s in &plan.specs {
        let key = (s.group.clone(), s.bias.clone());
        if !cells.contains(&key) {
            cells.push(key);
        }
    }
    let mut out = Vec::new();
    for (group, bias) in cells {
        let specs: Vec<&RunSpec> = plan
            .specs
            .iter()
            .filter(|s| s.group == group && s.bias == bias)
            .collect();
        let mut t = Trainer::new(specs[0].config()?)?;
        let idx = t.data.training_indices();
        let n = t.config.batch.min(idx.len());
        let batch: Vec<at5::data::Example> =
            idx[..n].iter().map(|&i| t.data.train[i].clone()).collect();
        let refs: Vec<&at5::data::Example> = batch.iter().collect();
        let mut times = Vec::new();
        for k in 0..=PLAN_STEPS {
            let t0 = Instant::now();
            t.step(&refs)?;
            if k > 0 {
                times.push(t0.elapsed().as_secs_f64());
            }
        }
        times.sort_by(f64::total_cmp);
        let step_seconds = times[times.len() / 2];
        let m = at5::train::EVAL_BATCH.min(t.data.dev.len());
        let opts = at5::nn::ForwardOpts {
            whole_graph: t.config.whole_graph,
            ..Default::default()
        };
        let t0 = Instant::now();
        at5::train::evaluate(&t.model, &t.store, &t.data.dev[..m], t.data.max_len, &opts);
        let eval_seconds_per_example = t0.elapsed().as_secs_f64() / m.max(1) as f64;
        let (mut left, mut steps, mut dev, mut test) = (0, 0, 0, 0);
        for s in &specs {
            if finished(root, s).is_some() {
                continue;
            }
            let cfg = s.config()?;
            left += 1;
            steps += cfg.epochs * idx.len().div_ceil(cfg.batch);
            dev += cfg.epochs * t.data.dev.len();
            test += (cfg.epochs as f64 * PLAN_TEST_SHARE).ceil() as usize * t.data.test.len();
        }
        out.push(CellCost {
            group,
            bias,
            runs: specs.len(),
            left,
            steps,
            dev_examples: dev,
            test_examples: test,
            step_seconds,
            eval_seconds_per_example,
        });
    }
    Ok(out)
}

/// The cost plan as a Markdown table with its total, timed with `threads` worker threads.
pub fn cost_table(costs: &[CellCost], threads: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| task | family | runs (left) | steps | dev + test examples | ms/step | µs/eval example | hours |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut total = 0.0;
    for c in costs {
        let h = c.seconds() / 3600.0;
        total += h;
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {} + {} | {:.1} | {:.0} | {:.2} |",
            c.group,
            c.bias,
            c.runs,
            c.left,
            c.steps,
            c.dev_examples,
            c.test_examples,
            c.step_seconds * 1e3,
            c.eval_seconds_per_example * 1e6,
            h
        );
    }
    let _ = writeln!(
        s,
        "\ntotal: {total:.1} hours, one run at a time with {threads} threads (test evaluated on \
         {:.0} % of epochs, an estimate)",
        PLAN_TEST_SHARE * 100.0
    );
    s
}
