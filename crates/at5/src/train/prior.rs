//! A trained model's learned prior over relative positions: the figures and per-head summary
//! the `prior` binary writes (prior by offset, prior/context/posterior maps, AT5 slopes).
use super::batch::make_batch;
use super::config::TrainConfig;
use super::diagnostics::BiasDiagnostics;
use super::metrics::EVAL_BATCH;
use super::pooling::pooled_query;
use super::record::RunRecord;
use super::trainer::Trainer;
use crate::data::Example;
use crate::nn::{LayerView, mass_radius, mean_kl};
use crate::report::{LineOpts, Series, heatmap, line_chart, small_multiples};
use std::path::{Path, PathBuf};

/// What the prior binary found, per head of the first biased layer.
#[derive(Clone, Debug)]
pub struct HeadSummary {
    /// The head index.
    pub head: usize,
    /// The offset `n = j - i` where the query's prior peaks.
    pub mode_offset: i64,
    /// The smallest radius around the mode holding 90% of the prior.
    pub radius90: usize,
    /// KL(posterior ‖ prior) averaged over the real queries of the test examples used.
    pub mean_kl: f64,
    /// The family's own numbers for this head, by name ([`crate::position::PerHead`]; AT5:
    /// its slopes `alpha` and `beta`, whose reciprocals are the saturation distances).
    pub per_head: Vec<(String, f64)>,
}

#[derive(Clone, Debug)]
/// What [`prior_report`] wrote and found.
pub struct PriorReport {
    /// The query the prior-by-offset figure and the summary read.
    pub query: usize,
    /// The padded length L.
    pub len: usize,
    /// How many test examples the mean KL averages over.
    pub kl_examples: usize,
    /// One summary per head.
    pub heads: Vec<HeadSummary>,
    /// Every figure written, in order.
    pub files: Vec<PathBuf>,
}

/// Per head, the prior of `trainer`'s pooled query over relative offsets `n = j - i`, as chart
/// series labelled `head h`.
pub fn prior_series(trainer: &Trainer) -> Vec<Series> {
    let l = trainer.data.max_len;
    let q = pooled_query(trainer.model.config.pooling, l);
    trainer
        .model
        .prior_row(&trainer.store, l, q)
        .into_iter()
        .enumerate()
        .map(|(h, row)| {
            let pts = row
                .iter()
                .enumerate()
                .map(|(j, &p)| (j as f64 - q as f64, p))
                .collect();
            Series::new(format!("head {h}"), pts)
        })
        .collect()
}

const OFFSET_AXIS: &str = "relative offset n = j - i (key minus query position)";
const PRIOR_AXIS: &str = "prior probability softmax(b(n))";

/// The prior of the pooled query as it was learned: one panel per head of the first biased
/// layer, one line per snapshot (labelled by its epoch), written to `path`. The snapshots must
/// come from the run of config `run` (any budget); they are drawn in the order given.
pub fn prior_by_epoch(snapshots: &[PathBuf], run: &TrainConfig, path: &Path) -> Result<(), String> {
    let mut per_head: Vec<Vec<Series>> = Vec::new();
    let mut first: Option<(String, String, usize)> = None;
    for s in snapshots {
        let t = Trainer::from_checkpoint(s)?;
        // A snapshot of another run (left in the folder, or copied in) would draw a history
        // that never happened: its settings must be the run's, whatever its budget.
        if !t.config.same_run(run) {
            return Err(format!(
                "{}: a snapshot of another run than the checkpoint's ({})",
                s.display(),
                t.config
                    .first_difference(run, ("in the snapshot", "in the checkpoint"))
            ));
        }
        // Every snapshot is of the one run, so the first names the figure.
        first.get_or_insert_with(|| {
            (
                t.data.name.clone(),
                t.model.family().to_string(),
                t.model.config.heads,
            )
        });
        let label = format!("epoch {}", t.state.epoch);
        for (h, series) in prior_series(&t).into_iter().enumerate() {
            if per_head.len() <= h {
                per_head.push(Vec::new());
            }
            per_head[h].push(Series::new(label.clone(), series.points));
        }
    }
    let Some((task, family, heads)) = first else {
        return Err("prior by epoch: no snapshots given".into());
    };
    let panels: Vec<(String, Vec<Series>)> = per_head
        .into_iter()
        .enumerate()
        .map(|(h, s)| (format!("head {h}"), s))
        .collect();
    let title = format!("{task}: prior of the pooled query during training ({family})");
    small_multiples(path, &title, &panels, OFFSET_AXIS, PRIOR_AXIS, heads.min(2))
}

/// The learned priors of several runs side by side: one panel per checkpoint (titled by its
/// family and epoch), one line per head, written to `path`.
pub fn compare_priors(checkpoints: &[PathBuf], path: &Path) -> Result<(), String> {
    let mut panels = Vec::new();
    let mut task = String::new();
    for c in checkpoints {
        let t = Trainer::from_checkpoint(c)?;
        task = t.data.name.clone();
        let name = format!("{}, epoch {}", t.model.family(), t.state.epoch);
        panels.push((name, prior_series(&t)));
    }
    if panels.is_empty() {
        return Err("compare priors: no checkpoints given".into());
    }
    let title = format!("{task}: learned prior of the pooled query per head");
    let cols = panels.len().min(3);
    small_multiples(path, &title, &panels, OFFSET_AXIS, PRIOR_AXIS, cols)
}

