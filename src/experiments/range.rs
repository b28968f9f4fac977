//! `sweep`: how each bias copes as the dependency range grows (Adding-T over T, lag-k over k),
//! and whether AT5's learned saturation distances follow the range.
use super::figures::priors_figure;
use super::learned::Missing;
use crate::sweep::{Plan, RunSpec, best_test_percent};
use at5::data::TaskKind;
use at5::report::{
    Better, Cell, LineOpts, Series, Table, line_chart, mean_std, median, write_atomic, write_json,
};
use at5::train::{self, EpochRecord, Preset, RunRecord, RunRequest};
use std::path::Path;

/// (range, value) pairs of one line.
type Points = Vec<(f64, f64)>;

/// The adding problem's T values the sweep covers by default.
pub const ADDING_T: [usize; 5] = [25, 50, 100, 200, 500];
/// Lag-k's k values the sweep covers by default (at L = 128).
pub const LAGS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Lag-k's default length: long enough for k = 64 with room on both sides.
pub const LAG_LEN: usize = 128;
/// The families the sweep compares by default.
pub const DEFAULT_BIASES: [&str; 4] = ["t5", "at5", "alibi", "fire"];

/// The task family a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dial {
    /// The adding problem's T.
    Adding,
    /// Lag-k's k.
    Lag,
}

impl Dial {
    /// The task name of this dial (`adding`, `lagk`).
    pub fn name(self) -> &'static str {
        match self {
            Dial::Adding => "adding",
            Dial::Lag => "lagk",
        }
    }
    fn axis(self) -> &'static str {
        match self {
            Dial::Adding => "T (sequence length; both marked values lie in the first half)",
            Dial::Lag => "k (distance from the pooled query to the recalled token)",
        }
    }
}

fn group(dial: Dial, r: usize) -> String {
    match dial {
        Dial::Adding => format!("adding-T{r}"),
        Dial::Lag => format!("lagk-k{r}"),
    }
}

/// One run per dial value, family and seed; lag-k runs at length `lag_len`.
pub fn plan(
    dials: &[(Dial, Vec<usize>)],
    (biases, seeds): (&[String], u64),
    preset: Preset,
    lag_len: usize,
) -> Plan {
    let mut specs = Vec::new();
    for (dial, ranges) in dials {
        for &r in ranges {
            let (task, task_dial) = match dial {
                Dial::Adding => (TaskKind::Adding, train::Dial::length(r)),
                Dial::Lag => (
                    TaskKind::LagK,
                    train::Dial {
                        seq_len: Some(lag_len),
                        lag: Some(r),
                    },
                ),
            };
            for b in biases {
                for seed in 1..=seeds {
                    let run = RunRequest::new(task, b, preset, seed).with_dial(task_dial);
                    specs.push(RunSpec::new(&group(*dial, r), run));
                }
            }
        }
    }
    Plan::new("sweep", preset.name(), specs)
}

/// The range a group name encodes.
fn range_of(group: &str) -> Option<(Dial, usize)> {
    if let Some(t) = group.strip_prefix("adding-T") {
        return Some((Dial::Adding, t.parse().ok()?));
    }
    let k = group.strip_prefix("lagk-k")?;
    Some((Dial::Lag, k.parse().ok()?))
}

