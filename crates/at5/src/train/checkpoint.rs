//! Checkpoints: config, parameters, Adam state and loop counters in one bincode file.
//!
//! Layout: 8-byte magic, payload length (u64 LE), FNV-1a checksum of the payload (u64 LE),
//! then the bincode payload, so a truncated, corrupted or foreign file is named as such
//! instead of decoding into garbage.
//!
//! Version 2 (`AT5CKPT2`) adds the fingerprint of the run's data, checked on resume, and keeps
//! everything but the number buffers as JSON inside the payload: bincode is not
//! self-describing, so a field added to a config later would shift every byte after it,
//! whereas JSON reads it with its serde default, as run records do. Version-1 files
//! (`AT5CKPT1`, written before fingerprints) still load and resume, unchecked, through a frozen
//! copy of their layout ([`super::checkpoint_v1`]).
use super::checkpoint_v1;
use super::config::TrainConfig;
use super::decoded::Decoded;
use super::fingerprint::DataFingerprint;
use super::hash::fnv1a;
use super::record::RunRecord;
use super::trainer::{TrainState, Trainer};
use crate::optim::{Adam, AdamConfig};
use crate::report::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"AT5CKPT2";
const MAGIC_V1: &[u8; 8] = b"AT5CKPT1";
const HEADER: usize = 24;

/// Everything but the parameter and moment buffers; stored as JSON.
#[derive(Serialize, Deserialize)]
struct Meta {
    config: TrainConfig,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    adam: AdamConfig,
    adam_step: u64,
    state: TrainState,
    without_grad: Vec<String>,
    data: DataFingerprint,
    /// The run's id ([`TrainConfig::id`]) when saved; absent in checkpoints written before it
    /// was kept, which still load (the config beside it says the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run: Option<String>,
}

/// The version-2 payload: the JSON of [`Meta`], then parameters and Adam's moments in store
/// order.
#[derive(Serialize, Deserialize)]
struct Payload {
    meta: String,
    values: Vec<Vec<f32>>,
    m: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

fn decode_v2(payload: &[u8]) -> Result<(Decoded, usize), String> {
    let (p, used): (Payload, usize) =
        bincode::serde::decode_from_slice(payload, bincode::config::standard())
            .map_err(|e| format!("cannot decode checkpoint: {e}"))?;
    let meta: Meta = serde_json::from_str(&p.meta)
        .map_err(|e| format!("cannot decode the checkpoint's config and state: {e}"))?;
    Ok((
        Decoded {
            config: meta.config,
            names: meta.names,
            shapes: meta.shapes,
            values: p.values,
            adam_config: meta.adam,
            adam_step: meta.adam_step,
            m: p.m,
            v: p.v,
            state: meta.state,
            without_grad: meta.without_grad,
            data: Some(meta.data),
        },
        used,
    ))
}

impl Trainer {
    /// Refuses a checkpoint (this trainer, read from `ck`) that is not of the run `rec`
    /// (read from `rec_path`) as it ended: other settings, or another history (a checkpoint
    /// swapped between two runs' folders, or left by a later run). The error names both runs.
    pub fn check_run_of(&self, ck: &Path, rec: &RunRecord, rec_path: &Path) -> Result<(), String> {
        let (here, there) = (&self.config, &rec.config);
        let ours = self.record("");
        let what = if here.normalized() != there.normalized() {
            here.first_difference(there, ("in the checkpoint", "in the record"))
        } else if ours.digest() != rec.digest() {
            format!(
                "the same settings, but it holds {} trained epochs and another history than \
                 the record's {}",
                self.state.epoch,
                rec.epochs.len()
            )
        } else {
            return Ok(());
        };
        Err(format!(
            "{}: the checkpoint of run {} ({}, epoch {}), not of run {} that {} records ({}): \
             {what}; put that run's own checkpoint there, or remove this one",
            ck.display(),
            here.id(),
            ours.summary_of_run(),
            self.state.epoch,
            there.id(),
            rec_path.display(),
            rec.summary_of_run(),
        ))
    }

