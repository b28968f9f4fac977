//! The packing GEMM of the x86 paths: operand panels copied into the microkernel's order, cache
//! blocks around them, and an `MR × NR` register tile per path (in `avx512` and `avx2`).
//!
//! Each output is computed as [`crate::kernels::portable::sgemm`] computes it: k in blocks of
//! [`GEMM_KC`], each block one chain of fused multiply-adds from zero in k order (the tile's
//! accumulator for that output), then added to C in block order (beta scales C in the first
//! block only; beta 0 writes the block's sum without reading C). The k-block loop runs outside
//! the row and column loops, so every output sees its blocks in order; the padding lanes and
//! rows of edge tiles are zeros that are never stored.
//!
//! Packing reads each operand once per panel, whatever its strides: a panel contiguous along
//! its width (B row-major, A transposed) is copied row by row; one contiguous along k (A
//! row-major, B transposed: the layer's `g Wᵀ`) is transposed 8 × 8 in registers.
use crate::kernels::portable::GEMM_KC;
use std::arch::x86_64::*;
use std::cell::RefCell;

/// A register tile: `kernel(kc, a, b, ldb, c, rsc, rows, cols, scale)` computes the `MR × NR`
/// products of a packed A panel (`kc × MR`, k-major) and a B panel of kc rows `ldb` apart (a
/// packed panel, `ldb` = NR, or B itself, `ldb` its row stride) and writes the `rows × cols`
/// valid part into C: `C = acc` when `scale` is 0, else `C = C·scale + acc` (two roundings, as
/// the portable loop). The tile reads whole vectors of B up to `cols` rounded up to the lanes.
pub(in crate::kernels) type Tile =
    unsafe fn(usize, *const f32, *const f32, usize, *mut f32, usize, usize, usize, f32);

/// A path's register tile and cache blocks.
pub(in crate::kernels) struct Geometry {
    /// Rows of the register tile.
    pub mr: usize,
    /// Columns of the register tile.
    pub nr: usize,
    /// Rows of A per packed block (kept in L2; each of its panels in L1 while B's pass).
    pub mc: usize,
    /// Columns of B per packed block.
    pub nc: usize,
    /// Floats per vector register: a B whose rows are contiguous and a multiple of this long
    /// is read in place instead of packed (see [`direct_b`]).
    pub lanes: usize,
    /// The microkernel.
    pub tile: Tile,
}

