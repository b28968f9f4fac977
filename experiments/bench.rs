//! `bench`: training-step timings of the benchmark configs, GEMM throughput, and a scaling
//! sweep (the fixtures and measurements live in `at5_app::bench`).
use at5_app::bench::{BenchArgs, bench_eval, bench_gemm, bench_scaling, bench_steps};
use at5_app::cli::{init_threads, usage_error};
use clap::Parser;

/// Time training steps (forward, backward, Adam) of a benchmark config on a random batch.
#[derive(Parser, Debug)]
#[command(name = "bench", version)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>().bench;
    cli.check().unwrap_or_else(|e| usage_error(e));
    init_threads(cli.threads);
    let threads = rayon::current_num_threads();
    let r = if cli.gemm {
        bench_gemm(&cli, threads);
        Ok(())
    } else if cli.eval {
        bench_eval(&cli, threads)
    } else if cli.scaling {
        bench_scaling(&cli, threads)
    } else {
        bench_steps(&cli, threads)
    };
    if let Err(e) = r {
        usage_error(e);
    }
}
