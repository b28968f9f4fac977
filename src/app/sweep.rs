//! Many runs that scale and survive: one result directory per run, written atomically, skipped
//! when a valid result exists; N at once locally, or emitted as commands for a cluster.
use crate::cli::{parse_run_flags, run_flags};
use crate::report::{read_json, write_atomic, write_json};
use crate::train::{self, Event, RECORD, RunRecord, RunRequest, TrainConfig, Trainer};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One run of a sweep: a file-safe id, how to label it, and the run it asks for as typed
/// settings. Written to a plan as the `train` flags that make the run (rendered and parsed
/// back by [`crate::cli`], the same code a job line goes through).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "StoredSpec", try_from = "StoredSpec")]
pub struct RunSpec {
    /// A file-safe id, `{group}-{bias}-s{seed}`, also the run's directory name.
    pub id: String,
    /// The row it belongs to (e.g. `adding-100`) and its column (the bias family).
    pub group: String,
    /// The column it belongs to: the bias family, or a label for a variant of one.
    pub bias: String,
    /// The training seed.
    pub seed: u64,
    /// The run.
    pub run: RunRequest,
}

/// A [`RunSpec`] as plan files hold it: the run as `train` flags.
#[derive(Clone, Serialize, Deserialize)]
struct StoredSpec {
    id: String,
    group: String,
    bias: String,
    seed: u64,
    flags: Vec<String>,
}

impl From<RunSpec> for StoredSpec {
    fn from(s: RunSpec) -> StoredSpec {
        StoredSpec {
            flags: run_flags(&s.run),
            id: s.id,
            group: s.group,
            bias: s.bias,
            seed: s.seed,
        }
    }
}

impl TryFrom<StoredSpec> for RunSpec {
    type Error = String;
    fn try_from(s: StoredSpec) -> Result<RunSpec, String> {
        let run = parse_run_flags(&s.flags).map_err(|e| format!("run {}: {e}", s.id))?;
        Ok(RunSpec {
            id: s.id,
            group: s.group,
            bias: s.bias,
            seed: s.seed,
            run,
        })
    }
}

impl RunSpec {
    /// The run `run` in row `group`, in the column of its family.
    pub fn new(group: &str, run: RunRequest) -> Self {
        RunSpec {
            id: format!("{group}-{}-s{}", run.bias.name(), run.seed),
            group: group.into(),
            bias: run.bias.name().to_string(),
            seed: run.seed,
            run,
        }
    }
    /// The run's config, or what is wrong with it, naming the run.
    pub fn config(&self) -> Result<TrainConfig, String> {
        self.run
            .resolve()
            .map_err(|e| format!("run {}: {e}", self.id))
    }
    /// The `train` flags that make the run.
    pub fn flags(&self) -> Vec<String> {
        run_flags(&self.run)
    }
    /// Where the run's checkpoint and record go under `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join("runs").join(&self.id)
    }
}

/// Adds `train` flags (as `--train-flags` gives them) to every run of `plan`; a flag `train`
/// would refuse is an error naming the run.
pub fn add_flags(plan: &mut Plan, extra: &str) -> Result<(), String> {
    for s in &mut plan.specs {
        let mut flags = s.flags();
        flags.extend(extra.split_whitespace().map(String::from));
        s.run = parse_run_flags(&flags).map_err(|e| format!("run {}: {e}", s.id))?;
    }
    Ok(())
}

/// The written plan of a sweep, so `merge` knows what belongs to it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// The binary that wrote the plan (`reproduce`, `sweep`, ...).
    pub experiment: String,
    /// The preset it ran with.
    pub preset: String,
    /// Every run of the experiment.
    pub specs: Vec<RunSpec>,
}

impl Plan {
    /// The finished records of row `group`, column `bias`, in plan order (`recs[k]` is the
    /// record of `specs[k]`, `None` where unfinished).
    pub fn runs<'a>(
        &self,
        recs: &'a [Option<RunRecord>],
        group: &str,
        bias: &str,
    ) -> Vec<&'a RunRecord> {
        self.specs
            .iter()
            .zip(recs)
            .filter(|(s, _)| s.group == group && s.bias == bias)
            .filter_map(|(_, r)| r.as_ref())
            .collect()
    }
}