thread_local! {
    /// Each thread's packing buffers (A, B), kept between calls: a fresh allocation of this
    /// size is fresh pages from the OS, faulted in on every product.
    static BUFFERS: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// The B buffer a row-parallel product shares between its tasks, on the calling thread.
    static SHARED_B: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// A 64-byte aligned pointer to `len` floats inside `v`, growing it if needed.
fn aligned(v: &mut Vec<f32>, len: usize) -> *mut f32 {
    if v.len() < len + 16 {
        v.resize(len + 16, 0.0);
    }
    let p = v.as_mut_ptr();
    p.wrapping_add(p.align_offset(64).min(15))
}

/// Whether B is read in place by the tiles rather than packed: its rows are contiguous (B
/// row-major: the weight gradient's `dY`, the forward's W) and n is a whole number of vectors,
/// so no tile reads past a row. Packing such a B only copies it, a pass over all of it (9.8 MB
/// for a weight gradient over 3200 rows of 768) that the tiles then read again; reading it in
/// place made the AVX-512 weight gradients 1.06–1.37× faster and changed no bit (the arithmetic
/// is the same). Not when the row stride is a multiple of 4 KiB: every row of a panel then
/// falls in the same cache sets (a 1024-square product ran at two thirds of its packed speed).
fn direct_b(g: &Geometry, (rsb, csb): (usize, usize), n: usize) -> bool {
    csb == 1 && n.is_multiple_of(g.lanes) && !rsb.is_multiple_of(1024)
}

/// `C = A B + beta C` on a path's tile: A m×k with strides (rsa, csa), B k×n with strides
/// (rsb, csb), C m×n with row stride rsc and contiguous rows.
///
/// # Safety
/// The CPU runs the tile and AVX2; the pointers and strides describe valid matrices, C
/// writable and overlapping neither A nor B.
#[allow(clippy::too_many_arguments)]
pub(in crate::kernels) unsafe fn sgemm(
    g: &Geometry,
    (m, k, n): (usize, usize, usize),
    a: *const f32,
    (rsa, csa): (usize, usize),
    b: *const f32,
    (rsb, csb): (usize, usize),
    beta: f32,
    c: *mut f32,
    rsc: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            // SAFETY: row i of C lies inside C.
            let ci = unsafe { std::slice::from_raw_parts_mut(c.add(i * rsc), n) };
            ci.iter_mut()
                .for_each(|x| *x = if beta == 0.0 { 0.0 } else { *x * beta });
        }
        return;
    }
    let (mr, nr) = (g.mr, g.nr);
    let kc_max = GEMM_KC.min(k);
    let mc_max = g.mc.min(m.next_multiple_of(mr));
    let nc_max = g.nc.min(n.next_multiple_of(nr));
    let direct = direct_b(g, (rsb, csb), n);
    BUFFERS.with_borrow_mut(|(va, vb)| {
        let pa = aligned(va, mc_max * kc_max);
        let pb = aligned(vb, if direct { 0 } else { nc_max * kc_max });
        for jc in (0..n).step_by(nc_max) {
            let nc = nc_max.min(n - jc);
            for (block, pc) in (0..k).step_by(GEMM_KC).enumerate() {
                let kc = kc_max.min(k - pc);
                let panels = if direct {
                    Panels::of_b(b.wrapping_add(pc * rsb + jc), rsb, nr)
                } else {
                    for (q, j) in (0..nc).step_by(nr).enumerate() {
                        // SAFETY: the panel lies inside B and the buffer; the CPU has AVX2.
                        unsafe {
                            let src = b.add(pc * rsb + (jc + j) * csb);
                            pack(kc, src, (rsb, csb), nr.min(nc - j), nr, pb.add(q * nr * kc));
                        }
                    }
                    Panels::packed(pb, kc, nr)
                };
                let scale = if block == 0 { beta } else { 1.0 };
                for ic in (0..m).step_by(mc_max) {
                    let mc = mc_max.min(m - ic);
                    for (q, i) in (0..mc).step_by(mr).enumerate() {
                        // SAFETY: as for B.
                        unsafe {
                            let src = a.add((ic + i) * rsa + pc * csa);
                            pack(kc, src, (csa, rsa), mr.min(mc - i), mr, pa.add(q * mr * kc));
                        }
                    }
                    // SAFETY: the panels hold the block; its tiles lie inside C.
                    unsafe {
                        tiles(
                            g,
                            (mc, kc, nc),
                            pa,
                            panels,
                            c.add(ic * rsc + jc),
                            rsc,
                            scale,
                        )
                    };
                }
            }
        }
    });
}

/// Where a block's B panels lie: panel q at `start + q·step`, its kc rows `ldb` apart.
#[derive(Clone, Copy)]
struct Panels {
    start: *const f32,
    step: usize,
    ldb: usize,
}

impl Panels {
    /// Packed panels of `kc × nr`, one after another.
    fn packed(pb: *const f32, kc: usize, nr: usize) -> Panels {
        Panels {
            start: pb,
            step: nr * kc,
            ldb: nr,
        }
    }
    /// B's own rows, `rsb` apart, from the block's first element.
    fn of_b(b: *const f32, rsb: usize, nr: usize) -> Panels {
        Panels {
            start: b,
            step: nr,
            ldb: rsb,
        }
    }
}

/// Every tile of an `mc × nc` block of C from packed A (`mc × kc`) and B (`kc × nc`) panels:
/// A's panel outer, so that it stays in L1 while B's panels stream from L2 (measured a little
/// faster than B's panel outer).
///
/// # Safety
/// As [`sgemm`]'s, for the block.
#[allow(clippy::too_many_arguments)]
unsafe fn tiles(
    g: &Geometry,
    (mc, kc, nc): (usize, usize, usize),
    pa: *const f32,
    pb: Panels,
    c: *mut f32,
    rsc: usize,
    scale: f32,
) {
    let (mr, nr) = (g.mr, g.nr);
    for (qi, i) in (0..mc).step_by(mr).enumerate() {
        for (qj, j) in (0..nc).step_by(nr).enumerate() {
            // SAFETY: the panels are packed; the tile's valid part lies in C.
            unsafe {
                (g.tile)(
                    kc,
                    pa.add(qi * mr * kc),
                    pb.start.add(qj * pb.step),
                    pb.ldb,
                    c.add(i * rsc + j),
                    rsc,
                    mr.min(mc - i),
                    nr.min(nc - j),
                    scale,
                );
            }
        }
    }
}

/// A pointer that crosses threads: each task writes a disjoint part of what it points to.
#[derive(Clone, Copy)]
struct Shared<T>(T);
impl<T: Copy> Shared<T> {
    /// The pointer (a method, so that closures capture the whole wrapper).
    fn get(&self) -> T {
        self.0
    }
}
// SAFETY: the tasks that share one read it, or write disjoint rows (see `sgemm_rows`).
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

