//! `bench`: training-step timings of the benchmark configs (the shapes the PyTorch peer runs),
//! GEMM throughput at the model's shapes, and a scaling sweep over length and batch.
use at5::nn::{
    Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model, ModelConfig, OutputKind,
    PooledHead, Pooling, Targets,
};
use at5::optim::{Adam, AdamConfig};
use at5::position::{BiasConfig, NoOptions, T5Options};
use at5::report::{fit_linear_quadratic, loglog_slope, median};
use at5::train::memory::own_status_kb;
use at5::{ParamStore, Tape, Tensor};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::time::Instant;

/// The benchmark's flags.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// A (adding, L=100, B=64, D=256), B (classes, L=50), C (classes, L=500, 2 layers), T (tiny).
    #[arg(long, default_value = "A")]
    pub config: String,
    /// Position bias: none, t5 or at5.
    #[arg(long, default_value = "at5")]
    pub bias: String,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Timed steps after warm-up.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Untimed warm-up steps.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Override the config's sequence length.
    #[arg(long)]
    pub seq_len: Option<usize>,
    /// Override the config's batch size.
    #[arg(long)]
    pub batch: Option<usize>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// GEMM GFLOP/s for square sizes and the model's shapes instead of training steps.
    #[arg(long, conflicts_with_all = ["scaling", "config", "bias", "steps", "warmup", "seq_len", "batch", "profile", "no_prune"])]
    pub gemm: bool,
    /// Step time of config A's model over L and B, with fitted exponents (its own L and B; up
    /// to 5 timed steps each).
    #[arg(long, conflicts_with_all = ["config", "warmup", "seq_len", "batch", "json", "profile"])]
    pub scaling: bool,
    /// Also print the time per op kind, forward and backward, per timed step.
    #[arg(long)]
    pub profile: bool,
    /// Time an evaluation forward of `--config` at `--batch` (default 256, the training loop's
    /// evaluation batch) both ways, on an evaluation tape and without a recorded graph
    /// (`Model::predict`), alternating, and check the two outputs are the same bits.
    #[arg(long, conflicts_with_all = ["gemm", "scaling", "json", "profile"])]
    pub eval: bool,
    /// Compute every row of the last block (the whole graph, as PyTorch runs it): the fair
    /// side-by-side comparison. By default only the pooled row is computed there, which is
    /// what a training run costs.
    #[arg(long)]
    pub no_prune: bool,
}

/// The shape of one benchmark config.
#[derive(Clone, Copy, Debug)]
struct Shape {
    name: &'static str,
    adding: bool,
    l: usize,
    b: usize,
    d: usize,
    h: usize,
    ffn: usize,
    layers: usize,
}

fn shape(name: &str) -> Result<Shape, String> {
    let s = |name, adding, l, b, d, h, ffn, layers| Shape {
        name,
        adding,
        l,
        b,
        d,
        h,
        ffn,
        layers,
    };
    Ok(match name {
        "A" | "a" => s("A", true, 100, 64, 256, 8, 512, 1),
        "B" | "b" => s("B", false, 50, 64, 256, 8, 512, 1),
        "C" | "c" => s("C", false, 500, 32, 128, 4, 256, 2),
        "T" | "t" => s("T", false, 16, 8, 32, 4, 64, 1),
        other => return Err(format!("--config {other}: expected A, B, C or T")),
    })
}

/// The most steps `--steps` and `--warmup` take: minutes of the largest config already.
pub const MAX_STEPS: usize = 100_000;

