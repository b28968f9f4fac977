//! The GEMM driver of the matmul and Linear ops: cuts a product into a fixed set of parallel
//! tasks and runs each on the packing GEMM of [`super::Kernels`].
use super::Kernels;
use super::zeros;
use rayon::prelude::*;

/// Below this many multiply-adds a GEMM runs as one task.
const PAR_MIN_WORK: usize = 1 << 18;
/// Parallel tasks per GEMM: fixed, so results do not depend on the thread count. Few and
/// large, because each task packs its own copy of the operand panels it reads (at 256-row tiles
/// the weight repacking of the model's Linear layers cost a tenth of a training step).
const TASKS: usize = 8;
/// Row blocks are a multiple of this (a multiple of the microkernel's height).
const ROW_ALIGN: usize = 16;
/// The shortest row block worth a task of its own.
const ROWS_MIN: usize = 128;

/// How a parallel GEMM is cut into tasks; a function of (m, k, n) only.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Split {
    /// One task.
    None,
    /// Row blocks of C of this many rows: each task packs its rows of A and all of B.
    Rows(usize),
    /// k in chunks of this length, each task a partial product of all of C, the partials added
    /// in chunk order. For the tall-k weight gradients (`xᵀ g`, m = d_in, k = B·L): split by
    /// rows or columns, every task would pack all of the long operand again.
    Depth(usize),
}

fn split(m: usize, k: usize, n: usize, parallel: bool) -> Split {
    if !parallel || m * n * k < PAR_MIN_WORK {
        return Split::None;
    }
    if k >= 8 * m.max(n) {
        return Split::Depth(k.div_ceil(TASKS));
    }
    let rows = m.div_ceil(TASKS).next_multiple_of(ROW_ALIGN).max(ROWS_MIN);
    if rows < m {
        Split::Rows(rows)
    } else {
        Split::None
    }
}

/// `C[m,n] (+)= op(A)[m,k] op(B)[k,n]`. `a` is stored `[m,k]`, or `[k,m]` when `ta`;
/// `b` is stored `[k,n]`, or `[n,k]` when `tb`. `beta` 0 overwrites C, 1 accumulates. A
/// transposed operand is the same buffer read with swapped strides, never a copy.
///
/// In parallel the work is cut by [`split`], a function of the shape alone, so every element
/// of C is the same sums in the same order at any thread count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm<F: Kernels>(
    m: usize,
    k: usize,
    n: usize,
    a: &[F],
    ta: bool,
    b: &[F],
    tb: bool,
    c: &mut [F],
    beta: F,
    parallel: bool,
) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if n == 0 || m == 0 {
        return;
    }
    let (rsa, csa) = if ta { (1, m) } else { (k, 1) };
    let (rsb, csb) = if tb { (1, k) } else { (n, 1) };
    // C[r0.., ..] (+)= A[r0.., p0..p0+kc] B[p0..p0+kc, ..] for the rows of `out` (stride n).
    let run = |r0: usize, p0: usize, kc: usize, beta: F, out: &mut [F]| {
        let a = &a[r0 * rsa + p0 * csa..];
        let b = &b[p0 * rsb..];
        F::gemm(
            (out.len() / n, kc, n),
            a,
            (rsa, csa),
            b,
            (rsb, csb),
            beta,
            out,
            n,
        )
    };
    match split(m, k, n, parallel) {
        Split::None => run(0, 0, k, beta, &mut c[..m * n]),
        Split::Rows(rows) => {
            F::gemm_by_rows((m, k, n), a, (rsa, csa), b, (rsb, csb), beta, c, rows)
        }
        Split::Depth(kc) => {
            let parts = k.div_ceil(kc);
            let mut partial = zeros(parts * m * n);
            partial
                .par_chunks_mut(m * n)
                .enumerate()
                .for_each(|(t, ch)| {
                    let p0 = t * kc;
                    run(0, p0, kc.min(k - p0), F::ZERO, ch)
                });
            // C = beta C + partial 0 + partial 1 + ..., in that order, by row blocks.
            let keep = beta != F::ZERO;
            c[..m * n]
                .par_chunks_mut(n * ROW_ALIGN)
                .enumerate()
                .for_each(|(i, ch)| {
                    let start = i * n * ROW_ALIGN;
                    for (t, part) in partial.chunks(m * n).enumerate() {
                        let src = &part[start..start + ch.len()];
                        if t == 0 && !keep {
                            ch.copy_from_slice(src);
                        } else {
                            ch.iter_mut().zip(src).for_each(|(x, &y)| *x += y);
                        }
                    }
                });
        }
    }
}

/// `op(A) op(B)` as a new `[m, n]` buffer: [`gemm`] at beta 0, the same bits, but on the paths
/// that write every output before reading any (see [`super::sgemm_fresh`]) without zeroing the
/// buffer first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_new<F: Kernels>(
    m: usize,
    k: usize,
    n: usize,
    a: &[F],
    ta: bool,
    b: &[F],
    tb: bool,
    parallel: bool,
) -> Vec<F> {
    assert!(a.len() >= m * k && b.len() >= k * n);
    let sa = if ta { (1, m) } else { (k, 1) };
    let sb = if tb { (1, k) } else { (n, 1) };
    let fresh = match split(m, k, n, parallel) {
        Split::None => F::gemm_fresh((m, k, n), a, sa, b, sb, None),
        Split::Rows(rows) => F::gemm_fresh((m, k, n), a, sa, b, sb, Some(rows)),
        Split::Depth(_) => None,
    };
    fresh.unwrap_or_else(|| {
        let mut c = zeros(m * n);
        gemm(m, k, n, a, ta, b, tb, &mut c, F::ZERO, parallel);
        c
    })
}
