//! The `train` binary: help, exit code 2 with one line for impossible flags, a short run, resume.
use std::process::Command;

fn train(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .args(args)
        .output()
        .expect("train runs")
}

#[test]
fn help_works() {
    let out = train(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--task",
        "--bias",
        "--seq-len",
        "--lag",
        "--resume",
        "--preset",
        "--data-dir",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn impossible_flags_exit_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--task", "lagk", "--bias", "nope"], "unknown bias"),
        (&["--task", "lagk", "--heads", "0"], "heads"),
        (
            &["--task", "lagk", "--d-model", "30", "--heads", "4"],
            "multiple of heads",
        ),
        (&["--task", "lagk", "--seq-len", "1"], "seq-len"),
        (&["--task", "lagk", "--l1", "0"], "l1"),
        (
            &["--task", "reber", "--data-dir", "/nonexistent/at5"],
            "data-dir",
        ),
        (&["--task", "sorting"], "unknown task"),
        (&["--bias", "t5"], "--task is required"),
        (&["--task", "lagk", "--preset", "huge"], "preset"),
        (&["--task", "lagk", "--lag", "16", "--seq-len", "16"], "lag"),
        (
            &["--task", "lagk", "--epochs", "3", "--snapshots", "0,4"],
            "--snapshots 4",
        ),
    ];
    for (args, what) in cases {
        let out = train(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_short_run_writes_its_record_and_resumes() {
    let dir = std::env::temp_dir().join(format!("at5-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let common = [
        "--task",
        "lagk",
        "--lag",
        "2",
        "--bias",
        "at5",
        "--d-model",
        "16",
        "--quiet",
    ];
    let mut args = common.to_vec();
    args.extend(["--epochs", "1", "--out", d, "--threads", "1"]);
    let out = train(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("record.json")).unwrap()).unwrap();
    assert_eq!(rec["status"], "completed");
    assert_eq!(rec["epochs"].as_array().unwrap().len(), 1);
    assert!(
        rec["epochs"][0]["alpha"].is_array(),
        "AT5 slopes are recorded"
    );

    let ck = dir.join("checkpoint.bin");
    let out = train(&["--resume", ck.to_str().unwrap(), "--epochs", "2", "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("record.json")).unwrap()).unwrap();
    assert_eq!(rec["epochs"].as_array().unwrap().len(), 2);

    // A resumed run keeps its checkpoint's config: other run flags are refused, not ignored.
    let c = ck.to_str().unwrap();
    for (args, what) in [
        (vec!["--resume", c, "--d-model", "32"], "--d-model"),
        (vec!["--resume", c, "--bias", "t5"], "--bias"),
        (vec!["--resume", c, "--seed", "1"], "--seed"),
        (vec!["--resume", c, "--epochs", "1"], "already trained 2"),
    ] {
        refused(&args, &[what]);
    }
    let rec2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("record.json")).unwrap()).unwrap();
    assert_eq!(rec, rec2, "a refused resume leaves the record as it was");

    let bytes = std::fs::read(&ck).unwrap();
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
    let out = train(&["--resume", cut.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("truncated") && err.contains("cut.bin"),
        "{err}"
    );
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("at5-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Exit code 2, one line containing every one of `what`, no panic, and no checkpoint in `out`.
fn refused(args: &[&str], what: &[&str]) -> String {
    let out = train(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for w in what {
        assert!(err.contains(w), "{args:?}: `{w}` not in {err}");
    }
    if let Some(i) = args.iter().position(|a| *a == "--out") {
        let ck = std::path::Path::new(args[i + 1]).join("checkpoint.bin");
        assert!(!ck.exists(), "{args:?} wrote {}", ck.display());
    }
    err
}

fn write_splits(dir: &std::path::Path, train: &str, dev: &str, test: &str) {
    for (f, text) in [("train.txt", train), ("dev.txt", dev), ("test.txt", test)] {
        std::fs::write(dir.join(f), text).unwrap();
    }
}

#[test]
fn bad_data_files_exit_2_naming_the_file_and_line() {
    let root = tmp("data");
    let (data, out) = (root.join("data"), root.join("out"));
    std::fs::create_dir_all(&data).unwrap();
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let good = "0.5_-1 0.25_1 0.1_1 0_-1 0.5875\n0.1_-1 0.2_1 0.3_1 0_-1 0.625\n";
    let adding = ["--task", "adding", "--data-dir", d, "--out", o, "--quiet"];
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "0.5_-1 0.25_1 0.1_1 0_-1 0.5875\n0.1_-1 0.2_1 0.3_1 0_-1 NaN\n",
            good,
            good,
            &["train.txt:2:", "label \"NaN\"", "finite"],
        ),
        (
            good,
            "inf_1 0.25_1 0.1_1 0_-1 0.5\n",
            good,
            &["dev.txt:1:", "inf_1", "value"],
        ),
        (
            good,
            good,
            "0.5_-1 0.25_7 0.1_1 0_-1 0.5\n",
            &["test.txt:1:", "0.25_7", "marker"],
        ),
        (
            good,
            good,
            "0.5_-1 0.25_1 0.1_1 0_-1 1e39\n",
            &["test.txt:1:", "1e39"],
        ),
    ];
    for (train_txt, dev, test, what) in cases {
        write_splits(&data, train_txt, dev, test);
        refused(&adding, what);
    }

    let lagk = ["--task", "lagk", "--data-dir", d, "--out", o, "--quiet"];
    write_splits(&data, "1 2 3 2\n", "2 1 99999999999 1\n", "1 1 2 1\n");
    refused(&lagk, &["dev.txt:1:", "99999999999", "token id"]);
    // A 1.2M-token line loads, but its attention grid cannot fit (Process-50 pools the mean,
    // so every row is computed): refused with the estimate, naming the line, before any
    // allocation of that size.
    let process = [
        "--task",
        "process50",
        "--data-dir",
        d,
        "--out",
        o,
        "--quiet",
    ];
    let long: Vec<&str> = (0..1_200_000)
        .map(|i| if i % 2 == 0 { "0" } else { "1" })
        .collect();
    write_splits(
        &data,
        &format!(
            "0 1 1
{} 1
",
            long.join(" ")
        ),
        "0 1 0
",
        "1 1 1
",
    );
    refused(
        &process,
        &[
            "not enough memory",
            "needs about",
            "train.txt:2",
            "1200000 positions",
        ],
    );
}

#[test]
fn sizes_that_cannot_fit_exit_2_with_the_estimate() {
    let root = tmp("sizes");
    let o = root.join("out");
    let o = o.to_str().unwrap();
    let e = refused(
        &["--task", "lagk", "--seq-len", "4000000000", "--out", o],
        &["not enough memory", "needs about", "--seq-len"],
    );
    assert!(
        e.contains("available") || e.contains("could not be read"),
        "{e}"
    );
    refused(
        &["--task", "lagk", "--d-model", "1000000", "--out", o],
        &["not enough memory", "parameters", "--d-model"],
    );
    refused(
        &[
            "--task",
            "lagk",
            "--bias",
            "t5",
            "--num-buckets",
            "100000000000",
            "--out",
            o,
        ],
        &["not enough memory", "--num-buckets"],
    );
    let start = std::time::Instant::now();
    refused(
        &["--task", "lagk", "--threads", "100000", "--out", o],
        &["--threads 100000", "per core"],
    );
    assert!(
        start.elapsed().as_secs() < 10,
        "refusing --threads took {:?}",
        start.elapsed()
    );
}

#[test]
fn a_bad_output_folder_fails_before_training() {
    let root = tmp("outdir");
    let file = root.join("a-file");
    std::fs::write(&file, "keep").unwrap();
    let under = file.join("run");
    for out in [under.to_str().unwrap(), file.to_str().unwrap()] {
        let e = refused(
            &["--task", "lagk", "--out", out, "--quiet"],
            &["--out", out],
        );
        assert!(!e.contains("checkpoint"), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");

    // A read-only folder (where permissions bind: not for root).
    let ro = root.join("read-only");
    std::fs::create_dir_all(&ro).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "").is_err() {
        let r = ro.to_str().unwrap();
        let e = refused(
            &["--task", "lagk", "--out", r, "--quiet"],
            &["--out", r, "cannot write"],
        );
        assert!(!e.contains("checkpoint"), "{e}");
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn flags_that_would_be_ignored_exit_2() {
    let root = tmp("ignored");
    // A folder holding an earlier run's record: a refused run leaves it as it was.
    std::fs::write(root.join("record.json"), "earlier").unwrap();
    let o = root.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--task", "lagk", "--bias", "at5", "--num-buckets", "8"],
            &["--num-buckets", "t5"],
        ),
        (
            &["--task", "lagk", "--bias", "at5", "--max-distance", "8"],
            &["--max-distance"],
        ),
        (
            &["--task", "lagk", "--bias", "t5", "--slope-min", "0.5"],
            &["--slope-min", "at5"],
        ),
        (&["--task", "lagk", "--bias", "t5", "--l1", "4"], &["--l1"]),
        (
            &["--task", "lagk", "--bias", "alibi", "--init-std", "0.1"],
            &["--init-std"],
        ),
        (
            &[
                "--task",
                "lagk",
                "--bias",
                "t5",
                "--at5-dropout-mask",
                "cell",
            ],
            &["--at5-dropout-mask"],
        ),
        (
            &["--task", "reber", "--seq-len", "50"],
            &["--seq-len", "reber"],
        ),
        (&["--task", "adding", "--lag", "3"], &["--lag", "lagk"]),
        (&["--task", "process50", "--lag", "3"], &["--lag"]),
        (&["--task", "lagk", "--slope-min=-1"], &["slope-min", "-1"]),
        (&["--task", "lagk", "--slope-min", "0"], &["slope-min"]),
        (
            &["--task", "lagk", "--bias", "none", "--bias-scope", "first"],
            &["--bias-scope"],
        ),
        (
            &["--task", "lagk", "--data-dir", o, "--lag", "2"],
            &["--lag", "--data-dir"],
        ),
        (
            &["--task", "lagk", "--data-dir", o, "--data-seed", "3"],
            &["--data-seed"],
        ),
    ];
    for (args, what) in cases {
        let mut a = args.to_vec();
        a.extend(["--out", o, "--quiet"]);
        refused(&a, what);
    }
    assert_eq!(
        std::fs::read_to_string(root.join("record.json")).unwrap(),
        "earlier"
    );
}

#[test]
fn a_diverging_run_names_no_checkpoint_that_does_not_exist() {
    let dir = tmp("diverge");
    let o = dir.join("run");
    let out = train(&[
        "--task",
        "lagk",
        "--lr",
        "1e30",
        "--quiet",
        "--out",
        o.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("non-finite loss"), "{err}");
    assert!(!o.join("checkpoint.bin").exists());
    assert!(err.contains("no checkpoint was written"), "{err}");
}

#[test]
fn continue_leaves_a_finished_run_alone() {
    let dir = std::env::temp_dir().join(format!("at5-cli-continue-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let args = [
        "--task",
        "lagk",
        "--lag",
        "2",
        "--bias",
        "t5",
        "--d-model",
        "8",
        "--heads",
        "2",
        "--epochs",
        "1",
        "--out",
        d,
        "--continue",
        "--quiet",
        "--threads",
        "1",
    ];
    let first = train(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let record = std::fs::read(dir.join("record.json")).unwrap();
    let again = train(&args);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success() && text.contains("already finished"),
        "{text}"
    );
    assert_eq!(std::fs::read(dir.join("record.json")).unwrap(), record);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A one-epoch lag-2 run of a tiny model, quiet, on one thread, then `extra` (--bias, --out).
fn tiny_lagk<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let base = "--task lagk --lag 2 --d-model 8 --heads 2 --epochs 1 --quiet --threads 1";
    base.split(' ').chain(extra.iter().copied()).collect()
}

#[test]
fn a_folder_holding_another_run_is_never_overwritten() {
    let dir = tmp("holds");
    let out = dir.join("run");
    let o = out.to_str().unwrap();
    let with =
        |extra: &[&'static str]| -> Vec<&str> { tiny_lagk(&[extra, &["--out", o]].concat()) };
    let first = train(&with(&["--bias", "at5"]));
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let record = std::fs::read(out.join("record.json")).unwrap();
    let checkpoint = std::fs::read(out.join("checkpoint.bin")).unwrap();
    // The same command again finds its run finished and leaves it as it is; an interrupted one
    // is not restarted over its checkpoint but pointed at --continue.
    let again = train(&with(&["--bias", "at5"]));
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success() && text.contains("already finished"),
        "{text}"
    );
    let mut running: serde_json::Value = serde_json::from_slice(&record).unwrap();
    running["status"] = "running".into();
    std::fs::write(out.join("record.json"), running.to_string()).unwrap();
    let run = train(&with(&["--bias", "at5"]));
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("already holds a run") && err.contains("--continue"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(out.join("checkpoint.bin")).unwrap(),
        checkpoint
    );
    std::fs::write(out.join("record.json"), &record).unwrap();
    // Another family plainly and with --continue, another seed: each refused with one line
    // naming the folder and what it holds, before anything is written.
    for (args, what) in [
        (with(&["--bias", "t5"]), "with at5"),
        // The message names the first setting that differs.
        (
            with(&["--bias", "t5", "--continue"]),
            "model.bias is At5 there, T5 here",
        ),
        (
            with(&["--bias", "at5", "--seed", "2", "--continue"]),
            "seed is 1 there, 2 here",
        ),
    ] {
        let run = train(&args);
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(o) && err.contains(what), "{args:?}: {err}");
    }
    // A checkpoint of another run resumed into the folder is refused too.
    let other = dir.join("other");
    let made = train(&tiny_lagk(&[
        "--bias",
        "alibi",
        "--out",
        other.to_str().unwrap(),
    ]));
    assert!(made.status.success());
    let (code, err) = resume(&other.join("checkpoint.bin"), "2", o);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("with at5") && err.contains("other settings"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("record.json")).unwrap(), record);
    assert_eq!(
        std::fs::read(out.join("checkpoint.bin")).unwrap(),
        checkpoint
    );
    // Its own checkpoint, with more epochs, is the same run extended: allowed.
    let own = out.join("checkpoint.bin");
    let (code, err) = resume(&own, "2", o);
    assert_eq!(code, Some(0), "{err}");
    // Snapshots before the epoch a resume starts at could never be written: refused.
    let own_path = own.to_str().unwrap();
    let snap = ["--resume", own_path, "--epochs", "3", "--snapshots", "1"];
    refused(&snap, &["--snapshots 1", "epoch 2"]);
    // An earlier checkpoint of the same run may not cut the folder's run back to its epoch.
    let early = dir.join("early.bin");
    std::fs::write(&early, &checkpoint).unwrap();
    let record = std::fs::read(out.join("record.json")).unwrap();
    let (code, err) = resume(&early, "2", o);
    assert_eq!(code, Some(2), "{err}");
    let cut = "trained to epoch 2, past the checkpoint's epoch 1";
    assert!(err.contains(cut), "{err}");
    assert_eq!(std::fs::read(out.join("record.json")).unwrap(), record);
    // A checkpoint with no record is another run's as far as anyone can tell.
    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy(other.join("checkpoint.bin"), bare.join("checkpoint.bin")).unwrap();
    let (code, err) = resume(&early, "2", bare.to_str().unwrap());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no record"), "{err}");
    // Rerunning a command with --snapshots after it resumed asks again for the snapshots it
    // kept: allowed; one it never kept is refused.
    let snapped = dir.join("snapped");
    let s = snapped.to_str().unwrap();
    let made = train(&tiny_lagk(&[
        "--bias",
        "t5",
        "--out",
        s,
        "--snapshots",
        "0,1",
    ]));
    assert!(made.status.success());
    let ck = snapped.join("checkpoint.bin");
    let ck = ck.to_str().unwrap();
    let again = [
        "--resume",
        ck,
        "--epochs",
        "2",
        "--snapshots",
        "0,1,2",
        "--quiet",
    ];
    let run = train(&again);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(snapped.join("snapshots/epoch-0002.bin").is_file());
    std::fs::remove_file(snapped.join("snapshots/epoch-0001.bin")).unwrap();
    refused(
        &["--resume", ck, "--epochs", "3", "--snapshots", "1"],
        &["--snapshots 1", "no snapshot of it"],
    );
    // A resumed budget is checked like a new one.
    let huge = ["--resume", own_path, "--epochs", "18446744073709551615"];
    refused(&huge, &["--epochs 18446744073709551615", "to 1000000"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `train --resume CHECKPOINT --epochs EPOCHS --out OUT --quiet`: its exit code and stderr.
fn resume(checkpoint: &std::path::Path, epochs: &str, out: &str) -> (Option<i32>, String) {
    let ck = checkpoint.to_str().unwrap();
    let run = train(&["--resume", ck, "--epochs", epochs, "--out", out, "--quiet"]);
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

#[test]
fn parse_errors_are_one_line_with_exit_2() {
    for (args, what) in [
        (vec!["--task", "lagk", "--sed", "3"], "--seed"),
        (vec!["--task", "lagk", "--seed", "-1"], "--seed"),
        (
            vec!["--task", "lagk", "--lr", "-1"],
            "lr must be a positive number",
        ),
        (vec!["--task", "lagk", "--lag", "0"], "lag = 0"),
        (
            vec!["--task", "lagk", "--epochs", "18446744073709551615"],
            "epochs must be 1 to",
        ),
        // clap lists the conflicting argument on the lines below its first.
        (
            vec!["--task", "lagk", "--resume", "x", "--config", "y"],
            "'--config",
        ),
    ] {
        let out = train(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(what),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_data_dir_run_is_picked_up_however_its_folder_is_spelled() {
    // The same folder typed relative from two working directories, and through `..`: one run.
    let dir = tmp("spelled");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let good = "0.5_-1 0.25_1 0.1_1 0_-1 0.5875\n0.1_-1 0.2_1 0.3_1 0_-1 0.625\n";
    write_splits(&data, good, good, good);
    let run = |cwd: &std::path::Path, data: &str, out: &str| {
        let args = [
            "--task",
            "adding",
            "--data-dir",
            data,
            "--out",
            out,
            "--d-model",
            "8",
        ];
        Command::new(env!("CARGO_BIN_EXE_train"))
            .current_dir(cwd)
            .args(args)
            .args([
                "--heads",
                "2",
                "--epochs",
                "1",
                "--continue",
                "--quiet",
                "--threads",
                "1",
            ])
            .output()
            .unwrap()
    };
    let first = run(&dir, "data", "out");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = run(&dir.join("sub"), "../data", "../out");
    let text = String::from_utf8_lossy(&again.stdout);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        again.status.success() && text.contains("already finished"),
        "{text}{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_train_says_how_to_resume_and_does() {
    let dir = tmp("sigint");
    let out = dir.join("run");
    let o = out.to_str().unwrap();
    let args = [
        "--task",
        "lagk",
        "--lag",
        "2",
        "--d-model",
        "8",
        "--heads",
        "2",
    ];
    let more = [
        "--epochs",
        "100000",
        "--quiet",
        "--threads",
        "1",
        "--continue",
        "--out",
        o,
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(args)
        .args(more)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first checkpoint, so there is something to resume.
    let ck = out.join("checkpoint.bin");
    let start = std::time::Instant::now();
    while !ck.exists() {
        if start.elapsed().as_secs() > 120 {
            let _ = child.kill();
            panic!("no checkpoint after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let stopped = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(130), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("stopped") && err.contains(o) && err.contains("--continue"),
        "{err}"
    );
    // What it names is there and whole: a checkpoint of at least one finished epoch.
    let t = at5::train::Trainer::from_checkpoint(&ck).unwrap();
    assert!(t.state.epoch >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}
