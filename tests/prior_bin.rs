//! The `prior` binary on a checkpoint trained here: its figures, summary and exit codes.
use at5::data::{LagKConfig, TaskConfig, TaskKind};
use at5::nn::{BiasScope, Dropouts, PooledHead, Pooling};
use at5::train::{self, ModelSpec, TaskSource, TrainConfig, Trainer, bias_for, pooled_query};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-prior-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One epoch of a tiny lag-3 model with the given bias, written to `dir`.
fn train_tiny(bias: &str, dir: &Path) {
    train_tiny_for(bias, dir, 1, &[]);
}

/// `epochs` epochs of the tiny lag-3 model, keeping snapshots of the given epochs.
fn train_tiny_for(bias: &str, dir: &Path, epochs: usize, snapshots: &[usize]) {
    let task = LagKConfig {
        seq_len: 10,
        lag: 3,
        vocab: 6,
        train: 200,
        dev: 50,
        test: 50,
        training_nums: 200,
    };
    let dropout = Dropouts::NONE;
    let cfg = TrainConfig {
        task: TaskSource::Generated {
            config: TaskConfig::LagK(task),
            seed: 1,
        },
        model: ModelSpec {
            d_model: 16,
            heads: 2,
            ffn: 32,
            layers: 1,
            bias: bias_for(bias, TaskKind::LagK, 10, (dropout.input, false)).unwrap(),
            bias_scope: BiasScope::Shared,
            dropout,
            head: PooledHead::default(),
            unbiased_heads: Vec::new(),
        },
        lr: 3e-3,
        batch: 32,
        epochs,
        seed: 5,
        patience: None,
        whole_graph: false,
    };
    train::run_with_snapshots(Trainer::new(cfg).unwrap(), dir, snapshots, |_| {}).unwrap();
}

fn prior(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prior"))
        .args(args)
        .output()
        .expect("run prior")
}

fn is_svg(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.starts_with("<svg"))
}

