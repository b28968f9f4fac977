//! The bias gradient checks: every family passes per tensor, T5's boundaries have no
//! derivative, and the `gradcheck` binary's table and exit codes.
use at5::nn::check::{
    CheckOptions, CheckPath, MIN_RELU_MARGIN, REST, T5Probe, check_bias_gradients,
    check_bias_gradients_with, small_bias, small_bias_with, t5_boundary_jumps, t5_bucket_relaxed,
};
use at5::position::{FAMILIES, t5_bucket};
use std::process::Command;

/// The binary's default seed: every ReLU input is at least 1e-2 from its kink there.
const SEED: u64 = 11;

#[test]
fn every_family_passes_per_tensor_on_both_paths() {
    let opts = CheckOptions::default();
    for (name, path) in FAMILIES.iter().flat_map(|n| CheckPath::ALL.map(|p| (n, p))) {
        let cfg = small_bias(name).unwrap();
        let check = check_bias_gradients_with(&cfg, SEED, path, &opts).unwrap();
        assert_eq!(check.path, path);
        assert!(check.passed(), "{name} {path:?}: {check:?}");
        if let Some(m) = check.relu_margin {
            assert!(m >= MIN_RELU_MARGIN, "{name}: ReLU input {m} near its kink");
        }
        assert_eq!(check.params.last().unwrap().name, REST);
        for p in &check.params {
            assert!(p.report.checked > 0, "{name} {}: nothing checked", p.name);
            // a gradient that is exactly 0 would pass without showing anything
            assert!(
                p.max_grad > 1e-6 && !p.vacuous(),
                "{name} {path:?} {}: gradient {}",
                p.name,
                p.max_grad
            );
        }
    }
}

#[test]
fn the_checks_name_each_bias_tensor() {
    let names = |family: &str| -> Vec<String> {
        check_bias_gradients(&small_bias(family).unwrap(), SEED)
            .unwrap()
            .params
            .into_iter()
            .map(|p| p.name)
            .collect()
    };
    let at5 = names("at5");
    for want in ["bias.a", "bias.c", "bias.neg.w1", "bias.pos.b3"] {
        assert!(at5.iter().any(|n| n == want), "{want} not in {at5:?}");
    }
    assert_eq!(at5.len(), 2 + 12 + 1);
    assert_eq!(names("kerple-log"), ["bias.r1", "bias.r2", REST]);
    assert_eq!(names("t5"), ["bias.table", REST]);
    assert_eq!(names("none"), [REST]);
    assert!(small_bias("nope").is_err());
}

#[test]
fn relaxed_t5_bucket_agrees_with_t5_bucket_on_integers() {
    for (nb, md) in [(8, 6), (32, 128), (32, 20), (16, 64)] {
        for bidir in [true, false] {
            for n in -300i64..=300 {
                assert_eq!(
                    t5_bucket_relaxed(n as f64, nb, md as f64, bidir),
                    t5_bucket(n, nb, md, bidir),
                    "n = {n}, {nb} buckets, max_distance {md}, bidirectional {bidir}"
                );
            }
        }
    }
}

#[test]
fn t5_boundaries_have_zero_or_undefined_derivative() {
    let probe = T5Probe::new(SEED).unwrap();
    assert_eq!(probe.quotient(probe.max_distance as f64, 1e-3), 0.0);
    assert_eq!(probe.quotient(probe.max_distance as f64, 1e-7), 0.0);
    // 8 buckets: 2 exact per direction, distance m moves up at D = 2 (m/2)^(2/k)
    let jumps = probe.jumps((2.0, 16.0));
    let at: Vec<f64> = jumps.iter().map(|j| j.0).collect();
    assert_eq!(at.len(), 3, "{jumps:?}");
    for (got, want) in at.iter().zip([4.5, 8.0, 12.5]) {
        assert!((got - want).abs() < 1e-12, "{at:?}");
    }
    for &d in &at {
        let (q3, q6) = (probe.quotient(d, 1e-3), probe.quotient(d, 1e-6));
        assert!(q3 > 0.0, "no jump at D = {d}");
        // the difference quotient grows as 1/h: no derivative there
        assert!((q6 / q3 - 1e3).abs() < 1e-6 * 1e3, "D = {d}: {q3} vs {q6}");
    }
    let (points, nonzero, near) = probe.scan((2.01, 16.0), 1399, 1e-3);
    assert_eq!(points, 1400);
    assert!(
        nonzero <= 2 * at.len() && near,
        "{nonzero} non-zero quotients"
    );
    assert_eq!(t5_boundary_jumps(32, true, 7, (0.0, 1e9)), vec![]);
}

fn gradcheck_bin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gradcheck"))
        .args(args)
        .output()
        .expect("run gradcheck")
}

