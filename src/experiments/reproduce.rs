//! `reproduce`: the paper's synthetic-task comparison, every bias family on every task.
use super::figures::{learning_curves, priors_figure};
use super::learned::Missing;
use crate::sweep::{Plan, RunSpec};
use at5::data::TaskKind;
use at5::report::{
    Better, Cell, LineOpts, Series, Table, difference_phrase, line_chart, mean_std, write_atomic,
    write_json,
};
use at5::train::{Dial, Preset, RunRecord, RunRequest};
use std::fmt::Write as _;
use std::path::Path;

/// The rows: the paper's four synthetic settings, each a task and its dial.
pub const TASKS: [(&str, (TaskKind, Dial)); 4] = [
    ("reber", (TaskKind::Reber, Dial::NONE)),
    ("process50", (TaskKind::Process50, Dial::NONE)),
    ("adding-100", (TaskKind::Adding, Dial::length(100))),
    ("adding-500", (TaskKind::Adding, Dial::length(500))),
];

/// The columns: the paper's methods and ablations, then the baselines.
pub const BIASES: [&str; 9] = [
    "none",
    "t5",
    "t5-nob",
    "at5",
    "at5-nob",
    "alibi",
    "kerple-log",
    "fire",
    "sinusoidal",
];

/// Every task × family × seed of the paper's comparison for `preset`.
pub fn plan(preset: Preset, seeds: u64, biases: &[String]) -> Plan {
    let mut specs = Vec::new();
    for (group, (task, dial)) in TASKS {
        for bias in biases {
            for seed in 1..=seeds {
                // Every row at the preset's own sizes: since the last block computes only the
                // pooled row, Adding-500 no longer needs a reduced quick budget.
                let run = RunRequest::new(task, bias, preset, seed).with_dial(dial);
                specs.push(RunSpec::new(group, run));
            }
        }
    }
    Plan::new("reproduce", preset.name(), specs)
}

/// The rows of [`TASKS`] that `plan` has runs of, in table order.
fn planned_tasks(plan: &Plan) -> impl Iterator<Item = &'static str> + '_ {
    TASKS
        .iter()
        .map(|(group, _)| *group)
        .filter(|g| plan.specs.iter().any(|s| s.group == *g))
}

/// Test metric (%) at the best-dev epoch of each finished run of (group, bias).
fn cell(plan: &Plan, recs: &[Option<RunRecord>], group: &str, bias: &str) -> Vec<f64> {
    crate::sweep::best_test_percent(&plan.runs(recs, group, bias))
}

/// Writes table.md, results.json, figures/*.svg and README.md under `root`. `missing`: what
/// the priors figures do with a finished run whose prior is not there.
pub fn report(
    root: &Path,
    plan: &Plan,
    recs: &[Option<RunRecord>],
    wall_seconds: f64,
    missing: Missing,
) -> Result<String, String> {
    let biases: Vec<&str> = BIASES
        .iter()
        .copied()
        .filter(|b| plan.specs.iter().any(|s| s.bias == *b))
        .collect();
    let mut table = Table::new("task", biases.iter().copied(), 1)
        .bold_best(Better::Higher)
        .extra_column("Bayes ceiling");
    let mut summary = Vec::new();
    for group in planned_tasks(plan) {
        let cells: Vec<Cell> = biases
            .iter()
            .map(|b| {
                let xs = cell(plan, recs, group, b);
                Cell::of_samples(&xs)
            })
            .collect();
        let bayes = plan
            .specs
            .iter()
            .zip(recs)
            .filter(|(s, _)| s.group == group)
            .find_map(|(_, r)| r.as_ref()?.task_stats.bayes_accuracy)
            .map_or("—".to_string(), |b| format!("{:.1}", 100.0 * b));
        for (b, c) in biases.iter().zip(&cells) {
            if let Cell::Stat(m, s) = c {
                summary.push((group, *b, *m, *s));
            }
        }
        table.row_with_extras(group, cells, [bayes]);
    }
    let md = table.to_markdown();
    let effort = effort_table(plan, recs, &biases);
    let figdir = root.join("figures");
    write_atomic(&root.join("table.md"), md.as_bytes())?;
    let json: Vec<&RunRecord> = recs.iter().flatten().collect();
    write_json(&root.join("results.json"), &json)?;

    // Learning curves of seed 1, one figure per task; priors of the learned families.
    for (group, _) in TASKS {
        let runs: Vec<(String, &RunRecord)> = plan
            .specs
            .iter()
            .zip(recs)
            .filter(|(s, _)| s.group == group && s.seed == 1)
            .filter_map(|(s, r)| Some((s.bias.clone(), r.as_ref()?)))
            .collect();
        learning_curves(
            &figdir.join(format!("curves-{group}.svg")),
            &format!("{group}: dev accuracy during training (seed 1)"),
            &runs,
        )?;
        let learned: Vec<&RunSpec> = plan
            .specs
            .iter()
            .filter(|s| s.group == group && s.seed == 1)
            .filter(|s| {
                [
                    "t5",
                    "t5-nob",
                    "at5",
                    "at5-nob",
                    "alibi",
                    "kerple-log",
                    "fire",
                ]
                .contains(&s.bias.as_str())
            })
            .collect();
        priors_figure(
            &figdir.join(format!("priors-{group}.svg")),
            &format!("{group}: prior of the pooled query per head after training (seed 1)"),
            root,
            &learned,
            missing,
        )?;
    }
    // AT5's saturation distances over training, one line per (task, head), n ≤ 0 side.
    let mut sat = Vec::new();
    for (s, r) in plan.specs.iter().zip(recs) {
        let Some(r) = r else { continue };
        if s.bias != "at5" || s.seed != 1 {
            continue;
        }
        let heads = r
            .epochs
            .first()
            .and_then(|e| e.per_head.get("beta"))
            .map_or(0, <[f64]>::len);
        for h in 0..heads {
            let pts = r
                .epochs
                .iter()
                .filter_map(|e| Some((e.epoch as f64, 1.0 / e.per_head.get("beta")?[h].max(1e-9))))
                .collect();
            sat.push(Series::new(format!("{} head {h}", s.group), pts));
        }
    }
    if !sat.is_empty() {
        line_chart(
            &figdir.join("at5-saturation.svg"),
            "AT5: saturation distance 1/beta_h of the backward (n ≤ 0) soft bucket",
            "epoch",
            "1/beta_h (positions)",
            &sat,
            LineOpts::default(),
        )?;
    }
    let mut readme = readme(plan, &md, &effort, &summary, wall_seconds, recs);
    // What a person wrote below the marker (the reading of the numbers) survives a rebuild.
    if let Ok(old) = std::fs::read_to_string(root.join("README.md"))
        && let Some(at) = old.find(KEPT_MARKER)
    {
        readme.push('\n');
        readme.push_str(&old[at..]);
    }
    write_atomic(&root.join("README.md"), readme.as_bytes())?;
    Ok(md)
}

