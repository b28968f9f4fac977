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
    estimate(&c.model, c.batch, &DataShape::planned(config))
}

const MB: f64 = 1024.0 * 1024.0;

#[test]
fn the_estimate_covers_measured_peaks() {
    // Peak RSS of one-epoch `train` runs (2 threads), in MiB, when the estimate was fitted.
    let mut cases: Vec<(TrainConfig, f64)> = Vec::new();
    cases.push((lagk("at5", 512), 2609.0));
    let mut c = lagk("t5", 256);
    (c.model.d_model, c.model.heads, c.model.ffn) = (64, 8, 128);
    cases.push((c, 1463.0));
    let mut c = lagk("at5", 16);
    (c.model.d_model, c.model.heads, c.model.ffn, c.batch) = (1024, 8, 2048, 1000);
    cases.push((c, 1666.0));
    let mut c = lagk("at5", 128);
    c.model.layers = 3;
    cases.push((c, 646.0));
    let mut c = lagk("at5", 128);
    c.batch = 1000;
    cases.push((c, 737.0));
    let dial = Dial {
        seq_len: Some(500),
        lag: None,
    };
    let paper = preset_config(TaskKind::Adding, "at5", Preset::Paper, dial, 1).unwrap();
    cases.push((paper, 6730.0));
    for (c, peak) in cases {
        let e = planned(&c);
        assert!(
            e.total() / MB >= peak,
            "{:?}: {} < {peak} MiB",
            c.model,
            e.total() / MB
        );
        assert!(
            e.total() / MB <= 3.0 * peak,
            "{:?}: {} MiB",
            c.model,
            e.total() / MB
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
