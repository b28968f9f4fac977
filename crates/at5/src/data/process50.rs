//! Process-50: binary sequences from one of two Markov chains with equal stationary laws, and the
//! exact Bayes-optimal accuracy of telling them apart.
//!
//! States 0 and 1 are stored as token ids 1 and 2 (vocab_size 3), so neither collides with PAD;
//! the data files keep the digits `0`/`1`. Class 0: P(0→1)=0.2, P(1→0)=0.4; class 1:
//! P(0→1)=0.3, P(1→0)=0.6; the first state is 0 with probability 2/3 in both.
use super::{Example, Label, Sequence, TaskData, TaskKind, check_sizes, draw_unique};
use rand::{RngExt, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Token id of state s is `s + STATE_TOKEN_OFFSET`.
pub const STATE_TOKEN_OFFSET: usize = 1;
/// PAD plus the two states.
pub const VOCAB_SIZE: usize = 3;
/// Probability that a sequence starts in state 0.
pub const FIRST_STATE_ZERO: f64 = 2.0 / 3.0;
/// Longest length `bayes_accuracy` handles: its u64 sequence counts reach 2^(len-1).
pub const MAX_BAYES_LEN: usize = 63;

/// A two-state chain by its switching probabilities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chain {
    /// Probability of switching from state 0 to state 1.
    pub p01: f64,
    /// Probability of switching from state 1 to state 0.
    pub p10: f64,
}

/// The chain of class 0 and of class 1.
pub const CHAINS: [Chain; 2] = [Chain { p01: 0.2, p10: 0.4 }, Chain { p01: 0.3, p10: 0.6 }];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Process-50's sizes (the paper's task): binary sequences from one of two Markov chains.
pub struct Process50Config {
    /// Sequence length (50 in the paper).
    pub seq_len: usize,
    /// Unique train sequences per class.
    pub train_per_class: usize,
    /// Dev sequences per class.
    pub dev_per_class: usize,
    /// Test sequences per class.
    pub test_per_class: usize,
    /// Taken half from each class block of train.
    pub training_nums: usize,
}

impl Process50Config {
    /// 15000 unique per class → 10000+10000 / 2500+2500 / 2500+2500, training_nums 5000.
    pub fn paper() -> Process50Config {
        Process50Config {
            seq_len: 50,
            train_per_class: 10000,
            dev_per_class: 2500,
            test_per_class: 2500,
            training_nums: 5000,
        }
    }
    /// The paper's length with smaller splits, for minutes-long runs.
    pub fn quick() -> Process50Config {
        Process50Config {
            train_per_class: 2000,
            dev_per_class: 250,
            test_per_class: 250,
            training_nums: 1000,
            ..Process50Config::paper()
        }
    }
    /// Impossible sizes as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        check_sizes(
            "process50",
            2 * self.train_per_class,
            self.dev_per_class,
            self.test_per_class,
            self.training_nums,
        )?;
        if self.seq_len < 2 {
            return Err(format!(
                "process50: seq_len = {} has no transitions (need >= 2)",
                self.seq_len
            ));
        }
        let need = 2 * (self.train_per_class + self.dev_per_class + self.test_per_class);
        if self.seq_len < 64 && need as u64 > 1u64 << self.seq_len {
            return Err(format!(
                "process50: {need} unique sequences requested but only 2^{} exist",
                self.seq_len
            ));
        }
        Ok(())
    }
}

/// Class 0's examples are drawn first, then class 1's; duplicates are rejected across both
/// classes so no input appears twice or with two labels.
pub(crate) fn generate(cfg: &Process50Config, rng: &mut StdRng) -> Result<TaskData, String> {
    let per_class = cfg.train_per_class + cfg.dev_per_class + cfg.test_per_class;
    let mut seen = HashSet::new();
    let mut blocks = Vec::new();
    for (class, chain) in CHAINS.iter().enumerate() {
        let examples = draw_unique("process50", per_class, rng, &mut seen, |rng| {
            let toks = sample_chain(rng, *chain, cfg.seq_len);
            let ex = Example {
                input: Sequence::Tokens(toks.clone()),
                label: Label::Class(class),
            };
            Some((toks, ex))
        })?;
        blocks.push(examples);
    }
    let (tr, dv) = (cfg.train_per_class, cfg.dev_per_class);
    let mut splits: [Vec<Example>; 3] = Default::default();
    for block in &blocks {
        splits[0].extend_from_slice(&block[..tr]);
        splits[1].extend_from_slice(&block[tr..tr + dv]);
        splits[2].extend_from_slice(&block[tr + dv..]);
    }
    TaskData::assemble(
        format!("process{}", cfg.seq_len),
        TaskKind::Process50,
        splits,
        cfg.training_nums,
        VOCAB_SIZE,
        2,
    )
}