/// Per task and family, the finished runs' mean best-dev epoch out of their epochs and their
/// mean training minutes: when a family peaks within its budget, and what a run costs.
fn effort_table(plan: &Plan, recs: &[Option<RunRecord>], biases: &[&str]) -> String {
    let mut table = Table::new("task", biases.iter().copied(), 0);
    for group in planned_tasks(plan) {
        let cells: Vec<Cell> = biases
            .iter()
            .map(|b| {
                let runs = plan.runs(recs, group, b);
                let best: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| Some(r.best.as_ref()?.epoch as f64))
                    .collect();
                if best.is_empty() {
                    return Cell::Missing;
                }
                let mean = |xs: &[f64]| mean_std(xs).0;
                let epochs: Vec<f64> = runs.iter().map(|r| r.epochs.len() as f64).collect();
                let minutes: Vec<f64> = runs.iter().map(|r| r.train_seconds / 60.0).collect();
                Cell::Text(format!(
                    "{:.0}/{:.0}, {:.1} min",
                    mean(&best),
                    mean(&epochs),
                    mean(&minutes)
                ))
            })
            .collect();
        table.row(group, cells);
    }
    table.to_markdown()
}

/// The `reproduce` command that plans exactly `plan`'s runs: its families, rows and extra
/// `train` flags read back from the runs, and checked by planning them again. `None` for a plan
/// no command makes (edited by hand, or written by another version).
pub fn command(plan: &Plan) -> Option<String> {
    let preset = Preset::from_name(&plan.preset).ok()?;
    let first = plan.specs.first()?;
    let seeds = plan.specs.iter().map(|s| s.seed).max()?;
    let mut biases: Vec<String> = Vec::new();
    let mut tasks: Vec<&str> = Vec::new();
    for s in &plan.specs {
        if !biases.contains(&s.bias) {
            biases.push(s.bias.clone());
        }
        if !tasks.contains(&s.group.as_str()) {
            tasks.push(&s.group);
        }
    }
    // The extra flags are what the first run has beyond the plain request for its cell.
    let (_, (task, dial)) = TASKS.iter().find(|(g, _)| *g == first.group)?;
    let plain = RunRequest::new(*task, &first.bias, preset, first.seed).with_dial(*dial);
    let plain = RunSpec::new(&first.group, plain).flags();
    let extra = first.flags().strip_prefix(plain.as_slice())?.join(" ");
    let mut again = self::plan(preset, seeds, &biases);
    again.specs.retain(|s| tasks.contains(&s.group.as_str()));
    if !extra.is_empty() {
        crate::sweep::add_flags(&mut again, &extra).ok()?;
    }
    let runs = |p: &Plan| -> Vec<(String, Vec<String>)> {
        p.specs.iter().map(|s| (s.id.clone(), s.flags())).collect()
    };
    if runs(&again) != runs(plan) {
        return None;
    }
    let mut c = format!(
        "cargo run --release -- --preset {} --seeds {seeds}",
        plan.preset
    );
    if biases != BIASES {
        let _ = write!(c, " --biases {}", biases.join(","));
    }
    if tasks.len() < TASKS.len() {
        let _ = write!(c, " --tasks {}", tasks.join(","));
    }
    if !extra.is_empty() {
        let _ = write!(c, " --train-flags \"{extra}\"");
    }
    Some(c)
}

