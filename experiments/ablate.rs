//! `ablate`: no-bucket ablations beside their bucketed versions, and the head-prior ablation.
use at5_app::experiments::ablate;
use at5_app::experiments::learned::Missing;
use at5_app::sweep::{self, SweepArgs};
use clap::Parser;

/// T5 vs T5-NoB and AT5 vs AT5-NoB on the reproduce tasks (sharing reproduce's runs when given
/// the same output directory), then heads' biases restored one at a time.
#[derive(Parser, Debug)]
#[command(name = "ablate", version)]
struct Cli {
    #[command(flatten)]
    sweep: SweepArgs,
    #[arg(long, default_value_t = 2)]
    seeds: u64,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    at5_app::cli::check_seeds(cli.seeds);
    let plan = ablate::plan(cli.sweep.preset(), cli.seeds);
    sweep::drive(plan, &cli.sweep, |root, plan, recs, _| {
        ablate::report(root, plan, recs, Missing::Refuse)
    });
}