/// The test accuracy (%) at the best-dev epoch of each run that has one: the number every
/// experiment's table cell summarises over seeds.
pub fn best_test_percent(runs: &[&RunRecord]) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| r.best.as_ref().map(|b| 100.0 * b.test.accuracy))
        .collect()
}

/// The plan file of an experiment inside its output directory: `plan-<experiment>.json`, so
/// experiments sharing one directory (and its finished runs) keep their own plans.
pub fn plan_path(root: &Path, experiment: &str) -> PathBuf {
    root.join(format!("plan-{experiment}.json"))
}

/// A run's finished record, if its directory holds a valid completed one of the same config
/// (a directory left by a run with other flags is not mistaken for this one).
pub fn finished(root: &Path, spec: &RunSpec) -> Option<RunRecord> {
    let cfg = spec.config().ok()?;
    finished_in(&spec.dir(root), &cfg)
}

/// Every run's finished record for `merge`, in plan order (`None`: not run, or not finished).
/// Unlike [`finished`], a record that cannot be read, or that holds another config than its
/// plan says, is an error naming it: a report built without it would quietly lose that run.
pub fn records_to_merge(root: &Path, plan: &Plan) -> Result<Vec<Option<RunRecord>>, String> {
    plan.specs
        .iter()
        .map(|s| {
            let path = s.dir(root).join(RECORD);
            if !path.exists() {
                return Ok(None);
            }
            let rec: RunRecord =
                read_json(&path).map_err(|e| format!("{e}; fix or remove it, then merge again"))?;
            let planned = s.config()?;
            if rec.config_now() != planned.normalized() {
                return Err(format!(
                    "{}: a run of other settings ({}; {}) than the plan's `{}`; move it away, \
                     then merge again",
                    path.display(),
                    rec.summary(),
                    rec.config.first_difference(&planned, ("there", "planned")),
                    s.flags().join(" ")
                ));
            }
            Ok(rec.is_finished().then_some(rec))
        })
        .collect()
}

/// The completed record in run directory `dir`, if it is of config `cfg`.
pub fn finished_in(dir: &Path, cfg: &crate::train::TrainConfig) -> Option<RunRecord> {
    let rec: RunRecord = read_json(&dir.join(RECORD)).ok()?;
    (rec.is_finished() && rec.config_now() == cfg.normalized()).then_some(rec)
}

/// Checks every spec's flags, and that each run fits in memory, up front, so a typo fails
/// before hours of runs, not after.
pub fn validate(specs: &[RunSpec]) -> Result<(), String> {
    for (i, s) in specs.iter().enumerate() {
        // Two runs with one id would train into one directory and count twice in the tables.
        if specs[..i].iter().any(|o| o.id == s.id) {
            return Err(format!("run {} is planned twice", s.id));
        }
        s.config()?
            .check_planned_memory()
            .map_err(|e| format!("run {}: {e}", s.id))?;
    }
    Ok(())
}

/// `Err` when running `plan` in `root` would replace results already there: a run id the
/// experiment's earlier plan, or another experiment's plan sharing `root/runs`, defined with
/// another config (e.g. after changing `--train-flags`), or a run directory whose record is of
/// another config. The runner would
/// otherwise retrain such runs over their checkpoints and rewrite the tables without a word.
pub fn check_plan(root: &Path, plan: &Plan) -> Result<(), String> {
    let elsewhere = "use another --out, or delete them to start over";
    let config_of = |s: &RunSpec| s.config();
    // This experiment's earlier plan, and any other experiment's sharing the folder's runs/:
    // a run id they plan with other settings would be retrained over.
    for old in plans_in(root).unwrap_or_default() {
        let path = plan_path(root, &old.experiment);
        for o in &old.specs {
            let Some(n) = plan.specs.iter().find(|s| s.id == o.id) else {
                continue;
            };
            let same = o.run == n.run
                || matches!((config_of(o), config_of(n)), (Ok(a), Ok(b)) if a.normalized() == b.normalized());
            if !same {
                return Err(format!(
                    "{}: run {} was planned as `{}`, now `{}`; this would replace its \
                     results and the tables: {elsewhere}",
                    path.display(),
                    o.id,
                    o.flags().join(" "),
                    n.flags().join(" ")
                ));
            }
        }
    }
    let runs = root.join("runs");
    if runs.exists() && !runs.is_dir() {
        return Err(format!("{}: is not a folder; remove it", runs.display()));
    }
    for s in &plan.specs {
        let dir = s.dir(root);
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{}: is not a folder; remove it", dir.display()));
        }
        let path = dir.join(RECORD);
        let cfg = config_of(s)?;
        if let Ok(rec) = read_json::<RunRecord>(&path)
            && rec.config_now() != cfg.normalized()
        {
            return Err(format!(
                "{}: holds a run with other settings than `{}` ({}); this would replace it: \
                 {elsewhere}",
                path.display(),
                s.flags().join(" "),
                rec.config.first_difference(&cfg, ("there", "here"))
            ));
        }
        if dir.is_dir() {
            // A record.json or checkpoint of the wrong kind would fail the run after training.
            train::check_out_contents(&dir, &cfg, train::OutUse::Continue)?;
        }
    }
    Ok(())
}

