//! What a sweep refuses before it runs or merges: runs planned twice, a plan that would replace
//! results already in the folder, run and report paths of the wrong kind.

use super::{Plan, RunSpec, plan_path, plans_in};
use at5::report::read_json;
use at5::train::{self, RECORD, RunRecord, TrainConfig};
use std::path::{Path, PathBuf};

/// Checks every spec's flags, and that each run fits in memory, up front, so a typo fails
/// before hours of runs, not after.
pub fn validate(specs: &[RunSpec]) -> Result<(), String> {
    for (i, s) in specs.iter().enumerate() {
        // Two runs with one id would train into one directory and count twice in the tables.
        if specs[..i].iter().any(|o| o.id == s.id) {
            return Err(format!("run {} is planned twice", s.id));
        }
        s.config()?
            .check_planned_memory()
            .map_err(|e| format!("run {}: {e}", s.id))?;
    }
    Ok(())
}

/// `Err` when running `plan` in `root` would replace results already there: a run id the
/// experiment's earlier plan, or another experiment's plan sharing `root/runs`, defined with
/// another config (e.g. after changing `--train-flags`), or a run directory whose record is of
/// another config. The runner would
/// otherwise retrain such runs over their checkpoints and rewrite the tables without a word.
pub fn check_plan(root: &Path, plan: &Plan) -> Result<(), String> {
    let elsewhere = "use another --out, or delete them to start over";
    let config_of = |s: &RunSpec| s.config();
    // This experiment's earlier plan, and any other experiment's sharing the folder's runs/:
    // a run id they plan with other settings would be retrained over.
    for old in plans_in(root).unwrap_or_default() {
        let path = plan_path(root, &old.experiment);
        for o in &old.specs {
            let Some(n) = plan.specs.iter().find(|s| s.id == o.id) else {
                continue;
            };
            let same = o.run == n.run
                || matches!((config_of(o), config_of(n)), (Ok(a), Ok(b)) if a.normalized() == b.normalized());
            if !same {
                return Err(format!(
                    "{}: run {} was planned as `{}`, now `{}`; this would replace its \
                     results and the tables: {elsewhere}",
                    path.display(),
                    o.id,
                    o.flags().join(" "),
                    n.flags().join(" ")
                ));
            }
        }
    }
    let runs = root.join("runs");
    if runs.exists() && !runs.is_dir() {
        return Err(format!("{}: is not a folder; remove it", runs.display()));
    }
    for s in &plan.specs {
        let dir = s.dir(root);
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{}: is not a folder; remove it", dir.display()));
        }
        let path = dir.join(RECORD);
        let cfg = config_of(s)?;
        if let Ok(rec) = read_json::<RunRecord>(&path)
            && rec.config_now() != cfg.normalized()
        {
            return Err(format!(
                "{}: holds a run with other settings than `{}` ({}); this would replace it: \
                 {elsewhere}",
                path.display(),
                s.flags().join(" "),
                rec.config.first_difference(&cfg, ("there", "here"))
            ));
        }
        if dir.is_dir() {
            // A record.json or checkpoint of the wrong kind would fail the run after training.
            train::check_out_contents(&dir, &cfg, train::OutUse::Continue)?;
        }
    }
    Ok(())
}

/// The files and folder the experiments' reports write in `root`.
const REPORT_FILES: [&str; 6] = [
    "README.md",
    "table.md",
    "results.json",
    "ablate.md",
    "extrapolate.md",
    "init-study.md",
];

/// `Err` naming a report path in `root` that is of the wrong kind (`figures` a file,
/// `table.md` a folder, ...), so a run or `merge` fails before it trains or reads, not after.
pub fn check_report_paths(root: &Path) -> Result<(), String> {
    let figures = root.join("figures");
    if figures.exists() && !figures.is_dir() {
        return Err(format!("{}: is not a folder; remove it", figures.display()));
    }
    for f in REPORT_FILES {
        let p = root.join(f);
        if p.exists() && !p.is_file() {
            return Err(format!("{}: is not a file; remove it", p.display()));
        }
    }
    Ok(())
}

/// The plan a run folder belongs to: when `out` is `ROOT/runs/ID` and a plan in `ROOT` plans
/// run `ID`, `ROOT` and that run's config, so a run there is changed only as its plan says.
pub fn planned_run(out: &Path) -> Option<(PathBuf, TrainConfig)> {
    let runs = out.parent()?;
    let root = runs.parent()?;
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    if runs.file_name()? != "runs" {
        return None;
    }
    let id = out.file_name()?.to_str()?;
    let spec = plans_in(root)
        .ok()?
        .into_iter()
        .flat_map(|p| p.specs)
        .find(|s| s.id == id)?;
    Some((root.to_path_buf(), spec.config().ok()?))
}
