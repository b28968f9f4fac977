//! `sweep`: accuracy and AT5's learned bucketization as the dependency range grows.
use at5_app::cli::usage_error;
use at5_app::experiments::learned::Missing;
use at5_app::experiments::range::{self, Dial};
use at5_app::sweep::{self, SweepArgs};
use clap::Parser;

/// Sweep the dependency range: Adding-T over T and lag-k over k (at L = 128).
#[derive(Parser, Debug)]
#[command(name = "sweep", version)]
struct Cli {
    #[command(flatten)]
    sweep: SweepArgs,
    /// adding, lagk, or both.
    #[arg(long, default_value = "both")]
    task: String,
    /// Comma-separated ranges (T for adding, k for lag-k); default the full grid.
    #[arg(long)]
    ranges: Option<String>,
    /// Comma-separated bias families.
    #[arg(long, default_value = "t5,at5,alibi,fire")]
    biases: String,
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Lag-k's sequence length L (every k must be below it) [default: 128].
    #[arg(long)]
    lag_len: Option<usize>,
}

fn parse_list(s: &str) -> Result<Vec<usize>, String> {
    let mut list = Vec::new();
    for x in s.split(',') {
        let v = x
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("--ranges: `{x}` is not a number"))?;
        if list.contains(&v) {
            return Err(format!("--ranges: {v} is given twice"));
        }
        list.push(v);
    }
    Ok(list)
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    let preset = cli.sweep.preset();
    let given = cli
        .ranges
        .as_deref()
        .map(parse_list)
        .transpose()
        .unwrap_or_else(|e| usage_error(e));
    let dials: Vec<(Dial, Vec<usize>)> = match cli.task.as_str() {
        "adding" => vec![(Dial::Adding, given.unwrap_or(range::ADDING_T.to_vec()))],
        "lagk" => vec![(Dial::Lag, given.unwrap_or(range::LAGS.to_vec()))],
        "both" if given.is_none() => vec![
            (Dial::Adding, range::ADDING_T.to_vec()),
            (Dial::Lag, range::LAGS.to_vec()),
        ],
        "both" => usage_error("--ranges needs --task adding or --task lagk"),
        o => usage_error(format!("--task {o}: expected adding, lagk or both")),
    };
    at5_app::cli::check_seeds(cli.seeds);
    let biases = at5_app::cli::family_list(Some(&cli.biases), at5::position::FAMILIES);
    if cli.lag_len.is_some() && !dials.iter().any(|(d, _)| *d == Dial::Lag) {
        usage_error("--lag-len is lag-k's length: give it with --task lagk or both, or drop it");
    }
    let lag_len = cli.lag_len.unwrap_or(range::LAG_LEN);
    let plan = range::plan(&dials, (&biases, cli.seeds), preset, lag_len);
    sweep::drive(plan, &cli.sweep, |root, plan, recs, _| {
        range::report(root, plan, recs, Missing::Refuse)
    });
}
