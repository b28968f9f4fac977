//! Summary statistics: mean ± std and Welch intervals over seeds, medians of timings, and the
//! least-squares fits the benchmark reports.

/// Mean and sample standard deviation (divisor n − 1) of `xs`.
///
/// One value gives a std of 0 (no spread is observable, and 0/0 would print as NaN); no values
/// give `(NaN, NaN)`, which [`format_mean_std`] prints as [`MISSING`].
pub fn mean_std(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0);
    }
    // Two passes (deviations from the mean) rather than E[x²] − E[x]², which cancels
    // catastrophically when the spread is small next to the mean, as with accuracies near 1.
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, (ss / (n - 1) as f64).sqrt())
}

/// The difference of means `mean(a) - mean(b)` with its 95 % Welch interval `(diff, lo, hi)`:
/// unequal variances, Welch–Satterthwaite degrees of freedom. `None` with fewer than two values
/// on either side. When both samples are constant the interval is the point itself.
///
/// The t quantile is [`t975`] at the fractional df, computed, not read from a table (a table
/// interpolated between df 1 and 2 is 11 % off at df 1.1, where two seeds meet five).
pub fn welch_interval(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, sa), (mb, sb)) = (mean_std(a), mean_std(b));
    let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
    let diff = ma - mb;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return Some((diff, diff, diff));
    }
    let df = (va + vb).powi(2) / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    let t = t975(df);
    Some((diff, diff - t * se, diff + t * se))
}

/// `a − b` in points with its 95 % Welch interval and the reading a report gives it, e.g.
/// `+1.9 points, 95 % Welch interval [+1.1, +2.7] over 5 and 5 seeds: separated` ("not
/// separated" when the interval holds zero); with fewer than two seeds on a side, the difference
/// alone and `too few seeds for an interval`.
pub fn difference_phrase(a: &[f64], b: &[f64]) -> String {
    let (ma, mb) = (mean_std(a).0, mean_std(b).0);
    match welch_interval(a, b) {
        Some((diff, lo, hi)) => {
            let verdict = if lo > 0.0 || hi < 0.0 {
                "separated"
            } else {
                "not separated"
            };
            format!(
                "{diff:+.1} points, 95 % Welch interval [{lo:+.1}, {hi:+.1}] over {} and {} seeds: \
                 {verdict}",
                a.len(),
                b.len()
            )
        }
        None => format!("{:+.1} points, too few seeds for an interval", ma - mb),
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom, any real `df` > 0 (Welch's
/// are fractional): the `t` where the upper tail `½·I(df/(df+t²); df/2, ½)` is 0.025, found by
/// bisection to 1e-12. Exact to the digits a report prints: 12.706 at df 1, 2.776 at df 4,
/// 1.960 as df grows without bound.
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df > 1e12 {
        return 1.959_963_984_540_054; // the normal quantile
    }
    let upper_tail = |t: f64| 0.5 * incomplete_beta(df / (df + t * t), 0.5 * df, 0.5);
    // The tail falls from ½ at t = 0; at df ≥ 1 it is below 0.025 well before t = 1e3.
    let (mut lo, mut hi) = (0.0, 1e3);
    while upper_tail(hi) > 0.025 {
        hi *= 10.0;
    }
    while hi - lo > 1e-12 * hi {
        let mid = 0.5 * (lo + hi);
        if upper_tail(mid) > 0.025 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function `I(x; a, b)` for `0 ≤ x ≤ 1`, `a, b > 0`: the
/// continued fraction (evaluated by the modified Lentz method) on the side of `x` where it
/// converges fast, and the symmetry `I(x; a, b) = 1 − I(1 − x; b, a)` on the other.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function: terms `d(2m+1) = −(a+m)(a+b+m)x /
/// ((a+2m)(a+2m+1))` and `d(2m) = m(b−m)x / ((a+2m−1)(a+2m))`, to relative change 1e-15.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..1000 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 / guard(1.0 + num * d);
            c = guard(1.0 + num / c);
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0`: Lanczos' approximation (g = 7, nine coefficients), relative error
/// near 1e-15 over the range a t quantile needs.
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)·Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + (i + 1) as f64));
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Least-squares slope of `ln y` on `ln x`: the exponent `p` of `y ∝ x^p`.
pub fn loglog_slope(x: &[f64], y: &[f64]) -> f64 {
    let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
    let n = lx.len() as f64;
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// Least-squares `(a, c)` of `y ≈ a·x + c·x²` (no constant term), from the 2×2 normal equations.
pub fn fit_linear_quadratic(x: &[f64], y: &[f64]) -> (f64, f64) {
    let (mut s11, mut s12, mut s22, mut r1, mut r2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&x, &y) in x.iter().zip(y) {
        let (x1, x2) = (x, x * x);
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        r1 += x1 * y;
        r2 += x2 * y;
    }
    let det = s11 * s22 - s12 * s12;
    ((r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_recover_the_exponent_and_the_coefficients() {
        let x = [50.0, 100.0, 200.0, 500.0, 1000.0];
        let cube: Vec<f64> = x.iter().map(|v: &f64| 3.0 * v.powi(3)).collect();
        assert!((loglog_slope(&x, &cube) - 3.0).abs() < 1e-12);
        let y: Vec<f64> = x.iter().map(|v| 0.5 * v + 0.002 * v * v).collect();
        let (a, c) = fit_linear_quadratic(&x, &y);
        assert!(
            (a - 0.5).abs() < 1e-9 && (c - 0.002).abs() < 1e-12,
            "{a} {c}"
        );
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
