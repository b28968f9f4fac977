//! `init-study`: AT5 started as the paper does (`--at5-init paper`) against the same MLP started
//! in its linear regime (`--at5-init alive`), on lag-k at L = 64 and on Process-50.
//! docs/why-at5-starts-flat.md derives why the paper's start is flat and reads this report.
use crate::sweep::{Plan, RunSpec, best_test_percent};
use at5::data::TaskKind;
use at5::position::MlpInit;
use at5::report::{Cell, Series, Table, mean_std, small_multiples};
use at5::train::{Preset, RunRecord, RunRequest};
use std::path::Path;

/// The two initialisations compared.
pub const INITS: [MlpInit; 2] = [MlpInit::Paper, MlpInit::Alive];

/// Lag-k's k at L = [`LAG_LEN`]: a short, a middle and a long dependency.
pub const LAGS: [usize; 3] = [4, 16, 40];

/// Lag-k's sequence length.
pub const LAG_LEN: usize = 64;

/// Lag-k's default budget in epochs.
pub const LAG_EPOCHS: usize = 60;

/// Test accuracy from which a run counts as solved: 90 % on lag-k (chance 12.5 %), 80 % on
/// Process-50 (its Bayes ceiling at the quick preset's length is 85.3 %).
pub fn solved_at(group: &str) -> f64 {
    if group.starts_with("lagk") { 0.9 } else { 0.8 }
}

/// One AT5 run per group, init and seed, and a T5 run per group and seed for reference;
/// lag-k trains `lag_epochs` epochs, Process-50 runs the preset's own protocol.
pub fn plan(preset: Preset, seeds: u64, lag_epochs: usize) -> Plan {
    // Lag-k at k (D = 64, 4 heads, lr 1e-3, `lag_epochs` epochs), or Process-50 as the preset.
    let request = |k: Option<usize>, bias: &str, seed| match k {
        Some(k) => RunRequest {
            seq_len: Some(LAG_LEN),
            lag: Some(k),
            d_model: Some(64),
            heads: Some(4),
            lr: Some(1e-3),
            epochs: Some(lag_epochs),
            ..RunRequest::new(TaskKind::LagK, bias, preset, seed)
        },
        None => RunRequest::new(TaskKind::Process50, bias, preset, seed),
    };
    let lag_groups = LAGS.iter().map(|&k| (format!("lagk-k{k}"), Some(k)));
    let mut specs = Vec::new();
    for (group, k) in lag_groups.chain([("process50".to_string(), None)]) {
        // T5 beside them says whether the budget lets a bias solve the task at all.
        let columns = INITS
            .iter()
            .map(|&i| (format!("at5-{}", i.name()), Some(i)));
        for (column, init) in columns.chain(std::iter::once(("t5".to_string(), None))) {
            for seed in 1..=seeds {
                let run = match init {
                    Some(i) => {
                        let mut run = request(k, "at5", seed);
                        run.bias
                            .set("at5-init", i.name())
                            .expect("AT5 has --at5-init");
                        run
                    }
                    None => request(k, "t5", seed),
                };
                specs.push(RunSpec {
                    id: format!("{group}-{column}-s{seed}"),
                    group: group.clone(),
                    bias: column.clone(),
                    seed,
                    run,
                });
            }
        }
    }
    Plan::new("init-study", preset.name(), specs)
}

/// The first epoch whose dev accuracy reaches 95 % of the last epoch's, counted from 1.
pub fn epochs_to_95(rec: &RunRecord) -> Option<usize> {
    let last = rec.epochs.last()?.dev.accuracy;
    rec.epochs
        .iter()
        .find(|e| e.dev.accuracy >= 0.95 * last)
        .map(|e| e.epoch)
}

/// The epoch-1 gradient norm (RMS over its steps) of the named bias tensor, if recorded.
fn first_grad(rec: &RunRecord, name: &str) -> Option<f64> {
    let d = rec.epochs.first()?.diagnostics.as_ref()?;
    d.grad_norms
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, g)| *g)
}

/// Mean over seeds as `mean ± std` with the given digits; `—` with no values.
fn stat(xs: &[f64], digits: usize) -> String {
    match Cell::of_samples(xs) {
        Cell::Stat(m, s) if s.is_nan() => format!("{m:.digits$}"),
        Cell::Stat(m, s) => format!("{m:.digits$} ± {s:.digits$}"),
        _ => at5::report::MISSING.to_string(),
    }
}

