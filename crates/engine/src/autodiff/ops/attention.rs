//! Fused multi-head attention: scores → scale → +bias → mask → softmax → dropout → ·V in one op.
//!
//! Heads are read from `[B, L, D]` projections with strides (head h owns columns
//! `h·dh..(h+1)·dh`), so no permute or reshape copies are made, and the output is written in the
//! same layout. Work is split per batch element, each a fixed task, so the result is the same
//! bit for bit at any thread count. The arithmetic follows the composed ops in the same order
//! (`matmul_t`, `scale`, `add`, `add_mask`, `softmax`, `dropout`, `matmul`).
use super::dot_lanes;
use super::nn::KeepMask;
use super::softmax::log_softmax_row;
use super::zeros;
use super::{Op, Tape};
use crate::autodiff::tape::{Grads, Var};
use crate::float::Float;
use crate::kernels::{add_transposed, transpose};
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

/// Fixed groups of batch elements in the backward pass: the parallel tasks, and the partial sums
/// of the bias gradient (fixed, so the sum is the same at any thread count).
const GROUPS: usize = 8;

/// Checks shapes and returns (B, L, D).
fn dims<F: Float>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    heads: usize,
) -> (usize, usize, usize) {
    let s = &q.shape;
    assert!(
        s.len() == 3 && k.shape == *s && v.shape == *s,
        "attention: q {:?}, k {:?}, v {:?} must be one [B, L, D] shape",
        s,
        k.shape,
        v.shape
    );
    assert!(
        heads > 0 && s[2].is_multiple_of(heads),
        "attention: D = {} is not a multiple of {heads} heads",
        s[2]
    );
    (s[0], s[1], s[2])
}

/// Which of its `[B, H, L, L]` grids an attention forward returns beside its output (an empty
/// `[0]` tensor for one it does not keep: no buffer is made for it).
#[derive(Clone, Copy, Debug)]
pub struct AttentionKeeps {
    /// The content scores `q·k / sqrt(dh)`.
    pub context: bool,
    /// The softmax output before dropout.
    pub probs: bool,
}

impl<F: Float> Tape<F> {
    /// Multi-head attention over `[B, L, D]` projections with `heads` heads: an optional bias
    /// `[H, L, L]`, a constant key mask `[B, 1, 1, L]` (0 or -inf) and dropout `p` on the
    /// attention weights, whose mask comes from `seed` exactly as [`Tape::dropout`] draws it.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(
        &mut self,
        q: Var,
        k: Var,
        v: Var,
        heads: usize,
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        p: f64,
        seed: u64,
    ) -> AttentionVars {
        let (b, l, _) = dims(self.value(q), self.value(k), self.value(v), heads);
        assert!(
            (0.0..1.0).contains(&p),
            "attention: dropout {p} not in [0, 1)"
        );
        let p = if self.is_training() { p } else { 0.0 };
        let keep = (p > 0.0).then(|| KeepMask::draw(b * heads * l * l, p, seed));
        let keeps = AttentionKeeps {
            context: !self.is_training(),
            probs: true,
        };
        let (out, context, probs) = attention_forward(
            (self.value(q), self.value(k), self.value(v)),
            heads,
            bias.map(|x| self.value(x)),
            key_mask,
            keep.as_ref().map(|m| (m, p)),
            keeps,
        );
        let context = self.constant(context);
        let probs = self.constant(probs);
        let op = Op::Attention {
            q,
            k,
            v,
            bias,
            probs,
            heads,
            p,
            keep,
        };
        let out = self.push(op, out);
        AttentionVars {
            out,
            context,
            probs,
        }
    }
}

