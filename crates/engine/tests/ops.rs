//! Every op gradchecked in f64 on several shapes (broadcasting included), plus forward values,
//! stability, determinism across thread counts, and an end-to-end descent check.
use at5_engine::autodiff::MaskRows;
use at5_engine::{Tape, Tensor, Var, gradcheck};
use proptest::prelude::*;

fn check(name: &str, f: impl Fn(&mut Tape, &[Var]) -> Var, inputs: &[Tensor]) {
    let r = gradcheck(f, inputs);
    assert!(r.passed && r.max_rel_err <= 1e-6, "{name}: {r:?}");
    assert!(r.checked > 0, "{name}: nothing checked");
}

/// A rayon pool of `n` threads, for checking that results do not depend on the thread count.
fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

fn u(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    Tensor::uniform(shape, lo, hi, seed)
}

/// Values in [lo, hi) with alternating signs: away from 0 (kinks, poles) on both sides.
fn signed(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let mut t = u(shape, lo, hi, seed);
    t.data.iter_mut().step_by(2).for_each(|v| *v = -*v);
    t
}

const SHAPES: [&[usize]; 3] = [&[3], &[2, 3], &[2, 2, 3]];
/// Pairs that broadcast, from equal shapes to both sides stretching.
const PAIRS: [(&[usize], &[usize]); 5] = [
    (&[2, 3], &[2, 3]),
    (&[2, 1, 3], &[4, 3]),
    (&[3], &[2, 3]),
    (&[2, 3], &[1]),
    (&[4, 1], &[1, 3]),
];

fn check_binary(name: &str, f: fn(&mut Tape, Var, Var) -> Var, b_lo: f64) {
    for (i, (sa, sb)) in PAIRS.iter().enumerate() {
        let (a, b) = (
            signed(sa, 0.2, 1.0, i as u64),
            u(sb, b_lo, 1.5, 50 + i as u64),
        );
        check(
            &format!("{name} {sa:?} {sb:?}"),
            |t, v| f(t, v[0], v[1]),
            &[a, b],
        );
    }
}

fn check_unary(name: &str, f: impl Fn(&mut Tape, Var) -> Var, lo: f64, hi: f64, sign: bool) {
    for (i, s) in SHAPES.iter().enumerate() {
        let x = if sign {
            signed(s, lo, hi, i as u64)
        } else {
            u(s, lo, hi, i as u64)
        };
        check(&format!("{name} {s:?}"), |t, v| f(t, v[0]), &[x]);
    }
}

#[test]
fn leaf_gets_gradient() {
    let mut t: Tape = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[2], vec![1.0, 2.0]));
    let c = t.constant(Tensor::from_vec(&[2], vec![5.0, 7.0]));
    let y = t.mul(x, c);
    let cc = t.exp(c); // reaches no leaf: records no backward state, gets no gradient
    let s = t.sum(y);
    let g = t.backward(s);
    assert_eq!(g.get(x).unwrap().data, vec![5.0, 7.0]);
    assert!(g.get(c).is_none() && g.get(cc).is_none());
}

#[test]
fn gradcheck_add() {
    check_binary("add", |t, a, b| t.add(a, b), 0.1);
}
#[test]
fn gradcheck_sub() {
    check_binary("sub", |t, a, b| t.sub(a, b), 0.1);
}
#[test]
fn gradcheck_mul() {
    check_binary("mul", |t, a, b| t.mul(a, b), 0.1);
}
#[test]
fn gradcheck_div() {
    check_binary("div", |t, a, b| t.div(a, b), 0.5);
}

#[test]
fn broadcast_values_follow_numpy() {
    let mut t: Tape = Tape::new();
    let a = t.leaf(Tensor::from_vec(&[2, 1], vec![1.0, 2.0]));
    let b = t.leaf(Tensor::from_vec(&[3], vec![10.0, 20.0, 30.0]));
    let y = t.add(a, b);
    assert_eq!(t.shape(y), &[2, 3]);
    assert_eq!(t.value(y).data, vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    let s = t.sum(y);
    let g = t.backward(s);
    assert_eq!(g.get(a).unwrap().data, vec![3.0, 3.0]);
    assert_eq!(g.get(b).unwrap().data, vec![2.0, 2.0, 2.0]);
}

#[test]
#[should_panic(expected = "add: shapes [2, 3] and [4] do not broadcast")]
fn broadcast_error_names_both_shapes() {
    let mut t: Tape = Tape::new();
    let a = t.leaf(Tensor::zeros(&[2, 3]));
    let b = t.leaf(Tensor::zeros(&[4]));
    t.add(a, b);
}

#[test]
fn gradcheck_add_mask() {
    let mask = Tensor::from_vec(&[1, 3], vec![0.0, f64::NEG_INFINITY, 0.0]);
    let x = u(&[2, 3], -1.0, 1.0, 3);
    check(
        "add_mask + softmax",
        |t, v| {
            let m = t.add_mask(v[0], &mask);
            t.softmax(m)
        },
        std::slice::from_ref(&x),
    );
    let mut t: Tape = Tape::new();
    let xv = t.leaf(x);
    let m = t.add_mask(xv, &mask);
    let p = t.softmax(m);
    // a masked key gets exactly zero weight, whatever its score
    assert_eq!(t.value(p).data[1], 0.0);
    assert_eq!(t.value(p).data[4], 0.0);
}

#[test]
fn gradcheck_scale_neg() {
    check_unary("scale", |t, x| t.scale(x, -2.5), -1.0, 1.0, false);
    check_unary("neg", |t, x| t.neg(x), -1.0, 1.0, false);
}
#[test]
fn gradcheck_add_scalar() {
    check_unary("add_scalar", |t, x| t.add_scalar(x, 3.0), -1.0, 1.0, false);
}
#[test]
fn gradcheck_exp() {
    check_unary("exp", |t, x| t.exp(x), -2.0, 2.0, false);
}
#[test]
fn gradcheck_ln() {
    check_unary("ln", |t, x| t.ln(x), 0.2, 3.0, false);
}
#[test]
fn gradcheck_sqrt() {
    check_unary("sqrt", |t, x| t.sqrt(x), 0.2, 3.0, false);
}
#[test]
fn gradcheck_powf() {
    check_unary("powf 1.7", |t, x| t.powf(x, 1.7), 0.2, 2.0, false);
    check_unary("powf 3", |t, x| t.powf(x, 3.0), 0.2, 2.0, false);
}
#[test]
fn gradcheck_relu() {
    check_unary("relu", |t, x| t.relu(x), 0.1, 1.0, true);
}
#[test]
fn gradcheck_gelu() {
    check_unary("gelu", |t, x| t.gelu(x), -3.0, 3.0, false);
}
#[test]
fn gradcheck_sigmoid() {
    check_unary("sigmoid", |t, x| t.sigmoid(x), -4.0, 4.0, false);
}
#[test]
fn gradcheck_tanh() {
    check_unary("tanh", |t, x| t.tanh(x), -2.0, 2.0, false);
}

#[test]
fn gradcheck_matmul() {
    // (a shape, b shape, ta, tb)
    let cases: [(&[usize], &[usize], bool, bool); 8] = [
        (&[2, 3], &[3, 4], false, false),
        (&[3, 2], &[3, 4], true, false),
        (&[2, 3], &[4, 3], false, true),
        (&[3, 2], &[4, 3], true, true),
        (&[2, 3, 4], &[2, 4, 5], false, false),
        (&[2, 3, 4], &[4, 5], false, false),
        (&[2, 1, 3, 4], &[3, 5, 4], false, true),
        (&[4, 3], &[2, 2, 4, 2], true, false),
    ];
    for (i, (sa, sb, ta, tb)) in cases.into_iter().enumerate() {
        let (a, b) = (u(sa, -1.0, 1.0, i as u64), u(sb, -1.0, 1.0, 90 + i as u64));
        check(
            &format!("matmul {sa:?} {sb:?} {ta} {tb}"),
            |t, v| t.matmul_t(v[0], v[1], ta, tb),
            &[a, b],
        );
    }
}

#[test]
fn matmul_forward_matches_hand_result() {
    let mut t: Tape = Tape::new();
    let a = t.leaf(Tensor::from_vec(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]));
    let b = t.leaf(Tensor::from_vec(&[2, 2], vec![5.0, 6.0, 7.0, 8.0]));
    let c = t.matmul(a, b);
    assert_eq!(t.value(c).data, vec![19.0, 22.0, 43.0, 50.0]);
    let ct = t.matmul_t(a, b, true, true); // a^T b^T = (b a)^T
    assert_eq!(t.value(ct).data, vec![23.0, 31.0, 34.0, 46.0]);
}