/// One head's `[L, L]` slice of a `[1, H, L, L]` view tensor, as rows for a heat map.
fn head_rows(
    t: &crate::tensor::Tensor<f64>,
    head: usize,
    pad: &[bool],
    mask: bool,
) -> Vec<Vec<f64>> {
    let l = t.shape[2];
    (0..l)
        .map(|i| {
            let at = (head * l + i) * l;
            t.data[at..at + l]
                .iter()
                .zip(pad)
                // padding keys take no part in the softmax: grey rather than a misleading score
                .map(|(&v, &p)| if mask && p { f64::NAN } else { v })
                .collect()
        })
        .collect()
}

/// Writes the figures of `trainer`'s model into `out` and returns the per-head summary:
/// the prior of the pooled query against the offset (all heads in one chart), heat maps of
/// prior, context scores and posterior of test example `example` for every head of layer 0,
/// and, for AT5 with a `record`, the slopes and saturation distances over the epochs. The mean
/// KL uses the first `kl_examples` test examples.
pub fn prior_report(
    trainer: &Trainer,
    record: Option<&RunRecord>,
    example: usize,
    kl_examples: usize,
    out: &Path,
) -> Result<PriorReport, String> {
    let (model, store, data) = (&trainer.model, &trainer.store, &trainer.data);
    let test = &data.test;
    if example >= test.len() {
        return Err(format!(
            "--example {example}: the test split has {} examples",
            test.len()
        ));
    }
    if kl_examples == 0 {
        return Err("--kl-examples must be at least 1 (the mean KL is over test examples)".into());
    }
    let (l, h) = (data.max_len, model.config.heads);
    let query = pooled_query(model.config.pooling, l);
    let mut files = Vec::new();

    let series = prior_series(trainer);
    let path = out.join("prior_by_offset.svg");
    line_chart(
        &path,
        &format!(
            "{}: prior of query {query} ({} bias)",
            data.name,
            model.family()
        ),
        "relative offset n = j - i",
        "prior probability",
        &series,
        LineOpts::default(),
    )?;
    files.push(path);

    let (batch, _) = make_batch(&[&test[example]], l);
    let views = model.inspect(store, &batch, None)?;
    let view: &LayerView = &views[0];
    for hh in 0..h {
        for (what, t, mask) in [
            ("prior", &view.prior, false),
            ("context", &view.context, true),
            ("posterior", &view.posterior, false),
        ] {
            let path = out.join(format!("layer0_head{hh}_{what}.svg"));
            let title = format!("test example {example}, layer 0, head {hh}: {what}");
            let values = head_rows(t, hh, &batch.pad, mask);
            heatmap(&path, &title, "key position j", "query position i", &values)?;
            files.push(path);
        }
    }

    let used = kl_examples.clamp(1, test.len());
    let refs: Vec<&Example> = test[..used].iter().collect();
    let (mut kl, mut queries) = (vec![0.0; h], 0usize);
    for chunk in refs.chunks(EVAL_BATCH) {
        let (batch, _) = make_batch(chunk, l);
        let views = model.inspect(store, &batch, None)?;
        let n = batch.pad.iter().filter(|&&p| !p).count();
        for (k, m) in kl.iter_mut().zip(mean_kl(&views[0], &batch.pad)) {
            *k += m * n as f64;
        }
        queries += n;
    }

    if let Some(rec) = record {
        files.extend(per_head_figures(rec, out)?);
        files.extend(diagnostics_figures(rec, out)?);
    }

    let own = model.per_head(store);
    let heads = series
        .iter()
        .enumerate()
        .map(|(hh, s)| {
            let row: Vec<f64> = s.points.iter().map(|p| p.1).collect();
            let (mode, radius90) = mass_radius(&row, 0.9);
            HeadSummary {
                head: hh,
                mode_offset: mode as i64 - query as i64,
                radius90,
                mean_kl: kl[hh] / queries.max(1) as f64,
                per_head: own.iter().map(|(k, v)| (k.to_string(), v[hh])).collect(),
            }
        })
        .collect();
    Ok(PriorReport {
        query,
        len: l,
        kl_examples: used,
        heads,
        files,
    })
}

