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
pub use prior::{HeadSummary, PriorReport, pooled_query, prior_report};
pub use record::RunRecord;
pub use trainer::{Best, EpochRecord, TrainState, Trainer};

use crate::report::write_json;
use std::path::Path;

/// File names inside a run's output directory.
pub const CHECKPOINT: &str = "checkpoint.bin";
pub const RECORD: &str = "record.json";

/// What a run reports as it goes.
pub enum Event<'a> {
    Step {
        epoch: usize,
        done: usize,
        total: usize,
        loss: f64,
    },
    Epoch(&'a EpochRecord),
}

/// Trains to the end of the budget (or patience), writing `out/checkpoint.bin` after every
/// epoch and `out/record.json` after every epoch and at the end, both atomically. A failure
/// (e.g. a non-finite loss) is recorded and returned; the last good checkpoint stays.
pub fn run(
    mut trainer: Trainer,
    out: &Path,
    mut on_event: impl FnMut(Event),
) -> Result<RunRecord, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
    let (ck, rec) = (out.join(CHECKPOINT), out.join(RECORD));
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