/// The files and folder the experiments' reports write in `root`.
const REPORT_FILES: [&str; 6] = [
    "README.md",
    "table.md",
    "results.json",
    "ablate.md",
    "extrapolate.md",
    "init-study.md",
];

/// `Err` naming a report path in `root` that is of the wrong kind (`figures` a file,
/// `table.md` a folder, ...), so a run or `merge` fails before it trains or reads, not after.
pub fn check_report_paths(root: &Path) -> Result<(), String> {
    let figures = root.join("figures");
    if figures.exists() && !figures.is_dir() {
        return Err(format!("{}: is not a folder; remove it", figures.display()));
    }
    for f in REPORT_FILES {
        let p = root.join(f);
        if p.exists() && !p.is_file() {
            return Err(format!("{}: is not a file; remove it", p.display()));
        }
    }
    Ok(())
}

/// One line per run for GNU parallel or a Slurm array: each runs `train` into the run's dir.
pub fn emit_jobs(specs: &[RunSpec], root: &Path, file: &Path) -> Result<(), String> {
    let mut text = String::new();
    for s in specs {
        let mut line = String::from("cargo run --release --quiet --bin train --");
        for f in &s.flags() {
            line.push(' ');
            line.push_str(&shell_quote(f));
        }
        let out = s.dir(root);
        line.push_str(&format!(
            " --out {} --continue --quiet --threads 1\n",
            shell_quote(&out.to_string_lossy())
        ));
        text.push_str(&line);
    }
    write_atomic(file, text.as_bytes())
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What the runner reports as runs progress.
pub enum SweepEvent<'a> {
    /// A run with a valid finished result was reused.
    Skipped(&'a RunSpec),
    /// A run started; the number is its position in the plan.
    Started(&'a RunSpec, usize),
    /// A training step of a run: done and total steps.
    Step(&'a RunSpec, usize, usize),
    /// A run finished or failed.
    Finished(&'a RunSpec, &'a Result<RunRecord, String>),
}

/// Runs every spec without a finished result, `jobs` at a time, and returns every record
/// (finished earlier or now) in spec order. A failed run is reported and left out.
pub fn run_all(
    specs: &[RunSpec],
    root: &Path,
    jobs: usize,
    on_event: &(dyn Fn(SweepEvent) + Sync),
) -> Result<Vec<Option<RunRecord>>, String> {
    validate(specs)?;
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let results: Vec<Mutex<Option<RunRecord>>> = specs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(spec) = specs.get(i) else { break };
            if let Some(r) = finished(root, spec) {
                on_event(SweepEvent::Skipped(spec));
                *results[i].lock().unwrap() = Some(r);
                continue;
            }
            let res = spec
                .config()
                .and_then(|cfg| resume_or_start(&spec.dir(root), cfg))
                .and_then(|t| {
                    let total = t.config.epochs.saturating_sub(t.state.epoch) * t.steps_per_epoch();
                    on_event(SweepEvent::Started(spec, total));
                    let mut done = 0;
                    train::run(t, &spec.dir(root), |ev| {
                        if let Event::Step { .. } = ev {
                            done += 1;
                            on_event(SweepEvent::Step(spec, done, total));
                        }
                    })
                });
            on_event(SweepEvent::Finished(spec, &res));
            if let Ok(r) = res {
                *results[i].lock().unwrap() = Some(r);
            }
        }
    };
    std::thread::scope(|s| {
        // More workers than runs would only start and stop (a huge --jobs spawned them all).
        for _ in 0..jobs.clamp(1, specs.len().max(1)) {
            s.spawn(work);
        }
    });
    Ok(results
        .into_iter()
        .map(|m| m.into_inner().unwrap())
        .collect())
}

/// An interrupted run continues from its checkpoint in `dir` when that checkpoint is of the same
/// config; otherwise a fresh run starts.
pub fn resume_or_start(dir: &Path, cfg: TrainConfig) -> Result<Trainer, String> {
    train::check_out_contents(dir, &cfg, train::OutUse::Continue)?;
    let ck = dir.join(train::CHECKPOINT);
    if !ck.exists() {
        return Trainer::new(cfg);
    }
    let t = Trainer::from_checkpoint(&ck)?;
    if t.config.normalized() != cfg.normalized() {
        return Err(format!(
            "{}: a checkpoint of other settings ({}); starting over would replace it: give \
             another folder, or remove that file",
            ck.display(),
            t.config.first_difference(&cfg, ("there", "here"))
        ));
    }
    Ok(t)
}

/// The plan a run folder belongs to: when `out` is `ROOT/runs/ID` and a plan in `ROOT` plans
/// run `ID`, `ROOT` and that run's config, so a run there is changed only as its plan says.
pub fn planned_run(out: &Path) -> Option<(PathBuf, TrainConfig)> {
    let runs = out.parent()?;
    let root = runs.parent()?;
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    if runs.file_name()? != "runs" {
        return None;
    }
    let id = out.file_name()?.to_str()?;
    let spec = plans_in(root)
        .ok()?
        .into_iter()
        .flat_map(|p| p.specs)
        .find(|s| s.id == id)?;
    Some((root.to_path_buf(), spec.config().ok()?))
}

/// Writes the plan beside the runs.
pub fn write_plan(root: &Path, plan: &Plan) -> Result<(), String> {
    write_json(&plan_path(root, &plan.experiment), plan)
}

/// `--emit-jobs FILE` may replace an earlier job list (every line a `--continue` job), never
/// another file, a folder, or one of the files the experiments keep in `root` (a plan, or a
/// file under `runs/`).
fn check_jobs_file(file: &Path, root: &Path) -> Result<(), String> {
    let at = file.display();
    if file.is_dir() {
        return Err(format!("--emit-jobs {at}: is a folder; give a file path"));
    }
    // One spelling per place (`..` and links followed as far as the path exists), so
    // `root/../root/plan-x.json` is seen for what it is.
    let abs = |p: &Path| {
        let mut head = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let mut tail = Vec::new();
        while !head.exists() {
            match (head.file_name().map(|n| n.to_owned()), head.parent()) {
                (Some(name), Some(parent)) => {
                    tail.push(name);
                    head = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut resolved = std::fs::canonicalize(&head).unwrap_or(head);
        resolved.extend(tail.iter().rev());
        resolved
    };
    let f = abs(file);
    let is_plan = f.parent() == Some(abs(root).as_path())
        && f.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("plan-") && n.ends_with(".json"));
    if is_plan || f.starts_with(abs(&root.join("runs"))) {
        return Err(format!(
            "--emit-jobs {at}: would replace the experiment's own files in {}; write the job \
             list elsewhere",
            root.display()
        ));
    }
    let job_list = |text: String| {
        text.lines()
            .all(|l| l.trim().is_empty() || l.contains(" --continue"))
    };
    if file.exists() && !std::fs::read_to_string(file).is_ok_and(job_list) {
        return Err(format!(
            "--emit-jobs {at}: exists and is not a job list; give a new path, or remove it"
        ));
    }
    Ok(())
}

/// `--emit-jobs`: writes the unfinished runs' commands and says how to merge afterwards.
pub fn emit_unfinished(plan: &Plan, root: &Path, file: &Path) -> Result<(), String> {
    let todo: Vec<RunSpec> = plan
        .specs
        .iter()
        .filter(|s| finished(root, s).is_none())
        .cloned()
        .collect();
    emit_jobs(&todo, root, file)?;
    println!(
        "wrote {} command{} to {}; afterwards run `cargo run --release --bin merge -- {}`",
        todo.len(),
        if todo.len() == 1 { "" } else { "s" },
        file.display(),
        root.display()
    );
    Ok(())
}

/// [`run_all`] with one overall progress bar and one bar per running run (or, when `quiet`,
/// one line per finished run).
pub fn run_with_progress(
    plan: &Plan,
    root: &Path,
    jobs: usize,
    quiet: bool,
) -> Result<Vec<Option<RunRecord>>, String> {
    use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
    use std::collections::HashMap;
    let multi = if quiet {
        MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
    } else {
        MultiProgress::new()
    };
    let overall = multi.add(ProgressBar::new(plan.specs.len() as u64));
    overall.set_style(
        ProgressStyle::with_template(
            "all runs [{bar:30}] {pos}/{len}  elapsed {elapsed}  eta {eta}",
        )
        .unwrap()
        .progress_chars("=> "),
    );
    let style = ProgressStyle::with_template("{prefix:>28} [{bar:30}] {pos}/{len} steps")
        .unwrap()
        .progress_chars("=> ");
    let bars: Mutex<HashMap<String, ProgressBar>> = Mutex::new(HashMap::new());
    let on_event = |ev: SweepEvent| match ev {
        SweepEvent::Skipped(_) => overall.inc(1),
        SweepEvent::Started(s, total) => {
            let b = multi.add(ProgressBar::new(total as u64));
            b.set_style(style.clone());
            b.set_prefix(s.id.clone());
            bars.lock().unwrap().insert(s.id.clone(), b);
        }
        SweepEvent::Step(s, done, _) => {
            if let Some(b) = bars.lock().unwrap().get(&s.id) {
                b.set_position(done as u64);
            }
        }
        SweepEvent::Finished(s, res) => {
            if let Some(b) = bars.lock().unwrap().remove(&s.id) {
                b.finish_and_clear();
                multi.remove(&b);
            }
            overall.inc(1);
            let line = match res {
                Ok(r) => format!(
                    "{}: test {:.1}% ({:.0} s)",
                    s.id,
                    100.0 * r.best.as_ref().map_or(0.0, |b| b.test.accuracy),
                    r.train_seconds
                ),
                Err(e) => format!("{}: failed: {e}", s.id),
            };
            if quiet {
                println!("{line}");
            } else {
                overall.println(line);
            }
        }
    };
    let recs = run_all(&plan.specs, root, jobs, &on_event)?;
    overall.finish_and_clear();
    Ok(recs)
}

/// Flags every multi-run binary shares.
#[derive(clap::Args, Clone, Debug)]
pub struct SweepArgs {
    /// quick (minutes, reduced sizes) or paper (the paper's sizes and epochs).
    #[arg(long, default_value = "quick")]
    pub preset: String,
    /// Output directory (default results/PRESET; finished runs there are reused).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs at once (two keep both cores busy through the serial parts of small models).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Write one `train` command per unfinished run to FILE instead of running them; then
    /// `merge` builds the tables and figures.
    #[arg(long)]
    pub emit_jobs: Option<PathBuf>,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// One line per finished run instead of progress bars.
    #[arg(long)]
    pub quiet: bool,
    /// Only these rows (comma-separated group names, e.g. `process50,adding-100`).
    #[arg(long)]
    pub tasks: Option<String>,
    /// Extra `train` flags for every run, e.g. "--epochs 1 --d-model 8 --heads 2".
    #[arg(long, allow_hyphen_values = true)]
    pub train_flags: Option<String>,
    /// Print the plan's cost instead of running it: runs, optimizer steps and evaluated examples
    /// per task × family, and the hours they take on this machine, from a few timed steps.
    /// Writes nothing.
    #[arg(long, conflicts_with = "emit_jobs")]
    pub plan: bool,
}

impl SweepArgs {
    /// The `--preset` value; exits with code 2 if unknown.
    pub fn preset(&self) -> crate::train::Preset {
        crate::train::Preset::from_name(&self.preset).unwrap_or_else(|e| crate::cli::usage_error(e))
    }
    /// Applies `--tasks` and `--train-flags` to a plan.
    pub fn apply(&self, plan: &mut Plan) {
        if let Some(t) = &self.tasks {
            let keep: Vec<&str> = t.split(',').map(str::trim).collect();
            for k in &keep {
                if !plan.specs.iter().any(|s| s.group == *k) {
                    crate::cli::usage_error(format!(
                        "--tasks: `{k}` is not a row of {}",
                        plan.experiment
                    ));
                }
            }
            plan.specs.retain(|s| keep.contains(&s.group.as_str()));
        }
        if let Some(f) = &self.train_flags {
            add_flags(plan, f)
                .unwrap_or_else(|e| crate::cli::usage_error(format!("--train-flags: {e}")));
        }
    }
    /// The output directory: `--out`, or `results/` plus the preset name.
    pub fn root(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("results/{}", self.preset)))
    }
}

/// The body of every multi-run binary: validate, write the plan, then emit the job list or run
/// what is unfinished and call `report` on all records. Exits 2 on bad input, 1 on a failed
/// report.
pub fn drive(
    mut plan: Plan,
    args: &SweepArgs,
    report: impl FnOnce(&Path, &Plan, &[Option<RunRecord>], f64) -> Result<String, String>,
) {
    use crate::cli::{init_threads, usage_error};
    init_threads(args.threads);
    if args.jobs == 0 {
        usage_error("--jobs 0: expected at least 1 (runs at once)");
    }
    args.apply(&mut plan);
    let plan = &plan;
    let root = args.root();
    validate(&plan.specs).unwrap_or_else(|e| usage_error(e));
    check_plan(&root, plan).unwrap_or_else(|e| usage_error(e));
    check_report_paths(&root).unwrap_or_else(|e| usage_error(e));
    if args.plan {
        // A cost estimate is a dry run: no plan is written, so it binds nothing in --out.
        let costs = estimate_costs(plan, &root).unwrap_or_else(|e| usage_error(e));
        print!("{}", cost_table(&costs, rayon::current_num_threads()));
        return;
    }
    if let Some(file) = &args.emit_jobs {
        check_jobs_file(file, &root).unwrap_or_else(|e| usage_error(e));
    }
    write_plan(&root, plan).unwrap_or_else(|e| usage_error(e));
    if let Some(file) = &args.emit_jobs {
        emit_unfinished(plan, &root, file).unwrap_or_else(|e| usage_error(e));
        return;
    }
    crate::cli::on_interrupt(format!(
        "stopped: finished runs are kept in {} and an interrupted one resumes from its last \
         checkpoint; run the same command again to continue",
        root.join("runs").display()
    ));
    let start = std::time::Instant::now();
    let recs =
        run_with_progress(plan, &root, args.jobs, args.quiet).unwrap_or_else(|e| usage_error(e));
    match report(&root, plan, &recs, start.elapsed().as_secs_f64()) {
        Ok(md) => println!("{md}\nwrote results under {}", root.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
    // Every run was attempted, so one without a record failed: the tables hold the others,
    // and the exit code says the experiment is incomplete.
    let failed = recs.iter().filter(|r| r.is_none()).count();
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} runs failed (each said why above); the reports hold the others",
            recs.len()
        );
        std::process::exit(1);
    }
}