/// `n` and the noun, plural when `n` is not 1 ("1 task", "4 tasks", "2 bias families").
fn plural(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("{n} {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

/// The line in a report's README below which `merge` and `reproduce` keep the text as it is:
/// the reading a person wrote of the numbers above it.
pub const KEPT_MARKER: &str = "<!-- written by hand below: merge keeps it -->";

fn readme(
    plan: &Plan,
    md: &str,
    effort: &str,
    summary: &[(&str, &str, f64, f64)],
    wall: f64,
    recs: &[Option<RunRecord>],
) -> String {
    let done = recs.iter().flatten().count();
    let seeds = plan.specs.iter().map(|s| s.seed).max().unwrap_or(0);
    let mut r = String::new();
    let _ = writeln!(r, "# `reproduce` — preset `{}`\n", plan.preset);
    let families = plan
        .specs
        .iter()
        .map(|s| &s.bias)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let tasks = planned_tasks(plan).count();
    let timing = if wall > 0.0 {
        format!(
            "this invocation took {:.1} minutes of wall time (runs finished earlier are reused, \
             not re-timed)",
            wall / 60.0
        )
    } else {
        "this report was rebuilt by `merge` from the finished runs' records".to_string()
    };
    // A fold from +0: `sum` of no f64 is -0, which would print as "-0.0 minutes".
    let train_s = recs.iter().flatten().fold(0.0, |t, r| t + r.train_seconds);
    let _ = writeln!(
        r,
        "Produced by {}: {done} of {} runs finished ({}); {timing}. The finished runs trained \
         for {:.1} minutes in total.\n",
        command(plan).map_or_else(
            || format!(
                "`reproduce --preset {}` (the runs of plan-reproduce.json)",
                plan.preset
            ),
            |c| format!("`{c}`")
        ),
        plan.specs.len(),
        [
            plural(tasks, "task"),
            plural(families, "bias family"),
            plural(seeds as usize, "seed")
        ]
        .join(" × "),
        train_s / 60.0
    );
    let _ = writeln!(
        r,
        "Each cell: test accuracy (%) at the epoch of best dev accuracy, mean ± std over seeds \
         (adding: fraction of predictions within 0.04 of the target). Best per row in bold.\n"
    );
    r.push_str(md);
    let _ = writeln!(
        r,
        "\nEpoch of best dev accuracy, mean over seeds / the runs' epochs, and training minutes \
         per run (mean; one core each, the record's `train_seconds`):\n"
    );
    r.push_str(effort);
    let _ = writeln!(r, "\n## What it shows\n");
    for (group, _) in TASKS {
        let mut row: Vec<_> = summary.iter().filter(|s| s.0 == group).collect();
        if row.is_empty() {
            continue;
        }
        row.sort_by(|a, b| b.2.total_cmp(&a.2));
        let get = |b: &str| row.iter().find(|s| s.1 == b).map(|s| s.2);
        let mut line = format!("- **{group}**: best {} ({:.1}%)", row[0].1, row[0].2);
        if let (Some(a), Some(t)) = (get("at5"), get("t5")) {
            let (xa, xt) = (
                cell(plan, recs, group, "at5"),
                cell(plan, recs, group, "t5"),
            );
            let _ = write!(
                line,
                "; AT5 {a:.1}% vs T5 {t:.1}% ({})",
                difference_phrase(&xa, &xt)
            );
        }
        if let Some(n) = get("none") {
            let _ = write!(line, "; no position information {:.1}%", n);
        }
        line.push('.');
        let _ = writeln!(r, "{line}");
    }
    let _ = writeln!(
        r,
        "\nFigures in `figures/`: `curves-<task>.svg` (dev accuracy per epoch, seed 1), \
         `priors-<task>.svg` (the learned prior of the pooled query per head, seed 1), \
         `at5-saturation.svg` (AT5's 1/beta_h over training). Per-run records and checkpoints are \
         in `runs/<task>-<bias>-s<seed>/`; `results.json` holds every record."
    );
    r
}
