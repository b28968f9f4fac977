//! `merge`: build the tables and figures of every experiment planned in a directory from the
//! result files of its runs (e.g. after an emitted job list ran elsewhere).
use at5::cli::usage_error;
use at5::experiments::{ablate, extrapolate, init, range, reproduce};
use at5::sweep::{self, Plan};
use at5::train::RunRecord;
use clap::Parser;
use std::path::{Path, PathBuf};

/// Rebuild tables and figures from finished runs.
#[derive(Parser, Debug)]
#[command(name = "merge", version)]
struct Cli {
    /// An experiment's output directory (holding plan-*.json and runs/).
    root: PathBuf,
}

/// What `merge` calls to rebuild one experiment's reports from its plan and records.
type Report = fn(&Path, &Plan, &[Option<RunRecord>]) -> Result<String, String>;

/// The experiments `merge` knows, by the name their plans carry.
const EXPERIMENTS: [&str; 5] = ["reproduce", "sweep", "ablate", "extrapolate", "init-study"];

fn report_of(experiment: &str) -> Option<Report> {
    Some(match experiment {
        // Its report states the run's wall time, which a merge does not have.
        "reproduce" => |root, plan, recs| reproduce::report(root, plan, recs, 0.0),
        "sweep" => range::report,
        "ablate" => ablate::report,
        "extrapolate" => extrapolate::report,
        "init-study" => init::report,
        _ => return None,
    })
}

fn main() {
    let cli = at5::cli::parse::<Cli>();
    at5::cli::init_kernels();
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
            println!(
                "{}: none of its {} runs has finished; its reports are left as they were",
                plan.experiment,
                plan.specs.len()
            );
            continue;
        }
        let res = report(&cli.root, plan, recs);
        match res {
            Ok(md) => println!(
                "{md}\n{}: {} of {} runs not finished",
                plan.experiment,
                recs.len() - finished(recs),
                plan.specs.len()
            ),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