impl BenchArgs {
    /// Refuses step counts and sizes no benchmark needs, and a batch whose attention would not
    /// fit in memory, before anything is allocated (one line naming the flag).
    pub fn check(&self) -> Result<(), String> {
        if self.steps == 0 || self.steps > MAX_STEPS {
            return Err(format!(
                "--steps {}: expected 1 to {MAX_STEPS} (the timings are over the timed steps)",
                self.steps
            ));
        }
        if self.warmup > MAX_STEPS {
            return Err(format!(
                "--warmup {}: expected 0 to {MAX_STEPS}",
                self.warmup
            ));
        }
        let mut s = shape(&self.config)?;
        bias_config(&self.bias, s.l)?;
        if let Some(l) = self.seq_len {
            if l < 2 {
                return Err(format!("--seq-len {l}: expected at least 2"));
            }
            s.l = l;
        }
        if let Some(b) = self.batch {
            if b == 0 {
                return Err("--batch 0: expected at least 1".into());
            }
            s.b = b;
        }
        // The attention scores, probabilities and their gradients per layer dominate at large
        // L·B: four B·H·L² f32 grids each, a lower bound on what a step holds.
        let grids = 4.0 * 4.0 * s.layers as f64 * s.b as f64 * s.h as f64 * (s.l as f64).powi(2);
        if let Some((avail, what)) = at5::train::memory::available_memory()
            && grids > avail
        {
            return Err(format!(
                "--seq-len {} --batch {}: the attention grids alone need {}, and {} is \
                 available ({what}); lower --seq-len or --batch",
                s.l,
                s.b,
                at5::train::memory::human(grids),
                at5::train::memory::human(avail)
            ));
        }
        Ok(())
    }
}

fn bias_config(name: &str, l: usize) -> Result<BiasConfig, String> {
    Ok(match name {
        "none" => BiasConfig::None(NoOptions),
        // HF's defaults with max_distance = L, as the PyTorch peer uses.
        "t5" => BiasConfig::T5(T5Options {
            max_distance: l,
            ..T5Options::default()
        }),
        "at5" => BiasConfig::from_name("at5")?,
        other => return Err(format!("--bias {other}: expected none, t5 or at5")),
    })
}

fn model_config(s: &Shape, bias: BiasConfig) -> ModelConfig {
    ModelConfig {
        input: if s.adding {
            InputKind::Features { dim: 2 }
        } else {
            InputKind::Tokens { vocab: 8 }
        },
        output: if s.adding {
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
        head: PooledHead::default(),
        unbiased_heads: Vec::new(),
    }
}

/// A fixed random batch: (value, marker) pairs with two markers for adding, tokens otherwise.
fn random_batch(s: &Shape, seed: u64) -> (Batch, Targets) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (b, l) = (s.b, s.l);
    let pad = vec![false; b * l];
    if s.adding {
        let mut x = vec![0.0; b * l * 2];
        let mut y = Vec::with_capacity(b);
        for r in 0..b {
            let half = (l / 2).max(1);
            let (i1, i2) = (rng.random_range(0..half), rng.random_range(half..l));
            let mut sum = 0.0;
            for t in 0..l {
                let v: f64 = rng.random();
                x[(r * l + t) * 2] = v;
                if t == i1 || t == i2 {
                    x[(r * l + t) * 2 + 1] = 1.0;
                    sum += v;
                }
            }
            y.push(sum);
        }
        let batch = Batch {
            b,
            l,
            input: BatchInput::Features(x),
            pad,
        };
        (batch, Targets::Real(y))
    } else {
        let ids = (0..b * l).map(|_| rng.random_range(0..8)).collect();
        let y = (0..b).map(|_| rng.random_range(0..2)).collect();
        let batch = Batch {
            b,
            l,
            input: BatchInput::Tokens(ids),
            pad,
        };
        (batch, Targets::Classes(y))
    }
}

/// The shape's whole-graph forward FLOPs in matrix products (the model's own count).
fn flops(s: &Shape) -> f64 {
    model_config(s, BiasConfig::None(NoOptions)).forward_matmul_flops(s.b, s.l)
}

/// ms per step by op kind, largest first, forward then backward.
fn print_profile(p: &at5::autodiff::OpProfile, steps: usize) {
    for (pass, rows) in [("forward", &p.forward), ("backward", &p.backward)] {
        let mut rows = rows.clone();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        let total: f64 = rows.iter().map(|r| r.1).sum();
        crate::outln!("{pass}: {:.2} ms/step in ops", total * 1e3 / steps as f64);
        for (name, secs, calls) in rows.iter().filter(|r| r.1 > 0.0) {
            crate::outln!(
                "  {name:<14} {:>9.2} ms/step {:>6.1} %  ({} calls/step)",
                secs * 1e3 / steps as f64,
                100.0 * secs / total.max(1e-12),
                calls / steps
            );
        }
    }
}

