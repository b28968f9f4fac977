//! Checkpoints: config, parameters, Adam state and loop counters in one bincode file.
//!
//! Layout: 8-byte magic, payload length (u64 LE), FNV-1a checksum of the payload (u64 LE),
//! then the bincode payload, so a truncated, corrupted or foreign file is named as such
//! instead of decoding into garbage.
use super::config::TrainConfig;
use super::trainer::{TrainState, Trainer};
use crate::optim::Adam;
use crate::report::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"AT5CKPT1";
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
    /// config, then puts back parameters, optimizer state and counters.
    pub fn from_checkpoint(path: &Path) -> Result<Trainer, String> {
        let at = path.display();
        let bytes =
            std::fs::read(path).map_err(|e| format!("{at}: cannot read checkpoint: {e}"))?;
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
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
        let (ck, used): (Checkpoint, usize) =
            bincode::serde::decode_from_slice(payload, bincode::config::standard())
                .map_err(|e| format!("{at}: cannot decode checkpoint: {e}"))?;
        if used != len {
            return Err(format!(
                "{at}: {} trailing bytes after the checkpoint",
                len - used
            ));
        }
        let mut t = Trainer::new(ck.config)?;
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
