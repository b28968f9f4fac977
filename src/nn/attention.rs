//! Multi-head self-attention with an additive position bias `[H, L, L]` and a key padding mask.
use super::layers::Linear;
use crate::autodiff::{Tape, Var};
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

    /// Self-attention of the rows `q0..q0 + Lq` of `x [B, L, D]`, whose inputs are `xq
    /// [B, Lq, D]` (`xq = x`, `q0 = 0` for every row), → `[B, Lq, D]`. Keys and values are
    /// every row of `x`. `bias` is `[H, Lq, L]` (shared by the batch); `key_mask` is
    /// `[B, 1, 1, L]` holding 0 for real keys and -inf for padding, so padding gets exactly zero
    /// weight whatever the bias (a finite -1e4 adder can be overpowered by a learned bias).
    #[allow(clippy::too_many_arguments)]
    pub fn forward<F: Float>(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        (x, xq, q0): (Var, Var, usize),
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        dropout: f64,
        seed: u64,
    ) -> (Var, AttentionTrace) {
        let shape = tape.shape(x).to_vec();
        let (b, l, d) = (shape[0], shape[1], shape[2]);
        let lq = tape.shape(xq)[1];
        let (h, dh) = (self.heads, d / self.heads);
        let fused =
            bias.is_none_or(|v| tape.shape(v) == [h, lq, l]) && key_mask.shape == [b, 1, 1, l];
        if fused {
            let (q, k, v) = (
                self.q.forward(tape, p, xq),
                self.k.forward(tape, p, x),
                self.v.forward(tape, p, x),
            );
            let a = tape.attention(q, k, v, h, q0, bias, key_mask, dropout, seed);
            let out = self.o.forward(tape, p, a.out);
            let trace = AttentionTrace {
                context: a.context,
                probs: a.probs,
            };
            return (out, trace);
        }
        assert!(
            lq == l && q0 == 0,
            "attention: a subset of query rows needs a bias [{h}, {lq}, {l}] and a key mask [{b}, 1, 1, {l}]"
        );
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