/// Per-step timings in milliseconds.
struct Timings {
    total: Vec<f64>,
    forward: Vec<f64>,
    backward: Vec<f64>,
    optimizer: Vec<f64>,
    rss_after_warmup_mb: f64,
    rss_end_mb: f64,
    params: usize,
    loss: f64,
    profile: Option<at5::autodiff::OpProfile>,
}

fn run_steps(
    s: &Shape,
    bias: &str,
    (warmup, steps): (usize, usize),
    profile: bool,
    whole_graph: bool,
) -> Result<Timings, String> {
    let config = model_config(s, bias_config(bias, s.l)?);
    let mut store = ParamStore::<f32>::new();
    let model = Model::new(config, &mut store, 7)?;
    let mut adam = Adam::<f32>::new(AdamConfig::tf(1e-3), &store);
    let (batch, targets) = random_batch(s, 11);
    model.check_batch(&batch)?;
    let mut tape = Tape::<f32>::new();
    let opts = ForwardOpts {
        whole_graph,
        ..ForwardOpts::default()
    };
    let mut t = Timings {
        total: Vec::with_capacity(steps),
        forward: Vec::with_capacity(steps),
        backward: Vec::with_capacity(steps),
        optimizer: Vec::with_capacity(steps),
        rss_after_warmup_mb: 0.0,
        rss_end_mb: 0.0,
        params: store.num_scalars(),
        loss: f64::NAN,
        profile: None,
    };
    for i in 0..warmup + steps {
        if i == warmup {
            t.rss_after_warmup_mb = own_status_kb("VmRSS").unwrap_or(f64::NAN) / 1024.0;
            tape.set_profiling(profile);
        }
        let t0 = Instant::now();
        tape.clear();
        let p = store.bind(&mut tape);
        let out = model.forward(&mut tape, &p, &batch, &opts).output;
        let loss = model.loss(&mut tape, out, &targets);
        let t1 = Instant::now();
        let grads = tape.backward_profiled(loss);
        let t2 = Instant::now();
        let g = store.grads(&p, &grads);
        adam.update(&mut store, &g);
        model.project(&mut store);
        drop(grads);
        let t3 = Instant::now();
        t.loss = tape.value(loss).data[0] as f64;
        if i >= warmup {
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            t.total.push(ms(t0, t3));
            t.forward.push(ms(t0, t1));
            t.backward.push(ms(t1, t2));
            t.optimizer.push(ms(t2, t3));
        }
    }
    t.rss_end_mb = own_status_kb("VmRSS").unwrap_or(f64::NAN) / 1024.0;
    t.profile = tape.profile().cloned();
    Ok(t)
}

