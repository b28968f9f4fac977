//! Fused multi-head attention: scores → scale → +bias → mask → softmax → dropout → ·V in one op.
//!
//! Queries may be fewer than keys: `Lq` query rows that stand at positions `q0..q0 + Lq` of the
//! `Lk` keys (a pruned last block computes only the pooled row). The attention-dropout mask of
//! those rows is the one the whole `[B, H, Lk, Lk]` grid would draw there.
//!
//! Heads are read from `[B, L, D]` projections with strides (head h owns columns
//! `h·dh..(h+1)·dh`), so no permute or reshape copies are made, and the output is written in the
//! same layout. Work is split per batch element, each a fixed task, so the result is the same
//! bit for bit at any thread count. The arithmetic follows the composed ops in the same order
//! (`matmul_t`, `scale`, `add`, `add_mask`, `softmax`, `dropout`, `matmul`).
use super::dot_lanes;
use super::nn::{MaskRows, dropout_keep_window};
use super::softmax::log_softmax_row;
use super::zeros;
use crate::autodiff::tape::{Grads, Op, Tape, Var};
use crate::float::Float;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// The vars of one fused attention call.
#[derive(Clone, Copy, Debug)]
pub struct AttentionVars {
    /// `[B, L, D]`, heads concatenated along the last axis.
    pub out: Var,
    /// `q·k / sqrt(dh)`, `[B, H, L, L]`: a constant, for inspection only. Kept on evaluation
    /// tapes ([`Tape::eval`], where the probabilistic view reads it); on a training tape it is
    /// an empty `[0]` tensor, sparing a `[B, H, L, L]` buffer nothing reads.
    pub context: Var,
    /// Softmax output before dropout, `[B, H, L, L]`: a constant, for inspection only (the
    /// gradient flows through `out`).
    pub probs: Var,
}

/// `C (+)= A B` with `(ptr, row stride, column stride)` for A and `(ptr, row stride)` for B and
/// C, whose rows are contiguous: the unpacked kernel of [`Float::gemm_rows`].
unsafe fn gemm_rows<F: Float>(
    mkn: (usize, usize, usize),
    a: (*const F, usize, usize),
    b: (*const F, usize),
    beta: F,
    c: (*mut F, usize),
) {
    // SAFETY: forwarded from the caller, who passes pointers into live slices.
    unsafe { F::gemm_rows(mkn, a.0, (a.1, a.2), b.0, b.1, beta, c.0, c.1) }
}

