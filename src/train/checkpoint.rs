//! Checkpoints: config, parameters, Adam state and loop counters in one bincode file.
//!
//! Layout: 8-byte magic, payload length (u64 LE), FNV-1a checksum of the payload (u64 LE),
//! then the bincode payload, so a truncated, corrupted or foreign file is named as such
//! instead of decoding into garbage.
//!
//! Version 2 (`AT5CKPT2`) adds the fingerprint of the run's data, checked on resume. Version 1
//! files (`AT5CKPT1`, written before fingerprints) still load and resume, unchecked: bincode is
//! not self-describing, so the version is in the magic rather than in an optional field.
use super::config::TrainConfig;
use super::fingerprint::DataFingerprint;
use super::trainer::{TrainState, Trainer};
use crate::optim::Adam;
use crate::report::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"AT5CKPT2";
const MAGIC_V1: &[u8; 8] = b"AT5CKPT1";
const HEADER: usize = 24;

#[derive(Serialize, Deserialize)]
struct Checkpoint {
    config: TrainConfig,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    values: Vec<Vec<f32>>,
    adam: Adam<f32>,
    state: TrainState,
    without_grad: Vec<String>,
    /// `None` only for a version-1 file, which predates fingerprints.
    data: Option<DataFingerprint>,
}

/// The version-1 layout: [`Checkpoint`] without the data fingerprint.
#[derive(Deserialize)]
struct CheckpointV1 {
    config: TrainConfig,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    values: Vec<Vec<f32>>,
    adam: Adam<f32>,
    state: TrainState,
    without_grad: Vec<String>,
}

impl From<CheckpointV1> for Checkpoint {
    fn from(c: CheckpointV1) -> Checkpoint {
        Checkpoint {
            config: c.config,
            names: c.names,
            shapes: c.shapes,
            values: c.values,
            adam: c.adam,
            state: c.state,
            without_grad: c.without_grad,
            data: None,
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Trainer {
    /// Writes the run's full state to `path` atomically (temp file + rename).
    pub fn save_checkpoint(&self, path: &Path) -> Result<(), String> {
        let ck = Checkpoint {
            config: self.config.clone(),
            names: self.store.names().to_vec(),
            shapes: self
                .store
                .values()
                .iter()
                .map(|t| t.shape.clone())
                .collect(),
            values: self.store.values().iter().map(|t| t.data.clone()).collect(),
            adam: self.adam.clone(),
            state: self.state.clone(),
            without_grad: self.without_grad.clone(),
            data: Some(DataFingerprint::of(&self.data)),
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
        if payload.len() != len {
            return Err(format!(
                "{at}: truncated checkpoint ({} of {len} payload bytes)",
                payload.len()
            ));
        }
        if fnv1a(payload) != sum {
            return Err(format!("{at}: corrupt checkpoint (checksum mismatch)"));
        }
        let config = bincode::config::standard();
        let decoded = if v1 {
            bincode::serde::decode_from_slice::<CheckpointV1, _>(payload, config)
                .map(|(c, used)| (Checkpoint::from(c), used))
        } else {
            bincode::serde::decode_from_slice(payload, config)
        };
        let (ck, used) = decoded.map_err(|e| format!("{at}: cannot decode checkpoint: {e}"))?;
        if used != len {
            return Err(format!(
                "{at}: {} trailing bytes after the checkpoint",
                len - used
            ));
        }
        let mut t = Trainer::new(ck.config)?;
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
        let sizes_ok = ck.adam.m.len() == t.store.len()
            && ck
                .adam
                .m
                .iter()
                .zip(t.store.values())
                .all(|(m, p)| m.len() == p.len())
            && ck
                .adam
                .v
                .iter()
                .zip(t.store.values())
                .all(|(v, p)| v.len() == p.len());
        if !sizes_ok {
            return Err(format!(
                "{at}: optimizer state does not match the parameters"
            ));
        }
        t.adam = ck.adam;
        t.state = ck.state;
        t.without_grad = ck.without_grad;
        Ok(t)
    }
}