/// Every plan in an output directory.
pub fn plans_in(root: &Path) -> Result<Vec<Plan>, String> {
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("plan-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!(
            "{}: no plan-*.json (nothing was planned here)",
            root.display()
        ));
    }
    paths
        .iter()
        .map(|p| {
            let plan: Plan = read_json(p)?;
            if plan.specs.is_empty() {
                return Err(format!("{}: plans no runs", p.display()));
            }
            Ok(plan)
        })
        .collect()
}

/// Steps timed per cell of a cost plan (after one untimed warm-up step).
const PLAN_STEPS: usize = 3;

/// The share of epochs assumed to improve dev, and so to evaluate test, in a cost plan. In the
/// committed runs dev improves often early and rarely late; a tenth is a middle estimate.
pub const PLAN_TEST_SHARE: f64 = 0.1;

/// What one cell (task × family) of a plan costs: counts from the configs, seconds measured
/// on this machine with the thread pool as configured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellCost {
    /// The plan's row.
    pub group: String,
    /// The bias family.
    pub bias: String,
    /// Runs in the cell, and how many of them are not finished yet.
    pub runs: usize,
    /// Runs without a finished record.
    pub left: usize,
    /// Optimizer steps of the unfinished runs.
    pub steps: usize,
    /// Dev examples evaluated by the unfinished runs (every epoch).
    pub dev_examples: usize,
    /// Test examples, assuming [`PLAN_TEST_SHARE`] of epochs improve dev.
    pub test_examples: usize,
    /// Seconds per training step (median of a few timed steps).
    pub step_seconds: f64,
    /// Seconds per evaluated example (one evaluation batch).
    pub eval_seconds_per_example: f64,
}

