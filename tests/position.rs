//! Position-bias families: bucket functions, grids, and their gradients.
use at5::position::{
    At5, At5Options, BiasConfig, FAMILIES, FireOptions, KERPLE_MIN, MlpInit, MlpOptions, NoOptions,
    PositionBias, alibi_slopes, build, check_t5_config, offsets, soft_bucket, t5_bucket,
};
use at5::{Bound, ParamStore, Tape, Tensor, gradcheck};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[test]
fn t5_buckets_match_the_spot_values() {
    let spots = [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-20, 10),
        (-127, 15),
        (-1000, 15),
        (1, 17),
        (8, 24),
        (20, 26),
        (128, 31),
    ];
    for (n, b) in spots {
        assert_eq!(t5_bucket(n, 32, 128, true), b, "n = {n}");
    }
}

#[test]
fn t5_buckets_stay_in_range_and_grow_with_distance() {
    for nb in [4, 8, 16, 32, 64, 128] {
        for md in [2, 8, 20, 50, 128, 500] {
            for bidir in [true, false] {
                if check_t5_config(nb, md, bidir).is_err() {
                    continue;
                }
                let half = if bidir { nb / 2 } else { nb };
                for sign in [-1i64, 1] {
                    let mut prev = None;
                    for d in 0..3 * md as i64 {
                        let b = t5_bucket(sign * d, nb, md, bidir);
                        assert!(b < nb, "bucket {b} out of range for {nb}/{md}/{bidir}");
                        if bidir && d > 0 {
                            // Keys after the query use the upper half, before it the lower half.
                            assert_eq!(b >= half, sign > 0, "n = {}", sign * d);
                        }
                        if let Some(p) = prev {
                            assert!(
                                b >= p,
                                "not monotone at n = {} ({nb}/{md}/{bidir})",
                                sign * d
                            );
                        }
                        prev = Some(b);
                    }
                }
            }
        }
    }
}

#[test]
fn t5_rejects_more_exact_buckets_than_max_distance() {
    let err = check_t5_config(64, 10, true).unwrap_err();
    assert!(err.contains("max_distance"), "{err}");
    assert!(check_t5_config(64, 20, true).is_ok());
    assert!(check_t5_config(2, 20, true).is_err());
}

type Bias = Box<dyn PositionBias<f64>>;

#[test]
fn only_t5_buckets_offsets_and_its_buckets_are_t5_bucket() {
    let o = at5::position::T5Options {
        num_buckets: 8,
        max_distance: 20,
        bidirectional: true,
    };
    let (t5, _) = build_with(&BiasConfig::T5(o), 2, 30);
    for n in -40..=40 {
        assert_eq!(t5.bucket_of(n), Some(t5_bucket(n, 8, 20, true)), "n = {n}");
    }
    for name in FAMILIES.iter().filter(|&&f| f != "t5") {
        let (bias, _) = build_with(&BiasConfig::from_name(name).unwrap(), 2, 30);
        assert_eq!(bias.bucket_of(-3), None, "{name}");
    }
}

fn build_with(cfg: &BiasConfig, heads: usize, max_len: usize) -> (Bias, ParamStore<f64>) {
    let mut store = ParamStore::new();
    let mut rng = StdRng::seed_from_u64(11);
    let bias = build(cfg, heads, max_len, &mut store, "bias", &mut rng)
        .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
    (bias, store)
}

fn small_mlp(dropout: f64) -> MlpOptions {
    MlpOptions {
        l1: 4,
        l2: 3,
        init_std: 0.01,
        dropout,
        per_cell: false,
        init: MlpInit::Paper,
    }
}

fn at5_cfg(slope: (f64, f64), dropout: f64) -> BiasConfig {
    BiasConfig::At5(At5Options {
        slope_min: slope.0,
        slope_max: slope.1,
        mlp: small_mlp(dropout),
    })
}

fn at5_nob_cfg(dropout: f64) -> BiasConfig {
    BiasConfig::At5NoB(small_mlp(dropout))
}

/// The grid on an evaluation tape (dropout off).
fn grid_of(bias: &Bias, store: &ParamStore<f64>, lq: usize, lk: usize) -> Tensor {
    let mut tape = Tape::eval();
    let bound = store.bind(&mut tape);
    let g = bias.grid(&mut tape, &bound, lq, lk, 3).expect("a grid");
    tape.value(g).clone()
}

