//! Lag-k recall: uniform random tokens; the label is the token k slots before the last one.
//!
//! Token ids are 1..=vocab (PAD stays 0) and a class is a token id, so num_classes = vocab_size
//! = vocab + 1. Every sequence has length L, so the last slot of the padded sequence is L-1 and
//! the label is the token at index L-1-k: a learned prior should peak at relative position -k,
//! which a monotone prior cannot.
use super::{Example, Label, Sequence, TaskData, TaskKind, check_sizes, draw_unique, split3};
use rand::{RngExt, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Lag-k recall's sizes: uniform random tokens of length L, label the token at `L-1-k`.
pub struct LagKConfig {
    /// L.
    pub seq_len: usize,
    /// k: the label sits at index L-1-k.
    pub lag: usize,
    /// Number of distinct symbols.
    pub vocab: usize,
    /// Unique examples generated for the train split.
    pub train: usize,
    /// Examples in the dev split.
    pub dev: usize,
    /// Examples in the test split.
    pub test: usize,
    /// How many train examples are actually used.
    pub training_nums: usize,
}

impl LagKConfig {
    /// L = 64, k = 16 at the paper's data sizes.
    pub fn paper() -> LagKConfig {
        LagKConfig {
            seq_len: 64,
            lag: 16,
            vocab: 8,
            train: 20000,
            dev: 5000,
            test: 5000,
            training_nums: 5000,
        }
    }
    /// L = 16, k = 4 with small splits, for minutes-long runs.
    pub fn quick() -> LagKConfig {
        LagKConfig {
            seq_len: 16,
            lag: 4,
            vocab: 8,
            train: 4000,
            dev: 1000,
            test: 1000,
            training_nums: 1000,
        }
    }
    /// Impossible sizes as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        check_sizes("lagk", self.train, self.dev, self.test, self.training_nums)?;
        if self.seq_len < 2 {
            return Err(format!("lagk: seq_len = {} must be >= 2", self.seq_len));
        }
        if self.lag == 0 {
            return Err(
                "lagk: lag = 0 must be >= 1 (at k = 0 the label is the pooled last token itself)"
                    .into(),
            );
        }
        if self.lag >= self.seq_len {
            return Err(format!(
                "lagk: lag = {} must be < seq_len = {} (the label is the token at L-1-k)",
                self.lag, self.seq_len
            ));
        }
        if self.vocab < 2 {
            return Err(format!("lagk: vocab = {} must be >= 2", self.vocab));
        }
        let need = (self.train + self.dev + self.test) as u128;
        let space = (self.vocab as u128).checked_pow(self.seq_len as u32);
        if let Some(space) = space.filter(|&s| need > s) {
            return Err(format!(
                "lagk: {need} unique sequences requested but only {}^{} = {space} exist",
                self.vocab, self.seq_len
            ));
        }
        Ok(())
    }
}

pub(crate) fn generate(cfg: &LagKConfig, rng: &mut StdRng) -> Result<TaskData, String> {
    let n = cfg.train + cfg.dev + cfg.test;
    let mut seen = HashSet::new();
    let label_at = cfg.seq_len - 1 - cfg.lag;
    let all = draw_unique("lagk", n, rng, &mut seen, |rng| {
        let toks: Vec<usize> = (0..cfg.seq_len)
            .map(|_| rng.random_range(1..=cfg.vocab))
            .collect();
        let ex = Example {
            label: Label::Class(toks[label_at]),
            input: Sequence::Tokens(toks.clone()),
        };
        Some((toks, ex))
    })?;
    TaskData::assemble(
        format!("lag{}-L{}", cfg.lag, cfg.seq_len),
        TaskKind::LagK,
        split3(all, cfg.train, cfg.dev),
        cfg.training_nums,
        cfg.vocab + 1,
        cfg.vocab + 1,
    )
}