#[test]
fn binary_prints_a_passing_table() {
    let out = gradcheck_bin(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let row = |family: &str, path: &str, param: &str| {
        text.lines().any(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            cells.len() > 4
                && cells[1] == family
                && cells[2] == path
                && cells[3] == param
                && l.contains("pass")
        })
    };
    for (family, param) in [("at5", "a"), ("at5", "c"), ("fire", "s"), ("t5", "table")] {
        for path in ["whole", "pruned"] {
            assert!(
                row(family, path, param),
                "no passing {family} {path} {param} row in\n{text}"
            );
        }
    }
    assert!(!text.contains("FAIL"), "{text}");
    assert!(text.contains("undefined at the 3 jumps"), "{text}");
}

#[test]
fn binary_checks_one_family_and_refuses_an_unknown_one() {
    let out = gradcheck_bin(&["--bias", "kerple-log"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("r1"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("| at5")), "{text}");

    let out = gradcheck_bin(&["--bias", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains("nope"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn the_negative_control_fails_every_bias_tensor_with_a_gradient() {
    let opts = CheckOptions {
        perturb_backward: true,
        ..CheckOptions::default()
    };
    for path in CheckPath::ALL {
        let check =
            check_bias_gradients_with(&small_bias("at5").unwrap(), SEED, path, &opts).unwrap();
        assert!(!check.passed(), "{path:?}");
        for p in &check.params {
            // the flipped sign doubles the error: 2|a| against a tolerance of about 1e-6 |a|
            let flipped = p.name != REST;
            assert_eq!(
                p.report.passed, !flipped,
                "{path:?} {}: {:?}",
                p.name, p.report
            );
        }
    }
}

#[test]
fn the_paper_init_std_makes_the_slopes_pass_vacuously() {
    let opts = CheckOptions {
        init_std: 0.01,
        ..CheckOptions::default()
    };
    let cfg = small_bias_with("at5", &opts).unwrap();
    let check = check_bias_gradients_with(&cfg, SEED, CheckPath::Whole, &opts).unwrap();
    let slope = |name: &str| check.params.iter().find(|p| p.name == name).unwrap();
    for name in ["bias.a", "bias.c"] {
        assert!(
            slope(name).report.passed && slope(name).vacuous(),
            "{:?}",
            slope(name)
        );
    }
    // and the flipped sign passes there too: a vacuous pass cannot tell a wrong backward
    let control = CheckOptions {
        perturb_backward: true,
        ..opts
    };
    let check = check_bias_gradients_with(&cfg, SEED, CheckPath::Whole, &control).unwrap();
    assert!(
        check
            .params
            .iter()
            .any(|p| p.name == "bias.c" && p.report.passed)
    );
}

#[test]
fn other_lengths_and_steps_pass_and_bad_options_are_refused() {
    for (len, h) in [(4, 1e-6), (9, 3e-6)] {
        let opts = CheckOptions {
            len,
            h,
            ..CheckOptions::default()
        };
        for name in ["at5", "t5", "fire"] {
            let cfg = small_bias_with(name, &opts).unwrap();
            for path in CheckPath::ALL {
                let check = check_bias_gradients_with(&cfg, SEED, path, &opts).unwrap();
                assert!(
                    check.passed(),
                    "{name} L = {len} h = {h} {path:?}: {check:?}"
                );
            }
        }
    }
    for bad in [
        CheckOptions {
            len: 2,
            ..CheckOptions::default()
        },
        CheckOptions {
            init_std: 0.0,
            ..CheckOptions::default()
        },
        CheckOptions {
            init_std: f64::NAN,
            ..CheckOptions::default()
        },
        CheckOptions {
            h: 0.0,
            ..CheckOptions::default()
        },
        CheckOptions {
            h: 1.0,
            ..CheckOptions::default()
        },
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
    }
}

#[test]
fn binary_prints_its_configuration() {
    let out = gradcheck_bin(&[
        "--bias",
        "at5",
        "--len",
        "7",
        "--init-std",
        "0.7",
        "--h",
        "2e-6",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in [
        "L = 7",
        "init std 0.7",
        "h = 2e-6",
        "widths 4 and 3",
        "mean pooling",
        "last-slot pooling",
        "a, c ~ U(1, 10)",
        "|a - n| <= 1e-8 + 1e-6 max(|a|, |n|)",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    assert!(!text.contains("warning"), "{text}");
}

#[test]
fn binary_negative_control_fails_and_paper_init_warns() {
    let out = gradcheck_bin(&["--bias", "at5", "--perturb-backward"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("negative control") && text.contains("FAILED"),
        "{text}"
    );
    let fails = text.lines().filter(|l| l.ends_with("FAIL |")).count();
    // a, c and the 12 MLP tensors, on both paths
    assert_eq!(fails, 2 * 14, "{text}");

    let out = gradcheck_bin(&["--bias", "at5", "--init-std", "0.01"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("warning:") && text.contains("at5 whole c:"),
        "{text}"
    );
}

#[test]
fn binary_refuses_bad_flags_in_one_line() {
    for args in [
        ["--len", "2"],
        ["--len", "100"],
        ["--init-std", "-1"],
        ["--init-std", "nan"],
        ["--h", "0"],
        ["--h", "1"],
    ] {
        let out = gradcheck_bin(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: ") && err.contains(args[0]),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
