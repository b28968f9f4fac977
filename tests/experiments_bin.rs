//! Every experiment binary on a tiny setting: it exits 0 and its outputs exist and parse.
use std::path::{Path, PathBuf};
use std::process::Command;

const TINY: &str = "--epochs 1 --d-model 8 --heads 2 --ffn 8";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-exp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run(bin: &str, args: &[&str]) -> std::process::Output {
    let out = Command::new(bin).args(args).output().expect("binary runs");
    assert!(
        out.status.success(),
        "{bin} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn svg(path: &Path) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        s.starts_with("<svg") && s.trim_end().ends_with("</svg>"),
        "{}",
        path.display()
    );
}

#[test]
fn reproduce_ablate_and_merge_on_one_tiny_row() {
    let root = tmp("repro");
    let r = root.to_str().unwrap();
    let common = [
        "--tasks",
        "process50",
        "--seeds",
        "1",
        "--train-flags",
        TINY,
        "--out",
        r,
        "--quiet",
    ];
    let mut args = common.to_vec();
    args.extend(["--biases", "t5,at5"]);
    run(env!("CARGO_BIN_EXE_reproduce"), &args);
    let table = std::fs::read_to_string(root.join("table.md")).unwrap();
    assert!(
        table.contains("process50") && table.contains("Bayes ceiling"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("results.json")).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("What it shows"), "{readme}");
    // Beside the accuracies: when each family peaked, out of its epochs, and what a run cost.
    let effort = readme
        .lines()
        .skip_while(|l| !l.starts_with("Epoch of best dev accuracy"))
        .find(|l| l.starts_with("| process50"))
        .unwrap_or_else(|| panic!("no effort row: {readme}"));
    let epochs = TINY
        .split_whitespace()
        .skip_while(|w| *w != "--epochs")
        .nth(1);
    let epochs = epochs.expect("TINY sets --epochs");
    assert!(
        effort.matches(&format!("/{epochs}, ")).count() == 2 && effort.matches(" min").count() == 2,
        "{effort}"
    );
    svg(&root.join("figures/curves-process50.svg"));
    svg(&root.join("figures/priors-process50.svg"));

    // ablate reuses the t5/at5 runs and trains only the no-bucket ones.
    run(env!("CARGO_BIN_EXE_ablate"), &common);
    let md = std::fs::read_to_string(root.join("ablate.md")).unwrap();
    assert!(
        md.contains("t5-nob") && md.contains("Head-prior ablation"),
        "{md}"
    );
    // Each no-bucket family against its bucketed version (one seed: no interval yet).
    assert!(
        md.contains("- process50: T5-NoB − T5 ") && md.contains("; AT5-NoB − AT5 "),
        "{md}"
    );
    assert!(md.contains("too few seeds for an interval"), "{md}");
    // The head-prior ablation covers every family with a position bias, ablations included.
    for fam in ["t5", "t5-nob", "at5", "at5-nob"] {
        assert!(
            md.contains(&format!("- process50, {fam}: heads in order")),
            "{fam}: {md}"
        );
    }
    svg(&root.join("figures/head-ablation-process50.svg"));

    let out = run(env!("CARGO_BIN_EXE_merge"), &[r]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("runs not finished"));

    // A reading written below the marker survives merge, and merge is byte-stable.
    let readme = root.join("README.md");
    let mut text = std::fs::read_to_string(&readme).unwrap();
    text.push_str(&format!(
        "\n{}\n\n## Reading\n\nWritten by hand.\n",
        at5_app::experiments::reproduce::KEPT_MARKER
    ));
    std::fs::write(&readme, &text).unwrap();
    run(env!("CARGO_BIN_EXE_merge"), &[r]);
    let once = std::fs::read_to_string(&readme).unwrap();
    assert!(once.ends_with("## Reading\n\nWritten by hand.\n"), "{once}");
    assert!(once.contains("What it shows"));
    run(env!("CARGO_BIN_EXE_merge"), &[r]);
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), once);

    // Without the checkpoints (as in a clone, where only records and what the models learned
    // are committed), merge draws the same figures and writes the same reports.
    let outputs = [
        "README.md",
        "ablate.md",
        "figures/priors-process50.svg",
        "figures/head-ablation-process50.svg",
    ];
    let read = |f: &str| std::fs::read(root.join(f)).unwrap();
    let before: Vec<Vec<u8>> = outputs.iter().map(|f| read(f)).collect();
    for run_dir in std::fs::read_dir(root.join("runs")).unwrap() {
        let dir = run_dir.unwrap().path();
        let _ = std::fs::remove_file(dir.join("checkpoint.bin"));
        let id = dir.file_name().unwrap().to_str().unwrap().to_string();
        // reproduce drew the t5/at5 priors; ablate's head curves cover the no-bucket runs too.
        let learned: &[&str] = if id.ends_with("-t5-s1") || id.ends_with("-at5-s1") {
            &["prior.json", "head-ablation.json"]
        } else if id.ends_with("-nob-s1") {
            &["head-ablation.json"]
        } else {
            &[]
        };
        for f in learned {
            assert!(dir.join(f).is_file(), "{id}: no {f}");
        }
    }
    run(env!("CARGO_BIN_EXE_merge"), &[r]);
    for (f, b) in outputs.iter().zip(&before) {
        assert!(read(f) == *b, "{f} differs without the checkpoints");
    }
}