/// Times training steps of `--config` and prints the median, the split, the model's FLOP rate
/// and the memory.
pub fn bench_steps(cli: &BenchArgs, threads: usize) -> Result<(), String> {
    let mut s = shape(&cli.config)?;
    if let Some(l) = cli.seq_len {
        s.l = l;
    }
    if let Some(b) = cli.batch {
        s.b = b;
    }
    let mut t = run_steps(
        &s,
        &cli.bias,
        (cli.warmup, cli.steps),
        cli.profile,
        cli.no_prune,
    )?;
    let graph = if cli.no_prune { "whole" } else { "pruned" };
    if let Some(p) = &t.profile {
        print_profile(p, cli.steps);
    }
    let step_flops = 3.0 * flops(&s);
    let (min, max) = (
        t.total.iter().copied().fold(f64::INFINITY, f64::min),
        t.total.iter().copied().fold(0.0, f64::max),
    );
    let ms = median(&mut t.total);
    let (fwd, bwd, opt) = (
        median(&mut t.forward),
        median(&mut t.backward),
        median(&mut t.optimizer),
    );
    let gflops = step_flops / (ms * 1e-3) / 1e9;
    let peak = own_status_kb("VmHWM").unwrap_or(f64::NAN) / 1024.0;
    if cli.json {
        let v = serde_json::json!({
            "config": s.name, "bias": cli.bias, "threads": threads, "graph": graph,
            "kernel": at5::kernels::active().name(),
            "L": s.l, "B": s.b, "D": s.d, "H": s.h, "F": s.ffn, "N": s.layers,
            "steps": cli.steps, "warmup": cli.warmup, "params": t.params,
            "ms_per_step": ms, "min_ms": min, "max_ms": max,
            "forward_ms": fwd, "backward_ms": bwd, "optimizer_ms": opt,
            "gflop_per_step": step_flops / 1e9, "gflops": gflops,
            "peak_rss_mb": peak, "rss_after_warmup_mb": t.rss_after_warmup_mb,
            "rss_end_mb": t.rss_end_mb, "final_loss": t.loss,
        });
        crate::outln!("{v}");
    } else {
        crate::outln!(
            "config {} (L={} B={} D={} H={} F={} N={}), bias {}, {} threads, {} kernels, {} params, {graph} graph",
            s.name,
            s.l,
            s.b,
            s.d,
            s.h,
            s.ffn,
            s.layers,
            cli.bias,
            threads,
            at5::kernels::active().name(),
            t.params
        );
        crate::outln!(
            "step: median {ms:.2} ms (min {min:.2}, max {max:.2}) over {} steps after {} warm-up",
            cli.steps,
            cli.warmup
        );
        crate::outln!("split: forward {fwd:.2} ms, backward {bwd:.2} ms, optimizer {opt:.2} ms");
        crate::outln!(
            "whole-graph model FLOPs: {:.4} GFLOP/step (3 × forward GEMMs) → {gflops:.1} GFLOP/s",
            step_flops / 1e9
        );
        crate::outln!(
            "peak RSS {peak:.1} MB; RSS after warm-up {:.1} MB, at end {:.1} MB",
            t.rss_after_warmup_mb,
            t.rss_end_mb
        );
    }
    Ok(())
}

/// Times evaluation forwards of `--config` on an evaluation tape and through
/// [`Model::predict`], `--steps` runs of each in turn (after `--warmup`), and checks they give
/// the same bits.
pub fn bench_eval(cli: &BenchArgs, threads: usize) -> Result<(), String> {
    let mut s = shape(&cli.config)?;
    s.l = cli.seq_len.unwrap_or(s.l);
    s.b = cli.batch.unwrap_or(at5::train::EVAL_BATCH);
    let config = model_config(&s, bias_config(&cli.bias, s.l)?);
    let mut store = ParamStore::<f32>::new();
    let model = Model::new(config, &mut store, 7)?;
    let (batch, _) = random_batch(&s, 11);
    model.check_batch(&batch)?;
    let opts = ForwardOpts {
        whole_graph: cli.no_prune,
        ..ForwardOpts::default()
    };
    // Each timing is a run of consecutive forwards, as an evaluation makes them: one way's
    // freed buffers are the next forward's memory, which a single call after the other way
    // would not show.
    const RUN: usize = 4;
    let (mut tape_ms, mut predict_ms) = (Vec::new(), Vec::new());
    let mut tape = Tape::<f32>::eval();
    for i in 0..cli.warmup + cli.steps {
        let t0 = Instant::now();
        let mut want = Vec::new();
        for _ in 0..RUN {
            tape.clear();
            let p = store.bind(&mut tape);
            let out = model.forward(&mut tape, &p, &batch, &opts).output;
            want = tape.value(out).data.clone();
        }
        tape.clear();
        let t1 = Instant::now();
        let mut got = Vec::new();
        for _ in 0..RUN {
            got = model.predict(&store, &batch, &opts).data;
        }
        let t2 = Instant::now();
        if got
            .iter()
            .map(|v| v.to_bits())
            .ne(want.iter().map(|v| v.to_bits()))
        {
            return Err("bench --eval: predict and the evaluation tape disagree".into());
        }
        if i >= cli.warmup {
            tape_ms.push((t1 - t0).as_secs_f64() * 1e3 / RUN as f64);
            predict_ms.push((t2 - t1).as_secs_f64() * 1e3 / RUN as f64);
        }
    }
    let (tape, predict) = (median(&mut tape_ms), median(&mut predict_ms));
    let graph = if cli.no_prune { "whole" } else { "pruned" };
    crate::outln!(
        "config {} (L={} B={} D={}), bias {}, {threads} threads, {} kernels, {graph} graph",
        s.name,
        s.l,
        s.b,
        s.d,
        cli.bias,
        at5::kernels::active().name()
    );
    crate::outln!(
        "evaluation forward: tape {tape:.2} ms, predict {predict:.2} ms ({:.2}x); medians of {} \
         alternating runs of {RUN} forwards each; same output bits",
        tape / predict,
        cli.steps
    );
    Ok(())
}

