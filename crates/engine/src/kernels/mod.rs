//! Every SIMD and `unsafe` line of the engine's arithmetic: the GEMMs, the lane sums and dots,
//! the f32 exp, and the strided copies of the attention op.
//!
//! Each kernel has a plain-Rust version in [`portable`], which is also its test oracle, and
//! vector versions for AVX2+FMA, AVX-512F and NEON. One path is chosen per process, the first
//! time a kernel runs: the widest the CPU has, or the one named by the environment variable
//! `AT5_KERNEL` (`portable`, `avx2`, `avx512` or `neon`; a path the CPU lacks is an error,
//! never an illegal instruction). The build itself assumes nothing beyond the target's
//! baseline (no `target-cpu=native`), so one binary runs on any x86-64 and any aarch64.
//!
//! Every path gives the same bits. Vector lanes run across output columns (or across the
//! fixed lanes of a sum), never across the k of one output, so each output is the same
//! sequence of roundings at every vector width: a fused multiply-add per term of a product
//! (`f32::mul_add` in the portable path), a separate multiply and add where the portable code
//! has them (the lane sums, the exp polynomial). The tests run every path the CPU has against
//! the portable one and compare bits.
#![allow(unsafe_code)]

mod gemm;
mod layout;
pub mod portable;

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
mod neon;

pub(crate) use gemm::{gemm, gemm_new};
pub use layout::{add_transposed, transpose};
pub use portable::exp_f32;

use std::ops::{Add, AddAssign, Mul};
use std::sync::OnceLock;

/// The environment variable that forces a kernel path.
pub const ENV: &str = "AT5_KERNEL";

/// A kernel path: which instructions the vector kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust: the oracle, and the path of CPUs without the others.
    Portable,
    /// x86-64 with AVX2 and FMA: 8 lanes.
    Avx2,
    /// x86-64 with AVX-512F: 16 lanes.
    Avx512,
    /// aarch64 NEON: 4 lanes.
    Neon,
}

impl Kernel {
    /// Every path, in the order `AT5_KERNEL` lists them.
    pub const ALL: [Kernel; 4] = [Kernel::Portable, Kernel::Avx2, Kernel::Avx512, Kernel::Neon];

    /// The name `AT5_KERNEL` uses.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
            Kernel::Neon => "neon",
        }
    }

    /// The path of a name, or an error naming the valid ones.
    pub fn parse(name: &str) -> Result<Kernel, String> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!("{ENV}={name:?} is not a kernel path (portable, avx2, avx512 or neon)")
            })
    }

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                // The AVX-512 path also runs the 8-lane AVX2 kernels (lane sums).
                Kernel::Avx2.is_available() && std::arch::is_x86_feature_detected!("avx512f")
            }
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)] // every path is matched on some target
            _ => false,
        }
    }

    /// The paths this CPU can run, portable first.
    pub fn available() -> Vec<Kernel> {
        Kernel::ALL
            .into_iter()
            .filter(|k| k.is_available())
            .collect()
    }

    /// The widest path this CPU can run.
    pub fn detect() -> Kernel {
        [Kernel::Avx512, Kernel::Avx2, Kernel::Neon]
            .into_iter()
            .find(|k| k.is_available())
            .unwrap_or(Kernel::Portable)
    }
}

