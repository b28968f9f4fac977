//! `train`: one training run of one task and bias family, with checkpoints and a JSON record.
use at5::cli::{RunArgs, init_allocator, init_threads, usage_error};
use at5::sweep;
use at5::train::{self, Event, Trainer};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Train an encoder with a relative-position bias on one synthetic task.
#[derive(Parser, Debug)]
#[command(name = "train", version)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
    /// Output directory (default runs/TASK-BIAS-sSEED).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue from a checkpoint; the run's config comes from the checkpoint (only --epochs
    /// may extend it).
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Pick up the run in --out: nothing to do if it holds this config's finished record, resume
    /// from its checkpoint if that is of this config, else start (what emitted job lists use,
    /// so a job list can be rerun after an interruption).
    #[arg(long = "continue", conflicts_with = "resume")]
    continue_run: bool,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress bar; one line per epoch.
    #[arg(long)]
    quiet: bool,
    /// Also keep full checkpoints of these epochs (comma-separated; 0 = before training) in
    /// OUT/snapshots/, for `prior --by-epoch`.
    #[arg(long, value_delimiter = ',')]
    snapshots: Vec<usize>,
}

/// `--out`, or next to the resumed checkpoint, or a directory named after the run.
fn out_dir(cli: &Cli) -> PathBuf {
    cli.out.clone().unwrap_or_else(|| match &cli.resume {
        Some(p) => p.parent().map(PathBuf::from).unwrap_or_default(),
        None => cli.run.default_out(),
    })
}

fn main() {
    let cli = Cli::parse();
    init_allocator();
    init_threads(cli.threads);
    let trainer = match &cli.resume {
        Some(path) => {
            let mut t = Trainer::from_checkpoint(path).unwrap_or_else(|e| usage_error(e));
            if let Some(e) = cli.run.epochs {
                t.config.epochs = e;
            }
            t
        }
        None => {
            let cfg = cli.run.to_config().unwrap_or_else(|e| usage_error(e));
            if cli.continue_run {
                let out = out_dir(&cli);
                if let Some(rec) = sweep::finished_in(&out, &cfg) {
                    println!("{}: already finished in {}", rec.status, out.display());
                    return;
                }
                sweep::resume_or_start(&out, cfg).unwrap_or_else(|e| usage_error(e))
            } else {
                Trainer::new(cfg).unwrap_or_else(|e| usage_error(e))
            }
        }
    };
    let out = out_dir(&cli);
    let (epochs, steps) = (trainer.config.epochs, trainer.steps_per_epoch());
    if let Some(e) = cli.snapshots.iter().find(|&&e| e > epochs) {
        usage_error(format!("--snapshots {e}: the run has only {epochs} epochs"));
    }
    let start_epoch = trainer.state.epoch;
    let bar = if cli.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(((epochs - start_epoch.min(epochs)) * steps) as u64);
        b.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} steps  {msg}  eta {eta}")
                .unwrap()
                .progress_chars("=> "),
        );
        b
    };
    let quiet = cli.quiet;
    let mut dev = String::from("dev —");
    let res = train::run_with_snapshots(trainer, &out, &cli.snapshots, |ev| match ev {
        Event::Step { epoch, loss, .. } => {
            bar.set_prefix(format!("epoch {epoch}/{epochs}"));
            bar.set_message(format!("loss {loss:.4}  {dev}"));
            bar.inc(1);
        }
        Event::Epoch(e) => {
            dev = format!("dev acc {:.4}", e.dev.accuracy);
            let line = format!(
                "epoch {}/{epochs}: train loss {:.4}, dev acc {:.4}{}",
                e.epoch,
                e.train_loss,
                e.dev.accuracy,
                e.test.map_or(String::new(), |t| format!(
                    ", test acc {:.4} (new best dev)",
                    t.accuracy
                ))
            );
            if quiet {
                println!("{line}");
            } else {
                bar.println(line);
            }
        }
    });
    bar.finish_and_clear();
    match res {
        Ok(rec) => {
            let best = rec.best.as_ref();
            println!(
                "{}: {} with {} — best dev {:.4} at epoch {}, test {:.4}; {:.1} steps/s; wrote {}",
                rec.status,
                rec.task,
                rec.bias,
                best.map_or(0.0, |b| b.dev.accuracy),
                best.map_or(0, |b| b.epoch),
                best.map_or(0.0, |b| b.test.accuracy),
                rec.steps_per_second,
                out.display()
            );
        }
        Err(e) => {
            eprintln!(
                "error: {e} (the last good checkpoint is in {})",
                out.display()
            );
            std::process::exit(1);
        }
    }
}
