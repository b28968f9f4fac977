//! `buckets`: T5's fixed bucket staircase beside AT5's soft bucket f(n) for a few saturation
//! distances, as a table and a figure (docs/theory.md's).
use at5::report::Table;
use at5::train::{staircase, staircase_figure};
use at5_app::cli::usage_error;
use clap::Parser;
use std::path::PathBuf;

/// Print T5's bucket and AT5's f(n) = 1 - exp(-|n|/d) for the offsets left of the query, and
/// draw them with the lag k marked.
#[derive(Parser, Debug)]
#[command(name = "buckets", version)]
struct Cli {
    /// The sequence length L: offsets 0 ..= L - 1 to the left are shown.
    #[arg(long, default_value_t = 32)]
    len: usize,
    /// T5's bucket count (both directions together).
    #[arg(long, default_value_t = 32)]
    num_buckets: usize,
    /// T5's distance where the last bucket starts.
    #[arg(long, default_value_t = 32)]
    max_distance: usize,
    /// The lag k marked on the figure.
    #[arg(long, default_value_t = 16)]
    lag: usize,
    /// AT5's saturation distances 1/beta, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [4.0, 16.0, 64.0])]
    distances: Vec<f64>,
    /// Where the SVG goes (none: the table only).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    if !(2..=4096).contains(&cli.len) {
        usage_error(format!("--len {}: must be between 2 and 4096", cli.len));
    }
    if cli.lag >= cli.len {
        usage_error(format!(
            "--lag {}: must be below --len {}",
            cli.lag, cli.len
        ));
    }
    if let Some(d) = cli.distances.iter().find(|d| !(d.is_finite() && **d > 0.0)) {
        usage_error(format!("--distances: {d} is not a positive distance"));
    }
    at5::position::check_t5_config(cli.num_buckets, cli.max_distance, true)
        .unwrap_or_else(|e| usage_error(format!("--num-buckets/--max-distance: {e}")));
    let rows = staircase(
        cli.num_buckets,
        cli.max_distance,
        cli.len - 1,
        &cli.distances,
    );
    let mut cols = vec!["T5 bucket".to_string()];
    cols.extend(cli.distances.iter().map(|d| format!("f, 1/beta = {d}")));
    let mut table = Table::new("n", cols, 0);
    for r in &rows {
        let mut cells = vec![r.bucket.to_string()];
        cells.extend(r.f.iter().map(|f| format!("{f:.3}")));
        table.row(format!("-{}", r.distance), cells);
    }
    at5_app::outln!(
        "T5 ({} buckets, max_distance {}) and AT5's f(n) = 1 - exp(-|n| / d), offsets n <= 0:",
        cli.num_buckets,
        cli.max_distance
    );
    at5_app::out!("{}", table.to_markdown());
    if let Some(out) = &cli.out {
        staircase_figure(
            out,
            (cli.num_buckets, cli.max_distance),
            cli.len,
            cli.lag,
            &cli.distances,
        )
        .unwrap_or_else(|e| usage_error(e));
        at5_app::outln!("wrote {}", out.display());
    }
}
