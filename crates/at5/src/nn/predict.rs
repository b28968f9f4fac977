//! The forward-only path of an evaluation: the model's output without recording a graph.
//!
//! An evaluation tape records no backward, but it still holds every intermediate value until
//! it is cleared: at a 256-sequence batch of Process-50 a dozen `[B·L, D]` and `[B·L, ffn]`
//! buffers, each a fresh allocation the kernel must zero. Here the input stage and every whole
//! block run on plain tensors ([`crate::autodiff::forward`], the functions the tape's ops call
//! themselves, so each value is the tape's bit for bit): a buffer is freed, or summed into in
//! place, as soon as nothing reads it, the attention keeps neither scores nor probabilities,
//! and the FFN's GELU is applied in the pass that adds its bias. What remains — a last block
//! pruned to its pooled row, the pooling and the output layer, all `O(B·L·D)` — runs on a small
//! evaluation tape whose input is the last whole block's output, moved in, not copied.
use super::attention::key_mask;
use super::encoder::BlockDropout;
use super::mix_seed;
use super::model::{Batch, BatchInput, ForwardOpts, Model};
use crate::autodiff::{Tape, forward};
use crate::float::Float;
use crate::params::ParamStore;
use crate::tensor::Tensor;

impl<F: Float> Model<F> {
    /// The output of [`Model::forward`] on an evaluation tape (no dropout), `[B, C]` logits or
    /// `[B]` predictions, bit for bit, computed without recording the graph: the path
    /// [`crate::train::evaluate`] takes. `opts`' head ablation and graph choice apply as there.
    /// Call [`Model::check_batch`] first on untrusted batches.
    pub fn predict(&self, store: &ParamStore<F>, batch: &Batch, opts: &ForwardOpts) -> Tensor<F> {
        let (b, l, d) = (batch.b, batch.l, self.config.d_model);
        let mut x = match (&batch.input, &self.input_embed, &self.input_proj) {
            (BatchInput::Tokens(ids), Some(emb), _) => emb.apply(store, ids, b, l),
            (BatchInput::Features(v), _, Some(proj)) => {
                let dim = v.len() / (b * l);
                let data = v.iter().map(|&x| F::from_f64(x)).collect();
                proj.apply(store, &Tensor::from_vec(&[b, l, dim], data), false)
            }
            _ => panic!("predict: batch input kind does not match the model (use check_batch)"),
        };
        if let Some(enc) = self.biases[0].input_encoding(l, d) {
            forward::add_assign(&mut x, &enc);
        }
        if let Some(norm) = &self.input_norm {
            x = norm.apply(store, &x);
        }
        let mask = key_mask::<F>(&batch.pad, b, l);
        let row = self.pooled_row(l, opts);
        // The bias grids are O(H·L²) and their families' code is tape code: they are made on
        // the small tape, whose values the whole blocks then read.
        let mut tape = Tape::eval();
        let p = store.bind(&mut tape);
        let biases = self.block_biases(&mut tape, &p, l, opts, row);
        let last = self.blocks.len() - 1;
        let whole = if row.is_some() { last } else { last + 1 };
        for (block, bias) in self.blocks.iter().zip(&biases).take(whole) {
            x = block.apply(store, x, bias.map(|v| tape.value(v)), &mask);
        }
        let mut x = tape.constant(x);
        if let Some(at) = row {
            let drop = BlockDropout {
                hidden: self.config.dropout.hidden,
                attention: self.config.dropout.attention,
                seed: mix_seed(opts.seed, 10 + last as u64),
            };
            x = self.blocks[last]
                .forward(&mut tape, &p, x, Some(at), biases[last], &mask, drop)
                .0;
        }
        let out = self.head(&mut tape, &p, x, batch, opts);
        tape.value(out).clone()
    }
}
