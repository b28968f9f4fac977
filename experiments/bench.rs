//! `bench`: time training steps (forward, backward, Adam) of the benchmark configs.
use at5::cli::{init_threads, usage_error};
use at5::nn::{
    Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model, ModelConfig, OutputKind,
    Pooling, Targets,
};
use at5::optim::{Adam, AdamConfig};
use at5::position::BiasConfig;
use at5::{ParamStore, Tape};
use clap::Parser;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use std::time::Instant;

/// Time training steps of a benchmark config on random inputs.
#[derive(Parser, Debug)]
#[command(name = "bench", version)]
struct Cli {
    /// A (adding, L=100, D=256), B (classes, L=50, D=256), C (L=500, D=128, 2 layers), T (tiny).
    #[arg(long, default_value = "A")]
    config: String,
    /// Bias family (A defaults to at5 with l1=15, l2=2).
    #[arg(long, default_value = "at5")]
    bias: String,
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[arg(long, default_value_t = 20)]
    steps: usize,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

struct Shape {
    regression: bool,
    l: usize,
    b: usize,
    d: usize,
    h: usize,
    ffn: usize,
    layers: usize,
}

fn shape(name: &str) -> Option<Shape> {
    let s = |regression, l, b, d, h, ffn, layers| Shape {
        regression,
        l,
        b,
        d,
        h,
        ffn,
        layers,
    };
    Some(match name {
        "A" => s(true, 100, 64, 256, 8, 512, 1),
        "B" => s(false, 50, 64, 256, 8, 512, 1),
        "C" => s(false, 500, 32, 128, 4, 256, 2),
        "T" => s(false, 16, 8, 32, 4, 64, 1),
        _ => return None,
    })
}

/// Forward GEMM FLOPs of one step (projections, attention products, FFN, input and head);
/// backward costs twice the forward, so a step is 3× this.
fn forward_flops(s: &Shape) -> f64 {
    let (b, l, d, f) = (s.b as f64, s.l as f64, s.d as f64, s.ffn as f64);
    let per_layer =
        2.0 * b * l * d * d * 4.0 + 2.0 * b * l * l * d * 2.0 + 2.0 * b * l * d * f * 2.0;
    per_layer * s.layers as f64 + 2.0 * b * l * 2.0 * d
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let cli = Cli::parse();
    init_threads(cli.threads);
    let s = shape(&cli.config)
        .unwrap_or_else(|| usage_error(format!("--config {}: expected A, B, C or T", cli.config)));
    let mut bias = BiasConfig::from_name(&cli.bias).unwrap_or_else(|e| usage_error(e));
    if let BiasConfig::T5 { max_distance, .. } = &mut bias {
        *max_distance = s.l.max(16);
    }
    if cli.steps == 0 {
        usage_error("--steps must be at least 1");
    }
    let cfg = ModelConfig {
        input: if s.regression {
            InputKind::Features { dim: 2 }
        } else {
            InputKind::Tokens { vocab: 8 }
        },
        output: if s.regression {
            OutputKind::Regression
        } else {
            OutputKind::Classes(2)
        },
        d_model: s.d,
        heads: s.h,
        ffn: s.ffn,
        layers: s.layers,
        max_len: s.l,
        bias,
        bias_scope: BiasScope::Shared,
        pooling: Pooling::Last,
        dropout: Dropouts::NONE,
    };
    let mut store = ParamStore::<f32>::new();
    let model = Model::new(cfg, &mut store, 1).unwrap_or_else(|e| usage_error(e));
    let mut adam = Adam::<f32>::new(AdamConfig::tf(1e-3), &store);
    let rng = &mut StdRng::seed_from_u64(7);
    let n = s.b * s.l;
    let (input, targets) = if s.regression {
        let x = (0..n * 2).map(|_| rng.random_range(-1.0..1.0)).collect();
        (
            BatchInput::Features(x),
            Targets::Real((0..s.b).map(|_| rng.random_range(0.0..1.0)).collect()),
        )
    } else {
        let ids = (0..n).map(|_| rng.random_range(1..8)).collect();
        (
            BatchInput::Tokens(ids),
            Targets::Classes((0..s.b).map(|_| rng.random_range(0..2)).collect()),
        )
    };
    let batch = Batch {
        b: s.b,
        l: s.l,
        input,
        pad: vec![false; n],
    };
    let mut tape = Tape::<f32>::new();
    let (mut fw, mut bw, mut op, mut total) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for step in 0..cli.warmup + cli.steps {
        let t0 = Instant::now();
        tape.clear();
        let p = store.bind(&mut tape);
        let out = model
            .forward(&mut tape, &p, &batch, &ForwardOpts::default())
            .output;
        let loss = model.loss(&mut tape, out, &targets);
        let t1 = Instant::now();
        let g = tape.backward(loss);
        let t2 = Instant::now();
        let grads = store.grads(&p, &g);
        adam.update(&mut store, &grads);
        let t3 = Instant::now();
        if step >= cli.warmup {
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            fw.push(ms(t0, t1));
            bw.push(ms(t1, t2));
            op.push(ms(t2, t3));
            total.push(ms(t0, t3));
        }
    }
    let (mn, mx) = (
        total.iter().copied().fold(f64::INFINITY, f64::min),
        total.iter().copied().fold(0.0, f64::max),
    );
    let ms = median(&mut total);
    let flops = 3.0 * forward_flops(&s);
    let gflops = flops / (ms * 1e-3) / 1e9;
    let threads = rayon::current_num_threads();
    let (f, b, o) = (median(&mut fw), median(&mut bw), median(&mut op));
    if cli.json {
        println!(
            "{{\"config\":\"{}\",\"bias\":\"{}\",\"threads\":{threads},\"ms_per_step\":{ms:.3},\"min_ms\":{mn:.3},\"max_ms\":{mx:.3},\"forward_ms\":{f:.3},\"backward_ms\":{b:.3},\"optimizer_ms\":{o:.3},\"gflop_per_step\":{:.3},\"gflops\":{gflops:.2},\"peak_rss_mb\":{:.1}}}",
            cli.config,
            cli.bias,
            flops / 1e9,
            peak_rss_mb()
        );
    } else {
        println!(
            "config {} ({}), {threads} threads, {} steps after {} warm-up:\n  median {ms:.2} ms/step (min {mn:.2}, max {mx:.2}); forward {f:.2}, backward {b:.2}, optimizer {o:.2}\n  {:.2} GFLOP/step (GEMMs, counted analytically) → {gflops:.1} GFLOP/s; peak RSS {:.0} MB",
            cli.config,
            cli.bias,
            cli.steps,
            cli.warmup,
            flops / 1e9,
            peak_rss_mb()
        );
    }
}