/// Token ids (1 = state 0, 2 = state 1) of one run of the chain.
pub fn sample_chain(rng: &mut StdRng, chain: Chain, len: usize) -> Vec<usize> {
    let mut state = usize::from(!rng.random_bool(FIRST_STATE_ZERO));
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        if i > 0 {
            let p_switch = if state == 0 { chain.p01 } else { chain.p10 };
            if rng.random_bool(p_switch) {
                state = 1 - state;
            }
        }
        out.push(state + STATE_TOKEN_OFFSET);
    }
    out
}

/// Exact Bayes-optimal accuracy of classifying a length-`len` run of `CHAINS[0]` vs
/// `CHAINS[1]` with equal priors: Σ_x max(p0(x), p1(x)) / 2 over all 2^len sequences.
///
/// The likelihood depends on x only through the first state and the transition counts
/// (n00, n01, n10, n11), so a dynamic program counts the sequences per statistic: state
/// (current state, n00, n01, n10) after t transitions, n11 = t - n00 - n01 - n10. Counts are
/// exact in u64 up to MAX_BAYES_LEN. (Sequences are deduplicated in the data, which
/// this ignores: with 2^50 sequences it barely matters.)
pub fn bayes_accuracy(len: usize) -> f64 {
    assert!(
        (1..=MAX_BAYES_LEN).contains(&len),
        "bayes_accuracy: len {len} not in 1..={MAX_BAYES_LEN}"
    );
    let l = len; // each count is at most len - 1 < l
    let idx =
        |cur: usize, n00: usize, n01: usize, n10: usize| ((cur * l + n00) * l + n01) * l + n10;
    let mut total = 0.0;
    for first in 0..2 {
        let mut cnt = vec![0u64; 2 * l * l * l];
        let mut next = vec![0u64; cnt.len()];
        cnt[idx(first, 0, 0, 0)] = 1;
        for t in 0..len - 1 {
            next.fill(0);
            for cur in 0..2 {
                for n00 in 0..=t {
                    for n01 in 0..=t - n00 {
                        for n10 in 0..=t - n00 - n01 {
                            let c = cnt[idx(cur, n00, n01, n10)];
                            if c == 0 {
                                continue;
                            }
                            if cur == 0 {
                                next[idx(0, n00 + 1, n01, n10)] += c;
                                next[idx(1, n00, n01 + 1, n10)] += c;
                            } else {
                                next[idx(0, n00, n01, n10 + 1)] += c;
                                next[idx(1, n00, n01, n10)] += c;
                            }
                        }
                    }
                }
            }
            std::mem::swap(&mut cnt, &mut next);
        }
        let t = len - 1;
        let p_first = if first == 0 {
            FIRST_STATE_ZERO
        } else {
            1.0 - FIRST_STATE_ZERO
        };
        for cur in 0..2 {
            for n00 in 0..=t {
                for n01 in 0..=t - n00 {
                    for n10 in 0..=t - n00 - n01 {
                        let c = cnt[idx(cur, n00, n01, n10)];
                        if c == 0 {
                            continue;
                        }
                        let n11 = t - n00 - n01 - n10;
                        let lik = |ch: Chain| {
                            p_first
                                * (1.0 - ch.p01).powi(n00 as i32)
                                * ch.p01.powi(n01 as i32)
                                * ch.p10.powi(n10 as i32)
                                * (1.0 - ch.p10).powi(n11 as i32)
                        };
                        total += c as f64 * lik(CHAINS[0]).max(lik(CHAINS[1]));
                    }
                }
            }
        }
    }
    total / 2.0
}
