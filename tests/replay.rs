//! `train --config`: a run record's config replays its run, bit for bit (timings aside).
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-replay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn train(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .args(args)
        .output()
        .expect("train runs")
}

/// The parts of a record that the run decides (not its timings or later-added diagnostics).
fn outcome(rec: &Value) -> Value {
    let epochs: Vec<Value> = rec["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            serde_json::json!({
                "epoch": e["epoch"], "train_loss": e["train_loss"], "dev": e["dev"],
                "test": e["test"], "alpha": e["alpha"], "beta": e["beta"],
            })
        })
        .collect();
    serde_json::json!({
        "config": rec["config"], "model": rec["model"], "status": rec["status"],
        "best": rec["best"], "steps": rec["steps"], "num_params": rec["num_params"],
        "epochs": epochs,
    })
}

#[test]
fn a_committed_quick_record_replays_bit_for_bit() {
    let all: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string("results/quick/results.json").unwrap())
            .unwrap();
    let committed = all
        .iter()
        .find(|r| r["task"] == "adding100" && r["bias"] == "alibi" && r["seed"] == 2)
        .expect("the quick run's adding-100 ALiBi seed 2");
    let dir = tmp("quick");
    let file = dir.join("record.json");
    std::fs::write(&file, serde_json::to_string(committed).unwrap()).unwrap();
    let out = dir.join("again");
    let o = train(&[
        "--config",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("record.json")).unwrap()).unwrap();
    assert_eq!(outcome(&again), outcome(committed));
}

#[test]
fn a_fresh_record_replays_and_config_refuses_what_it_cannot_take() {
    let dir = tmp("fresh");
    let first = dir.join("first");
    let flags = [
        "--task",
        "lagk",
        "--lag",
        "3",
        "--bias",
        "at5",
        "--at5-init",
        "alive",
        "--epochs",
        "2",
        "--d-model",
        "8",
        "--heads",
        "2",
        "--quiet",
        "--threads",
        "1",
    ];
    let o = train(&[&flags[..], &["--out", first.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rec = first.join("record.json");
    let second = dir.join("second");
    let o = train(&[
        "--config",
        rec.to_str().unwrap(),
        "--out",
        second.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |p: PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p.join("record.json")).unwrap()).unwrap()
    };
    assert_eq!(outcome(&read(second)), outcome(&read(first)));

    // A run flag beside --config, a file that is not a config, no --out: one line, exit 2.
    let bad_json = dir.join("bad.json");
    std::fs::write(&bad_json, "{\"lr\": 1}").unwrap();
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec![
                "--config",
                rec.to_str().unwrap(),
                "--lr",
                "1e-3",
                "--out",
                "x",
            ],
            "--lr cannot be given with --config",
        ),
        (
            vec!["--config", bad_json.to_str().unwrap(), "--out", "x"],
            "not a run config or run record",
        ),
        (vec!["--config", rec.to_str().unwrap()], "give --out"),
    ];
    for (args, want) in cases {
        let o = train(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
