//! What a finished run's model learned, kept beside its record (`prior.json`,
//! `head-ablation.json`, `extrapolate.json`): computed once from the run's checkpoint, then read
//! back, so a report rebuilds from committed files alone and checkpoints can stay on the
//! machine that trained.
use crate::sweep::{RunSpec, finished};
use at5::report::{read_json, write_json};
use at5::train::{self, TrainConfig, Trainer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a report does with a finished run whose learned value can be neither read from its
/// file nor computed from its checkpoint (a clone without checkpoints, a cache deleted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Fail naming the run and what is missing: a report never silently loses a run.
    Refuse,
    /// Leave the run out of that table or figure, with a note on standard error
    /// (`merge --allow-missing`).
    Allow,
}

/// A value computed from a run's final checkpoint, with what ties it to the run.
#[derive(Serialize, Deserialize)]
struct Kept<T> {
    /// The run's config and the epochs it trained: a file left by another run is not reused.
    config: TrainConfig,
    epochs: usize,
    /// The record's digest ([`train::RunRecord::digest`]); absent in files written before it
    /// was kept, which are read as long as config and epochs agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    record: Option<String>,
    value: T,
}

/// `compute` on the finished run `spec`'s final model: read from `file` in the run's directory
/// when it was computed from this run, else computed from the run's checkpoint (refused if the
/// checkpoint is of another run) and written there. `Ok(None)` when the run is unfinished, or
/// — only with [`Missing::Allow`] — when neither is there; with [`Missing::Refuse`] that is an
/// error naming the run and what to do.
pub fn of_finished<T: Serialize + DeserializeOwned>(
    root: &Path,
    spec: &RunSpec,
    file: &str,
    missing: Missing,
    compute: impl FnOnce(&Trainer) -> Result<T, String>,
) -> Result<Option<T>, String> {
    let Some(rec) = finished(root, spec) else {
        return Ok(None);
    };
    let dir = spec.dir(root);
    let path = dir.join(file);
    let epochs = rec.epochs.len();
    let digest = rec.digest();
    let kept = read_json::<Kept<T>>(&path);
    if let Ok(k) = &kept
        && k.config == rec.config
        && k.epochs == epochs
        && k.record.as_ref().is_none_or(|d| *d == digest)
    {
        return Ok(kept.ok().map(|k| k.value));
    }
    let ck = dir.join(train::CHECKPOINT);
    let computed = if ck.exists() {
        let t = Trainer::from_checkpoint(&ck)?;
        // A checkpoint of another run (swapped between folders, or left by a later run) is
        // refused whatever `missing` says: its numbers would go under this run's name.
        t.check_run_of(&ck, &rec, &dir.join(train::RECORD))?;
        Some(compute(&t).map_err(|e| format!("{}: {e}", ck.display()))?)
    } else {
        None
    };
    let Some(value) = computed else {
        let what = match kept {
            Ok(_) => format!("{} is of another run than its record", path.display()),
            Err(_) if path.exists() => format!("{} cannot be read", path.display()),
            Err(_) => format!("no {}", path.display()),
        };
        let why = format!(
            "run {} ({}): {what}, and no {} to compute it from (checkpoints stay on the machine \
             that trained)",
            spec.id,
            rec.config.id(),
            ck.display()
        );
        return match missing {
            Missing::Allow => {
                eprintln!("note: left out of the report: {why}");
                Ok(None)
            }
            Missing::Refuse => Err(format!(
                "{why}; copy the run's checkpoint.bin there, or merge with --allow-missing to \
                 build the report without it"
            )),
        };
    };
    let kept = Kept {
        config: rec.config,
        epochs,
        record: Some(digest),
        value: &value,
    };
    write_json(&path, &kept)?;
    Ok(Some(value))
}
