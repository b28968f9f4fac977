//! AVX-512F kernels: 16 lanes of f32, masked loads and stores at the edges.
use crate::kernels::GemmRowsArgs;
use std::arch::x86_64::*;

/// Rows of C per microkernel call: 8 rows × 32 columns is 16 accumulators of the 32 vector
/// registers, leaving room for two B vectors and the broadcasts.
const MR: usize = 8;
/// Columns of C per microkernel call: two 16-lane vectors.
const NR: usize = 32;

/// The unpacked small GEMM (see [`crate::kernels::gemm_rows_on`]), 16 lanes: each output is
/// the AVX2 kernel's sequence of fused multiply-adds, so the two agree bit for bit.
///
/// # Safety
/// The CPU has AVX-512F; the pointers and strides describe valid matrices, C writable and
/// overlapping neither A nor B.
#[target_feature(enable = "avx512f")]
pub(in crate::kernels) unsafe fn gemm_rows(
    ((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc): GemmRowsArgs,
) {
    let acc = beta != 0.0;
    // Row blocks outer, column blocks inner, as in the AVX2 kernel.
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
                match (rows, w > 16) {
                    (8, true) => block::<8, 2>(args),
                    (7, true) => block::<7, 2>(args),
                    (6, true) => block::<6, 2>(args),
                    (5, true) => block::<5, 2>(args),
                    (4, true) => block::<4, 2>(args),
                    (3, true) => block::<3, 2>(args),
                    (2, true) => block::<2, 2>(args),
                    (_, true) => block::<1, 2>(args),
                    (8, false) => block::<8, 1>(args),
                    (7, false) => block::<7, 1>(args),
                    (6, false) => block::<6, 1>(args),
                    (5, false) => block::<5, 1>(args),
                    (4, false) => block::<4, 1>(args),
                    (3, false) => block::<3, 1>(args),
                    (2, false) => block::<2, 1>(args),
                    (_, false) => block::<1, 1>(args),
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

/// One R × 16V block of C (w valid columns), its accumulators in registers over all of k.
/// Lanes past w are masked off in every load and store, so they touch no memory.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::needless_range_loop)] // indexed loops to constants unroll into registers
unsafe fn block<const R: usize, const V: usize>(
    (k, a, rsa, csa, b, rsb, c, rsc, w, acc): BlockArgs,
) {
    let mut mask = [0 as __mmask16; V];
    for (v, m) in mask.iter_mut().enumerate() {
        let valid = w.saturating_sub(16 * v).min(16);
        *m = ((1u32 << valid) - 1) as __mmask16;
    }
    let mut s = [[_mm512_setzero_ps(); V]; R];
    // SAFETY (whole body): every address read or written is inside the block the caller
    // checked; masked lanes are neither read nor written.
    unsafe {
        if acc {
            for r in 0..R {
                let cr = c.add(r * rsc);
                for v in 0..V {
                    s[r][v] = _mm512_maskz_loadu_ps(mask[v], cr.add(16 * v));
                }
            }
        }
        let mut ap = a;
        let mut bp = b;
        for _ in 0..k {
            let mut bv = [_mm512_setzero_ps(); V];
            for v in 0..V {
                bv[v] = _mm512_maskz_loadu_ps(mask[v], bp.add(16 * v));
            }
            for r in 0..R {
                let x = _mm512_set1_ps(*ap.add(r * rsa));
                for v in 0..V {
                    s[r][v] = _mm512_fmadd_ps(x, bv[v], s[r][v]);
                }
            }
            ap = ap.add(csa);
            bp = bp.add(rsb);
        }
        for r in 0..R {
            let cr = c.add(r * rsc);
            for v in 0..V {
                _mm512_mask_storeu_ps(cr.add(16 * v), mask[v], s[r][v]);
            }
        }
    }
}

/// `x = e^x` by [`crate::kernels::exp_f32`]'s steps, 16 lanes at a time (the tail scalar).
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(in crate::kernels) unsafe fn exp(x: &mut [f32]) {
    use crate::kernels::portable::{exp_consts::*, exp_f32};
    let n = x.len() - x.len() % 16;
    let set = _mm512_set1_ps;
    for i in (0..n).step_by(16) {
        // SAFETY: elements i..i+16 are inside x (i + 16 <= n <= len).
        unsafe {
            let p = x.as_mut_ptr().add(i);
            let v = _mm512_loadu_ps(p);
            let xc = _mm512_min_ps(_mm512_max_ps(v, set(LO)), set(HI));
            let t = _mm512_add_ps(_mm512_mul_ps(xc, set(LOG2E)), set(ROUND));
            let nn = _mm512_sub_ps(t, set(ROUND));
            let r = _mm512_sub_ps(
                _mm512_sub_ps(xc, _mm512_mul_ps(nn, set(LN2_HI))),
                _mm512_mul_ps(nn, set(LN2_LO)),
            );
            let mut q = set(P0);
            for c in [P1, P2, P3, P4, P5] {
                q = _mm512_add_ps(_mm512_mul_ps(q, r), set(c));
            }
            let y = _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(q, _mm512_mul_ps(r, r)), r),
                set(1.0),
            );
            let bits = _mm512_slli_epi32::<23>(_mm512_add_epi32(
                _mm512_sub_epi32(
                    _mm512_castps_si512(t),
                    _mm512_set1_epi32(ROUND.to_bits() as i32),
                ),
                _mm512_set1_epi32(127),
            ));
            let e = _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
            let e = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, set(HI)),
                e,
                set(f32::INFINITY),
            );
            let e = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_LT_OQ>(v, set(LO)),
                e,
                _mm512_setzero_ps(),
            );
            let e = _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v), e, v);
            _mm512_storeu_ps(p, e);
        }
    }
    x[n..].iter_mut().for_each(|v| *v = exp_f32(*v));
}

