//! `ablate`: the no-bucket ablations beside their bucketed versions, and the paper's head-prior
//! ablation (add heads' biases back one at a time, lowest maximum prior first).
use super::figures::pooled_query;
use super::learned::{Missing, of_finished};
use crate::sweep::{Plan, best_test_percent};
use at5::nn::ForwardOpts;
use at5::report::{
    Better, Cell, LineOpts, Series, Table, difference_phrase, line_chart, write_atomic,
};
use at5::train::{Preset, RunRecord, Trainer, evaluate};
use std::path::Path;

/// The file beside a run's record that keeps its head-prior ablation.
pub const HEAD_ABLATION: &str = "head-ablation.json";

/// Each bucketed family and its no-bucket ablation.
pub const PAIRS: [(&str, &str); 2] = [("t5", "t5-nob"), ("at5", "at5-nob")];

/// The same runs (ids and flags) as `reproduce`, so a shared output directory reuses them.
pub fn plan(preset: Preset, seeds: u64) -> Plan {
    let biases: Vec<String> = PAIRS
        .iter()
        .flat_map(|(a, b)| [a.to_string(), b.to_string()])
        .collect();
    let mut p = super::reproduce::plan(preset, seeds, &biases);
    p.experiment = "ablate".into();
    p
}

/// Test metric with only the first `k` heads (in `order`) keeping their bias, k = 0..=H.
pub fn head_curve(t: &Trainer) -> (Vec<usize>, Vec<f64>) {
    let h = t.model.config.heads;
    let l = t.data.max_len;
    let prior = t.model.prior_row(&t.store, l, pooled_query(t));
    let peak: Vec<f64> = prior
        .iter()
        .map(|row| row.iter().copied().fold(0.0, f64::max))
        .collect();
    let mut order: Vec<usize> = (0..h).collect();
    order.sort_by(|&a, &b| peak[a].total_cmp(&peak[b]).then(a.cmp(&b)));
    let curve = (0..=h)
        .map(|k| {
            let mut keep = vec![false; h];
            for &head in &order[..k] {
                keep[head] = true;
            }
            let opts = ForwardOpts {
                bias_heads: Some(keep),
                ..ForwardOpts::default()
            };
            evaluate(&t.model, &t.store, &t.data.test, l, &opts).accuracy * 100.0
        })
        .collect();
    (order, curve)
}

/// Writes `ablate.md` and the head-ablation figures from the finished runs; returns the table.
/// A finished seed-1 run whose head ablation cannot be read or computed fails it unless
/// `missing` allows it.
pub fn report(
    root: &Path,
    plan: &Plan,
    recs: &[Option<RunRecord>],
    missing: Missing,
) -> Result<String, String> {
    let groups: Vec<String> = {
        let mut g: Vec<String> = plan.specs.iter().map(|s| s.group.clone()).collect();
        g.dedup();
        g
    };
    let cols: Vec<&str> = PAIRS.iter().flat_map(|(a, b)| [*a, *b]).collect();
    let mut table = Table::new("task", cols.iter().copied(), 1).bold_best(Better::Higher);
    for g in &groups {
        let cells: Vec<Cell> = cols
            .iter()
            .map(|b| Cell::of_samples(&best_test_percent(&plan.runs(recs, g, b))))
            .collect();
        table.row(g.as_str(), cells);
    }
    let mut md = String::from("### Bucketed vs no-bucket (test accuracy %, mean ± std)\n\n");
    md.push_str(&table.to_markdown());
    md.push_str("\nEach no-bucket family minus its bucketed version, over seeds:\n\n");
    for g in &groups {
        let pairs: Vec<String> = PAIRS
            .iter()
            .filter_map(|(bucketed, nob)| {
                let [x, y] = [nob, bucketed].map(|b| best_test_percent(&plan.runs(recs, g, b)));
                (!x.is_empty() && !y.is_empty()).then(|| {
                    let name = |b: &str| b.to_uppercase().replace("-NOB", "-NoB");
                    format!(
                        "{} − {} {}",
                        name(nob),
                        name(bucketed),
                        difference_phrase(&x, &y)
                    )
                })
            })
            .collect();
        if !pairs.is_empty() {
            md.push_str(&format!("- {g}: {}\n", pairs.join("; ")));
        }
    }
    md.push_str(
        "\n### Head-prior ablation (seed 1): test accuracy with k heads' bias restored\n\n\
         Each seed-1 model as it ended training (the table above reports each run's test \
         accuracy at its best dev epoch, so the last point can differ from it). Heads are \
         restored lowest peak prior first; 0 heads is the model with no position bias at all.\n\n",
    );
    for g in &groups {
        let mut series = Vec::new();
        // Every family with a position bias, the no-bucket ablations too: whether their
        // prior carries the position information is the same question (C3).
        for fam in PAIRS.iter().flat_map(|(a, b)| [*a, *b]) {
            let Some(spec) = plan
                .specs
                .iter()
                .find(|s| &s.group == g && s.bias == fam && s.seed == 1)
            else {
                continue;
            };
            let Some((order, curve)) =
                of_finished(root, spec, HEAD_ABLATION, missing, |t| Ok(head_curve(t)))?
            else {
                continue;
            };
            md.push_str(&format!(
                "- {g}, {fam}: heads in order {order:?} → {}\n",
                curve
                    .iter()
                    .map(|x| format!("{x:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            series.push(Series::new(
                fam,
                curve
                    .iter()
                    .enumerate()
                    .map(|(k, &a)| (k as f64, a))
                    .collect(),
            ));
        }
        if !series.is_empty() {
            line_chart(
                &root.join("figures").join(format!("head-ablation-{g}.svg")),
                &format!("{g}: heads' biases restored one at a time, lowest peak prior first"),
                "heads with their position bias restored",
                "test accuracy (%)",
                &series,
                LineOpts {
                    log_x: false,
                    y_range: Some((0.0, 100.0)),
                    ..LineOpts::default()
                },
            )?;
        }
    }
    write_atomic(&root.join("ablate.md"), md.as_bytes())?;
    Ok(md)
}
