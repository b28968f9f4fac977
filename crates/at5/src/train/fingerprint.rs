//! What data a run was trained on: the size and a hash of each split, kept in its checkpoints,
//! so a resume on other data (an edited file, a changed generator) is refused, not trained on.
use super::config::TaskSource;
use crate::data::{Example, Label, Sequence, TaskData};
use serde::{Deserialize, Serialize};

/// The size and hash of the train, dev and test splits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFingerprint {
    /// Examples per split.
    pub sizes: [usize; 3],
    /// A hash of each split's inputs and labels, in order.
    pub hashes: [u64; 3],
}

/// A word-at-a-time FNV-1a: each step is a bijection of the state for a fixed word, so changing
/// any one word always changes the hash; fast enough to run at every checkpoint.
fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0x0100_0000_01b3)
}

fn hash_split(examples: &[Example]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for e in examples {
        match &e.input {
            Sequence::Tokens(t) => {
                h = mix(mix(h, 1), t.len() as u64);
                for &x in t {
                    h = mix(h, x as u64);
                }
            }
            Sequence::Pairs(p) => {
                h = mix(mix(h, 2), p.len() as u64);
                for [v, m] in p {
                    h = mix(h, (v.to_bits() as u64) << 32 | m.to_bits() as u64);
                }
            }
        }
        h = match e.label {
            Label::Class(c) => mix(mix(h, 3), c as u64),
            Label::Real(r) => mix(mix(h, 4), r.to_bits() as u64),
        };
    }
    h
}

impl DataFingerprint {
    /// The fingerprint of loaded data.
    pub fn of(data: &TaskData) -> DataFingerprint {
        let splits = [&data.train, &data.dev, &data.test];
        DataFingerprint {
            sizes: splits.map(|s| s.len()),
            hashes: splits.map(|s| hash_split(s)),
        }
    }

    /// `Err` naming each split of `source` that differs in `now` from this (recorded) one.
    pub fn check(&self, now: &DataFingerprint, source: &TaskSource) -> Result<(), String> {
        let changed: Vec<String> = (0..3)
            .filter(|&i| self.sizes[i] != now.sizes[i] || self.hashes[i] != now.hashes[i])
            .map(|i| {
                let sizes = if self.sizes[i] == now.sizes[i] {
                    String::new()
                } else {
                    format!(" ({} examples instead of {})", now.sizes[i], self.sizes[i])
                };
                let what = match source {
                    TaskSource::Files { dir, .. } => {
                        let file = crate::data::files::SPLIT_FILES[i];
                        dir.join(file).display().to_string()
                    }
                    TaskSource::Generated { .. } => {
                        format!("the generated {} split", ["train", "dev", "test"][i])
                    }
                };
                format!("{what} changed{sizes}")
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        let what = match source {
            TaskSource::Files { .. } => "restore the files it was trained on, or start a new run",
            TaskSource::Generated { .. } => "the generator has changed since: start a new run",
        };
        Err(format!(
            "the data is not what this checkpoint was trained on: {}; {what}",
            changed.join(", ")
        ))
    }
}