/// Median GFLOP/s of the engine's matmul op for `[batch.., m, k] x [batch.., k, n]`, A stored
/// `[.., k, m]` when `ta` and B stored `[.., n, k]` when `tb` (read transposed, not copied).
fn gemm_gflops(batch: &[usize], m: usize, k: usize, n: usize, (ta, tb): (bool, bool)) -> f64 {
    let mut sa = batch.to_vec();
    sa.extend(if ta { [k, m] } else { [m, k] });
    let mut sb = batch.to_vec();
    sb.extend(if tb { [n, k] } else { [k, n] });
    let a = Tensor::<f32>::uniform(&sa, -1.0, 1.0, 1);
    let b = Tensor::<f32>::uniform(&sb, -1.0, 1.0, 2);
    let count: usize = batch.iter().product();
    let flops = 2.0 * (count * m * n * k) as f64;
    // At least the PyTorch peer's 21 timed calls (`torch_gemm.py --reps`): a median of 3 moved
    // by a third between processes on a shared machine.
    let reps = ((2e9 / flops) as usize).clamp(21, 200);
    let mut tape = Tape::<f32>::eval();
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps + 1 {
        tape.clear();
        let (x, y) = (tape.constant(a.clone()), tape.constant(b.clone()));
        let t0 = Instant::now();
        let z = tape.matmul_t(x, y, ta, tb);
        times.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(tape.value(z));
    }
    flops / median(&mut times[1..]) / 1e9
}

/// The three products of a Linear layer `y = x W` (x `[R, I]`, W `[I, O]`) in a training
/// step: the forward `x W`, the input gradient `dY Wᵀ` and the weight gradient `xᵀ dY` (inner
/// dimension R = B·L), as (name, GFLOP/s).
fn linear_gflops(r: usize, i: usize, o: usize) -> [(String, f64); 3] {
    [
        (
            format!("fwd [{r},{i}]x[{i},{o}]"),
            gemm_gflops(&[], r, i, o, (false, false)),
        ),
        (
            format!("dX [{r},{o}]x[{o},{i}]"),
            gemm_gflops(&[], r, o, i, (false, true)),
        ),
        (
            format!("dW [{i},{r}]x[{r},{o}]"),
            gemm_gflops(&[], i, r, o, (true, false)),
        ),
    ]
}