#[test]
fn sweep_and_extrapolate_on_tiny_settings() {
    let root = tmp("sweep");
    let r = root.to_str().unwrap();
    run(
        env!("CARGO_BIN_EXE_sweep"),
        &[
            "--task",
            "lagk",
            "--ranges",
            "2,4",
            "--biases",
            "at5",
            "--train-flags",
            TINY,
            "--out",
            r,
            "--quiet",
        ],
    );
    assert!(
        std::fs::read_to_string(root.join("table.md"))
            .unwrap()
            .contains("lagk")
    );
    svg(&root.join("figures/lagk-accuracy-vs-range.svg"));
    svg(&root.join("figures/lagk-at5-saturation-vs-range.svg"));

    let root = tmp("extra");
    let r = root.to_str().unwrap();
    run(
        env!("CARGO_BIN_EXE_extrapolate"),
        &[
            "--tasks",
            "lagk-L32-k4",
            "--biases",
            "t5",
            "--train-flags",
            TINY,
            "--out",
            r,
            "--quiet",
        ],
    );
    let md = std::fs::read_to_string(root.join("extrapolate.md")).unwrap();
    assert!(md.contains("4·L"), "{md}");
}

#[test]
fn bench_prints_its_json_fields() {
    let out = run(
        env!("CARGO_BIN_EXE_bench"),
        &["--config", "T", "--steps", "2", "--warmup", "1", "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in [
        "ms_per_step",
        "forward_ms",
        "backward_ms",
        "optimizer_ms",
        "gflops",
        "peak_rss_mb",
        "config",
        "threads",
    ] {
        assert!(v.get(k).is_some(), "bench --json lacks {k}");
    }
}

#[test]
fn bench_eval_times_both_paths_and_checks_their_bits() {
    for graph in [&[][..], &["--no-prune"][..]] {
        let mut args = vec!["--eval", "--config", "T", "--steps", "2", "--warmup", "0"];
        args.extend(graph);
        let out = run(env!("CARGO_BIN_EXE_bench"), &args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("B=256"),
            "the evaluation batch by default: {text}"
        );
        assert!(text.contains("; same output bits"), "{text}");
        assert!(text.contains("x); medians of 2 alternating runs"), "{text}");
    }
}

#[test]
fn bad_experiment_flags_exit_2() {
    for (bin, args) in [
        (env!("CARGO_BIN_EXE_reproduce"), vec!["--biases", "nope"]),
        (env!("CARGO_BIN_EXE_reproduce"), vec!["--tasks", "sorting"]),
        (
            env!("CARGO_BIN_EXE_sweep"),
            vec!["--task", "lagk", "--ranges", "x"],
        ),
        (env!("CARGO_BIN_EXE_bench"), vec!["--config", "Z"]),
        (
            env!("CARGO_BIN_EXE_bench"),
            vec!["--config", "T", "--steps", "0"],
        ),
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec![
                "--train-flags",
                "--d-model 1000000",
                "--out",
                "/nonexistent/at5",
            ],
        ),
        (env!("CARGO_BIN_EXE_sweep"), vec!["--threads", "100000"]),
        (env!("CARGO_BIN_EXE_merge"), vec!["/nonexistent/at5"]),
        // Sizes that would abort on allocation, or wrap, are refused by name.
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec![
                "--seeds",
                "18446744073709551615",
                "--emit-jobs",
                "/nonexistent/j",
            ],
        ),
        (
            env!("CARGO_BIN_EXE_bench"),
            vec!["--config", "T", "--seq-len", "18446744073709551615"],
        ),
        (
            env!("CARGO_BIN_EXE_bench"),
            vec!["--config", "T", "--warmup", "18446744073709551615"],
        ),
        // A run planned twice would train two jobs into one folder and count twice.
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec!["--biases", "t5,t5", "--plan"],
        ),
        (
            env!("CARGO_BIN_EXE_sweep"),
            vec!["--task", "lagk", "--ranges", "4,4", "--plan"],
        ),
        // Flags a mode would ignore.
        (env!("CARGO_BIN_EXE_bench"), vec!["--gemm", "--scaling"]),
        (env!("CARGO_BIN_EXE_bench"), vec!["--eval", "--profile"]),
        (
            env!("CARGO_BIN_EXE_sweep"),
            vec!["--task", "adding", "--lag-len", "64"],
        ),
        (
            env!("CARGO_BIN_EXE_init-study"),
            vec!["--scaling", "--tasks", "process50"],
        ),
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec!["--plan", "--emit-jobs", "/nonexistent/j"],
        ),
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec!["--jobs", "0", "--out", "/nonexistent/at5"],
        ),
        // Misspelled flags: clap's message and tip on one line; a missing argument is named.
        (env!("CARGO_BIN_EXE_reproduce"), vec!["--seed", "3"]),
        (env!("CARGO_BIN_EXE_merge"), vec![]),
        (
            env!("CARGO_BIN_EXE_reproduce"),
            vec!["--train-flags", "--help", "--out", "/nonexistent/at5"],
        ),
    ] {
        let out = Command::new(bin).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // An unknown kernel path is refused before any work, by every binary that computes.
    for bin in [
        env!("CARGO_BIN_EXE_gradcheck"),
        env!("CARGO_BIN_EXE_init-study"),
    ] {
        let out = Command::new(bin)
            .args(["--scaling"].iter().filter(|_| bin.ends_with("init-study")))
            .env("AT5_KERNEL", "bogus")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bin}: {err}");
        assert!(
            err.contains("AT5_KERNEL") && !err.contains("panicked"),
            "{bin}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{bin}: {err}");
    }
}

