//! Command-line pieces the experiment binaries share: the run flags, threads, exit codes.
use crate::data::TaskKind;
use crate::nn::BiasScope;
use crate::position::BiasConfig;
use crate::train::{Dial, Preset, TaskSource, TrainConfig, preset_config};
use clap::Args;
use std::path::PathBuf;

/// Exit code for bad input: flags, files, checkpoints.
pub const EXIT_USAGE: i32 = 2;

/// Prints one line naming what is wrong and exits with code 2 (never a backtrace).
pub fn usage_error(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(EXIT_USAGE)
}

/// Keeps freed memory in the process (glibc: no mmap for large blocks, no trimming), so the
/// step-sized buffers each training step frees are reused warm by the next one instead of being
/// returned to the kernel and faulted back in page by page. RSS stays at the step's peak.
pub fn init_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        // SAFETY: mallopt only sets allocator tunables; called before any threads start.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, i32::MAX);
            mallopt(M_TRIM_THRESHOLD, i32::MAX);
        }
    }
}

/// Sizes the global thread pool once; 0 keeps rayon's default (all cores).
pub fn init_threads(threads: usize) {
    init_allocator();
    if threads > 0
        && let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
    {
        usage_error(format!("--threads {threads}: {e}"));
    }
}

/// One training run's flags. Unset options take the preset's value for the task.
#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// Task: reber, process50, adding, lagk (required unless resuming).
    #[arg(long)]
    pub task: Option<String>,
    /// Sequence length: Adding's T, lag-k's L (and Process-50's length).
    #[arg(long)]
    pub seq_len: Option<usize>,
    /// Lag-k's k: the label is the token k slots before the last.
    #[arg(long)]
    pub lag: Option<usize>,
    /// Bias family: none, sinusoidal, t5, t5-nob, at5, at5-nob, alibi, kerple-log, fire.
    #[arg(long, default_value = "at5")]
    pub bias: String,
    /// paper (DESIGN §3's sizes and epochs) or quick (minutes).
    #[arg(long, default_value = "quick")]
    pub preset: String,
    #[arg(long)]
    /// Model width D.
    pub d_model: Option<usize>,
    #[arg(long)]
    /// Attention heads H (D must be a multiple of H).
    pub heads: Option<usize>,
    #[arg(long)]
    /// Feed-forward width (default 2·D).
    pub ffn: Option<usize>,
    #[arg(long)]
    /// Encoder layers.
    pub layers: Option<usize>,
    #[arg(long)]
    /// Examples per optimizer step.
    pub batch: Option<usize>,
    #[arg(long)]
    /// Adam learning rate.
    pub lr: Option<f64>,
    #[arg(long)]
    /// Training epochs.
    pub epochs: Option<usize>,
    /// Seeds initialisation, shuffling and dropout.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seeds the generated data (fixed across trials).
    #[arg(long, default_value_t = 2021)]
    pub data_seed: u64,
    /// Train on train.txt/dev.txt/test.txt from this directory instead of generated data.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Stop after this many epochs without a dev improvement.
    #[arg(long)]
    pub patience: Option<usize>,
    /// Where the bias goes: shared (every layer), first (first layer), per-layer.
    #[arg(long)]
    pub bias_scope: Option<String>,
    #[arg(long)]
    /// Dropout on the input embeddings (also inside AT5's MLPs).
    pub dropout_input: Option<f64>,
    #[arg(long)]
    /// Dropout after attention and the feed-forward block.
    pub dropout_hidden: Option<f64>,
    #[arg(long)]
    /// Dropout on the attention probabilities.
    pub dropout_attention: Option<f64>,
    /// T5: number of buckets.
    #[arg(long)]
    pub num_buckets: Option<usize>,
    /// T5: distance where the last bucket starts.
    #[arg(long)]
    pub max_distance: Option<usize>,
    /// AT5: slopes a_h, c_h start uniform in [slope-min, slope-max].
    #[arg(long)]
    pub slope_min: Option<f64>,
    #[arg(long)]
    /// AT5: upper end of the initial slope range.
    pub slope_max: Option<f64>,
    /// AT5 / AT5-NoB: MLP widths.
    #[arg(long)]
    pub l1: Option<usize>,
    #[arg(long)]
    /// AT5 / AT5-NoB: width of the MLP's second hidden layer.
    pub l2: Option<usize>,
    /// AT5 / AT5-NoB: MLP init std.
    #[arg(long)]
    pub init_std: Option<f64>,
    /// AT5 / AT5-NoB: draw the MLP's dropout per grid cell (`cell`, the original code's way and
    /// the paper preset's) or once per offset (`offset`).
    #[arg(long)]
    pub at5_dropout_mask: Option<String>,
    /// Compute every row of the last block even where only the pooled row reaches the loss
    /// (the default prunes it; same results up to summation order, several times slower).
    #[arg(long)]
    pub no_prune: bool,
}

