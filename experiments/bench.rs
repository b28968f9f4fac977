//! `bench`: training-step timings of the benchmark configs, GEMM throughput, and a scaling
//! sweep (the fixtures and measurements live in `at5::bench`).
use at5::bench::{BenchArgs, bench_gemm, bench_scaling, bench_steps};
use at5::cli::{init_allocator, init_threads, usage_error};
use clap::Parser;

/// Time training steps (forward, backward, Adam) of a benchmark config on a random batch.
#[derive(Parser, Debug)]
#[command(name = "bench")]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn main() {
    let cli = Cli::parse().bench;
    if cli.steps == 0 {
        usage_error("--steps must be at least 1 (the timings are over the timed steps)");
    }
    init_allocator();
    init_threads(cli.threads);
    let threads = rayon::current_num_threads();
    let r = if cli.gemm {
        bench_gemm(&cli, threads);
        Ok(())
    } else if cli.scaling {
        bench_scaling(&cli, threads)
    } else {
        bench_steps(&cli, threads)
    };
    if let Err(e) = r {
        usage_error(e);
    }
}
