//! Adam's update rule against hand-computed steps, and SGD.
use at5_engine::optim::{Adam, AdamConfig, sgd_step};
use at5_engine::{ParamStore, Tensor};

#[test]
fn adam_first_steps_match_the_tf_formula() {
    let mut store = ParamStore::<f64>::new();
    store.add("x", Tensor::from_vec(&[2], vec![1.0, -2.0]));
    store.add("unused", Tensor::from_vec(&[1], vec![5.0]));
    let mut adam = Adam::<f64>::new(AdamConfig::tf(0.1), &store);
    let g = Tensor::from_vec(&[2], vec![0.5, -4.0]);
    let missing = adam.update(&mut store, &[Some(&g), None]);
    assert_eq!(missing, 1);
    // Step 1: m = 0.1 g, v = 0.001 g², lr_t = 0.1·sqrt(0.001)/0.1, so the step is
    // lr_t · m / (sqrt(v) + eps) ≈ 0.1 · sign(g).
    let lr_t = 0.1 * (1.0f64 - 0.999).sqrt() / (1.0 - 0.9);
    for (k, (&x0, &gk)) in [1.0f64, -2.0].iter().zip(&g.data).enumerate() {
        let (m, v) = (0.1 * gk, 0.001 * gk * gk);
        let want = x0 - lr_t * m / (v.sqrt() + 1e-8);
        assert!((store.values()[0].data[k] - want).abs() < 1e-15);
    }
    assert_eq!(store.values()[1].data, vec![5.0]);
    // Step 2 with a new gradient follows the same recursion.
    let before = store.values()[0].data.clone();
    let g2 = Tensor::from_vec(&[2], vec![1.0, 1.0]);
    adam.update(&mut store, &[Some(&g2), None]);
    let lr_t = 0.1 * (1.0f64 - 0.999f64.powi(2)).sqrt() / (1.0 - 0.9f64.powi(2));
    for (k, &x1) in before.iter().enumerate() {
        let (g1, g2) = (g.data[k], g2.data[k]);
        let m = 0.9 * 0.1 * g1 + 0.1 * g2;
        let v = 0.999 * 0.001 * g1 * g1 + 0.001 * g2 * g2;
        let want = x1 - lr_t * m / (v.sqrt() + 1e-8);
        assert!((store.values()[0].data[k] - want).abs() < 1e-14);
    }
    assert_eq!(adam.step, 2);
}

#[test]
fn adam_minimises_a_quadratic() {
    let mut store = ParamStore::<f32>::new();
    store.add("x", Tensor::from_vec(&[3], vec![3.0, -1.0, 0.5]));
    let mut adam = Adam::<f32>::new(AdamConfig::tf(0.05), &store);
    for _ in 0..500 {
        let g = Tensor::from_vec(
            &[3],
            store.values()[0].data.iter().map(|x| 2.0 * x).collect(),
        );
        adam.update(&mut store, &[Some(&g)]);
    }
    assert!(
        store.values()[0].data.iter().all(|x| x.abs() < 1e-2),
        "{:?}",
        store.values()[0].data
    );
}

#[test]
fn sgd_steps_against_the_gradient() {
    let mut store = ParamStore::<f64>::new();
    store.add("x", Tensor::from_vec(&[2], vec![1.0, 1.0]));
    let g = Tensor::from_vec(&[2], vec![2.0, -1.0]);
    sgd_step(&mut store, &[Some(&g)], 0.5);
    assert_eq!(store.values()[0].data, vec![0.0, 1.5]);
}
