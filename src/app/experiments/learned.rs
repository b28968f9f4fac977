//! What a finished run's model learned, kept beside its record (`prior.json`,
//! `head-ablation.json`): computed once from the run's checkpoint, then read back, so a report
//! rebuilds from committed files alone and checkpoints can stay on the machine that trained.
use crate::report::{read_json, write_json};
use crate::sweep::{RunSpec, finished};
use crate::train::{self, TrainConfig, Trainer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A value computed from a run's final checkpoint, with what identifies the run.
#[derive(Serialize, Deserialize)]
struct Kept<T> {
    /// The run's config and the epochs it trained: a file left by another run is not reused.
    config: TrainConfig,
    epochs: usize,
    value: T,
}

/// `compute` on the finished run `spec`'s final model: read from `file` in the run's directory
/// when it was computed from this run, else computed from the run's checkpoint and written
/// there. `None` when the run is unfinished, or neither the file nor a checkpoint of the
/// finished run is there.
pub fn of_finished<T: Serialize + DeserializeOwned>(
    root: &Path,
    spec: &RunSpec,
    file: &str,
    compute: impl FnOnce(&Trainer) -> T,
) -> Result<Option<T>, String> {
    let Some(rec) = finished(root, spec) else {
        return Ok(None);
    };
    let dir = spec.dir(root);
    let path = dir.join(file);
    let epochs = rec.epochs.len();
    if let Ok(kept) = read_json::<Kept<T>>(&path)
        && kept.config == rec.config
        && kept.epochs == epochs
    {
        return Ok(Some(kept.value));
    }
    // A checkpoint written by a later run in the same directory is not this record's model.
    let Ok(t) = Trainer::from_checkpoint(&dir.join(train::CHECKPOINT)) else {
        return Ok(None);
    };
    if t.config != rec.config || t.state.epoch != epochs {
        return Ok(None);
    }
    let value = compute(&t);
    let kept = Kept {
        config: rec.config,
        epochs,
        value: &value,
    };
    write_json(&path, &kept)?;
    Ok(Some(value))
}