/// The grid's entry for head h at offset n, read off the row where that offset first appears.
fn at_offset(grid: &Tensor, h: usize, n: i64) -> f64 {
    let (lq, lk) = (grid.shape[1] as i64, grid.shape[2] as i64);
    let i = if n >= 0 { 0 } else { -n };
    assert!(i < lq && i + n < lk, "offset {n} not in a {lq}x{lk} grid");
    grid.get(&[h, i as usize, (i + n) as usize])
}

/// Moves the named parameters to O(1) values of alternating sign, so ReLU pre-activations sit
/// far from their kink relative to the finite-difference step.
fn spread(store: &mut ParamStore<f64>, names: &[&str], seed: u64) {
    for id in store.ids().collect::<Vec<_>>() {
        let name = store.name(id).rsplit('.').next().unwrap().to_string();
        if names.contains(&name.as_str()) {
            let t = store.get_mut(id);
            let mut v = Tensor::<f64>::uniform(&t.shape, 0.3, 1.2, seed + id.0 as u64);
            v.data.iter_mut().step_by(2).for_each(|x| *x = -*x);
            *t = v;
        }
    }
}

/// Gradcheck of the grid as a function of all the store's parameters, on a training tape.
fn check_grid(name: &str, bias: &Bias, store: &ParamStore<f64>, lq: usize, lk: usize) {
    let r = gradcheck(
        |t, vs| {
            let bound = Bound::from_vars(vs.to_vec());
            bias.grid(t, &bound, lq, lk, 5).expect("a grid")
        },
        store.values(),
    );
    assert!(r.passed && r.checked > 0, "{name} {lq}x{lk}: {r:?}");
    // every parameter of the family reaches the grid
    let mut tape = Tape::new();
    let bound = store.bind(&mut tape);
    let g = bias.grid(&mut tape, &bound, lq, lk, 5).unwrap();
    let s = tape.sum(g);
    let grads = tape.backward(s);
    assert!(
        store.without_grad(&bound, &grads).is_empty(),
        "{name}: {:?} got no gradient",
        store.without_grad(&bound, &grads)
    );
}

const MLP_NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

#[test]
fn soft_bucket_is_zero_at_zero_bounded_and_monotone() {
    for (alpha, beta) in [(0.01, 0.5), (0.3, 0.3), (2.0, 0.05)] {
        assert_eq!(soft_bucket(0, alpha, beta), 0.0);
        let rate = |n: i64| if n > 0 { alpha } else { beta };
        for sign in [-1i64, 1] {
            let mut prev = 0.0;
            for d in 1..200 {
                let n = sign * d;
                let f = soft_bucket(n, alpha, beta);
                // 1 - exp(-x) rounds to exactly 1 once exp(-x) < 2^-53
                assert!(
                    f >= 0.0 && (f < 1.0 || rate(n) * d as f64 > 36.0),
                    "n = {n}"
                );
                assert!(f >= prev, "not monotone at n = {n}");
                prev = f;
            }
        }
        for n in [-7i64, -1, 1, 7] {
            let expect = 1.0 - (-rate(n) * n.abs() as f64).exp();
            assert!((soft_bucket(n, alpha, beta) - expect).abs() < 1e-15);
        }
    }
    // strictly below 1 while the decay is representable
    assert!(soft_bucket(10, 0.1, 0.1) < 1.0);
    assert!(soft_bucket(-10, 0.1, 0.1) < 1.0);
}

#[test]
fn soft_bucket_stays_finite_for_huge_arguments() {
    assert_eq!(soft_bucket(1_000_000, 1.0, 1.0), 1.0);
    assert_eq!(soft_bucket(-1_000_000, 1.0, 1.0), 1.0);
    assert_eq!(soft_bucket(1, 1e6, 1e6), 1.0);
    assert!(soft_bucket(i64::MIN + 1, 1e300, 1e300).is_finite());
}

