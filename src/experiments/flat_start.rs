//! What AT5's bias sees at its first step, at the paper's sizes: per task and MLP init std, the
//! gradient of each MLP tensor, the bias's range over offsets, how much of the gradient is
//! dropout noise, and how far Adam's first step moves the MLP. `init-study --flat-start` prints
//! it; docs/why-at5-starts-flat.md reads it.
use crate::cli::parse_run_flags;
use at5::autodiff::Tape;
use at5::nn::{Batch, ForwardOpts, Model, Targets, mix_seed};
use at5::optim::AdamConfig;
use at5::params::{ParamId, ParamStore};
use at5::position::BiasConfig;
use at5::train::{make_batch, pooled_query};

/// The settings measured: the task's paper run with AT5, as `train` flags.
pub const SETTINGS: [(&str, &str); 4] = [
    ("reber", "--task reber --bias at5 --preset paper"),
    ("process50", "--task process50 --bias at5 --preset paper"),
    (
        "lag-k L=64 k=32",
        "--task lagk --seq-len 64 --lag 32 --bias at5 --preset paper --d-model 64 --heads 4",
    ),
    ("adding-100", "--task adding --bias at5 --preset paper"),
];

/// The variants of each setting: the paper's std, the config file's (both with the output layer
/// of the paper preset's revision 1, BERT's), and (where the model has 8 heads) the original
/// code's output layer and head mask.
pub const VARIANTS: [(&str, &str); 3] = [
    ("std 0.01", "--init-std 0.01 --head-init bert"),
    ("std 0.1", "--init-std 0.1 --head-init bert"),
    (
        "std 0.01, original head",
        "--init-std 0.01 --head-init glorot --unbiased-heads 6,7",
    ),
];

/// Dropout masks drawn per batch to separate the gradient's mean from its mask-to-mask noise.
pub const MASKS: u64 = 16;

/// The left MLP's weights (keys before the query: the only MLP every task's pooled query reads)
/// and the slope that feeds it.
const TENSORS: [&str; 4] = ["bias.neg.w1", "bias.neg.w2", "bias.neg.w3", "bias.c"];

/// One setting's measurements at initialisation (f64, one batch of the first 64 training
/// examples), mean over init seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatStart {
    /// Per tensor of `TENSORS`, the gradient's RMS per element, over the masks.
    pub rms: [f64; 4],
    /// The largest range, over heads, of the pooled query's bias over its keys (max − min; the
    /// prior's log-odds range).
    pub bias_range: f64,
    /// The MLP weights' gradient norm with the MLP's dropout on, over the same with it off
    /// (every other dropout as in training, same masks).
    pub dropout_ratio: f64,
    /// Share of the MLP weights' gradient energy that changes from mask to mask at a fixed
    /// batch, `σ² / E‖g‖²`, with the MLP's dropout on and off. The mask-mean's squared norm is
    /// `‖μ‖² + σ²/K` over K masks, so `‖μ‖²` is estimated as `(K·‖ḡ‖² − E‖g‖²) / (K − 1)`
    /// (clamped at 0: a share of 1 is a mean too small to see).
    pub noise_share: (f64, f64),
    /// Adam's first step on the median weight of w1, w2 and w3, in learning rates:
    /// `|g| / (|g| + ε̂)` with TensorFlow's `ε̂ = ε / √(1 − β₂)`.
    pub adam_first_step: [f64; 3],
    /// The gradient norm of every parameter outside the bias.
    pub rest: f64,
}

/// A batch and its targets.
type Labelled = (Batch, Targets);

/// Gradients of every parameter (flattened per tensor) for one mask seed.
fn gradients(
    model: &Model<f64>,
    store: &ParamStore<f64>,
    (batch, targets): &Labelled,
    seed: u64,
) -> Vec<Vec<f64>> {
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    let opts = ForwardOpts {
        seed,
        ..ForwardOpts::default()
    };
    let out = model.forward(&mut tape, &p, batch, &opts).output;
    let loss = model.loss(&mut tape, out, targets);
    let g = tape.backward(loss);
    store
        .grads(&p, &g)
        .into_iter()
        .zip(store.values())
        .map(|(g, v)| g.map_or_else(|| vec![0.0; v.len()], |t| t.data.clone()))
        .collect()
}

