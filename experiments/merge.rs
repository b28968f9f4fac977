//! `merge`: build the tables and figures of every experiment planned in a directory from the
//! result files of its runs (e.g. after an emitted job list ran elsewhere).
use at5::cli::usage_error;
use at5::experiments::{ablate, extrapolate, init, range, reproduce};
use at5::sweep;
use clap::Parser;
use std::path::PathBuf;

/// Rebuild tables and figures from finished runs.
#[derive(Parser, Debug)]
#[command(name = "merge", version)]
struct Cli {
    /// An experiment's output directory (holding plan-*.json and runs/).
    root: PathBuf,
}

fn main() {
    let cli = Cli::parse();
    let plans = sweep::plans_in(&cli.root).unwrap_or_else(|e| usage_error(e));
    for plan in plans {
        let recs: Vec<_> = plan
            .specs
            .iter()
            .map(|s| sweep::finished(&cli.root, s))
            .collect();
        let missing = recs.iter().filter(|r| r.is_none()).count();
        let res = match plan.experiment.as_str() {
            "reproduce" => reproduce::report(&cli.root, &plan, &recs, 0.0),
            "sweep" => range::report(&cli.root, &plan, &recs),
            "ablate" => ablate::report(&cli.root, &plan, &recs),
            "extrapolate" => extrapolate::report(&cli.root, &plan, &recs),
            "init-study" => init::report(&cli.root, &plan, &recs),
            other => usage_error(format!(
                "{}: unknown experiment `{other}`",
                cli.root.display()
            )),
        };
        match res {
            Ok(md) => println!(
                "{md}\n{}: {missing} of {} runs missing",
                plan.experiment,
                plan.specs.len()
            ),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