#[test]
#[should_panic(expected = "matmul: shapes [2, 3] and [4, 5]")]
fn matmul_shape_error_names_both_shapes() {
    let mut t: Tape = Tape::new();
    let a = t.leaf(Tensor::zeros(&[2, 3]));
    let b = t.leaf(Tensor::zeros(&[4, 5]));
    t.matmul(a, b);
}

#[test]
fn gradcheck_permute_transpose() {
    let x = u(&[2, 3, 4], -1.0, 1.0, 1);
    for perm in [[0, 2, 1], [2, 0, 1], [1, 2, 0]] {
        check(
            &format!("permute {perm:?}"),
            |t, v| t.permute(v[0], &perm),
            std::slice::from_ref(&x),
        );
    }
    check("transpose", |t, v| t.transpose(v[0]), &[x]);
    let mut t: Tape = Tape::new();
    let v = t.leaf(Tensor::from_vec(&[2, 3], (0..6).map(f64::from).collect()));
    let y = t.transpose(v);
    assert_eq!(t.value(y).data, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let v3 = t.leaf(Tensor::from_vec(
        &[2, 1, 3],
        (0..6).map(f64::from).collect(),
    ));
    let p = t.permute(v3, &[2, 0, 1]);
    assert_eq!(t.shape(p), &[3, 2, 1]);
    assert_eq!(t.value(p).data, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

/// Every permutation of a 4-D tensor (those keeping the last axis copy whole rows) against
/// index arithmetic, forward and the backward's accumulation.
#[test]
fn permute_matches_index_arithmetic() {
    let shape = [2, 3, 4, 5];
    let x: Vec<f64> = (0..120).map(f64::from).collect();
    let strides = [60, 20, 5, 1];
    let mut perms = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                let d = 6 - a - b - c;
                if a != b && a != c && b != c && d < 4 && d != a && d != b && d != c {
                    perms.push([a, b, c, d]);
                }
            }
        }
    }
    assert_eq!(perms.len(), 24);
    for perm in perms {
        let mut t: Tape = Tape::new();
        let v = t.leaf(Tensor::from_vec(&shape, x.clone()));
        let p = t.permute(v, &perm);
        let os: Vec<usize> = perm.iter().map(|&q| shape[q]).collect();
        assert_eq!(t.shape(p), os.as_slice());
        let mut want = Vec::new();
        for i in 0..os[0] {
            for j in 0..os[1] {
                for k in 0..os[2] {
                    for l in 0..os[3] {
                        let at = [i, j, k, l];
                        let mut src = 0;
                        for (axis, &q) in perm.iter().enumerate() {
                            src += at[axis] * strides[q];
                        }
                        want.push(x[src]);
                    }
                }
            }
        }
        assert_eq!(t.value(p).data, want, "{perm:?}");
        // Backward: the output's gradient is its own index, so each input gets its position
        // in the output, once.
        let w = t.constant(Tensor::from_vec(&os, (0..120).map(f64::from).collect()));
        let y = t.mul(p, w);
        let loss = t.sum(y);
        let g = t.backward(loss);
        let gx = &g.get(v).unwrap().data;
        for (o, &src) in want.iter().enumerate() {
            assert_eq!(gx[src as usize], o as f64, "{perm:?}");
        }
    }
}

#[test]
fn gradcheck_reshape() {
    let x = u(&[2, 3, 2], -1.0, 1.0, 1);
    for s in [&[12][..], &[3, 4], &[6, 1, 2]] {
        check(
            "reshape",
            |t, v| t.reshape(v[0], s),
            std::slice::from_ref(&x),
        );
    }
}

#[test]
fn gradcheck_concat() {
    let (a, b) = (u(&[2, 3], -1.0, 1.0, 1), u(&[2, 2], -1.0, 1.0, 2));
    check(
        "concat axis 1",
        |t, v| t.concat(&[v[0], v[1], v[0]], 1),
        &[a.clone(), b],
    );
    let c = u(&[1, 3], -1.0, 1.0, 3);
    check("concat axis 0", |t, v| t.concat(&[v[0], v[1]], 0), &[a, c]);
    let mut t: Tape = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[2, 1], vec![1.0, 2.0]));
    let y = t.leaf(Tensor::from_vec(&[2, 1], vec![3.0, 4.0]));
    let z = t.concat(&[x, y], 1);
    assert_eq!(t.value(z).data, vec![1.0, 3.0, 2.0, 4.0]);
}

