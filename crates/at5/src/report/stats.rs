//! Summary statistics: mean ± std and Welch intervals over seeds, medians of timings, and the
//! least-squares fits the benchmark reports.

/// Mean and sample standard deviation (divisor n − 1) of `xs`.
///
/// One value gives a std of 0 (no spread is observable, and 0/0 would print as NaN); no values
/// give `(NaN, NaN)`, which [`super::format_mean_std`] prints as [`super::MISSING`].
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
            // One decimal, or two where one would print the interval as a single point (e.g.
            // `+0.0 [+0.0, +0.0]` for two families within a test example of each other).
            let places = if format!("{lo:+.1}") == format!("{hi:+.1}") {
                2
            } else {
                1
            };
            format!(
                "{diff:+.places$} points, 95 % Welch interval [{lo:+.places$}, {hi:+.places$}] \
                 over {} and {} seeds: {verdict}",
                a.len(),
                b.len()
            )
        }
        None => format!("{:+.1} points, too few seeds for an interval", ma - mb),
    }
}

/// The 0.975 quantile of Student's t with `df` ≥ ½ degrees of freedom, any real `df` (Welch's
/// are fractional, and at least 1: the smaller sample less one): 12.706 at df 1, 2.776 at df 4,
/// 1.960 as df grows without bound; NaN below ½ or for NaN.
///
/// Up to [`T_EXACT_DF`] it is `statrs`'s inverse of the t distribution function, within 1e-12
/// of the quantile from df ½ on (a Welch df is at most the two sample sizes less 2, so every
/// interval a report prints is computed here; below df ½ `statrs` drifts, 5e-9 off at 0.2 and
/// orders of magnitude at 0.1). Above it `statrs` loses digits (3e-6 relative at df 10⁵, 7 % at
/// 10⁷) and from about 10⁸ does not return, so the quantile is the normal's plus the first two
/// terms of its expansion in 1/df (Abramowitz and Stegun 26.7.5), within 2e-12 from df 10⁴ on.
pub fn t975(df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if df.is_nan() || df < 0.5 {
        return f64::NAN;
    }
    if df <= T_EXACT_DF {
        return StudentsT::new(0.0, 1.0, df)
            .expect("df is positive and finite")
            .inverse_cdf(0.975);
    }
    const Z: f64 = 1.959_963_984_540_054; // the normal quantile
    let (z3, z5) = (Z.powi(3), Z.powi(5));
    Z + (z3 + Z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * Z) / (96.0 * df * df)
}

/// The largest df at which [`t975`] inverts the t distribution itself.
pub const T_EXACT_DF: f64 = 1e4;

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
