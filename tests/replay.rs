//! `train --config`: a run record's config replays its run, bit for bit (timings aside).
use serde_json::Value;
use std::path::PathBuf;

mod common;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-replay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn train(args: &[&str]) -> std::process::Output {
    common::bin(env!("CARGO_BIN_EXE_train"))
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
    // A hand-written config with a misspelled field, at the top and nested: serde would skip
    // it and run without the setting.
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let config = record["config"].clone();
    let mut top = config.clone();
    top["patiense"] = 3.into();
    let mut nested = config.clone();
    nested["model"]["dropout"]["inptu"] = 0.1.into();
    let (top_file, nested_file) = (dir.join("top.json"), dir.join("nested.json"));
    std::fs::write(&top_file, top.to_string()).unwrap();
    std::fs::write(&nested_file, nested.to_string()).unwrap();
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["--config", top_file.to_str().unwrap(), "--out", "x"],
            "unknown field `patiense`",
        ),
        (
            vec!["--config", nested_file.to_str().unwrap(), "--out", "x"],
            "unknown field `model.dropout.inptu`",
        ),
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

#[test]
fn every_family_and_setting_reads_back_from_a_hand_written_config() {
    // The unknown-field check must not refuse a field the config has: every family on every
    // task under both presets, and the optional settings given, read back as themselves.
    let dir = tmp("configs");
    let tasks = ["reber", "process50", "adding", "lagk"];
    for (t, task) in tasks.iter().enumerate() {
        for family in at5::position::FAMILIES {
            for preset in ["quick", "paper"] {
                let mut flags: Vec<String> = ["--task", task, "--bias", family, "--preset", preset]
                    .map(String::from)
                    .to_vec();
                flags.extend(["--patience", "3", "--data-seed", "7"].map(String::from));
                if family.starts_with("at5") {
                    flags.extend(["--at5-init", "alive"].map(String::from));
                }
                let cfg = at5_app::cli::parse_run_flags(&flags)
                    .and_then(|r| r.resolve())
                    .unwrap_or_else(|e| panic!("{flags:?}: {e}"));
                let file = dir.join(format!("{t}-{family}-{preset}.json"));
                std::fs::write(&file, serde_json::to_string(&cfg).unwrap()).unwrap();
                let back = at5::train::read_config(&file).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(back, cfg, "{flags:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
