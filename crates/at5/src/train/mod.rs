//! Training: batches, evaluation, the loop, checkpoints, run records, `run` tying them up, and
//! the look inside a trained model's prior.
mod batch;
mod checkpoint;
mod checkpoint_v1;
mod checks;
mod config;
mod decoded;
mod diagnostics;
mod fingerprint;
mod hash;
pub mod memory;
mod metrics;
mod pooling;
mod preset;
mod prior;
mod record;
mod request;
mod trainer;
mod walkthrough;

pub use batch::make_batch;
pub use checks::read_config;
pub use config::{MAX_EPOCHS, ModelSpec, TaskSource, TrainConfig};
pub use diagnostics::{BiasDiagnostics, GradNorms, diagnose};
pub use fingerprint::DataFingerprint;
pub use metrics::{EVAL_BATCH, Metrics, argmax, evaluate};
pub use pooling::{pooled_query, pooling_for};
pub use preset::{Dial, PAPER_REVISION, Preset, bias_for, preset_config, task_config, task_length};
pub use prior::{
    HeadSummary, PriorReport, compare_priors, prior_by_epoch, prior_report, prior_series,
};
pub use record::RunRecord;
pub use request::{BiasRequest, RunRequest};
pub use trainer::{Best, EpochRecord, TrainState, Trainer};
pub use walkthrough::{Explanation, StaircaseRow, explain_offset, staircase, staircase_figure};

use crate::report::write_json;
use std::path::{Path, PathBuf};

/// The latest checkpoint inside a run's output directory.
pub const CHECKPOINT: &str = "checkpoint.bin";
/// The run record inside a run's output directory.
pub const RECORD: &str = "record.json";
/// The folder of a run's output directory that holds its snapshots.
pub const SNAPSHOTS: &str = "snapshots";

/// Where [`run_with_snapshots`] keeps the full checkpoint of the end of `epoch` (epoch 0: the
/// initialisation). The epoch is zero-padded so the names sort in training order.
pub fn snapshot_path(out: &Path, epoch: usize) -> PathBuf {
    out.join(SNAPSHOTS).join(format!("epoch-{epoch:04}.bin"))
}

/// The snapshots in a run's output directory, sorted by epoch; an error names the directory if
/// there are none.
pub fn list_snapshots(out: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = out.join(SNAPSHOTS);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "{}: cannot read snapshots ({e}); train with --snapshots",
            dir.display()
        )
    })?;
    let mut found: Vec<(usize, PathBuf)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let epoch = name
                .strip_prefix("epoch-")?
                .strip_suffix(".bin")?
                .parse()
                .ok()?;
            Some((epoch, path))
        })
        .collect();
    if found.is_empty() {
        return Err(format!("{}: no epoch-*.bin snapshots", dir.display()));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// Makes `out` a folder this process can write into (creating it if missing), so a read-only
/// or impossible output path fails before any training, not at the first checkpoint. The
/// error names the path (callers add the flag).
pub fn check_out_dir(out: &Path) -> Result<(), String> {
    let at = out.display();
    std::fs::create_dir_all(out)
        .map_err(|e| format!("{at}: cannot create this folder ({e}); choose a writable one"))?;
    // A probe with a random name, created exclusively and removed when dropped: it can never
    // be, nor remove, a file another process wrote.
    tempfile::Builder::new()
        .prefix(".write-test.")
        .tempfile_in(out)
        .map_err(|e| format!("{at}: cannot write into this folder ({e}); choose a writable one"))?;
    Ok(())
}

/// How a run means to use its output folder, for [`check_out_contents`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutUse<'a> {
    /// A new run: the folder must not hold a run already.
    New,
    /// Pick up the folder's run (`--continue`): it may hold this config's run, finished or
    /// not, or nothing.
    Continue,
    /// Resume checkpoint `from`, trained to `epoch`, into the folder, perhaps with more epochs:
    /// it may hold the same run (any budget) trained no further than `epoch`, or nothing; a
    /// checkpoint there without a record must be `from` itself, since nothing says whose it is.
    Resume {
        /// The checkpoint resumed.
        from: &'a Path,
        /// The epoch it was saved at.
        epoch: usize,
    },
}

