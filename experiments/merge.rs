//! `merge`: build an experiment's tables and figures from the result files of its runs.
use at5::cli::usage_error;
use at5::experiments::{range, reproduce};
use at5::report::read_json;
use at5::sweep::{self, PLAN, Plan};
use clap::Parser;
use std::path::PathBuf;

/// Rebuild tables and figures from finished runs (e.g. after an emitted job list ran).
#[derive(Parser, Debug)]
#[command(name = "merge", version)]
struct Cli {
    /// The experiment's output directory (holding plan.json and runs/).
    root: PathBuf,
}

fn main() {
    let cli = Cli::parse();
    let plan: Plan = read_json(&cli.root.join(PLAN)).unwrap_or_else(|e| usage_error(e));
    let recs: Vec<_> = plan
        .specs
        .iter()
        .map(|s| sweep::finished(&cli.root, s))
        .collect();
    let missing = recs.iter().filter(|r| r.is_none()).count();
    let res = match plan.experiment.as_str() {
        "reproduce" => reproduce::report(&cli.root, &plan, &recs, 0.0),
        "sweep" => range::report(&cli.root, &plan, &recs),
        other => usage_error(format!(
            "{}: unknown experiment `{other}`",
            cli.root.join(PLAN).display()
        )),
    };
    match res {
        Ok(md) => println!("{md}\n{missing} of {} runs missing", plan.specs.len()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