    /// Writes the run's full state to `path` atomically (temp file + rename).
    pub fn save_checkpoint(&self, path: &Path) -> Result<(), String> {
        let meta = Meta {
            config: self.config.clone(),
            names: self.store.names().to_vec(),
            shapes: self
                .store
                .values()
                .iter()
                .map(|t| t.shape.clone())
                .collect(),
            adam: self.adam.config,
            adam_step: self.adam.step,
            state: self.state.clone(),
            without_grad: self.without_grad.clone(),
            data: DataFingerprint::of(&self.data),
            run: Some(self.config.id()),
        };
        let meta = serde_json::to_string(&meta)
            .map_err(|e| format!("{}: cannot encode checkpoint: {e}", path.display()))?;
        let ck = Payload {
            meta,
            values: self.store.values().iter().map(|t| t.data.clone()).collect(),
            m: self.adam.m.clone(),
            v: self.adam.v.clone(),
        };
        let payload = bincode::serde::encode_to_vec(&ck, bincode::config::standard())
            .map_err(|e| format!("{}: cannot encode checkpoint: {e}", path.display()))?;
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&fnv1a(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        write_atomic(path, &bytes)
    }

    /// Restores a run from a checkpoint: regenerates (or reloads) its data from the stored
    /// config, refuses it if it differs from the data the checkpoint was trained on, then puts
    /// back parameters, optimizer state and counters.
    pub fn from_checkpoint(path: &Path) -> Result<Trainer, String> {
        let at = path.display();
        let bytes =
            std::fs::read(path).map_err(|e| format!("{at}: cannot read checkpoint: {e}"))?;
        let v1 = bytes.len() >= HEADER && &bytes[..8] == MAGIC_V1;
        if bytes.len() < HEADER || !(v1 || &bytes[..8] == MAGIC) {
            return Err(format!("{at}: not an at5 checkpoint (bad header)"));
        }
        let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
        let sum = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
        let payload = &bytes[HEADER..];
        if payload.len() < len {
            return Err(format!(
                "{at}: truncated checkpoint ({} of {len} payload bytes)",
                payload.len()
            ));
        }
        if payload.len() > len {
            return Err(format!(
                "{at}: not a checkpoint as written ({} bytes after its {len} payload bytes)",
                payload.len() - len
            ));
        }
        if fnv1a(payload) != sum {
            return Err(format!("{at}: corrupt checkpoint (checksum mismatch)"));
        }
        let (ck, used) = if v1 {
            checkpoint_v1::decode(payload).map_err(|e| format!("{at}: {e}"))?
        } else {
            decode_v2(payload).map_err(|e| format!("{at}: {e}"))?
        };
        if used != len {
            return Err(format!(
                "{at}: {} trailing bytes after the checkpoint",
                len - used
            ));
        }
        let mut t = Trainer::new(ck.config).map_err(|e| format!("{at}: {e}"))?;
        if let Some(fp) = &ck.data {
            fp.check(&DataFingerprint::of(&t.data), &t.config.task)
                .map_err(|e| format!("{at}: {e}"))?;
        }
        let expected: Vec<(String, Vec<usize>)> = t
            .store
            .names()
            .iter()
            .cloned()
            .zip(t.store.values().iter().map(|v| v.shape.clone()))
            .collect();
        let found: Vec<(String, Vec<usize>)> = ck.names.into_iter().zip(ck.shapes).collect();
        if expected != found {
            return Err(format!(
                "{at}: parameters do not match the model its config builds"
            ));
        }
        for (dst, src) in t.store.values_mut().iter_mut().zip(ck.values) {
            if src.len() != dst.len() {
                return Err(format!("{at}: a parameter has the wrong number of values"));
            }
            dst.data = src;
        }
        let sizes_ok = ck.m.len() == t.store.len()
            && ck.v.len() == t.store.len()
            && ck
                .m
                .iter()
                .zip(&ck.v)
                .zip(t.store.values())
                .all(|((m, v), p)| m.len() == p.len() && v.len() == p.len());
        if !sizes_ok {
            return Err(format!(
                "{at}: optimizer state does not match the parameters"
            ));
        }
        t.adam = Adam {
            config: ck.adam_config,
            step: ck.adam_step,
            m: ck.m,
            v: ck.v,
        };
        t.state = ck.state;
        t.without_grad = ck.without_grad;
        Ok(t)
    }
}
