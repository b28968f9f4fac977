//! Many runs that scale and survive: one result directory per run, written atomically, skipped
//! when a valid result exists; N at once locally, or emitted as commands for a cluster.

mod checks;
mod cost;
mod jobs;
mod runner;

pub use checks::{check_plan, check_report_paths, planned_run, validate};
pub use cost::{CellCost, PLAN_TEST_SHARE, cost_table, estimate_costs};
use jobs::check_jobs_file;
pub use jobs::{emit_jobs, emit_unfinished};
pub use runner::{SweepEvent, resume_or_start, run_all, run_with_progress};

use crate::cli::{parse_run_flags, run_flags};
use at5::report::{read_json, write_json};
use at5::train::{RECORD, RunRecord, RunRequest, TrainConfig};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
#[serde(try_from = "StoredPlan")]
pub struct Plan {
    /// The binary that wrote the plan (`reproduce`, `sweep`, ...).
    pub experiment: String,
    /// The preset it ran with.
    pub preset: String,
    /// Which revision of the paper preset its runs' flags mean ([`at5::train::PAPER_REVISION`]
    /// when written now; 1 for a plan written before revisions were recorded).
    pub revision: u32,
    /// Every run of the experiment.
    pub specs: Vec<RunSpec>,
}

/// A [`Plan`] as its file holds it: `revision` absent in plans written before it existed.
#[derive(Deserialize)]
struct StoredPlan {
    experiment: String,
    preset: String,
    #[serde(default = "first_revision")]
    revision: u32,
    specs: Vec<RunSpec>,
}

fn first_revision() -> u32 {
    1
}

impl TryFrom<StoredPlan> for Plan {
    type Error = String;
    /// Reads an older plan in today's terms: its runs keep the settings they were planned with,
    /// spelled out where the paper preset has since changed, so its finished runs stay finished
    /// and its unfinished ones resume as they began.
    fn try_from(p: StoredPlan) -> Result<Plan, String> {
        let now = at5::train::PAPER_REVISION;
        if p.revision == 0 || p.revision > now {
            return Err(format!(
                "plan revision {}: this version reads revisions 1 to {now}; use the version \
                 that wrote it",
                p.revision
            ));
        }
        let mut specs = p.specs;
        for s in &mut specs {
            s.run.pin_paper_revision(p.revision);
        }
        Ok(Plan {
            experiment: p.experiment,
            preset: p.preset,
            revision: now,
            specs,
        })
    }
}

impl Plan {
    /// The plan of `experiment`'s runs `specs` under `preset`, in the current revision.
    pub fn new(experiment: &str, preset: &str, specs: Vec<RunSpec>) -> Plan {
        Plan {
            experiment: experiment.into(),
            preset: preset.into(),
            revision: at5::train::PAPER_REVISION,
            specs,
        }
    }

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
pub fn finished_in(dir: &Path, cfg: &at5::train::TrainConfig) -> Option<RunRecord> {
    let rec: RunRecord = read_json(&dir.join(RECORD)).ok()?;
    (rec.is_finished() && rec.config_now() == cfg.normalized()).then_some(rec)
}

/// Writes the plan beside the runs.
pub fn write_plan(root: &Path, plan: &Plan) -> Result<(), String> {
    write_json(&plan_path(root, &plan.experiment), plan)
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
    pub fn preset(&self) -> at5::train::Preset {
        at5::train::Preset::from_name(&self.preset).unwrap_or_else(|e| crate::cli::usage_error(e))
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
    // One writer per folder, taken before the plan there is checked: two sweeps started at
    // once would both accept it, then replace each other's plan and runs. A cost estimate
    // writes nothing and takes no lock.
    let _lock = (!args.plan).then(|| {
        std::fs::create_dir_all(&root).unwrap_or_else(|e| {
            usage_error(format!(
                "--out {}: cannot create this folder ({e}); choose a writable one",
                root.display()
            ))
        });
        at5::report::lock_folder(&root).unwrap_or_else(|e| usage_error(format!("--out {e}")))
    });
    check_plan(&root, plan).unwrap_or_else(|e| usage_error(e));
    check_report_paths(&root).unwrap_or_else(|e| usage_error(e));
    if args.plan {
        // A cost estimate is a dry run: no plan is written, so it binds nothing in --out.
        let costs = estimate_costs(plan, &root).unwrap_or_else(|e| usage_error(e));
        crate::cli::print_text(&cost_table(&costs, rayon::current_num_threads()));
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
        Ok(md) => crate::cli::print_line(&format!("{md}\nwrote results under {}", root.display())),
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