#[test]
fn at5_checkpoint_gives_figures_and_a_summary() {
    let dir = tmp("at5");
    train_tiny("at5", &dir);
    let ck = dir.join(train::CHECKPOINT);
    let out = prior(&["--checkpoint", ck.to_str().unwrap(), "--example", "3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figs = dir.join("prior");
    let mut names = vec![
        "prior_by_offset.svg".to_string(),
        "per_head.svg".into(),
        "per_head_inverse.svg".into(),
        "bias_grad_norms.svg".into(),
        "prior_entropy.svg".into(),
        "dead_units.svg".into(),
    ];
    for h in 0..2 {
        for what in ["prior", "context", "posterior"] {
            names.push(format!("layer0_head{h}_{what}.svg"));
        }
    }
    for n in &names {
        assert!(is_svg(&figs.join(n)), "{n} missing or not an SVG");
    }
    assert!(text.contains("prior of query 9"), "{text}");
    for col in ["mode offset", "90% radius", "mean KL", "1/alpha", "1/beta"] {
        assert!(text.contains(col), "no {col} in {text}");
    }
}

#[test]
fn t5_checkpoint_has_no_slopes_and_honours_out_and_record() {
    let dir = tmp("t5");
    train_tiny("t5", &dir);
    let ck = dir.join(train::CHECKPOINT);
    let rec = dir.join(train::RECORD);
    let figs = dir.join("elsewhere");
    let out = prior(&[
        "--checkpoint",
        ck.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
        "--out",
        figs.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(is_svg(&figs.join("prior_by_offset.svg")));
    assert!(is_svg(&figs.join("layer0_head1_posterior.svg")));
    assert!(!figs.join("per_head.svg").exists());
    // The record's diagnostics are drawn for every family.
    assert!(is_svg(&figs.join("bias_grad_norms.svg")));
    assert!(is_svg(&figs.join("prior_entropy.svg")));
    // Dead units are AT5's and AT5-NoB's (T5 has no ReLU).
    assert!(!figs.join("dead_units.svg").exists());
    assert!(!text.contains("alpha"), "{text}");
}

#[test]
fn snapshots_give_the_prior_by_epoch_and_a_comparison() {
    let dir = tmp("snap");
    train_tiny_for("at5", &dir, 2, &[0, 2]);
    let snaps = train::list_snapshots(&dir).unwrap();
    assert_eq!(
        snaps,
        vec![train::snapshot_path(&dir, 0), train::snapshot_path(&dir, 2)]
    );
    let epochs: Vec<usize> = snaps
        .iter()
        .map(|s| Trainer::from_checkpoint(s).unwrap().state.epoch)
        .collect();
    assert_eq!(
        epochs,
        vec![0, 2],
        "a snapshot holds the state of its epoch"
    );
    // The last snapshot is the run's final checkpoint, bit for bit.
    assert_eq!(
        std::fs::read(&snaps[1]).unwrap(),
        std::fs::read(dir.join(train::CHECKPOINT)).unwrap()
    );

    let other = tmp("snap-t5");
    train_tiny("t5", &other);
    let ck = dir.join(train::CHECKPOINT);
    let ck_t5 = other.join(train::CHECKPOINT);
    let out = prior(&[
        "--checkpoint",
        ck.to_str().unwrap(),
        "--by-epoch",
        "--compare",
        ck_t5.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_epoch = std::fs::read_to_string(dir.join("prior/prior_by_epoch.svg")).unwrap();
    assert!(by_epoch.starts_with("<svg"));
    for label in ["epoch 0", "epoch 2", "head 0", "head 1"] {
        assert!(by_epoch.contains(label), "prior_by_epoch.svg lacks {label}");
    }
    let compared = std::fs::read_to_string(dir.join("prior/priors_compared.svg")).unwrap();
    for label in ["at5, epoch 2", "t5, epoch 1"] {
        assert!(
            compared.contains(label),
            "priors_compared.svg lacks {label}"
        );
    }

    // Without snapshots, --by-epoch says how to get them.
    let out = prior(&["--checkpoint", ck_t5.to_str().unwrap(), "--by-epoch"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--snapshots"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let dir = tmp("bad");
    train_tiny("alibi", &dir);
    let ck = dir.join(train::CHECKPOINT);
    let bytes = std::fs::read(&ck).unwrap();
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let missing = dir.join("missing.json");
    let nope = dir.join("nope.bin");
    // Another run's record would draw its slopes as this checkpoint's.
    let other = dir.join("other");
    train_tiny("t5", &other);
    let other_record = other.join(train::RECORD);
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec![
                "--checkpoint",
                ck.to_str().unwrap(),
                "--record",
                other_record.to_str().unwrap(),
            ],
            "the record of another run",
        ),
        (
            vec!["--checkpoint", ck.to_str().unwrap(), "--kl-examples", "0"],
            "--kl-examples",
        ),
        (vec!["--checkpoint", cut.to_str().unwrap()], "truncated"),
        (vec!["--checkpoint", nope.to_str().unwrap()], "nope.bin"),
        (
            vec!["--checkpoint", ck.to_str().unwrap(), "--example", "50"],
            "--example 50",
        ),
        (
            vec![
                "--checkpoint",
                ck.to_str().unwrap(),
                "--record",
                missing.to_str().unwrap(),
            ],
            "missing.json",
        ),
    ];
    for (args, want) in cases {
        let out = prior(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn the_pooled_query_follows_the_pooling() {
    assert_eq!(pooled_query(Pooling::Last, 10), 9);
    assert_eq!(pooled_query(Pooling::First, 10), 0);
    assert_eq!(pooled_query(Pooling::Mean, 10), 5);
}

#[test]
fn explain_agrees_with_the_model_and_the_tape_and_refuses_what_it_cannot_follow() {
    let dir = tmp("explain");
    train_tiny_for("at5", &dir, 3, &[]);
    let ckpt = dir.join("checkpoint.bin");
    let trainer = Trainer::from_checkpoint(&ckpt).unwrap();
    // every offset of both directions, every head: the hand computation in f64 matches the
    // model's bias, prior and posterior and the tape's d ln prior / d slope parameter
    for n in [-9, -3, -1, 0] {
        for head in 0..2 {
            let e = train::explain_offset(&trainer, Some(head), n, 0).unwrap();
            assert!(e.worst_mismatch < 1e-4, "n = {n}, head {head}: {}", e.text);
            assert!(e.text.contains(&format!("offset n = {n}")), "{}", e.text);
        }
    }
    // the default head is the one whose prior at n is largest
    let auto = train::explain_offset(&trainer, None, -3, 0).unwrap();
    let q = pooled_query(trainer.model.config.pooling, trainer.data.max_len);
    let rows = trainer
        .model
        .prior_row(&trainer.store, trainer.data.max_len, q);
    let best = (0..2)
        .max_by(|&a, &b| rows[a][q - 3].total_cmp(&rows[b][q - 3]))
        .unwrap();
    assert!(
        auto.text.contains(&format!("head {best},")),
        "{}",
        auto.text
    );

    let out = prior(&[
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--explain",
        "-3",
        "--head",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "f(n) = 1 - exp(-beta |n|)",
        "prior(n) =",
        "posterior(n) =",
        "d ln prior(n)/dc",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    assert!(!dir.join("prior").exists(), "--explain writes no figures");

    let t5 = tmp("explain-t5");
    train_tiny("t5", &t5);
    let t5_ckpt = t5.join("checkpoint.bin");
    for (ck, args) in [
        (&ckpt, vec!["--explain", "5"]),
        (&ckpt, vec!["--explain", "-1", "--head", "7"]),
        (&ckpt, vec!["--head", "1"]),
        (&t5_ckpt, vec!["--explain", "-3"]),
    ] {
        let mut all = vec!["--checkpoint", ck.to_str().unwrap()];
        all.extend(args.iter().copied());
        let out = prior(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{all:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{all:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&t5);
}
