//! The plain-Rust kernels: the path of CPUs without vector units the engine knows, and the
//! oracle every vector kernel is tested against bit for bit. Where a vector kernel fuses a
//! multiply-add these use `f32::mul_add` (one rounding); where it multiplies and adds, so do
//! these.
use super::Kernels;

/// Lanes of [`sum_lanes`] and [`dot_lanes`]: fixed, whatever the vector width.
pub const LANES: usize = 8;

/// The k-block of the packing GEMM: each output sums k in blocks this long, each block a chain
/// of fused multiply-adds from zero, added to C in block order. It is matrixmultiply's `S_KC`
/// (the same for all its f32 kernels), so this path, matrixmultiply (on NEON) and the x86
/// packing GEMM agree bit for bit; the committed records were computed with it.
pub const GEMM_KC: usize = 256;

/// `Σ x` with eight running sums (element i goes to sum i mod 8) combined pairwise at the end.
///
/// A single running sum is a chain of dependent adds that no compiler may reorder, one add
/// latency per element; eight independent chains vectorise. The order is fixed by the length
/// alone, so results stay the same at any thread count and on any CPU.
pub fn sum_lanes<F: Kernels>(x: &[F]) -> F {
    dot_like(x, None)
}

/// `Σ x·y` in the order of [`sum_lanes`], each product rounded before it is added.
pub fn dot_lanes<F: Kernels>(x: &[F], y: &[F]) -> F {
    dot_like(x, Some(y))
}

#[inline]
fn dot_like<F: Kernels>(x: &[F], y: Option<&[F]>) -> F {
    let mut acc = [F::ZERO; LANES];
    let n = x.len() - x.len() % LANES;
    match y {
        None => {
            for c in x[..n].chunks_exact(LANES) {
                for (a, &v) in acc.iter_mut().zip(c) {
                    *a += v;
                }
            }
        }
        Some(y) => {
            assert_eq!(x.len(), y.len(), "dot of slices of different lengths");
            for (c, d) in x[..n].chunks_exact(LANES).zip(y[..n].chunks_exact(LANES)) {
                for ((a, &v), &w) in acc.iter_mut().zip(c).zip(d) {
                    *a += v * w;
                }
            }
        }
    }
    for (i, &v) in x[n..].iter().enumerate() {
        acc[i] += y.map_or(v, |y| v * y[n + i]);
    }
    combine_lanes(acc)
}

/// The eight lane sums combined: lanes i and i+4, then (0+2) + (1+3).
#[inline]
pub fn combine_lanes<F: Kernels>(acc: [F; LANES]) -> F {
    let (a, b) = acc.split_at(LANES / 2);
    let q: [F; 4] = std::array::from_fn(|i| a[i] + b[i]);
    (q[0] + q[2]) + (q[1] + q[3])
}

/// `e^x` in f32 without a libm call: branch-free, so loops over slices vectorise, and the one
/// algorithm every kernel path evaluates, step for step (each step one rounding, no fused
/// multiply-add), so they agree bit for bit.
///
/// Softmax and GELU spend most of their time in exp, and libm's `expf` is an opaque call per
/// element. This is the Cephes single-precision scheme: x = n ln2 + r with |r| <= ln2/2 (ln2 split
/// in two constants so n ln2 is exact), a degree-6 polynomial for e^r, and 2^n built in the
/// exponent bits. Within [-87.3, 88.3] it is within 2 ulp of the correctly rounded value (checked
/// against f64 in the tests). Below -87.3 it returns 0 (libm returns subnormals down to -103.9),
/// above 88.37 it returns +inf (libm: 88.72), and NaN stays NaN. f64, used for gradient checks,
/// keeps libm's exp.
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    use exp_consts::*;
    let xc = x.clamp(LO, HI);
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = P0;
    let p = p * r + P1;
    let p = p * r + P2;
    let p = p * r + P3;
    let p = p * r + P4;
    let p = p * r + P5;
    let y = p * (r * r) + r + 1.0;
    let bits = (t.to_bits() as i32 - ROUND.to_bits() as i32 + 127) << 23;
    let e = y * f32::from_bits(bits as u32);
    if x.is_nan() {
        x
    } else if x < LO {
        0.0
    } else if x > HI {
        f32::INFINITY
    } else {
        e
    }
}

