//! Network pieces: fused layer norm, embedding gather, seeded dropout, select-by-mask.
use super::PAR_MIN;
use super::zeros;
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rand::rngs::ChaCha12Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// (output rows, input rows) and those rows' (mean, rstd).
type RowBlock<'a, F> = ((&'a mut [F], &'a [F]), &'a mut [(F, F)]);

/// Rows whose sums layer norm runs side by side (see [`layer_norm_rows`]).
const LANES: usize = 8;

/// Rows per parallel task: fixed, so partial sums combine the same way at any thread count.
const ROWS: usize = 32;

/// Rows `first..first + r` of a `[outer, full, inner]` tensor: where a tensor of `r` such rows
/// per outer index sits in the tensor the whole graph would have dropped. A pruned graph that
/// computes only some rows draws their masks from this window, exactly as the whole graph does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskRows {
    /// Rows per outer index in the whole tensor.
    pub full: usize,
    /// The first row kept.
    pub first: usize,
}

/// A dropout keep-mask, one bit per element: drawn once in forward and stored on the tape, so
/// backward reads it instead of drawing the stream again (the mask work, both draws and the
/// masking, was close to half of a small model's step).
///
/// Element `i` keeps when the `i`-th f64 of the ChaCha12 stream of the seed is at least `p`.
/// (The same stream as `StdRng::seed_from_u64(seed)`; ChaCha12 is named so it can seek.) That
/// f64 is `(x >> 11) · 2⁻⁵³` for the stream's `i`-th u64 `x`, exactly, so the test is made on
/// the integer: `x >> 11 >= ceil(p · 2⁵³)`, the same flags without a float per element.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct KeepMask {
    words: Vec<u64>,
    len: usize,
}

/// Draws per mask task: a multiple of 64, so that each task fills whole words of the mask.
/// Each task seeks to its place in the stream, so the tasks can run in parallel and the mask
/// is the same at any thread count (a seek costs about a hundred draws' time).
const DRAWS_PER_TASK: usize = 1 << 14;
/// Draws per fill of the stream: the generator fills a buffer of this many u64 (4 KiB) at its
/// full rate; at 64 u64 a fill was three times slower per draw.
const DRAWS_PER_FILL: usize = 512;

impl KeepMask {
    /// The mask of a whole tensor of `n` elements.
    pub(crate) fn draw(n: usize, p: f64, seed: u64) -> Self {
        Self::draw_mapped(n, p, seed, |e| (e, n - e))
    }

    /// The mask of an `[outer, rows, inner]` tensor that is the window `w` of a whole tensor:
    /// the same flags [`KeepMask::draw`] gives those elements of the whole tensor. Each outer
    /// index seeks into the stream, so nothing outside the window is drawn.
    pub(crate) fn draw_window(
        (outer, rows, inner): (usize, usize, usize),
        w: MaskRows,
        p: f64,
        seed: u64,
    ) -> Self {
        let n = outer * rows * inner;
        if w.first == 0 && w.full == rows {
            return Self::draw(n, p, seed);
        }
        assert!(
            w.first + rows <= w.full,
            "dropout: rows {}..{} outside {} rows",
            w.first,
            w.first + rows,
            w.full
        );
        // Element e of the window is element `off` of outer index `o`'s rows, in the whole
        // tensor `(o · full + first) · inner + off`, and the next `seg - off` follow it there.
        let seg = rows * inner;
        Self::draw_mapped(n, p, seed, |e| {
            let (o, off) = (e / seg, e % seg);
            ((o * w.full + w.first) * inner + off, seg - off)
        })
    }