/// Writes `init-study.md` and `figures/init-study-dev.svg`; returns the Markdown.
pub fn report(root: &Path, plan: &Plan, recs: &[Option<RunRecord>]) -> Result<String, String> {
    let mut groups: Vec<String> = plan.specs.iter().map(|s| s.group.clone()).collect();
    groups.dedup();
    let runs = |g: &str, column: &str| plan.runs(recs, g, column);
    let mut columns: Vec<String> = Vec::new();
    for s in &plan.specs {
        if !columns.contains(&s.bias) {
            columns.push(s.bias.clone());
        }
    }
    let mut table = Table::new("task / bias", Vec::<&str>::new(), 1);
    for column in [
        "solved",
        "best-dev test acc %",
        "last-epoch dev acc %",
        "epochs to 95 % of last dev",
        "‖∇ w3‖ epoch 1",
        "‖∇ c‖ epoch 1",
        "dead units, left, last epoch (l1 / l2)",
    ] {
        table = table.extra_column(column);
    }
    let mut panels = Vec::new();
    for g in &groups {
        let mut series = Vec::new();
        for column in &columns {
            let rs = runs(g, column);
            let threshold = solved_at(g);
            let best = best_test_percent(&rs);
            let solved = best.iter().filter(|&&a| a >= 100.0 * threshold).count();
            let last_dev: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.epochs.last())
                .map(|e| 100.0 * e.dev.accuracy)
                .collect();
            let e95: Vec<f64> = rs
                .iter()
                .filter_map(|r| epochs_to_95(r))
                .map(|e| e as f64)
                .collect();
            let w3: Vec<f64> = rs
                .iter()
                .filter_map(|r| first_grad(r, "bias.neg.w3"))
                .collect();
            let c: Vec<f64> = rs.iter().filter_map(|r| first_grad(r, "bias.c")).collect();
            let dead = dead_left(&rs);
            table.row_with_extras(
                format!("{g} / {column}").as_str(),
                Vec::<Cell>::new(),
                [
                    format!("{solved}/{}", rs.len()),
                    stat(&best, 1),
                    stat(&last_dev, 1),
                    stat(&e95, 1),
                    sci(&w3),
                    sci(&c),
                    dead,
                ],
            );
            // Mean dev accuracy per epoch over the seeds that ran that epoch.
            let epochs = rs.iter().map(|r| r.epochs.len()).max().unwrap_or(0);
            let points: Vec<(f64, f64)> = (0..epochs)
                .filter_map(|e| {
                    let xs: Vec<f64> = rs
                        .iter()
                        .filter_map(|r| r.epochs.get(e).map(|x| 100.0 * x.dev.accuracy))
                        .collect();
                    (!xs.is_empty()).then(|| ((e + 1) as f64, mean_std(&xs).0))
                })
                .collect();
            if !points.is_empty() {
                series.push(Series::new(column.as_str(), points));
            }
        }
        if !series.is_empty() {
            panels.push((g.clone(), series));
        }
    }
    if !panels.is_empty() {
        small_multiples(
            &root.join("figures").join("init-study-dev.svg"),
            "Dev accuracy per epoch, mean over seeds: AT5 with the paper / alive init, and T5",
            &panels,
            "epoch",
            "dev accuracy (%)",
            2,
        )?;
    }
    let mut md = String::from(
        "### AT5: the paper's MLP init vs the alive init, T5 for reference (mean ± std over seeds)\n\n",
    );
    md.push_str(&table.to_markdown());
    md.push_str(
        "\nSolved: best-dev test accuracy ≥ 90 % on lag-k, ≥ 80 % on Process-50. Epochs to 95 %: \
         the first epoch whose dev accuracy reaches 95 % of the last epoch's. Gradient norms: RMS over epoch 1's steps of \
         the L2 norm of the gradient of the left MLP's last weight (`bias.neg.w3`) and of the \
         left slope parameter (`bias.c`, which sets 1/beta), mean over seeds.\n",
    );
    at5::report::write_atomic(&root.join("init-study.md"), md.as_bytes())?;
    Ok(md)
}

/// The share of the left MLPs' dead units after the last epoch, per layer, over heads and
/// seeds, as `l1 % / l2 %`; `—` for families without an MLP.
fn dead_left(rs: &[&RunRecord]) -> String {
    let units: Vec<[f64; 2]> = rs
        .iter()
        .filter_map(|r| r.epochs.last()?.diagnostics.as_ref()?.dead_units.clone())
        .flatten()
        .map(|d| [d.layer1[0], d.layer2[0]])
        .collect();
    if units.is_empty() {
        return at5::report::MISSING.to_string();
    }
    let n = units.len() as f64;
    let [a, b] = [0, 1].map(|k| 100.0 * units.iter().map(|u| u[k]).sum::<f64>() / n);
    format!("{a:.0} % / {b:.0} %")
}