/// Refuses an output folder whose contents a run of `cfg` would overwrite, cut back or trip
/// over, before it trains: a record of another config (or, for a new run, any run: its record,
/// checkpoint or snapshots), a record that cannot be read, a resume that would drop epochs the
/// folder's run already has, or a `record.json`, `checkpoint.bin` or `snapshots` of the wrong
/// kind. The error names the path, what differs, and what to do.
pub fn check_out_contents(out: &Path, cfg: &TrainConfig, how: OutUse) -> Result<(), String> {
    let (rec, ck, snaps) = (out.join(RECORD), out.join(CHECKPOINT), out.join(SNAPSHOTS));
    for (path, is_file) in [(&rec, true), (&ck, true), (&snaps, false)] {
        if path.exists() && path.is_file() != is_file {
            let kind = if is_file { "file" } else { "folder" };
            return Err(format!("{}: is not a {kind}; remove it", path.display()));
        }
    }
    let at = out.display();
    let elsewhere = "give another --out, or remove that folder to start over";
    let held = if rec.is_file() {
        let r: RunRecord = crate::report::read_json(&rec)
            .map_err(|e| format!("{e}; this folder holds a run it cannot read: {elsewhere}"))?;
        let was = r.config_now();
        let same = match how {
            OutUse::Resume { .. } => was.same_run(cfg),
            _ => was == cfg.normalized(),
        };
        if !same {
            return Err(format!(
                "{at} holds a run of other settings ({}; {}); this run would replace it: \
                 {elsewhere}",
                r.summary(),
                was.first_difference(cfg, ("there", "here"))
            ));
        }
        let trained = r.epochs.last().map_or(0, |e| e.epoch);
        if let OutUse::Resume { epoch, .. } = how
            && trained > epoch
        {
            return Err(format!(
                "{at} holds this run trained to epoch {trained}, past the checkpoint's epoch \
                 {epoch}; resuming would drop its later epochs: resume {} instead, or {elsewhere}",
                ck.display()
            ));
        }
        Some(r.summary())
    } else if ck.exists() {
        let same_file = |p: &Path| std::fs::canonicalize(p).ok();
        if let OutUse::Resume { from, .. } = how
            && same_file(&ck) != same_file(from)
        {
            return Err(format!(
                "{at} holds a checkpoint with no record of its run; resuming {} there would \
                 replace it: {elsewhere}",
                from.display()
            ));
        }
        Some(format!("{CHECKPOINT} without a record"))
    } else if std::fs::read_dir(&snaps).is_ok_and(|mut d| d.next().is_some()) {
        Some(format!("{SNAPSHOTS}/ of an earlier run"))
    } else {
        None
    };
    match (how, held) {
        (OutUse::New, Some(what)) => Err(format!(
            "{at} already holds a run ({what}); pick it up with --continue, or {elsewhere}"
        )),
        _ => Ok(()),
    }
}

/// What a run reports as it goes.
pub enum Event<'a> {
    /// One optimizer step of epoch `epoch` (1-based), `done` of `total` in that epoch.
    Step {
        /// The epoch being trained, counted from 1.
        epoch: usize,
        /// Steps done in this epoch, this one included.
        done: usize,
        /// Steps in this epoch.
        total: usize,
        /// This step's training loss.
        loss: f64,
    },
    /// An epoch ended and was evaluated.
    Epoch(&'a EpochRecord),
}