    /// The mask of `n` elements whose flag `e` is draw `at(e).0` of the seed's stream, and
    /// draws `at(e).0 + 1 ..` those of the next `at(e).1 - 1` elements.
    fn draw_mapped(
        n: usize,
        p: f64,
        seed: u64,
        at: impl Fn(usize) -> (usize, usize) + Sync,
    ) -> Self {
        let min = keep_min(p);
        let mut words = vec![0u64; n.div_ceil(64)];
        let task = |(t, out): (usize, &mut [u64])| {
            let (start, end) = (t * DRAWS_PER_TASK, n.min((t + 1) * DRAWS_PER_TASK));
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            // The stream's u64 in order, each exactly what `next_u64` returns.
            let mut buf = [0u64; DRAWS_PER_FILL];
            let mut e = start;
            while e < end {
                let (pos, run) = at(e);
                // One f64 draw is one u64, two 32-bit words of the stream.
                rng.set_word_pos(2 * pos as u128);
                let mut left = run.min(end - e);
                while left > 0 {
                    let m = left.min(DRAWS_PER_FILL);
                    rng.fill(&mut buf[..m]);
                    let mut draws = &buf[..m];
                    while !draws.is_empty() {
                        // The flags up to the next word boundary, gathered in a register: set
                        // in memory one by one, each waited for the previous store.
                        let i = e - start;
                        let take = draws.len().min(64 - i % 64);
                        let mut word = 0u64;
                        for (b, &x) in draws[..take].iter().enumerate() {
                            word |= u64::from((x >> 11) >= min) << b;
                        }
                        out[i / 64] |= word << (i % 64);
                        draws = &draws[take..];
                        e += take;
                    }
                    left -= m;
                }
            }
        };
        let words_per_task = DRAWS_PER_TASK / 64;
        if n < PAR_MIN {
            words.chunks_mut(words_per_task).enumerate().for_each(task);
        } else {
            words
                .par_chunks_mut(words_per_task)
                .enumerate()
                .for_each(task);
        }
        Self { words, len: n }
    }

    /// Elements in the mask.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether element `i` is kept.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// The flags of elements `start..start + n`.
    pub(crate) fn flags(&self, start: usize, n: usize) -> impl Iterator<Item = bool> + '_ {
        assert!(
            start + n <= self.len,
            "keep mask: {start}+{n} past {}",
            self.len
        );
        (start..start + n).map(|i| self.get(i))
    }

    /// `f(a[i], b[i], kept[i])` for every element `i`, reading the flags a word (64 elements)
    /// at a time, in parallel over blocks of words when large: dropout's forward and backward
    /// are this loop. Each element is its own `f`, so the order of the blocks changes nothing.
    /// `f` gets the flag rather than being skipped on dropped elements: written as a select,
    /// the loop has no branch to mispredict on a random mask.
    pub(crate) fn zip_flags<F: Copy + Send + Sync>(
        &self,
        a: &mut [F],
        b: &[F],
        f: impl Fn(&mut F, F, bool) + Sync,
    ) {
        let block = |((ac, bc), ws): ((&mut [F], &[F]), &[u64])| {
            crate::kernels::wide(|| {
                for ((ac, bc), &w) in ac.chunks_mut(64).zip(bc.chunks(64)).zip(ws) {
                    for (bit, (a, &b)) in ac.iter_mut().zip(bc).enumerate() {
                        f(a, b, (w >> bit) & 1 == 1);
                    }
                }
            })
        };
        let words_per_block = DRAWS_PER_TASK / 64;
        if a.len() < PAR_MIN {
            block(((a, b), &self.words));
        } else {
            a.par_chunks_mut(DRAWS_PER_TASK)
                .zip(b.par_chunks(DRAWS_PER_TASK))
                .zip(self.words.par_chunks(words_per_block))
                .for_each(block);
        }
    }
}

/// The least `x >> 11` that keeps: `(x >> 11) · 2⁻⁵³ >= p` exactly when `x >> 11 >= ceil(p · 2⁵³)`
/// (both sides are exact in f64: a 53-bit integer, and `p` times a power of two).
fn keep_min(p: f64) -> u64 {
    (p * (1u64 << 53) as f64).ceil() as u64
}

/// `[outer, rows, inner]` of a shape: its last two axes, and the product of the others.
fn window_dims(shape: &[usize]) -> (usize, usize, usize) {
    let k = shape.len();
    assert!(k >= 2, "dropout window: shape {shape:?} needs two axes");
    (shape[..k - 2].iter().product(), shape[k - 2], shape[k - 1])
}