/// Runs `bin`, asserts it refused with exit code 2 and one line, and returns that line.
fn refused(bin: &str, args: &[&str]) -> String {
    let out = Command::new(bin).args(args).output().expect("binary runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{bin} {args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{bin} {args:?}: {err}");
    err
}

/// `reproduce`'s flags for one tiny T5 run on Process-50, one job on one thread, into `out`.
fn one_t5_run(out: &str) -> Vec<&str> {
    let row = "--tasks process50 --biases t5 --seeds 1 --quiet --jobs 1 --threads 1";
    let mut flags: Vec<&str> = row.split(' ').collect();
    flags.extend(["--out", out, "--train-flags", TINY]);
    flags
}

#[test]
fn merge_never_replaces_reports_with_less() {
    let root = tmp("merge-guard");
    let r = root.to_str().unwrap();
    let flags = one_t5_run(r);
    run(env!("CARGO_BIN_EXE_reproduce"), &flags);
    let table = root.join("table.md");
    let before = std::fs::read(&table).unwrap();
    let record = root.join("runs/process50-t5-s1/record.json");
    let good = std::fs::read(&record).unwrap();
    let merge = || {
        Command::new(env!("CARGO_BIN_EXE_merge"))
            .arg(r)
            .output()
            .unwrap()
    };
    // A record that cannot be read is named; the reports stay as they were.
    std::fs::write(&record, &good[..good.len() / 2]).unwrap();
    let out = merge();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("process50-t5-s1/record.json"), "{err}");
    assert_eq!(std::fs::read(&table).unwrap(), before);
    // With no finished run at all, nothing is written either.
    std::fs::remove_file(&record).unwrap();
    let out = merge();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("none of the planned runs has finished"),
        "{err}"
    );
    assert_eq!(std::fs::read(&table).unwrap(), before);
    // A report path of the wrong kind is refused before anything is read or written.
    std::fs::write(&record, &good).unwrap();
    let figures = root.join("figures");
    std::fs::rename(&figures, root.join("figures.kept")).unwrap();
    std::fs::write(&figures, "").unwrap();
    let out = merge();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("figures: is not a folder"));
    std::fs::remove_file(&figures).unwrap();
    std::fs::rename(root.join("figures.kept"), &figures).unwrap();
    // Nor may a job list replace any file that is not a job list.
    let reproduce = env!("CARGO_BIN_EXE_reproduce");
    refused(
        reproduce,
        &[&flags[..], &["--emit-jobs", table.to_str().unwrap()]].concat(),
    );
    assert_eq!(std::fs::read(&table).unwrap(), before);
    // A run of an experiment is not extended in place: it would stop being the planned run.
    let ck = root.join("runs/process50-t5-s1/checkpoint.bin");
    let extend = ["--resume", ck.to_str().unwrap(), "--epochs", "3"];
    let err = refused(env!("CARGO_BIN_EXE_train"), &extend);
    assert!(
        err.contains("planned with 1 epochs") && err.contains("-longer"),
        "{err}"
    );
    assert_eq!(std::fs::read(&record).unwrap(), good);
    // Another experiment planning one of these run ids with other settings is refused.
    let other = "--epochs 2 --d-model 8 --heads 2 --ffn 8";
    let ablate = ["--tasks", "process50", "--seeds", "1", "--out", r, "--plan"];
    let err = refused(
        env!("CARGO_BIN_EXE_ablate"),
        &[&ablate[..], &["--train-flags", other]].concat(),
    );
    assert!(
        err.contains("plan-reproduce.json") && err.contains("process50-t5-s1"),
        "{err}"
    );
    // A cost estimate writes no plan, and a job list may not replace the plan.
    let plan = root.join("plan-reproduce.json");
    let kept = std::fs::read(&plan).unwrap();
    refused(
        reproduce,
        &[&flags[..], &["--emit-jobs", plan.to_str().unwrap()]].concat(),
    );
    assert_eq!(std::fs::read(&plan).unwrap(), kept);
    let fresh = tmp("merge-guard-plan");
    let f = fresh.to_str().unwrap();
    let mut dry = one_t5_run(f);
    dry.push("--plan");
    run(env!("CARGO_BIN_EXE_reproduce"), &dry);
    assert!(!fresh.join("plan-reproduce.json").exists());
    run(env!("CARGO_BIN_EXE_merge"), &[r]);
    assert_eq!(std::fs::read(&table).unwrap(), before);
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&fresh);
}