/// The first `cols` columns of `rows` rows of stride `stride` at `x`, transposed into `out`
/// `[cols, rows]` (a head of K or V, so that `q kᵀ` reads kᵀ's rows contiguously). Square
/// tiles keep both sides of the copy in cache.
fn transpose<F: Float>(x: &[F], rows: usize, cols: usize, stride: usize, out: &mut [F]) {
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
fn add_transposed<F: Float>(src: &[F], cols: usize, rows: usize, dst: &mut [F], stride: usize) {
    assert!(src.len() >= rows * cols && cols <= stride);
    assert!(rows == 0 || dst.len() >= (rows - 1) * stride + cols);
    for (r, row) in dst.chunks_mut(stride).take(rows).enumerate() {
        for (c, x) in row[..cols].iter_mut().enumerate() {
            // SAFETY: c < cols and r < rows, checked against src's length above.
            *x += unsafe { *src.get_unchecked(c * rows + r) };
        }
    }
}

/// Fixed groups of batch elements in the backward pass: the parallel tasks, and the partial sums
/// of the bias gradient (fixed, so the sum is the same at any thread count).
const GROUPS: usize = 8;

/// Checks shapes and returns (B, Lq, Lk, D).
fn dims<F: Float>(
    tape: &Tape<F>,
    q: Var,
    k: Var,
    v: Var,
    heads: usize,
) -> (usize, usize, usize, usize) {
    let (sq, sk) = (tape.shape(q), tape.shape(k));
    assert!(
        sq.len() == 3 && sk.len() == 3 && tape.shape(v) == sk && sq[0] == sk[0] && sq[2] == sk[2],
        "attention: q {:?}, k {:?}, v {:?} must be [B, Lq, D], [B, Lk, D], [B, Lk, D]",
        sq,
        sk,
        tape.shape(v)
    );
    assert!(
        heads > 0 && sq[2].is_multiple_of(heads),
        "attention: D = {} is not a multiple of {heads} heads",
        sq[2]
    );
    (sq[0], sq[1], sk[1], sq[2])
}

/// The attention-dropout keep flags `[B, H, Lq, Lk]` of query rows `q0..q0 + Lq`: the rows of
/// the whole `[B, H, Lk, Lk]` grid's mask.
fn keep_flags(b: usize, h: usize, lq: usize, lk: usize, q0: usize, p: f64, seed: u64) -> Vec<bool> {
    let rows = MaskRows {
        full: lk,
        first: q0,
    };
    dropout_keep_window((b * h, lq, lk), Some(rows), p, seed)
}

impl<F: Float> Tape<F> {
    /// Multi-head attention of queries `q [B, Lq, D]` over keys and values `k`, `v` `[B, Lk, D]`
    /// with `heads` heads: an optional bias `[H, Lq, Lk]`, a constant key mask `[B, 1, 1, Lk]`
    /// (0 or -inf) and dropout `p` on the attention weights. The queries are positions
    /// `q0..q0 + Lq` of the keys (`q0 = 0`, `Lq = Lk` for self-attention over the whole
    /// sequence); the dropout mask comes from `seed` exactly as [`Tape::dropout`] draws it over
    /// the whole `[B, H, Lk, Lk]` grid, restricted to those rows.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(
        &mut self,
        q: Var,
        k: Var,
        v: Var,
        heads: usize,
        q0: usize,
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        p: f64,
        seed: u64,
    ) -> AttentionVars {
        let (b, lq, lk, d) = dims(self, q, k, v, heads);
        let (h, dh) = (heads, d / heads);
        assert!(
            (0.0..1.0).contains(&p),
            "attention: dropout {p} not in [0, 1)"
        );
        assert!(
            q0 + lq <= lk,
            "attention: query rows {q0}..{} outside {lk} keys",
            q0 + lq
        );
        if let Some(bias) = bias {
            assert!(
                self.shape(bias) == [h, lq, lk],
                "attention: bias {:?}, expected [{h}, {lq}, {lk}]",
                self.shape(bias)
            );
        }
        assert!(
            key_mask.shape == [b, 1, 1, lk],
            "attention: key mask {:?}, expected [{b}, 1, 1, {lk}]",
            key_mask.shape
        );
        let p = if self.is_training() { p } else { 0.0 };
        let keep = (p > 0.0).then(|| keep_flags(b, h, lq, lk, q0, p, seed));
        let kd = F::from_f64(1.0 / (1.0 - p));
        let scale = F::from_f64(1.0 / (dh as f64).sqrt());
        let (qv, kv, vv) = (
            &self.value(q).data,
            &self.value(k).data,
            &self.value(v).data,
        );
        let bv = bias.map(|x| &self.value(x).data[..]);
        let (hll, ll) = (h * lq * lk, lq * lk);
        let mut out = zeros(b * lq * d);
        // The scores of a batch element live in its chunk of `context` when they are kept, else
        // in a per-task scratch grid (one unused slot per batch element).
        let keep_context = !self.is_training();
        let c_chunk = if keep_context { hll } else { 1 };
        let mut context = zeros(b * c_chunk);
        let mut probs = zeros(b * hll);
        #[allow(clippy::type_complexity)]
        let body = |(bi, ((o, c), pr)): (usize, ((&mut [F], &mut [F]), &mut [F]))| {
            let mut scratch = vec![F::ZERO; if keep_context { 0 } else { ll }];
            let c: &mut [F] = if keep_context { c } else { &mut scratch };
            let mut row = vec![F::ZERO; lk];
            let mut kt = vec![F::ZERO; dh * lk];
            let mut dropped = vec![F::ZERO; if keep.is_some() { ll } else { 0 }];
            let mask = &key_mask.data[bi * lk..(bi + 1) * lk];
            for hi in 0..h {
                let (qoff, koff) = (bi * lq * d + hi * dh, bi * lk * d + hi * dh);
                let c = if keep_context {
                    &mut c[hi * ll..][..ll]
                } else {
                    &mut c[..]
                };
                let pr = &mut pr[hi * ll..][..ll];
                transpose(&kv[koff..], lk, dh, d, &mut kt);
                // SAFETY: head hi of batch bi spans rows qoff + i·d of q and koff + j·d of k and
                // v, columns < dh.
                unsafe {
                    gemm_rows(
                        (lq, dh, lk),
                        (qv[qoff..].as_ptr(), d, 1),
                        (kt.as_ptr(), lk),
                        F::ZERO,
                        (c.as_mut_ptr(), lk),
                    );
                }
                for (i, (ci, pi)) in c.chunks_mut(lk).zip(pr.chunks_mut(lk)).enumerate() {
                    ci.iter_mut().for_each(|cv| *cv *= scale);
                    match bv {
                        Some(bv) => {
                            let brow = &bv[hi * ll + i * lk..][..lk];
                            for (((r, &cv), &bj), &mj) in
                                row.iter_mut().zip(&*ci).zip(brow).zip(mask)
                            {
                                *r = (cv + bj) + mj;
                            }
                        }
                        None => {
                            for ((r, &cv), &mj) in row.iter_mut().zip(&*ci).zip(mask) {
                                *r = cv + mj;
                            }
                        }
                    }
                    log_softmax_row(&row, pi, true);
                }
                let pd: &[F] = match &keep {
                    Some(keep) => {
                        let km = &keep[(bi * h + hi) * ll..][..ll];
                        for ((x, &y), &kp) in dropped.iter_mut().zip(pr.iter()).zip(km) {
                            *x = if kp { y * kd } else { F::ZERO };
                        }
                        &dropped
                    }
                    None => pr,
                };
                // SAFETY: out rows bi·lq.. of this chunk, columns hi·dh..(hi+1)·dh.
                unsafe {
                    gemm_rows(
                        (lq, lk, dh),
                        (pd.as_ptr(), lk, 1),
                        (vv[koff..].as_ptr(), d),
                        F::ZERO,
                        (o[hi * dh..].as_mut_ptr(), d),
                    );
                }
            }
        };
        if b * hll * dh < 1 << 16 {
            out.chunks_mut(lq * d)
                .zip(context.chunks_mut(c_chunk))
                .zip(probs.chunks_mut(hll))
                .enumerate()
                .for_each(body);
        } else {
            out.par_chunks_mut(lq * d)
                .zip(context.par_chunks_mut(c_chunk))
                .zip(probs.par_chunks_mut(hll))
                .enumerate()
                .for_each(body);
        }
        let context = if keep_context {
            Tensor::from_vec(&[b, h, lq, lk], context)
        } else {
            Tensor::from_vec(&[0], Vec::new())
        };
        let context = self.constant(context);
        let probs = self.constant(Tensor::from_vec(&[b, h, lq, lk], probs));
        let op = Op::Attention {
            q,
            k,
            v,
            bias,
            probs,
            heads,
            q0,
            p,
            seed,
        };
        let out = self.push(op, Tensor::from_vec(&[b, lq, d], out));
        AttentionVars {
            out,
            context,
            probs,
        }
    }
}

