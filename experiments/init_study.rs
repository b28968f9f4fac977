//! `init-study`: AT5 with the paper's MLP init against the alive init, 5 seeds per cell.
use at5_app::cli::usage_error;
use at5_app::experiments::{flat_start, init};
use at5_app::sweep::{self, SweepArgs};
use clap::Parser;

/// AT5 on lag-k (L = 64; k = 4, 16, 40) and Process-50, each with `--at5-init paper` and
/// `--at5-init alive`: seeds solved, final accuracy, epochs to 95 % of the final dev accuracy,
/// and the first epoch's bias gradients (docs/why-at5-starts-flat.md).
#[derive(Parser, Debug)]
#[command(name = "init-study", version)]
struct Cli {
    #[command(flatten)]
    sweep: SweepArgs,
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Lag-k's budget in epochs.
    #[arg(long, default_value_t = init::LAG_EPOCHS)]
    lag_epochs: usize,
    /// Instead of training, print how the bias gradients at init scale with the paper init's
    /// std, the MLP widths and the length (f64, one batch, mean over --seeds seeds).
    #[arg(long)]
    scaling: bool,
    /// Instead of training, print what AT5's bias sees at its first step at the paper's sizes:
    /// per task and MLP init std, each MLP tensor's gradient, the bias's range over offsets,
    /// the dropout-noise share and Adam's first step (f64, mean over --seeds init seeds).
    #[arg(long, conflicts_with = "scaling")]
    flat_start: bool,
}

fn main() {
    let matches = at5_app::cli::matches::<Cli>();
    let cli: Cli = at5_app::cli::from_matches(&matches);
    at5_app::cli::check_seeds(cli.seeds);
    if cli.scaling || cli.flat_start {
        let mode = if cli.scaling { "scaling" } else { "flat-start" };
        let used = [mode, "seeds", "threads"];
        let given = at5_app::cli::flags_given::<Cli>(&matches);
        if let Some(f) = given.iter().find(|f| !used.contains(&f.as_str())) {
            usage_error(format!("--{f} does nothing with --{mode}; drop it"));
        }
        at5_app::cli::init_threads(cli.sweep.threads);
        let report = if cli.scaling {
            init::scaling_report(cli.seeds)
        } else {
            flat_start::report(cli.seeds)
        };
        match report {
            Ok(md) => at5_app::out!("{md}"),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if cli.lag_epochs == 0 {
        usage_error("--lag-epochs must be at least 1");
    }
    let plan = init::plan(cli.sweep.preset(), cli.seeds, cli.lag_epochs);
    sweep::drive(plan, &cli.sweep, |root, plan, recs, _| {
        init::report(root, plan, recs)
    });
}
