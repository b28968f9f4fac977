//! The post-LN (BERT-style) encoder block and a stack of them.
use super::attention::{Attention, AttentionTrace};
use super::layers::{LayerNorm, Linear};
use crate::autodiff::{MaskRows, Tape, Var, forward};
use crate::float::Float;
use crate::params::{Bound, ParamStore};
use crate::tensor::Tensor;
use rand::rngs::StdRng;

/// attention → dropout → residual → LayerNorm; GELU FFN → dropout → residual → LayerNorm.
#[derive(Clone, Debug)]
pub struct Block {
    /// Self-attention.
    pub attn: Attention,
    /// LayerNorm after the attention residual.
    pub ln1: LayerNorm,
    /// Feed-forward input projection `D → ffn`.
    pub ffn_in: Linear,
    /// Feed-forward output projection `ffn → D`.
    pub ffn_out: Linear,
    /// LayerNorm after the feed-forward residual.
    pub ln2: LayerNorm,
}

/// Dropout rates and the seed of one block's masks.
#[derive(Clone, Copy, Debug)]
pub struct BlockDropout {
    /// Dropout after attention and after the feed-forward block.
    pub hidden: f64,
    /// Dropout on the attention probabilities.
    pub attention: f64,
    /// Seed of this forward's dropout masks.
    pub seed: u64,
}

impl Block {
    /// Registers the block's parameters under `{name}.*`.
    pub fn new<F: Float>(
        store: &mut ParamStore<F>,
        name: &str,
        d: usize,
        heads: usize,
        ffn: usize,
        rng: &mut StdRng,
    ) -> Block {
        Block {
            attn: Attention::new(store, &format!("{name}.attn"), d, heads, rng),
            ln1: LayerNorm::new(store, &format!("{name}.ln1"), d),
            ffn_in: Linear::new(store, &format!("{name}.ffn.in"), d, ffn, rng),
            ffn_out: Linear::new(store, &format!("{name}.ffn.out"), ffn, d, rng),
            ln2: LayerNorm::new(store, &format!("{name}.ln2"), d),
        }
    }

    /// x `[B, L, D]` → `[B, L, D]`, or with `Some(at)` the row `at` alone → `[B, 1, D]`: that
    /// row's query still attends over every row (see [`Attention::forward_row`]), but the output
    /// projection, both LayerNorms and the FFN run on that row only — exact when nothing else
    /// reads the block's other rows, as with last or first pooling in the last block. Its
    /// dropout masks are the ones the whole block draws for that row. `bias` is `[H, L, L]`, or
    /// `[H, 1, L]` for a row.
    #[allow(clippy::too_many_arguments)]
    pub fn forward<F: Float>(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        x: Var,
        row: Option<usize>,
        bias: Option<Var>,
        key_mask: &Tensor<F>,
        drop: BlockDropout,
    ) -> (Var, AttentionTrace) {
        let s = |k: u64| super::mix_seed(drop.seed, k);
        let l = tape.shape(x)[1];
        let (xq, window) = match row {
            None => (x, None),
            Some(at) => (
                tape.slice(x, 1, at, at + 1),
                Some(MaskRows { full: l, first: at }),
            ),
        };
        let (a, trace) = match row {
            None => self
                .attn
                .forward(tape, p, x, bias, key_mask, drop.attention, s(0)),
            Some(at) => {
                self.attn
                    .forward_row(tape, p, (x, xq, at), bias, key_mask, drop.attention, s(0))
            }
        };
        let a = tape.dropout_window(a, drop.hidden, s(1), window);
        let x = tape.add(xq, a);
        let x = self.ln1.forward(tape, p, x);
        let f = self.ffn_in.forward(tape, p, x);
        let f = tape.gelu(f);
        let f = self.ffn_out.forward(tape, p, f);
        let f = tape.dropout_window(f, drop.hidden, s(2), window);
        let y = tape.add(x, f);
        (self.ln2.forward(tape, p, y), trace)
    }

    /// [`Block::forward`] of the whole block without a tape and without dropout (an
    /// evaluation): the tape's output bit for bit. Each buffer is freed, or written over, as
    /// soon as nothing reads it: the residual sums are made in place.
    pub fn apply<F: Float>(
        &self,
        store: &ParamStore<F>,
        x: Tensor<F>,
        bias: Option<&Tensor<F>>,
        key_mask: &Tensor<F>,
    ) -> Tensor<F> {
        let mut a = self.attn.apply(store, &x, bias, key_mask);
        forward::add_assign(&mut a, &x); // x + a
        drop(x);
        let x = self.ln1.apply(store, &a);
        drop(a);
        let f = self.ffn_in.apply(store, &x, true); // GELU in the same pass
        let mut f = self.ffn_out.apply(store, &f, false);
        forward::add_assign(&mut f, &x); // x + f
        self.ln2.apply(store, &f)
    }
}