#[test]
fn at5_soft_buckets_on_the_tape_match_the_formula() {
    let mut store = ParamStore::<f64>::new();
    let mut rng = StdRng::seed_from_u64(2);
    let o = MlpOptions {
        l1: 3,
        l2: 2,
        init_std: 0.01,
        init: MlpInit::Paper,
        dropout: 0.0,
        per_cell: false,
    };
    let at5 = At5::new((1.0, 10.0), &o, 3, 8, &mut store, "bias", &mut rng).unwrap();
    let a = store.id("bias.a").unwrap();
    store.get_mut(a).data[1] = -2.0; // relu: a dead slope means alpha = 0
    let own = PositionBias::<f64>::per_head(&at5, &store);
    let (alpha, beta) = (own.get("alpha").unwrap(), own.get("beta").unwrap());
    assert_eq!(alpha[1], 0.0);
    let c = store.get(store.id("bias.c").unwrap()).data.clone();
    for h in 0..3 {
        assert!((beta[h] - c[h] / 8.0).abs() < 1e-15);
    }
    let (lq, lk) = (5, 7);
    let mut tape = Tape::eval();
    let bound = store.bind(&mut tape);
    let f = at5.soft_buckets(&mut tape, &bound, lq, lk);
    let f = tape.value(f);
    assert_eq!(f.shape, [lq + lk - 1, 3]);
    for (r, n) in offsets(lq, lk).into_iter().enumerate() {
        for h in 0..3 {
            let want = soft_bucket(n, alpha[h], beta[h]);
            assert!((f.get(&[r, h]) - want).abs() < 1e-15, "n = {n}, h = {h}");
        }
    }
}

#[test]
fn at5_with_a_huge_slope_is_a_two_bucket_table() {
    let (bias, store) = build_with(&at5_cfg((1e9, 1e9), 0.0), 2, 64);
    let g = grid_of(&bias, &store, 60, 60);
    assert!(g.data.iter().all(|v| v.is_finite()));
    for h in 0..2 {
        assert_eq!(at_offset(&g, h, 1), at_offset(&g, h, 50));
        assert_eq!(at_offset(&g, h, -1), at_offset(&g, h, -50));
        for n in 2..60 {
            assert_eq!(at_offset(&g, h, n), at_offset(&g, h, 1));
            assert_eq!(at_offset(&g, h, -n), at_offset(&g, h, -1));
        }
    }
    // The same in f32: no overflow however large alpha·|n| gets.
    let mut store32 = ParamStore::<f32>::new();
    let mut rng = StdRng::seed_from_u64(1);
    let b32 = build(
        &at5_cfg((1e30, 1e30), 0.0),
        2,
        64,
        &mut store32,
        "bias",
        &mut rng,
    )
    .unwrap();
    let mut tape = Tape::<f32>::eval();
    let bound = store32.bind(&mut tape);
    let g = b32.grid(&mut tape, &bound, 60, 60, 0).unwrap();
    assert!(tape.value(g).data.iter().all(|v| v.is_finite()));
}

#[test]
fn at5_dropout_is_seeded_and_off_on_eval_tapes() {
    let (bias, mut store) = build_with(&at5_cfg((1.0, 10.0), 0.5), 2, 8);
    spread(&mut store, &MLP_NAMES, 1);
    let train = |seed: u64| {
        let mut tape = Tape::new();
        let bound = store.bind(&mut tape);
        let g = bias.grid(&mut tape, &bound, 6, 6, seed).unwrap();
        tape.value(g).clone()
    };
    assert_eq!(train(1), train(1));
    assert_ne!(train(1), train(2));
    assert_ne!(train(1), grid_of(&bias, &store, 6, 6));
    assert_eq!(grid_of(&bias, &store, 6, 6), grid_of(&bias, &store, 6, 6));
}

#[test]
fn gradcheck_at5_grid() {
    for dropout in [0.0, 0.25] {
        let (bias, mut store) = build_with(&at5_cfg((1.0, 10.0), dropout), 2, 6);
        spread(&mut store, &MLP_NAMES, 3);
        check_grid("at5", &bias, &store, 6, 6);
        check_grid("at5", &bias, &store, 3, 8);
    }
}

