//! Embedded Reber grammar: the paper's generator variant, and an independent recogniser.
//!
//! Inner string R: `B`, then (p=.5) `T S* X` followed by (p=.5) `X` + B-phrase else `SE`, or else
//! `P` + B-phrase. B-phrase: `T T* V`, then (p=.5) `P` followed by (p=.5) `X` + B-phrase else
//! `SE`, or else `VE`. Unlike the textbook graph the B-phrase needs at least one `T`.
//! Embedded string: `B c R m R c` with c ∈ {P, T}, m the other of the two, and two independently
//! drawn inner strings. Input = the string without its first and last symbol; label = the last
//! symbol, which equals the first input token.
use super::{Example, Label, Sequence, TaskData, TaskKind, check_sizes, draw_unique, split3};
use rand::{RngExt, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Token id of `B`.
pub const B: usize = 1;
/// Token id of `T`.
pub const T: usize = 2;
/// Token id of `P`.
pub const P: usize = 3;
/// Token id of `S`.
pub const S: usize = 4;
/// Token id of `X`.
pub const X: usize = 5;
/// Token id of `V`.
pub const V: usize = 6;
/// Token id of `E`.
pub const E: usize = 7;
/// Symbol of each token id; index 0 is PAD and has none.
pub const SYMBOLS: [char; 8] = ['_', 'B', 'T', 'P', 'S', 'X', 'V', 'E'];
/// PAD plus the seven symbols; the head is 8-way over this vocab, as in the paper.
pub const VOCAB_SIZE: usize = 8;
/// The shortest embedded string, `B T B T X S E P B T X S E T`.
pub const MIN_STRING_LEN: usize = 14;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Embedded Reber's sizes (the paper's task): the label is the token that opens the string.
pub struct ReberConfig {
    /// Unique examples generated for the train split.
    pub train: usize,
    /// Examples in the dev split.
    pub dev: usize,
    /// Examples in the test split.
    pub test: usize,
    /// How many train examples are actually used.
    pub training_nums: usize,
    /// Whole embedded strings of this length or longer are rejected.
    pub max_string_len: usize,
}

impl ReberConfig {
    /// 30000 unique → 20000/5000/5000, training_nums 1000, reject length ≥ 500.
    pub fn paper() -> ReberConfig {
        ReberConfig {
            train: 20000,
            dev: 5000,
            test: 5000,
            training_nums: 1000,
            max_string_len: 500,
        }
    }
    /// Smaller splits for minutes-long runs.
    pub fn quick() -> ReberConfig {
        ReberConfig {
            train: 4000,
            dev: 500,
            test: 500,
            training_nums: 1000,
            ..ReberConfig::paper()
        }
    }
    /// Impossible sizes as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        check_sizes("reber", self.train, self.dev, self.test, self.training_nums)?;
        if self.max_string_len <= MIN_STRING_LEN {
            return Err(format!(
                "reber: max_string_len = {} rejects every string (the shortest has length {MIN_STRING_LEN})",
                self.max_string_len
            ));
        }
        Ok(())
    }
}

pub(crate) fn generate(cfg: &ReberConfig, rng: &mut StdRng) -> Result<TaskData, String> {
    let n = cfg.train + cfg.dev + cfg.test;
    let mut seen = HashSet::new();
    let all = draw_unique("reber", n, rng, &mut seen, |rng| {
        let s = embedded_string(rng, cfg.max_string_len)?;
        let ex = Example {
            input: Sequence::Tokens(s[1..s.len() - 1].to_vec()),
            label: Label::Class(s[s.len() - 1]),
        };
        Some((s, ex))
    })?;
    TaskData::assemble(
        "reber".into(),
        TaskKind::Reber,
        split3(all, cfg.train, cfg.dev),
        cfg.training_nums,
        VOCAB_SIZE,
        VOCAB_SIZE,
    )
}

