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