/// Writes the accuracy-versus-range table and figures from the finished runs; returns the table.
/// `missing`: what the priors figures do with a finished run whose prior is not there.
pub fn report(
    root: &Path,
    plan: &Plan,
    recs: &[Option<RunRecord>],
    missing: Missing,
) -> Result<String, String> {
    let figdir = root.join("figures");
    let mut biases: Vec<String> = Vec::new();
    for s in &plan.specs {
        if !biases.contains(&s.bias) {
            biases.push(s.bias.clone());
        }
    }
    let mut md = String::new();
    for dial in [Dial::Adding, Dial::Lag] {
        let mut ranges: Vec<usize> = plan
            .specs
            .iter()
            .filter_map(|s| range_of(&s.group))
            .filter(|(d, _)| *d == dial)
            .map(|(_, r)| r)
            .collect();
        ranges.sort();
        ranges.dedup();
        if ranges.is_empty() {
            continue;
        }
        let runs = |bias: &str, r: usize| plan.runs(recs, &group(dial, r), bias);
        // Table: rows = range, columns = bias.
        let mut table =
            Table::new(dial.name(), biases.iter().map(String::as_str), 1).bold_best(Better::Higher);
        let mut series = Vec::new();
        for b in &biases {
            let mut pts = Vec::new();
            for &r in &ranges {
                let xs = best_test_percent(&runs(b, r));
                if !xs.is_empty() {
                    pts.push((r as f64, mean_std(&xs).0));
                }
            }
            if !pts.is_empty() {
                series.push(Series::new(b.clone(), pts));
            }
        }
        for &r in &ranges {
            let cells: Vec<Cell> = biases
                .iter()
                .map(|b| Cell::of_samples(&best_test_percent(&runs(b, r))))
                .collect();
            table.row(format!("{r}"), cells);
        }
        md.push_str(&format!(
            "\n### {} (test accuracy %, mean ± std over seeds)\n\n",
            dial.name()
        ));
        md.push_str(&table.to_markdown());
        if !series.is_empty() {
            line_chart(
                &figdir.join(format!("{}-accuracy-vs-range.svg", dial.name())),
                &format!("{}: test accuracy vs dependency range", dial.name()),
                dial.axis(),
                "test accuracy (%) at best dev",
                &series,
                LineOpts {
                    log_x: true,
                    y_range: Some((0.0, 100.0)),
                    ..LineOpts::default()
                },
            )?;
        }
        // AT5's learned saturation distances vs range, per head (seed 1, last epoch).
        let mut sat = Vec::new();
        let mut heads = 0;
        let mut per_head: Vec<(Points, Points)> = Vec::new();
        for &r in &ranges {
            let Some(rec) = runs("at5", r).into_iter().next() else {
                continue;
            };
            let Some(last) = rec.epochs.last() else {
                continue;
            };
            let (Some(a), Some(b)) = (last.per_head.get("alpha"), last.per_head.get("beta")) else {
                continue;
            };
            heads = heads.max(a.len());
            per_head.resize(heads, (Vec::new(), Vec::new()));
            for h in 0..a.len() {
                per_head[h].0.push((r as f64, 1.0 / a[h].max(1e-9)));
                per_head[h].1.push((r as f64, 1.0 / b[h].max(1e-9)));
            }
        }
        for (h, (fwd, bwd)) in per_head.into_iter().enumerate() {
            sat.push(Series::new(format!("head {h}: 1/beta (n ≤ 0)"), bwd));
            sat.push(Series::new(format!("head {h}: 1/alpha (n > 0)"), fwd));
        }
        if !sat.is_empty() {
            line_chart(
                &figdir.join(format!("{}-at5-saturation-vs-range.svg", dial.name())),
                &format!(
                    "{}: AT5's learned saturation distances vs range (seed 1)",
                    dial.name()
                ),
                dial.axis(),
                "saturation distance 1/alpha_h, 1/beta_h (positions)",
                &sat,
                LineOpts {
                    log_x: true,
                    y_range: None,
                    ..LineOpts::default()
                },
            )?;
        }
        // The same distances over every seed, as a table.
        let rows: Vec<String> = ranges
            .iter()
            .filter_map(|&r| {
                let runs: Vec<SlopeSummary> = runs("at5", r)
                    .into_iter()
                    .filter_map(SlopeSummary::of)
                    .collect();
                (!runs.is_empty()).then(|| saturation_row(r, &runs))
            })
            .collect();
        if !rows.is_empty() {
            md.push_str(&format!(
                "\n### {}: AT5's learned saturation distances, every seed\n\n{}\n{}\n",
                dial.name(),
                SATURATION_HEADER,
                rows.join("\n")
            ));
        }
        // The learned prior of each head at each range, per learned family.
        for b in biases
            .iter()
            .filter(|b| !["none", "sinusoidal"].contains(&b.as_str()))
        {
            let specs: Vec<&RunSpec> = plan
                .specs
                .iter()
                .filter(|s| {
                    s.bias == *b
                        && s.seed == 1
                        && range_of(&s.group).is_some_and(|(d, _)| d == dial)
                })
                .collect();
            let relabelled: Vec<RunSpec> = specs
                .iter()
                .map(|s| RunSpec {
                    bias: s.group.clone(),
                    ..(*s).clone()
                })
                .collect();
            let refs: Vec<&RunSpec> = relabelled.iter().collect();
            priors_figure(
                &figdir.join(format!("{}-priors-{b}.svg", dial.name())),
                &format!(
                    "{}: learned prior of the pooled query per head, {b} (seed 1)",
                    dial.name()
                ),
                root,
                &refs,
                missing,
            )?;
        }
    }
    write_atomic(&root.join("table.md"), md.as_bytes())?;
    let all: Vec<&RunRecord> = recs.iter().flatten().collect();
    write_json(&root.join("results.json"), &all)?;
    Ok(md)
}

