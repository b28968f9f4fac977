//! Training: batches, evaluation, the loop, checkpoints, run records, `run` tying them up, and
//! the look inside a trained model's prior.
mod batch;
mod checkpoint;
mod config;
mod metrics;
mod prior;
mod record;
mod trainer;

pub use batch::make_batch;
pub use config::{
    Dial, ModelSpec, Preset, TaskSource, TrainConfig, bias_for, preset_config, task_config,
    task_length,
};
pub use metrics::{EVAL_BATCH, Metrics, argmax, evaluate};
pub use prior::{
    HeadSummary, PriorReport, compare_priors, pooled_query, prior_by_epoch, prior_report,
    prior_series,
};
pub use record::RunRecord;
pub use trainer::{Best, EpochRecord, TrainState, Trainer};

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
/// (e.g. a non-finite loss) is recorded and returned; the last good checkpoint stays.
pub fn run(trainer: Trainer, out: &Path, on_event: impl FnMut(Event)) -> Result<RunRecord, String> {
    run_with_snapshots(trainer, out, &[], on_event)
}

/// [`run`], also keeping a full checkpoint of the end of each epoch in `snapshots` at
/// [`snapshot_path`] (epoch 0 is the untrained model, if the run starts there), so the prior
/// can be looked at as it was learned. Each snapshot is a complete checkpoint: `prior` reads
/// it and `train --resume` continues from it.
pub fn run_with_snapshots(
    mut trainer: Trainer,
    out: &Path,
    snapshots: &[usize],
    mut on_event: impl FnMut(Event),
) -> Result<RunRecord, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
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
        trainer.save_checkpoint(&ck)?;
        snapshot(&trainer)?;
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