impl CellCost {
    /// Estimated seconds of the unfinished runs, one after another.
    pub fn seconds(&self) -> f64 {
        self.steps as f64 * self.step_seconds
            + (self.dev_examples + self.test_examples) as f64 * self.eval_seconds_per_example
    }
}

/// Times a few steps and one evaluation batch of each cell's first run and counts the work of
/// its unfinished runs. Nothing is written; finished runs under `root` cost nothing.
pub fn estimate_costs(plan: &Plan, root: &Path) -> Result<Vec<CellCost>, String> {
    use std::time::Instant;
    let mut cells: Vec<(String, String)> = Vec::new();
    for s in &plan.specs {
        let key = (s.group.clone(), s.bias.clone());
        if !cells.contains(&key) {
            cells.push(key);
        }
    }
    let mut out = Vec::new();
    for (group, bias) in cells {
        let specs: Vec<&RunSpec> = plan
            .specs
            .iter()
            .filter(|s| s.group == group && s.bias == bias)
            .collect();
        let mut t = Trainer::new(specs[0].config()?)?;
        let idx = t.data.training_indices();
        let n = t.config.batch.min(idx.len());
        let batch: Vec<crate::data::Example> =
            idx[..n].iter().map(|&i| t.data.train[i].clone()).collect();
        let refs: Vec<&crate::data::Example> = batch.iter().collect();
        let mut times = Vec::new();
        for k in 0..=PLAN_STEPS {
            let t0 = Instant::now();
            t.step(&refs)?;
            if k > 0 {
                times.push(t0.elapsed().as_secs_f64());
            }
        }
        times.sort_by(f64::total_cmp);
        let step_seconds = times[times.len() / 2];
        let m = crate::train::EVAL_BATCH.min(t.data.dev.len());
        let opts = crate::nn::ForwardOpts {
            whole_graph: t.config.whole_graph,
            ..Default::default()
        };
        let t0 = Instant::now();
        crate::train::evaluate(&t.model, &t.store, &t.data.dev[..m], t.data.max_len, &opts);
        let eval_seconds_per_example = t0.elapsed().as_secs_f64() / m.max(1) as f64;
        let (mut left, mut steps, mut dev, mut test) = (0, 0, 0, 0);
        for s in &specs {
            if finished(root, s).is_some() {
                continue;
            }
            let cfg = s.config()?;
            left += 1;
            steps += cfg.epochs * idx.len().div_ceil(cfg.batch);
            dev += cfg.epochs * t.data.dev.len();
            test += (cfg.epochs as f64 * PLAN_TEST_SHARE).ceil() as usize * t.data.test.len();
        }
        out.push(CellCost {
            group,
            bias,
            runs: specs.len(),
            left,
            steps,
            dev_examples: dev,
            test_examples: test,
            step_seconds,
            eval_seconds_per_example,
        });
    }
    Ok(out)
}

/// The cost plan as a Markdown table with its total, timed with `threads` worker threads.
pub fn cost_table(costs: &[CellCost], threads: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| task | family | runs (left) | steps | dev + test examples | ms/step | µs/eval example | hours |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut total = 0.0;
    for c in costs {
        let h = c.seconds() / 3600.0;
        total += h;
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {} + {} | {:.1} | {:.0} | {:.2} |",
            c.group,
            c.bias,
            c.runs,
            c.left,
            c.steps,
            c.dev_examples,
            c.test_examples,
            c.step_seconds * 1e3,
            c.eval_seconds_per_example * 1e6,
            h
        );
    }
    let _ = writeln!(
        s,
        "\ntotal: {total:.1} hours, one run at a time with {threads} threads (test evaluated on \
         {:.0} % of epochs, an estimate)",
        PLAN_TEST_SHARE * 100.0
    );
    s
}
