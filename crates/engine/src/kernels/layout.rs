//! Strided copies of the attention op: a head's columns turned round, and back.

/// The first `cols` columns of `rows` rows of stride `stride` at `x`, transposed into `out`
/// `[cols, rows]` (a head of K or V, so that `q kᵀ` reads kᵀ's rows contiguously). Square
/// tiles keep both sides of the copy in cache.
pub fn transpose<F: Copy>(x: &[F], rows: usize, cols: usize, stride: usize, out: &mut [F]) {
    const T: usize = 8;
    assert!(rows == 0 || x.len() >= (rows - 1) * stride + cols);
    assert!(out.len() >= rows * cols && cols <= stride);
    for c0 in (0..cols).step_by(T) {
        let c1 = (c0 + T).min(cols);
        for r0 in (0..rows).step_by(T) {
            let r1 = (r0 + T).min(rows);
            for c in c0..c1 {
                // SAFETY: r < rows and c < cols <= stride, checked against both lengths above.
                unsafe {
                    let dst = out.as_mut_ptr().add(c * rows);
                    for r in r0..r1 {
                        *dst.add(r) = *x.get_unchecked(r * stride + c);
                    }
                }
            }
        }
    }
}

/// `dst[r·stride + c] += src[c·rows + r]`: a `[cols, rows]` product added into a head's columns.
///
/// `Pdᵀ dO` and `dSᵀ Q` read an `[L, L]` matrix down its columns, a strip that does not stay in
/// L1; their transposes `dOᵀ Pd` and `Qᵀ dS` read it along rows and only the `[dh, L]` result
/// needs turning round.
pub fn add_transposed<F: Copy + std::ops::AddAssign>(
    src: &[F],
    cols: usize,
    rows: usize,
    dst: &mut [F],
    stride: usize,
) {
    assert!(src.len() >= rows * cols && cols <= stride);
    assert!(rows == 0 || dst.len() >= (rows - 1) * stride + cols);
    for (r, row) in dst.chunks_mut(stride).take(rows).enumerate() {
        for (c, x) in row[..cols].iter_mut().enumerate() {
            // SAFETY: c < cols and r < rows, checked against src's length above.
            *x += unsafe { *src.get_unchecked(c * rows + r) };
        }
    }
}