/// GFLOP/s of `count` products `[m,k] x [k,n]` by the unpacked small-GEMM kernel (A read
/// transposed when `ta`), B and C rows contiguous, as in the fused attention op.
fn head_gemm_gflops(count: usize, m: usize, k: usize, n: usize, ta: bool) -> f64 {
    let a = Tensor::<f32>::uniform(&[count * m * k], -1.0, 1.0, 1).data;
    let b = Tensor::<f32>::uniform(&[count * k * n], -1.0, 1.0, 2).data;
    let mut c = vec![0f32; count * m * n];
    let (rsa, csa) = if ta { (1, m) } else { (k, 1) };
    let flops = 2.0 * (count * m * n * k) as f64;
    let mut times = Vec::new();
    for _ in 0..11 {
        let t0 = Instant::now();
        for i in 0..count {
            at5::kernels::gemm_rows_on(
                at5::kernels::active(),
                (m, k, n),
                &a[i * m * k..],
                (rsa, csa),
                &b[i * k * n..],
                n,
                0.0,
                &mut c[i * m * n..],
                n,
            );
        }
        times.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(&c);
    }
    flops / median(&mut times[1..]) / 1e9
}

/// Prints the engine's GEMM throughput on square sizes, at the Linear layers' three products
/// of configs A, B and C, and at config A's attention shapes.
pub fn bench_gemm(cli: &BenchArgs, threads: usize) {
    let mut rows = Vec::new();
    for n in [128, 256, 512, 1024] {
        rows.push((
            format!("square {n}"),
            gemm_gflops(&[], n, n, n, (false, false)),
        ));
    }
    // Per config, each Linear shape of the model (the attention's D→D maps, the feed-forward's
    // D→F and F→D) and the fused query-key-value map D→3D, over its B·L rows.
    let mut linear = Vec::new();
    for name in ["A", "B", "C"] {
        let s = shape(name).expect("benchmark config");
        let r = s.b * s.l;
        for (i, o) in [(s.d, 3 * s.d), (s.d, s.d), (s.d, s.ffn), (s.ffn, s.d)] {
            linear.push((format!("{name} {i}x{o}, R={r}"), linear_gflops(r, i, o)));
        }
    }
    let a = shape("A").expect("config A");
    let (d, h, l) = (a.d, a.h, a.l);
    let dh = d / h;
    let shapes: [(String, Vec<usize>, usize, usize, usize, bool); 4] = [
        (
            format!("A q·kᵀ [{},{h},{l},{dh}]x[..,{dh},{l}]", a.b),
            vec![a.b, h],
            l,
            dh,
            l,
            true,
        ),
        (
            format!("A probs·v [{},{h},{l},{l}]x[..,{l},{dh}]", a.b),
            vec![a.b, h],
            l,
            l,
            dh,
            false,
        ),
        // The pruned last block's attention row (`forward_row`): per example, the heads'
        // folded queries against every position's input, then the probabilities over them.
        (
            format!("A row W_kᵀq·xᵀ [{},{h},{d}]x[..,{d},{l}]", a.b),
            vec![a.b],
            h,
            d,
            l,
            true,
        ),
        (
            format!("A row p·x [{},{h},{l}]x[..,{l},{d}]", a.b),
            vec![a.b],
            h,
            l,
            d,
            false,
        ),
    ];
    for (name, batch, m, k, n, tb) in shapes {
        rows.push((name, gemm_gflops(&batch, m, k, n, (false, tb))));
    }
    // The attention's per-head products as the fused op runs them: the unpacked kernel, one
    // head after another on one thread (the op runs batch elements in parallel).
    let heads = a.b * h;
    for (name, m, k, n, ta) in [
        (
            format!("A head q·kᵀ x{heads} ({l}x{dh}x{l}, 1 thread)"),
            l,
            dh,
            l,
            false,
        ),
        (
            format!("A head p·v x{heads} ({l}x{l}x{dh}, 1 thread)"),
            l,
            l,
            dh,
            false,
        ),
        (
            format!("A head pᵀ·g x{heads} ({l}x{l}x{dh}, 1 thread)"),
            l,
            l,
            dh,
            true,
        ),
    ] {
        rows.push((name, head_gemm_gflops(heads, m, k, n, ta)));
    }
    if cli.json {
        let mut v: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect();
        for (layer, products) in &linear {
            for (p, g) in products {
                v.insert(format!("{layer} {p}"), serde_json::json!(g));
            }
        }
        let kernel = at5::kernels::active().name();
        crate::outln!(
            "{}",
            serde_json::json!({"threads": threads, "kernel": kernel, "gflops": v})
        );
    } else {
        crate::outln!(
            "engine matmul, f32, {threads} threads, {} kernels (median GFLOP/s)",
            at5::kernels::active().name()
        );
        let (squares, attention) = rows.split_at(4);
        for (name, g) in squares {
            crate::outln!("{name:<40} {g:>8.1}");
        }
        crate::outln!(
            "Linear layers x[R,I]·W[I,O]: fwd x·W, dX dY·Wᵀ, dW xᵀ·dY (inner dimension R = B·L)"
        );
        crate::outln!(
            "{:<24} {:>8} {:>8} {:>8}",
            "config I x O, rows",
            "fwd",
            "dX",
            "dW"
        );
        for (layer, [f, x, w]) in &linear {
            crate::outln!("{layer:<24} {:>8.1} {:>8.1} {:>8.1}", f.1, x.1, w.1);
        }
        for (name, g) in attention {
            crate::outln!("{name:<40} {g:>8.1}");
        }
    }
}

