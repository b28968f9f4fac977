//! AT5's two MLP initialisations: the paper's flat start, measured against its derivation
//! (docs/why-at5-starts-flat.md), and the alive init's promises.
use at5::nn::check::{check_bias_gradients, small_bias};
use at5::params::ParamStore;
use at5::position::{At5Options, BiasConfig, MlpInit, MlpOptions, build};
use at5::train::{Preset, RunRecord};
use at5_app::experiments::init::{gradients_at_init, log_log_slope, plan};
use rand::SeedableRng;
use rand::rngs::StdRng;

fn norm(g: &at5_app::experiments::init::InitGradients, name: &str) -> f64 {
    g.norms
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no gradient for {name}"))
        .1
}

#[test]
fn paper_init_gradients_scale_as_std_squared_and_the_slope_as_std_cubed() {
    let stds = [0.001, 0.01, 0.1];
    let at = |std: f64| gradients_at_init("at5", 16, Some(std), (15, 2), 1).unwrap();
    let gs: Vec<_> = stds.iter().map(|&s| at(s)).collect();
    let exponent = |name: &str| {
        let pts: Vec<(f64, f64)> = stds
            .iter()
            .zip(&gs)
            .map(|(&s, g)| (s, norm(g, name)))
            .collect();
        log_log_slope(&pts)
    };
    for w in ["bias.neg.w1", "bias.neg.w2", "bias.neg.w3"] {
        let p = exponent(w);
        assert!(
            (p - 2.0).abs() < 0.1,
            "{w}: gradient ∝ std^{p:.3}, derived std^2"
        );
    }
    let p = exponent("bias.c");
    assert!(
        (p - 3.0).abs() < 0.1,
        "bias.c: gradient ∝ std^{p:.3}, derived std^3"
    );
    let pts: Vec<(f64, f64)> = stds
        .iter()
        .zip(&gs)
        .map(|(&s, g)| (s, g.bias_range))
        .collect();
    let p = log_log_slope(&pts);
    assert!(
        (p - 3.0).abs() < 0.15,
        "bias range ∝ std^{p:.3}, derived std^3"
    );
}

#[test]
fn a_constant_shift_of_the_bias_gets_no_gradient() {
    // The pooled query sees only keys to its left, so the left MLP's last bias shifts every
    // logit of its row alike, and the softmax is blind to that: its gradient is rounding.
    for std in [Some(0.01), None] {
        let g = gradients_at_init("at5", 16, std, (15, 2), 2).unwrap();
        let (b3, w3) = (norm(&g, "bias.neg.b3"), norm(&g, "bias.neg.w3"));
        assert!(
            b3 < 1e-9 * w3,
            "init {std:?}: ‖∇b3‖ {b3:e} should vanish next to ‖∇w3‖ {w3:e}"
        );
    }
}

#[test]
fn the_alive_init_starts_every_unit_active_with_a_sloped_bias() {
    let paper = gradients_at_init("at5", 64, Some(0.01), (15, 2), 3).unwrap();
    let alive = gradients_at_init("at5", 64, None, (15, 2), 3).unwrap();
    // The paper's start: a prior flat to a few parts in a million.
    assert!(paper.bias_range < 1e-4, "paper range {}", paper.bias_range);
    assert!(alive.bias_range > 1e-2, "alive range {}", alive.bias_range);
    // All units active at every offset: the hidden biases see only constant shifts too.
    for b in ["bias.neg.b1", "bias.neg.b2"] {
        let (gb, gw) = (norm(&alive, b), norm(&alive, "bias.neg.w3"));
        assert!(gb < 1e-9 * gw, "{b}: {gb:e}, every unit should be active");
    }
    // And the slope's gradient is well clear of Adam's eps (1e-8), the paper's is not.
    assert!(norm(&alive, "bias.c") > 1e-8);
    assert!(norm(&paper, "bias.c") < 1e-8);

    let mut cfg = BiasConfig::from_name("at5").unwrap();
    cfg.mlp_options_mut().unwrap().init = MlpInit::Alive;
    for seed in 0..5 {
        let mut store = ParamStore::<f32>::new();
        let bias = build(
            &cfg,
            4,
            64,
            &mut store,
            "bias",
            &mut StdRng::seed_from_u64(seed),
        )
        .unwrap();
        for d in bias.dead_units(&store, 64).unwrap() {
            assert_eq!(d.layer1, [0.0, 0.0], "seed {seed}");
            assert_eq!(d.layer2, [0.0, 0.0], "seed {seed}");
        }
    }
}

#[test]
fn the_alive_init_passes_the_gradient_check() {
    for family in ["at5", "at5-nob"] {
        let mut cfg = small_bias(family).unwrap();
        cfg.mlp_options_mut().unwrap().init = MlpInit::Alive;
        let check = check_bias_gradients(&cfg, 7).unwrap();
        assert!(check.passed(), "{family} alive: {check:?}");
    }
}

