//! `reproduce` (the default binary): the paper's synthetic-task table, every bias on every task.
use at5::train::Preset;
use at5_app::experiments::learned::Missing;
use at5_app::experiments::reproduce;
use at5_app::sweep::{self, SweepArgs};
use clap::Parser;

/// Reproduce the paper's comparison of position biases on its synthetic tasks.
#[derive(Parser, Debug)]
#[command(name = "reproduce", version)]
struct Cli {
    #[command(flatten)]
    sweep: SweepArgs,
    /// Seeds per cell (default: 2 for quick, 5 for paper).
    #[arg(long)]
    seeds: Option<u64>,
    /// Comma-separated bias families (default: all nine).
    #[arg(long)]
    biases: Option<String>,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    let preset = cli.sweep.preset();
    let seeds = cli
        .seeds
        .unwrap_or(if preset == Preset::Paper { 5 } else { 2 });
    at5_app::cli::check_seeds(seeds);
    let biases = at5_app::cli::family_list(cli.biases.as_deref(), &reproduce::BIASES);
    let plan = reproduce::plan(preset, seeds, &biases);
    sweep::drive(plan, &cli.sweep, |root, plan, recs, wall| {
        reproduce::report(root, plan, recs, wall, Missing::Refuse)
    });
}