/// Prints config A's step time over L and over B, with fitted exponents and the length where
/// the attention's L² term takes over.
pub fn bench_scaling(cli: &BenchArgs, threads: usize) -> Result<(), String> {
    let base = shape("A")?;
    let steps = cli.steps.clamp(1, 5);
    let measure = |l: usize, b: usize| -> Result<(f64, f64), String> {
        let s = Shape { l, b, ..base };
        let mut t = run_steps(&s, &cli.bias, (1, steps), false, cli.no_prune)?;
        let attn = 4.0 * (s.b * s.h * l * l * (s.d / s.h)) as f64;
        Ok((median(&mut t.total), attn / flops(&s)))
    };
    crate::outln!(
        "config A's model (D=256 H=8 F=512 N=1, bias {}), {threads} threads, median of {steps} steps",
        cli.bias
    );
    crate::outln!("| L | B | ms/step | µs per sequence-position | attention share of FLOPs |");
    crate::outln!("|---|---|---|---|---|");
    let ls = [50usize, 100, 200, 500, 1000];
    let mut tl = Vec::new();
    for &l in &ls {
        let b = if l >= 1000 { 16 } else { base.b };
        let (ms, share) = measure(l, b)?;
        crate::outln!(
            "| {l} | {b} | {ms:.1} | {:.2} | {:.0}% |",
            ms * 1e3 / (b * l) as f64,
            share * 100.0
        );
        // Normalise to B=64 so the L fit sees one batch size (step time is linear in B).
        tl.push(ms * base.b as f64 / b as f64);
    }
    let bs = [8usize, 16, 32, 64, 128];
    let mut tb = Vec::new();
    for &b in &bs {
        let (ms, share) = measure(base.l, b)?;
        crate::outln!(
            "| {} | {b} | {ms:.1} | {:.2} | {:.0}% |",
            base.l,
            ms * 1e3 / (b * base.l) as f64,
            share * 100.0
        );
        tb.push(ms);
    }
    let lf: Vec<f64> = ls.iter().map(|&v| v as f64).collect();
    let bf: Vec<f64> = bs.iter().map(|&v| v as f64).collect();
    crate::outln!(
        "fitted exponents: time ∝ L^{:.2} (all L), L^{:.2} (L ≤ 200), L^{:.2} (L ≥ 200); B^{:.2}",
        loglog_slope(&lf, &tl),
        loglog_slope(&lf[..3], &tl[..3]),
        loglog_slope(&lf[2..], &tl[2..]),
        loglog_slope(&bf, &tb)
    );
    // time(L) ≈ a·L + c·L² at fixed B: the quadratic (attention) term overtakes at L = a / c.
    let (a, c) = fit_linear_quadratic(&lf, &tl);
    crate::outln!(
        "fit at B=64: {a:.4}·L + {c:.6}·L² ms; the L² (attention) term dominates beyond L ≈ {:.0}",
        a / c
    );
    Ok(())
}