/// The constants of [`exp_f32`], shared with the vector versions.
pub(super) mod exp_consts {
    pub const LOG2E: f32 = std::f32::consts::LOG2_E;
    pub const LN2_HI: f32 = 0.693_359_4;
    pub const LN2_LO: f32 = -2.121_944_4e-4;
    pub const LO: f32 = -87.336_55;
    pub const HI: f32 = 88.376_26;
    /// Adding 1.5 * 2^23 rounds to the nearest integer and leaves it in the low mantissa bits.
    pub const ROUND: f32 = 12_582_912.0;
    pub const P0: f32 = 1.987_569_1e-4;
    pub const P1: f32 = 1.398_199_9e-3;
    pub const P2: f32 = 8.333_452e-3;
    pub const P3: f32 = 4.166_579_6e-2;
    pub const P4: f32 = 1.666_666_5e-1;
    pub const P5: f32 = 0.5;
}

/// The unpacked small GEMM (see [`super::gemm_rows_on`]): for each row of C, one running sum
/// per column, lanes across columns, a fused multiply-add per term in k order.
///
/// # Safety
/// The pointers and strides describe valid matrices of those shapes; C is writable and
/// overlaps neither A nor B.
pub(super) unsafe fn gemm_rows(
    ((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc): super::GemmRowsArgs,
) {
    for i in 0..m {
        // SAFETY: row i of C has n elements (the caller's contract), not aliased by A or B.
        let ci = unsafe { std::slice::from_raw_parts_mut(c.add(i * rsc), n) };
        if beta == 0.0 {
            ci.fill(0.0);
        }
        for p in 0..k {
            // SAFETY: (i, p) is inside A and row p of B has n elements.
            let (aip, bp) = unsafe {
                (
                    *a.add(i * rsa + p * csa),
                    std::slice::from_raw_parts(b.add(p * rsb), n),
                )
            };
            for (cj, &bj) in ci.iter_mut().zip(bp) {
                *cj = aip.mul_add(bj, *cj);
            }
        }
    }
}

/// The packing GEMM's arithmetic (see [`super::sgemm_on`]) in plain Rust: for each row of C,
/// k in blocks of [`GEMM_KC`], each block's products summed by fused multiply-adds from zero
/// into one running sum per column, then added to C (scaled by beta in the first block only;
/// beta 0 writes the block's sum without reading C).
#[allow(clippy::too_many_arguments)]
pub(super) fn sgemm(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    (rsa, csa): (usize, usize),
    b: &[f32],
    (rsb, csb): (usize, usize),
    beta: f32,
    c: &mut [f32],
    rsc: usize,
) {
    let mut ab = vec![0f32; n];
    for i in 0..m {
        let ci = &mut c[i * rsc..][..n];
        if k == 0 {
            ci.iter_mut()
                .for_each(|x| *x = if beta == 0.0 { 0.0 } else { *x * beta });
        }
        for (block, p0) in (0..k).step_by(GEMM_KC).enumerate() {
            ab.fill(0.0);
            for p in p0..k.min(p0 + GEMM_KC) {
                let aip = a[i * rsa + p * csa];
                for (j, s) in ab.iter_mut().enumerate() {
                    *s = aip.mul_add(b[p * rsb + j * csb], *s);
                }
            }
            let scale = if block == 0 { beta } else { 1.0 };
            for (x, &s) in ci.iter_mut().zip(&ab) {
                *x = if scale == 0.0 { s } else { *x * scale + s };
            }
        }
    }
}
