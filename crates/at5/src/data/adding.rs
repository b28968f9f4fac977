//! Adding-T: T (value, marker) pairs; the target is 0.5 + (sum of the two marked values) / 4.
//!
//! Values are U(-1, 1) rounded to 4 decimals; markers are 0 except position 0 and T-1 (-1) and
//! the two chosen positions (1). t1 is uniform in 0..=9; t1 = 0 also sets the value there to
//! 0.0. t2 is uniform in [0, T/2 - 1) without t1. Only t1 = 0 zeroes its value: a t2 of 0 keeps
//! its random value, as the rule is stated.
use super::{Example, Label, Sequence, TaskData, TaskKind, check_sizes, draw_unique, split3};
use rand::{RngExt, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// t1 is drawn from 0..T1_RANGE.
pub const T1_RANGE: usize = 10;
/// The smallest T with room for t1 and a t2 distinct from it.
pub const MIN_SEQ_LEN: usize = T1_RANGE;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// The adding problem's sizes (the paper's task): T pairs `(value, marker)`, target `0.5 + (v[t1] + v[t2]) / 4`.
pub struct AddingConfig {
    /// T; the paper uses 100 and 500.
    pub seq_len: usize,
    /// Unique examples generated for the train split.
    pub train: usize,
    /// Examples in the dev split.
    pub dev: usize,
    /// Examples in the test split.
    pub test: usize,
    /// How many train examples are actually used.
    pub training_nums: usize,
}

impl AddingConfig {
    /// T = 100; the paper's T = 500 is `AddingConfig { seq_len: 500, ..AddingConfig::paper() }`.
    pub fn paper() -> AddingConfig {
        AddingConfig {
            seq_len: 100,
            train: 20000,
            dev: 5000,
            test: 5000,
            training_nums: 1000,
        }
    }
    /// A smaller T = 100 setting that trains in minutes.
    pub fn quick() -> AddingConfig {
        AddingConfig {
            seq_len: 50,
            train: 4000,
            dev: 500,
            test: 500,
            training_nums: 1000,
        }
    }
    /// Impossible sizes as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        check_sizes(
            "adding",
            self.train,
            self.dev,
            self.test,
            self.training_nums,
        )?;
        if self.seq_len < MIN_SEQ_LEN {
            return Err(format!(
                "adding: seq_len = {} too short: t1 ranges over 0..{T1_RANGE}, so T must be >= {MIN_SEQ_LEN}",
                self.seq_len
            ));
        }
        Ok(())
    }
}

pub(crate) fn generate(cfg: &AddingConfig, rng: &mut StdRng) -> Result<TaskData, String> {
    let n = cfg.train + cfg.dev + cfg.test;
    let mut seen = HashSet::new();
    let all = draw_unique("adding", n, rng, &mut seen, |rng| {
        let pairs = sample_pairs(rng, cfg.seq_len);
        let key: Vec<[u32; 2]> = pairs
            .iter()
            .map(|p| [p[0].to_bits(), p[1].to_bits()])
            .collect();
        let target = target_of(&pairs).expect("sample_pairs marks exactly two positions");
        let ex = Example {
            input: Sequence::Pairs(pairs),
            label: Label::Real(target),
        };
        Some((key, ex))
    })?;
    TaskData::assemble(
        format!("adding{}", cfg.seq_len),
        TaskKind::Adding,
        split3(all, cfg.train, cfg.dev),
        cfg.training_nums,
        0,
        0,
    )
}

/// One input of length `t` (t >= MIN_SEQ_LEN).
pub fn sample_pairs(rng: &mut StdRng, t: usize) -> Vec<[f32; 2]> {
    let mut values: Vec<f32> = (0..t)
        .map(|_| round4(rng.random_range(-1.0..1.0)))
        .collect();
    let mut markers = vec![0.0f32; t];
    markers[0] = -1.0;
    markers[t - 1] = -1.0;
    let t1 = rng.random_range(0..T1_RANGE);
    if t1 == 0 {
        values[0] = 0.0;
    }
    markers[t1] = 1.0;
    let hi = t / 2 - 1;
    let t2 = if t1 < hi {
        // Uniform over [0, hi) \ {t1}: draw from hi - 1 slots and skip over t1.
        let r = rng.random_range(0..hi - 1);
        if r >= t1 { r + 1 } else { r }
    } else {
        rng.random_range(0..hi)
    };
    markers[t2] = 1.0;
    values
        .into_iter()
        .zip(markers)
        .map(|(v, m)| [v, m])
        .collect()
}

/// Rounds to 4 decimals through f64, so the stored f32 is the one nearest the decimal number
/// (the one its text parses back to); -0.0 becomes 0.0 so equal values have equal bits.
fn round4(u: f64) -> f32 {
    let v = ((u * 1e4).round() / 1e4) as f32;
    if v == 0.0 { 0.0 } else { v }
}

/// 0.5 + (a + b) / 4, computed in f64 from the stored values and rounded once.
pub fn target_from_values(a: f32, b: f32) -> f32 {
    (0.5 + (a as f64 + b as f64) / 4.0) as f32
}

/// The target recomputed from the markers, or None unless exactly two positions have marker 1.
pub fn target_of(pairs: &[[f32; 2]]) -> Option<f32> {
    let mut marked = pairs.iter().filter(|p| p[1] == 1.0);
    let (a, b) = (marked.next()?, marked.next()?);
    if marked.next().is_some() {
        return None;
    }
    Some(target_from_values(a[0], b[0]))
}