#[test]
fn a_changed_plan_does_not_replace_earlier_results() {
    let root = tmp("replan");
    let r = root.to_str().unwrap();
    let args = |flags: &'static str| {
        vec![
            "--tasks",
            "process50",
            "--biases",
            "at5",
            "--seeds",
            "1",
            "--train-flags",
            flags,
            "--out",
            r,
            "--quiet",
        ]
    };
    run(env!("CARGO_BIN_EXE_reproduce"), &args(TINY));
    let files = [
        "plan-reproduce.json",
        "table.md",
        "runs/process50-at5-s1/record.json",
    ];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(root.join(f)).unwrap())
        .collect();
    // The same command again reuses the run; other --train-flags would replace it: refused.
    run(env!("CARGO_BIN_EXE_reproduce"), &args(TINY));
    let out = Command::new(env!("CARGO_BIN_EXE_reproduce"))
        .args(args("--epochs 2 --d-model 8 --heads 2 --ffn 8"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("plan-reproduce.json") && err.contains("process50-at5-s1"),
        "{err}"
    );
    // Without the plan file the run's record still guards it.
    std::fs::rename(root.join(files[0]), root.join("plan.bak")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reproduce"))
        .args(args("--epochs 2 --d-model 8 --heads 2 --ffn 8"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("runs/process50-at5-s1/record.json"), "{err}");
    std::fs::rename(root.join("plan.bak"), root.join(files[0])).unwrap();
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(root.join(f)).unwrap(), b, "{f} changed");
    }
}