#[test]
fn gradcheck_slice() {
    let x = u(&[3, 4, 2], -1.0, 1.0, 1);
    for (axis, a, b) in [(0, 1, 3), (1, 0, 2), (2, 1, 2), (1, 1, 4)] {
        check(
            "slice",
            |t, v| t.slice(v[0], axis, a, b),
            std::slice::from_ref(&x),
        );
    }
    let mut t: Tape = Tape::new();
    let v = t.leaf(Tensor::from_vec(&[2, 3], (0..6).map(f64::from).collect()));
    let s = t.slice(v, 1, 1, 3);
    assert_eq!(t.value(s).data, vec![1.0, 2.0, 4.0, 5.0]);
}

#[test]
fn gradcheck_sum() {
    check_unary("sum", |t, x| t.sum(x), -1.0, 1.0, false);
    check_unary("mean", |t, x| t.mean(x), -1.0, 1.0, false);
}

#[test]
fn gradcheck_sum_mean_axis() {
    let x = u(&[2, 3, 4], -1.0, 1.0, 1);
    for axis in 0..3 {
        for keep in [false, true] {
            check(
                "sum_axis",
                |t, v| t.sum_axis(v[0], axis, keep),
                std::slice::from_ref(&x),
            );
            check(
                "mean_axis",
                |t, v| t.mean_axis(v[0], axis, keep),
                std::slice::from_ref(&x),
            );
        }
    }
    check("sum_axes", |t, v| t.sum_axes(v[0], &[0, 2], false), &[x]);
    let mut t: Tape = Tape::new();
    let v = t.leaf(Tensor::from_vec(&[2, 3], (0..6).map(f64::from).collect()));
    let s0 = t.sum_axis(v, 0, false);
    let s1 = t.sum_axis(v, 1, true);
    assert_eq!(t.value(s0).data, vec![3.0, 5.0, 7.0]);
    assert_eq!(
        (t.shape(s1), &t.value(s1).data[..]),
        (&[2, 1][..], &[3.0, 12.0][..])
    );
}