/// The saturation table's header: 1/beta over every head of every seed (median [min–max]).
pub const SATURATION_HEADER: &str = "\
| range | runs | 1/beta after epoch 1 | 1/beta at the end | heads whose 1/beta moved ≥ 25 % | sharpest head's 1/beta | heads whose 1/alpha moved |
| ---: | ---: | --- | --- | ---: | --- | ---: |";

/// One AT5 run's slopes as the saturation table reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct SlopeSummary {
    /// 1/beta_h after the first epoch (the nearest the record has to the initial values).
    pub first: Vec<f64>,
    /// 1/beta_h after the last epoch.
    pub last: Vec<f64>,
    /// Heads whose alpha differs between the first and last epochs.
    pub alpha_moved: usize,
    /// The head whose pooled-query prior has the least entropy at the last epoch (`None` in
    /// records written before the diagnostics were kept).
    pub sharpest: Option<usize>,
}

impl SlopeSummary {
    /// The slopes of an AT5 record; `None` when it has no epochs or no slopes.
    pub fn of(rec: &RunRecord) -> Option<SlopeSummary> {
        let (first, last) = (rec.epochs.first()?, rec.epochs.last()?);
        let inv = |v: &[f64]| v.iter().map(|b| 1.0 / b.max(1e-9)).collect::<Vec<f64>>();
        let slope = |e: &'_ EpochRecord, name: &str| e.per_head.get(name).map(<[f64]>::to_vec);
        let (a0, a1) = (slope(first, "alpha")?, slope(last, "alpha")?);
        let sharpest = last.diagnostics.as_ref().and_then(|d| {
            (0..d.prior_entropy.len())
                .min_by(|&i, &j| d.prior_entropy[i].total_cmp(&d.prior_entropy[j]))
        });
        Some(SlopeSummary {
            first: inv(&slope(first, "beta")?),
            last: inv(&slope(last, "beta")?),
            alpha_moved: a0.iter().zip(&a1).filter(|(x, y)| x != y).count(),
            sharpest,
        })
    }
}

/// `median [min–max]` of `xs`, one decimal; `—` when empty.
fn spread(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "—".into();
    }
    let mut v = xs.to_vec();
    let m = median(&mut v);
    format!("{m:.1} [{:.1}–{:.1}]", v[0], v[v.len() - 1])
}

/// One row of the saturation table for range `r`: 1/beta over every head of every run after
/// the first and the last epoch, how many heads moved by a quarter or more (either way), the
/// sharpest head's 1/beta per run, and how many heads' alpha moved at all (none, when no key
/// lies after the pooled query).
pub fn saturation_row(r: usize, runs: &[SlopeSummary]) -> String {
    let first: Vec<f64> = runs.iter().flat_map(|s| s.first.iter().copied()).collect();
    let last: Vec<f64> = runs.iter().flat_map(|s| s.last.iter().copied()).collect();
    let moved = runs
        .iter()
        .flat_map(|s| s.first.iter().zip(&s.last))
        .filter(|&(a, b)| (b / a - 1.0).abs() >= 0.25)
        .count();
    let sharp: Vec<f64> = runs
        .iter()
        .filter_map(|s| s.sharpest.map(|h| s.last[h]))
        .collect();
    let alpha: usize = runs.iter().map(|s| s.alpha_moved).sum();
    format!(
        "| {r} | {} | {} | {} | {moved} of {} | {} | {alpha} of {} |",
        runs.len(),
        spread(&first),
        spread(&last),
        first.len(),
        spread(&sharp),
        first.len()
    )
}
