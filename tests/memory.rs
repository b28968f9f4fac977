//! The memory estimate: above the peak RSS runs were measured at, far below any machine for the
//! presets, and a refusal that names the estimate.
use at5::data::TaskKind;
use at5::train::memory::{DataShape, Hints, MemoryEstimate, check, estimate, human};
use at5::train::{Dial, Preset, TaskSource, TrainConfig, preset_config};

fn lagk(bias: &str, len: usize) -> TrainConfig {
    let dial = Dial {
        seq_len: Some(len),
        lag: None,
    };
    preset_config(TaskKind::LagK, bias, Preset::Quick, dial, 1).unwrap()
}

fn planned(c: &TrainConfig) -> MemoryEstimate {
    let TaskSource::Generated { config, .. } = &c.task else {
        panic!("generated")
    };
    estimate(c, &DataShape::planned(config))
}

const MB: f64 = 1024.0 * 1024.0;

/// A lag-k (or Process-50) config of the quick preset at length `len`, changed by `edit`.
fn at(kind: TaskKind, bias: &str, len: usize, edit: impl FnOnce(&mut TrainConfig)) -> TrainConfig {
    let dial = Dial {
        seq_len: Some(len),
        lag: None,
    };
    let mut c = preset_config(kind, bias, Preset::Quick, dial, 1).unwrap();
    edit(&mut c);
    c
}

#[test]
fn the_estimate_covers_measured_peaks() {
    use TaskKind::{LagK, Process50};
    // Peak RSS in MiB of one-epoch `train` runs (2 threads) when the estimate was fitted: with
    // the last block pruned to the pooled row (lag-k pools the last slot), computed whole
    // (`--no-prune`; Process-50's mean pooling), and the paper's Adding-500 computed whole.
    let whole = |c: &mut TrainConfig| c.whole_graph = true;
    let mut cases = vec![
        (at(LagK, "at5", 512, |_| {}), 133.0),
        (at(LagK, "t5", 1024, |c| c.batch = 256), 355.0),
        (at(LagK, "at5", 128, |c| c.model.layers = 3), 446.0),
        (
            at(LagK, "t5", 256, |c| {
                (c.model.d_model, c.model.heads, c.model.ffn) = (64, 8, 128)
            }),
            109.0,
        ),
        (
            at(LagK, "at5", 16, |c| {
                (c.model.d_model, c.model.heads, c.model.ffn, c.batch) = (1024, 8, 2048, 1000)
            }),
            888.0,
        ),
        (at(LagK, "at5", 512, whole), 2610.0),
        (at(Process50, "at5", 512, |_| {}), 2602.0),
        (
            at(LagK, "t5", 256, |c| {
                whole(c);
                (c.model.d_model, c.model.heads, c.model.ffn) = (64, 8, 128)
            }),
            1463.0,
        ),
        (
            at(LagK, "at5", 128, |c| {
                whole(c);
                c.model.layers = 3
            }),
            646.0,
        ),
        (
            at(LagK, "at5", 128, |c| {
                whole(c);
                c.batch = 1000
            }),
            737.0,
        ),
    ];
    let dial = Dial {
        seq_len: Some(500),
        lag: None,
    };
    let mut paper = preset_config(TaskKind::Adding, "at5", Preset::Paper, dial, 1).unwrap();
    paper.whole_graph = true;
    cases.push((paper, 6730.0));
    for (c, peak) in cases {
        let e = planned(&c);
        let (m, what) = (e.total() / MB, format!("{:?} {:?}", c.task, c.model));
        assert!(m >= peak, "{what}: estimated {m:.0} < measured {peak} MiB");
        assert!(
            m <= 3.0 * peak,
            "{what}: estimated {m:.0} MiB, measured {peak}"
        );
    }
}

#[test]
fn the_presets_fit_a_small_machine() {
    for kind in [
        TaskKind::Reber,
        TaskKind::Process50,
        TaskKind::Adding,
        TaskKind::LagK,
    ] {
        for bias in at5::position::FAMILIES {
            let c = preset_config(kind, bias, Preset::Quick, Dial::default(), 1).unwrap();
            let e = planned(&c);
            assert!(
                e.total() < 1024.0 * MB,
                "{kind:?} {bias}: {}",
                human(e.total())
            );
        }
    }
}

#[test]
fn a_refusal_names_the_estimate_and_what_to_lower() {
    let c = lagk("at5", 4096);
    let e = planned(&c);
    let avail = (1024.0 * MB, "a test".to_string());
    let err = check(&e, Some(&avail), &Hints::flags(TaskKind::LagK)).unwrap_err();
    assert!(err.contains(&human(e.total())), "{err}");
    assert!(err.contains("1.0 GiB available (a test)"), "{err}");
    assert!(
        err.contains("--seq-len") && err.contains("length 4096"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    // Unknown memory: only what no machine holds is refused.
    assert!(check(&e, None, &Hints::default()).is_ok());
    let huge = planned(&lagk("at5", 4_000_000_000));
    assert!(check(&huge, None, &Hints::default()).is_err());
    assert_eq!(human(1536.0 * MB), "1.5 GiB");
}