/// Mean over seeds in scientific notation (gradient norms span many decades).
fn sci(xs: &[f64]) -> String {
    if xs.is_empty() {
        return at5::report::MISSING.to_string();
    }
    format!("{:.2e}", mean_std(xs).0)
}

/// What [`gradients_at_init`] measures for one setting.
#[derive(Clone, Debug, PartialEq)]
pub struct InitGradients {
    /// Per bias tensor (`bias.c`, `bias.neg.w1`, …, or T5's `bias.table`): the L2 norm of
    /// the loss gradient on one batch, at initialisation.
    pub norms: Vec<(String, f64)>,
    /// The L2 norm of the gradient of every other parameter together.
    pub rest: f64,
    /// Head 0's initial bias over the pooled query's keys, max minus min (the prior's log-odds
    /// range: `exp` of it is the largest ratio of two keys' prior probabilities).
    pub bias_range: f64,
}

/// The bias gradients at initialisation, in f64, on the first 64 training examples of lag-k
/// at length `len` (k = len / 2; D = 64, 4 heads, no dropout), of `family` (`at5` or `t5`);
/// for AT5 with MLP widths `l1`, `l2` and the paper init at weight std `std` (or the alive
/// init when `std` is `None`).
pub fn gradients_at_init(
    family: &str,
    len: usize,
    std: Option<f64>,
    (l1, l2): (usize, usize),
    seed: u64,
) -> Result<InitGradients, String> {
    use at5::autodiff::Tape;
    use at5::data::TaskKind;
    use at5::nn::{ForwardOpts, Model};
    use at5::params::ParamStore;
    use at5::position::{BiasConfig, MlpInit};
    use at5::train::{Dial, make_batch, pooled_query, preset_config};
    let dial = Dial {
        seq_len: Some(len),
        lag: Some(len / 2),
    };
    let mut cfg = preset_config(TaskKind::LagK, family, Preset::Quick, dial, seed)?;
    cfg.model.d_model = 64;
    cfg.model.ffn = 128;
    cfg.model.heads = 4;
    if let BiasConfig::At5(o) = &mut cfg.model.bias {
        (o.mlp.l1, o.mlp.l2) = (l1, l2);
        match std {
            Some(s) => o.mlp.init_std = s,
            None => o.mlp.init = MlpInit::Alive,
        }
    }
    cfg.validate()?;
    let data = cfg.load_data()?;
    let model_cfg = cfg.model.for_task(&data);
    let mut store = ParamStore::<f64>::new();
    let model = Model::new(model_cfg, &mut store, at5::nn::mix_seed(seed, 0))?;
    let examples: Vec<_> = data.train.iter().take(64).collect();
    let (batch, targets) = make_batch(&examples, data.max_len);
    let mut tape = Tape::new();
    let p = store.bind(&mut tape);
    let out = model
        .forward(&mut tape, &p, &batch, &ForwardOpts::default())
        .output;
    let loss = model.loss(&mut tape, out, &targets);
    let grads = tape.backward(loss);
    let g = store.grads(&p, &grads);
    let sq = |id: at5::params::ParamId| {
        g[id.0].map_or(0.0, |t| t.data.iter().map(|x| x * x).sum::<f64>())
    };
    let is_bias = |id| store.name(id).starts_with("bias.");
    let norms = store
        .ids()
        .filter(|&id| is_bias(id))
        .map(|id| (store.name(id).to_string(), sq(id).sqrt()))
        .collect();
    let rest = store
        .ids()
        .filter(|&id| !is_bias(id))
        .map(sq)
        .sum::<f64>()
        .sqrt();
    let query = pooled_query(model.config.pooling, data.max_len);
    let prior = model.prior_row(&store, data.max_len, query);
    let logs: Vec<f64> = prior[0].iter().map(|p| p.ln()).collect();
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = logs.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(InitGradients {
        norms,
        rest,
        bias_range: max - min,
    })
}

/// The weight stds [`scaling_report`] measures the paper init at.
pub const SCALING_STDS: [f64; 5] = [0.001, 0.003, 0.01, 0.03, 0.1];

