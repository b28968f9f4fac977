//! Figures several experiments share: learning curves and learned priors from run results.
use super::learned::{Missing, of_finished};
use crate::sweep::RunSpec;
use at5::report::{LineOpts, Series, line_chart, small_multiples};
use at5::train::{self, RunRecord, Trainer};

/// The file beside a run's record that keeps its learned prior.
pub const PRIOR: &str = "prior.json";
use std::path::Path;

/// The query whose prior the figures show (the pooled slot; the middle for mean pooling).
pub fn pooled_query(t: &Trainer) -> usize {
    train::pooled_query(t.model.config.pooling, t.data.max_len)
}

/// Per head, the prior of the pooled query over relative offsets n = j - i, as chart series.
pub fn prior_series(t: &Trainer) -> Vec<Series> {
    train::prior_series(t)
}

/// One panel per family: the learned prior of every head of the given finished runs (from
/// each run's `prior.json`, written from its checkpoint the first time). A finished run whose
/// prior is neither there nor computable fails the figure unless `missing` allows it.
pub fn priors_figure(
    path: &Path,
    title: &str,
    root: &Path,
    specs: &[&RunSpec],
    missing: Missing,
) -> Result<(), String> {
    let mut panels = Vec::new();
    for s in specs {
        // A run still training has a checkpoint too, but its prior is not the learned one.
        if let Some(prior) = of_finished(root, s, PRIOR, missing, |t| Ok(prior_series(t)))? {
            panels.push((s.bias.clone(), prior));
        }
    }
    if panels.is_empty() {
        return Ok(());
    }
    small_multiples(
        path,
        title,
        &panels,
        "relative offset n = j - i (key minus query position)",
        "prior probability softmax(b(n))",
        3,
    )
}

/// Dev metric per epoch, one series per record.
pub fn learning_curves(
    path: &Path,
    title: &str,
    runs: &[(String, &RunRecord)],
) -> Result<(), String> {
    let series: Vec<Series> = runs
        .iter()
        .map(|(label, r)| {
            let pts = r
                .epochs
                .iter()
                .map(|e| (e.epoch as f64, 100.0 * e.dev.accuracy))
                .collect();
            Series::new(label.clone(), pts)
        })
        .collect();
    if series.is_empty() {
        return Ok(());
    }
    line_chart(
        path,
        title,
        "epoch",
        "dev accuracy (%)",
        &series,
        LineOpts {
            log_x: false,
            y_range: Some((0.0, 100.0)),
            ..LineOpts::default()
        },
    )
}
