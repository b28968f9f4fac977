//! Command-line pieces the experiment binaries share: the run flags, threads, exit codes.
use at5::nn::{BiasScope, OutputInit};
use at5::train::{BiasRequest, Preset, RunRequest, TrainConfig};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code for bad input: flags, files, checkpoints.
pub const EXIT_USAGE: i32 = 2;

/// Prints one line naming what is wrong and exits with code 2 (never a backtrace, even with
/// standard error closed).
pub fn usage_error(msg: impl std::fmt::Display) -> ! {
    let _ = writeln!(std::io::stderr(), "error: {msg}");
    std::process::exit(EXIT_USAGE)
}

/// Set once standard output has failed (a closed pipe, a full disk): nothing more is printed
/// to it, and the program goes on.
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Prints `text` to standard output, flushed. Where that fails (`train | head -n 1` once `head`
/// has exited, `train > /dev/full`) it says so once on standard error and prints nothing more,
/// instead of panicking as `print!` would: output that can fail must not stop a run before it
/// saves.
pub fn print_text(text: &str) {
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
        && !STDOUT_FAILED.swap(true, Ordering::Relaxed)
    {
        let _ = writeln!(
            std::io::stderr(),
            "note: cannot write to standard output ({e}); nothing more is printed there"
        );
    }
}

/// [`print_text`] of `line` and a newline.
pub fn print_line(line: &str) {
    print_text(&format!("{line}\n"));
}

/// `println!` through [`print_line`]: never panics when standard output fails.
#[macro_export]
macro_rules! outln {
    () => { $crate::cli::print_line("") };
    ($($arg:tt)*) => { $crate::cli::print_line(&format!($($arg)*)) };
}

/// `print!` through [`print_text`]: never panics when standard output fails.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::print_text(&format!($($arg)*)) };
}

/// Parses the command line; a parse error is one line (clap's message and its tip, without the
/// usage block) and exit code 2, like every other refusal. `--help` and `--version` print as usual.
pub fn parse<T: clap::Parser>() -> T {
    from_matches(&matches::<T>())
}

/// The parsed flags from [`matches()`]' result, errors as [`parse`] gives them.
pub fn from_matches<T: clap::Parser>(matches: &clap::ArgMatches) -> T {
    T::from_arg_matches(matches).unwrap_or_else(|e| usage_error(one_line(&e)))
}

/// [`parse`]'s matches, for binaries that also ask which flags were given.
pub fn matches<T: clap::CommandFactory>() -> clap::ArgMatches {
    // A negative number is a value (`--lr -1` is refused by the range check that names the
    // flag), not an unknown flag `-1`.
    T::command()
        .allow_negative_numbers(true)
        .try_get_matches()
        .unwrap_or_else(|e| match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => usage_error(one_line(&e)),
        })
}

/// A clap error as one line: its message with the lines clap lists under it (the missing or
/// conflicting arguments), then its tip in parentheses where it has one; no usage block.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let body = text.split("\nUsage:").next().unwrap_or("");
    let (mut message, mut tips) = (Vec::new(), Vec::new());
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.strip_prefix("tip: ") {
            Some(t) => tips.push(t),
            None => message.push(line.trim_start_matches("error: ")),
        }
    }
    let message = message.join(" ");
    if tips.is_empty() {
        format!("{message}; see --help")
    } else {
        format!("{message} ({}); see --help", tips.join("; "))
    }
}

/// On Ctrl-C (SIGINT), prints `message` on its own line and exits with 130, the code a shell
/// gives a process stopped by SIGINT: a long run says what it kept and how to continue instead
/// of vanishing. Files are written atomically, so stopping between two writes loses nothing.
pub fn on_interrupt(message: String) {
    // The handler runs on ctrlc's own thread, not in the signal's context, so it may print and
    // exit like any code. Only the first message is kept: a second handler is refused.
    #[cfg(not(target_arch = "wasm32"))]
    let _ = ctrlc::set_handler(move || {
        eprintln!("\n{message}");
        std::process::exit(130)
    });
    #[cfg(target_arch = "wasm32")]
    let _ = message;
}

/// The most worker threads a run may ask for, per core: beyond a few per core threads only
/// contend (and `--threads 100000` spends minutes creating them).
pub const THREADS_PER_CORE: usize = 4;

/// Chooses the process's kernel path ([`at5::kernels::init`]); an unknown `AT5_KERNEL`, or
/// one this CPU cannot run, is refused with code 2 and one line saying why.
pub fn init_kernels() -> at5::kernels::Kernel {
    at5::kernels::init().unwrap_or_else(|e| usage_error(e))
}