#[test]
fn gradcheck_max_axis() {
    // distinct values: no ties, where max has no derivative
    let x = Tensor::from_vec(
        &[2, 3, 2],
        (0..12).map(|i| ((i * 7) % 12) as f64 * 0.3).collect(),
    );
    for axis in 0..3 {
        check(
            "max_axis",
            |t, v| t.max_axis(v[0], axis, false),
            std::slice::from_ref(&x),
        );
    }
    let mut t: Tape = Tape::new();
    let v = t.leaf(Tensor::from_vec(
        &[2, 3],
        vec![1.0, 5.0, 5.0, -1.0, -3.0, -2.0],
    ));
    let m = t.max_axis(v, 1, false);
    assert_eq!(t.value(m).data, vec![5.0, -1.0]);
    let s = t.sum(m);
    let g = t.backward(s);
    // ties send the gradient to the first maximum only
    assert_eq!(g.get(v).unwrap().data, vec![0.0, 1.0, 0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn gradcheck_softmax() {
    check_unary("softmax", |t, x| t.softmax(x), -2.0, 2.0, false);
}
#[test]
fn gradcheck_log_softmax() {
    check_unary("log_softmax", |t, x| t.log_softmax(x), -2.0, 2.0, false);
}

#[test]
fn softmax_equals_exp_of_log_softmax_and_rows_sum_to_one() {
    let mut t: Tape = Tape::new();
    let x = t.leaf(u(&[4, 5], -3.0, 3.0, 9));
    let p = t.softmax(x);
    let lp = t.log_softmax(x);
    let e = t.exp(lp);
    for (a, b) in t.value(p).data.iter().zip(&t.value(e).data) {
        assert!((a - b).abs() < 1e-12);
    }
    for row in t.value(p).data.chunks(5) {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn extreme_logits_are_finite_with_finite_gradients() {
    let logits = Tensor::from_vec(&[1, 3], vec![1000.0, 0.0, -1000.0]);
    for which in 0..4 {
        let mut t: Tape = Tape::new();
        let x = t.leaf(logits.clone());
        let y = match which {
            0 => t.softmax(x),
            1 => t.log_softmax(x),
            2 => t.cross_entropy(x, &[2]),
            _ => t.sigmoid(x),
        };
        let w = t.constant(Tensor::from_vec(t.shape(y), vec![0.5; t.value(y).len()]));
        let yw = t.mul(y, w);
        let s = t.sum(yw);
        let g = t.backward(s);
        assert!(t.value(y).data.iter().all(|v| v.is_finite()), "op {which}");
        assert!(
            g.get(x).unwrap().data.iter().all(|v| v.is_finite()),
            "op {which}"
        );
    }
}

#[test]
fn gradcheck_layer_norm() {
    for (i, s) in [&[4][..], &[3, 4], &[2, 2, 5]].iter().enumerate() {
        let d = *s.last().unwrap();
        let x = u(s, -2.0, 2.0, i as u64);
        let (g, b) = (u(&[d], 0.5, 1.5, 7), u(&[d], -0.5, 0.5, 8));
        check(
            "layer_norm",
            |t, v| t.layer_norm(v[0], v[1], v[2], 1e-5),
            &[x, g, b],
        );
    }
    let mut t: Tape = Tape::new();
    let x = t.leaf(u(&[3, 6], -2.0, 5.0, 1));
    let g = t.leaf(Tensor::full(&[6], 1.0));
    let b = t.leaf(Tensor::zeros(&[6]));
    let y = t.layer_norm(x, g, b, 1e-12);
    for row in t.value(y).data.chunks(6) {
        let mean = row.iter().sum::<f64>() / 6.0;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 6.0;
        assert!(mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-9);
    }
}

#[test]
fn gradcheck_embedding() {
    let table = u(&[5, 3], -1.0, 1.0, 1);
    // repeated ids must accumulate, not overwrite
    for ids in [vec![0, 4, 2], vec![1, 1, 3, 1], vec![2]] {
        check(
            "embedding",
            |t, v| t.embedding(v[0], &ids),
            std::slice::from_ref(&table),
        );
    }
    // Shaped as a token batch [B, L, D]: the same rows, the same gradient.
    check(
        "embedding [2, 3, D]",
        |t, v| t.embedding_shaped(v[0], &[4, 0, 4, 1, 1, 3], &[2, 3]),
        std::slice::from_ref(&table),
    );
    let mut t: Tape = Tape::new();
    let v = t.leaf(Tensor::from_vec(&[2, 1], vec![1.0, 2.0]));
    let e = t.embedding(v, &[1, 1, 0]);
    assert_eq!(t.value(e).data, vec![2.0, 2.0, 1.0]);
    let shaped = t.embedding_shaped(v, &[1, 1, 0, 0], &[2, 2]);
    assert_eq!(t.shape(shaped), [2, 2, 1]);
    assert_eq!(t.value(shaped).data, vec![2.0, 2.0, 1.0, 1.0]);
    let s = t.sum(e);
    assert_eq!(t.backward(s).get(v).unwrap().data, vec![1.0, 2.0]);
}

#[test]
fn gradcheck_dropout() {
    check_unary("dropout", |t, x| t.dropout(x, 0.3, 11), -1.0, 1.0, false);
    let mut t: Tape = Tape::new();
    let x = t.leaf(Tensor::full(&[10_000], 1.0));
    let y = t.dropout(x, 0.25, 5);
    let kept = t.value(y).data.iter().filter(|&&v| v != 0.0).count() as f64 / 10_000.0;
    assert!((kept - 0.75).abs() < 0.02, "kept {kept}");
    assert!(
        t.value(y)
            .data
            .iter()
            .all(|&v| v == 0.0 || (v - 1.0 / 0.75).abs() < 1e-12)
    );
    let y2 = t.dropout(x, 0.25, 5);
    assert_eq!(t.value(y).data, t.value(y2).data, "same seed, same mask");
    let mut e = Tape::<f64>::eval();
    let x = e.constant(Tensor::full(&[4], 1.0));
    assert_eq!(e.dropout(x, 0.5, 5), x, "identity in evaluation");
    // A window of rows: its gradient, and the masks of those rows of the whole tensor.
    let rows = MaskRows { full: 5, first: 2 };
    check(
        "dropout window",
        |t, v| t.dropout_window(v[0], 0.3, 11, Some(rows)),
        &[signed(&[3, 2, 4], 0.1, 1.0, 3)],
    );
    let mut t: Tape = Tape::new();
    let whole = t.leaf(signed(&[3, 5, 4], 0.1, 1.0, 4));
    let dw = t.dropout(whole, 0.3, 11);
    let part = t.slice(whole, 1, 2, 4);
    let dp = t.dropout_window(part, 0.3, 11, Some(rows));
    let want = t.slice(dw, 1, 2, 4);
    assert_eq!(t.value(dp).data, t.value(want).data);
    // Large enough that the mask is drawn in parallel tasks, each seeking into the stream,
    // with windows that start and end inside tasks and an outer index that spans two.
    let (full, inner) = (37, 1001);
    let mut t: Tape = Tape::new();
    let whole = t.leaf(signed(&[3, full, inner], 0.1, 1.0, 5));
    let dw = t.dropout(whole, 0.3, 12);
    for (first, r) in [(0, 37), (5, 20), (36, 1)] {
        let part = t.slice(whole, 1, first, first + r);
        let rows = MaskRows { full, first };
        let dp = t.dropout_window(part, 0.3, 12, Some(rows));
        let want = t.slice(dw, 1, first, first + r);
        assert_eq!(t.value(dp).data, t.value(want).data, "rows {first}+{r}");
    }
}

#[test]
fn dropout_masks_are_the_std_rng_stream() {
    // Masks are drawn from ChaCha12 by name so they can seek; it must be the stream
    // `StdRng::seed_from_u64` gives, so masks (and results) stay what they were.
    use rand::{RngExt, SeedableRng};
    // 70 001 elements: several parallel tasks, the last word part full.
    for (seed, n) in [(0, 1000), (5, 1000), (0xD00D_1234, 1000), (9, 70_001)] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let want: Vec<f64> = (0..n)
            .map(|_| {
                if rng.random::<f64>() >= 0.4 {
                    1.0 / 0.6
                } else {
                    0.0
                }
            })
            .collect();
        let mut t: Tape = Tape::new();
        let x = t.leaf(Tensor::full(&[n], 1.0));
        let y = t.dropout(x, 0.4, seed);
        assert_eq!(t.value(y).len(), n);
        for (a, b) in t.value(y).data.iter().zip(&want) {
            assert!((a - b).abs() < 1e-12, "seed {seed}");
        }
    }
}

#[test]
fn gradcheck_where() {
    let cond = [true, false, false, true, true, false];
    let (a, b) = (u(&[2, 3], -1.0, 1.0, 1), u(&[2, 3], -1.0, 1.0, 2));
    check("where", |t, v| t.where_(&cond, v[0], v[1]), &[a, b]);
    // ln of a negative number in the branch not taken: no NaN reaches the input's gradient
    let mut t: Tape = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[2], vec![-1.0, 2.0]));
    let l = t.ln(x);
    let z = t.constant(Tensor::zeros(&[2]));
    let w = t.where_(&[false, true], l, z);
    let s = t.sum(w);
    let g = t.backward(s);
    assert_eq!(g.get(x).unwrap().data, vec![0.0, 0.5]);
}

#[test]
fn gradcheck_cross_entropy() {
    for (n, c) in [(1, 3), (4, 5), (3, 2)] {
        let targets: Vec<usize> = (0..n).map(|i| (i * 7) % c).collect();
        let x = u(&[n, c], -2.0, 2.0, n as u64);
        check(
            "cross_entropy",
            |t, v| t.cross_entropy(v[0], &targets),
            &[x],
        );
    }
}

#[test]
fn fused_cross_entropy_equals_composed() {
    let mut t: Tape = Tape::new();
    let x = t.leaf(u(&[3, 4], -3.0, 3.0, 4));
    let fused = t.cross_entropy(x, &[1, 0, 3]);
    let ls = t.log_softmax(x);
    let pick = Tensor::from_vec(
        &[3, 4],
        (0..12)
            .map(|i| {
                if [1, 4, 11].contains(&i) {
                    -1.0 / 3.0
                } else {
                    0.0
                }
            })
            .collect(),
    );
    let w = t.constant(pick);
    let m = t.mul(ls, w);
    let composed = t.sum(m);
    let (a, b) = (t.value(fused).data[0], t.value(composed).data[0]);
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    let (ga, gb) = (t.backward(fused), t.backward(composed));
    for (p, q) in ga.get(x).unwrap().data.iter().zip(&gb.get(x).unwrap().data) {
        assert!((p - q).abs() < 1e-12);
    }
}

#[test]
fn gradcheck_mse() {
    for (i, s) in SHAPES.iter().enumerate() {
        let (p, y) = (u(s, -1.0, 1.0, i as u64), u(s, -1.0, 1.0, 40 + i as u64));
        check("mse", |t, v| t.mse(v[0], v[1]), &[p, y]);
    }
}

#[test]
fn reused_var_accumulates() {
    let mut t: Tape = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[2], vec![3.0, -1.0]));
    let y = t.mul(x, x);
    let z = t.add(y, x);
    let s = t.sum(z);
    assert_eq!(t.backward(s).get(x).unwrap().data, vec![7.0, -1.0]); // 2x + 1
}

