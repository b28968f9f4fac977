//! An unpacked f32 GEMM for the small per-head products of attention (`[L, dh] x [dh, L]`,
//! `[L, L] x [L, dh]` with dh = 32 or so).
//!
//! A packing GEMM (matrixmultiply) copies both operands into panels on every call; at these
//! sizes the copies cost about as much as the multiply-adds (a profile of a training step put
//! a fifth of its time in packing). Here B's rows are read in place, 16 columns at a time, and
//! A's elements are broadcast straight from memory with any strides, so a transposed A costs
//! nothing either. Each element of C is one sum over k in order, fused multiply-adds, so the
//! result does not depend on how the caller splits C across threads.
//!
//! The AVX2+FMA kernel is chosen at run time; other CPUs get a plain loop with the same
//! contract.

/// `C = A B + beta C` (beta 0 or 1) for m×k A with strides (rsa, csa), k×n B whose rows are
/// contiguous (row stride rsb), and m×n C whose rows are contiguous (row stride rsc).
///
/// # Safety
/// The pointers and strides must describe valid matrices of those shapes; C writable and not
/// overlapping A or B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_rows(
    (m, k, n): (usize, usize, usize),
    a: *const f32,
    (rsa, csa): (usize, usize),
    b: *const f32,
    rsb: usize,
    beta: f32,
    c: *mut f32,
    rsc: usize,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            // SAFETY: the CPU has the features; the rest is the caller's contract.
            unsafe { avx2::sgemm_rows((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc) };
            return;
        }
    }
    // SAFETY: the caller's contract.
    unsafe { sgemm_rows_plain((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc) }
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// The same product as a plain triple loop (for CPUs without AVX2+FMA, and as the tests' oracle
/// of the contract). It rounds like the kernel: one fused multiply-add per term, in k order.
///
/// # Safety
/// As [`sgemm_rows`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_rows_plain(
    (m, k, n): (usize, usize, usize),
    a: *const f32,
    (rsa, csa): (usize, usize),
    b: *const f32,
    rsb: usize,
    beta: f32,
    c: *mut f32,
    rsc: usize,
) {
    for i in 0..m {
        for j in 0..n {
            // SAFETY: indices stay inside the matrices the caller described.
            unsafe {
                let cij = c.add(i * rsc + j);
                let mut acc = if beta == 0.0 { 0.0 } else { *cij };
                for p in 0..k {
                    acc = (*a.add(i * rsa + p * csa)).mul_add(*b.add(p * rsb + j), acc);
                }
                *cij = acc;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Rows of C per microkernel call: 6 rows × 16 columns is 12 accumulators, which with two
    /// B vectors and one broadcast fills the 16 vector registers.
    const MR: usize = 6;
    /// Columns of C per microkernel call: two 8-lane vectors.
    const NR: usize = 16;

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn sgemm_rows(
        (m, k, n): (usize, usize, usize),
        a: *const f32,
        (rsa, csa): (usize, usize),
        b: *const f32,
        rsb: usize,
        beta: f32,
        c: *mut f32,
        rsc: usize,
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
}
