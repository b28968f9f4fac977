//! `train`: one training run of one task and bias family, with checkpoints and a JSON record.
use at5::train::{self, CHECKPOINT, Event, Trainer};
use at5_app::cli::{RunArgs, init_threads, run_flags_given, usage_error};
use at5_app::sweep;
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
    /// Take the run's whole config from a JSON file: a run record (`runs/X/record.json`
    /// replays run X) or a config as records hold it. No run flags with it.
    #[arg(long, conflicts_with = "resume")]
    config: Option<PathBuf>,
    /// Pick up the run in --out: nothing to do if it holds this config's finished record, resume
    /// from its checkpoint if that is of this config, start if it holds no run, refuse a run of
    /// other settings (what emitted job lists use, so a job list can be rerun after an
    /// interruption). Without it, a folder holding this config's finished run is left as it
    /// is, and one holding anything else is refused.
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

fn main() {
    let matches = at5_app::cli::matches::<Cli>();
    let cli: Cli = at5_app::cli::from_matches(&matches);
    init_threads(cli.threads);
    let out = cli.out.clone().unwrap_or_else(|| match &cli.resume {
        Some(p) => match p.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        },
        None => match &cli.config {
            // Beside the record or config it replays would overwrite it: say where instead.
            Some(p) => usage_error(format!(
                "--config {}: give --out, the folder for the replayed run",
                p.display()
            )),
            None => cli.run.default_out(),
        },
    });
    // Everything that can be refused is refused here, before data is made or a step is taken.
    let config = match &cli.resume {
        Some(path) => {
            if let Some(flag) = run_flags_given(&matches).iter().find(|f| *f != "epochs") {
                usage_error(format!(
                    "--{flag} cannot be changed on --resume (the run keeps its checkpoint's \
                     config; only --epochs may extend it): drop --{flag}, or start a new run"
                ));
            }
            Err(path)
        }
        None => match &cli.config {
            Some(path) => {
                if let Some(flag) = run_flags_given(&matches).first() {
                    usage_error(format!(
                        "--{flag} cannot be given with --config (the file is the whole run): \
                         drop --{flag}, or edit the file"
                    ));
                }
                Ok(train::read_config(path)
                    .unwrap_or_else(|e| usage_error(format!("--config {e}"))))
            }
            None => Ok(cli.run.to_config().unwrap_or_else(|e| usage_error(e))),
        },
    };
    let what = if cli.out.is_some() {
        "--out"
    } else {
        "output folder"
    };
    let writable =
        || train::check_out_dir(&out).unwrap_or_else(|e| usage_error(format!("{what} {e}")));
    // A run from --config names the file its settings came from (the data and memory checks
    // speak of flags otherwise).
    let from_config = |e: String| match &cli.config {
        Some(p) => format!("--config {}: {e}", p.display()),
        None => e,
    };
    // One writer per folder, taken before the checks below read what the folder holds: two
    // runs started at once would both find it free, then overwrite each other.
    // The folder is created for it, so a checkpoint that is not there is named first (as the
    // resume would) rather than leaving an empty folder behind.
    if let Some(p) = &cli.resume
        && let Err(e) = std::fs::File::open(p)
    {
        usage_error(format!("{}: cannot read checkpoint: {e}", p.display()));
    }
    writable();
    let _lock =
        at5::report::lock_folder(&out).unwrap_or_else(|e| usage_error(format!("{what} {e}")));
    // Ok: a new run's config; Err: the checkpoint to resume.
    let trainer = match config {
        Err(path) => {
            let mut t = Trainer::from_checkpoint(path).unwrap_or_else(|e| usage_error(e));
            let epoch = t.state.epoch;
            let how = train::OutUse::Resume { from: path, epoch };
            train::check_out_contents(&out, &t.config, how).unwrap_or_else(|e| usage_error(e));
            if let Some(e) = cli.run.epochs {
                if e == 0 || e < epoch || e > train::MAX_EPOCHS {
                    usage_error(format!(
                        "--epochs {e}: the checkpoint has already trained {epoch} epochs; give \
                         {} to {}",
                        epoch.max(1),
                        train::MAX_EPOCHS
                    ));
                }
                // A run of an experiment's plan runs to the plan's budget (e.g. a plan of
                // 200 epochs resuming 100-epoch checkpoints), or it would stop being its run.
                if let Some((root, planned)) = sweep::planned_run(&out)
                    && planned.same_run(&t.config)
                    && planned.epochs != e
                {
                    usage_error(format!(
                        "--epochs {e}: {} is a run of the experiment in {}, planned with {} \
                         epochs; with another budget it would no longer be the planned run: \
                         resume it into another folder (e.g. {}-longer/runs/…)",
                        out.display(),
                        root.display(),
                        planned.epochs,
                        root.display()
                    ));
                }
                t.config.epochs = e;
            }
            writable();
            t
        }
        Ok(cfg) => {
            // The same command again finds its run done (results are the same bit for bit,
            // so there is nothing to redo); anything else already there is never overwritten.
            if let Some(rec) = sweep::finished_in(&out, &cfg) {
                at5_app::outln!("{}: already finished in {}", rec.status, out.display());
                return;
            }
            let how = if cli.continue_run {
                train::OutUse::Continue
            } else {
                train::OutUse::New
            };
            train::check_out_contents(&out, &cfg, how).unwrap_or_else(|e| usage_error(e));
            writable();
            let t = if cli.continue_run {
                sweep::resume_or_start(&out, cfg)
            } else {
                Trainer::new(cfg)
            };
            t.unwrap_or_else(|e| usage_error(from_config(e)))
        }
    };
    let (epochs, steps) = (trainer.config.epochs, trainer.steps_per_epoch());
    if let Some(e) = cli.snapshots.iter().find(|&&e| e > epochs) {
        usage_error(format!("--snapshots {e}: the run has only {epochs} epochs"));
    }
    // Rerunning a command after an interruption asks again for the snapshots it already kept;
    // one before the resumed epoch that is not there could never be written.
    let at = trainer.state.epoch;
    let missed = |&&e: &&usize| at > 0 && e <= at && !train::snapshot_path(&out, e).is_file();
    if let Some(e) = cli.snapshots.iter().find(missed) {
        usage_error(format!(
            "--snapshots {e}: the run resumes at epoch {at}, past it, and has no snapshot of it; \
             give later epochs"
        ));
    }
    let ck = out.join(CHECKPOINT);
    let again = match &cli.resume {
        Some(_) => format!("`train --resume {}` with the same --epochs", ck.display()),
        None => "the same command with --continue".to_string(),
    };
    at5_app::cli::on_interrupt(format!(
        "stopped: every finished epoch is kept in {} (none if the first did not finish); {again} \
         resumes it",
        ck.display()
    ));
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
    let mut epochs_done = 0;
    let res = train::run_with_snapshots(trainer, &out, &cli.snapshots, |ev| match ev {
        Event::Step { epoch, loss, .. } => {
            bar.set_prefix(format!("epoch {epoch}/{epochs}"));
            bar.set_message(format!("loss {loss:.4}  {dev}"));
            bar.inc(1);
        }
        Event::Epoch(e) => {
            epochs_done += 1;
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
                at5_app::outln!("{line}");
            } else {
                bar.println(line);
            }
        }
    });
    bar.finish_and_clear();
    match res {
        Ok(rec) => {
            let best = rec.best.as_ref();
            at5_app::outln!(
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
            // Name a checkpoint only where one exists: this run's, or the one it resumed from.
            let left = match &cli.resume {
                _ if epochs_done > 0 && ck.is_file() => {
                    format!("the last good checkpoint is {}", ck.display())
                }
                Some(p) => format!("the run can continue from {}", p.display()),
                None => "no checkpoint was written".to_string(),
            };
            eprintln!("error: {e} ({left})");
            std::process::exit(1);
        }
    }
}
