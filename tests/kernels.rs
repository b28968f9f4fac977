//! The kernel paths: every path this CPU can run gives the portable path's bits, on ragged
//! shapes and tails; `AT5_KERNEL` picks a path or is refused with one line and code 2.
use at5::Tensor;
use at5::kernels::{
    self, Kernel, dot_lanes_on, exp_f32, exp_on, gemm_rows_on, sgemm_fresh, sgemm_on,
    sgemm_rows_on, sum_lanes_on,
};

mod common;

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn uniform(n: usize, seed: u64) -> Vec<f32> {
    Tensor::<f32>::uniform(&[n], -1.0, 1.0, seed).data
}

/// The paths to compare with the portable one: all this CPU has but the portable itself.
fn vector_paths() -> Vec<Kernel> {
    let v: Vec<Kernel> = Kernel::available()
        .into_iter()
        .filter(|&k| k != Kernel::Portable)
        .collect();
    eprintln!(
        "vector paths on this CPU: {:?}",
        v.iter().map(|k| k.name()).collect::<Vec<_>>()
    );
    // NEON is part of the aarch64 baseline: an aarch64 run that found no vector path would
    // compare nothing.
    #[cfg(target_arch = "aarch64")]
    assert!(v.contains(&Kernel::Neon), "NEON not detected on aarch64");
    v
}

#[test]
fn names_parse_and_unavailable_paths_are_refused() {
    for k in Kernel::ALL {
        assert_eq!(Kernel::parse(k.name()), Ok(k));
        match kernels::select(Some(k.name())) {
            Ok(got) => assert!(k.is_available() && got == k),
            Err(e) => assert!(!k.is_available() && e.contains("cannot run"), "{e}"),
        }
    }
    let e = Kernel::parse("sse9").unwrap_err();
    assert!(e.contains("AT5_KERNEL") && e.contains("portable, avx2, avx512 or neon"));
    assert!(kernels::select(Some("")).is_err());
    assert_eq!(kernels::select(None), Ok(Kernel::detect()));
    assert!(Kernel::Portable.is_available());
    assert!(Kernel::detect().is_available());
    // One path per architecture family at most: x86 never reports NEON and vice versa.
    assert!(!(Kernel::Neon.is_available() && Kernel::Avx2.is_available()));
}

/// A path this CPU lacks panics before running anything, instead of executing its
/// instructions.
#[test]
fn an_unavailable_path_panics_instead_of_running() {
    for k in Kernel::ALL.into_iter().filter(|k| !k.is_available()) {
        let r = std::panic::catch_unwind(|| sum_lanes_on(k, &[1.0; 9]));
        assert!(r.is_err(), "{} ran on a CPU without it", k.name());
    }
}

/// The unpacked small GEMM on ragged shapes, transposed A, padded row strides and beta 0/1:
/// each vector path gives the portable path's bits, writes nothing outside C, and the
/// portable path is the product (against f64).
#[test]
fn gemm_rows_paths_agree_bit_for_bit() {
    let paths = vector_paths();
    for &(m, k, n) in &[
        (1, 1, 1),
        (7, 3, 5),
        (6, 32, 16),
        (8, 32, 32),
        (9, 17, 33),
        (100, 32, 100),
        (13, 100, 33),
        (3, 5, 47),
        (5, 0, 9),
        (0, 4, 4),
    ] {
        for ta in [false, true] {
            for beta in [0.0f32, 1.0] {
                let a = uniform(m * k + 1, 1);
                let (rsb, rsc) = (n + 3, n + 5);
                let b = uniform(k * rsb + 1, 2);
                let c0 = uniform(m * rsc + 1, 3);
                let (rsa, csa) = if ta { (1, m) } else { (k, 1) };
                let run = |kernel| {
                    let mut c = c0.clone();
                    gemm_rows_on(
                        kernel,
                        (m, k, n),
                        &a,
                        (rsa, csa),
                        &b,
                        rsb,
                        beta,
                        &mut c,
                        rsc,
                    );
                    c
                };
                let want = run(Kernel::Portable);
                for i in 0..m {
                    for j in 0..rsc {
                        let got = want[i * rsc + j];
                        if j >= n {
                            assert_eq!(got.to_bits(), c0[i * rsc + j].to_bits());
                            continue;
                        }
                        let exact: f64 = (0..k)
                            .map(|p| a[i * rsa + p * csa] as f64 * b[p * rsb + j] as f64)
                            .sum::<f64>()
                            + beta as f64 * c0[i * rsc + j] as f64;
                        assert!((got as f64 - exact).abs() <= 1e-5 * (k as f64 + 1.0));
                    }
                }
                for &kernel in &paths {
                    assert_eq!(
                        bits(&run(kernel)),
                        bits(&want),
                        "{} vs portable at {m}x{k}x{n}, ta {ta}, beta {beta}",
                        kernel.name()
                    );
                }
            }
        }
    }
}