#[test]
fn eval_tape_saves_no_backward_state_and_f32_agrees_with_f64() {
    let x64 = u(&[3, 4], -1.0, 1.0, 2);
    let run = |t: &mut Tape<f32>| {
        let x = t.constant(x64.cast());
        let g = t.constant(Tensor::full(&[4], 1.0));
        let b = t.constant(Tensor::zeros(&[4]));
        let y = t.layer_norm(x, g, b, 1e-5);
        let y = t.gelu(y);
        t.value(y).clone()
    };
    let mut tr = Tape::<f32>::new();
    let mut ev = Tape::<f32>::eval();
    assert_eq!(run(&mut tr), run(&mut ev));
    let mut t = Tape::<f64>::new();
    let x = t.constant(x64.clone());
    let g = t.constant(Tensor::full(&[4], 1.0));
    let b = t.constant(Tensor::zeros(&[4]));
    let y = t.layer_norm(x, g, b, 1e-5);
    let y = t.gelu(y);
    for (a, b) in run(&mut ev).data.iter().zip(&t.value(y).data) {
        assert!((*a as f64 - b).abs() < 1e-5);
    }
}

/// A 2-8-1 tanh MLP fits XOR by plain gradient descent: gradients point downhill.
#[test]
fn mlp_fits_xor_by_gradient_descent() {
    let x = Tensor::from_vec(&[4, 2], vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
    let y = Tensor::from_vec(&[4, 1], vec![0.0, 1.0, 1.0, 0.0]);
    let mut params = [
        u(&[2, 8], -1.0, 1.0, 1),
        Tensor::zeros(&[8]),
        u(&[8, 1], -1.0, 1.0, 2),
        Tensor::zeros(&[1]),
    ];
    let mut loss = f64::INFINITY;
    let mut t: Tape = Tape::new();
    for _ in 0..2000 {
        t.clear();
        let p: Vec<Var> = params.iter().map(|p| t.leaf(p.clone())).collect();
        let xv = t.constant(x.clone());
        let yv = t.constant(y.clone());
        let h = t.matmul(xv, p[0]);
        let h = t.add(h, p[1]);
        let h = t.tanh(h);
        let o = t.matmul(h, p[2]);
        let o = t.add(o, p[3]);
        let l = t.mse(o, yv);
        loss = t.value(l).data[0];
        let g = t.backward(l);
        for (w, v) in params.iter_mut().zip(&p) {
            for (a, d) in w.data.iter_mut().zip(&g.get(*v).unwrap().data) {
                *a -= 0.2 * d;
            }
        }
    }
    assert!(loss < 1e-2, "XOR loss {loss}");
}

/// matmul + softmax + layer norm + reductions, big enough to take the parallel paths.
fn parallel_graph() -> (Vec<u64>, Vec<u64>) {
    let mut t: Tape = Tape::new();
    let a = t.leaf(u(&[4, 130, 64], -1.0, 1.0, 1));
    let w = t.leaf(u(&[64, 80], -0.2, 0.2, 2));
    let g = t.leaf(u(&[80], 0.5, 1.5, 3));
    let b = t.leaf(u(&[80], -0.5, 0.5, 4));
    let h = t.matmul(a, w);
    let n = t.layer_norm(h, g, b, 1e-5);
    let p = t.softmax(n);
    let q = t.matmul_t(p, p, false, true);
    let r = t.gelu(q);
    let s = t.sum(r);
    let grads = t.backward(s);
    let bits = |x: &Tensor| x.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let mut vals = bits(t.value(q));
    vals.extend(bits(t.value(s)));
    let mut gs = Vec::new();
    for v in [a, w, g, b] {
        gs.extend(bits(grads.get(v).unwrap()));
    }
    (vals, gs)
}

#[test]
fn results_are_bit_identical_at_one_and_two_threads() {
    let one = pool(1).install(parallel_graph);
    let two = pool(2).install(parallel_graph);
    assert!(
        one == two,
        "values or gradients differ between 1 and 2 threads"
    );
}

/// A shape and two shapes that broadcast to it (dims set to 1 or leading axes dropped).
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(1usize..4, 1..4).prop_flat_map(|out| {
        let r = out.len();
        (
            Just(out),
            prop::collection::vec(any::<bool>(), r),
            prop::collection::vec(any::<bool>(), r),
            0..=r,
            0..=r,
        )
            .prop_map(|(out, ma, mb, da, db)| {
                let pick = |m: &[bool], d: usize| -> Vec<usize> {
                    out.iter()
                        .zip(m)
                        .skip(d)
                        .map(|(&n, &one)| if one { 1 } else { n })
                        .collect()
                };
                (pick(&ma, da), pick(&mb, db))
            })
    })
}