/// Trains to the end of the budget (or patience), writing `out/checkpoint.bin` after every
/// epoch and `out/record.json` after every epoch and at the end, both atomically. A failure
/// (e.g. a non-finite loss) is recorded and returned; the last good checkpoint stays. `out` is
/// locked for the run ([`crate::report::lock_folder`]): a second writer is refused.
///
/// A tiny run: three epochs of lag-2 recall with an AT5 bias, then a resume of its checkpoint.
///
/// ```
/// use at5::data::{LagKConfig, TaskConfig, TaskKind};
/// use at5::nn::{BiasScope, Dropouts, PooledHead};
/// use at5::train::{self, ModelSpec, TaskSource, TrainConfig, Trainer, bias_for};
///
/// let task = LagKConfig {
///     seq_len: 8,
///     lag: 2,
///     vocab: 4,
///     train: 200,
///     dev: 50,
///     test: 50,
///     training_nums: 200,
/// };
/// let config = TrainConfig {
///     task: TaskSource::Generated { config: TaskConfig::LagK(task), seed: 1 },
///     model: ModelSpec {
///         d_model: 16,
///         heads: 2,
///         ffn: 32,
///         layers: 1,
///         bias: bias_for("at5", TaskKind::LagK, 8, (0.0, false)).unwrap(),
///         bias_scope: BiasScope::Shared,
///         dropout: Dropouts::NONE,
///         head: PooledHead::default(),
///         unbiased_heads: Vec::new(),
///     },
///     lr: 3e-3,
///     batch: 32,
///     epochs: 3,
///     seed: 5,
///     patience: None,
///     whole_graph: false,
/// };
/// let out = std::env::temp_dir().join(format!("at5-doc-run-{}", std::process::id()));
/// let record = train::run(Trainer::new(config).unwrap(), &out, |_| {}).unwrap();
///
/// assert_eq!(record.status, "completed");
/// assert_eq!(record.epochs.len(), 3);
/// assert!(record.epochs[2].train_loss < record.epochs[0].train_loss);
/// // The test split is scored at the best dev epoch; AT5's slopes are recorded every epoch.
/// assert!(record.best.is_some());
/// assert_eq!(record.epochs[0].per_head.get("alpha").unwrap().len(), 2);
///
/// let resumed = Trainer::from_checkpoint(&out.join(train::CHECKPOINT)).unwrap();
/// assert_eq!(resumed.state.epoch, 3);
/// std::fs::remove_dir_all(&out).unwrap();
/// ```
pub fn run(trainer: Trainer, out: &Path, on_event: impl FnMut(Event)) -> Result<RunRecord, String> {
    run_with_snapshots(trainer, out, &[], on_event)
}

/// [`run`], also keeping a full checkpoint of the end of each epoch in `snapshots` at
/// [`snapshot_path`] (epoch 0 is the untrained model, if the run starts there), so the prior
/// can be looked at as it was learned. Each snapshot is a complete checkpoint: `prior` reads
/// it and `train --resume` continues from it. An epoch's snapshot is written before the
/// checkpoint that passes it, so a run stopped anywhere resumes to write every snapshot.
pub fn run_with_snapshots(
    mut trainer: Trainer,
    out: &Path,
    snapshots: &[usize],
    mut on_event: impl FnMut(Event),
) -> Result<RunRecord, String> {
    check_out_dir(out)?;
    // Held to the end of the run (a binary that locked `out` already shares its lock).
    let _lock = crate::report::lock_folder(out)?;
    let (ck, rec) = (out.join(CHECKPOINT), out.join(RECORD));
    let snapshot = |t: &Trainer| -> Result<(), String> {
        if !snapshots.contains(&t.state.epoch) {
            return Ok(());
        }
        let path = snapshot_path(out, t.state.epoch);
        std::fs::create_dir_all(out.join(SNAPSHOTS))
            .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        t.save_checkpoint(&path)
    };
    if trainer.state.epoch == 0 {
        snapshot(&trainer)?;
    }
    while !trainer.done() {
        let epoch = trainer.state.epoch + 1;
        let res = trainer.train_epoch(|done, total, loss| {
            on_event(Event::Step {
                epoch,
                done,
                total,
                loss,
            })
        });
        match res {
            Ok(e) => on_event(Event::Epoch(&e)),
            Err(e) => {
                write_json(&rec, &trainer.record(&format!("failed: {e}")))?;
                return Err(e);
            }
        }
        // The snapshot first: a checkpoint saved past an epoch whose snapshot then failed
        // (a full disk) would resume beyond it, and that snapshot could never be written.
        snapshot(&trainer)?;
        trainer.save_checkpoint(&ck)?;
        write_json(&rec, &trainer.record("running"))?;
    }
    let status = if trainer.state.epoch >= trainer.config.epochs {
        "completed"
    } else {
        "stopped early (patience)"
    };
    let record = trainer.record(status);
    write_json(&rec, &record)?;
    Ok(record)
}
