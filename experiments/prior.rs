//! `prior`: looks inside a trained checkpoint — the learned prior over relative positions, the
//! context scores and posterior of one test example, and AT5's slopes over training.
use at5::report::{Table, read_json};
use at5::train::{
    RECORD, RunRecord, Trainer, compare_priors, explain_offset, list_snapshots, prior_by_epoch,
    prior_report,
};
use at5_app::cli::{init_threads, usage_error};
use clap::Parser;
use std::path::PathBuf;

/// Figures and a per-head summary of a trained model's position prior.
#[derive(Parser, Debug)]
#[command(name = "prior", version)]
struct Cli {
    /// The checkpoint to inspect (a run's checkpoint.bin).
    #[arg(long)]
    checkpoint: PathBuf,
    /// The run record with the per-epoch slopes (default: record.json beside the checkpoint).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Which test example the heat maps show.
    #[arg(long, default_value_t = 0)]
    example: usize,
    /// How many test examples the mean KL(posterior ‖ prior) averages over.
    #[arg(long, default_value_t = 256)]
    kl_examples: usize,
    /// Where the SVG figures go (default: the checkpoint's directory/prior).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also draw prior_by_epoch.svg from the run's snapshots (`train --snapshots`).
    #[arg(long)]
    by_epoch: bool,
    /// Also draw priors_compared.svg: this checkpoint's prior beside each of these (repeatable).
    #[arg(long)]
    compare: Vec<PathBuf>,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Instead of the figures: follow this offset n (AT5 only) through f, the MLP, the bias,
    /// the prior and the posterior of --example, and back through the chain rule.
    #[arg(long, allow_hyphen_values = true)]
    explain: Option<i64>,
    /// The head --explain follows (default: the one whose prior at n is largest).
    #[arg(long)]
    head: Option<usize>,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    init_threads(cli.threads);
    let trainer = Trainer::from_checkpoint(&cli.checkpoint).unwrap_or_else(|e| usage_error(e));
    if let Some(n) = cli.explain {
        let e =
            explain_offset(&trainer, cli.head, n, cli.example).unwrap_or_else(|e| usage_error(e));
        at5_app::out!("{}", e.text);
        return;
    }
    if cli.head.is_some() {
        usage_error("--head: only with --explain");
    }
    // Before any figure is written: a comparison checkpoint, or snapshots, that cannot be read
    // would fail after them.
    if let Some(p) = cli.compare.iter().find(|p| !p.is_file()) {
        usage_error(format!(
            "--compare {}: no such checkpoint file",
            p.display()
        ));
    }
    for p in &cli.compare {
        Trainer::from_checkpoint(p).unwrap_or_else(|e| usage_error(format!("--compare {e}")));
    }
    let dir = cli
        .checkpoint
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    // An explicit record must load; the default one may be absent (a bare checkpoint).
    let record: Option<RunRecord> = match &cli.record {
        Some(p) => Some(read_json(p).unwrap_or_else(|e| usage_error(e))),
        None => {
            let p = dir.join(RECORD);
            if p.exists() {
                Some(read_json(&p).unwrap_or_else(|e| usage_error(e)))
            } else {
                eprintln!("note: no {} (no slope trajectories)", p.display());
                None
            }
        }
    };
    if let Some(r) = &record
        && !r.config.same_run(&trainer.config)
    {
        usage_error(format!(
            "{}: the record of another run ({}; {}) than the checkpoint {}; give this run's \
                 record.json",
            cli.record
                .clone()
                .unwrap_or_else(|| dir.join(RECORD))
                .display(),
            r.summary(),
            r.config
                .first_difference(&trainer.config, ("in the record", "in the checkpoint")),
            cli.checkpoint.display()
        ));
    }
    let snaps = cli
        .by_epoch
        .then(|| list_snapshots(&dir).unwrap_or_else(|e| usage_error(format!("--by-epoch: {e}"))));
    let out = cli.out.clone().unwrap_or_else(|| dir.join("prior"));
    let rep = prior_report(
        &trainer,
        record.as_ref(),
        cli.example,
        cli.kl_examples,
        &out,
    )
    .unwrap_or_else(|e| usage_error(e));

    let mut extra = 0;
    if let Some(snaps) = &snaps {
        prior_by_epoch(snaps, &trainer.config, &out.join("prior_by_epoch.svg"))
            .unwrap_or_else(|e| usage_error(e));
        extra += 1;
    }
    if !cli.compare.is_empty() {
        let mut all = vec![cli.checkpoint.clone()];
        all.extend(cli.compare.iter().cloned());
        compare_priors(&all, &out.join("priors_compared.svg")).unwrap_or_else(|e| usage_error(e));
        extra += 1;
    }

    at5_app::outln!(
        "{} with {} bias, epoch {}: prior of query {} (of L = {}), mean KL over {} test examples",
        trainer.data.name,
        trainer.model.family(),
        trainer.state.epoch,
        rep.query,
        rep.len,
        rep.kl_examples
    );
    // The family's own numbers (AT5: its slopes), then their reciprocals (AT5: where each
    // soft bucket saturates).
    let own: Vec<&str> = rep.heads.first().map_or(Vec::new(), |h| {
        h.per_head.iter().map(|(k, _)| k.as_str()).collect()
    });
    let inverse: Vec<String> = own.iter().map(|k| format!("1/{k}")).collect();
    let mut cols = vec!["mode offset", "90% radius", "mean KL(post ‖ prior)"];
    cols.extend(own.iter().copied());
    cols.extend(inverse.iter().map(String::as_str));
    let mut table = Table::new("head", cols, 0);
    for h in &rep.heads {
        let mut cells = vec![
            h.mode_offset.to_string(),
            h.radius90.to_string(),
            format!("{:.4}", h.mean_kl),
        ];
        cells.extend(h.per_head.iter().map(|(_, v)| format!("{v:.4}")));
        cells.extend(h.per_head.iter().map(|(_, v)| format!("{:.2}", 1.0 / v)));
        table.row(h.head.to_string(), cells);
    }
    at5_app::out!("{}", table.to_markdown());
    at5_app::outln!(
        "wrote {} figures to {}",
        rep.files.len() + extra,
        out.display()
    );
}
