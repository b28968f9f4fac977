//! The paper's probabilistic reading as an API: per head, the prior `softmax_j(b(j - i))`, the
//! context scores, and the final attention, which is the posterior prior × likelihood / Z.
use super::model::{Batch, ForwardOpts, Model};
use crate::autodiff::Tape;
use crate::float::Float;
use crate::params::ParamStore;
use crate::position::PerHead;
use crate::tensor::Tensor;

/// One layer's view of one batch; every tensor is `[B, H, L, L]` (query i, key j).
#[derive(Clone, Debug)]
pub struct LayerView {
    /// `softmax_j(b_h(j - i))` over the sequence's real keys: where the head looks a priori.
    pub prior: Tensor<f64>,
    /// `ln prior`, computed as a log-softmax so KL stays finite where the prior underflows.
    pub log_prior: Tensor<f64>,
    /// `q_i·k_j / sqrt(d_head)`: the log-likelihood up to a per-row constant.
    pub context: Tensor<f64>,
    /// The attention the model used, `softmax_j(context + bias)` over real keys.
    pub posterior: Tensor<f64>,
}

impl<F: Float> Model<F> {
    /// Runs `batch` on an evaluation tape and returns each layer's prior, context and posterior.
    /// `bias_heads` turns off the bias of chosen heads, as in [`ForwardOpts`].
    pub fn inspect(
        &self,
        store: &ParamStore<F>,
        batch: &Batch,
        bias_heads: Option<Vec<bool>>,
    ) -> Result<Vec<LayerView>, String> {
        self.check_batch(batch)?;
        let mut tape = Tape::<F>::eval();
        let p = store.bind(&mut tape);
        let opts = ForwardOpts {
            whole_graph: true,
            seed: 0,
            bias_heads,
        };
        let fwd = self.forward(&mut tape, &p, batch, &opts);
        let (b, l, h) = (batch.b, batch.l, self.config.heads);
        let mask = super::key_mask::<F>(&batch.pad, b, l);
        let mut views = Vec::with_capacity(fwd.traces.len());
        for (trace, bias) in fwd.traces.iter().zip(&fwd.biases) {
            let zeros = tape.constant(Tensor::zeros(&[b, h, l, l]));
            let logits = match bias {
                Some(bias) => tape.add(zeros, *bias),
                None => zeros,
            };
            let logits = tape.add_mask(logits, &mask);
            let prior = tape.softmax(logits);
            let log_prior = tape.log_softmax(logits);
            views.push(LayerView {
                prior: tape.value(prior).cast(),
                log_prior: tape.value(log_prior).cast(),
                context: tape.value(trace.context).cast(),
                posterior: tape.value(trace.probs).cast(),
            });
        }
        Ok(views)
    }

    /// The prior of query `query` over keys `0..len` of an unpadded length-`len` sequence, per
    /// head (`[H][len]`), from the first bias the model applies. Uniform for biasless families.
    pub fn prior_row(&self, store: &ParamStore<F>, len: usize, query: usize) -> Vec<Vec<f64>> {
        assert!(
            query < len,
            "prior_row: query {query} outside a length-{len} sequence"
        );
        let h = self.config.heads;
        let mut tape = Tape::<F>::eval();
        let p = store.bind(&mut tape);
        let Some(grid) = self.biases[0].grid(&mut tape, &p, len, len, 0) else {
            return vec![vec![1.0 / len as f64; len]; h];
        };
        let prior = tape.softmax(grid);
        let v = tape.value(prior);
        (0..h)
            .map(|hh| {
                if self.config.unbiased_heads.contains(&hh) {
                    return vec![1.0 / len as f64; len];
                }
                let at = (hh * len + query) * len;
                v.data[at..at + len].iter().map(|x| x.to_f64()).collect()
            })
            .collect()
    }

    /// The bucket of each offset in `offsets`, for a family that buckets offsets (T5;
    /// [`crate::position::PositionBias::bucket_of`]); `None` for any other.
    pub fn buckets(&self, offsets: impl IntoIterator<Item = i64>) -> Option<Vec<usize>> {
        offsets
            .into_iter()
            .map(|n| self.biases[0].bucket_of(n))
            .collect()
    }

    /// The first biased layer's family's own numbers per head ([`crate::position::PositionBias::per_head`]).
    pub fn per_head(&self, store: &ParamStore<F>) -> PerHead {
        self.biases[0].per_head(store)
    }
}

/// KL(p ‖ q) of two distributions over the same support; terms with p = 0 contribute 0.
pub fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    assert_eq!(
        p.len(),
        q.len(),
        "kl_divergence: lengths {} and {}",
        p.len(),
        q.len()
    );
    p.iter()
        .zip(q)
        .filter(|(pi, _)| **pi > 0.0)
        .map(|(pi, qi)| pi * (pi / qi).ln())
        .sum()
}

/// Per head, KL(posterior ‖ prior) averaged over the real queries of every sequence.
/// `pad` is the batch's `[B·L]` padding flags; padding keys carry zero mass in both.
pub fn mean_kl(view: &LayerView, pad: &[bool]) -> Vec<f64> {
    let s = &view.prior.shape;
    let (b, h, l) = (s[0], s[1], s[2]);
    (0..h)
        .map(|hh| {
            let (mut total, mut n) = (0.0, 0usize);
            for bb in 0..b {
                for i in (0..l).filter(|&i| !pad[bb * l + i]) {
                    let at = ((bb * h + hh) * l + i) * l;
                    let row = at..at + l;
                    let post = &view.posterior.data[row.clone()];
                    total += post
                        .iter()
                        .zip(&view.log_prior.data[row])
                        .filter(|(p, _)| **p > 0.0)
                        .map(|(p, lq)| p * (p.ln() - lq))
                        .sum::<f64>();
                    n += 1;
                }
            }
            total / n.max(1) as f64
        })
        .collect()
}

/// The prior's mass radius: the mode `m` of `row` and the smallest `r` such that the window of
/// keys `m - r ..= m + r` (clipped to the row) holds at least `mass` of the distribution.
pub fn mass_radius(row: &[f64], mass: f64) -> (usize, usize) {
    assert!(!row.is_empty(), "mass_radius: empty row");
    let mode = (0..row.len())
        .max_by(|&a, &b| row[a].total_cmp(&row[b]).then(b.cmp(&a)))
        .unwrap();
    let total: f64 = row.iter().sum();
    let mut held = row[mode];
    let mut r = 0;
    while held < mass * total - 1e-12 && r < row.len() {
        r += 1;
        if mode >= r {
            held += row[mode - r];
        }
        if mode + r < row.len() {
            held += row[mode + r];
        }
    }
    (mode, r)
}