/// Element-by-element reference: read each input at the broadcast index.
fn reference_add(a: &Tensor, b: &Tensor, out: &[usize]) -> Vec<f64> {
    let n: usize = out.iter().product();
    let at = |t: &Tensor, flat: usize| {
        let mut idx = vec![0; out.len()];
        let mut f = flat;
        for d in (0..out.len()).rev() {
            idx[d] = f % out[d];
            f /= out[d];
        }
        let off = out.len() - t.shape.len();
        let i: Vec<usize> = t
            .shape
            .iter()
            .enumerate()
            .map(|(d, &s)| if s == 1 { 0 } else { idx[off + d] })
            .collect();
        if t.shape.is_empty() {
            t.data[0]
        } else {
            t.get(&i)
        }
    };
    (0..n).map(|i| at(a, i) * 2.0 + at(b, i)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn broadcasting_matches_reference_and_gradchecks((sa, sb) in broadcast_pair(), seed in 0u64..1000) {
        let (a, b) = (u(&sa, -1.0, 1.0, seed), u(&sb, 0.5, 1.5, seed + 1));
        let mut t: Tape = Tape::new();
        let (va, vb) = (t.leaf(a.clone()), t.leaf(b.clone()));
        let a2 = t.scale(va, 2.0);
        let y = t.add(a2, vb);
        let out = t.shape(y).to_vec();
        prop_assert_eq!(&t.value(y).data, &reference_add(&a, &b, &out));
        let m = t.mul(y, vb);
        let s = t.sum(m);
        let g = t.backward(s);
        prop_assert_eq!(&g.get(va).unwrap().shape, &sa);
        prop_assert_eq!(&g.get(vb).unwrap().shape, &sb);
        for f in [|t: &mut Tape, v: &[Var]| t.mul(v[0], v[1]), |t: &mut Tape, v: &[Var]| t.div(v[0], v[1])] {
            let r = gradcheck(f, &[a.clone(), b.clone()]);
            prop_assert!(r.passed, "{:?} {:?}: {:?}", sa, sb, r);
        }
    }
}

/// `[B, 1, 1, L]` with -inf on the last key of the second sequence.
fn attention_mask(b: usize, l: usize) -> Tensor {
    let mut m = Tensor::zeros(&[b, 1, 1, l]);
    m.data[2 * l - 1] = f64::NEG_INFINITY;
    m
}

/// The composed ops the fused attention replaces, heads split by reshape and permute.
fn composed_attention(t: &mut Tape, v: &[Var], h: usize, mask: &Tensor, p: f64) -> Var {
    let s = t.shape(v[0]).to_vec();
    let (b, l, d) = (s[0], s[1], s[2]);
    let split = |t: &mut Tape, x: Var| {
        let y = t.reshape(x, &[b, l, h, d / h]);
        t.permute(y, &[0, 2, 1, 3])
    };
    let (q, k, vv) = (split(t, v[0]), split(t, v[1]), split(t, v[2]));
    let qk = t.matmul_t(q, k, false, true);
    let c = t.scale(qk, 1.0 / ((d / h) as f64).sqrt());
    let c = if v.len() > 3 { t.add(c, v[3]) } else { c };
    let c = t.add_mask(c, mask);
    let pr = t.softmax(c);
    let pr = t.dropout(pr, p, 9);
    let o = t.matmul(pr, vv);
    let o = t.permute(o, &[0, 2, 1, 3]);
    t.reshape(o, &[b, l, d])
}

#[test]
fn gradcheck_attention() {
    let (b, l, d, h) = (2, 4, 6, 2);
    let mask = attention_mask(b, l);
    let qkv = |s| signed(&[b, l, d], 0.1, 1.0, s);
    for p in [0.0, 0.3] {
        let with_bias = [qkv(1), qkv(2), qkv(3), signed(&[h, l, l], 0.1, 1.0, 4)];
        check(
            &format!("attention with bias, dropout {p}"),
            |t, v| {
                t.attention(v[0], v[1], v[2], h, Some(v[3]), &mask, p, 9)
                    .out
            },
            &with_bias,
        );
        check(
            &format!("attention without bias, dropout {p}"),
            |t, v| t.attention(v[0], v[1], v[2], h, None, &mask, p, 9).out,
            &with_bias[..3],
        );
    }
}

#[test]
fn fused_attention_equals_composed() {
    let (b, l, d, h) = (3, 5, 8, 2);
    let mask = attention_mask(b, l);
    for p in [0.0, 0.25] {
        let mut t: Tape = Tape::new();
        let v: Vec<Var> = (0..4)
            .map(|i| {
                let s: &[usize] = if i < 3 { &[b, l, d] } else { &[h, l, l] };
                t.leaf(signed(s, 0.1, 1.0, 20 + i as u64))
            })
            .collect();
        let fused = t.attention(v[0], v[1], v[2], h, Some(v[3]), &mask, p, 9);
        let composed = composed_attention(&mut t, &v, h, &mask, p);
        let (a, c) = (t.value(fused.out).clone(), t.value(composed).clone());
        assert!(a.shape == c.shape);
        for (x, y) in a.data.iter().zip(&c.data) {
            assert!((x - y).abs() < 1e-12, "dropout {p}: {x} vs {y}");
        }
        let w = t.constant(u(&[b, l, d], -1.0, 1.0, 5));
        let (fa, fc) = (t.mul(fused.out, w), t.mul(composed, w));
        let (sa, sc) = (t.sum(fa), t.sum(fc));
        let (ga, gc) = (t.backward(sa), t.backward(sc));
        for &x in &v {
            let (ga, gc) = (ga.get(x).unwrap(), gc.get(x).unwrap());
            for (x, y) in ga.data.iter().zip(&gc.data) {
                assert!((x - y).abs() < 1e-12, "dropout {p}: gradient {x} vs {y}");
            }
        }
        // Sequence 1, head 1, last query row: its masked last key.
        let at = ((h + 1) * l + l - 1) * l + l - 1;
        assert!(
            t.value(fused.probs).data[at] == 0.0,
            "a masked key gets zero weight"
        );
    }
}

#[test]
fn gradcheck_linear() {
    for (i, s) in [&[4, 3][..], &[2, 3, 3], &[3]].iter().enumerate() {
        let ins = [
            signed(s, 0.1, 1.0, 60 + i as u64),
            signed(&[3, 5], 0.1, 1.0, 70 + i as u64),
            signed(&[5], 0.1, 1.0, 80 + i as u64),
        ];
        check(
            &format!("linear {s:?}"),
            |t, v| t.linear(v[0], v[1], v[2]),
            &ins,
        );
    }
}

#[test]
fn linear_equals_matmul_plus_bias_bit_for_bit() {
    let mut t: Tape = Tape::new();
    let x = t.leaf(signed(&[3, 70, 40], 0.1, 1.0, 1));
    let w = t.leaf(signed(&[40, 90], 0.1, 1.0, 2));
    let b = t.leaf(signed(&[90], 0.1, 1.0, 3));
    let y = t.linear(x, w, b);
    let x2 = t.reshape(x, &[210, 40]);
    let m = t.matmul(x2, w);
    let m = t.add(m, b);
    let z = t.reshape(m, &[3, 70, 90]);
    assert_eq!(t.value(y), t.value(z));
    let wt = t.constant(u(&[3, 70, 90], -1.0, 1.0, 4));
    let (py, pz) = (t.mul(y, wt), t.mul(z, wt));
    let (sy, sz) = (t.sum(py), t.sum(pz));
    let (gy, gz) = (t.backward(sy), t.backward(sz));
    for v in [x, w, b] {
        assert_eq!(gy.get(v), gz.get(v));
    }
}

/// The fused ops take their parallel paths here; each must not depend on the thread count.
fn fused_graph() -> Vec<u64> {
    let mut t: Tape<f32> = Tape::new();
    let (b, l, d, h) = (6, 40, 32, 4);
    let x = t.leaf(Tensor::uniform(&[b, l, d], -1.0, 1.0, 1));
    let w = t.leaf(Tensor::uniform(&[d, 3 * d], -0.3, 0.3, 2));
    let c = t.leaf(Tensor::uniform(&[3 * d], -0.3, 0.3, 3));
    let bias = t.leaf(Tensor::uniform(&[h, l, l], -1.0, 1.0, 4));
    let y = t.linear(x, w, c);
    let parts: Vec<Var> = (0..3).map(|i| t.slice(y, 2, i * d, (i + 1) * d)).collect();
    let mask = Tensor::zeros(&[b, 1, 1, l]);
    let a = t.attention(parts[0], parts[1], parts[2], h, Some(bias), &mask, 0.1, 3);
    let g = t.gelu(a.out);
    let s = t.sum(g);
    let grads = t.backward(s);
    let mut bits: Vec<u64> = t
        .value(a.out)
        .data
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect();
    for v in [x, w, c, bias] {
        bits.extend(
            grads
                .get(v)
                .unwrap()
                .data
                .iter()
                .map(|v| v.to_bits() as u64),
        );
    }
    bits
}

#[test]
fn fused_ops_are_bit_identical_at_one_and_two_threads() {
    assert!(pool(1).install(fused_graph) == pool(2).install(fused_graph));
}

/// ulps between two finite f32 of the same sign.
fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

#[test]
fn exp_f32_is_within_two_ulp_of_exact() {
    use at5_engine::kernels::exp_f32;
    let mut worst = (0u32, 0f32);
    // Every 97th f32 bit pattern in [-87.3, 88.3], both signs: about 20 million points.
    for sign in [0u32, 1 << 31] {
        for bits in (0u32..0x42B0_0000).step_by(97) {
            let x = f32::from_bits(bits | sign);
            if !(-87.3..=88.3).contains(&x) {
                continue;
            }
            let exact = (x as f64).exp() as f32;
            let d = ulps(exp_f32(x), exact);
            if d > worst.0 {
                worst = (d, x);
            }
        }
    }
    assert!(
        worst.0 <= 2,
        "exp_f32 is {} ulp off at x = {}",
        worst.0,
        worst.1
    );
    assert_eq!(exp_f32(0.0), 1.0);
    assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
    assert_eq!(exp_f32(-1000.0), 0.0);
    assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
    assert_eq!(exp_f32(100.0), f32::INFINITY);
    assert!(exp_f32(f32::NAN).is_nan());
    // Monotone across the range boundaries where the clamps take over.
    let xs = [-87.4f32, -87.3365, -87.33, -1e-7, 0.0, 1e-7, 88.3, 88.37];
    for w in xs.windows(2) {
        assert!(exp_f32(w[0]) <= exp_f32(w[1]), "not monotone at {w:?}");
    }
}

/// The unpacked kernel against the plain loop (same rounding: bit for bit) and against f64, on
/// ragged shapes, transposed A, strided rows and beta 0/1.
#[test]
fn small_gemm_matches_plain_loop_and_f64() {
    use at5_engine::kernels::{Kernel, active, gemm_rows_on};
    for &(m, k, n) in &[
        (1, 1, 1),
        (7, 3, 5),
        (6, 32, 16),
        (100, 32, 100),
        (13, 100, 33),
        (5, 0, 9),
    ] {
        for ta in [false, true] {
            for beta in [0.0f32, 1.0] {
                let a = Tensor::<f32>::uniform(&[m * k + 1], -1.0, 1.0, 1).data;
                // B and C rows padded to a larger stride, as the attention's head slices are.
                let (rsb, rsc) = (n + 3, n + 5);
                let b = Tensor::<f32>::uniform(&[k * rsb + 1], -1.0, 1.0, 2).data;
                let c0 = Tensor::<f32>::uniform(&[m * rsc + 1], -1.0, 1.0, 3).data;
                let (rsa, csa) = if ta { (1, m) } else { (k, 1) };
                let (mut c1, mut c2) = (c0.clone(), c0.clone());
                gemm_rows_on(
                    active(),
                    (m, k, n),
                    &a,
                    (rsa, csa),
                    &b,
                    rsb,
                    beta,
                    &mut c1,
                    rsc,
                );
                gemm_rows_on(
                    Kernel::Portable,
                    (m, k, n),
                    &a,
                    (rsa, csa),
                    &b,
                    rsb,
                    beta,
                    &mut c2,
                    rsc,
                );
                assert_eq!(
                    c1, c2,
                    "kernel vs plain loop at {m}x{k}x{n}, ta {ta}, beta {beta}"
                );
                for i in 0..m {
                    for j in 0..rsc {
                        let got = c1[i * rsc + j] as f64;
                        if j >= n {
                            assert_eq!(c1[i * rsc + j], c0[i * rsc + j], "wrote outside C");
                            continue;
                        }
                        let mut want = beta as f64 * c0[i * rsc + j] as f64;
                        for p in 0..k {
                            want += a[i * rsa + p * csa] as f64 * b[p * rsb + j] as f64;
                        }
                        assert!(
                            (got - want).abs() <= 1e-5 * (1.0 + k as f64),
                            "{m}x{k}x{n}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
}

/// A Linear layer large enough for the engine's parallel paths: the weight gradient
/// `xᵀ g` (k = 2048 rows) is split along k into partial products, the bias gradient sums row
/// blocks, the forward splits rows. Each must match an f64 reference and be the same bits at
/// one and two threads.
fn big_linear_grads() -> Vec<Vec<f32>> {
    let (rows, d_in, d_out) = (2048, 16, 24);
    let mut t: Tape<f32> = Tape::new();
    let x = t.leaf(Tensor::uniform(&[rows, d_in], -1.0, 1.0, 1));
    let w = t.leaf(Tensor::uniform(&[d_in, d_out], -1.0, 1.0, 2));
    let b = t.leaf(Tensor::uniform(&[d_out], -1.0, 1.0, 3));
    let y = t.linear(x, w, b);
    let c = t.constant(Tensor::uniform(&[rows, d_out], -1.0, 1.0, 4));
    let p = t.mul(y, c);
    let s = t.sum(p);
    let g = t.backward(s);
    let mut out = vec![t.value(y).data.clone()];
    out.extend([x, w, b].map(|v| g.get(v).unwrap().data.clone()));
    out
}

#[test]
fn parallel_linear_matches_f64_and_thread_counts() {
    let (rows, d_in, d_out) = (2048, 16, 24);
    let got = pool(2).install(big_linear_grads);
    assert!(
        got == pool(1).install(big_linear_grads),
        "thread count changed the bits"
    );
    let f = |shape: &[usize], seed| Tensor::<f64>::uniform(shape, -1.0, 1.0, seed).data;
    let (x, w, b, c) = (
        f(&[rows, d_in], 1),
        f(&[d_in, d_out], 2),
        f(&[d_out], 3),
        f(&[rows, d_out], 4),
    );
    // y = x w + b; with loss sum(y * c): dW = xᵀ c, db = Σ_rows c, dx = c wᵀ.
    let mut y = vec![0.0; rows * d_out];
    let mut dw = vec![0.0; d_in * d_out];
    let mut db = vec![0.0; d_out];
    let mut dx = vec![0.0; rows * d_in];
    for r in 0..rows {
        for o in 0..d_out {
            let cv = c[r * d_out + o];
            y[r * d_out + o] = b[o]
                + (0..d_in)
                    .map(|i| x[r * d_in + i] * w[i * d_out + o])
                    .sum::<f64>();
            db[o] += cv;
            for i in 0..d_in {
                dw[i * d_out + o] += x[r * d_in + i] * cv;
                dx[r * d_in + i] += cv * w[i * d_out + o];
            }
        }
    }
    for (name, want, have) in [
        ("y", &y, &got[0]),
        ("dx", &dx, &got[1]),
        ("dW", &dw, &got[2]),
        ("db", &db, &got[3]),
    ] {
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (a, &e) in have.iter().zip(want.iter()) {
            assert!((*a as f64 - e).abs() <= 1e-5 * scale, "{name}: {a} vs {e}");
        }
    }
}

#[test]
fn profiling_names_ops_and_changes_no_gradient() {
    let graph = |t: &mut Tape<f32>| {
        let x = t.leaf(Tensor::uniform(&[4, 8], -1.0, 1.0, 1));
        let w = t.leaf(Tensor::uniform(&[8, 3], -1.0, 1.0, 2));
        let b = t.leaf(Tensor::uniform(&[3], -1.0, 1.0, 3));
        let y = t.linear(x, w, b);
        let y = t.gelu(y);
        (t.sum(y), [x, w, b])
    };
    let mut plain: Tape<f32> = Tape::new();
    let (loss, vars) = graph(&mut plain);
    let want = plain.backward(loss);
    let mut timed: Tape<f32> = Tape::new();
    timed.set_profiling(true);
    let (loss, _) = graph(&mut timed);
    let have = timed.backward_profiled(loss);
    for v in vars {
        assert_eq!(want.get(v), have.get(v));
    }
    let p = timed.profile().expect("profiling is on");
    for name in ["linear", "gelu", "sum"] {
        assert!(
            p.forward.iter().any(|r| r.0 == name && r.2 == 1),
            "forward lacks {name}"
        );
        assert!(
            p.backward.iter().any(|r| r.0 == name && r.2 == 1),
            "backward lacks {name}"
        );
    }
    assert!(plain.profile().is_none());
}

#[test]
fn large_broadcasts_run_in_parallel_blocks_and_read_the_right_elements() {
    // Large enough for the parallel blocks of runs of the last axis: the mean-pooling weights'
    // pattern ([B, L, D] × [B, L, 1]), a stretch of both sides, and a last axis of one.
    for (sa, sb) in [
        (vec![9, 70, 61], vec![9, 70, 1]),
        (vec![9, 70, 61], vec![70, 1]),
        (vec![9, 1, 61], vec![70, 1]),
        (vec![40_000, 1], vec![1]),
    ] {
        let (a, b) = (u(&sa, -1.0, 1.0, 3), u(&sb, 0.5, 1.5, 4));
        let mut t: Tape = Tape::new();
        let (va, vb) = (t.leaf(a.clone()), t.leaf(b.clone()));
        let m = t.mul(va, vb);
        let out = t.shape(m).to_vec();
        let n: usize = out.iter().product();
        assert!(n >= 32_768, "{sa:?} × {sb:?} is not large");
        // reference_add(a, 0·b) reads a at each output index, (0·a, b) reads b there.
        let zero = |x: &Tensor| Tensor::from_vec(&x.shape, vec![0.0; x.len()]);
        let (ra, rb) = (
            reference_add(&a, &zero(&b), &out),
            reference_add(&zero(&a), &b, &out),
        );
        let want: Vec<f64> = ra.iter().zip(&rb).map(|(&x, &y)| (x / 2.0) * y).collect();
        assert_eq!(t.value(m).data, want, "{sa:?} × {sb:?}");
        // The gradient through a weight per output element: when a is the output's shape,
        // each of its elements gets exactly its weight times what it was multiplied by.
        let c = u(&out, -1.0, 1.0, 5);
        let vc = t.constant(c.clone());
        let mc = t.mul(m, vc);
        let s = t.sum(mc);
        let g = t.backward(s);
        if sa == out {
            let want: Vec<f64> = c.data.iter().zip(&rb).map(|(&w, &y)| w * y).collect();
            assert_eq!(g.get(va).unwrap().data, want, "d {sa:?}");
        }
        assert_eq!(g.get(vb).unwrap().shape, sb);
    }
}