/// Per head: dPd = dO Vᵀ, dV = Pdᵀ dO, dP = mask·dPd, dS = P (dP - Σ P dP), dC = dS·scale,
/// dQ = dC K, dK = dCᵀ Q; the bias gradient sums dS over the batch, in batch order within
/// [`GROUPS`] fixed groups and then in group order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_backward<F: Float>(
    tape: &Tape<F>,
    (q, k, v): (Var, Var, Var),
    bias: Option<Var>,
    probs: Var,
    (heads, q0): (usize, usize),
    p: f64,
    seed: u64,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (b, lq, lk, d) = dims(tape, q, k, v, heads);
    let (h, dh) = (heads, d / heads);
    let (hll, ll) = (h * lq * lk, lq * lk);
    let keep = (p > 0.0).then(|| keep_flags(b, h, lq, lk, q0, p, seed));
    let kd = F::from_f64(1.0 / (1.0 - p));
    let scale = F::from_f64(1.0 / (dh as f64).sqrt());
    let (qv, kv, vv) = (
        &tape.value(q).data,
        &tape.value(k).data,
        &tape.value(v).data,
    );
    let pv = &tape.value(probs).data;
    let want_bias = bias.is_some_and(|x| tape.needs_grad(x));
    let mut dq = zeros(b * lq * d);
    let mut dk = zeros(b * lk * d);
    let mut dv = zeros(b * lk * d);
    // Batch elements in GROUPS fixed groups, each summing its dS grids in batch order into one
    // partial bias gradient when the bias wants one (else one unused slot); the partials are
    // added in group order below. (One grid per batch element was 20 MB per step at config A.)
    let group = b.div_ceil(GROUPS).max(1);
    let ds_chunk = if want_bias { hll } else { 1 };
    let mut ds_part = zeros(b.div_ceil(group) * ds_chunk);
    // One batch element: its chunks of dQ, dK, dV and the group's partial bias gradient.
    let one = |bi: usize, dqc: &mut [F], dkc: &mut [F], dvc: &mut [F], dsc: &mut [F]| {
        let mut ds = vec![F::ZERO; ll];
        let mut vt = vec![F::ZERO; dh * lk];
        let mut tr = vec![F::ZERO; dh * lk];
        let mut dropped = vec![F::ZERO; if keep.is_some() { ll } else { 0 }];
        for hi in 0..h {
            let (qoff, koff) = (bi * lq * d + hi * dh, bi * lk * d + hi * dh);
            let pr = &pv[(bi * h + hi) * ll..][..ll];
            let km = keep.as_ref().map(|kp| &kp[(bi * h + hi) * ll..][..ll]);
            let pd: &[F] = match km {
                Some(km) => {
                    for ((x, &y), &kp) in dropped.iter_mut().zip(pr).zip(km) {
                        *x = if kp { y * kd } else { F::ZERO };
                    }
                    &dropped
                }
                None => pr,
            };
            transpose(&vv[koff..], lk, dh, d, &mut vt);
            // SAFETY: all pointers address head hi of batch bi inside live buffers; the
            // destination chunks belong to this task only.
            unsafe {
                // dPd = dO Vᵀ  (lq × dh · dh × lk)
                gemm_rows(
                    (lq, dh, lk),
                    (g[qoff..].as_ptr(), d, 1),
                    (vt.as_ptr(), lk),
                    F::ZERO,
                    (ds.as_mut_ptr(), lk),
                );
            }
            // SAFETY: as above.
            unsafe {
                // dVᵀ = dOᵀ Pd  (dh × lq · lq × lk), added transposed into dV below
                gemm_rows(
                    (dh, lq, lk),
                    (g[qoff..].as_ptr(), 1, d),
                    (pd.as_ptr(), lk),
                    F::ZERO,
                    (tr.as_mut_ptr(), lk),
                );
            }
            add_transposed(&tr, dh, lk, &mut dvc[hi * dh..], d);
            for (i, dsi) in ds.chunks_mut(lk).enumerate() {
                let (pi, ki) = (
                    &pr[i * lk..(i + 1) * lk],
                    km.map(|km| &km[i * lk..(i + 1) * lk]),
                );
                if let Some(ki) = ki {
                    for (x, &kp) in dsi.iter_mut().zip(ki) {
                        *x = if kp { *x * kd } else { F::ZERO };
                    }
                }
                let s: F = dot_lanes(pi, dsi);
                for (x, &y) in dsi.iter_mut().zip(pi) {
                    *x = y * (*x - s);
                }
            }
            if want_bias {
                let part = &mut dsc[hi * ll..(hi + 1) * ll];
                part.iter_mut().zip(&ds).for_each(|(x, &y)| *x += y);
            }
            ds.iter_mut().for_each(|x| *x *= scale);
            // SAFETY: as above.
            unsafe {
                // dQ += dC K  (lq × lk · lk × dh)
                gemm_rows(
                    (lq, lk, dh),
                    (ds.as_ptr(), lk, 1),
                    (kv[koff..].as_ptr(), d),
                    F::ONE,
                    (dqc[hi * dh..].as_mut_ptr(), d),
                );
            }
            // SAFETY: as above.
            unsafe {
                // dKᵀ = Qᵀ dC  (dh × lq · lq × lk), added transposed into dK below
                gemm_rows(
                    (dh, lq, lk),
                    (qv[qoff..].as_ptr(), 1, d),
                    (ds.as_ptr(), lk),
                    F::ZERO,
                    (tr.as_mut_ptr(), lk),
                );
            }
            add_transposed(&tr, dh, lk, &mut dkc[hi * dh..], d);
        }
    };
    type Chunk<'a, F> = (
        usize,
        (((&'a mut [F], &'a mut [F]), &'a mut [F]), &'a mut [F]),
    );
    let body = |(gi, (((dqc, dkc), dvc), dsc)): Chunk<'_, F>| {
        let (qd, kd) = (lq * d, lk * d);
        for (j, bi) in (gi * group..b.min((gi + 1) * group)).enumerate() {
            let (rq, rk) = (j * qd..(j + 1) * qd, j * kd..(j + 1) * kd);
            one(bi, &mut dqc[rq], &mut dkc[rk.clone()], &mut dvc[rk], dsc);
        }
    };
    let (gqd, gkd) = (group * lq * d, group * lk * d);
    if b * hll * dh < 1 << 16 {
        dq.chunks_mut(gqd)
            .zip(dk.chunks_mut(gkd))
            .zip(dv.chunks_mut(gkd))
            .zip(ds_part.chunks_mut(ds_chunk))
            .enumerate()
            .for_each(body);
    } else {
        dq.par_chunks_mut(gqd)
            .zip(dk.par_chunks_mut(gkd))
            .zip(dv.par_chunks_mut(gkd))
            .zip(ds_part.par_chunks_mut(ds_chunk))
            .enumerate()
            .for_each(body);
    }
    grads.add_owned(tape, q, dq);
    grads.add_owned(tape, k, dk);
    grads.add_owned(tape, v, dv);
    if let Some(bias) = bias
        && let Some(db) = grads.slot(tape, bias)
    {
        // Add the groups' partial sums in group order, in fixed chunks of the [H, Lq, Lk] grid.
        let sum = |(c, dc): (usize, &mut [F])| {
            let start = c * ll;
            for part in ds_part.chunks(hll) {
                let src = &part[start..][..dc.len()];
                dc.iter_mut().zip(src).for_each(|(x, &s)| *x += s);
            }
        };
        if b * hll < 1 << 15 {
            db.chunks_mut(ll).enumerate().for_each(sum);
        } else {
            db.par_chunks_mut(ll).enumerate().for_each(sum);
        }
    }
}