#[test]
fn at5_dropout_per_cell_gradchecks_and_varies_within_an_offset() {
    let mut cfg = at5_cfg((1.0, 10.0), 0.25);
    if let BiasConfig::At5(o) = &mut cfg {
        o.mlp.per_cell = true;
    }
    let (bias, mut store) = build_with(&cfg, 2, 6);
    spread(&mut store, &MLP_NAMES, 3);
    check_grid("at5 per-cell dropout", &bias, &store, 6, 6);
    check_grid("at5 per-cell dropout", &bias, &store, 3, 8);
    // Cells of one offset (n = 0: the diagonal) get their own masks during training.
    let mut tape = Tape::new();
    let bound = store.bind(&mut tape);
    let g = bias.grid(&mut tape, &bound, 6, 6, 1).unwrap();
    let g = tape.value(g).clone();
    let diag: Vec<f64> = (0..6).map(|i| g.get(&[0, i, i])).collect();
    assert!(diag.iter().any(|&v| v != diag[0]), "{diag:?}");
    // Off a training tape it is the per-offset function.
    let eval = grid_of(&bias, &store, 6, 6);
    assert!((0..6).all(|i| eval.get(&[0, i, i]) == eval.get(&[0, 0, 0])));
}

#[test]
fn gradcheck_at5_nob_grid() {
    let (bias, mut store) = build_with(&at5_nob_cfg(0.25), 2, 5);
    spread(&mut store, &MLP_NAMES, 4);
    check_grid("at5-nob", &bias, &store, 5, 5);
    check_grid("at5-nob", &bias, &store, 7, 3);
}

#[test]
fn gradcheck_t5_nob_grid() {
    let (bias, store) = build_with(&BiasConfig::T5NoB(NoOptions), 3, 5);
    check_grid("t5-nob", &bias, &store, 5, 5);
    check_grid("t5-nob", &bias, &store, 8, 6);
}

#[test]
fn gradcheck_kerple_grid() {
    let (bias, store) = build_with(&BiasConfig::KerpleLog(NoOptions), 3, 8);
    check_grid("kerple-log", &bias, &store, 6, 4);
}

#[test]
fn gradcheck_fire_grid_within_and_past_the_threshold() {
    let (bias, mut store) = build_with(&BiasConfig::Fire(FireOptions { hidden: 5 }), 2, 4);
    spread(&mut store, &["w1", "b1", "w2", "b2"], 6);
    // L_thr = 4.4 keeps every query index off the max's kink
    let s = store.id("bias.s").unwrap();
    store.get_mut(s).data[0] = 1.1;
    check_grid("fire", &bias, &store, 4, 4);
    check_grid("fire", &bias, &store, 8, 7);
    // and from the negative side of both |.|
    let c = store.id("bias.c").unwrap();
    store.get_mut(c).data[0] = -0.3;
    store.get_mut(s).data[0] = -1.1;
    check_grid("fire", &bias, &store, 8, 7);
}

/// FIRE's bias of one cell straight from the formula, with the store's parameters.
fn fire_by_hand(store: &ParamStore<f64>, l0: f64, h: usize, i: usize, j: usize) -> f64 {
    let p = |n: &str| {
        store
            .get(store.id(&format!("bias.{n}")).unwrap())
            .data
            .clone()
    };
    let (c, s) = (p("c")[0], p("s")[0]);
    let psi = |x: f64| (c * x).abs().ln_1p();
    let x = psi(j as f64 - i as f64) / (psi((s * l0).abs().max(i as f64)) + 1e-6);
    let dir = if j <= i { "neg" } else { "pos" };
    let (w1, b1, w2, b2) = (
        p(&format!("{dir}.w1")),
        p(&format!("{dir}.b1")),
        p(&format!("{dir}.w2")),
        p(&format!("{dir}.b2")),
    );
    let heads = b2.len();
    let hidden = b1.len();
    (0..hidden)
        .map(|k| (x * w1[k] + b1[k]).max(0.0) * w2[k * heads + h])
        .sum::<f64>()
        + b2[h]
}

#[test]
fn fire_grid_matches_the_formula_on_both_paths() {
    let (bias, store) = build_with(&BiasConfig::Fire(FireOptions { hidden: 6 }), 3, 4);
    for (lq, lk) in [(4, 4), (3, 6), (9, 7)] {
        let g = grid_of(&bias, &store, lq, lk);
        assert_eq!(g.shape, [3, lq, lk]);
        for h in 0..3 {
            for i in 0..lq {
                for j in 0..lk {
                    let want = fire_by_hand(&store, 4.0, h, i, j);
                    assert!((g.get(&[h, i, j]) - want).abs() < 1e-12, "{h},{i},{j}");
                }
            }
        }
    }
    // past L_thr = 4 the normaliser grows with i: no longer a function of j - i alone
    let g = grid_of(&bias, &store, 9, 9);
    assert_ne!(g.get(&[0, 6, 0]), g.get(&[0, 7, 1]));
    assert_eq!(g.get(&[0, 2, 0]), g.get(&[0, 3, 1]));
}

