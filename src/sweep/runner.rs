//! Running a plan here: N runs at once, each resumed from its checkpoint or started, with
//! progress bars or one line per finished run.

use super::{Plan, RunSpec, finished, validate};
use at5::train::{self, Event, RunRecord, TrainConfig, Trainer};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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
            // The run's folder is locked before its checkpoint is read, so a `train` of the
            // same run started by hand (or from a job list) cannot train it at the same time.
            let lock = std::fs::create_dir_all(spec.dir(root))
                .map_err(|e| format!("{}: cannot create: {e}", spec.dir(root).display()))
                .and_then(|()| at5::report::lock_folder(&spec.dir(root)));
            let res = lock
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|_| spec.config())
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
            drop(lock);
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
                crate::outln!("{line}");
            } else {
                overall.println(line);
            }
        }
    };
    let recs = run_all(&plan.specs, root, jobs, &on_event)?;
    overall.finish_and_clear();
    Ok(recs)
}
