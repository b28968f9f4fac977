//! Training: bit-identical resume, checkpoint errors, non-finite losses, and learning smoke tests.
use at5::data::{AddingConfig, LagKConfig, Sequence, TaskConfig, TaskKind};
use at5::nn::{BiasScope, Dropouts, PooledHead};
use at5::position::BiasConfig;
use at5::train::{self, ModelSpec, TaskSource, TrainConfig, Trainer, bias_for};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-train-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lagk(lag: usize, bias: &str, epochs: usize, d_model: usize) -> TrainConfig {
    let task = LagKConfig {
        seq_len: 16,
        lag,
        vocab: 8,
        train: 2000,
        dev: 500,
        test: 500,
        training_nums: 2000,
    };
    let dropout = Dropouts {
        input: 0.0,
        hidden: 0.1,
        attention: 0.1,
    };
    TrainConfig {
        task: TaskSource::Generated {
            config: TaskConfig::LagK(task),
            seed: 1,
        },
        model: ModelSpec {
            d_model,
            heads: 4,
            ffn: 2 * d_model,
            layers: 1,
            bias: bias_for(bias, TaskKind::LagK, 16, (dropout.input, false)).unwrap(),
            bias_scope: BiasScope::Shared,
            dropout,
            head: PooledHead::default(),
            unbiased_heads: Vec::new(),
        },
        lr: 3e-3,
        batch: 64,
        epochs,
        seed: 9,
        patience: None,
        whole_graph: false,
    }
}

#[test]
fn resume_is_bit_identical() {
    let mut cfg = lagk(3, "t5", 4, 16);
    cfg.task = match cfg.task {
        TaskSource::Generated {
            config: TaskConfig::LagK(mut c),
            seed,
        } => {
            (c.train, c.training_nums) = (300, 300);
            TaskSource::Generated {
                config: TaskConfig::LagK(c),
                seed,
            }
        }
        other => other,
    };
    let whole = train::run(Trainer::new(cfg.clone()).unwrap(), &tmp("whole"), |_| {}).unwrap();

    let dir = tmp("parts");
    let mut first = cfg.clone();
    first.epochs = 2;
    train::run(Trainer::new(first).unwrap(), &dir, |_| {}).unwrap();
    let mut resumed = Trainer::from_checkpoint(&dir.join(train::CHECKPOINT)).unwrap();
    assert_eq!(resumed.state.epoch, 2);
    resumed.config.epochs = 4;
    let dir2 = tmp("parts2");
    let parts = train::run(resumed, &dir2, |_| {}).unwrap();
    assert_eq!(parts.steps, whole.steps);
    for (x, y) in whole.epochs.iter().zip(&parts.epochs) {
        assert_eq!((x.train_loss, x.dev, x.test), (y.train_loss, y.dev, y.test));
    }
    assert_eq!(whole.best, parts.best);
}

#[test]
fn resumed_parameters_equal_an_uninterrupted_run() {
    let cfg = lagk(2, "t5", 2, 16);
    let mut a = Trainer::new(cfg.clone()).unwrap();
    a.train_epoch(|_, _, _| {}).unwrap();
    a.train_epoch(|_, _, _| {}).unwrap();

    let dir = tmp("params");
    let mut b = Trainer::new(cfg).unwrap();
    b.train_epoch(|_, _, _| {}).unwrap();
    b.save_checkpoint(&dir.join("ck.bin")).unwrap();
    drop(b);
    let mut b = Trainer::from_checkpoint(&dir.join("ck.bin")).unwrap();
    b.train_epoch(|_, _, _| {}).unwrap();
    assert_eq!(a.store.values(), b.store.values());
    assert_eq!(a.adam, b.adam);
    // Everything but the wall-clock seconds is identical.
    let strip = |h: &[at5::train::EpochRecord]| {
        h.iter()
            .map(|e| (e.epoch, e.train_loss, e.dev, e.test))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&a.state.history), strip(&b.state.history));
}

