//! AVX2+FMA kernels: 8 lanes of f32.
use std::arch::x86_64::*;

/// Rows of C per microkernel call: 6 rows × 16 columns is 12 accumulators, which with two
/// B vectors and one broadcast fills the 16 vector registers.
const MR: usize = 6;
/// Columns of C per microkernel call: two 8-lane vectors.
const NR: usize = 16;

/// The unpacked small GEMM (see [`crate::kernels::gemm_rows_on`]), 8 lanes.
///
/// # Safety
/// The CPU has AVX2 and FMA; the pointers and strides describe valid matrices, C writable and
/// overlapping neither A nor B.
#[target_feature(enable = "avx2,fma")]
pub(in crate::kernels) unsafe fn gemm_rows(
    ((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc): crate::kernels::GemmRowsArgs,
) {
    let acc = beta != 0.0;
    // Row blocks outer, column blocks inner: the R rows of A (or, transposed, R columns
    // over k rows) stay in L1 while every column block of B streams past them.
    let mut i = 0;
    while i < m {
        let rows = MR.min(m - i);
        let mut j = 0;
        while j < n {
            let w = NR.min(n - j);
            // SAFETY: the block (i.., j..) of size rows × w lies inside the matrices.
            unsafe {
                let (ab, bb, cb) = (a.add(i * rsa), b.add(j), c.add(i * rsc + j));
                let args = (k, ab, rsa, csa, bb, rsb, cb, rsc, w, acc);
                match (rows, w) {
                    (6, NR) => block::<6, 2, true>(args),
                    (5, NR) => block::<5, 2, true>(args),
                    (4, NR) => block::<4, 2, true>(args),
                    (3, NR) => block::<3, 2, true>(args),
                    (2, NR) => block::<2, 2, true>(args),
                    (_, NR) => block::<1, 2, true>(args),
                    (6, 0..=8) => block::<6, 1, false>(args),
                    (5, 0..=8) => block::<5, 1, false>(args),
                    (4, 0..=8) => block::<4, 1, false>(args),
                    (3, 0..=8) => block::<3, 1, false>(args),
                    (2, 0..=8) => block::<2, 1, false>(args),
                    (_, 0..=8) => block::<1, 1, false>(args),
                    (6, _) => block::<6, 2, false>(args),
                    (5, _) => block::<5, 2, false>(args),
                    (4, _) => block::<4, 2, false>(args),
                    (3, _) => block::<3, 2, false>(args),
                    (2, _) => block::<2, 2, false>(args),
                    (_, _) => block::<1, 2, false>(args),
                }
            }
            j += w;
        }
        i += rows;
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
    usize,
    bool,
);

/// One R × 8V block of C (w valid columns, all 8V of them when `FULL`), its accumulators
/// in registers over all of k. Loops over rows and vectors run to constants, so they unroll
/// and the accumulator arrays live in registers.
#[target_feature(enable = "avx2,fma")]
#[inline]
#[allow(clippy::needless_range_loop)] // indexed loops to constants unroll into registers
unsafe fn block<const R: usize, const V: usize, const FULL: bool>(
    (k, a, rsa, csa, b, rsb, c, rsc, w, acc): BlockArgs,
) {
    // Lanes of each B vector that are inside the matrix (all of them when FULL).
    let idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut mask = [_mm256_setzero_si256(); V];
    for (v, m) in mask.iter_mut().enumerate() {
        *m = _mm256_cmpgt_epi32(_mm256_set1_epi32(w as i32 - 8 * v as i32), idx);
    }
    let mut s = [[_mm256_setzero_ps(); V]; R];
    // SAFETY (whole body): every address read or written is inside the block the caller
    // checked; masked loads touch only the valid lanes.
    unsafe {
        if acc {
            for r in 0..R {
                let cr = c.add(r * rsc);
                for v in 0..V {
                    s[r][v] = if FULL {
                        _mm256_loadu_ps(cr.add(8 * v))
                    } else {
                        _mm256_maskload_ps(cr.add(8 * v), mask[v])
                    };
                }
            }
        }
        let mut ap = a;
        let mut bp = b;
        for _ in 0..k {
            let mut bv = [_mm256_setzero_ps(); V];
            for v in 0..V {
                bv[v] = if FULL {
                    _mm256_loadu_ps(bp.add(8 * v))
                } else {
                    _mm256_maskload_ps(bp.add(8 * v), mask[v])
                };
            }
            for r in 0..R {
                let x = _mm256_broadcast_ss(&*ap.add(r * rsa));
                for v in 0..V {
                    s[r][v] = _mm256_fmadd_ps(x, bv[v], s[r][v]);
                }
            }
            ap = ap.add(csa);
            bp = bp.add(rsb);
        }
        for r in 0..R {
            let cr = c.add(r * rsc);
            if FULL {
                for v in 0..V {
                    _mm256_storeu_ps(cr.add(8 * v), s[r][v]);
                }
            } else {
                // Masked stores are slow on some CPUs: spill and copy the valid lanes.
                let mut tmp = [0f32; NR];
                for v in 0..V {
                    _mm256_storeu_ps(tmp.as_mut_ptr().add(8 * v), s[r][v]);
                }
                std::ptr::copy_nonoverlapping(tmp.as_ptr(), cr, w);
            }
        }
    }
}

/// `Σ x` (y `None`) or `Σ x·y` in the eight lanes of [`crate::kernels::portable::sum_lanes`]:
/// one 8-lane register is exactly its eight running sums, a product rounded before it is
/// added (a multiply and an add, not a fused multiply-add, as in the portable code). The
/// AVX-512 path runs this too: sixteen lanes would change the order of the sums.
///
/// # Safety
/// The CPU has AVX; `y`, when given, is as long as `x`.
#[target_feature(enable = "avx")]
pub(in crate::kernels) unsafe fn dot_lanes(x: &[f32], y: Option<&[f32]>) -> f32 {
    use crate::kernels::portable::{LANES, combine_lanes};
    let n = x.len() - x.len() % LANES;
    let mut acc = _mm256_setzero_ps();
    // SAFETY: every load reads LANES elements starting below n <= len (of x, and of y, which
    // is as long).
    unsafe {
        match y {
            None => {
                for i in (0..n).step_by(LANES) {
                    acc = _mm256_add_ps(acc, _mm256_loadu_ps(x.as_ptr().add(i)));
                }
            }
            Some(y) => {
                for i in (0..n).step_by(LANES) {
                    let p = _mm256_mul_ps(
                        _mm256_loadu_ps(x.as_ptr().add(i)),
                        _mm256_loadu_ps(y.as_ptr().add(i)),
                    );
                    acc = _mm256_add_ps(acc, p);
                }
            }
        }
    }
    let mut lanes = [0f32; LANES];
    // SAFETY: `lanes` holds 8 floats.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc) };
    for (i, &v) in x[n..].iter().enumerate() {
        lanes[i] += y.map_or(v, |y| v * y[n + i]);
    }
    combine_lanes(lanes)
}

/// `x = e^x` by [`crate::kernels::exp_f32`]'s steps, 8 lanes at a time (the tail scalar).
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(in crate::kernels) unsafe fn exp(x: &mut [f32]) {
    use crate::kernels::portable::{exp_consts::*, exp_f32};
    let n = x.len() - x.len() % 8;
    let set = _mm256_set1_ps;
    for i in (0..n).step_by(8) {
        // SAFETY: elements i..i+8 are inside x (i + 8 <= n <= len).
        unsafe {
            let p = x.as_mut_ptr().add(i);
            let v = _mm256_loadu_ps(p);
            let xc = _mm256_min_ps(_mm256_max_ps(v, set(LO)), set(HI));
            let t = _mm256_add_ps(_mm256_mul_ps(xc, set(LOG2E)), set(ROUND));
            let nn = _mm256_sub_ps(t, set(ROUND));
            let r = _mm256_sub_ps(
                _mm256_sub_ps(xc, _mm256_mul_ps(nn, set(LN2_HI))),
                _mm256_mul_ps(nn, set(LN2_LO)),
            );
            let mut q = set(P0);
            for c in [P1, P2, P3, P4, P5] {
                q = _mm256_add_ps(_mm256_mul_ps(q, r), set(c));
            }
            let y = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(q, _mm256_mul_ps(r, r)), r),
                set(1.0),
            );
            let bits = _mm256_slli_epi32::<23>(_mm256_add_epi32(
                _mm256_sub_epi32(
                    _mm256_castps_si256(t),
                    _mm256_set1_epi32(ROUND.to_bits() as i32),
                ),
                _mm256_set1_epi32(127),
            ));
            let e = _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
            let e = _mm256_blendv_ps(
                e,
                set(f32::INFINITY),
                _mm256_cmp_ps::<_CMP_GT_OQ>(v, set(HI)),
            );
            let e = _mm256_blendv_ps(
                e,
                _mm256_setzero_ps(),
                _mm256_cmp_ps::<_CMP_LT_OQ>(v, set(LO)),
            );
            let e = _mm256_blendv_ps(e, v, _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
            _mm256_storeu_ps(p, e);
        }
    }
    x[n..].iter_mut().for_each(|v| *v = exp_f32(*v));
}

/// `f()` with its inlined loops compiled for this path (see [`crate::kernels::wide`]).
///
/// # Safety
/// The CPU has the features enabled here.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(in crate::kernels) unsafe fn wide<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The packing GEMM's register tile: 6 rows × 16 columns, 12 accumulators of the 16 vector
/// registers, 2 for a row of B and one broadcast.
pub(in crate::kernels) const PACKED: crate::kernels::x86::packed::Geometry =
    crate::kernels::x86::packed::Geometry {
        mr: 6,
        nr: 16,
        mc: 120,
        nc: 768,
        lanes: 8,
        tile: packed_tile,
    };

/// [`PACKED`]'s tile (see [`crate::kernels::x86::packed::Tile`]); an edge's columns are masked
/// and its unused vector skipped.
///
/// # Safety
/// The CPU has AVX2 and FMA; the panels are packed `kc × 6` and `kc × 16`; the valid part of
/// the tile lies inside C.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn packed_tile(
    kc: usize,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    rsc: usize,
    rows: usize,
    cols: usize,
    scale: f32,
) {
    // SAFETY: as the caller guarantees.
    unsafe {
        if cols > 8 {
            packed_block::<2>(kc, a, b, ldb, c, rsc, rows, cols, scale)
        } else {
            packed_block::<1>(kc, a, b, ldb, c, rsc, rows, cols, scale)
        }
    }
}