#[test]
fn offset_families_give_h_by_lq_by_lk_grids_that_depend_on_j_minus_i() {
    let cfgs = [
        BiasConfig::from_name("t5").unwrap(),
        BiasConfig::T5NoB(NoOptions),
        at5_cfg((1.0, 10.0), 0.0),
        at5_nob_cfg(0.0),
        BiasConfig::Alibi(NoOptions),
        BiasConfig::KerpleLog(NoOptions),
        BiasConfig::Fire(FireOptions { hidden: 4 }),
    ];
    for cfg in &cfgs {
        let (bias, mut store) = build_with(cfg, 3, 8);
        spread(&mut store, &MLP_NAMES, 9);
        for (lq, lk) in [(5, 7), (7, 5), (1, 4), (4, 1)] {
            let g = grid_of(&bias, &store, lq, lk);
            assert_eq!(g.shape, [3, lq, lk], "{}", cfg.name());
            for h in 0..3 {
                for i in 0..lq.saturating_sub(1) {
                    for j in 0..lk - 1 {
                        assert_eq!(
                            g.get(&[h, i, j]),
                            g.get(&[h, i + 1, j + 1]),
                            "{} at {h},{i},{j}",
                            cfg.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn per_offset_tables_reuse_their_edge_value_past_the_training_length() {
    for cfg in [BiasConfig::T5NoB(NoOptions), at5_nob_cfg(0.0)] {
        let (bias, mut store) = build_with(&cfg, 2, 4);
        spread(&mut store, &MLP_NAMES, 2);
        let g = grid_of(&bias, &store, 10, 10);
        for h in 0..2 {
            for n in 4..10 {
                assert_eq!(at_offset(&g, h, n), at_offset(&g, h, 3), "{}", cfg.name());
                assert_eq!(at_offset(&g, h, -n), at_offset(&g, h, -3), "{}", cfg.name());
            }
            assert_ne!(at_offset(&g, h, 2), at_offset(&g, h, 3), "{}", cfg.name());
        }
    }
}

#[test]
fn alibi_slopes_follow_the_official_get_slopes() {
    let p = |e: f64| 2f64.powf(e);
    let close = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-15 * y)
    };
    let h8: Vec<f64> = (1..=8).map(|h| p(-(h as f64))).collect();
    assert!(close(&alibi_slopes(8), &h8), "{:?}", alibi_slopes(8));
    // 4 heads' slopes, then get_slopes(8)[0::2][:2]
    let h6 = [p(-2.0), p(-4.0), p(-6.0), p(-8.0), p(-1.0), p(-3.0)];
    assert!(close(&alibi_slopes(6), &h6), "{:?}", alibi_slopes(6));
    // 8 heads' slopes, then get_slopes(16)[0::2][:4], get_slopes(16) being 2^(-h/2)
    let mut h12 = h8.clone();
    h12.extend([p(-0.5), p(-1.5), p(-2.5), p(-3.5)]);
    assert!(close(&alibi_slopes(12), &h12), "{:?}", alibi_slopes(12));
    assert!(close(&alibi_slopes(1), &[p(-8.0)]));
    assert!(close(&alibi_slopes(3), &[p(-4.0), p(-8.0), p(-2.0)]));
}

#[test]
fn alibi_grid_is_minus_slope_times_distance_and_has_no_parameters() {
    let (bias, store) = build_with(&BiasConfig::Alibi(NoOptions), 6, 8);
    assert!(store.is_empty() && bias.param_ids().is_empty());
    let m = alibi_slopes(6);
    let g = grid_of(&bias, &store, 4, 6);
    for (h, &m) in m.iter().enumerate() {
        for i in 0..4 {
            for j in 0..6 {
                let want = -m * (j as f64 - i as f64).abs();
                assert_eq!(g.get(&[h, i, j]), want);
            }
        }
    }
}

#[test]
fn kerple_grid_matches_its_formula_and_projection_clamps() {
    let (bias, mut store) = build_with(&BiasConfig::KerpleLog(NoOptions), 4, 8);
    let (r1, r2) = (store.id("bias.r1").unwrap(), store.id("bias.r2").unwrap());
    let all_above = |s: &ParamStore<f64>| {
        [r1, r2]
            .iter()
            .all(|&id| s.get(id).data.iter().all(|&v| v >= KERPLE_MIN))
    };
    assert!(all_above(&store), "init is already projected");
    let g = grid_of(&bias, &store, 3, 5);
    let (a, b) = (store.get(r1).data.clone(), store.get(r2).data.clone());
    for h in 0..4 {
        for n in -2i64..5 {
            let want = -a[h] * (1.0 + b[h] * n.abs() as f64).ln();
            assert!((at_offset(&g, h, n) - want).abs() < 1e-15);
        }
    }
    store.get_mut(r1).data[0] = -1.0;
    store.get_mut(r2).data[1] = 0.001;
    store.get_mut(r2).data[2] = 0.5;
    bias.project(&mut store);
    assert_eq!(store.get(r1).data[0], KERPLE_MIN);
    assert_eq!(store.get(r2).data[1], KERPLE_MIN);
    assert_eq!(store.get(r2).data[2], 0.5);
}

#[test]
fn sinusoidal_adds_an_input_encoding_and_no_grid() {
    let (bias, store) = build_with(&BiasConfig::Sinusoidal(NoOptions), 2, 8);
    assert!(store.is_empty() && bias.param_ids().is_empty());
    let mut tape = Tape::eval();
    let bound = store.bind(&mut tape);
    assert!(bias.grid(&mut tape, &bound, 3, 3, 0).is_none());
    let pe = bias.input_encoding(4, 6).expect("an encoding");
    assert_eq!(pe.shape, [4, 6]);
    for k in 0..6 {
        assert_eq!(pe.get(&[0, k]), if k % 2 == 0 { 0.0 } else { 1.0 });
    }
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(pe.get(&[1, 0]), 1f64.sin()));
    assert!(close(pe.get(&[1, 1]), 1f64.cos()));
    assert!(close(
        pe.get(&[2, 2]),
        (2.0 / 10000f64.powf(2.0 / 6.0)).sin()
    ));
    assert!(close(
        pe.get(&[3, 5]),
        (3.0 / 10000f64.powf(4.0 / 6.0)).cos()
    ));
    let (none, _) = build_with(&BiasConfig::None(NoOptions), 2, 8);
    assert!(none.input_encoding(4, 6).is_none());
}

#[test]
fn build_names_the_option_it_rejects() {
    let err = |cfg: BiasConfig| {
        let mut store = ParamStore::<f64>::new();
        let mut rng = StdRng::seed_from_u64(0);
        build(&cfg, 2, 8, &mut store, "bias", &mut rng)
            .err()
            .unwrap_or_else(|| panic!("{cfg:?} was accepted"))
    };
    let at5 = |f: &dyn Fn(&mut BiasConfig)| {
        let mut c = at5_cfg((1.0, 10.0), 0.1);
        f(&mut c);
        c
    };
    let cases: Vec<(BiasConfig, &str)> = vec![
        (
            at5(&|c| {
                if let BiasConfig::At5(o) = c {
                    o.mlp.l1 = 0
                }
            }),
            "l1",
        ),
        (
            at5(&|c| {
                if let BiasConfig::At5(o) = c {
                    o.mlp.l2 = 0
                }
            }),
            "l2",
        ),
        (at5_cfg((5.0, 1.0), 0.0), "slope_min"),
        (at5_cfg((1.0, 10.0), -0.1), "dropout"),
        (at5_cfg((1.0, 10.0), 1.0), "dropout"),
        (
            BiasConfig::At5NoB(MlpOptions {
                l1: 0,
                l2: 2,
                ..small_mlp(0.0)
            }),
            "l1",
        ),
        (
            BiasConfig::At5NoB(MlpOptions {
                l1: 2,
                l2: 0,
                ..small_mlp(0.0)
            }),
            "l2",
        ),
        (at5_nob_cfg(1.5), "dropout"),
        (BiasConfig::Fire(FireOptions { hidden: 0 }), "hidden"),
    ];
    for (cfg, option) in cases {
        let e = err(cfg.clone());
        assert!(e.contains(option), "{cfg:?}: `{e}` does not name {option}");
        // Validating without building says the same.
        assert_eq!(cfg.validate(), Err(e), "{cfg:?}");
    }
    for name in FAMILIES {
        let cfg = BiasConfig::from_name(name).unwrap();
        assert_eq!(cfg.validate(), Ok(()), "{name}");
    }
    // equal slope bounds are a point, not an error
    assert!(build_with(&at5_cfg((3.0, 3.0), 0.0), 2, 8).1.len() > 2);
}

#[test]
fn param_ids_list_exactly_the_family_parameters() {
    let (h, l, l1, l2, hidden) = (3usize, 5usize, 4usize, 3usize, 6usize);
    let mlp = |dir: &str| -> Vec<String> {
        MLP_NAMES
            .iter()
            .map(|n| format!("bias.{dir}.{n}"))
            .collect()
    };
    let mlp_count = 2 * h * (l1 + l1 + l1 * l2 + l2 + l2 + 1);
    let fire_mlp = |dir: &str| -> Vec<String> {
        ["w1", "b1", "w2", "b2"]
            .iter()
            .map(|n| format!("bias.{dir}.{n}"))
            .collect()
    };
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let expected: Vec<(BiasConfig, Vec<String>, usize)> = vec![
        (BiasConfig::None(NoOptions), vec![], 0),
        (BiasConfig::Sinusoidal(NoOptions), vec![], 0),
        (
            BiasConfig::from_name("t5").unwrap(),
            names(&["bias.table"]),
            32 * h,
        ),
        (
            BiasConfig::T5NoB(NoOptions),
            names(&["bias.table"]),
            (2 * l - 1) * h,
        ),
        (
            at5_cfg((1.0, 10.0), 0.0),
            [names(&["bias.a", "bias.c"]), mlp("neg"), mlp("pos")].concat(),
            2 * h + mlp_count,
        ),
        (
            at5_nob_cfg(0.0),
            [names(&["bias.w"]), mlp("neg"), mlp("pos")].concat(),
            (2 * l - 1) * h + mlp_count,
        ),
        (BiasConfig::Alibi(NoOptions), vec![], 0),
        (
            BiasConfig::KerpleLog(NoOptions),
            names(&["bias.r1", "bias.r2"]),
            2 * h,
        ),
        (
            BiasConfig::Fire(FireOptions { hidden }),
            [
                names(&["bias.c", "bias.s"]),
                fire_mlp("neg"),
                fire_mlp("pos"),
            ]
            .concat(),
            2 + 2 * (hidden + hidden + hidden * h + h),
        ),
    ];
    assert_eq!(expected.len(), FAMILIES.len());
    for (cfg, want, count) in expected {
        let (bias, store) = build_with(&cfg, h, l);
        assert_eq!(bias.family(), cfg.name());
        let ids = bias.param_ids();
        assert_eq!(ids, store.ids().collect::<Vec<_>>(), "{}", cfg.name());
        let got: Vec<String> = ids.iter().map(|&id| store.name(id).to_string()).collect();
        assert_eq!(got, want, "{}", cfg.name());
        assert_eq!(store.num_scalars(), count, "{}", cfg.name());
        assert_eq!(cfg.is_learned(), count > 0, "{}", cfg.name());
    }
}

#[test]
fn t5s_bucket_for_reber_s_label_holds_five_offsets_at_the_generated_length() {
    // Reber's label is the first input token and the head reads the last slot of the padded
    // sequence, so the label sits at offset −(L − 1) in every example. The paper's T5 (32
    // buckets, bidirectional, max distance 128) shares that bucket with every offset of
    // 64 to 90 positions back; how many of them a sequence can hold depends on L.
    use at5::data::{ReberConfig, TaskConfig, generate};
    use at5::position::t5_bucket;
    let data = generate(&TaskConfig::Reber(ReberConfig::paper()), 2021).unwrap();
    assert_eq!(data.max_len, 69);
    let real = |l: i64| {
        let label = t5_bucket(-(l - 1), 32, 128, true);
        (0..l)
            .filter(|&d| t5_bucket(-d, 32, 128, true) == label)
            .count()
    };
    let whole: Vec<i64> = (0..200)
        .filter(|&d| t5_bucket(-d, 32, 128, true) == t5_bucket(-68, 32, 128, true))
        .collect();
    assert_eq!((whole[0], *whole.last().unwrap()), (64, 90));
    assert_eq!(real(69), 5);
    // The original code's data files pad to 66.
    assert_eq!(real(66), 2);
}