impl RunArgs {
    /// The run's config: the preset's protocol for the task, with every given flag applied.
    pub fn to_config(&self) -> Result<TrainConfig, String> {
        let task = self
            .task
            .as_deref()
            .ok_or("--task is required (reber, process50, adding, lagk)")?;
        let kind: TaskKind = task.parse()?;
        let preset = Preset::from_name(&self.preset)?;
        BiasConfig::from_name(&self.bias)?;
        let dial = Dial {
            seq_len: self.seq_len,
            lag: self.lag,
        };
        if let Some(l) = self.seq_len
            && l < 2
        {
            return Err(format!("--seq-len must be at least 2, got {l}"));
        }
        let mut c = preset_config(kind, &self.bias, preset, dial, self.seed)?;
        if let TaskSource::Generated { seed, .. } = &mut c.task {
            *seed = self.data_seed;
        }
        if let Some(dir) = &self.data_dir {
            if !dir.is_dir() {
                return Err(format!("--data-dir {}: no such directory", dir.display()));
            }
            c.task = TaskSource::Files {
                dir: dir.clone(),
                kind,
            };
        }
        let m = &mut c.model;
        set(&mut m.d_model, self.d_model);
        set(&mut m.heads, self.heads);
        if let Some(d) = self.d_model
            && self.ffn.is_none()
        {
            m.ffn = 2 * d;
        }
        set(&mut m.ffn, self.ffn);
        set(&mut m.layers, self.layers);
        set(&mut m.dropout.input, self.dropout_input);
        set(&mut m.dropout.hidden, self.dropout_hidden);
        set(&mut m.dropout.attention, self.dropout_attention);
        if let Some(s) = &self.bias_scope {
            m.bias_scope = match s.as_str() {
                "shared" => BiasScope::Shared,
                "first" => BiasScope::FirstLayer,
                "per-layer" => BiasScope::PerLayer,
                o => {
                    return Err(format!(
                        "--bias-scope {o}: expected shared, first or per-layer"
                    ));
                }
            };
        }
        let per_cell = match self.at5_dropout_mask.as_deref() {
            None => None,
            Some("cell") => Some(true),
            Some("offset") => Some(false),
            Some(o) => return Err(format!("--at5-dropout-mask {o}: expected cell or offset")),
        };
        match &mut m.bias {
            BiasConfig::T5 {
                num_buckets,
                max_distance,
                ..
            } => {
                set(num_buckets, self.num_buckets);
                set(max_distance, self.max_distance);
            }
            BiasConfig::At5 {
                slope_min,
                slope_max,
                l1,
                l2,
                init_std,
                dropout,
                dropout_per_cell,
            } => {
                set(slope_min, self.slope_min);
                set(slope_max, self.slope_max);
                set(l1, self.l1);
                set(l2, self.l2);
                set(init_std, self.init_std);
                // The MLP's dropout is the input-dropout rate (DESIGN §1): a given rate moves it.
                set(dropout, self.dropout_input);
                set(dropout_per_cell, per_cell);
            }
            BiasConfig::At5NoB {
                l1,
                l2,
                init_std,
                dropout,
                dropout_per_cell,
            } => {
                set(l1, self.l1);
                set(l2, self.l2);
                set(init_std, self.init_std);
                set(dropout, self.dropout_input);
                set(dropout_per_cell, per_cell);
            }
            _ => {}
        }
        set(&mut c.batch, self.batch);
        set(&mut c.lr, self.lr);
        set(&mut c.epochs, self.epochs);
        if self.patience.is_some() {
            c.patience = self.patience;
        }
        c.whole_graph = self.no_prune;
        c.validate()?;
        Ok(c)
    }

    /// A default output directory naming the run.
    pub fn default_out(&self) -> PathBuf {
        let dial = match (self.seq_len, self.lag) {
            (Some(l), Some(k)) => format!("-L{l}-k{k}"),
            (Some(l), None) => format!("-L{l}"),
            (None, Some(k)) => format!("-k{k}"),
            _ => String::new(),
        };
        PathBuf::from(format!(
            "runs/{}{dial}-{}-s{}",
            self.task.as_deref().unwrap_or("run"),
            self.bias,
            self.seed
        ))
    }
}

fn set<T>(slot: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *slot = v;
    }
}

/// A comma-separated family list checked against `allowed` (all of them when `None`).
pub fn family_list(given: Option<&str>, allowed: &[&str]) -> Vec<String> {
    let list: Vec<String> = match given {
        Some(b) => b.split(',').map(|s| s.trim().to_string()).collect(),
        None => allowed.iter().map(|s| s.to_string()).collect(),
    };
    for b in &list {
        if !allowed.contains(&b.as_str()) {
            usage_error(format!(
                "--biases: unknown family `{b}`; expected some of {}",
                allowed.join(",")
            ));
        }
    }
    list
}