/// The packing GEMM of the Linear layers: the packed register tiles on the x86 paths,
/// matrixmultiply on NEON (the unpacked kernel block by block for a C of few rows), the plain
/// blocked loop on the portable one, bit for bit, including k past one k-block (256), both
/// transposes and edge tiles.
#[test]
fn packing_gemm_paths_agree_bit_for_bit() {
    let paths = vector_paths();
    for &(m, k, n) in &[
        (1, 1, 1),
        (7, 5, 3),
        (33, 64, 17),
        (64, 256, 64),
        (19, 257, 23),
        (40, 600, 9),
        (130, 70, 260),
        (4, 0, 6),
        // A C of few rows (the unpacked path): the pruned attention row's per-example
        // products, k past one and two k-blocks, every row count up to the limit and past it.
        (8, 500, 256),
        (8, 256, 100),
        (1, 300, 70),
        (3, 600, 40),
        (13, 513, 37),
        (16, 257, 33),
        (17, 257, 33),
        (2, 4000, 20),
        // Around the register tiles (6 × 16 on AVX2, 8 × 48 on AVX-512) and the k-block: one
        // row or column short of a whole tile, exact, one past; k one short of, at and past
        // one and two blocks; 8 × 8 transposes with a ragged k tail.
        (47, 255, 49),
        (48, 256, 48),
        (49, 257, 47),
        (23, 511, 95),
        (24, 512, 96),
        (25, 513, 97),
        (18, 9, 15),
        (30, 7, 16),
        // Past one block of rows (256) and of columns (768) of the packing, and a tall k.
        (300, 40, 800),
        (40, 3000, 20),
        // B read in place (rows contiguous, whole vectors) and, at a 4 KiB row stride, packed.
        (20, 30, 1024),
        (33, 300, 64),
    ] {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            for beta in [0.0f32, 1.0] {
                let a = uniform(m * k, 4);
                let b = uniform(k * n, 5);
                let c0 = uniform(m * n, 6);
                let sa = if ta { (1, m) } else { (k, 1) };
                let sb = if tb { (1, k) } else { (n, 1) };
                let run = |kernel| {
                    let mut c = c0.clone();
                    sgemm_on(kernel, (m, k, n), &a, sa, &b, sb, beta, &mut c, n);
                    c
                };
                let want = run(Kernel::Portable);
                for i in 0..m {
                    for j in 0..n {
                        let exact: f64 = (0..k)
                            .map(|p| a[i * sa.0 + p * sa.1] as f64 * b[p * sb.0 + j * sb.1] as f64)
                            .sum::<f64>()
                            + beta as f64 * c0[i * n + j] as f64;
                        let got = want[i * n + j] as f64;
                        assert!((got - exact).abs() <= 1e-5 * (k as f64 + 1.0));
                    }
                }
                for &kernel in &paths {
                    assert_eq!(
                        bits(&run(kernel)),
                        bits(&want),
                        "{} vs portable at {m}x{k}x{n}, ta {ta}, tb {tb}, beta {beta}",
                        kernel.name()
                    );
                }
            }
        }
    }
}