/// One embedded string shorter than `cap`, or None when it reaches `cap` (a rejected draw;
/// stopping early leaves the distribution of accepted strings unchanged).
pub fn embedded_string(rng: &mut StdRng, cap: usize) -> Option<Vec<usize>> {
    let c = if rng.random_bool(0.5) { P } else { T };
    let m = if c == P { T } else { P };
    let mut s = vec![B, c];
    inner(rng, &mut s, cap)?;
    s.push(m);
    inner(rng, &mut s, cap)?;
    s.push(c);
    (s.len() < cap).then_some(s)
}

fn inner(rng: &mut StdRng, s: &mut Vec<usize>, cap: usize) -> Option<()> {
    s.push(B);
    if rng.random_bool(0.5) {
        s.push(T);
        while rng.random_bool(0.5) {
            s.push(S);
            if s.len() >= cap {
                return None;
            }
        }
        s.push(X);
        if rng.random_bool(0.5) {
            s.push(X);
            b_phrase(rng, s, cap)
        } else {
            s.extend([S, E]);
            Some(())
        }
    } else {
        s.push(P);
        b_phrase(rng, s, cap)
    }
}

// The grammar's recursion (`P X` + B-phrase) is a loop here, so long strings cannot overflow.
fn b_phrase(rng: &mut StdRng, s: &mut Vec<usize>, cap: usize) -> Option<()> {
    loop {
        s.push(T);
        while rng.random_bool(0.5) {
            s.push(T);
            if s.len() >= cap {
                return None;
            }
        }
        s.push(V);
        if rng.random_bool(0.5) {
            s.push(P);
            if rng.random_bool(0.5) {
                s.push(X);
                if s.len() >= cap {
                    return None;
                }
                continue;
            }
            s.extend([S, E]);
        } else {
            s.extend([V, E]);
        }
        return Some(());
    }
}

/// The Reber graph as a transition table. States: 0 start, 1 after B, 2 the S loop, 3 must read
/// a T (entry of a B-phrase), 4 after X, 5 after V, 6 must read E, 7 the T loop, 8 accept.
fn step(state: u8, tok: usize) -> Option<u8> {
    match (state, tok) {
        (0, B) => Some(1),
        (1, T) => Some(2),
        (1, P) => Some(3),
        (2, S) => Some(2),
        (2, X) => Some(4),
        (3, T) => Some(7),
        (7, T) => Some(7),
        (7, V) => Some(5),
        (4, X) => Some(3),
        (4, S) => Some(6),
        (5, P) => Some(4),
        (5, V) => Some(6),
        (6, E) => Some(8),
        _ => None,
    }
}

/// Whether `s` is one inner Reber string R.
pub fn accepts_inner(s: &[usize]) -> bool {
    let mut state = 0u8;
    for &tok in s {
        match step(state, tok) {
            Some(next) => state = next,
            None => return false,
        }
    }
    state == 8
}

/// Whether `s` is a whole embedded string `B c R m R c`.
pub fn accepts(s: &[usize]) -> bool {
    let n = s.len();
    if n < MIN_STRING_LEN || s[0] != B || !(s[1] == P || s[1] == T) || s[n - 1] != s[1] {
        return false;
    }
    let m = if s[1] == P { T } else { P };
    let middle = &s[2..n - 1];
    // R contains E only as its last symbol, so the first E ends the first inner string.
    let Some(end) = middle.iter().position(|&t| t == E) else {
        return false;
    };
    accepts_inner(&middle[..=end])
        && middle.get(end + 1) == Some(&m)
        && accepts_inner(&middle[end + 2..])
}

/// Token ids of a string of symbols, e.g. "BTXSE"; None on any other character.
pub fn parse_symbols(s: &str) -> Option<Vec<usize>> {
    s.chars()
        .map(|ch| (1..VOCAB_SIZE).find(|&i| SYMBOLS[i] == ch))
        .collect()
}