/// Sizes the global thread pool once; 0 keeps rayon's default (all cores). More than
/// [`THREADS_PER_CORE`] per core is refused with code 2.
pub fn init_threads(threads: usize) {
    init_kernels();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = THREADS_PER_CORE * cores;
    if threads > most {
        usage_error(format!(
            "--threads {threads}: at most {most} ({THREADS_PER_CORE} per core, {cores} cores); \
             0 uses every core"
        ));
    }
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
    /// paper (the paper's sizes and epochs per task) or quick (minutes).
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
    /// Seeds the generated data (fixed across trials) [default: 2021].
    #[arg(long)]
    pub data_seed: Option<u64>,
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
    /// The bias families' own options (`--num-buckets`, `--init-std`, ...), read from each
    /// family's settings: a family's flags are declared with the family.
    #[command(flatten)]
    pub family: FamilyArgs,
    /// Compute every row of the last block even where only the pooled row reaches the loss
    /// (the default prunes it; same results up to summation order, several times slower).
    #[arg(long)]
    pub no_prune: bool,
    /// How the output layer starts: `glorot` (Glorot-uniform, bias 0.1: the paper's code, and
    /// `--preset paper`'s since its revision 2) or `bert` (truncated N(0, 0.02²), bias 0:
    /// `--preset quick`'s, and the paper preset's before).
    #[arg(long)]
    pub head_init: Option<String>,
    /// Heads that get no position bias, comma-separated from 0 (the paper's code leaves heads
    /// 6 and 7 of 8 without one: `--unbiased-heads 6,7`).
    #[arg(long, value_delimiter = ',')]
    pub unbiased_heads: Vec<usize>,
}

impl RunArgs {
    /// The run's config: the preset's protocol for the task, with every given flag applied.
    pub fn to_config(&self) -> Result<TrainConfig, String> {
        self.to_request()?.resolve()
    }

    /// The flags as typed values; [`RunRequest::resolve`] applies and checks them. A bias
    /// family's option given with another family is refused here: past the parser it cannot
    /// be expressed.
    pub fn to_request(&self) -> Result<RunRequest, String> {
        let task = self
            .task
            .as_deref()
            .ok_or("--task is required (reber, process50, adding, lagk)")?;
        let bias_scope = match self.bias_scope.as_deref() {
            None => None,
            Some("shared") => Some(BiasScope::Shared),
            Some("first") => Some(BiasScope::FirstLayer),
            Some("per-layer") => Some(BiasScope::PerLayer),
            Some(o) => {
                return Err(format!(
                    "--bias-scope {o}: expected shared, first or per-layer"
                ));
            }
        };
        Ok(RunRequest {
            task: task.parse()?,
            bias: self.bias_request()?,
            preset: Preset::from_name(&self.preset)?,
            seed: self.seed,
            seq_len: self.seq_len,
            lag: self.lag,
            data_seed: self.data_seed,
            data_dir: self.data_dir.clone(),
            d_model: self.d_model,
            heads: self.heads,
            ffn: self.ffn,
            layers: self.layers,
            bias_scope,
            dropout_input: self.dropout_input,
            dropout_hidden: self.dropout_hidden,
            dropout_attention: self.dropout_attention,
            batch: self.batch,
            lr: self.lr,
            epochs: self.epochs,
            patience: self.patience,
            whole_graph: self.no_prune,
            head_init: self
                .head_init
                .as_deref()
                .map(|n| OutputInit::from_name(n).map_err(|e| format!("--head-init: {e}")))
                .transpose()?,
            unbiased_heads: unbiased_heads(&self.unbiased_heads)?,
        })
    }

    /// `--bias` with the options of that family given; an option of another family is an error.
    fn bias_request(&self) -> Result<BiasRequest, String> {
        let mut bias = BiasRequest::family(&self.bias);
        for (flag, value) in &self.family.given {
            bias.set(flag, value)?;
        }
        Ok(bias)
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

/// `--unbiased-heads` sorted, a head given twice refused (whether each head exists is checked
/// against `--heads` when the run is resolved).
fn unbiased_heads(given: &[usize]) -> Result<Vec<usize>, String> {
    let mut heads = given.to_vec();
    heads.sort_unstable();
    if let Some(w) = heads.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("--unbiased-heads: head {} is given twice", w[0]));
    }
    Ok(heads)
}

/// Parses `train`'s run flags (without the program name) into the run they ask for: how a
/// plan file's or a job line's flags are read back.
pub fn parse_run_flags(flags: &[String]) -> Result<RunRequest, String> {
    #[derive(clap::Parser)]
    #[command(name = "train")]
    struct Flags {
        #[command(flatten)]
        run: RunArgs,
    }
    let argv = std::iter::once("train".to_string()).chain(flags.iter().cloned());
    let parsed = <Flags as clap::Parser>::try_parse_from(argv).map_err(|e| {
        use clap::error::ErrorKind;
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
            return "--help and --version are not run flags (see `train --help`)".to_string();
        }
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("");
        first.trim_start_matches("error: ").to_string()
    })?;
    parsed.run.to_request()
}

