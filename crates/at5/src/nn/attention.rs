//! Multi-head self-attention with an additive position bias `[H, L, L]` and a key padding mask.
use super::layers::Linear;
use crate::autodiff::forward::{self, AttentionKeeps};
use crate::autodiff::{MaskRows, Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;

/// The vars of one attention call that the probabilistic view reads back. With the fused op
/// both are constants: read their values; gradients flow through the output.
#[derive(Clone, Copy, Debug)]
pub struct AttentionTrace {
    /// Content scores `q·k / sqrt(d_head)`, `[B, H, L, L]` (before bias and mask); with the
    /// fused op, kept on evaluation tapes only (an empty `[0]` tensor on a training tape).
    pub context: Var,
    /// Final attention (the posterior), `[B, H, L, L]`, before attention dropout.
    pub probs: Var,
}

#[derive(Clone, Debug)]
/// Multi-head self-attention with an additive position bias.
pub struct Attention {
    /// Query projection `[D, D]`.
    pub q: Linear,
    /// Key projection `[D, D]`.
    pub k: Linear,
    /// Value projection `[D, D]`.
    pub v: Linear,
    /// Output projection `[D, D]`.
    pub o: Linear,
    /// Number of heads H.
    pub heads: usize,
}

impl Attention {
    /// Registers the four projections under `{name}.q`, `.k`, `.v`, `.o`.
    pub fn new<F: Float>(
        store: &mut ParamStore<F>,
        name: &str,
        d: usize,
        heads: usize,
        rng: &mut StdRng,
    ) -> Attention {
        Attention {
            q: Linear::new(store, &format!("{name}.q"), d, d, rng),
            k: Linear::new(store, &format!("{name}.k"), d, d, rng),
            v: Linear::new(store, &format!("{name}.v"), d, d, rng),
            o: Linear::new(store, &format!("{name}.o"), d, d, rng),
            heads,
        }
    }

    /// x `[B, L, D]` → `[B, L, D]`. `bias` is `[H, L, L]` (shared by the batch); `key_mask` is
    /// `[B, 1, 1, L]` holding 0 for real keys and -inf for padding, so padding gets exactly zero
    /// weight whatever the bias (a finite -1e4 adder can be overpowered by a learned bias).
    #[allow(clippy::too_many_arguments)]
    pub fn forward<F: Float>(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        x: Var,
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        dropout: f64,
        seed: u64,
    ) -> (Var, AttentionTrace) {
        let shape = tape.shape(x).to_vec();
        let (b, l, d) = (shape[0], shape[1], shape[2]);
        let (h, dh) = (self.heads, d / self.heads);
        let fused =
            bias.is_none_or(|v| tape.shape(v) == [h, l, l]) && key_mask.shape == [b, 1, 1, l];
        if fused {
            let (q, k, v) = (
                self.q.forward(tape, p, x),
                self.k.forward(tape, p, x),
                self.v.forward(tape, p, x),
            );
            let a = tape.attention(q, k, v, h, bias, key_mask, dropout, seed);
            let out = self.o.forward(tape, p, a.out);
            let trace = AttentionTrace {
                context: a.context,
                probs: a.probs,
            };
            return (out, trace);
        }
        // The composed form, for bias or mask shapes the fused op does not take.
        let split = |tape: &mut Tape<F>, lin: &Linear| {
            let y = lin.forward(tape, p, x);
            let y = tape.reshape(y, &[b, l, h, dh]);
            tape.permute(y, &[0, 2, 1, 3]) // (B, H, L, dh)
        };
        let (q, k, v) = (
            split(tape, &self.q),
            split(tape, &self.k),
            split(tape, &self.v),
        );
        let qk = tape.matmul_t(q, k, false, true); // (B, H, L, L)
        let context = tape.scale(qk, 1.0 / (dh as f64).sqrt());
        let mut scores = context;
        if let Some(bias) = bias {
            scores = tape.add(scores, bias);
        }
        let scores = tape.add_mask(scores, key_mask);
        let probs = tape.softmax(scores);
        let dropped = tape.dropout(probs, dropout, seed);
        let ctx = tape.matmul(dropped, v); // (B, H, L, dh)
        let ctx = tape.permute(ctx, &[0, 2, 1, 3]);
        let ctx = tape.reshape(ctx, &[b, l, d]);
        let out = self.o.forward(tape, p, ctx);
        (out, AttentionTrace { context, probs })
    }
    /// [`Attention::forward`] of a whole block without a tape and without dropout (an
    /// evaluation): the tape's output bit for bit, keeping neither the scores nor the
    /// probabilities. `bias` is `[H, L, L]`.
    pub fn apply<F: Float>(
        &self,
        store: &ParamStore<F>,
        x: &Tensor<F>,
        bias: Option<&Tensor<F>>,
        key_mask: &Tensor<F>,
    ) -> Tensor<F> {
        let (q, k, v) = (
            self.q.apply(store, x, false),
            self.k.apply(store, x, false),
            self.v.apply(store, x, false),
        );
        let keeps = AttentionKeeps {
            context: false,
            probs: false,
        };
        let (a, _, _) = forward::attention((&q, &k, &v), self.heads, bias, key_mask, None, keeps);
        drop((q, k, v));
        self.o.apply(store, &a, false)
    }

    /// Attention of the one query row `at` of `x [B, L, D]`, whose input is `xq [B, 1, D]`,
    /// → `[B, 1, D]`, without projecting the keys and values of every position.
    ///
    /// For head h, `q·(W_k x_j + b_k) = (W_kᵀ q)·x_j + q·b_k` and
    /// `Σ_j p_j (W_v x_j + b_v) = W_v (Σ_j p_j x_j) + b_v Σ_j p_j`: folding the projections
    /// into the query and the weighted sum costs O(B·H·L·D) instead of the O(B·L·D²) of K and
    /// V over every position, and computes the same function (the same values up to summation
    /// order, the same gradients, b_k's included). `bias` is `[H, 1, L]`; the attention
    /// dropout mask is the one the whole `[B, H, L, L]` grid draws for row `at`.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_row<F: Float>(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        (x, xq, at): (Var, Var, usize),
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        dropout: f64,
        seed: u64,
    ) -> (Var, AttentionTrace) {
        let shape = tape.shape(x).to_vec();
        let (b, l, d) = (shape[0], shape[1], shape[2]);
        let (h, dh) = (self.heads, d / self.heads);
        // A projection's weight [D, D] as per-head blocks [H, D, dh], its bias as [H, dh].
        let per_head = |tape: &mut Tape<F>, lin: &Linear| {
            let w = tape.reshape(p.var(lin.w), &[d, h, dh]);
            let w = tape.permute(w, &[1, 0, 2]);
            (w, tape.reshape(p.var(lin.b), &[h, dh]))
        };
        let q = self.q.forward(tape, p, xq);
        let q = tape.reshape(q, &[b, h, dh]);
        let (wk, bk) = per_head(tape, &self.k);
        let qt = tape.permute(q, &[1, 2, 0]); // (H, dh, B)
        let qk = tape.matmul(wk, qt); // W_k,h q_h: (H, D, B)
        let qk = tape.permute(qk, &[2, 0, 1]); // (B, H, D)
        let content = tape.matmul_t(qk, x, false, true); // (B, H, L)
        let qb = tape.mul(q, bk);
        let qb = tape.sum_axis(qb, 2, true); // q_h·b_k,h: (B, H, 1), the same for every key
        let content = tape.add(content, qb);
        let content = tape.scale(content, 1.0 / (dh as f64).sqrt());
        let context = tape.reshape(content, &[b, h, 1, l]);
        let mut scores = context;
        if let Some(bias) = bias {
            scores = tape.add(scores, bias);
        }
        let scores = tape.add_mask(scores, key_mask);
        let probs = tape.softmax(scores);
        let rows = MaskRows { full: l, first: at };
        let dropped = tape.dropout_window(probs, dropout, seed, Some(rows));
        let pd = tape.reshape(dropped, &[b, h, l]);
        let xbar = tape.matmul(pd, x); // Σ_j p_hj x_j: (B, H, D)
        let xbar = tape.permute(xbar, &[1, 0, 2]); // (H, B, D)
        let (wv, bv) = per_head(tape, &self.v);
        let ctx = tape.matmul(xbar, wv); // (H, B, dh)
        let ctx = tape.permute(ctx, &[1, 0, 2]); // (B, H, dh)
        let mass = tape.sum_axis(pd, 2, true); // Σ_j p_hj: 1 unless dropout removed some
        let vb = tape.mul(mass, bv);
        let ctx = tape.add(ctx, vb);
        let ctx = tape.reshape(ctx, &[b, 1, d]);
        let out = self.o.forward(tape, p, ctx);
        (out, AttentionTrace { context, probs })
    }
}

/// `[B, 1, 1, L]`: 0 where a key is real, -inf where it is padding.
pub fn key_mask<F: Float>(pad: &[bool], b: usize, l: usize) -> Tensor<F> {
    assert_eq!(
        pad.len(),
        b * l,
        "key_mask: {} flags for a {b}x{l} batch",
        pad.len()
    );
    let data = pad
        .iter()
        .map(|&is_pad| if is_pad { F::NEG_INFINITY } else { F::ZERO })
        .collect();
    Tensor::from_vec(&[b, 1, 1, l], data)
}
