//! aarch64 NEON kernels: 4 lanes of f32.
use super::GemmRowsArgs;
use super::portable::{LANES, combine_lanes, exp_consts::*, exp_f32};
use std::arch::aarch64::*;

/// Rows of C per microkernel call: 6 rows × 16 columns is 24 accumulators of the 32 vector
/// registers, with four B vectors and a broadcast.
const MR: usize = 6;
/// Columns of C per microkernel call: four 4-lane vectors.
const NR: usize = 16;

/// The unpacked small GEMM (see [`super::gemm_rows_on`]), 4 lanes; column tails narrower
/// than 16 run the portable loop, which rounds the same (`f32::mul_add` is one `fmadd` here).
///
/// # Safety
/// The pointers and strides describe valid matrices, C writable and overlapping neither A nor
/// B.
#[target_feature(enable = "neon")]
pub(super) unsafe fn gemm_rows(((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc): GemmRowsArgs) {
    let full = n - n % NR;
    let mut i = 0;
    while i < m {
        let rows = MR.min(m - i);
        // SAFETY: the blocks (i.., j..j+16) with j + 16 <= full <= n lie inside the matrices.
        unsafe {
            let mut j = 0;
            while j < full {
                let (ab, bb, cb) = (a.add(i * rsa), b.add(j), c.add(i * rsc + j));
                let args = (k, ab, rsa, csa, bb, rsb, cb, rsc, beta != 0.0);
                match rows {
                    6 => block::<6>(args),
                    5 => block::<5>(args),
                    4 => block::<4>(args),
                    3 => block::<3>(args),
                    2 => block::<2>(args),
                    _ => block::<1>(args),
                }
                j += NR;
            }
        }
        i += rows;
    }
    if full < n {
        // SAFETY: columns full..n of the same matrices.
        unsafe {
            super::portable::gemm_rows((
                (m, k, n - full),
                a,
                (rsa, csa),
                b.add(full),
                rsb,
                beta,
                c.add(full),
                rsc,
            ))
        };
    }
}

type BlockArgs = (
    usize,
    *const f32,
    usize,
    usize,
    *const f32,
    usize,
    *mut f32,
    usize,
    bool,
);

/// One R × 16 block of C, its accumulators in registers over all of k.
#[target_feature(enable = "neon")]
#[inline]
#[allow(clippy::needless_range_loop)] // indexed loops to constants unroll into registers
unsafe fn block<const R: usize>((k, a, rsa, csa, b, rsb, c, rsc, acc): BlockArgs) {
    const V: usize = NR / 4;
    let mut s = [[vdupq_n_f32(0.0); V]; R];
    // SAFETY (whole body): every address read or written is inside the block the caller
    // checked.
    unsafe {
        if acc {
            for r in 0..R {
                for v in 0..V {
                    s[r][v] = vld1q_f32(c.add(r * rsc + 4 * v));
                }
            }
        }
        let mut ap = a;
        let mut bp = b;
        for _ in 0..k {
            let mut bv = [vdupq_n_f32(0.0); V];
            for v in 0..V {
                bv[v] = vld1q_f32(bp.add(4 * v));
            }
            for r in 0..R {
                let x = vdupq_n_f32(*ap.add(r * rsa));
                for v in 0..V {
                    // s + x·b with one rounding.
                    s[r][v] = vfmaq_f32(s[r][v], x, bv[v]);
                }
            }
            ap = ap.add(csa);
            bp = bp.add(rsb);
        }
        for r in 0..R {
            for v in 0..V {
                vst1q_f32(c.add(r * rsc + 4 * v), s[r][v]);
            }
        }
    }
}

/// `Σ x` (y `None`) or `Σ x·y` in the eight lanes of [`super::portable::sum_lanes`]: two
/// 4-lane registers hold its eight running sums; a product is rounded before it is added.
///
/// # Safety
/// `y`, when given, is as long as `x`.
#[target_feature(enable = "neon")]
pub(super) unsafe fn dot_lanes(x: &[f32], y: Option<&[f32]>) -> f32 {
    let n = x.len() - x.len() % LANES;
    let (mut lo, mut hi) = (vdupq_n_f32(0.0), vdupq_n_f32(0.0));
    // SAFETY: every load reads 4 elements starting below n - 4 (of x, and of y, as long).
    unsafe {
        for i in (0..n).step_by(LANES) {
            let (xl, xh) = (
                vld1q_f32(x.as_ptr().add(i)),
                vld1q_f32(x.as_ptr().add(i + 4)),
            );
            match y {
                None => {
                    lo = vaddq_f32(lo, xl);
                    hi = vaddq_f32(hi, xh);
                }
                Some(y) => {
                    let yl = vld1q_f32(y.as_ptr().add(i));
                    let yh = vld1q_f32(y.as_ptr().add(i + 4));
                    lo = vaddq_f32(lo, vmulq_f32(xl, yl));
                    hi = vaddq_f32(hi, vmulq_f32(xh, yh));
                }
            }
        }
    }
    let mut lanes = [0f32; LANES];
    // SAFETY: `lanes` holds 8 floats.
    unsafe {
        vst1q_f32(lanes.as_mut_ptr(), lo);
        vst1q_f32(lanes.as_mut_ptr().add(4), hi);
    }
    for (i, &v) in x[n..].iter().enumerate() {
        lanes[i] += y.map_or(v, |y| v * y[n + i]);
    }
    combine_lanes(lanes)
}

/// `x = e^x` by [`super::exp_f32`]'s steps, 4 lanes at a time (the tail scalar).
///
/// # Safety
/// None beyond the CPU having NEON, which every aarch64 CPU has.
#[target_feature(enable = "neon")]
pub(super) unsafe fn exp(x: &mut [f32]) {
    let n = x.len() - x.len() % 4;
    let set = vdupq_n_f32;
    for i in (0..n).step_by(4) {
        // SAFETY: elements i..i+4 are inside x.
        unsafe {
            let p = x.as_mut_ptr().add(i);
            let v = vld1q_f32(p);
            let xc = vminq_f32(vmaxq_f32(v, set(LO)), set(HI));
            let t = vaddq_f32(vmulq_f32(xc, set(LOG2E)), set(ROUND));
            let nn = vsubq_f32(t, set(ROUND));
            let r = vsubq_f32(
                vsubq_f32(xc, vmulq_f32(nn, set(LN2_HI))),
                vmulq_f32(nn, set(LN2_LO)),
            );
            let mut q = set(P0);
            for c in [P1, P2, P3, P4, P5] {
                q = vaddq_f32(vmulq_f32(q, r), set(c));
            }
            let y = vaddq_f32(vaddq_f32(vmulq_f32(q, vmulq_f32(r, r)), r), set(1.0));
            let bits = vshlq_n_s32::<23>(vaddq_s32(
                vsubq_s32(
                    vreinterpretq_s32_f32(t),
                    vdupq_n_s32(ROUND.to_bits() as i32),
                ),
                vdupq_n_s32(127),
            ));
            let e = vmulq_f32(y, vreinterpretq_f32_s32(bits));
            let e = vbslq_f32(vcgtq_f32(v, set(HI)), set(f32::INFINITY), e);
            let e = vbslq_f32(vcltq_f32(v, set(LO)), set(0.0), e);
            // NaN is the one value not equal to itself.
            let e = vbslq_f32(vceqq_f32(v, v), e, v);
            vst1q_f32(p, e);
        }
    }
    x[n..].iter_mut().for_each(|v| *v = exp_f32(*v));
}