#[test]
fn bad_checkpoints_are_clear_errors() {
    let dir = tmp("bad");
    let t = Trainer::new(lagk(2, "t5", 1, 16)).unwrap();
    let path = dir.join("ck.bin");
    t.save_checkpoint(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = Trainer::from_checkpoint(&cut).unwrap_err();
    assert!(e.contains("truncated") && e.contains("cut.bin"), "{e}");

    let foreign = dir.join("foreign.bin");
    std::fs::write(&foreign, b"{\"not\": \"a checkpoint\"}").unwrap();
    let e = Trainer::from_checkpoint(&foreign).unwrap_err();
    assert!(e.contains("not an at5 checkpoint"), "{e}");

    let mut flipped = bytes.clone();
    let k = flipped.len() - 10;
    flipped[k] ^= 0x40;
    let bad = dir.join("flipped.bin");
    std::fs::write(&bad, &flipped).unwrap();
    assert!(
        Trainer::from_checkpoint(&bad)
            .unwrap_err()
            .contains("corrupt")
    );

    let e = Trainer::from_checkpoint(&dir.join("missing.bin")).unwrap_err();
    assert!(e.contains("missing.bin"), "{e}");
}

#[test]
fn a_non_finite_loss_stops_the_run_and_keeps_the_last_checkpoint() {
    let dir = tmp("nan");
    let mut cfg = lagk(2, "t5", 3, 16);
    cfg.task = TaskSource::Generated {
        config: TaskConfig::Adding(AddingConfig {
            seq_len: 20,
            train: 300,
            dev: 100,
            test: 100,
            training_nums: 300,
        }),
        seed: 3,
    };
    cfg.model.bias = BiasConfig::from_name("none").unwrap();
    let mut t = Trainer::new(cfg).unwrap();
    t.train_epoch(|_, _, _| {}).unwrap();
    t.save_checkpoint(&dir.join(train::CHECKPOINT)).unwrap();
    let before = std::fs::read(dir.join(train::CHECKPOINT)).unwrap();
    let params = t.store.values().to_vec();
    if let Sequence::Pairs(p) = &mut t.data.train[0].input {
        p[0][0] = f32::NAN;
    }
    let e = train::run(t, &dir, |_| {}).unwrap_err();
    assert!(e.contains("non-finite loss") && e.contains("step"), "{e}");
    let after = std::fs::read(dir.join(train::CHECKPOINT)).unwrap();
    assert_eq!(before, after, "the last good checkpoint was overwritten");
    let resumed = Trainer::from_checkpoint(&dir.join(train::CHECKPOINT)).unwrap();
    assert_eq!(resumed.store.values(), &params[..]);
    let rec: train::RunRecord = at5::report::read_json(&dir.join(train::RECORD)).unwrap();
    assert!(
        rec.status.starts_with("failed: non-finite"),
        "{}",
        rec.status
    );
}

#[test]
fn at5_learns_lag_3_recall() {
    // The label sits 3 slots before the pooled query and tokens are uniform: only a prior
    // peaked at n = -3 solves it, so this checks the soft bucket and MLP learn that shape.
    let rec = train::run(
        Trainer::new(lagk(3, "at5", 13, 32)).unwrap(),
        &tmp("at5lag"),
        |_| {},
    )
    .unwrap();
    let best = rec.best.unwrap();
    assert!(
        best.dev.accuracy >= 0.95,
        "dev accuracy {}",
        best.dev.accuracy
    );
}

fn adding(bias: &str, epochs: usize) -> TrainConfig {
    let mut c = lagk(1, bias, epochs, 32);
    c.task = TaskSource::Generated {
        config: TaskConfig::Adding(AddingConfig {
            seq_len: 20,
            train: 2000,
            dev: 500,
            test: 500,
            training_nums: 2000,
        }),
        seed: 1,
    };
    c.model.bias = bias_for(bias, TaskKind::Adding, 20, (0.0, false)).unwrap();
    c.model.dropout = Dropouts::NONE;
    c
}

#[test]
fn t5_and_at5_beat_the_constant_predictor_on_adding_20() {
    for bias in ["t5", "at5"] {
        let t = Trainer::new(adding(bias, 9)).unwrap();
        // The best constant within the tolerance band: the train median of the targets.
        let mut ys: Vec<f32> = t
            .data
            .train
            .iter()
            .map(|e| e.label.real().unwrap())
            .collect();
        ys.sort_by(f32::total_cmp);
        let c = ys[ys.len() / 2];
        let dev = &t.data.dev;
        let hits = dev
            .iter()
            .filter(|e| (e.label.real().unwrap() - c).abs() <= 0.04)
            .count();
        let constant = hits as f64 / dev.len() as f64;
        let rec = train::run(t, &tmp(&format!("add-{bias}")), |_| {}).unwrap();
        let acc = rec.best.unwrap().dev.accuracy;
        assert!(
            acc >= 0.5 && acc >= 2.5 * constant,
            "{bias}: dev {acc} vs constant {constant}"
        );
    }
}

#[test]
fn t5_learns_lag_3_recall() {
    let rec = train::run(
        Trainer::new(lagk(3, "t5", 8, 32)).unwrap(),
        &tmp("t5lag"),
        |_| {},
    )
    .unwrap();
    let best = rec.best.unwrap();
    assert!(
        best.dev.accuracy >= 0.95,
        "dev accuracy {}",
        best.dev.accuracy
    );
}

#[test]
fn every_epoch_records_the_bias_diagnostics() {
    for bias in ["at5", "t5"] {
        let mut t = Trainer::new(lagk(3, bias, 2, 16)).unwrap();
        let rec = t.train_epoch(|_, _, _| {}).unwrap();
        let d = rec.diagnostics.expect("diagnostics");
        let names: Vec<&str> = d.grad_norms.iter().map(|(n, _)| n.as_str()).collect();
        let want: Vec<String> = t
            .model
            .biases
            .iter()
            .flat_map(|b| b.param_ids())
            .map(|id| t.store.name(id).to_string())
            .collect();
        assert_eq!(names, want, "{bias}");
        // Last-slot pooling: no key lies after the pooled query, so AT5's alpha and its n > 0
        // MLP get exactly zero gradient; everything else moves.
        for (name, g) in &d.grad_norms {
            let frozen = name == "bias.a" || name.starts_with("bias.pos.");
            assert!(g.is_finite() && (*g == 0.0) == frozen, "{bias}: {name} {g}");
        }
        let ln_l = (16f64).ln();
        assert_eq!(d.prior_entropy.len(), 4);
        // At most ln L, up to the f32 rounding of a prior that is nearly uniform at the start.
        assert!(
            d.prior_entropy
                .iter()
                .all(|&e| (0.0..=ln_l + 1e-5).contains(&e)),
            "{bias}: {:?} vs ln 16 = {ln_l}",
            d.prior_entropy
        );
        assert!(d.prior_radius90.iter().all(|&r| r < 16));
        match bias {
            "at5" => {
                let dead = d.dead_units.expect("AT5 reports dead units");
                assert_eq!(dead.len(), 4);
                for u in &dead {
                    for f in u.layer1.iter().chain(&u.layer2) {
                        assert!((0.0..=1.0).contains(f));
                    }
                }
            }
            _ => assert!(d.dead_units.is_none()),
        }
    }
}

#[test]
fn a_unit_that_is_negative_at_every_offset_is_counted_dead() {
    let t = Trainer::new(lagk(3, "at5", 1, 16)).unwrap();
    let mut store = t.store.clone();
    // f(n) ∈ [0, 1): a negative weight and bias keep unit 0 of head 1 below zero everywhere.
    for dir in ["neg", "pos"] {
        for (name, v) in [("w1", -1.0f32), ("b1", -0.5)] {
            let id = store.id(&format!("bias.{dir}.{name}")).unwrap();
            let tensor = store.get_mut(id);
            let l1 = tensor.shape[2];
            tensor.data[l1] = v; // head 1, unit 0
        }
    }
    let dead = t.model.biases[0].dead_units(&store, 16).unwrap();
    let l1 = 15.0;
    assert!(dead[1].layer1.iter().all(|&f| f >= 1.0 / l1), "{dead:?}");
    let before = t.model.biases[0].dead_units(&t.store, 16).unwrap();
    assert!(dead[1].layer1[0] > before[1].layer1[0] || before[1].layer1[0] >= 1.0 / l1);
}
