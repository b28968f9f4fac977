//! Resume checks its data: a fingerprint in the checkpoint refuses edited files, data dirs are
//! stored absolute, and checkpoints written before fingerprints still load and resume.
use at5::data::{LagKConfig, TaskConfig, TaskKind, generate, write_dir};
use at5::train::{DataFingerprint, TaskSource};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-resume-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn train_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .current_dir(dir)
        .args(args)
        .args(["--quiet", "--threads", "1"])
        .output()
        .expect("train runs")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn epochs_in(record: &Path) -> usize {
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    rec["epochs"].as_array().unwrap().len()
}

fn small_lagk() -> TaskConfig {
    TaskConfig::LagK(LagKConfig {
        seq_len: 8,
        lag: 2,
        vocab: 4,
        train: 200,
        dev: 50,
        test: 50,
        training_nums: 200,
    })
}

#[test]
fn a_relative_data_dir_resumes_elsewhere_and_edited_files_are_refused() {
    let root = tmp("files");
    write_dir(&root.join("data"), &generate(&small_lagk(), 3).unwrap()).unwrap();
    let common = ["--d-model", "8", "--heads", "2", "--ffn", "8"];
    let mut args = vec!["--task", "lagk", "--data-dir", "data", "--epochs", "1"];
    args.extend(common);
    args.extend(["--out", "run"]);
    ok(&train_in(&root, &args));
    let ck = root.join("run/checkpoint.bin");
    let c = ck.to_str().unwrap();

    // From another working directory the stored (absolute) data dir still resolves.
    let elsewhere = tmp("elsewhere");
    ok(&train_in(&elsewhere, &["--resume", c, "--epochs", "2"]));
    assert_eq!(epochs_in(&root.join("run/record.json")), 2);

    // One edited label in dev.txt: refused, naming that file, before any training.
    let dev = root.join("data/dev.txt");
    let text = std::fs::read_to_string(&dev).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let (tokens, label) = first.rsplit_once(' ').unwrap();
    let other = if label == "1" { "2" } else { "1" };
    std::fs::write(&dev, format!("{tokens} {other}\n{rest}")).unwrap();
    let out = train_in(&elsewhere, &["--resume", c, "--epochs", "3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(dev.to_str().unwrap()), "{err}");
    assert!(
        err.contains("dev.txt changed") && !err.contains("train.txt") && !err.contains("test.txt"),
        "{err}"
    );
    assert_eq!(
        epochs_in(&root.join("run/record.json")),
        2,
        "nothing trained"
    );
    std::fs::write(&dev, text).unwrap();
    ok(&train_in(&elsewhere, &["--resume", c, "--epochs", "3"]));
}

#[test]
fn checkpoints_without_a_fingerprint_still_resume() {
    // Written by `train` before checkpoints held a data fingerprint (format AT5CKPT1), by each
    // of its four layouts (see checkpoint_v1.rs), all with the flags below.
    let flags: Vec<String> =
        "--task lagk --seq-len 8 --lag 2 --bias at5 --seed 1 --d-model 8 --heads 2 --ffn 8 --epochs 1"
            .split(' ')
            .map(String::from)
            .collect();
    let config = at5_app::cli::parse_run_flags(&flags)
        .unwrap()
        .resolve()
        .unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoint-v1");
    for layout in ["L0", "L1", "L2", "L3"] {
        let dir = tmp(&format!("v1-{layout}"));
        let ck = dir.join("checkpoint.bin");
        std::fs::copy(fixtures.join(format!("{layout}.bin")), &ck).unwrap();
        assert_eq!(&std::fs::read(&ck).unwrap()[..8], b"AT5CKPT1");
        let t =
            at5::train::Trainer::from_checkpoint(&ck).unwrap_or_else(|e| panic!("{layout}: {e}"));
        assert_eq!(t.state.epoch, 1, "{layout}");
        assert_eq!(
            t.config, config,
            "{layout}: the fields added since read as their defaults"
        );
        assert_eq!(
            t.state.history[0].diagnostics.is_some(),
            layout == "L3",
            "{layout}"
        );
        ok(&train_in(
            &dir,
            &["--resume", "checkpoint.bin", "--epochs", "2"],
        ));
        assert_eq!(epochs_in(&dir.join("record.json")), 2, "{layout}");
        // What it writes now is the new format, with the fingerprint.
        assert_eq!(&std::fs::read(&ck).unwrap()[..8], b"AT5CKPT2", "{layout}");
        assert!(
            at5::train::Trainer::from_checkpoint(&ck).is_ok(),
            "{layout}"
        );
    }
}

#[test]
fn the_fingerprint_names_each_changed_split() {
    let data = generate(&small_lagk(), 3).unwrap();
    let fp = DataFingerprint::of(&data);
    assert_eq!(
        fp,
        DataFingerprint::of(&generate(&small_lagk(), 3).unwrap())
    );
    let generated = TaskSource::Generated {
        config: small_lagk(),
        seed: 3,
    };
    assert!(fp.check(&fp, &generated).is_ok());

    let mut other = data.clone();
    other.test.pop();
    let e = fp
        .check(&DataFingerprint::of(&other), &generated)
        .unwrap_err();
    assert!(
        e.contains("the generated test split changed (49 examples instead of 50)")
            && !e.contains("train split")
            && !e.contains("dev"),
        "{e}"
    );

    let mut other = data.clone();
    if let at5::data::Sequence::Tokens(t) = &mut other.train[7].input {
        t[0] = if t[0] == 1 { 2 } else { 1 };
    }
    let files = TaskSource::Files {
        dir: PathBuf::from("/data/lagk"),
        kind: TaskKind::LagK,
    };
    let e = fp.check(&DataFingerprint::of(&other), &files).unwrap_err();
    assert!(e.contains("/data/lagk/train.txt changed"), "{e}");
    assert!(e.contains("restore"), "{e}");
}

#[test]
fn a_non_finite_metric_reads_back_as_nan() {
    // JSON writes NaN and infinities as null: a diverged model's dev loss in a checkpoint's
    // (or a record's) history must not make the whole file unreadable.
    let m: at5::train::Metrics = serde_json::from_str(
        &serde_json::to_string(&at5::train::Metrics {
            loss: f64::INFINITY,
            accuracy: 0.5,
            mse: None,
        })
        .unwrap(),
    )
    .unwrap();
    assert!(m.loss.is_nan() && m.accuracy == 0.5);
}