/// The forward of [`Tape::attention`] on plain tensors: the output `[B, L, D]`, and the content
/// scores and probabilities `[B, H, L, L]` where `keeps` asks for them. `drop` is the
/// attention dropout's keep-mask and rate; `None` is no dropout (evaluation).
#[allow(clippy::type_complexity)]
pub fn attention_forward<F: Float>(
    (q, k, v): (&Tensor<F>, &Tensor<F>, &Tensor<F>),
    heads: usize,
    bias: Option<&Tensor<F>>,
    key_mask: &Tensor<F>,
    drop: Option<(&KeepMask, f64)>,
    keeps: AttentionKeeps,
) -> (Tensor<F>, Tensor<F>, Tensor<F>) {
    let (b, l, d) = dims(q, k, v, heads);
    let (h, dh) = (heads, d / heads);
    if let Some(bias) = bias {
        assert!(
            bias.shape == [h, l, l],
            "attention: bias {:?}, expected [{h}, {l}, {l}]",
            bias.shape
        );
    }
    assert!(
        key_mask.shape == [b, 1, 1, l],
        "attention: key mask {:?}, expected [{b}, 1, 1, {l}]",
        key_mask.shape
    );
    let keep = drop.map(|(m, _)| m);
    let kd = F::from_f64(1.0 / (1.0 - drop.map_or(0.0, |(_, p)| p)));
    let scale = F::from_f64(1.0 / (dh as f64).sqrt());
    let (qv, kv, vv) = (&q.data, &k.data, &v.data);
    let bv = bias.map(|x| &x.data[..]);
    let (hll, ll) = (h * l * l, l * l);
    let mut out = zeros(b * l * d);
    // The scores and probabilities of a batch element live in its chunk of `context` and
    // `probs` when they are kept, else in per-task scratch grids (one unused slot per batch
    // element).
    let c_chunk = if keeps.context { hll } else { 1 };
    let p_chunk = if keeps.probs { hll } else { 1 };
    let mut context = zeros(b * c_chunk);
    let mut probs = zeros(b * p_chunk);
    #[allow(clippy::type_complexity)]
    let body = |(bi, ((o, c), pr)): (usize, ((&mut [F], &mut [F]), &mut [F]))| {
        let mut c_scratch = vec![F::ZERO; if keeps.context { 0 } else { ll }];
        let mut p_scratch = vec![F::ZERO; if keeps.probs { 0 } else { ll }];
        let c: &mut [F] = if keeps.context { c } else { &mut c_scratch };
        let pr: &mut [F] = if keeps.probs { pr } else { &mut p_scratch };
        let mut row = vec![F::ZERO; l];
        let mut kt = vec![F::ZERO; dh * l];
        let mut dropped = vec![F::ZERO; if keep.is_some() { ll } else { 0 }];
        let mask = &key_mask.data[bi * l..(bi + 1) * l];
        for hi in 0..h {
            let off = bi * l * d + hi * dh;
            let c = if keeps.context {
                &mut c[hi * ll..][..ll]
            } else {
                &mut c[..]
            };
            let pr = if keeps.probs {
                &mut pr[hi * ll..][..ll]
            } else {
                &mut pr[..]
            };
            transpose(&kv[off..], l, dh, d, &mut kt);
            F::gemm_rows((l, dh, l), &qv[off..], (d, 1), &kt, l, F::ZERO, c, l);
            for (i, (ci, pi)) in c.chunks_mut(l).zip(pr.chunks_mut(l)).enumerate() {
                ci.iter_mut().for_each(|cv| *cv *= scale);
                match bv {
                    Some(bv) => {
                        let brow = &bv[hi * ll + i * l..][..l];
                        for (((r, &cv), &bj), &mj) in row.iter_mut().zip(&*ci).zip(brow).zip(mask) {
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
            let pd: &[F] = match keep {
                Some(keep) => {
                    let km = keep.flags((bi * h + hi) * ll, ll);
                    for ((x, &y), kp) in dropped.iter_mut().zip(pr.iter()).zip(km) {
                        *x = if kp { y * kd } else { F::ZERO };
                    }
                    &dropped
                }
                None => pr,
            };
            F::gemm_rows(
                (l, l, dh),
                pd,
                (l, 1),
                &vv[off..],
                d,
                F::ZERO,
                &mut o[hi * dh..],
                d,
            );
        }
    };
    if b * hll * dh < 1 << 16 {
        out.chunks_mut(l * d)
            .zip(context.chunks_mut(c_chunk))
            .zip(probs.chunks_mut(p_chunk))
            .enumerate()
            .for_each(body);
    } else {
        out.par_chunks_mut(l * d)
            .zip(context.par_chunks_mut(c_chunk))
            .zip(probs.par_chunks_mut(p_chunk))
            .enumerate()
            .for_each(body);
    }
    let grid = |keep: bool, data: Vec<F>| {
        if keep {
            Tensor::from_vec(&[b, h, l, l], data)
        } else {
            Tensor::from_vec(&[0], Vec::new())
        }
    };
    (
        Tensor::from_vec(&[b, l, d], out),
        grid(keeps.context, context),
        grid(keeps.probs, probs),
    )
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
    heads: usize,
    p: f64,
    keep: Option<&KeepMask>,
    g: &[F],
    grads: &mut Grads<F>,
) {
    let (b, l, d) = dims(tape.value(q), tape.value(k), tape.value(v), heads);
    let (h, dh) = (heads, d / heads);
    let (hll, ll) = (h * l * l, l * l);
    let kd = F::from_f64(1.0 / (1.0 - p));
    let scale = F::from_f64(1.0 / (dh as f64).sqrt());
    let (qv, kv, vv) = (
        &tape.value(q).data,
        &tape.value(k).data,
        &tape.value(v).data,
    );
    let pv = &tape.value(probs).data;
    let want_bias = bias.is_some_and(|x| tape.needs_grad(x));
    let mut dq = zeros(b * l * d);
    let mut dk = zeros(b * l * d);
    let mut dv = zeros(b * l * d);
    // Batch elements in GROUPS fixed groups, each summing its dS grids in batch order into one
    // partial bias gradient when the bias wants one (else one unused slot); the partials are
    // added in group order below. (One grid per batch element was 20 MB per step at config A.)
    let group = b.div_ceil(GROUPS).max(1);
    let ds_chunk = if want_bias { hll } else { 1 };
    let mut ds_part = zeros(b.div_ceil(group) * ds_chunk);
    // One batch element: its chunks of dQ, dK, dV and the group's partial bias gradient.
    let one = |bi: usize, dqc: &mut [F], dkc: &mut [F], dvc: &mut [F], dsc: &mut [F]| {
        let mut ds = vec![F::ZERO; ll];
        let mut vt = vec![F::ZERO; dh * l];
        let mut tr = vec![F::ZERO; dh * l];
        let mut dropped = vec![F::ZERO; if keep.is_some() { ll } else { 0 }];
        for hi in 0..h {
            let off = bi * l * d + hi * dh;
            let pr = &pv[(bi * h + hi) * ll..][..ll];
            // This head's weights start at this bit of the keep-mask.
            let base = (bi * h + hi) * ll;
            let pd: &[F] = match keep {
                Some(keep) => {
                    for ((x, &y), kp) in dropped.iter_mut().zip(pr).zip(keep.flags(base, ll)) {
                        *x = if kp { y * kd } else { F::ZERO };
                    }
                    &dropped
                }
                None => pr,
            };
            transpose(&vv[off..], l, dh, d, &mut vt);
            // dPd = dO Vᵀ  (l × dh · dh × l)
            F::gemm_rows((l, dh, l), &g[off..], (d, 1), &vt, l, F::ZERO, &mut ds, l);
            // dVᵀ = dOᵀ Pd  (dh × l · l × l), added transposed into dV below
            F::gemm_rows((dh, l, l), &g[off..], (1, d), pd, l, F::ZERO, &mut tr, l);
            add_transposed(&tr, dh, l, &mut dvc[hi * dh..], d);
            for (i, dsi) in ds.chunks_mut(l).enumerate() {
                let pi = &pr[i * l..(i + 1) * l];
                if let Some(keep) = keep {
                    for (x, kp) in dsi.iter_mut().zip(keep.flags(base + i * l, l)) {
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
            // dQ += dC K  (l × l · l × dh)
            F::gemm_rows(
                (l, l, dh),
                &ds,
                (l, 1),
                &kv[off..],
                d,
                F::ONE,
                &mut dqc[hi * dh..],
                d,
            );
            // dKᵀ = Qᵀ dC  (dh × l · l × l), added transposed into dK below
            F::gemm_rows((dh, l, l), &qv[off..], (1, d), &ds, l, F::ZERO, &mut tr, l);
            add_transposed(&tr, dh, l, &mut dkc[hi * dh..], d);
        }
    };
    type Chunk<'a, F> = (
        usize,
        (((&'a mut [F], &'a mut [F]), &'a mut [F]), &'a mut [F]),
    );
    let body = |(gi, (((dqc, dkc), dvc), dsc)): Chunk<'_, F>| {
        let ld = l * d;
        for (j, bi) in (gi * group..b.min((gi + 1) * group)).enumerate() {
            let r = j * ld..(j + 1) * ld;
            one(
                bi,
                &mut dqc[r.clone()],
                &mut dkc[r.clone()],
                &mut dvc[r],
                dsc,
            );
        }
    };
    let gld = group * l * d;
    if b * hll * dh < 1 << 16 {
        dq.chunks_mut(gld)
            .zip(dk.chunks_mut(gld))
            .zip(dv.chunks_mut(gld))
            .zip(ds_part.chunks_mut(ds_chunk))
            .enumerate()
            .for_each(body);
    } else {
        dq.par_chunks_mut(gld)
            .zip(dk.par_chunks_mut(gld))
            .zip(dv.par_chunks_mut(gld))
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
        // Add the groups' partial sums in group order, in fixed chunks of the [H, L, L] grid.
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
