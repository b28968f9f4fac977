//! Every op gradchecked in f64 on several shapes, plus an end-to-end descent check.
use at5::{Tape, Tensor, Var, gradcheck};

fn check(name: &str, f: impl Fn(&mut Tape, &[Var]) -> Var, inputs: &[Tensor]) {
    let r = gradcheck(f, inputs);
    assert!(r.passed && r.max_rel_err <= 1e-6, "{name}: {r:?}");
}

/// Reduces a tensor output to a scalar by a dot with fixed weights, as gradcheck needs.
fn dot(t: &mut Tape, y: Var, w: Var) -> Var {
    let p = t.mul(y, w);
    t.sum(p)
}

const SHAPES: [&[usize]; 3] = [&[3], &[2, 3], &[2, 2, 3]];

#[test]
fn elementwise_ops_gradcheck() {
    for (s, shape) in SHAPES.iter().enumerate() {
        let a = Tensor::uniform(shape, -1.0, 1.0, 10 + s as u64);
        // keep relu away from its kink at 0
        let b = Tensor::uniform(shape, 0.1, 1.0, 20 + s as u64);
        let w = Tensor::uniform(shape, -1.0, 1.0, 30 + s as u64);
        check(
            "add",
            |t, v| {
                let y = t.add(v[0], v[1]);
                dot(t, y, v[2])
            },
            &[a.clone(), b.clone(), w.clone()],
        );
        check(
            "sub",
            |t, v| {
                let y = t.sub(v[0], v[1]);
                dot(t, y, v[2])
            },
            &[a.clone(), b.clone(), w.clone()],
        );
        check(
            "mul",
            |t, v| {
                let y = t.mul(v[0], v[1]);
                dot(t, y, v[2])
            },
            &[a.clone(), b.clone(), w.clone()],
        );
        check(
            "exp",
            |t, v| {
                let y = t.exp(v[0]);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        check(
            "tanh",
            |t, v| {
                let y = t.tanh(v[0]);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        let signed = Tensor::from_vec(
            shape,
            b.data
                .iter()
                .enumerate()
                .map(|(i, x)| if i % 2 == 0 { *x } else { -x })
                .collect(),
        );
        check(
            "relu",
            |t, v| {
                let y = t.relu(v[0]);
                dot(t, y, v[1])
            },
            &[signed, w.clone()],
        );
    }
}

#[test]
fn matmul_gradcheck() {
    for (m, k, n) in [(1, 1, 1), (2, 3, 4), (5, 2, 3)] {
        let a = Tensor::uniform(&[m, k], -1.0, 1.0, 1);
        let b = Tensor::uniform(&[k, n], -1.0, 1.0, 2);
        let w = Tensor::uniform(&[m, n], -1.0, 1.0, 3);
        check(
            "matmul",
            |t, v| {
                let y = t.matmul(v[0], v[1]);
                let p = t.mul(y, v[2]);
                t.sum(p)
            },
            &[a, b, w],
        );
    }
}

#[test]
fn matmul_forward_matches_hand_result() {
    let mut t = Tape::new();
    let a = t.leaf(Tensor::from_vec(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]));
    let b = t.leaf(Tensor::from_vec(&[2, 1], vec![5.0, 6.0]));
    let c = t.matmul(a, b);
    assert_eq!(t.value(c).data, vec![17.0, 39.0]);
}

#[test]
fn reused_var_accumulates() {
    // y = sum(x * x) -> dy/dx = 2x
    let mut t = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[3], vec![1.0, -2.0, 0.5]));
    let sq = t.mul(x, x);
    let y = t.sum(sq);
    let g = t.backward(y);
    assert_eq!(g[x.0].data, vec![2.0, -4.0, 1.0]);
}

#[test]
#[should_panic(expected = "matmul: shapes [2, 3] and [4, 5]")]
fn matmul_shape_error_names_both_shapes() {
    let mut t = Tape::new();
    let a = t.leaf(Tensor::zeros(&[2, 3]));
    let b = t.leaf(Tensor::zeros(&[4, 5]));
    t.matmul(a, b);
}

#[test]
fn mlp_fits_xor_by_gradient_descent() {
    let x = Tensor::from_vec(&[4, 2], vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
    let y = Tensor::from_vec(&[4, 1], vec![0.0, 1.0, 1.0, 0.0]);
    let mut params = [
        Tensor::uniform(&[2, 8], -1.0, 1.0, 7),
        Tensor::uniform(&[8, 1], -1.0, 1.0, 8),
    ];
    let mut tape = Tape::new();
    let mut loss_val = f64::INFINITY;
    for _ in 0..3000 {
        tape.clear();
        let xv = tape.leaf(x.clone());
        let yv = tape.leaf(y.clone());
        let w1 = tape.leaf(params[0].clone());
        let w2 = tape.leaf(params[1].clone());
        let h = tape.matmul(xv, w1);
        let h = tape.tanh(h);
        let p = tape.matmul(h, w2);
        let d = tape.sub(p, yv);
        let d2 = tape.mul(d, d);
        let loss = tape.sum(d2);
        loss_val = tape.value(loss).data[0];
        let g = tape.backward(loss);
        for (p, v) in params.iter_mut().zip([w1, w2]) {
            for (w, gw) in p.data.iter_mut().zip(&g[v.0].data) {
                *w -= 0.05 * gw;
            }
        }
    }
    assert!(loss_val < 1e-2, "XOR loss after training: {loss_val}");
}

#[test]
fn ln_softmax_log_softmax_gradcheck() {
    for (s, shape) in SHAPES.iter().enumerate() {
        let a = Tensor::uniform(shape, -2.0, 2.0, 40 + s as u64);
        let pos = Tensor::uniform(shape, 0.2, 2.0, 50 + s as u64);
        let w = Tensor::uniform(shape, -1.0, 1.0, 60 + s as u64);
        check(
            "ln",
            |t, v| {
                let y = t.ln(v[0]);
                dot(t, y, v[1])
            },
            &[pos, w.clone()],
        );
        check(
            "softmax",
            |t, v| {
                let y = t.softmax(v[0]);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        check(
            "log_softmax",
            |t, v| {
                let y = t.log_softmax(v[0]);
                dot(t, y, v[1])
            },
            &[a, w],
        );
    }
}

#[test]
fn softmax_equals_exp_of_log_softmax_and_rows_sum_to_one() {
    let mut t = Tape::new();
    let x = t.leaf(Tensor::uniform(&[4, 5], -3.0, 3.0, 9));
    let s = t.softmax(x);
    let ls = t.log_softmax(x);
    let e = t.exp(ls);
    for (a, b) in t.value(s).data.iter().zip(&t.value(e).data) {
        assert!((a - b).abs() < 1e-15);
    }
    for row in t.value(s).data.chunks(5) {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn softmax_of_extreme_logits_is_finite_with_finite_gradients() {
    let mut t = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[3], vec![1000.0, 0.0, -1000.0]));
    let w = t.leaf(Tensor::from_vec(&[3], vec![0.3, -0.2, 0.5]));
    let s = t.softmax(x);
    let ls = t.log_softmax(x);
    assert_eq!(t.value(s).data, vec![1.0, 0.0, 0.0]);
    assert!(t.value(ls).data.iter().all(|v| v.is_finite()));
    assert_eq!(t.value(ls).data[2], -2000.0);
    let a = t.mul(s, w);
    let b = t.mul(ls, w);
    let c = t.add(a, b);
    let loss = t.sum(c);
    let g = t.backward(loss);
    assert!(
        g[x.0].data.iter().all(|v| v.is_finite()),
        "{:?}",
        g[x.0].data
    );
}

#[test]
fn div_sigmoid_sqrt_gelu_scale_neg_gradcheck() {
    for (s, shape) in SHAPES.iter().enumerate() {
        let a = Tensor::uniform(shape, -2.0, 2.0, 70 + s as u64);
        let pos = Tensor::uniform(shape, 0.3, 2.0, 80 + s as u64);
        let w = Tensor::uniform(shape, -1.0, 1.0, 90 + s as u64);
        check(
            "div",
            |t, v| {
                let y = t.div(v[0], v[1]);
                dot(t, y, v[2])
            },
            &[a.clone(), pos.clone(), w.clone()],
        );
        check(
            "sigmoid",
            |t, v| {
                let y = t.sigmoid(v[0]);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        check(
            "sqrt",
            |t, v| {
                let y = t.sqrt(v[0]);
                dot(t, y, v[1])
            },
            &[pos, w.clone()],
        );
        check(
            "gelu",
            |t, v| {
                let y = t.gelu(v[0]);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        check(
            "scale",
            |t, v| {
                let y = t.scale(v[0], -0.7);
                dot(t, y, v[1])
            },
            &[a.clone(), w.clone()],
        );
        check(
            "neg",
            |t, v| {
                let y = t.neg(v[0]);
                dot(t, y, v[1])
            },
            &[a, w],
        );
    }
}

#[test]
fn sigmoid_of_extreme_inputs_is_finite() {
    let mut t = Tape::new();
    let x = t.leaf(Tensor::from_vec(&[2], vec![1000.0, -1000.0]));
    let y = t.sigmoid(x);
    assert_eq!(t.value(y).data, vec![1.0, 0.0]);
    let l = t.sum(y);
    assert!(t.backward(l)[x.0].data.iter().all(|v| v.is_finite()));
}

#[test]
fn cross_entropy_and_mse_gradcheck() {
    for (n, c) in [(1, 2), (3, 4), (5, 3)] {
        let logits = Tensor::uniform(&[n, c], -2.0, 2.0, 100 + n as u64);
        let targets: Vec<usize> = (0..n).map(|i| (i * 7 + 1) % c).collect();
        check(
            "cross_entropy",
            |t, v| t.cross_entropy(v[0], &targets),
            &[logits],
        );
        let p = Tensor::uniform(&[n, c], -1.0, 1.0, 110 + n as u64);
        let y = Tensor::uniform(&[n, c], -1.0, 1.0, 120 + n as u64);
        check("mse", |t, v| t.mse(v[0], v[1]), &[p, y]);
    }
}

#[test]
fn fused_cross_entropy_equals_composed_and_is_stable() {
    let logits = Tensor::from_vec(&[2, 3], vec![0.5, -1.0, 2.0, 1000.0, 0.0, -1000.0]);
    let targets = [2, 1];
    let mut t = Tape::new();
    let x = t.leaf(logits);
    let ce = t.cross_entropy(x, &targets);
    let ls = t.log_softmax(x);
    let onehot = t.leaf(Tensor::from_vec(
        &[2, 3],
        vec![0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
    ));
    let picked = t.mul(ls, onehot);
    let s = t.sum(picked);
    let composed = t.scale(s, -0.5);
    let (a, b) = (t.value(ce).data[0], t.value(composed).data[0]);
    assert!(a.is_finite() && (a - b).abs() < 1e-12, "{a} vs {b}");
    let g = t.backward(ce);
    assert!(g[x.0].data.iter().all(|v| v.is_finite()));
}

#[test]
fn reshape_and_transpose_gradcheck() {
    for shape in [&[2, 3][..], &[3, 1], &[2, 3, 4]] {
        let a = Tensor::uniform(shape, -1.0, 1.0, 130);
        let mut ts = shape.to_vec();
        let r = ts.len();
        ts.swap(r - 2, r - 1);
        let wt = Tensor::uniform(&ts, -1.0, 1.0, 131);
        let n = a.len();
        let wr = Tensor::uniform(&[n], -1.0, 1.0, 132);
        check(
            "transpose",
            |t, v| {
                let y = t.transpose(v[0]);
                let p = t.mul(y, v[1]);
                t.sum(p)
            },
            &[a.clone(), wt],
        );
        check(
            "reshape",
            |t, v| {
                let y = t.reshape(v[0], &[n]);
                let p = t.mul(y, v[1]);
                t.sum(p)
            },
            &[a, wr],
        );
    }
}

#[test]
fn transpose_moves_elements() {
    let mut t = Tape::new();
    let x = t.leaf(Tensor::from_vec(
        &[2, 3],
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    ));
    let y = t.transpose(x);
    assert_eq!(t.value(y).shape, vec![3, 2]);
    assert_eq!(t.value(y).data, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn sum_and_mean_over_axes_gradcheck() {
    for shape in [&[4][..], &[2, 3], &[2, 3, 4]] {
        for axis in 0..shape.len() {
            for keepdim in [false, true] {
                let a = Tensor::uniform(shape, -1.0, 1.0, 140 + axis as u64);
                let mut os = shape.to_vec();
                if keepdim {
                    os[axis] = 1;
                } else {
                    os.remove(axis);
                }
                let w = Tensor::uniform(&os, -1.0, 1.0, 150);
                check(
                    "sum_axis",
                    |t, v| {
                        let y = t.sum_axis(v[0], axis, keepdim);
                        let p = t.mul(y, v[1]);
                        t.sum(p)
                    },
                    &[a.clone(), w.clone()],
                );
                check(
                    "mean_axis",
                    |t, v| {
                        let y = t.mean_axis(v[0], axis, keepdim);
                        let p = t.mul(y, v[1]);
                        t.sum(p)
                    },
                    &[a, w],
                );
            }
        }
    }
}

#[test]
fn sum_axis_values() {
    let mut t = Tape::new();
    let x = t.leaf(Tensor::from_vec(
        &[2, 3],
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    ));
    let rows = t.sum_axis(x, 1, false);
    let cols = t.sum_axis(x, 0, true);
    assert_eq!(t.value(rows).data, vec![6.0, 15.0]);
    assert_eq!(t.value(cols).shape, vec![1, 3]);
    assert_eq!(t.value(cols).data, vec![5.0, 7.0, 9.0]);
}