/// `f()` with its inlined loops compiled for this path (see [`crate::kernels::wide`]).
///
/// # Safety
/// The CPU has the features enabled here.
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline]
pub(in crate::kernels) unsafe fn wide<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The packing GEMM's register tile: 8 rows × 48 columns, 24 accumulators of the 32 vector
/// registers, 3 for a row of B and the broadcasts. Chosen by measurement on an AVX-512 Xeon;
/// 8 rows also make A's panels whole 8 × 8 transposes when A is packed from its rows.
pub(in crate::kernels) const PACKED: crate::kernels::x86::packed::Geometry =
    crate::kernels::x86::packed::Geometry {
        mr: 8,
        nr: 48,
        mc: 128,
        nc: 768,
        lanes: 16,
        tile: packed_tile,
    };

/// [`PACKED`]'s tile (see [`crate::kernels::x86::packed::Tile`]); an edge's columns are masked
/// and its unused vectors skipped.
///
/// # Safety
/// The CPU has AVX-512F; the panels are packed `kc × 8` and `kc × 48`; the valid part of the
/// tile lies inside C.
#[target_feature(enable = "avx512f")]
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
        match cols.div_ceil(16) {
            3 => packed_block::<3>(kc, a, b, ldb, c, rsc, rows, cols, scale),
            2 => packed_block::<2>(kc, a, b, ldb, c, rsc, rows, cols, scale),
            _ => packed_block::<1>(kc, a, b, ldb, c, rsc, rows, cols, scale),
        }
    }
}

/// [`packed_tile`] with V vectors of 16 columns.
#[target_feature(enable = "avx512f")]
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
    const MR: usize = 8;
    let mut s = [[_mm512_setzero_ps(); V]; MR];
    // SAFETY (whole body): the panels hold kc × MR and kc × NR floats; C is written only in
    // its valid rows and (masked) columns.
    unsafe {
        // C's rows are fetched while the products run: the tile stores into them at the end.
        for r in 0..rows.min(MR) {
            for v in 0..V {
                _mm_prefetch::<_MM_HINT_ET0>(c.add(r * rsc + 16 * v) as *const i8);
            }
        }
        let (mut ap, mut bp) = (a, b);
        for _ in 0..kc {
            let mut bv = [_mm512_setzero_ps(); V];
            for v in 0..V {
                bv[v] = _mm512_loadu_ps(bp.add(16 * v));
            }
            for r in 0..MR {
                let x = _mm512_set1_ps(*ap.add(r));
                for v in 0..V {
                    s[r][v] = _mm512_fmadd_ps(x, bv[v], s[r][v]);
                }
            }
            ap = ap.add(MR);
            bp = bp.add(ldb);
        }
        let mut mask = [0 as __mmask16; V];
        for (v, m) in mask.iter_mut().enumerate() {
            let valid = cols.saturating_sub(16 * v).min(16);
            *m = ((1u32 << valid) - 1) as __mmask16;
        }
        let sc = _mm512_set1_ps(scale);
        for r in 0..rows.min(MR) {
            let cr = c.add(r * rsc);
            for v in 0..V {
                let out = if scale == 0.0 {
                    s[r][v]
                } else {
                    let old = _mm512_maskz_loadu_ps(mask[v], cr.add(16 * v));
                    _mm512_add_ps(_mm512_mul_ps(old, sc), s[r][v])
                };
                _mm512_mask_storeu_ps(cr.add(16 * v), mask[v], out);
            }
        }
    }
}