/// The record's per-epoch bias diagnostics: log10 of each bias tensor's gradient norm (zeros,
/// which a tensor the loss cannot reach gets, are left out), each head's prior entropy, and for
/// AT5 and AT5-NoB the share of dead ReLU units; nothing for a record written before
/// diagnostics were kept.
fn diagnostics_figures(rec: &RunRecord, out: &Path) -> Result<Vec<PathBuf>, String> {
    let per_epoch: Vec<(f64, &BiasDiagnostics)> = rec
        .epochs
        .iter()
        .filter_map(|e| Some((e.epoch as f64, e.diagnostics.as_ref()?)))
        .collect();
    let Some(&(_, first)) = per_epoch.first() else {
        return Ok(Vec::new());
    };
    let mut norms = Vec::new();
    for (k, (name, _)) in first.grad_norms.iter().enumerate() {
        let pts: Vec<(f64, f64)> = per_epoch
            .iter()
            .filter_map(|(e, d)| {
                let g = d.grad_norms.get(k)?.1;
                (g > 0.0).then(|| (*e, g.log10()))
            })
            .collect();
        if !pts.is_empty() {
            norms.push(Series::new(name.clone(), pts));
        }
    }
    let mut files = Vec::new();
    if !norms.is_empty() {
        let path = out.join("bias_grad_norms.svg");
        let title = format!("{}: bias gradient norms ({})", rec.task, rec.bias);
        let y = "log10 RMS gradient norm over the epoch";
        line_chart(&path, &title, "epoch", y, &norms, LineOpts::default())?;
        files.push(path);
    }
    let entropy: Vec<Series> = (0..first.prior_entropy.len())
        .map(|hh| {
            let pts = per_epoch
                .iter()
                .map(|(e, d)| (*e, d.prior_entropy[hh]))
                .collect();
            Series::new(format!("head {hh}"), pts)
        })
        .collect();
    let path = out.join("prior_entropy.svg");
    let title = format!("{}: entropy of the pooled query's prior", rec.task);
    line_chart(
        &path,
        &title,
        "epoch",
        "entropy (nats)",
        &entropy,
        LineOpts::default(),
    )?;
    files.push(path);
    // AT5's and AT5-NoB's dead ReLU units per head, layer and direction, in percent.
    if let Some(heads) = first.dead_units.as_ref().map(Vec::len) {
        let mut dead = Vec::new();
        for hh in 0..heads {
            for (layer, dir, pick) in [
                ("l1", "n ≤ 0", 0),
                ("l1", "n > 0", 1),
                ("l2", "n ≤ 0", 2),
                ("l2", "n > 0", 3),
            ] {
                let pts: Vec<(f64, f64)> = per_epoch
                    .iter()
                    .filter_map(|(e, d)| {
                        let u = d.dead_units.as_ref()?.get(hh)?;
                        let v = [u.layer1[0], u.layer1[1], u.layer2[0], u.layer2[1]][pick];
                        Some((*e, 100.0 * v))
                    })
                    .collect();
                dead.push(Series::new(format!("head {hh} {layer} {dir}"), pts));
            }
        }
        let path = out.join("dead_units.svg");
        let title = format!(
            "{}: dead ReLU units of the bias MLPs ({})",
            rec.task, rec.bias
        );
        let y = "units dead at every offset (%)";
        let opts = LineOpts {
            y_range: Some((0.0, 100.0)),
            ..LineOpts::default()
        };
        line_chart(&path, &title, "epoch", y, &dead, opts)?;
        files.push(path);
    }
    Ok(files)
}

/// The family's own per-head numbers over the epochs (AT5: its slopes `alpha`, `beta`):
/// `per_head.svg` their values and `per_head_inverse.svg` their reciprocals (for AT5 the
/// distances where the soft bucket saturates); nothing for a family that reports none.
fn per_head_figures(rec: &RunRecord, out: &Path) -> Result<Vec<PathBuf>, String> {
    let Some(first) = rec.epochs.iter().find(|e| !e.per_head.is_empty()) else {
        return Ok(Vec::new());
    };
    let names: Vec<&str> = first.per_head.iter().map(|(k, _)| k).collect();
    let mut value = Vec::new();
    let mut inverse = Vec::new();
    for hh in 0..first.per_head.heads() {
        for name in &names {
            let pts: Vec<(f64, f64)> = rec
                .epochs
                .iter()
                .filter_map(|e| Some((e.epoch as f64, *e.per_head.get(name)?.get(hh)?)))
                .collect();
            let inv = pts.iter().map(|&(e, v)| (e, 1.0 / v)).collect();
            value.push(Series::new(format!("{name} head {hh}"), pts));
            inverse.push(Series::new(format!("1/{name} head {hh}"), inv));
        }
    }
    let p1 = out.join("per_head.svg");
    let title = format!("{}: per head, {}", rec.task, names.join(", "));
    line_chart(&p1, &title, "epoch", "value", &value, LineOpts::default())?;
    // a value of 0 has no reciprocal: such a line is left out rather than plotted
    inverse.retain(|s| s.points.iter().any(|p| p.1.is_finite()));
    if inverse.is_empty() {
        return Ok(vec![p1]);
    }
    let p2 = out.join("per_head_inverse.svg");
    let inv_names: Vec<String> = names.iter().map(|n| format!("1/{n}")).collect();
    let title = format!("{}: per head, {}", rec.task, inv_names.join(", "));
    line_chart(
        &p2,
        &title,
        "epoch",
        "1/value",
        &inverse,
        LineOpts::default(),
    )?;
    Ok(vec![p1, p2])
}
