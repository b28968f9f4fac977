//! `extrapolate`: train at length L, test at 2L and 4L, per bias family.
use at5_app::experiments::learned::Missing;
use at5_app::experiments::{extrapolate, reproduce};
use at5_app::sweep::{self, SweepArgs};
use clap::Parser;

/// Length extrapolation of every bias family on lag-k (L = 32, k = 4) and Adding-50.
#[derive(Parser, Debug)]
#[command(name = "extrapolate", version)]
struct Cli {
    #[command(flatten)]
    sweep: SweepArgs,
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Comma-separated bias families (default: all nine).
    #[arg(long)]
    biases: Option<String>,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    at5_app::cli::check_seeds(cli.seeds);
    let biases = at5_app::cli::family_list(cli.biases.as_deref(), &reproduce::BIASES);
    let plan = extrapolate::plan(cli.sweep.preset(), cli.seeds, &biases);
    sweep::drive(plan, &cli.sweep, |root, plan, recs, _| {
        extrapolate::report(root, plan, recs, Missing::Refuse)
    });
}