/// Layer norm of up to [`LANES`] rows of `x` (`d = gain.len()` values each) into `o`, with each
/// row's (mean, rstd) into `st`. A row's mean and variance are its sums taken left to right from
/// -0.0, as `Iterator::sum` takes them, so every value is the same bit for bit as row by row. A
/// full block adds its rows' sums side by side: one row's sum is a chain of dependent adds that
/// leaves the pipeline mostly idle, and eight independent chains fill it.
// Column `j` of eight rows at a time: indexing says that more plainly than eight iterators.
#[allow(clippy::needless_range_loop)]
fn layer_norm_rows<F: Float>(
    o: &mut [F],
    x: &[F],
    st: &mut [(F, F)],
    (gain, bias): (&[F], &[F]),
    eps: F,
    inv_d: F,
) {
    let d = gain.len();
    let rows = st.len();
    let mut mean = [F::ZERO; LANES];
    let mut var = [F::ZERO; LANES];
    if rows == LANES {
        let xs: [&[F]; LANES] = std::array::from_fn(|r| &x[r * d..][..d]);
        let mut acc = [-F::ZERO; LANES];
        for j in 0..d {
            for r in 0..LANES {
                acc[r] += xs[r][j];
            }
        }
        for r in 0..LANES {
            mean[r] = acc[r] * inv_d;
        }
        let mut acc = [-F::ZERO; LANES];
        for j in 0..d {
            for r in 0..LANES {
                let c = xs[r][j] - mean[r];
                acc[r] += c * c;
            }
        }
        for r in 0..LANES {
            var[r] = acc[r] * inv_d;
        }
    } else {
        for (r, xr) in x.chunks(d).enumerate() {
            let m = xr.iter().copied().sum::<F>() * inv_d;
            mean[r] = m;
            var[r] = xr.iter().map(|&v| (v - m) * (v - m)).sum::<F>() * inv_d;
        }
    }
    for (r, ((or, xr), st)) in o.chunks_mut(d).zip(x.chunks(d)).zip(st).enumerate() {
        let rstd = F::ONE / (var[r] + eps).sqrt();
        for (j, (o, &v)) in or.iter_mut().zip(xr).enumerate() {
            *o = (v - mean[r]) * rstd * gain[j] + bias[j];
        }
        *st = (mean[r], rstd);
    }
}

/// The forward of [`Tape::layer_norm`] on plain tensors: the normalised rows and each row's
/// (mean, reciprocal standard deviation), which the tape keeps for backward.
pub fn layer_norm_forward<F: Float>(
    xv: &Tensor<F>,
    gv: &Tensor<F>,
    bv: &Tensor<F>,
    eps: f64,
) -> (Tensor<F>, Vec<(F, F)>) {
    let d = *xv.shape.last().expect("layer_norm: scalar input");
    assert!(
        gv.shape == [d] && bv.shape == [d],
        "layer_norm: input {:?} needs gain and bias [{d}], got {:?} and {:?}",
        xv.shape,
        gv.shape,
        bv.shape
    );
    let rows = xv.len() / d.max(1);
    let mut out = zeros(xv.len());
    let mut stats = vec![(F::ZERO, F::ZERO); rows];
    let eps = F::from_f64(eps);
    let inv_d = F::ONE / F::from_f64(d as f64);
    let body = |((o, x), st): RowBlock<'_, F>| {
        layer_norm_rows(o, x, st, (&gv.data, &bv.data), eps, inv_d);
    };
    if xv.len() < PAR_MIN {
        out.chunks_mut(LANES * d)
            .zip(xv.data.chunks(LANES * d))
            .zip(stats.chunks_mut(LANES))
            .for_each(body);
    } else {
        out.par_chunks_mut(LANES * d)
            .zip(xv.data.par_chunks(LANES * d))
            .zip(stats.par_chunks_mut(LANES))
            .with_min_len(ROWS / LANES)
            .for_each(body);
    }
    (Tensor::from_vec(&xv.shape, out), stats)
}