/// [`packed_tile`] with V vectors of 8 columns.
#[target_feature(enable = "avx2,fma")]
#[inline]
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
unsafe fn packed_block<const V: usize>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    rsc: usize,
    rows: usize,
    cols: usize,
    scale: f32,
) {
    const MR: usize = 6;
    let mut s = [[_mm256_setzero_ps(); V]; MR];
    // SAFETY (whole body): the panels hold kc × MR and kc × NR floats; C is written only in
    // its valid rows and (masked) columns.
    unsafe {
        let (mut ap, mut bp) = (a, b);
        for _ in 0..kc {
            let mut bv = [_mm256_setzero_ps(); V];
            for v in 0..V {
                bv[v] = _mm256_loadu_ps(bp.add(8 * v));
            }
            for r in 0..MR {
                let x = _mm256_set1_ps(*ap.add(r));
                for v in 0..V {
                    s[r][v] = _mm256_fmadd_ps(x, bv[v], s[r][v]);
                }
            }
            ap = ap.add(MR);
            bp = bp.add(ldb);
        }
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut mask = [_mm256_setzero_si256(); V];
        for (v, m) in mask.iter_mut().enumerate() {
            let valid = cols.saturating_sub(8 * v).min(8) as i32;
            *m = _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), lane);
        }
        let sc = _mm256_set1_ps(scale);
        for r in 0..rows.min(MR) {
            let cr = c.add(r * rsc);
            for v in 0..V {
                let out = if scale == 0.0 {
                    s[r][v]
                } else {
                    let old = _mm256_maskload_ps(cr.add(8 * v), mask[v]);
                    _mm256_add_ps(_mm256_mul_ps(old, sc), s[r][v])
                };
                _mm256_maskstore_ps(cr.add(8 * v), mask[v], out);
            }
        }
    }
}
