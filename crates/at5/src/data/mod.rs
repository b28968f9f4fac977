//! Synthetic tasks (embedded Reber, Process-50, Adding-T, lag-k recall): shared types, seeded generation, statistics.
//!
//! Sequences are stored unpadded. The model right-pads every sequence to `TaskData::max_len`
//! with `PAD`, so the model's last-slot pooling (`nn::Pooling::Last`) reads slot `max_len - 1` of the padded sequence: a padding slot
//! for short sequences, which keeps the query at a fixed distance from token 0.
pub mod adding;
pub mod files;
pub mod lagk;
pub mod process50;
pub mod reber;

pub use adding::AddingConfig;
pub use files::{load_dir, write_dir};
pub use lagk::LagKConfig;
pub use process50::Process50Config;
pub use reber::ReberConfig;

use rand::{SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::hash::Hash;

/// Token id of padding; every task's real tokens start at 1 so padding never collides with data.
pub const PAD: usize = 0;
/// Adding-T "accuracy": a prediction counts as correct when |pred - target| <= this.
pub const ADDING_TOLERANCE: f64 = 0.04;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// One input sequence.
pub enum Sequence {
    /// Token ids in 1..vocab_size (never PAD).
    Tokens(Vec<usize>),
    /// (value, marker) pairs of the adding problem.
    Pairs(Vec<[f32; 2]>),
}

impl Sequence {
    /// Number of positions.
    pub fn len(&self) -> usize {
        match self {
            Sequence::Tokens(t) => t.len(),
            Sequence::Pairs(p) => p.len(),
        }
    }
    /// Whether the sequence has no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The token ids, or `None` for the adding problem's pairs.
    pub fn tokens(&self) -> Option<&[usize]> {
        match self {
            Sequence::Tokens(t) => Some(t),
            Sequence::Pairs(_) => None,
        }
    }
    /// The `(value, marker)` pairs, or `None` for a token sequence.
    pub fn pairs(&self) -> Option<&[[f32; 2]]> {
        match self {
            Sequence::Pairs(p) => Some(p),
            Sequence::Tokens(_) => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
/// What an example is labelled with.
pub enum Label {
    /// A class id.
    Class(usize),
    /// A real target (the adding problem).
    Real(f32),
}

impl Label {
    /// The class id, or `None` for a real target.
    pub fn class(&self) -> Option<usize> {
        match *self {
            Label::Class(c) => Some(c),
            Label::Real(_) => None,
        }
    }
    /// The real target, or `None` for a class.
    pub fn real(&self) -> Option<f32> {
        match *self {
            Label::Real(r) => Some(r),
            Label::Class(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// One labelled sequence.
pub struct Example {
    /// The sequence the model reads.
    pub input: Sequence,
    /// Its label.
    pub label: Label,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
/// The synthetic tasks.
pub enum TaskKind {
    /// Embedded Reber grammar: the label is the first token (a long-range dependency).
    Reber,
    /// Process-50: which of two Markov chains made a binary sequence (local statistics).
    Process50,
    /// The adding problem: the sum of two marked values (a range dial T).
    Adding,
    /// Lag-k recall: the token k slots before the last (an exact offset dial).
    LagK,
}

impl TaskKind {
    /// The command-line name (`reber`, `process50`, `adding`, `lagk`).
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::Reber => "reber",
            TaskKind::Process50 => "process50",
            TaskKind::Adding => "adding",
            TaskKind::LagK => "lagk",
        }
    }
    /// The paper's `training_nums` (lag-k: ours), used for data loaded from files.
    pub fn default_training_nums(self) -> usize {
        match self {
            TaskKind::Reber => ReberConfig::paper().training_nums,
            TaskKind::Process50 => Process50Config::paper().training_nums,
            TaskKind::Adding => AddingConfig::paper().training_nums,
            TaskKind::LagK => LagKConfig::paper().training_nums,
        }
    }
    /// Reber and Process-50 take their training subset half from the start of train and half
    /// from its middle (for Process-50 the two class blocks); the others take a prefix.
    fn two_halves(self) -> bool {
        matches!(self, TaskKind::Reber | TaskKind::Process50)
    }
}

impl std::str::FromStr for TaskKind {
    type Err = String;
    fn from_str(s: &str) -> Result<TaskKind, String> {
        match s.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "reber" => Ok(TaskKind::Reber),
            "process50" | "process" => Ok(TaskKind::Process50),
            "adding" => Ok(TaskKind::Adding),
            "lagk" | "lag" => Ok(TaskKind::LagK),
            _ => Err(format!(
                "unknown task {s:?}: expected one of reber, process50, adding, lagk"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Sizes and label statistics of a loaded task, kept in run records.
pub struct TaskStats {
    /// train, dev, test.
    pub split_sizes: [usize; 3],
    /// How many train examples are actually used.
    pub training_nums: usize,
    /// Sequence lengths over all splits.
    pub min_len: usize,
    /// Longest sequence over all splits (the padded length).
    pub max_len: usize,
    /// Mean sequence length over all splits.
    pub mean_len: f64,
    /// Examples per class in the train split, indexed by class; empty for regression.
    pub class_counts: Vec<usize>,
    /// Mean target of the train split; regression only.
    pub label_mean: Option<f64>,
    /// The Bayes-optimal test accuracy where it is known (Process-50).
    pub bayes_accuracy: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A task's three splits and what the model needs to know about them.
pub struct TaskData {
    /// A name for tables and file names (e.g. `adding-100`, `lag16-L32`).
    pub name: String,
    /// Which task this is.
    pub kind: TaskKind,
    /// Every generated train example; [`TaskData::training_indices`] picks the ones used.
    pub train: Vec<Example>,
    /// The dev split: evaluated every epoch.
    pub dev: Vec<Example>,
    /// The test split: evaluated whenever dev improves.
    pub test: Vec<Example>,
    /// How many train examples are actually used (see `training_indices`).
    pub training_nums: usize,
    /// Token ids are < vocab_size; 0 for `Sequence::Pairs`.
    pub vocab_size: usize,
    /// 0 for regression.
    pub num_classes: usize,
    /// Max sequence length over all splits: the padded length.
    pub max_len: usize,
    /// Sizes and label statistics.
    pub stats: TaskStats,
}

impl TaskData {
    /// Builds a task from its splits, deriving max_len and statistics.
    pub fn assemble(
        name: String,
        kind: TaskKind,
        splits: [Vec<Example>; 3],
        training_nums: usize,
        vocab_size: usize,
        num_classes: usize,
    ) -> Result<TaskData, String> {
        let [train, dev, test] = splits;
        if training_nums == 0 || training_nums > train.len() {
            return Err(format!(
                "{name}: training_nums = {training_nums} must be in 1..={} (the train size)",
                train.len()
            ));
        }
        let max_len = train
            .iter()
            .chain(&dev)
            .chain(&test)
            .map(|e| e.input.len())
            .max()
            .unwrap_or(0);
        let mut data = TaskData {
            name,
            kind,
            train,
            dev,
            test,
            training_nums,
            vocab_size,
            num_classes,
            max_len,
            stats: TaskStats {
                split_sizes: [0; 3],
                training_nums,
                min_len: 0,
                max_len,
                mean_len: 0.0,
                class_counts: Vec::new(),
                label_mean: None,
                bayes_accuracy: None,
            },
        };
        data.stats = data.compute_stats();
        Ok(data)
    }

    /// Recomputes the sizes and label statistics from the splits.
    pub fn compute_stats(&self) -> TaskStats {
        let all = || self.train.iter().chain(&self.dev).chain(&self.test);
        let n = all().count();
        let min_len = all().map(|e| e.input.len()).min().unwrap_or(0);
        let total: usize = all().map(|e| e.input.len()).sum();
        let mut class_counts = vec![0; self.num_classes];
        let mut label_sum = 0.0;
        for e in &self.train {
            match e.label {
                Label::Class(c) if c < class_counts.len() => class_counts[c] += 1,
                Label::Class(_) => {}
                Label::Real(r) => label_sum += r as f64,
            }
        }
        let regression = self.num_classes == 0;
        // Known for equal-length Process sequences, within the exact counter's range.
        let bayes_accuracy = (self.kind == TaskKind::Process50
            && min_len == self.max_len
            && (1..=process50::MAX_BAYES_LEN).contains(&self.max_len))
        .then(|| process50::bayes_accuracy(self.max_len));
        TaskStats {
            split_sizes: [self.train.len(), self.dev.len(), self.test.len()],
            training_nums: self.training_nums,
            min_len,
            max_len: self.max_len,
            mean_len: if n == 0 { 0.0 } else { total as f64 / n as f64 },
            class_counts,
            label_mean: (regression && !self.train.is_empty())
                .then(|| label_sum / self.train.len() as f64),
            bayes_accuracy,
        }
    }

    /// Indices into `train` of the examples actually trained on: a prefix, or for Reber and
    /// Process-50 the first ⌊n/2⌋ plus ⌈n/2⌉ from the middle of train (the paper's
    /// "first 500 and items 10000..10500").
    pub fn training_indices(&self) -> Vec<usize> {
        let n = self.training_nums.min(self.train.len());
        if self.kind.two_halves() {
            let half = self.train.len() / 2;
            (0..n / 2).chain(half..half + (n - n / 2)).collect()
        } else {
            (0..n).collect()
        }
    }

    /// The train examples actually used, in [`TaskData::training_indices`] order.
    pub fn training_examples(&self) -> Vec<&Example> {
        self.training_indices()
            .into_iter()
            .map(|i| &self.train[i])
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A task and its generator settings.
pub enum TaskConfig {
    /// Embedded Reber.
    Reber(ReberConfig),
    /// Process-50.
    Process50(Process50Config),
    /// The adding problem.
    Adding(AddingConfig),
    /// Lag-k recall.
    LagK(LagKConfig),
}

impl TaskConfig {
    /// Which task this configures.
    pub fn kind(&self) -> TaskKind {
        match self {
            TaskConfig::Reber(_) => TaskKind::Reber,
            TaskConfig::Process50(_) => TaskKind::Process50,
            TaskConfig::Adding(_) => TaskKind::Adding,
            TaskConfig::LagK(_) => TaskKind::LagK,
        }
    }
    /// Impossible settings as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            TaskConfig::Reber(c) => c.validate(),
            TaskConfig::Process50(c) => c.validate(),
            TaskConfig::Adding(c) => c.validate(),
            TaskConfig::LagK(c) => c.validate(),
        }
    }
}

/// Generates a task from its config; the same seed always gives the same data.
pub fn generate(cfg: &TaskConfig, seed: u64) -> Result<TaskData, String> {
    cfg.validate()?;
    let mut rng = StdRng::seed_from_u64(seed);
    match cfg {
        TaskConfig::Reber(c) => reber::generate(c, &mut rng),
        TaskConfig::Process50(c) => process50::generate(c, &mut rng),
        TaskConfig::Adding(c) => adding::generate(c, &mut rng),
        TaskConfig::LagK(c) => lagk::generate(c, &mut rng),
    }
}

/// Checks split sizes shared by every config.
pub(crate) fn check_sizes(
    what: &str,
    train: usize,
    dev: usize,
    test: usize,
    training_nums: usize,
) -> Result<(), String> {
    if train == 0 || dev == 0 || test == 0 {
        return Err(format!(
            "{what}: split sizes must be positive, got train={train} dev={dev} test={test}"
        ));
    }
    if training_nums == 0 || training_nums > train {
        return Err(format!(
            "{what}: training_nums = {training_nums} must be in 1..={train} (the train size)"
        ));
    }
    Ok(())
}

/// Draws until `n` examples with keys not yet in `seen` are found, in draw order (the set only
/// answers membership, so its iteration order never reaches the output). `draw` may return None
/// to reject a draw. Attempts are capped so an impossible request ends in an error, not a hang.
pub(crate) fn draw_unique<K: Hash + Eq, T>(
    what: &str,
    n: usize,
    rng: &mut StdRng,
    seen: &mut HashSet<K>,
    mut draw: impl FnMut(&mut StdRng) -> Option<(K, T)>,
) -> Result<Vec<T>, String> {
    // Coupon collecting a whole space of size n takes about n·ln n draws; 20n covers n up to e^20.
    let max_attempts = n.saturating_mul(20).saturating_add(100_000);
    let mut out = Vec::with_capacity(n);
    let mut attempts = 0usize;
    while out.len() < n {
        if attempts == max_attempts {
            return Err(format!(
                "{what}: found only {} unique sequences of the {n} requested after {attempts} \
                 draws; the sequence space is too small (or too skewed) for these sizes",
                out.len()
            ));
        }
        attempts += 1;
        if let Some((key, item)) = draw(rng)
            && seen.insert(key)
        {
            out.push(item);
        }
    }
    Ok(out)
}

/// Splits draws into consecutive train/dev/test blocks.
pub(crate) fn split3<T>(mut all: Vec<T>, train: usize, dev: usize) -> [Vec<T>; 3] {
    let test = all.split_off(train + dev);
    let dev_v = all.split_off(train);
    [all, dev_v, test]
}