/// The forward of [`Tape::embedding_shaped`] on plain tensors: the rows of `t [V, D]` picked
/// by `ids`, shaped `[lead.., D]`.
pub fn embedding_forward<F: Float>(t: &Tensor<F>, ids: &[usize], lead: &[usize]) -> Tensor<F> {
    assert_eq!(
        lead.iter().product::<usize>(),
        ids.len(),
        "embedding: {} ids cannot fill {lead:?}",
        ids.len()
    );
    assert!(
        t.shape.len() == 2,
        "embedding: table must be [V, D], got {:?}",
        t.shape
    );
    let (v, d) = (t.shape[0], t.shape[1]);
    let mut out = Vec::with_capacity(ids.len() * d);
    for &i in ids {
        assert!(
            i < v,
            "embedding: id {i} out of range for table {:?}",
            t.shape
        );
        out.extend_from_slice(&t.data[i * d..(i + 1) * d]);
    }
    let mut shape = lead.to_vec();
    shape.push(d);
    Tensor::from_vec(&shape, out)
}

impl<F: Float> Tape<F> {
    /// Layer norm over the last axis: `(x - mean) / sqrt(var + eps) * gain + bias`, one fused op
    /// that keeps each row's mean and reciprocal standard deviation for backward.
    pub fn layer_norm(&mut self, x: Var, gain: Var, bias: Var, eps: f64) -> Var {
        let (y, stats) = layer_norm_forward(self.value(x), self.value(gain), self.value(bias), eps);
        let (mean, rstd) = stats.into_iter().unzip();
        let op = Op::LayerNorm {
            x,
            gain,
            bias,
            mean,
            rstd,
        };
        self.push(op, y)
    }

    /// Rows of `table [V, D]` picked by `ids`: output `[ids.len(), D]`.
    pub fn embedding(&mut self, table: Var, ids: &[usize]) -> Var {
        self.embedding_shaped(table, ids, &[ids.len()])
    }

    /// [`Tape::embedding`] with output `[lead.., D]` (`lead` holding `ids.len()` elements): a
    /// token batch's `[B, L, D]` directly, without a reshape copying every row again.
    pub fn embedding_shaped(&mut self, table: Var, ids: &[usize], lead: &[usize]) -> Var {
        let y = embedding_forward(self.value(table), ids, lead);
        let op = Op::Embedding {
            table,
            ids: ids.to_vec(),
        };
        self.push(op, y)
    }

    /// Inverted dropout: zero each element with probability `p`, scale the rest by 1/(1-p).
    /// The mask comes from `seed` alone. The identity on an evaluation tape or when p = 0.
    pub fn dropout(&mut self, x: Var, p: f64, seed: u64) -> Var {
        self.dropout_window(x, p, seed, None)
    }

    /// [`Tape::dropout`] of `x [.., r, inner]` as the rows `rows` of the tensor the whole graph
    /// would drop: each kept element gets the mask that element gets there.
    pub fn dropout_window(&mut self, x: Var, p: f64, seed: u64, rows: Option<MaskRows>) -> Var {
        assert!((0.0..1.0).contains(&p), "dropout: p = {p} is not in [0, 1)");
        if !self.is_training() || p == 0.0 {
            return x;
        }
        let xv = self.value(x);
        let k = F::from_f64(1.0 / (1.0 - p));
        let keep = match rows {
            None => KeepMask::draw(xv.len(), p, seed),
            Some(w) => KeepMask::draw_window(window_dims(&xv.shape), w, p, seed),
        };
        let mut data = zeros(xv.len());
        keep.zip_flags(&mut data, &xv.data, |o, v, kept| {
            *o = if kept { v * k } else { F::ZERO }
        });
        let t = Tensor::from_vec(&xv.shape, data);
        self.push(Op::Dropout { x, p, keep }, t)
    }

    /// `cond ? a : b` elementwise; a and b have one shape, `cond` one flag per element. The
    /// branch not taken gets an exact zero gradient, so a NaN there cannot leak through.
    pub fn where_(&mut self, cond: &[bool], a: Var, b: Var) -> Var {
        let (x, y) = (self.value(a), self.value(b));
        assert!(
            x.shape == y.shape && cond.len() == x.len(),
            "where: shapes {:?} and {:?} with {} conditions",
            x.shape,
            y.shape,
            cond.len()
        );
        let data = cond
            .iter()
            .zip(x.data.iter().zip(&y.data))
            .map(|(&c, (&p, &q))| if c { p } else { q })
            .collect();
        let t = Tensor::from_vec(&x.shape, data);
        let op = Op::Where {
            cond: cond.to_vec(),
            a,
            b,
        };
        self.push(op, t)
    }
}

