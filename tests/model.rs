//! Whole-model tests: gradients of every bias family, the prior/posterior identity, masking,
//! permutation equivariance without positions, and learning a tiny problem.
use at5::nn::{
    Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model, ModelConfig, OutputInit,
    OutputKind, PooledHead, Pooling, Targets, mass_radius, mean_kl,
};
use at5::optim::{Adam, AdamConfig};
use at5::position::{BiasConfig, FAMILIES, NoOptions};
use at5::{Bound, ParamStore, Tape, Tensor, Var, gradcheck};

fn tiny(bias: BiasConfig, output: OutputKind, pooling: Pooling) -> ModelConfig {
    ModelConfig {
        input: InputKind::Tokens { vocab: 5 },
        output,
        d_model: 8,
        heads: 2,
        ffn: 16,
        layers: 1,
        max_len: 6,
        bias,
        bias_scope: BiasScope::Shared,
        pooling,
        dropout: Dropouts::NONE,
        head: PooledHead::default(),
        unbiased_heads: Vec::new(),
    }
}

/// Two length-6 sequences, the second with two padding slots at the end.
fn batch() -> Batch {
    let ids = vec![1, 2, 3, 4, 1, 2, 3, 3, 1, 4, 0, 0];
    let pad = ids.iter().map(|&t| t == 0).collect();
    Batch {
        b: 2,
        l: 6,
        input: BatchInput::Tokens(ids),
        pad,
    }
}

/// Small bias-family options, with T5 using few buckets so several are hit at L = 6: the
/// gradient check's own (`gradcheck` runs the same).
fn family(name: &str) -> BiasConfig {
    at5::nn::check::small_bias(name).unwrap()
}

/// Scales every parameter so biases are far from zero and the gradient check sees them; the
/// store is f64 so central differences are meaningful.
fn model_f64(cfg: ModelConfig, seed: u64) -> (Model<f64>, ParamStore<f64>) {
    let mut store = ParamStore::<f64>::new();
    let model = Model::new(cfg, &mut store, seed).unwrap();
    (model, store)
}

fn loss_of(model: &Model<f64>, t: &mut Tape<f64>, vars: &[Var], batch: &Batch, y: &Targets) -> Var {
    let p = Bound::from_vars(vars.to_vec());
    let fwd = model.forward(t, &p, batch, &ForwardOpts::default());
    model.loss(t, fwd.output, y)
}

#[test]
fn whole_model_gradcheck_for_every_bias_family() {
    let batch = batch();
    for name in FAMILIES {
        for (output, y, pooling) in [
            (
                OutputKind::Classes(3),
                Targets::Classes(vec![2, 0]),
                Pooling::Last,
            ),
            (
                OutputKind::Regression,
                Targets::Real(vec![0.3, -0.7]),
                Pooling::Mean,
            ),
        ] {
            let (model, mut store) = model_f64(tiny(family(name), output, pooling), 7);
            // Larger weights than BERT's 0.02 make every gradient large enough to compare.
            for v in store.values_mut() {
                for x in &mut v.data {
                    *x *= 8.0;
                }
            }
            let inputs: Vec<Tensor> = store.values().to_vec();
            let rep = gradcheck(|t, vars| loss_of(&model, t, vars, &batch, &y), &inputs);
            assert!(
                rep.passed && rep.max_rel_err <= 1e-5,
                "{name} {output:?}: {rep:?} at parameter {}",
                store.names()[rep.worst.0]
            );
        }
    }
}

#[test]
fn every_parameter_gets_a_gradient() {
    let batch = batch();
    for name in FAMILIES {
        let (model, store) =
            model_f64(tiny(family(name), OutputKind::Classes(3), Pooling::Mean), 3);
        let mut t = Tape::new();
        let p = store.bind(&mut t);
        let fwd = model.forward(&mut t, &p, &batch, &ForwardOpts::default());
        let loss = model.loss(&mut t, fwd.output, &Targets::Classes(vec![1, 2]));
        let g = t.backward(loss);
        let missing = store.without_grad(&p, &g);
        assert!(missing.is_empty(), "{name}: no gradient for {missing:?}");
    }
}