/// The row-parallel packing GEMM (row blocks sharing B, packed once) gives the
/// one-task product's bits on every path, at one and two threads, for row blocks that are and
/// are not multiples of the register tile's height, past one k-block, with either operand
/// transposed.
#[test]
fn row_parallel_gemm_matches_one_task_at_any_thread_count() {
    let mut paths = vector_paths();
    paths.push(Kernel::Portable);
    for &(m, k, n) in &[(200, 300, 100), (97, 600, 50), (64, 256, 769)] {
        for (ta, tb) in [(false, false), (true, false), (false, true)] {
            let a = uniform(m * k, 8);
            let b = uniform(k * n, 9);
            let c0 = uniform(m * n, 10);
            let sa = if ta { (1, m) } else { (k, 1) };
            let sb = if tb { (1, k) } else { (n, 1) };
            for beta in [0.0f32, 1.0] {
                let mut want = c0.clone();
                sgemm_on(
                    Kernel::Portable,
                    (m, k, n),
                    &a,
                    sa,
                    &b,
                    sb,
                    beta,
                    &mut want,
                    n,
                );
                for &kernel in &paths {
                    for threads in [1, 2] {
                        for rows in [17, 40, 64, m] {
                            let pool = rayon::ThreadPoolBuilder::new()
                                .num_threads(threads)
                                .build()
                                .unwrap();
                            let mut c = c0.clone();
                            pool.install(|| {
                                sgemm_rows_on(
                                    kernel,
                                    (m, k, n),
                                    &a,
                                    sa,
                                    &b,
                                    sb,
                                    beta,
                                    &mut c,
                                    n,
                                    rows,
                                )
                            });
                            assert_eq!(
                                bits(&c),
                                bits(&want),
                                "{} at {m}x{k}x{n}, ta {ta}, tb {tb}, beta {beta}, \
                                 {threads} threads, blocks of {rows} rows",
                                kernel.name()
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A product written into a new buffer (no zeros first) is the beta-0 product's bits, on every
/// path, in one task and in row blocks, across several k-blocks and column blocks, with edge
/// tiles; paths that cannot write every output first decline.
#[test]
fn fresh_output_gemm_is_the_beta_zero_product() {
    let mut paths = vector_paths();
    paths.push(Kernel::Portable);
    for &(m, k, n) in &[
        (200, 300, 100),
        (97, 600, 50),
        (64, 256, 769),
        (40, 1, 1600),
    ] {
        for (ta, tb) in [(false, false), (true, false), (false, true)] {
            let a = uniform(m * k, 11);
            let b = uniform(k * n, 12);
            let sa = if ta { (1, m) } else { (k, 1) };
            let sb = if tb { (1, k) } else { (n, 1) };
            let mut want = vec![f32::NAN; m * n];
            sgemm_on(
                Kernel::Portable,
                (m, k, n),
                &a,
                sa,
                &b,
                sb,
                0.0,
                &mut want,
                n,
            );
            for &kernel in &paths {
                for rows in [None, Some(17), Some(40), Some(64)] {
                    let got = sgemm_fresh(kernel, (m, k, n), &a, sa, &b, sb, rows);
                    let packs = kernel != Kernel::Portable
                        && kernel != Kernel::Neon
                        && rows.unwrap_or(m) > kernels::FEW_ROWS;
                    assert_eq!(got.is_some(), packs, "{} rows {rows:?}", kernel.name());
                    if let Some(c) = got {
                        assert_eq!(
                            bits(&c),
                            bits(&want),
                            "{} at {m}x{k}x{n}, ta {ta}, tb {tb}, rows {rows:?}",
                            kernel.name()
                        );
                    }
                }
            }
        }
    }
}

/// The matmul op's GEMM driver on the process's path (cut by rows, or by depth with the
/// partials summed in order for a tall k) gives the same bits at one and two threads, and the
/// one-task product's bits when it cuts by rows.
#[test]
fn gemm_driver_agrees_across_thread_counts() {
    use at5::Tape;
    let kernel = kernels::active();
    // [m, k] x [k, n] with either operand transposed: the layer's forward, dX = g Wᵀ (one
    // past a k-block) and dW = xᵀ g shapes, the last two with k long enough to be cut by depth.
    for &(m, k, n, ta, tb) in &[
        (600, 72, 40, false, false),
        (600, 40, 72, false, true),
        (300, 600, 100, false, true),
        (72, 600, 40, true, false),
        (40, 2000, 30, true, false),
    ] {
        let a_shape = if ta { [k, m] } else { [m, k] };
        let b_shape = if tb { [n, k] } else { [k, n] };
        let a = Tensor::<f32>::uniform(&a_shape, -1.0, 1.0, 11);
        let b = Tensor::<f32>::uniform(&b_shape, -1.0, 1.0, 12);
        let product = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut tape = Tape::<f32>::eval();
                let (x, y) = (tape.constant(a.clone()), tape.constant(b.clone()));
                let z = tape.matmul_t(x, y, ta, tb);
                tape.value(z).data.clone()
            })
        };
        let one = product(1);
        assert_eq!(bits(&product(2)), bits(&one), "{m}x{k}x{n} at 2 threads");
        if k < 8 * m.max(n) {
            let sa = if ta { (1, m) } else { (k, 1) };
            let sb = if tb { (1, k) } else { (n, 1) };
            let mut want = vec![0f32; m * n];
            sgemm_on(
                kernel,
                (m, k, n),
                &a.data,
                sa,
                &b.data,
                sb,
                0.0,
                &mut want,
                n,
            );
            assert_eq!(bits(&one), bits(&want), "{m}x{k}x{n} against one task");
        }
    }
}

/// Lane sums and dots of every length up to a few vectors (all tails) and a long one, with
/// magnitudes spread so that any change of order changes bits.
#[test]
fn lane_sums_paths_agree_bit_for_bit() {
    let paths = vector_paths();
    for len in (0..70).chain([1000, 1027]) {
        let x: Vec<f32> = uniform(len, 7)
            .iter()
            .enumerate()
            .map(|(i, v)| v * (1 << (i % 13)) as f32)
            .collect();
        let y = uniform(len, 8);
        let (s, d) = (
            sum_lanes_on(Kernel::Portable, &x),
            dot_lanes_on(Kernel::Portable, &x, &y),
        );
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        assert!((s as f64 - exact).abs() < 1e-3 * (len as f64 + 1.0));
        for &kernel in &paths {
            assert_eq!(
                sum_lanes_on(kernel, &x).to_bits(),
                s.to_bits(),
                "sum of {len}"
            );
            assert_eq!(
                dot_lanes_on(kernel, &x, &y).to_bits(),
                d.to_bits(),
                "dot of {len}"
            );
        }
    }
    // Element i goes to lane i mod 8 on every path: an exact check of the order.
    let x = [1e8f32, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1e8];
    for kernel in Kernel::available() {
        assert_eq!(sum_lanes_on(kernel, &x), 1.0, "{}", kernel.name());
    }
}

/// The vector exps give the scalar algorithm's bits everywhere: a dense sweep over the range,
/// the clamp edges, infinities, NaN and signed zeros, at every tail length.
#[test]
fn exp_paths_agree_bit_for_bit() {
    let paths = vector_paths();
    let mut xs: Vec<f32> = (-110_000..110_000).map(|i| i as f32 * 1e-3).collect();
    xs.extend([
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        -87.336_55,
        -87.336_56,
        -87.336_54,
        88.376_26,
        88.376_27,
        88.376_25,
        88.0,
        88.72,
        -103.9,
        f32::MAX,
        f32::MIN,
    ]);
    let want: Vec<f32> = xs.iter().map(|&x| exp_f32(x)).collect();
    for &kernel in &paths {
        for len in [xs.len(), xs.len() - 1, 33, 17, 15, 7, 1, 0] {
            let start = xs.len() - len;
            let mut got = xs[start..].to_vec();
            exp_on(kernel, &mut got);
            for (i, (&g, &w)) in got.iter().zip(&want[start..]).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{}: exp({}) = {g}, scalar {w}",
                    kernel.name(),
                    xs[start + i]
                );
            }
        }
    }
}

/// `bench --json` on a small model: the final loss after a few Adam steps, as a string.
fn bench_loss(kernel: Option<&str>, threads: usize) -> String {
    let mut cmd = common::bin(env!("CARGO_BIN_EXE_bench"));
    cmd.args(["--config", "T", "--seq-len", "40", "--batch", "70"])
        .args(["--steps", "2", "--warmup", "1", "--json"])
        .args(["--threads", &threads.to_string()]);
    match kernel {
        Some(k) => cmd.env(kernels::ENV, k),
        None => cmd.env_remove(kernels::ENV),
    };
    let out = cmd.output().expect("bench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    if let Some(k) = kernel {
        assert_eq!(v["kernel"], k);
    }
    v["final_loss"].to_string()
}

/// Whole training steps (every op, forward and backward, and Adam) give the same bits on every
/// path this CPU has, at one and two threads. The model is small but its weight gradients sum
/// over 2800 rows, past the GEMM's k-block and into its split by depth.
#[test]
fn training_steps_agree_across_paths_and_threads() {
    let want = bench_loss(Some("portable"), 1);
    assert_eq!(bench_loss(Some("portable"), 2), want);
    assert_eq!(bench_loss(None, 2), want, "the default path");
    for kernel in vector_paths() {
        for threads in [1, 2] {
            assert_eq!(
                bench_loss(Some(kernel.name()), threads),
                want,
                "{} at {threads} threads",
                kernel.name()
            );
        }
    }
}

/// An unknown path, or one this CPU lacks, is one line on stderr and exit code 2.
#[test]
fn a_bad_kernel_name_is_a_usage_error() {
    let mut bad = vec!["sse9".to_string()];
    bad.extend(
        Kernel::ALL
            .into_iter()
            .filter(|k| !k.is_available())
            .map(|k| k.name().to_string()),
    );
    for name in bad {
        let out = common::bin(env!("CARGO_BIN_EXE_bench"))
            .args(["--config", "T", "--steps", "1"])
            .env(kernels::ENV, &name)
            .output()
            .expect("bench runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with("error: AT5_KERNEL="), "{name}: {err}");
        assert!(out.stdout.is_empty());
    }
}