/// The path for a value of `AT5_KERNEL` (`None`: unset): the named one if this CPU has it,
/// else the widest it has.
pub fn select(forced: Option<&str>) -> Result<Kernel, String> {
    match forced {
        None => Ok(Kernel::detect()),
        Some(name) => {
            let k = Kernel::parse(name)?;
            if k.is_available() {
                Ok(k)
            } else {
                Err(format!(
                    "{ENV}={name}: this CPU cannot run the {name} kernels (it can run: {})",
                    Kernel::available()
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
    }
}

/// The process's path, chosen on the first call from `AT5_KERNEL` and the CPU. Binaries call
/// this at start-up and exit with a usage error on `Err`.
pub fn init() -> Result<Kernel, String> {
    static CHOSEN: OnceLock<Result<Kernel, String>> = OnceLock::new();
    CHOSEN
        .get_or_init(|| match std::env::var(ENV) {
            Ok(v) => select(Some(&v)),
            Err(std::env::VarError::NotPresent) => select(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{ENV} is not valid UTF-8")),
        })
        .clone()
}

/// The process's path; panics with [`init`]'s message when `AT5_KERNEL` is invalid (binaries
/// check it first and exit with code 2 instead).
pub fn active() -> Kernel {
    match init() {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

/// The arguments of a `gemm_rows` kernel: (m, k, n), A and its (row, column) strides, B and
/// its row stride, beta, C and its row stride.
type GemmRowsArgs = (
    (usize, usize, usize),
    *const f32,
    (usize, usize),
    *const f32,
    usize,
    f32,
    *mut f32,
    usize,
);

/// Refuses a path this CPU lacks: running its instructions would be undefined behaviour.
fn check_available(kernel: Kernel) {
    assert!(
        kernel.is_available(),
        "the {} kernels cannot run on this CPU",
        kernel.name()
    );
}

/// Panics unless an `rows × cols` matrix with strides (rs, cs) lies inside `len` elements.
fn check_matrix(len: usize, (rows, cols): (usize, usize), (rs, cs): (usize, usize), what: &str) {
    if rows > 0 && cols > 0 {
        let last = (rows - 1)
            .checked_mul(rs)
            .and_then(|r| (cols - 1).checked_mul(cs).and_then(|c| r.checked_add(c)));
        assert!(
            last.is_some_and(|i| i < len),
            "{what}: {rows}×{cols} with strides ({rs}, {cs}) does not fit in {len} elements"
        );
    }
}

/// `C = A B + beta C` (beta 0 or 1) for small products whose B and C rows are contiguous (the
/// attention's per-head GEMMs), on a given path. A is m×k with strides (rsa, csa), so a
/// transposed A costs nothing; B is k×n with row stride rsb; C is m×n with row stride rsc.
///
/// Unpacked: B's rows are read in place and A's elements broadcast from memory (a packing
/// GEMM's copies cost as much as the multiply-adds at these sizes). Each element of C is one
/// fused multiply-add per term, in k order, starting from beta C.
#[allow(clippy::too_many_arguments)]
pub fn gemm_rows_on(
    kernel: Kernel,
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    (rsa, csa): (usize, usize),
    b: &[f32],
    rsb: usize,
    beta: f32,
    c: &mut [f32],
    rsc: usize,
) {
    check_available(kernel);
    check_matrix(a.len(), (m, k), (rsa, csa), "gemm_rows: A");
    check_matrix(b.len(), (k, n), (rsb, 1), "gemm_rows: B");
    check_matrix(c.len(), (m, n), (rsc, 1), "gemm_rows: C");
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let args = ((m, k, n), a, (rsa, csa), b, rsb, beta, c, rsc);
    // SAFETY: the three matrices lie inside their slices (checked above), C is borrowed
    // mutably so it overlaps neither A nor B, and the CPU has the path's features.
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => x86::avx2::gemm_rows(args),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => x86::avx512::gemm_rows(args),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => neon::gemm_rows(args),
            _ => portable::gemm_rows(args),
        }
    }
}

/// `C = A B + beta C` (beta 0 or 1), the packing GEMM of the Linear layers and batched
/// matmuls, on a given path: A m×k with strides `sa`, B k×n with strides `sb`, C m×n with row
/// stride rsc and contiguous rows.
///
/// Every path computes each output the same way: k in blocks of [`portable::GEMM_KC`], each
/// block a chain of fused multiply-adds from zero in k order, added to C in block order. The
/// x86 paths run the packing GEMM of `x86::packed` on their register tiles; NEON calls
/// matrixmultiply, whose NEON kernel does the same (its fallback for CPUs without FMA would
/// round twice per term); the portable path does it in plain Rust. So every path gives the
/// same bits. A C of at most [`FEW_ROWS`] rows runs the same arithmetic on the unpacked kernel
/// instead (`few_rows`), without packing B.
#[allow(clippy::too_many_arguments)]
pub fn sgemm_on(
    kernel: Kernel,
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    sa: (usize, usize),
    b: &[f32],
    sb: (usize, usize),
    beta: f32,
    c: &mut [f32],
    rsc: usize,
) {
    check_available(kernel);
    check_matrix(a.len(), (m, k), sa, "gemm: A");
    check_matrix(b.len(), (k, n), sb, "gemm: B");
    check_matrix(c.len(), (m, n), (rsc, 1), "gemm: C");
    if kernel == Kernel::Portable {
        portable::sgemm((m, k, n), a, sa, b, sb, beta, c, rsc);
        return;
    }
    if m <= FEW_ROWS && m * k * n > 0 && (sb.1 == 1 || sb.0 == 1) {
        few_rows(kernel, (m, k, n), a, sa, b, sb, beta, c, rsc);
        return;
    }
    let (ap, bp, cp) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    // SAFETY: the matrices lie inside their slices (checked above), C is borrowed mutably so
    // it overlaps neither A nor B, and the CPU has the path's features.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        x86::packed::sgemm(
            packed_geometry(kernel),
            (m, k, n),
            ap,
            sa,
            bp,
            sb,
            beta,
            cp,
            rsc,
        )
    };
    // SAFETY: as above.
    #[cfg(not(target_arch = "x86_64"))]
    unsafe {
        let (rsa, csa) = (sa.0 as isize, sa.1 as isize);
        let (rsb, csb) = (sb.0 as isize, sb.1 as isize);
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            ap,
            rsa,
            csa,
            bp,
            rsb,
            csb,
            beta,
            cp,
            rsc as isize,
            1,
        )
    }
}

/// `C = op(A) op(B)` into a new `[m, n]` buffer on the x86 packing GEMM: the bits of
/// [`sgemm_on`] (`rows` `None`) or [`sgemm_rows_on`] (row blocks of `rows`) at beta 0, without
/// first writing zeros that the product overwrites. At beta 0 the packing GEMM writes every
/// output of C in its first k-block and reads none before; filling a fresh output with zeros
/// first cost a tenth of a forward product at the model's shapes (the buffers are larger than
/// L2). `None` where another path runs the product: the caller fills zeros and calls it.
pub fn sgemm_fresh(
    kernel: Kernel,
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    sa: (usize, usize),
    b: &[f32],
    sb: (usize, usize),
    rows: Option<usize>,
) -> Option<Vec<f32>> {
    #[cfg(target_arch = "x86_64")]
    {
        let packed = matches!(kernel, Kernel::Avx2 | Kernel::Avx512)
            && m * k * n > 0
            && rows.unwrap_or(m).max(1) > FEW_ROWS;
        if packed {
            check_available(kernel);
            check_matrix(a.len(), (m, k), sa, "gemm: A");
            check_matrix(b.len(), (k, n), sb, "gemm: B");
            let geometry = packed_geometry(kernel);
            let mut c = Vec::<f32>::with_capacity(m * n);
            let (ap, bp, cp) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
            // SAFETY: A and B lie inside their slices (checked above); C is a new allocation of
            // m·n floats, row stride n, overlapping neither; the CPU has the path's features.
            // At beta 0 both drivers write all m·n outputs before reading any (module docs of
            // `x86::packed`), so every element is initialised when the length is set.
            unsafe {
                match rows {
                    None => x86::packed::sgemm(geometry, (m, k, n), ap, sa, bp, sb, 0.0, cp, n),
                    Some(r) => x86::packed::sgemm_rows(
                        geometry,
                        (m, k, n),
                        ap,
                        sa,
                        bp,
                        sb,
                        0.0,
                        cp,
                        n,
                        r.max(1),
                    ),
                }
                c.set_len(m * n);
            }
            return Some(c);
        }
    }
    let _ = (kernel, (m, k, n), a, sa, b, sb, rows);
    None
}

/// The packing GEMM's register tile and blocks on an x86 vector path.
#[cfg(target_arch = "x86_64")]
fn packed_geometry(kernel: Kernel) -> &'static x86::packed::Geometry {
    match kernel {
        Kernel::Avx512 => &x86::avx512::PACKED,
        _ => &x86::avx2::PACKED,
    }
}

/// [`sgemm_on`] of all of C in parallel, in row blocks of `rows` (the same outputs, bit for
/// bit, as one call per block). On the x86 vector paths B is packed once, all its k-blocks in
/// one parallel pass, and shared by the blocks instead of each packing all of B.
#[allow(clippy::too_many_arguments)]
pub fn sgemm_rows_on(
    kernel: Kernel,
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    sa: (usize, usize),
    b: &[f32],
    sb: (usize, usize),
    beta: f32,
    c: &mut [f32],
    rsc: usize,
    rows: usize,
) {
    use rayon::prelude::*;
    check_available(kernel);
    check_matrix(a.len(), (m, k), sa, "gemm: A");
    check_matrix(b.len(), (k, n), sb, "gemm: B");
    check_matrix(c.len(), (m, n), (rsc, 1), "gemm: C");
    let rows = rows.max(1);
    #[cfg(target_arch = "x86_64")]
    if matches!(kernel, Kernel::Avx2 | Kernel::Avx512) && rows > FEW_ROWS {
        let geometry = packed_geometry(kernel);
        let (ap, bp, cp) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
        // SAFETY: the matrices lie inside their slices (checked above), C is borrowed mutably
        // so it overlaps neither A nor B, and the CPU has the path's features.
        unsafe {
            x86::packed::sgemm_rows(geometry, (m, k, n), ap, sa, bp, sb, beta, cp, rsc, rows)
        };
        return;
    }
    c.par_chunks_mut(rows * rsc)
        .enumerate()
        .for_each(|(t, ch)| {
            let r0 = t * rows;
            let mt = rows.min(m - r0);
            let ch = &mut ch[..(mt - 1) * rsc + n];
            sgemm_on(
                kernel,
                (mt, k, n),
                &a[r0 * sa.0..],
                sa,
                b,
                sb,
                beta,
                ch,
                rsc,
            )
        });
}

/// Rows of C up to which [`sgemm_on`] runs `few_rows` instead of the packing GEMM.
pub const FEW_ROWS: usize = 16;

/// [`sgemm_on`]'s arithmetic for a C of at most [`FEW_ROWS`] rows, on the unpacked kernel: per
/// k-block of [`portable::GEMM_KC`], the block's chain of fused multiply-adds from zero
/// ([`gemm_rows_on`] with beta 0) into a scratch, then added to C — the packing GEMM's bits.
///
/// A packing GEMM copies all of B (k·n elements) for m rows of multiply-adds: at m = 8 (the
/// pruned attention row's per-example products, a head per row) the copies took longer than
/// the products. Here B is read in place. When B's rows are strided (B transposed, its columns
/// contiguous), the kernel computes Cᵀ = Bᵀ Aᵀ instead, whose B operand is Aᵀ, copied
/// contiguous (m·k elements); each output is still its k products chained in k order, and a
/// fused multiply-add does not depend on the order of its two factors.
#[allow(clippy::too_many_arguments)]
fn few_rows(
    kernel: Kernel,
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    (rsa, csa): (usize, usize),
    b: &[f32],
    (rsb, csb): (usize, usize),
    beta: f32,
    c: &mut [f32],
    rsc: usize,
) {
    let by_columns = csb != 1;
    let kc_max = portable::GEMM_KC.min(k);
    let mut s = vec![0f32; m * n];
    let (mut at, mut st) = if by_columns {
        (vec![0f32; kc_max * m], vec![0f32; n * m])
    } else {
        (Vec::new(), Vec::new())
    };
    for (block, p0) in (0..k).step_by(portable::GEMM_KC).enumerate() {
        let kc = kc_max.min(k - p0);
        if by_columns {
            for p in 0..kc {
                for i in 0..m {
                    at[p * m + i] = a[i * rsa + (p0 + p) * csa];
                }
            }
            let bt = &b[p0 * rsb..];
            gemm_rows_on(kernel, (n, kc, m), bt, (csb, rsb), &at, m, 0.0, &mut st, m);
            for (i, si) in s.chunks_exact_mut(n).enumerate() {
                for (j, x) in si.iter_mut().enumerate() {
                    *x = st[j * m + i];
                }
            }
        } else {
            let (ab, bb) = (&a[p0 * csa..], &b[p0 * rsb..]);
            gemm_rows_on(kernel, (m, kc, n), ab, (rsa, csa), bb, rsb, 0.0, &mut s, n);
        }
        // As the packing GEMM adds a block's sums: beta scales C in the first block only, and
        // beta 0 writes the sums without reading C.
        let scale = if block == 0 { beta } else { 1.0 };
        for (ci, si) in c.chunks_mut(rsc).zip(s.chunks_exact(n)) {
            for (x, &v) in ci[..n].iter_mut().zip(si) {
                *x = if scale == 0.0 { v } else { *x * scale + v };
            }
        }
    }
}

/// `Σ x` in eight lanes on a given path; see [`portable::sum_lanes`] for the order.
pub fn sum_lanes_on(kernel: Kernel, x: &[f32]) -> f32 {
    check_available(kernel);
    match kernel {
        // SAFETY: the CPU has AVX (checked above).
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 | Kernel::Avx512 => unsafe { x86::avx2::dot_lanes(x, None) },
        // SAFETY: the CPU has NEON (checked above).
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => unsafe { neon::dot_lanes(x, None) },
        _ => portable::sum_lanes(x),
    }
}

/// `Σ x·y` in eight lanes on a given path; see [`portable::dot_lanes`] for the order.
pub fn dot_lanes_on(kernel: Kernel, x: &[f32], y: &[f32]) -> f32 {
    check_available(kernel);
    assert_eq!(x.len(), y.len(), "dot of slices of different lengths");
    match kernel {
        // SAFETY: the CPU has AVX (checked above); the lengths agree.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 | Kernel::Avx512 => unsafe { x86::avx2::dot_lanes(x, Some(y)) },
        // SAFETY: the CPU has NEON (checked above); the lengths agree.
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => unsafe { neon::dot_lanes(x, Some(y)) },
        _ => portable::dot_lanes(x, y),
    }
}

/// `x = e^x` elementwise by [`exp_f32`]'s algorithm on a given path.
pub fn exp_on(kernel: Kernel, x: &mut [f32]) {
    check_available(kernel);
    match kernel {
        // SAFETY: the CPU has the path's features (checked above).
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => unsafe { x86::avx2::exp(x) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => unsafe { x86::avx512::exp(x) },
        // SAFETY: as above.
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => unsafe { neon::exp(x) },
        _ => x.iter_mut().for_each(|v| *v = exp_f32(*v)),
    }
}

/// Runs `f` compiled for the process's vector unit: plain loops that `f` inlines (an
/// elementwise map, say) vectorise to AVX-512 or AVX2 instead of the baseline's SSE2, without
/// building the whole crate for one CPU. The bits cannot change: Rust never reorders or fuses
/// float operations on its own, so a wider loop does the same roundings; `f32::mul_add` becomes
/// one instruction instead of a libm call, with the same correctly rounded result.
#[inline]
pub fn wide<R>(f: impl FnOnce() -> R) -> R {
    match active() {
        // SAFETY: the CPU has the path's features (the path was checked when chosen).
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => unsafe { x86::avx512::wide(f) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => unsafe { x86::avx2::wide(f) },
        _ => f(),
    }
}

/// The slice and matrix kernels of an element type, on the process's path: what the ops call.
/// f32 (training) dispatches to the vector kernels; f64 (gradient checks) runs the portable
/// code and matrixmultiply's f64 GEMM.
///
/// The kernels take plain slices of f32 or f64 and know nothing of the engine's scalar trait
/// (`Float` builds on this one): besides the kernels, a type brings only the arithmetic the
/// portable lane sums and the GEMM driver do, and its zero.
pub trait Kernels:
    Copy + Send + Sync + PartialEq + Add<Output = Self> + Mul<Output = Self> + AddAssign + 'static
{
    /// Zero.
    const ZERO: Self;
    /// [`sgemm_on`] on the process's path: one task, any strides of A and B.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        mkn: (usize, usize, usize),
        a: &[Self],
        sa: (usize, usize),
        b: &[Self],
        sb: (usize, usize),
        beta: Self,
        c: &mut [Self],
        rsc: usize,
    );
    /// [`Self::gemm`] of all of C in parallel, in row blocks of `rows` (C's row stride n).
    #[allow(clippy::too_many_arguments)]
    fn gemm_by_rows(
        (m, k, n): (usize, usize, usize),
        a: &[Self],
        sa: (usize, usize),
        b: &[Self],
        sb: (usize, usize),
        beta: Self,
        c: &mut [Self],
        rows: usize,
    ) {
        use rayon::prelude::*;
        c[..m * n]
            .par_chunks_mut(rows * n)
            .enumerate()
            .for_each(|(t, ch)| {
                let a = &a[t * rows * sa.0..];
                Self::gemm((ch.len() / n, k, n), a, sa, b, sb, beta, ch, n)
            });
    }
    /// [`sgemm_fresh`] on the process's path; `None` (the default) where zeros and
    /// [`Self::gemm`] or [`Self::gemm_by_rows`] run the product instead.
    fn gemm_fresh(
        _mkn: (usize, usize, usize),
        _a: &[Self],
        _sa: (usize, usize),
        _b: &[Self],
        _sb: (usize, usize),
        _rows: Option<usize>,
    ) -> Option<Vec<Self>> {
        None
    }
    /// [`gemm_rows_on`] on the process's path.
    #[allow(clippy::too_many_arguments)]
    fn gemm_rows(
        mkn: (usize, usize, usize),
        a: &[Self],
        sa: (usize, usize),
        b: &[Self],
        rsb: usize,
        beta: Self,
        c: &mut [Self],
        rsc: usize,
    );
    /// [`sum_lanes_on`] on the process's path.
    fn sum_lanes(x: &[Self]) -> Self;
    /// [`dot_lanes_on`] on the process's path.
    fn dot_lanes(x: &[Self], y: &[Self]) -> Self;
    /// [`exp_on`] on the process's path.
    fn exp_in_place(x: &mut [Self]);
}

impl Kernels for f32 {
    const ZERO: Self = 0.0;
    fn gemm_fresh(
        mkn: (usize, usize, usize),
        a: &[f32],
        sa: (usize, usize),
        b: &[f32],
        sb: (usize, usize),
        rows: Option<usize>,
    ) -> Option<Vec<f32>> {
        sgemm_fresh(active(), mkn, a, sa, b, sb, rows)
    }
    fn gemm(
        mkn: (usize, usize, usize),
        a: &[f32],
        sa: (usize, usize),
        b: &[f32],
        sb: (usize, usize),
        beta: f32,
        c: &mut [f32],
        rsc: usize,
    ) {
        sgemm_on(active(), mkn, a, sa, b, sb, beta, c, rsc)
    }
    fn gemm_by_rows(
        (m, k, n): (usize, usize, usize),
        a: &[f32],
        sa: (usize, usize),
        b: &[f32],
        sb: (usize, usize),
        beta: f32,
        c: &mut [f32],
        rows: usize,
    ) {
        sgemm_rows_on(
            active(),
            (m, k, n),
            a,
            sa,
            b,
            sb,
            beta,
            &mut c[..m * n],
            n,
            rows,
        )
    }
    fn gemm_rows(
        mkn: (usize, usize, usize),
        a: &[f32],
        sa: (usize, usize),
        b: &[f32],
        rsb: usize,
        beta: f32,
        c: &mut [f32],
        rsc: usize,
    ) {
        gemm_rows_on(active(), mkn, a, sa, b, rsb, beta, c, rsc)
    }
    fn sum_lanes(x: &[f32]) -> f32 {
        sum_lanes_on(active(), x)
    }
    fn dot_lanes(x: &[f32], y: &[f32]) -> f32 {
        dot_lanes_on(active(), x, y)
    }
    fn exp_in_place(x: &mut [f32]) {
        exp_on(active(), x)
    }
}

impl Kernels for f64 {
    const ZERO: Self = 0.0;
    fn gemm(
        (m, k, n): (usize, usize, usize),
        a: &[f64],
        sa: (usize, usize),
        b: &[f64],
        sb: (usize, usize),
        beta: f64,
        c: &mut [f64],
        rsc: usize,
    ) {
        check_matrix(a.len(), (m, k), sa, "gemm: A");
        check_matrix(b.len(), (k, n), sb, "gemm: B");
        check_matrix(c.len(), (m, n), (rsc, 1), "gemm: C");
        // SAFETY: the matrices lie inside their slices (checked above); C is borrowed mutably.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                sa.0 as isize,
                sa.1 as isize,
                b.as_ptr(),
                sb.0 as isize,
                sb.1 as isize,
                beta,
                c.as_mut_ptr(),
                rsc as isize,
                1,
            )
        }
    }
    fn gemm_rows(
        mkn: (usize, usize, usize),
        a: &[f64],
        sa: (usize, usize),
        b: &[f64],
        rsb: usize,
        beta: f64,
        c: &mut [f64],
        rsc: usize,
    ) {
        Self::gemm(mkn, a, sa, b, (rsb, 1), beta, c, rsc)
    }
    fn sum_lanes(x: &[f64]) -> f64 {
        portable::sum_lanes(x)
    }
    fn dot_lanes(x: &[f64], y: &[f64]) -> f64 {
        portable::dot_lanes(x, y)
    }
    fn exp_in_place(x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.exp())
    }
}

/// Work below this many elements runs on the calling thread: rayon's overhead would dominate.
pub(crate) const PAR_MIN: usize = 1 << 15;
/// Fixed chunk for parallel elementwise work; results never depend on the thread count.
pub(crate) const CHUNK: usize = 1 << 13;

/// `n` zeros, written in parallel chunks when large. `vec![0; n]` zeroes on the calling
/// thread (the freed buffers are kept in the heap, so no fresh zero pages): at two threads the
/// other core sat idle through every large allocation of a step.
pub(crate) fn zeros<F: Kernels>(n: usize) -> Vec<F> {
    use rayon::prelude::*;
    if n < PAR_MIN {
        return vec![F::ZERO; n];
    }
    let mut v = Vec::with_capacity(n);
    v.par_extend(rayon::iter::repeat_n(F::ZERO, n).with_min_len(CHUNK));
    v
}