/// The `train` flags that ask for `run`, the inverse of [`parse_run_flags`]: the task, its
/// dial, the family and the seed, the preset, then every other given setting in the order
/// `train --help` lists them.
pub fn run_flags(run: &RunRequest) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            out.push(format!("--{name}"));
            out.push(v);
        }
    };
    let text = |v: Option<usize>| v.map(|v| v.to_string());
    let real = |v: Option<f64>| v.map(|v| v.to_string());
    flag("task", Some(run.task.name().to_string()));
    flag("seq-len", text(run.seq_len));
    flag("lag", text(run.lag));
    flag("bias", Some(run.bias.name().to_string()));
    flag("seed", Some(run.seed.to_string()));
    flag("preset", Some(run.preset.name().to_string()));
    flag("d-model", text(run.d_model));
    flag("heads", text(run.heads));
    flag("ffn", text(run.ffn));
    flag("layers", text(run.layers));
    flag("batch", text(run.batch));
    flag("lr", real(run.lr));
    flag("epochs", text(run.epochs));
    flag("data-seed", run.data_seed.map(|s| s.to_string()));
    flag(
        "data-dir",
        run.data_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
    );
    flag("patience", text(run.patience));
    let scope = run.bias_scope.map(|s| match s {
        BiasScope::Shared => "shared",
        BiasScope::FirstLayer => "first",
        BiasScope::PerLayer => "per-layer",
    });
    flag("bias-scope", scope.map(String::from));
    flag("dropout-input", real(run.dropout_input));
    flag("dropout-hidden", real(run.dropout_hidden));
    flag("dropout-attention", real(run.dropout_attention));
    for (name, value) in run.bias.options() {
        flag(name, Some(value.clone()));
    }
    flag("head-init", run.head_init.map(|i| i.name().to_string()));
    if !run.unbiased_heads.is_empty() {
        let heads: Vec<String> = run.unbiased_heads.iter().map(|h| h.to_string()).collect();
        flag("unbiased-heads", Some(heads.join(",")));
    }
    if run.whole_graph {
        out.push("--no-prune".into());
    }
    out
}

/// The long names of the run flags given on the command line (not those left at a default),
/// so a binary can refuse flags that would be ignored, e.g. model flags with `--resume`.
pub fn run_flags_given(matches: &clap::ArgMatches) -> Vec<String> {
    use clap::parser::ValueSource;
    let cmd = <RunArgs as Args>::augment_args(clap::Command::new("train"));
    cmd.get_arguments()
        .filter(|a| {
            matches
                .try_contains_id(a.get_id().as_str())
                .unwrap_or(false)
                && matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine)
        })
        .filter_map(|a| a.get_long().map(String::from))
        .collect()
}

/// The most seeds a multi-run binary plans per cell: each is a run, and a plan holds them all.
pub const MAX_SEEDS: u64 = 1000;

/// `--seeds`: 1 to [`MAX_SEEDS`], else exit 2 naming the flag.
pub fn check_seeds(seeds: u64) {
    if seeds == 0 || seeds > MAX_SEEDS {
        usage_error(format!(
            "--seeds {seeds}: expected 1 to {MAX_SEEDS} (runs per cell)"
        ));
    }
}

/// The long names of the flags of `T` given on the command line (not left at a default), so a
/// binary can refuse flags that a mode would ignore.
pub fn flags_given<T: clap::CommandFactory>(matches: &clap::ArgMatches) -> Vec<String> {
    use clap::parser::ValueSource;
    T::command()
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| a.get_long().map(String::from))
        .collect()
}

/// A comma-separated family list checked against `allowed` (all of them when `None`).
pub fn family_list(given: Option<&str>, allowed: &[&str]) -> Vec<String> {
    let list: Vec<String> = match given {
        Some(b) => b.split(',').map(|s| s.trim().to_string()).collect(),
        None => allowed.iter().map(|s| s.to_string()).collect(),
    };
    for (i, b) in list.iter().enumerate() {
        if list[..i].contains(b) {
            usage_error(format!("--biases: `{b}` is given twice"));
        }
        if !allowed.contains(&b.as_str()) {
            usage_error(format!(
                "--biases: unknown family `{b}`; expected some of {}",
                allowed.join(",")
            ));
        }
    }
    list
}

/// The bias families' option flags, generated from each family's settings
/// ([`at5::position::Family::settings`]): every flag once, its help naming the families that
/// have it. Which of them belong to the `--bias` asked for is checked when the request is built.
#[derive(Clone, Debug, Default)]
pub struct FamilyArgs {
    /// (flag, value) as given, in `--help` order.
    pub given: Vec<(String, String)>,
}

impl clap::FromArgMatches for FamilyArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let given = at5::position::family_flags()
            .into_iter()
            .filter_map(|f| {
                let v = m.try_get_one::<String>(f.flag).ok().flatten()?;
                Some((f.flag.to_string(), v.clone()))
            })
            .collect();
        Ok(FamilyArgs { given })
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = FamilyArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for FamilyArgs {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for f in at5::position::family_flags() {
            let owners: Vec<String> = f.families.iter().map(|n| family_label(n)).collect();
            cmd = cmd.arg(
                clap::Arg::new(f.flag)
                    .long(f.flag)
                    .value_name(f.value)
                    .help(format!("{}: {}", owners.join(" / "), f.help)),
            );
        }
        cmd
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        FamilyArgs::augment_args(cmd)
    }
}

/// A family's name as `--help` writes it (`at5-nob` → `AT5-NoB`).
fn family_label(name: &str) -> String {
    match name {
        "at5-nob" => "AT5-NoB".into(),
        "t5-nob" => "T5-NoB".into(),
        other => other.to_uppercase(),
    }
}