#[test]
fn attention_rows_sum_to_one_and_padding_gets_no_weight() {
    let batch = batch();
    for name in ["t5", "none", "at5", "alibi"] {
        let (model, store) =
            model_f64(tiny(family(name), OutputKind::Classes(3), Pooling::Last), 1);
        let views = model.inspect(&store, &batch, None).unwrap();
        let post = &views[0].posterior;
        let (h, l) = (2, 6);
        for b in 0..2 {
            for hh in 0..h {
                for i in 0..l {
                    let at = ((b * h + hh) * l + i) * l;
                    let row = &post.data[at..at + l];
                    let s: f64 = row.iter().sum();
                    assert!((s - 1.0).abs() < 1e-12, "{name}: row sums to {s}");
                    for (j, &w) in row.iter().enumerate() {
                        if batch.pad[b * l + j] {
                            assert_eq!(w, 0.0, "{name}: padding key {j} got weight");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn posterior_is_prior_times_likelihood_renormalised() {
    let batch = batch();
    for name in ["t5", "t5-nob", "at5", "alibi", "kerple-log", "fire"] {
        let (model, mut store) =
            model_f64(tiny(family(name), OutputKind::Classes(3), Pooling::Last), 5);
        for v in store.values_mut() {
            for x in &mut v.data {
                *x *= 20.0; // a peaked prior and strong content, so the identity is not trivial
            }
        }
        let view = &model.inspect(&store, &batch, None).unwrap()[0];
        let l = 6;
        let mut max_err: f64 = 0.0;
        for row in 0..view.prior.len() / l {
            let r = row * l..(row + 1) * l;
            let prior = &view.prior.data[r.clone()];
            let ctx = &view.context.data[r.clone()];
            let m = ctx.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let un: Vec<f64> = prior
                .iter()
                .zip(ctx)
                .map(|(p, c)| p * (c - m).exp())
                .collect();
            let z: f64 = un.iter().sum();
            for (u, post) in un.iter().zip(&view.posterior.data[r]) {
                max_err = max_err.max((u / z - post).abs());
            }
        }
        assert!(
            max_err <= 1e-6,
            "{name}: posterior differs from prior x likelihood by {max_err}"
        );
        let kl = mean_kl(view, &batch.pad);
        assert!(
            kl.iter().all(|k| k.is_finite() && *k >= 0.0),
            "{name}: KL {kl:?}"
        );
    }
}

#[test]
fn an_unbiased_head_gets_no_bias_in_training_and_its_bias_no_gradient() {
    // The paper's code masks the bias to the heads it lists; `unbiased_heads` does the same on
    // every forward, training included, so those heads' bias parameters never learn.
    let batch = batch();
    let y = Targets::Classes(vec![2, 0]);
    let cfg = |unbiased: Vec<usize>| ModelConfig {
        unbiased_heads: unbiased,
        ..tiny(family("t5"), OutputKind::Classes(3), Pooling::Mean)
    };
    let (all, mut store) = model_f64(cfg(vec![]), 5);
    for v in store.values_mut() {
        for x in &mut v.data {
            *x *= 8.0;
        }
    }
    let (masked, _) = model_f64(cfg(vec![1]), 5);
    // The same parameters: only the mask differs.
    let with = all.inspect(&store, &batch, None).unwrap();
    let ablated = all
        .inspect(&store, &batch, Some(vec![true, false]))
        .unwrap();
    let seen = masked.inspect(&store, &batch, None).unwrap();
    assert_ne!(with[0].prior.data, seen[0].prior.data);
    assert_eq!(ablated[0].prior.data, seen[0].prior.data);
    // The table is [buckets, heads]: head 1's column gets exactly zero gradient, head 0's not.
    let mut t = Tape::new();
    let p = store.bind(&mut t);
    let fwd = masked.forward(&mut t, &p, &batch, &ForwardOpts::default());
    let loss = masked.loss(&mut t, fwd.output, &y);
    let g = t.backward(loss);
    let id = store.id("bias.table").unwrap();
    let table = store.grads(&p, &g)[id.0].expect("the table has a gradient");
    let heads = 2;
    let col = |h: usize| table.data.iter().skip(h).step_by(heads).map(|x| x.abs());
    assert!(col(1).all(|x| x == 0.0));
    assert!(col(0).any(|x| x > 1e-6));
    // And the whole model still gradchecks with the mask and the paper's output init.
    let glorot = ModelConfig {
        head: PooledHead {
            init: OutputInit::Glorot,
            ..PooledHead::default()
        },
        ..cfg(vec![1])
    };
    let (model, store) = model_f64(glorot, 5);
    let bias = store.get(store.id("head.out.b").unwrap());
    assert!(bias.data.iter().all(|&b| b == 0.1));
    let limit = (6.0f64 / (8 + 3) as f64).sqrt();
    let w = &store.get(store.id("head.out.w").unwrap()).data;
    assert!(w.iter().all(|x| x.abs() <= limit));
    // Glorot's weights are an order above BERT's 0.02 at this width.
    let rms = (w.iter().map(|x| x * x).sum::<f64>() / w.len() as f64).sqrt();
    assert!(rms > 0.2, "rms {rms}");
    let inputs: Vec<Tensor> = store.values().to_vec();
    let rep = gradcheck(|t, vars| loss_of(&model, t, vars, &batch, &y), &inputs);
    assert!(rep.passed, "{rep:?}");
    // A head that does not exist is refused by name.
    let e = Model::<f64>::new(cfg(vec![2]), &mut ParamStore::new(), 1)
        .err()
        .unwrap();
    assert!(e.contains("head 2 does not exist"), "{e}");
}

#[test]
fn masking_every_head_leaves_a_uniform_prior() {
    let batch = batch();
    let (model, mut store) =
        model_f64(tiny(family("t5"), OutputKind::Classes(3), Pooling::Last), 2);
    for x in &mut store.values_mut()[0..]
        .iter_mut()
        .flat_map(|v| v.data.iter_mut())
    {
        *x *= 30.0;
    }
    let with = model.inspect(&store, &batch, None).unwrap();
    let without = model
        .inspect(&store, &batch, Some(vec![false, false]))
        .unwrap();
    let one = model
        .inspect(&store, &batch, Some(vec![true, false]))
        .unwrap();
    let l = 6;
    // Sequence 0 has no padding: a masked head's prior is exactly 1/L.
    for x in &without[0].prior.data[..2 * l * l] {
        assert!((x - 1.0 / l as f64).abs() < 1e-12);
    }
    assert_ne!(with[0].prior.data, without[0].prior.data);
    // Masking head 1 only: head 0 unchanged, head 1 uniform.
    assert_eq!(one[0].prior.data[..l * l], with[0].prior.data[..l * l]);
    for x in &one[0].prior.data[l * l..2 * l * l] {
        assert!((x - 1.0 / l as f64).abs() < 1e-12);
    }
}

#[test]
fn without_positions_the_encoder_is_permutation_equivariant() {
    // Mean pooling over an equivariant encoder is invariant: permuting the real tokens (and
    // their padding flags with them) must not change the output, to rounding.
    let (model, mut store) = model_f64(
        tiny(
            BiasConfig::None(NoOptions),
            OutputKind::Classes(3),
            Pooling::Mean,
        ),
        4,
    );
    for v in store.values_mut() {
        for x in &mut v.data {
            *x *= 10.0;
        }
    }
    let ids = [1usize, 2, 3, 4, 1, 2];
    let perm = [3usize, 0, 5, 1, 4, 2];
    let run = |ids: Vec<usize>| {
        let pad = ids.iter().map(|&t| t == 0).collect();
        let b = Batch {
            b: 1,
            l: 6,
            input: BatchInput::Tokens(ids),
            pad,
        };
        let views = model.inspect(&store, &b, None).unwrap();
        let mut t = Tape::eval();
        let p = store.bind(&mut t);
        let out = model
            .forward(&mut t, &p, &b, &ForwardOpts::default())
            .output;
        (t.value(out).data.clone(), views)
    };
    let (a, va) = run(ids.to_vec());
    let (b, vb) = run(perm.iter().map(|&k| ids[k]).collect());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-10, "outputs {a:?} vs {b:?}");
    }
    // The attention matrix permutes with the tokens: post_b[i][j] = post_a[perm i][perm j].
    let (pa, pb) = (&va[0].posterior.data, &vb[0].posterior.data);
    for hh in 0..2 {
        for i in 0..6 {
            for j in 0..6 {
                let x = pb[(hh * 6 + i) * 6 + j];
                let y = pa[(hh * 6 + perm[i]) * 6 + perm[j]];
                assert!((x - y).abs() < 1e-10);
            }
        }
    }
    // A position-aware model is not invariant to the same permutation.
    let (model_t5, store_t5) =
        model_f64(tiny(family("t5"), OutputKind::Classes(3), Pooling::Mean), 4);
    let mut store_t5 = store_t5;
    for v in store_t5.values_mut() {
        for x in &mut v.data {
            *x *= 10.0;
        }
    }
    let out = |ids: Vec<usize>| {
        let b = Batch {
            b: 1,
            l: 6,
            pad: vec![false; 6],
            input: BatchInput::Tokens(ids),
        };
        let mut t = Tape::eval();
        let p = store_t5.bind(&mut t);
        let o = model_t5
            .forward(&mut t, &p, &b, &ForwardOpts::default())
            .output;
        t.value(o).data.clone()
    };
    let (a, b) = (
        out(ids.to_vec()),
        out(perm.iter().map(|&k| ids[k]).collect()),
    );
    assert!(a.iter().zip(&b).any(|(x, y)| (x - y).abs() > 1e-6));
}

#[test]
fn mass_radius_finds_the_smallest_window() {
    assert_eq!(mass_radius(&[0.0, 0.0, 1.0, 0.0], 0.9), (2, 0));
    assert_eq!(mass_radius(&[0.05, 0.1, 0.7, 0.1, 0.05], 0.9), (2, 1));
    assert_eq!(mass_radius(&[0.05, 0.1, 0.7, 0.1, 0.05], 0.95), (2, 2));
    // The window clips at the edge: the mode at 0 needs offsets 0..=2.
    assert_eq!(mass_radius(&[0.5, 0.3, 0.15, 0.05], 0.9), (0, 2));
    let uniform = vec![0.1; 10];
    let (m, r) = mass_radius(&uniform, 0.9);
    assert_eq!(m, 0);
    assert_eq!(r, 8);
}

#[test]
fn bad_configs_and_batches_are_errors() {
    let base = tiny(
        BiasConfig::None(NoOptions),
        OutputKind::Classes(3),
        Pooling::Last,
    );
    let mut c = base.clone();
    c.heads = 3;
    assert!(
        Model::<f64>::new(c, &mut ParamStore::new(), 0)
            .unwrap_err()
            .contains("heads")
    );
    let mut c = base.clone();
    c.heads = 0;
    assert!(Model::<f64>::new(c, &mut ParamStore::new(), 0).is_err());
    let mut c = base.clone();
    c.max_len = 1;
    assert!(
        Model::<f64>::new(c, &mut ParamStore::new(), 0)
            .unwrap_err()
            .contains("seq-len")
    );
    let (model, _) = model_f64(base, 0);
    let mut b = batch();
    b.input = BatchInput::Tokens(vec![9; 12]);
    assert!(model.check_batch(&b).unwrap_err().contains("vocabulary"));
    let mut b = batch();
    b.pad = vec![true; 12];
    assert!(model.check_batch(&b).unwrap_err().contains("all padding"));
}

#[test]
fn a_tiny_transformer_overfits_one_batch() {
    // Sequences 0 and 1 hold the same tokens in another order, so the model must use positions.
    let ids = vec![
        1, 2, 3, 4, 1, 2, 2, 1, 3, 4, 1, 2, 3, 4, 2, 1, 2, 1, 4, 3, 1, 2, 1, 2,
    ];
    let batch = Batch {
        b: 4,
        l: 6,
        pad: vec![false; 24],
        input: BatchInput::Tokens(ids),
    };
    let y = Targets::Classes(vec![0, 1, 2, 1]);
    let mut store = ParamStore::<f32>::new();
    // Default T5 buckets are exact up to |n| = 7, so the last slot can tell slot 0 from slot 1
    // (the 8-bucket table of the other tests puts both in one bucket: no model could).
    let mut cfg = tiny(
        BiasConfig::from_name("t5").unwrap(),
        OutputKind::Classes(3),
        Pooling::Last,
    );
    cfg.d_model = 16;
    let model = Model::new(cfg, &mut store, 11).unwrap();
    let mut adam = Adam::<f32>::new(AdamConfig::tf(1e-2), &store);
    let mut first = None;
    let mut last = 0.0;
    for _ in 0..200 {
        let mut t = Tape::<f32>::new();
        let p = store.bind(&mut t);
        let fwd = model.forward(&mut t, &p, &batch, &ForwardOpts::default());
        let loss = model.loss(&mut t, fwd.output, &y);
        last = t.value(loss).data[0];
        first.get_or_insert(last);
        let g = t.backward(loss);
        let grads = store.grads(&p, &g);
        adam.update(&mut store, &grads);
    }
    let first = first.unwrap();
    assert!(
        first > 1.0 && last < 0.05,
        "loss went from {first} to {last}"
    );
}

/// Every parameter's gradient, and the output, of one forward/backward on a training tape.
fn output_and_grads(
    model: &Model<f64>,
    store: &ParamStore<f64>,
    batch: &Batch,
    y: &Targets,
    whole_graph: bool,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut t = Tape::new();
    let p = store.bind(&mut t);
    let opts = ForwardOpts {
        seed: 99,
        bias_heads: None,
        whole_graph,
    };
    let fwd = model.forward(&mut t, &p, batch, &opts);
    let out = t.value(fwd.output).data.clone();
    let loss = model.loss(&mut t, fwd.output, y);
    let g = t.backward(loss);
    let grads = store
        .grads(&p, &g)
        .into_iter()
        .map(|x| x.map(|x| x.data.clone()).unwrap_or_default())
        .collect();
    (out, grads)
}

/// `|a - b| <= 1e-10 · max(|a|, |b|)` elementwise, or both within 1e-13 of each other: some
/// gradients are zero in exact arithmetic (a key projection's bias cannot move a softmax) and
/// come out as the rounding of order-1 terms that cancel, ~1e-17, in a different order per path.
fn assert_close(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let tol = (1e-10 * x.abs().max(y.abs())).max(1e-13);
        assert!((x - y).abs() <= tol, "{what}[{i}]: {x} vs {y}");
    }
}

#[test]
fn pruned_last_block_equals_whole_graph_for_every_family_with_dropout() {
    let batch = batch();
    let y = Targets::Classes(vec![2, 0]);
    for name in FAMILIES {
        for layers in [1, 2] {
            for pooling in [Pooling::Last, Pooling::First] {
                for scope in [
                    BiasScope::Shared,
                    BiasScope::FirstLayer,
                    BiasScope::PerLayer,
                ] {
                    if layers == 1 && scope != BiasScope::Shared {
                        continue;
                    }
                    let mut bias = family(name);
                    // AT5's MLP dropout per grid cell (the paper preset's) with 1 layer, per
                    // offset with 2.
                    if let Some(m) = bias.mlp_options_mut() {
                        (m.dropout, m.per_cell) = (0.3, layers == 1);
                    }
                    let mut cfg = tiny(bias, OutputKind::Classes(3), pooling);
                    cfg.layers = layers;
                    cfg.bias_scope = scope;
                    cfg.dropout = Dropouts {
                        input: 0.2,
                        hidden: 0.3,
                        attention: 0.4,
                    };
                    let (model, mut store) = model_f64(cfg, 11);
                    for v in store.values_mut() {
                        for x in &mut v.data {
                            *x *= 8.0;
                        }
                    }
                    let what = format!("{name} layers {layers} {pooling:?} {scope:?}");
                    let (out_p, g_p) = output_and_grads(&model, &store, &batch, &y, false);
                    let (out_w, g_w) = output_and_grads(&model, &store, &batch, &y, true);
                    assert_close(&format!("{what}: output"), &out_p, &out_w);
                    for (k, (a, b)) in g_p.iter().zip(&g_w).enumerate() {
                        assert!(
                            !b.is_empty(),
                            "{what}: {} got no gradient",
                            store.names()[k]
                        );
                        assert_close(&format!("{what}: {}", store.names()[k]), a, b);
                    }
                }
            }
        }
    }
}

#[test]
fn pruned_path_gradchecks_with_two_layers_and_first_pooling() {
    let batch = batch();
    let y = Targets::Classes(vec![1, 2]);
    for name in ["t5", "at5", "fire", "alibi"] {
        let mut cfg = tiny(family(name), OutputKind::Classes(3), Pooling::First);
        cfg.layers = 2;
        let (model, mut store) = model_f64(cfg, 5);
        for v in store.values_mut() {
            for x in &mut v.data {
                *x *= 8.0;
            }
        }
        // The pruned path is what runs: the last block's attention has one query row.
        let mut t = Tape::new();
        let p = store.bind(&mut t);
        let fwd = model.forward(&mut t, &p, &batch, &ForwardOpts::default());
        assert_eq!(t.shape(fwd.traces[1].probs), &[2, 2, 1, 6]);
        assert_eq!(t.shape(fwd.traces[0].probs), &[2, 2, 6, 6]);
        let inputs: Vec<Tensor> = store.values().to_vec();
        let rep = gradcheck(|t, vars| loss_of(&model, t, vars, &batch, &y), &inputs);
        assert!(
            rep.passed && rep.max_rel_err <= 1e-5,
            "{name}: {rep:?} at parameter {}",
            store.names()[rep.worst.0]
        );
    }
}

#[test]
fn mean_pooling_and_whole_graph_keep_every_row() {
    let batch = batch();
    for (pooling, whole) in [(Pooling::Mean, false), (Pooling::Last, true)] {
        let (model, store) = model_f64(tiny(family("t5"), OutputKind::Classes(3), pooling), 2);
        let mut t = Tape::new();
        let p = store.bind(&mut t);
        let opts = ForwardOpts {
            whole_graph: whole,
            ..ForwardOpts::default()
        };
        let fwd = model.forward(&mut t, &p, &batch, &opts);
        assert_eq!(t.shape(fwd.traces[0].probs), &[2, 2, 6, 6], "{pooling:?}");
        assert_eq!(t.shape(fwd.biases[0].unwrap()), &[2, 6, 6], "{pooling:?}");
    }
}

/// One f32 training forward/backward of the pruned path, large enough for the parallel ops,
/// with every dropout on: the output and every gradient as bits.
fn pruned_step_bits() -> Vec<u32> {
    let (b, l) = (32, 64);
    let mut cfg = tiny(
        BiasConfig::from_name("at5").unwrap(),
        OutputKind::Classes(3),
        Pooling::Last,
    );
    cfg.d_model = 64;
    cfg.heads = 4;
    cfg.ffn = 128;
    cfg.max_len = l;
    cfg.dropout = Dropouts {
        input: 0.1,
        hidden: 0.2,
        attention: 0.3,
    };
    let mut store = ParamStore::<f32>::new();
    let model = Model::new(cfg, &mut store, 4).unwrap();
    let ids: Vec<usize> = (0..b * l).map(|i| 1 + (i * 7 + i / 5) % 4).collect();
    let batch = Batch {
        b,
        l,
        pad: vec![false; b * l],
        input: BatchInput::Tokens(ids),
    };
    let y = Targets::Classes((0..b).map(|i| i % 3).collect());
    let mut t = Tape::<f32>::new();
    let p = store.bind(&mut t);
    let opts = ForwardOpts {
        seed: 3,
        ..ForwardOpts::default()
    };
    let fwd = model.forward(&mut t, &p, &batch, &opts);
    let loss = model.loss(&mut t, fwd.output, &y);
    let g = t.backward(loss);
    let mut bits: Vec<u32> = t
        .value(fwd.output)
        .data
        .iter()
        .map(|v| v.to_bits())
        .collect();
    for grad in store.grads(&p, &g).into_iter().flatten() {
        bits.extend(grad.data.iter().map(|v| v.to_bits()));
    }
    bits
}

#[test]
fn pruned_training_step_is_bit_identical_at_one_and_two_threads() {
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let one = pool(1).install(pruned_step_bits);
    assert!(one.len() > 1000);
    assert!(
        one == pool(2).install(pruned_step_bits),
        "thread count changed the bits"
    );
}

/// The output of a forward on an evaluation tape, as bits.
fn eval_tape_bits(
    model: &Model<f32>,
    store: &ParamStore<f32>,
    batch: &Batch,
    opts: &ForwardOpts,
) -> Vec<u32> {
    let mut t = Tape::<f32>::eval();
    let p = store.bind(&mut t);
    let out = model.forward(&mut t, &p, batch, opts).output;
    t.value(out).data.iter().map(|v| v.to_bits()).collect()
}

/// `b` sequences of length `l`, each padded after a length of its own (at least 1).
fn padded_batch(b: usize, l: usize, features: bool) -> Batch {
    let lens: Vec<usize> = (0..b).map(|s| l - (s * 5) % (l - 1)).collect();
    let pad: Vec<bool> = lens
        .iter()
        .flat_map(|&n| (0..l).map(move |t| t >= n))
        .collect();
    let input = if features {
        let x = (0..b * l * 2)
            .map(|i| {
                if pad[i / 2] {
                    0.0
                } else {
                    ((i * 37) % 101) as f64 / 101.0
                }
            })
            .collect();
        BatchInput::Features(x)
    } else {
        let ids = (0..b * l)
            .map(|i| if pad[i] { 0 } else { 1 + (i * 7 + i / 5) % 4 })
            .collect();
        BatchInput::Tokens(ids)
    };
    Batch { b, l, input, pad }
}

#[test]
fn predict_is_the_evaluation_tapes_output_bit_for_bit() {
    // Large enough that every op takes its parallel path (over 2^15 elements, attention over
    // 2^16 multiply-adds) and the GEMMs more than one tile; every dropout rate set, as an
    // evaluation must ignore them.
    let (b, l) = (48, 24);
    let mut checked = 0;
    for name in FAMILIES {
        for features in [false, true] {
            for (layers, scope) in [
                (1, BiasScope::Shared),
                (2, BiasScope::Shared),
                (2, BiasScope::FirstLayer),
                (2, BiasScope::PerLayer),
            ] {
                for pooling in [Pooling::Last, Pooling::First, Pooling::Mean] {
                    let mut bias = family(name);
                    if let Some(m) = bias.mlp_options_mut() {
                        (m.dropout, m.per_cell) = (0.3, layers == 1);
                    }
                    let output = if features {
                        OutputKind::Regression
                    } else {
                        OutputKind::Classes(3)
                    };
                    let mut cfg = tiny(bias, output, pooling);
                    cfg.input = if features {
                        InputKind::Features { dim: 2 }
                    } else {
                        InputKind::Tokens { vocab: 5 }
                    };
                    (cfg.d_model, cfg.heads, cfg.ffn, cfg.max_len) = (32, 4, 64, l);
                    (cfg.layers, cfg.bias_scope) = (layers, scope);
                    cfg.dropout = Dropouts {
                        input: 0.2,
                        hidden: 0.3,
                        attention: 0.4,
                    };
                    cfg.head.norm = !features;
                    cfg.unbiased_heads = if layers == 2 { vec![3] } else { Vec::new() };
                    let mut store = ParamStore::<f32>::new();
                    let model = Model::new(cfg, &mut store, 5).unwrap();
                    // Weights 4x their init: attention far from uniform, biases that matter.
                    for v in store.values_mut() {
                        v.data.iter_mut().for_each(|x| *x *= 4.0);
                    }
                    let batch = padded_batch(b, l, features);
                    model.check_batch(&batch).unwrap();
                    for (whole_graph, bias_heads) in [
                        (false, None),
                        (true, None),
                        (false, Some(vec![true, false, true, true])),
                    ] {
                        let opts = ForwardOpts {
                            seed: 17,
                            bias_heads,
                            whole_graph,
                        };
                        let what = format!(
                            "{name} features {features} layers {layers} {scope:?} {pooling:?} {opts:?}"
                        );
                        let want = eval_tape_bits(&model, &store, &batch, &opts);
                        let got: Vec<u32> = model
                            .predict(&store, &batch, &opts)
                            .data
                            .iter()
                            .map(|v| v.to_bits())
                            .collect();
                        assert_eq!(got.len(), if features { b } else { 3 * b }, "{what}");
                        assert!(got.iter().any(|&x| x != got[0]), "{what}: constant output");
                        assert_eq!(got, want, "{what}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, FAMILIES.len() * 2 * 4 * 3 * 3);
}
