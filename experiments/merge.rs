//! `merge`: build the tables and figures of every experiment planned in a directory from the
//! result files of its runs (e.g. after an emitted job list ran elsewhere).
use at5::train::RunRecord;
use at5_app::cli::usage_error;
use at5_app::experiments::learned::Missing;
use at5_app::experiments::{ablate, extrapolate, init, range, reproduce};
use at5_app::sweep::{self, Plan};
use clap::Parser;
use std::path::{Path, PathBuf};

/// Rebuild tables and figures from finished runs.
#[derive(Parser, Debug)]
#[command(name = "merge", version)]
struct Cli {
    /// An experiment's output directory (holding plan-*.json and runs/).
    root: PathBuf,
    /// Build the reports even where a finished run's learned prior, head ablation or
    /// extrapolation can be neither read (its prior.json, head-ablation.json or
    /// extrapolate.json) nor computed (no checkpoint here): those runs are left out of that
    /// figure or table, each named on standard error. Without it such a run fails the merge
    /// and the reports stay as they were.
    #[arg(long)]
    allow_missing: bool,
}

/// What `merge` calls to rebuild one experiment's reports from its plan and records.
type Report = fn(&Path, &Plan, &[Option<RunRecord>], Missing) -> Result<String, String>;

/// The experiments `merge` knows, by the name their plans carry.
const EXPERIMENTS: [&str; 5] = ["reproduce", "sweep", "ablate", "extrapolate", "init-study"];

fn report_of(experiment: &str) -> Option<Report> {
    Some(match experiment {
        // Its report states the run's wall time, which a merge does not have.
        "reproduce" => {
            |root, plan, recs, missing| reproduce::report(root, plan, recs, 0.0, missing)
        }
        "sweep" => range::report,
        "ablate" => ablate::report,
        "extrapolate" => extrapolate::report,
        // Its reports draw nothing a checkpoint computes.
        "init-study" => |root, plan, recs, _| init::report(root, plan, recs),
        _ => return None,
    })
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    at5_app::cli::init_kernels();
    // One writer per folder: a sweep still running here would rewrite the reports under it.
    let _lock = at5::report::lock_folder(&cli.root).unwrap_or_else(|e| usage_error(e));
    let plans = sweep::plans_in(&cli.root).unwrap_or_else(|e| usage_error(e));
    sweep::check_report_paths(&cli.root).unwrap_or_else(|e| usage_error(e));
    let reports: Vec<Report> = plans
        .iter()
        .map(|p| {
            report_of(&p.experiment).unwrap_or_else(|| {
                usage_error(format!(
                    "{}: unknown experiment `{}` (expected one of {})",
                    cli.root.display(),
                    p.experiment,
                    EXPERIMENTS.join(", ")
                ))
            })
        })
        .collect();
    // Every record is read and checked before any report is written, so a bad one leaves the
    // reports as they were.
    let all: Vec<_> = plans
        .iter()
        .map(|plan| sweep::records_to_merge(&cli.root, plan).unwrap_or_else(|e| usage_error(e)))
        .collect();
    let finished = |recs: &[Option<_>]| recs.iter().filter(|r| r.is_some()).count();
    if all.iter().all(|recs| finished(recs) == 0) {
        usage_error(format!(
            "{}: none of the planned runs has finished (no finished record under {}); \
             nothing written",
            cli.root.display(),
            cli.root.join("runs").display()
        ));
    }
    for ((plan, recs), report) in plans.iter().zip(&all).zip(reports) {
        if finished(recs) == 0 {
            at5_app::outln!(
                "{}: none of its {} runs has finished; its reports are left as they were",
                plan.experiment,
                plan.specs.len()
            );
            continue;
        }
        let missing = if cli.allow_missing {
            Missing::Allow
        } else {
            Missing::Refuse
        };
        let res = report(&cli.root, plan, recs, missing);
        match res {
            Ok(md) => at5_app::outln!(
                "{md}\n{}: {} of {} runs not finished",
                plan.experiment,
                recs.len() - finished(recs),
                plan.specs.len()
            ),
            // What fails a report is what the folder holds: a finished run whose learned
            // values are neither kept nor computable, a checkpoint of another run, a file that
            // cannot be written. The figure or table concerned is left as it was.
            Err(e) => usage_error(e),
        }
    }
}