/// [`sgemm`] of all of C in parallel, cut into row blocks of `rows`: B is packed once (its
/// panels in parallel) and shared by the row blocks, instead of every block packing all of B
/// again. Every output is computed exactly as [`sgemm`] computes it.
///
/// # Safety
/// As [`sgemm`]'s.
#[allow(clippy::too_many_arguments)]
pub(in crate::kernels) unsafe fn sgemm_rows(
    g: &Geometry,
    (m, k, n): (usize, usize, usize),
    a: *const f32,
    (rsa, csa): (usize, usize),
    b: *const f32,
    (rsb, csb): (usize, usize),
    beta: f32,
    c: *mut f32,
    rsc: usize,
    rows: usize,
) {
    if m == 0 || n == 0 || k == 0 || rows >= m {
        // SAFETY: as the caller guarantees.
        return unsafe { sgemm(g, (m, k, n), a, (rsa, csa), b, (rsb, csb), beta, c, rsc) };
    }
    // Every k-block of a column block of B, each `GEMM_KC` deep but the last.
    let nc_max = g.nc.min(n.next_multiple_of(g.nr));
    let len = if direct_b(g, (rsb, csb), n) {
        0
    } else {
        k.div_ceil(GEMM_KC) * GEMM_KC.min(k) * nc_max
    };
    let args = ((m, k, n), a, (rsa, csa), b, (rsb, csb), beta, c, rsc, rows);
    // The calling thread's buffer, unless a product it is waiting for holds it already (a
    // thread that waits for rayon tasks may run another product's meanwhile).
    SHARED_B.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => {
            let pb = aligned(&mut v, len);
            // SAFETY: as the caller guarantees; `pb` holds a column block of all of B.
            unsafe { rows_on(g, args, pb) }
        }
        Err(_) => {
            let mut v = Vec::new();
            let pb = aligned(&mut v, len);
            // SAFETY: as above.
            unsafe { rows_on(g, args, pb) }
        }
    })
}

/// The arguments of [`rows_on`]: [`sgemm_rows`]'s, in its order.
type RowsArgs = (
    (usize, usize, usize),
    *const f32,
    (usize, usize),
    *const f32,
    (usize, usize),
    f32,
    *mut f32,
    usize,
    usize,
);

/// [`sgemm_rows`] with a buffer `pb` for a column block of all of B.
///
/// Per column block of B, two parallel passes: every k-block's panels packed, then each task
/// runs all k-blocks over its rows (one fork-join per pass: per k-block, the joins of a tall-k
/// product cost a sixth of it).
///
/// # Safety
/// As [`sgemm`]'s; `pb` is writable and overlaps no operand.
unsafe fn rows_on(
    g: &Geometry,
    ((m, k, n), a, (rsa, csa), b, (rsb, csb), beta, c, rsc, rows): RowsArgs,
    pb: *mut f32,
) {
    use rayon::prelude::*;
    let (mr, nr) = (g.mr, g.nr);
    let kc_max = GEMM_KC.min(k);
    let nc_max = g.nc.min(n.next_multiple_of(nr));
    let direct = direct_b(g, (rsb, csb), n);
    let pb = Shared(pb);
    let (a, b, c) = (Shared(a), Shared(b), Shared(c));
    for jc in (0..n).step_by(nc_max) {
        let nc = nc_max.min(n - jc);
        let panels = nc.div_ceil(nr);
        // k-block `block` starts at `block · GEMM_KC · nc.next_multiple_of(nr)` in the buffer,
        // its panels `kc × nr` each, as `sgemm` lays out its one block.
        let block_len = kc_max * panels * nr;
        let blocks = if direct { 0 } else { k.div_ceil(GEMM_KC) };
        (0..blocks * panels).into_par_iter().for_each(|t| {
            let (block, q) = (t / panels, t % panels);
            let pc = block * GEMM_KC;
            let kc = kc_max.min(k - pc);
            let j = q * nr;
            // SAFETY: the panel lies inside B and the buffer; panels are disjoint.
            unsafe {
                let src = b.get().add(pc * rsb + (jc + j) * csb);
                let dst = pb.get().add(block * block_len + q * nr * kc);
                pack(kc, src, (rsb, csb), nr.min(nc - j), nr, dst);
            }
        });
        (0..m.div_ceil(rows)).into_par_iter().for_each(|t| {
            let (r0, r1) = (t * rows, m.min(t * rows + rows));
            let mc_max = g.mc.min((r1 - r0).next_multiple_of(mr));
            BUFFERS.with_borrow_mut(|(va, _)| {
                let pa = aligned(va, mc_max * kc_max);
                for (block, pc) in (0..k).step_by(GEMM_KC).enumerate() {
                    let kc = kc_max.min(k - pc);
                    let scale = if block == 0 { beta } else { 1.0 };
                    let pbk = if direct {
                        Panels::of_b(b.get().wrapping_add(pc * rsb + jc), rsb, nr)
                    } else {
                        Panels::packed(pb.get().wrapping_add(block * block_len), kc, nr)
                    };
                    for ic in (r0..r1).step_by(mc_max) {
                        let mc = mc_max.min(r1 - ic);
                        for (q, i) in (0..mc).step_by(mr).enumerate() {
                            // SAFETY: the panel lies inside A and the buffer.
                            unsafe {
                                let src = a.get().add((ic + i) * rsa + pc * csa);
                                pack(kc, src, (csa, rsa), mr.min(mc - i), mr, pa.add(q * mr * kc));
                            }
                        }
                        // SAFETY: B's panels are packed; this task's rows of C are its own.
                        unsafe {
                            let cb = c.get().add(ic * rsc + jc);
                            tiles(g, (mc, kc, nc), pa, pbk, cb, rsc, scale);
                        }
                    }
                }
            });
        });
    }
}

