//! Network pieces: fused layer norm, embedding gather, seeded dropout, select-by-mask.
use super::PAR_MIN;
use super::zeros;
use crate::autodiff::tape::{Grads, Op, Tape, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rand::rngs::ChaCha12Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// (output row, input row) and that row's (mean, rstd).
type RowPair<'a, F> = ((&'a mut [F], &'a [F]), &'a mut (F, F));

/// Rows per parallel task: fixed, so partial sums combine the same way at any thread count.
const ROWS: usize = 32;

/// The keep-mask of a dropout with drop probability `p`, regenerated identically from `seed`:
/// element `i` keeps when the `i`-th f64 of the ChaCha12 stream of `seed` is at least `p`.
/// (The same stream as `StdRng::seed_from_u64(seed)`; ChaCha12 is named so it can seek.)
pub(crate) fn dropout_keep(n: usize, p: f64, seed: u64) -> impl Iterator<Item = bool> {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    (0..n).map(move |_| rng.random::<f64>() >= p)
}

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

/// The keep-mask of an `[outer, rows, inner]` tensor that is the window `w` of a whole tensor
/// (`None`: the tensor is whole): the same flags [`dropout_keep`] gives those elements of the
/// whole tensor. Each outer index seeks into the stream, so nothing outside the window is drawn.
pub(crate) fn dropout_keep_window(
    (outer, rows, inner): (usize, usize, usize),
    w: Option<MaskRows>,
    p: f64,
    seed: u64,
) -> Vec<bool> {
    let n = outer * rows * inner;
    let w = match w {
        Some(w) if !(w.first == 0 && w.full == rows) => w,
        _ => return dropout_keep(n, p, seed).collect(),
    };
    assert!(
        w.first + rows <= w.full,
        "dropout: rows {}..{} outside {} rows",
        w.first,
        w.first + rows,
        w.full
    );
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let mut keep = Vec::with_capacity(n);
    for o in 0..outer {
        // One f64 draw is one u64, two 32-bit words of the stream.
        let first = (o * w.full + w.first) * inner;
        rng.set_word_pos(2 * first as u128);
        keep.extend((0..rows * inner).map(|_| rng.random::<f64>() >= p));
    }
    keep
}

/// `[outer, rows, inner]` of a shape: its last two axes, and the product of the others.
fn window_dims(shape: &[usize]) -> (usize, usize, usize) {
    let k = shape.len();
    assert!(k >= 2, "dropout window: shape {shape:?} needs two axes");
    (shape[..k - 2].iter().product(), shape[k - 2], shape[k - 1])
}

impl<F: Float> Tape<F> {
    /// Layer norm over the last axis: `(x - mean) / sqrt(var + eps) * gain + bias`, one fused op
    /// that keeps each row's mean and reciprocal standard deviation for backward.
    pub fn layer_norm(&mut self, x: Var, gain: Var, bias: Var, eps: f64) -> Var {
        let (xv, gv, bv) = (self.value(x), self.value(gain), self.value(bias));
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
        let body = |((o, x), st): RowPair<'_, F>| {
            let mean = x.iter().copied().sum::<F>() * inv_d;
            let var = x.iter().map(|&v| (v - mean) * (v - mean)).sum::<F>() * inv_d;
            let rstd = F::ONE / (var + eps).sqrt();
            for (j, (o, &v)) in o.iter_mut().zip(x).enumerate() {
                *o = (v - mean) * rstd * gv.data[j] + bv.data[j];
            }
            *st = (mean, rstd);
        };
        if xv.len() < PAR_MIN {
            out.chunks_mut(d)
                .zip(xv.data.chunks(d))
                .zip(stats.iter_mut())
                .for_each(body);
        } else {
            out.par_chunks_mut(d)
                .zip(xv.data.par_chunks(d))
                .zip(stats.par_iter_mut())
                .with_min_len(ROWS)
                .for_each(body);
        }
        let (mean, rstd) = stats.into_iter().unzip();
        let shape = xv.shape.clone();
        let op = Op::LayerNorm {
            x,
            gain,
            bias,
            mean,
            rstd,
        };
        self.push(op, Tensor::from_vec(&shape, out))
    }

    /// Rows of `table [V, D]` picked by `ids`: output `[ids.len(), D]`.
    pub fn embedding(&mut self, table: Var, ids: &[usize]) -> Var {
        let t = self.value(table);
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
        let op = Op::Embedding {
            table,
            ids: ids.to_vec(),
        };
        self.push(op, Tensor::from_vec(&[ids.len(), d], out))
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
        let apply = |keep: &mut dyn Iterator<Item = bool>| -> Vec<F> {
            xv.data
                .iter()
                .zip(keep)
                .map(|(&v, keep)| if keep { v * k } else { F::ZERO })
                .collect()
        };
        let data = match rows {
            None => apply(&mut dropout_keep(xv.len(), p, seed)),
            Some(w) => {
                let keep = dropout_keep_window(window_dims(&xv.shape), Some(w), p, seed);
                apply(&mut keep.into_iter())
            }
        };
        let t = Tensor::from_vec(&xv.shape, data);
        self.push(Op::Dropout { x, p, seed, rows }, t)
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
    (x, p, seed, rows): (Var, f64, u64, Option<MaskRows>),
    g: &[F],
    grads: &mut Grads<F>,
) {
    let k = F::from_f64(1.0 / (1.0 - p));
    if let Some(d) = grads.slot(tape, x) {
        let mut add = |keep: &mut dyn Iterator<Item = bool>| {
            for ((d, &g), keep) in d.iter_mut().zip(g).zip(keep) {
                if keep {
                    *d += g * k;
                }
            }
        };
        match rows {
            None => add(&mut dropout_keep(g.len(), p, seed)),
            Some(w) => {
                let keep = dropout_keep_window(window_dims(tape.shape(x)), Some(w), p, seed);
                add(&mut keep.into_iter())
            }
        }
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
