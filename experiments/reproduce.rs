//! `reproduce` (the default binary): the paper's synthetic-task table, every bias on every task.
use at5::cli::{init_threads, usage_error};
use at5::experiments::reproduce;
use at5::sweep;
use at5::train::Preset;
use clap::Parser;
use std::path::PathBuf;
use std::time::Instant;

/// Reproduce the paper's comparison of position biases on its synthetic tasks.
#[derive(Parser, Debug)]
#[command(name = "reproduce", version)]
struct Cli {
    /// quick (minutes, reduced sizes) or paper (the paper's sizes and epochs).
    #[arg(long, default_value = "quick")]
    preset: String,
    /// Seeds per cell (default: 2 for quick, 5 for paper).
    #[arg(long)]
    seeds: Option<u64>,
    /// Comma-separated bias families (default: all nine).
    #[arg(long)]
    biases: Option<String>,
    /// Output directory (default results/<preset>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Write one `train` command per unfinished run to FILE instead of running them.
    #[arg(long)]
    emit_jobs: Option<PathBuf>,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[arg(long)]
    quiet: bool,
}

fn main() {
    let cli = Cli::parse();
    init_threads(cli.threads);
    let preset = Preset::from_name(&cli.preset).unwrap_or_else(|e| usage_error(e));
    let seeds = cli
        .seeds
        .unwrap_or(if preset == Preset::Paper { 5 } else { 2 });
    if seeds == 0 {
        usage_error("--seeds must be at least 1");
    }
    let biases: Vec<String> = match &cli.biases {
        Some(b) => b.split(',').map(|s| s.trim().to_string()).collect(),
        None => reproduce::BIASES.iter().map(|s| s.to_string()).collect(),
    };
    for b in &biases {
        if !reproduce::BIASES.contains(&b.as_str()) {
            usage_error(format!(
                "--biases: unknown family `{b}`; expected some of {}",
                reproduce::BIASES.join(",")
            ));
        }
    }
    let root = cli
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/{}", preset.name())));
    let plan = reproduce::plan(preset, seeds, &biases);
    sweep::validate(&plan.specs).unwrap_or_else(|e| usage_error(e));
    sweep::write_plan(&root, &plan).unwrap_or_else(|e| usage_error(e));
    if let Some(file) = &cli.emit_jobs {
        sweep::emit_unfinished(&plan, &root, file).unwrap_or_else(|e| usage_error(e));
        return;
    }
    let start = Instant::now();
    let recs = sweep::run_with_progress(&plan, &root, cli.jobs, cli.quiet)
        .unwrap_or_else(|e| usage_error(e));
    match reproduce::report(&root, &plan, &recs, start.elapsed().as_secs_f64()) {
        Ok(md) => println!(
            "{md}\nwrote {}/README.md, table.md, results.json, figures/",
            root.display()
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