/// Packs one panel: `dst[p·width + j] = src[p·sk + j·sj]` for p < kc, j < w, and zeros for
/// w <= j < width (an edge panel's padding).
///
/// # Safety
/// The CPU has AVX2; the panel lies inside the operand, `dst` holds `kc × width` floats.
#[target_feature(enable = "avx2")]
unsafe fn pack(
    kc: usize,
    src: *const f32,
    (sk, sj): (usize, usize),
    w: usize,
    width: usize,
    dst: *mut f32,
) {
    // SAFETY (whole body): every index stays inside the panel and `dst`, as the caller checked.
    unsafe {
        if sj == 1 {
            // Contiguous along the panel's width: one row per k.
            for p in 0..kc {
                let (s, d) = (src.add(p * sk), dst.add(p * width));
                let mut j = 0;
                while j + 8 <= w {
                    _mm256_storeu_ps(d.add(j), _mm256_loadu_ps(s.add(j)));
                    j += 8;
                }
                while j < w {
                    *d.add(j) = *s.add(j);
                    j += 1;
                }
                while j < width {
                    *d.add(j) = 0.0;
                    j += 1;
                }
            }
        } else if sk == 1 {
            // Contiguous along k: 8 × 8 blocks transposed in registers.
            let p8 = kc - kc % 8;
            for j0 in (0..width).step_by(8) {
                let rows = w.saturating_sub(j0).min(8);
                let lanes = (width - j0).min(8);
                let mask = _mm256_cmpgt_epi32(
                    _mm256_set1_epi32(lanes as i32),
                    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                );
                for p in (0..p8).step_by(8) {
                    let r: [__m256; 8] = std::array::from_fn(|q| {
                        if q < rows {
                            _mm256_loadu_ps(src.add((j0 + q) * sj + p))
                        } else {
                            _mm256_setzero_ps()
                        }
                    });
                    let t = transpose8(r);
                    for (q, v) in t.into_iter().enumerate() {
                        let d = dst.add((p + q) * width + j0);
                        if lanes == 8 {
                            _mm256_storeu_ps(d, v);
                        } else {
                            _mm256_maskstore_ps(d, mask, v);
                        }
                    }
                }
            }
            for p in p8..kc {
                for j in 0..width {
                    *dst.add(p * width + j) = if j < w { *src.add(j * sj + p) } else { 0.0 };
                }
            }
        } else {
            for p in 0..kc {
                for j in 0..width {
                    *dst.add(p * width + j) = if j < w {
                        *src.add(p * sk + j * sj)
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// The 8 × 8 transpose: `out[q]` holds element q of each of the 8 inputs.
#[target_feature(enable = "avx")]
fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(u0, u4),
        _mm256_permute2f128_ps::<0x20>(u1, u5),
        _mm256_permute2f128_ps::<0x20>(u2, u6),
        _mm256_permute2f128_ps::<0x20>(u3, u7),
        _mm256_permute2f128_ps::<0x31>(u0, u4),
        _mm256_permute2f128_ps::<0x31>(u1, u5),
        _mm256_permute2f128_ps::<0x31>(u2, u6),
        _mm256_permute2f128_ps::<0x31>(u3, u7),
    ]
}