/// With xh = (x - mean) rstd and gx = g * gain:
/// dx = rstd (gx - mean(gx) - xh mean(gx xh)), dgain = sum over rows g xh, dbias = sum g.
pub(crate) fn layer_norm_backward<F: Float>(
    tape: &Tape<F>,
    (x, gain, bias): (Var, Var, Var),
    mean: &[F],
    rstd: &[F],
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (xv, gv) = (tape.value(x), tape.value(gain));
    let d = gv.len();
    let inv_d = F::ONE / F::from_f64(d as f64);
    let mut dx = zeros(xv.len());
    // per chunk of rows: dx rows, plus partial dgain and dbias combined later in chunk order
    let body = |(c, dxc): (usize, &mut [F])| {
        let (mut dg, mut db) = (vec![F::ZERO; d], vec![F::ZERO; d]);
        for (r, dxr) in dxc.chunks_mut(d).enumerate() {
            let row = c * ROWS + r;
            let (xr, gr) = (&xv.data[row * d..][..d], &g[row * d..][..d]);
            let (mu, rs) = (mean[row], rstd[row]);
            let (mut sg, mut sgx) = (F::ZERO, F::ZERO);
            for j in 0..d {
                let xh = (xr[j] - mu) * rs;
                let gx = gr[j] * gv.data[j];
                sg += gx;
                sgx += gx * xh;
                dg[j] += gr[j] * xh;
                db[j] += gr[j];
            }
            let (mg, mgx) = (sg * inv_d, sgx * inv_d);
            for j in 0..d {
                let xh = (xr[j] - mu) * rs;
                dxr[j] = rs * (gr[j] * gv.data[j] - mg - xh * mgx);
            }
        }
        (dg, db)
    };
    let parts: Vec<(Vec<F>, Vec<F>)> = if xv.len() < PAR_MIN {
        dx.chunks_mut(ROWS * d).enumerate().map(body).collect()
    } else {
        dx.par_chunks_mut(ROWS * d).enumerate().map(body).collect()
    };
    grads.add_owned(tape, x, dx);
    for (v, pick) in [(gain, 0), (bias, 1)] {
        if let Some(dst) = grads.slot(tape, v) {
            for p in &parts {
                let src = if pick == 0 { &p.0 } else { &p.1 };
                dst.iter_mut().zip(src).for_each(|(a, b)| *a += *b);
            }
        }
    }
}

/// Scatter-add: a repeated id accumulates every row that picked it.
pub(crate) fn embedding_backward<F: Float>(
    tape: &Tape<F>,
    table: Var,
    ids: &[usize],
    g: &[F],
    grads: &mut Grads<F>,
) {
    let d = tape.shape(table)[1];
    if let Some(dt) = grads.slot(tape, table) {
        for (r, &i) in ids.iter().enumerate() {
            let dst = &mut dt[i * d..(i + 1) * d];
            dst.iter_mut()
                .zip(&g[r * d..(r + 1) * d])
                .for_each(|(a, b)| *a += *b);
        }
    }
}

pub(crate) fn dropout_backward<F: Float>(
    tape: &Tape<F>,
    (x, p, keep): (Var, f64, &KeepMask),
    g: &[F],
    grads: &mut Grads<F>,
) {
    let k = F::from_f64(1.0 / (1.0 - p));
    assert_eq!(
        keep.len(),
        g.len(),
        "dropout: mask and gradient sizes differ"
    );
    if let Some(d) = grads.slot(tape, x) {
        keep.zip_flags(d, g, |d, g, kept| *d = if kept { *d + g * k } else { *d });
    }
}