/// The bias tensors [`scaling_report`] tabulates, left MLP then slope.
const SCALING_NAMES: [&str; 7] = [
    "bias.neg.w1",
    "bias.neg.w2",
    "bias.neg.w3",
    "bias.neg.b1",
    "bias.neg.b2",
    "bias.neg.b3",
    "bias.c",
];

/// The least-squares slope of `ln y` on `ln x`: the exponent `p` of `y ∝ x^p`.
pub fn log_log_slope(points: &[(f64, f64)]) -> f64 {
    let pts: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

/// The gradients at init over std, widths and length (mean over `seeds` seeds), with the
/// fitted exponent in std of each, as Markdown.
pub fn scaling_report(seeds: u64) -> Result<String, String> {
    let mean_norms = |len: usize, std: Option<f64>, w: (usize, usize)| {
        let mut sums = [0.0; SCALING_NAMES.len() + 1];
        for seed in 1..=seeds {
            let g = gradients_at_init("at5", len, std, w, seed)?;
            for (k, name) in SCALING_NAMES.iter().enumerate() {
                sums[k] += g.norms.iter().find(|(n, _)| n == name).map_or(0.0, |x| x.1);
            }
            sums[SCALING_NAMES.len()] += g.bias_range;
        }
        Ok::<_, String>(sums.map(|s| s / seeds as f64))
    };
    // For scale: T5's table and everything that is not the bias, at the same batch.
    let mut md = String::from(
        "For scale, at the same batches (mean over seeds): T5's bias table and the rest of the \
         model.\n\n| L | ‖∇ T5 table‖ | ‖∇ rest‖ (T5 model) | ‖∇ rest‖ (AT5 model, paper init) |\n\
         |---:|---:|---:|---:|\n",
    );
    for len in [16, 64] {
        let (mut table, mut rest_t5, mut rest_at5) = (0.0, 0.0, 0.0);
        for seed in 1..=seeds {
            let t = gradients_at_init("t5", len, None, (1, 1), seed)?;
            table += t
                .norms
                .iter()
                .find(|(n, _)| n == "bias.table")
                .map_or(0.0, |x| x.1);
            rest_t5 += t.rest;
            rest_at5 += gradients_at_init("at5", len, Some(0.01), (15, 2), seed)?.rest;
        }
        let n = seeds as f64;
        md.push_str(&format!(
            "| {len} | {:.1e} | {:.1e} | {:.1e} |\n",
            table / n,
            rest_t5 / n,
            rest_at5 / n
        ));
    }
    md.push_str(
        "\nAT5's left MLP and slope, per init:\n\n\
         | L | l1, l2 | init | ‖∇w1‖ | ‖∇w2‖ | ‖∇w3‖ | ‖∇b1‖ | ‖∇b2‖ | ‖∇b3‖ | ‖∇c‖ | bias range |\n\
         |---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut fits = String::new();
    for len in [16, 64] {
        for w in [(15, 2), (60, 8)] {
            let mut per_std = Vec::new();
            let inits = SCALING_STDS
                .iter()
                .map(|&s| (format!("paper, std {s}"), Some(s)))
                .chain(std::iter::once(("alive".to_string(), None)));
            for (label, std) in inits {
                let m = mean_norms(len, std, w)?;
                if let Some(s) = std {
                    per_std.push((s, m));
                }
                let cells: Vec<String> = m.iter().map(|x| format!("{x:.1e}")).collect();
                md.push_str(&format!(
                    "| {len} | {}, {} | {label} | {} |\n",
                    w.0,
                    w.1,
                    cells.join(" | ")
                ));
            }
            let exps: Vec<String> = (0..=SCALING_NAMES.len())
                .map(|k| {
                    let pts: Vec<(f64, f64)> = per_std.iter().map(|(s, m)| (*s, m[k])).collect();
                    if pts.iter().all(|p| p.1 > 0.0) {
                        format!("{:.2}", log_log_slope(&pts))
                    } else {
                        "—".into()
                    }
                })
                .collect();
            fits.push_str(&format!(
                "| {len} | {}, {} | {} |\n",
                w.0,
                w.1,
                exps.join(" | ")
            ));
        }
    }
    md.push_str(
        "\nThe exponent p of each column's `∝ std^p` over the paper init's stds \
         (least squares in log–log):\n\n\
         | L | l1, l2 | w1 | w2 | w3 | b1 | b2 | b3 | c | bias range |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    md.push_str(&fits);
    Ok(md)
}