#[test]
fn records_without_the_init_field_read_as_the_paper_init_and_are_written_without_it() {
    let at5 = BiasConfig::from_name("at5").unwrap();
    let json = serde_json::to_string(&at5).unwrap();
    assert!(
        !json.contains("init\""),
        "the paper init is left out: {json}"
    );
    let old = r#"{"At5":{"slope_min":1.0,"slope_max":10.0,"l1":15,"l2":2,"init_std":0.01,"dropout":0.0}}"#;
    let back: BiasConfig = serde_json::from_str(old).unwrap();
    assert_eq!(back, at5);
    let mut alive = at5.clone();
    alive.mlp_options_mut().unwrap().init = MlpInit::Alive;
    let json = serde_json::to_string(&alive).unwrap();
    assert!(json.contains(r#""init":"Alive""#), "{json}");
    assert_eq!(serde_json::from_str::<BiasConfig>(&json).unwrap(), alive);
}

#[test]
fn a_committed_quick_record_is_still_recognised_as_finished() {
    // Written before the init option existed, it replays to the config its flags give now (in
    // the paper preset's revision it was planned under: 1, before the output layer's init moved).
    let root = std::path::Path::new("results/paper");
    let biases = ["at5".to_string()];
    let plan = at5_app::experiments::reproduce::plan(Preset::Paper, 5, &biases);
    for id in ["adding-100-at5-s1", "adding-100-at5-s5"] {
        let mut spec = plan.specs.iter().find(|s| s.id == id).unwrap().clone();
        spec.run.pin_paper_revision(1);
        let cfg = spec.config().unwrap();
        assert!(
            at5_app::sweep::finished_in(&spec.dir(root), &cfg).is_some(),
            "{id} is no longer recognised as finished"
        );
        let rec: RunRecord = at5::report::read_json(&spec.dir(root).join("record.json")).unwrap();
        let Some(mlp) = rec.config.model.bias.mlp_options() else {
            panic!("{id}: not an AT5 record");
        };
        assert_eq!(mlp.init, MlpInit::Paper);
    }
}

#[test]
fn the_study_plan_pairs_each_init_on_the_same_runs() {
    let p = plan(Preset::Quick, 5, 60);
    assert_eq!(p.specs.len(), 4 * 3 * 5);
    for s in &p.specs {
        let cfg = s.config().unwrap();
        let BiasConfig::At5(At5Options {
            mlp: MlpOptions { init, .. },
            ..
        }) = cfg.model.bias
        else {
            assert_eq!(
                s.bias, "t5",
                "{}: only the reference runs are not AT5",
                s.id
            );
            continue;
        };
        let want = if s.bias.ends_with("alive") {
            MlpInit::Alive
        } else {
            MlpInit::Paper
        };
        assert_eq!(init, want, "{}", s.id);
    }
}

#[test]
fn the_flat_start_measurements_scale_as_derived_and_see_the_mlp_dropout() {
    use at5_app::experiments::flat_start::measure;
    // Lag-k at the quick preset has no MLP dropout: switching it off changes nothing, to the bit.
    let small = "--task lagk --seq-len 16 --lag 4 --bias at5 --preset quick --d-model 16 --heads 2";
    let a = measure(&format!("{small} --init-std 0.01"), 1).unwrap();
    let b = measure(&format!("{small} --init-std 0.1"), 1).unwrap();
    assert_eq!(a.dropout_ratio, 1.0);
    assert_eq!(a.noise_share.0, a.noise_share.1);
    // The weights' gradients are O(s²), the slope's and the bias range O(s³) (the derivation
    // in docs/why-at5-starts-flat.md): a tenfold std gives about 100× and 1000×.
    for k in 0..3 {
        let r = b.rms[k] / a.rms[k];
        assert!((80.0..125.0).contains(&r), "tensor {k}: ×{r}");
    }
    for r in [b.rms[3] / a.rms[3], b.bias_range / a.bias_range] {
        assert!((800.0..1250.0).contains(&r), "×{r}");
    }
    // The rest of the model does not see the MLP's scale at the first step.
    assert!(
        (a.rest / b.rest - 1.0).abs() < 1e-3,
        "{} vs {}",
        a.rest,
        b.rest
    );
    // Adam's first step grows with the gradient and stays below one learning rate.
    for k in 0..3 {
        let (x, y) = (a.adam_first_step[k], b.adam_first_step[k]);
        assert!(x < y && y < 1.0, "w{}: {x} vs {y}", k + 1);
    }
    // With the MLP's dropout on (drawn per grid cell), its gradient grows and gets noisier.
    let on = measure(
        &format!("{small} --init-std 0.1 --dropout-input 0.4 --at5-dropout-mask cell"),
        1,
    )
    .unwrap();
    assert!(on.dropout_ratio > 1.2, "×{}", on.dropout_ratio);
    assert!(on.noise_share.0 > on.noise_share.1, "{:?}", on.noise_share);
}