pub(crate) fn where_backward<F: Float>(
    tape: &Tape<F>,
    cond: &[bool],
    a: Var,
    b: Var,
    g: &[F],
    grads: &mut Grads<F>,
) {
    for (v, take) in [(a, true), (b, false)] {
        if let Some(d) = grads.slot(tape, v) {
            for ((d, &g), &c) in d.iter_mut().zip(g).zip(cond) {
                if c == take {
                    *d += g;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// The definition: one f64 of the seed's ChaCha12 stream per element, kept when >= p.
    fn reference(n: usize, p: f64, seed: u64) -> Vec<bool> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        (0..n).map(|_| rng.random::<f64>() >= p).collect()
    }

    fn all_flags(m: &KeepMask) -> Vec<bool> {
        m.flags(0, m.len()).collect()
    }

    #[test]
    fn keep_masks_are_the_f64_draws_they_replace() {
        // Sizes around the 64-draw buffer and word edges; rates at and between 53-bit steps.
        let rates = [
            1e-17,
            0.1,
            0.25,
            0.3,
            0.4,
            0.5,
            0.9,
            1.0 - f64::EPSILON / 2.0,
        ];
        for n in [0, 1, 63, 64, 65, 127, 128, 129, 1000, 4097] {
            for (i, &p) in rates.iter().enumerate() {
                let seed = 7 + i as u64 * 1_000_003 + n as u64;
                let want = reference(n, p, seed);
                assert_eq!(all_flags(&KeepMask::draw(n, p, seed)), want, "n {n}, p {p}");
            }
        }
    }

    #[test]
    fn keep_mask_windows_are_rows_of_the_whole_mask() {
        let (outer, full, inner) = (3, 7, 5);
        let whole = reference(outer * full * inner, 0.3, 11);
        for (first, rows) in [(0, 7), (0, 1), (2, 3), (6, 1), (1, 6)] {
            let w = MaskRows { full, first };
            let got = all_flags(&KeepMask::draw_window((outer, rows, inner), w, 0.3, 11));
            let want: Vec<bool> = (0..outer)
                .flat_map(|o| {
                    let start = (o * full + first) * inner;
                    whole[start..start + rows * inner].to_vec()
                })
                .collect();
            assert_eq!(got, want, "rows {first}..{}", first + rows);
        }
    }

    #[test]
    fn layer_norm_rows_side_by_side_equal_row_by_row() {
        // Row counts below, at and above a block; a row of -0.0 (whose sum's sign depends on
        // the sum's starting value) and one of large, cancelling values.
        for (rows, d) in [(1, 5), (7, 16), (8, 16), (9, 33), (20, 64)] {
            let mut x: Vec<f32> = (0..rows * d)
                .map(|i| ((i * 7919 % 1009) as f32 - 504.0) * 1e-2)
                .collect();
            x[..d].iter_mut().for_each(|v| *v = -0.0);
            if rows > 2 {
                x[d..2 * d]
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, v)| *v = if j % 2 == 0 { 1e8 } else { -1e8 + 3.0 });
            }
            let gain: Vec<f32> = (0..d).map(|j| 0.5 + j as f32 * 0.01).collect();
            let bias: Vec<f32> = (0..d).map(|j| j as f32 * -0.02).collect();
            let (eps, inv_d) = (1e-12f32, 1.0 / d as f32);
            let mut got = vec![0.0f32; rows * d];
            let mut got_st = vec![(0.0f32, 0.0f32); rows];
            for ((o, xb), st) in got
                .chunks_mut(LANES * d)
                .zip(x.chunks(LANES * d))
                .zip(got_st.chunks_mut(LANES))
            {
                layer_norm_rows(o, xb, st, (&gain, &bias), eps, inv_d);
            }
            for (r, xr) in x.chunks(d).enumerate() {
                let mean = xr.iter().copied().sum::<f32>() * inv_d;
                let var = xr.iter().map(|&v| (v - mean) * (v - mean)).sum::<f32>() * inv_d;
                let rstd = 1.0 / (var + eps).sqrt();
                assert_eq!(got_st[r].0.to_bits(), mean.to_bits(), "mean of row {r}");
                assert_eq!(got_st[r].1.to_bits(), rstd.to_bits(), "rstd of row {r}");
                for j in 0..d {
                    let want = (xr[j] - mean) * rstd * gain[j] + bias[j];
                    assert_eq!(got[r * d + j].to_bits(), want.to_bits(), "row {r}, {j}");
                }
            }
        }
    }
}