#[test]
fn an_interrupted_reproduce_says_how_to_continue() {
    let root = tmp("sigint");
    let r = root.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reproduce"))
        .args([
            "--tasks",
            "process50",
            "--biases",
            "t5",
            "--seeds",
            "1",
            "--jobs",
            "1",
            "--train-flags",
            "--epochs 100000 --d-model 8 --heads 2 --ffn 8",
            "--out",
            r,
            "--quiet",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first checkpoint, so there is something to continue from.
    let ck = root.join("runs/process50-t5-s1/checkpoint.bin");
    let start = std::time::Instant::now();
    while !ck.exists() {
        if start.elapsed().as_secs() > 120 {
            let _ = child.kill();
            panic!("no checkpoint after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("stopped") && err.contains("runs") && err.contains("again"),
        "{err}"
    );
    assert!(at5::train::Trainer::from_checkpoint(&ck).is_ok());
}

#[test]
fn plan_counts_the_work_and_trains_nothing() {
    let root = tmp("plan");
    let r = root.to_string_lossy().to_string();
    let out = run(
        env!("CARGO_BIN_EXE_reproduce"),
        &[
            "--plan",
            "--out",
            &r,
            "--tasks",
            "adding-100",
            "--biases",
            "t5,at5",
            "--seeds",
            "3",
            "--train-flags",
            "--epochs 2 --d-model 8 --heads 2",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // 1000 training examples at batch 64: 16 steps an epoch, 2 epochs, 3 runs.
    for want in [
        "| adding-100 | t5 | 3 (3) | 96 |",
        "| adding-100 | at5 | 3 (3) | 96 |",
        "total:",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert!(!root.join("runs").exists(), "a plan trains nothing");
}

#[test]
fn sweep_takes_the_lag_length_and_refuses_a_lag_beyond_it() {
    let root = tmp("laglen");
    let r = root.to_string_lossy().to_string();
    let args = |ranges: &'static str| {
        vec![
            "--task",
            "lagk",
            "--ranges",
            ranges,
            "--biases",
            "t5",
            "--lag-len",
            "16",
            "--out",
            r.as_str(),
            "--emit-jobs",
        ]
    };
    let jobs = root.join("jobs.txt");
    let mut a = args("2,15");
    a.push(jobs.to_str().unwrap());
    run(env!("CARGO_BIN_EXE_sweep"), &a);
    let text = std::fs::read_to_string(&jobs).unwrap();
    assert!(text.contains("--seq-len 16 --lag 15"), "{text}");
    let mut a = args("16");
    a.push(jobs.to_str().unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(&a)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn init_study_runs_a_tiny_row_and_prints_its_scaling_table() {
    let root = tmp("init");
    let r = root.to_str().unwrap();
    let out = run(
        env!("CARGO_BIN_EXE_init-study"),
        &[
            "--tasks",
            "process50",
            "--seeds",
            "1",
            "--train-flags",
            TINY,
            "--out",
            r,
            "--quiet",
        ],
    );
    let md = std::fs::read_to_string(root.join("init-study.md")).unwrap();
    for row in [
        "process50 / at5-paper",
        "process50 / at5-alive",
        "process50 / t5",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    svg(&root.join("figures/init-study-dev.svg"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("solved"));
    let out = run(
        env!("CARGO_BIN_EXE_init-study"),
        &["--scaling", "--seeds", "1"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("‖∇ T5 table‖") && text.contains("paper, std 0.01"),
        "{text}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_init-study"))
        .args(["--lag-epochs", "0", "--out", r])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn buckets_prints_t5_beside_f_and_refuses_bad_flags() {
    let exe = env!("CARGO_BIN_EXE_buckets");
    let out = Command::new(exe)
        .args(["--len", "20", "--max-distance", "16", "--distances", "2,8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // offsets 0 ..= -19, T5's exact buckets first, f = 1 - exp(-m/d)
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| -") && !l.starts_with("| ---"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 20, "{text}");
    assert_eq!(rows[3], ["-3", "3", "0.777", "0.313"]);
    assert_eq!(
        rows[19][1], "15",
        "beyond max_distance: the last bucket of the direction"
    );
    for bad in [
        vec!["--lag", "32"],
        vec!["--distances", "0"],
        vec!["--num-buckets", "2"],
        vec!["--len", "1"],
    ] {
        let out = Command::new(exe).args(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{bad:?}: {err}");
    }
}