/// Builds the run `flags` asks for at init seed `seed`, with its MLP's dropout at `mlp_dropout`
/// when given.
fn build(
    flags: &str,
    seed: u64,
    mlp_dropout: Option<f64>,
) -> Result<(Model<f64>, ParamStore<f64>, Labelled, usize), String> {
    let words: Vec<String> = flags.split_whitespace().map(String::from).collect();
    let mut cfg = parse_run_flags(&words)?.resolve()?;
    cfg.seed = seed;
    if let (Some(d), Some(o)) = (mlp_dropout, cfg.model.bias.mlp_options_mut()) {
        o.dropout = d;
    }
    let data = cfg.load_data()?;
    let mut store = ParamStore::<f64>::new();
    let model = Model::new(cfg.model.for_task(&data), &mut store, mix_seed(seed, 0))?;
    let examples: Vec<_> = data.train.iter().take(cfg.batch).collect();
    Ok((
        model,
        store,
        make_batch(&examples, data.max_len),
        data.max_len,
    ))
}

/// Measures one setting (its `train` flags) over init seeds `1..=seeds`.
pub fn measure(flags: &str, seeds: u64) -> Result<FlatStart, String> {
    let adam = AdamConfig::tf(1.0);
    let eps_hat = adam.eps / (1.0 - adam.beta2).sqrt();
    let mut sum = FlatStart {
        rms: [0.0; 4],
        bias_range: 0.0,
        dropout_ratio: 0.0,
        noise_share: (0.0, 0.0),
        adam_first_step: [0.0; 3],
        rest: 0.0,
    };
    for seed in 1..=seeds {
        let (model, store, batch, len) = build(flags, seed, None)?;
        let (model_off, store_off, _, _) = build(flags, seed, Some(0.0))?;
        assert_eq!(store.values(), store_off.values(), "same init either way");
        let id = |name: &str| {
            store
                .id(name)
                .ok_or_else(|| format!("{flags}: no parameter {name}"))
        };
        let tensors: Vec<ParamId> = TENSORS.iter().map(|n| id(n)).collect::<Result<_, _>>()?;
        let weights = &tensors[..3];
        let draws = |m: &Model<f64>, s: &ParamStore<f64>| -> Vec<Vec<Vec<f64>>> {
            (0..MASKS)
                .map(|k| gradients(m, s, &batch, mix_seed(seed ^ 0xD0_0D, k)))
                .collect()
        };
        let on = draws(&model, &store);
        let off = draws(&model_off, &store_off);
        for (slot, &t) in tensors.iter().enumerate() {
            let mean_sq = on
                .iter()
                .map(|g| g[t.0].iter().map(|x| x * x).sum::<f64>() / g[t.0].len() as f64)
                .sum::<f64>()
                / MASKS as f64;
            sum.rms[slot] += mean_sq.sqrt();
        }
        // Energy of the MLP weights' gradient, per draw and of the mean over draws.
        let energy = |gs: &[Vec<Vec<f64>>]| {
            let per_draw = gs
                .iter()
                .map(|g| weights.iter().map(|t| sq(&g[t.0])).sum::<f64>())
                .sum::<f64>()
                / MASKS as f64;
            let mean_of = weights
                .iter()
                .map(|t| {
                    let n = gs[0][t.0].len();
                    let mean: Vec<f64> = (0..n)
                        .map(|i| gs.iter().map(|g| g[t.0][i]).sum::<f64>() / MASKS as f64)
                        .collect();
                    sq(&mean)
                })
                .sum::<f64>();
            (per_draw, mean_of)
        };
        let (e_on, m_on) = energy(&on);
        let (e_off, m_off) = energy(&off);
        sum.dropout_ratio += (e_on / e_off).sqrt();
        let k = MASKS as f64;
        let noise = |e: f64, m: f64| 1.0 - ((k * m - e) / (k - 1.0) / e).clamp(0.0, 1.0);
        sum.noise_share.0 += noise(e_on, m_on);
        sum.noise_share.1 += noise(e_off, m_off);
        for (slot, t) in weights.iter().enumerate() {
            let mut first: Vec<f64> = on[0][t.0]
                .iter()
                .map(|g| g.abs() / (g.abs() + eps_hat))
                .collect();
            first.sort_by(f64::total_cmp);
            sum.adam_first_step[slot] += first[first.len() / 2];
        }
        let is_bias = |k: usize| store.names()[k].starts_with("bias.");
        let rest: f64 = (0..store.values().len())
            .filter(|&k| !is_bias(k))
            .map(|k| sq(&on[0][k]))
            .sum();
        sum.rest += rest.sqrt();
        let query = pooled_query(model.config.pooling, len);
        sum.bias_range += model
            .prior_row(&store, len, query)
            .iter()
            .map(|row| {
                let logs = row.iter().map(|p| p.ln());
                let max = logs.clone().fold(f64::NEG_INFINITY, f64::max);
                max - logs.fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max);
    }
    let n = seeds as f64;
    Ok(FlatStart {
        rms: sum.rms.map(|x| x / n),
        bias_range: sum.bias_range / n,
        dropout_ratio: sum.dropout_ratio / n,
        noise_share: (sum.noise_share.0 / n, sum.noise_share.1 / n),
        adam_first_step: sum.adam_first_step.map(|x| x / n),
        rest: sum.rest / n,
    })
}

fn sq(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum()
}

/// Every setting × variant as a Markdown table, mean over `seeds` init seeds.
pub fn report(seeds: u64) -> Result<String, String> {
    let mut md = format!(
        "AT5 at its paper run's sizes, dropouts and batch (64 examples, the first of the training \
         split), in f64, at initialisation; mean over init seeds 1–{seeds}, {MASKS} dropout masks \
         each. RMS: the gradient's root mean square per element of the left MLP's weights and the \
         slope `c` (1/beta = L/relu(c)). Bias range: the pooled query's largest bias range over \
         its keys, over heads. Dropout ×: the MLP weights' gradient norm with the MLP's dropout \
         on over off. Noise: the share of that gradient's energy that changes from mask to mask \
         at a fixed batch (MLP dropout on / off). Adam step: the median weight's first Adam step \
         in w1 / w2 / w3, in learning rates (TensorFlow's `lr·g/(|g| + ε/√(1−β₂))`, ε = 1e-8, \
         β₂ = 0.999). Rest: the gradient norm of every parameter outside the bias.\n\n\
         | task | variant | RMS w1 | RMS w2 | RMS w3 | RMS c | Adam step | bias range | dropout × | noise on / off | ‖∇ rest‖ |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    );
    for (task, flags) in SETTINGS {
        for (variant, extra) in VARIANTS {
            let all = format!("{flags} {extra}");
            let words: Vec<String> = all.split_whitespace().map(String::from).collect();
            let cfg = parse_run_flags(&words)?.resolve();
            // The original head mask names heads 6 and 7: only where the model has 8.
            if cfg.is_err() && extra.contains("unbiased") {
                continue;
            }
            let cfg = cfg?;
            if !matches!(cfg.model.bias, BiasConfig::At5(_)) {
                return Err(format!("{all}: not an AT5 run"));
            }
            let m = measure(&all, seeds)?;
            md.push_str(&format!(
                "| {task} | {variant} | {:.1e} | {:.1e} | {:.1e} | {:.1e} | {:.2} / {:.2} / {:.2} | {:.1e} | {:.1} | {:.0} % / {:.0} % | {:.2} |\n",
                m.rms[0],
                m.rms[1],
                m.rms[2],
                m.rms[3],
                m.adam_first_step[0],
                m.adam_first_step[1],
                m.adam_first_step[2],
                m.bias_range,
                m.dropout_ratio,
                100.0 * m.noise_share.0,
                100.0 * m.noise_share.1,
                m.rest
            ));
        }
    }
    Ok(md)
}
