//! The whole model: inputs → (position encoding) → encoder with a relative bias → pooling → head.
use super::attention::{AttentionTrace, key_mask};
use super::encoder::{Block, BlockDropout};
use super::layers::{Embedding, LayerNorm, Linear};
use super::mix_seed;
use crate::autodiff::{Tape, Var};
use crate::float::Float;
use crate::params::{Bound, ParamStore};
use crate::position::{self, BiasConfig, PositionBias};
use crate::tensor::Tensor;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

/// What the model reads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum InputKind {
    /// Token ids below `vocab`; id 0 is padding.
    Tokens {
        /// Number of token ids, padding included.
        vocab: usize,
    },
    /// Real-valued feature vectors of width `dim` (the adding problem's `(value, marker)`),
    /// read through a Linear with no embedding LayerNorm, as in the paper's code.
    Features {
        /// Width of each position's feature vector.
        dim: usize,
    },
}

/// What the model predicts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum OutputKind {
    /// `n` classes, cross-entropy.
    Classes(usize),
    /// One real number, mean squared error.
    Regression,
}

/// Which layers receive the relative bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BiasScope {
    /// One grid computed per forward and added in every layer (HF T5).
    Shared,
    /// One grid, added in the first layer only (the paper's code).
    FirstLayer,
    /// Each layer has its own bias parameters.
    PerLayer,
}

/// Dropout rates (the paper's three: attention probabilities, hidden, input).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dropouts {
    /// Dropout on the input embeddings.
    pub input: f64,
    /// Dropout after attention and the feed-forward block.
    pub hidden: f64,
    /// Dropout on the attention probabilities.
    pub attention: f64,
}

impl Dropouts {
    /// No dropout anywhere.
    pub const NONE: Dropouts = Dropouts {
        input: 0.0,
        hidden: 0.0,
        attention: 0.0,
    };
}

/// What happens to the pooled vector before the output layer: dropout, then LayerNorm. The
/// original code uses the input-dropout rate there, and on the adding problem neither; the
/// paper preset follows it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PooledHead {
    /// Dropout rate on the pooled vector; `None`: the hidden rate.
    pub dropout: Option<f64>,
    /// Whether a LayerNorm follows.
    pub norm: bool,
    /// How the output layer starts; left out of records when it is BERT's (and so absent in
    /// every record written before the option).
    #[serde(default, skip_serializing_if = "OutputInit::is_bert")]
    pub init: OutputInit,
}

impl Default for PooledHead {
    /// Hidden-rate dropout and a LayerNorm: what records written before this option ran.
    fn default() -> Self {
        PooledHead {
            dropout: None,
            norm: true,
            init: OutputInit::Bert,
        }
    }
}

/// How the output layer's weights and bias start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutputInit {
    /// Truncated N(0, 0.02²) weights, zero bias: every other Linear of the model.
    #[default]
    Bert,
    /// Glorot-uniform weights and a bias of 0.1, as the paper's code starts its classifier.
    /// Its weights are about 4× BERT's at D = 256, and so is the gradient reaching everything
    /// below the head at the first steps.
    Glorot,
}

impl OutputInit {
    /// The default, which records leave out.
    pub fn is_bert(&self) -> bool {
        *self == OutputInit::Bert
    }

    /// The flag's name for it (`--head-init`).
    pub fn name(&self) -> &'static str {
        match self {
            OutputInit::Bert => "bert",
            OutputInit::Glorot => "glorot",
        }
    }

    /// The init called `name`.
    pub fn from_name(name: &str) -> Result<OutputInit, String> {
        match name {
            "bert" => Ok(OutputInit::Bert),
            "glorot" => Ok(OutputInit::Glorot),
            other => Err(format!(
                "unknown output init `{other}`; expected bert or glorot"
            )),
        }
    }
}

/// Which slot of the padded sequence feeds the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pooling {
    /// Slot `max_len - 1` of the right-padded sequence (not the last real token).
    Last,
    /// True mean over the non-padding slots.
    Mean,
    /// Slot 0.
    First,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// Everything that defines a model's shape; stored in checkpoints and run records.
pub struct ModelConfig {
    /// What the model reads.
    pub input: InputKind,
    /// What the model predicts.
    pub output: OutputKind,
    /// Model width D.
    pub d_model: usize,
    /// Attention heads H.
    pub heads: usize,
    /// Feed-forward width.
    pub ffn: usize,
    /// Encoder layers.
    pub layers: usize,
    /// The training length L (AT5 divides its slopes by it; tables cover offsets up to it).
    pub max_len: usize,
    /// The position-bias family and its options.
    pub bias: BiasConfig,
    /// Which layers receive the bias.
    pub bias_scope: BiasScope,
    /// How the encoder's outputs become one vector per sequence.
    pub pooling: Pooling,
    /// Dropout rates.
    pub dropout: Dropouts,
    /// The pooled vector's dropout and LayerNorm (absent in older records: the default).
    #[serde(default)]
    pub head: PooledHead,
    /// Heads that get no position bias, in training and evaluation alike (the paper's code
    /// masks the bias to the heads it lists, so with 8 heads its heads 6 and 7 have none).
    /// Left out of records when empty, and so absent in every record written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unbiased_heads: Vec<usize>,
}

impl ModelConfig {
    /// FLOPs of one whole-graph forward's matrix products (2·m·n·k each) on `batch` sequences
    /// of `len` positions: per layer the q, k, v and o projections, the two feed-forward
    /// products, q·kᵀ and probs·v; the feature embedding and the output layer. Elementwise ops,
    /// softmax and the bias are left out; a training step costs about 3× this.
    pub fn forward_matmul_flops(&self, batch: usize, len: usize) -> f64 {
        let (b, l) = (batch as f64, len as f64);
        let (d, h, f) = (self.d_model as f64, self.heads as f64, self.ffn as f64);
        let rows = b * l;
        let per_layer = 2.0 * rows * d * (4.0 * d) // q, k, v, o
            + 2.0 * 2.0 * rows * d * f // the two feed-forward products
            + 2.0 * 2.0 * b * h * l * l * (d / h); // q·kᵀ and probs·v
        let embed = match self.input {
            InputKind::Features { dim } => 2.0 * rows * dim as f64 * d,
            InputKind::Tokens { .. } => 0.0, // a gather
        };
        let outputs = match self.output {
            OutputKind::Classes(n) => n as f64,
            OutputKind::Regression => 1.0,
        };
        embed + self.layers as f64 * per_layer + 2.0 * b * d * outputs
    }

    /// Impossible settings as one line naming the option.
    pub fn validate(&self) -> Result<(), String> {
        if self.heads == 0 {
            return Err("heads must be at least 1".into());
        }
        if self.d_model == 0 || !self.d_model.is_multiple_of(self.heads) {
            return Err(format!(
                "d-model {} is not a positive multiple of heads {}",
                self.d_model, self.heads
            ));
        }
        if self.ffn == 0 {
            return Err("ffn must be at least 1".into());
        }
        if self.layers == 0 {
            return Err("layers must be at least 1".into());
        }
        if self.max_len < 2 {
            return Err(format!("seq-len must be at least 2, got {}", self.max_len));
        }
        match self.input {
            InputKind::Tokens { vocab } if vocab < 2 => {
                return Err(format!("vocab must be at least 2, got {vocab}"));
            }
            InputKind::Features { dim: 0 } => return Err("feature width must be at least 1".into()),
            _ => {}
        }
        if let OutputKind::Classes(n) = self.output
            && n < 2
        {
            return Err(format!("a classifier needs at least 2 classes, got {n}"));
        }
        if let Some(&h) = self.unbiased_heads.iter().find(|&&h| h >= self.heads) {
            return Err(format!(
                "unbiased-heads: head {h} does not exist (heads are 0 to {})",
                self.heads - 1
            ));
        }
        let d = self.dropout;
        for (name, p) in [
            ("input", d.input),
            ("hidden", d.hidden),
            ("attention", d.attention),
            ("pooled", self.head.dropout.unwrap_or(0.0)),
        ] {
            if !(0.0..1.0).contains(&p) {
                return Err(format!("{name} dropout must be in [0, 1), got {p}"));
            }
        }
        Ok(())
    }
}

/// One padded batch: `b` sequences right-padded to `l`.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Sequences in the batch, B.
    pub b: usize,
    /// Padded length, L.
    pub l: usize,
    /// The inputs, flattened row-major.
    pub input: BatchInput,
    /// `[B·L]`, true at padding slots.
    pub pad: Vec<bool>,
}

#[derive(Clone, Debug)]
/// A batch's inputs, flattened over `[B, L]`.
pub enum BatchInput {
    /// `[B·L]` token ids (padding slots hold 0).
    Tokens(Vec<usize>),
    /// `[B·L·dim]` features (padding slots hold zeros).
    Features(Vec<f64>),
}

/// Per-forward options.
#[derive(Clone, Debug, Default)]
pub struct ForwardOpts {
    /// Seed of this step's dropout masks (ignored on evaluation tapes).
    pub seed: u64,
    /// `Some(keep)`: heads with `keep[h] == false` get no position bias (the head-prior ablation).
    pub bias_heads: Option<Vec<bool>>,
    /// Compute every row of every block. By default, with last or first pooling, the last block
    /// computes only the pooled row (the only one that reaches the output; same values and
    /// gradients up to summation order); this flag turns that off, for comparison and for
    /// views that read every row's attention.
    pub whole_graph: bool,
}

/// The model's output vars and the per-layer attention traces.
#[derive(Clone, Debug)]
pub struct Forward {
    /// `[B, C]` logits, or `[B]` predictions for regression.
    pub output: Var,
    /// The bias grid each layer received (`None` where it received none), `[H, L, L]`; for a
    /// last block pruned to the pooled row, that row, `[H, 1, L]`.
    pub biases: Vec<Option<Var>>,
    /// Per layer, the content scores and attention probabilities the probabilistic view reads
    /// (`[B, H, 1, L]` for a pruned last block; [`Model::inspect`] runs the whole graph).
    pub traces: Vec<AttentionTrace>,
}

/// The encoder: input embedding, optional absolute encoding, encoder blocks with a relative
/// position bias, pooling and an output head. Parameters live in a [`ParamStore`].
///
/// A forward and backward on a batch of two sequences, then the probabilistic view of the same
/// batch: each attention row is the prior times `exp(context)`, renormalised.
///
/// ```
/// use at5::nn::{Batch, BatchInput, BiasScope, Dropouts, ForwardOpts, InputKind, Model};
/// use at5::nn::{ModelConfig, OutputKind, PooledHead, Pooling, Targets};
/// use at5::position::BiasConfig;
/// use at5::{ParamStore, Tape};
///
/// let config = ModelConfig {
///     input: InputKind::Tokens { vocab: 5 },
///     output: OutputKind::Classes(3),
///     d_model: 8,
///     heads: 2,
///     ffn: 16,
///     layers: 1,
///     max_len: 6,
///     bias: BiasConfig::from_name("at5").unwrap(),
///     bias_scope: BiasScope::Shared,
///     pooling: Pooling::Last,
///     dropout: Dropouts::NONE,
///     head: PooledHead::default(),
///     unbiased_heads: Vec::new(),
/// };
/// let mut store: ParamStore<f64> = ParamStore::new();
/// let model = Model::new(config, &mut store, 7).unwrap();
///
/// // Two sequences of length 6; the second ends in two padding slots (id 0).
/// let ids = vec![1, 2, 3, 4, 1, 2, 3, 3, 1, 4, 0, 0];
/// let pad = ids.iter().map(|&t| t == 0).collect();
/// let batch = Batch { b: 2, l: 6, input: BatchInput::Tokens(ids), pad };
///
/// let mut tape = Tape::new();
/// let p = store.bind(&mut tape);
/// let logits = model.forward(&mut tape, &p, &batch, &ForwardOpts::default()).output;
/// assert_eq!(tape.shape(logits), &[2, 3]);
/// let loss = model.loss(&mut tape, logits, &Targets::Classes(vec![0, 2]));
/// let grads = tape.backward(loss);
/// // Small initial weights give nearly uniform predictions: a loss close to ln 3.
/// assert!((tape.value(loss).data[0] - 3f64.ln()).abs() < 0.1);
/// // The backward reached every parameter, AT5's slopes and MLPs included.
/// assert!(store.without_grad(&p, &grads).is_empty());
///
/// // Posterior = prior × likelihood / evidence, for the last query of sequence 0, head 1.
/// let view = &model.inspect(&store, &batch, None).unwrap()[0];
/// let row = (1 * 6 + 5) * 6; // [B, H, L, L] at b = 0, h = 1, i = 5
/// let unnorm: Vec<f64> = (0..6)
///     .map(|j| view.prior.data[row + j] * view.context.data[row + j].exp())
///     .collect();
/// let evidence: f64 = unnorm.iter().sum();
/// for j in 0..6 {
///     assert!((unnorm[j] / evidence - view.posterior.data[row + j]).abs() < 1e-9);
/// }
/// ```
pub struct Model<F: Float> {
    /// The configuration the model was built from.
    pub config: ModelConfig,
    pub(super) input_embed: Option<Embedding>,
    pub(super) input_proj: Option<Linear>,
    pub(super) input_norm: Option<LayerNorm>,
    /// One family for `Shared`/`FirstLayer`, one per layer for `PerLayer`.
    pub biases: Vec<Box<dyn PositionBias<F>>>,
    /// The encoder blocks, first to last.
    pub blocks: Vec<Block>,
    pub(super) head_norm: Option<LayerNorm>,
    pub(super) head: Linear,
}

impl<F: Float> Model<F> {
    /// Builds the model and registers its parameters in `store`, initialised from `seed`.
    pub fn new(config: ModelConfig, store: &mut ParamStore<F>, seed: u64) -> Result<Self, String> {
        config.validate()?;
        let rng = &mut StdRng::seed_from_u64(seed);
        let (d, h) = (config.d_model, config.heads);
        let (input_embed, input_proj, input_norm) = match config.input {
            InputKind::Tokens { vocab } => (
                Some(Embedding::new(store, "embed", vocab, d, rng)),
                None,
                Some(LayerNorm::new(store, "embed.ln", d)),
            ),
            InputKind::Features { dim } => (
                None,
                Some(Linear::new(store, "embed.proj", dim, d, rng)),
                None,
            ),
        };
        let mut biases = Vec::new();
        if config.bias_scope == BiasScope::PerLayer {
            for l in 0..config.layers {
                let prefix = format!("encoder.{l}.bias");
                biases.push(position::build(
                    &config.bias,
                    h,
                    config.max_len,
                    store,
                    &prefix,
                    rng,
                )?);
            }
        } else {
            biases.push(position::build(
                &config.bias,
                h,
                config.max_len,
                store,
                "bias",
                rng,
            )?);
        }
        let blocks = (0..config.layers)
            .map(|l| Block::new(store, &format!("encoder.{l}"), d, h, config.ffn, rng))
            .collect();
        let head_norm = config
            .head
            .norm
            .then(|| LayerNorm::new(store, "head.ln", d));
        let classes = match config.output {
            OutputKind::Classes(n) => n,
            OutputKind::Regression => 1,
        };
        let head = match config.head.init {
            OutputInit::Bert => Linear::new(store, "head.out", d, classes, rng),
            OutputInit::Glorot => Linear::glorot(store, "head.out", (d, classes), 0.1, rng),
        };
        Ok(Model {
            config,
            input_embed,
            input_proj,
            input_norm,
            biases,
            blocks,
            head_norm,
            head,
        })
    }

    /// The bias family's name (`t5`, `at5`, ...).
    pub fn family(&self) -> &'static str {
        self.biases[0].family()
    }

    /// Checks a batch against the model before any op sees it.
    pub fn check_batch(&self, batch: &Batch) -> Result<(), String> {
        let (b, l) = (batch.b, batch.l);
        if b == 0 || l == 0 || batch.pad.len() != b * l {
            return Err(format!(
                "batch {b}x{l} with {} padding flags",
                batch.pad.len()
            ));
        }
        match (&batch.input, self.config.input) {
            (BatchInput::Tokens(ids), InputKind::Tokens { vocab }) => {
                if ids.len() != b * l {
                    return Err(format!("batch {b}x{l} with {} token ids", ids.len()));
                }
                if let Some(&bad) = ids.iter().find(|&&t| t >= vocab) {
                    return Err(format!(
                        "token id {bad} is outside the vocabulary of {vocab}"
                    ));
                }
            }
            (BatchInput::Features(x), InputKind::Features { dim }) => {
                if x.len() != b * l * dim {
                    return Err(format!("batch {b}x{l}x{dim} with {} features", x.len()));
                }
            }
            _ => return Err("batch input kind does not match the model's input".into()),
        }
        for (s, row) in batch.pad.chunks(l).enumerate() {
            if row.iter().all(|&p| p) {
                return Err(format!("sequence {s} of the batch is all padding"));
            }
        }
        Ok(())
    }

    /// The row of the last block that the pooled head reads, when it is the only one that
    /// reaches the output: `L - 1` for last pooling, 0 for first; `None` for mean pooling or
    /// with [`ForwardOpts::whole_graph`].
    pub fn pooled_row(&self, l: usize, opts: &ForwardOpts) -> Option<usize> {
        match self.config.pooling {
            _ if opts.whole_graph => None,
            Pooling::Last => Some(l - 1),
            Pooling::First => Some(0),
            Pooling::Mean => None,
        }
    }

    /// Which family instance block `i` reads its bias from, if any.
    fn bias_of_block(&self, i: usize) -> Option<usize> {
        match self.config.bias_scope {
            BiasScope::Shared => Some(0),
            BiasScope::FirstLayer => (i == 0).then_some(0),
            BiasScope::PerLayer => Some(i),
        }
    }

    /// Which heads receive the bias on this forward: the config's unbiased heads and the
    /// forward's ablation both turn a head off; `None` when every head keeps it.
    fn bias_mask(&self, opts: &ForwardOpts) -> Option<Vec<bool>> {
        let h = self.config.heads;
        if let Some(keep) = &opts.bias_heads {
            assert_eq!(
                keep.len(),
                h,
                "bias_heads: {} flags for {h} heads",
                keep.len()
            );
        }
        if opts.bias_heads.is_none() && self.config.unbiased_heads.is_empty() {
            return None;
        }
        Some(
            (0..h)
                .map(|i| {
                    !self.config.unbiased_heads.contains(&i)
                        && opts.bias_heads.as_ref().is_none_or(|k| k[i])
                })
                .collect(),
        )
    }

    /// The bias each block receives for a length-`l` forward: `[H, L, L]`, or `[H, 1, L]` for
    /// the last block when it computes only `row`. An instance read by no whole block
    /// evaluates that one row, never the whole grid.
    pub(super) fn block_biases(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        l: usize,
        opts: &ForwardOpts,
        row: Option<usize>,
    ) -> Vec<Option<Var>> {
        let h = self.config.heads;
        let keep = self.bias_mask(opts).map(|keep| {
            let data = keep
                .iter()
                .map(|&k| if k { F::ONE } else { F::ZERO })
                .collect();
            Tensor::from_vec(&[h, 1, 1], data)
        });
        let last = self.blocks.len() - 1;
        let pruned = |i: usize| row.is_some() && i == last;
        let grids: Vec<Option<Var>> = self
            .biases
            .iter()
            .enumerate()
            .map(|(fi, fam)| {
                let readers: Vec<usize> = (0..self.blocks.len())
                    .filter(|&i| self.bias_of_block(i) == Some(fi))
                    .collect();
                let rows = match row {
                    Some(at) if readers.iter().all(|&i| pruned(i)) => at..at + 1,
                    _ => 0..l,
                };
                let seed = mix_seed(opts.seed, 1000 + fi as u64);
                let grid = fam.grid_rows(tape, p, l, l, rows, seed)?;
                Some(match &keep {
                    Some(k) => {
                        let k = tape.constant(k.clone());
                        tape.mul(grid, k)
                    }
                    None => grid,
                })
            })
            .collect();
        (0..self.blocks.len())
            .map(|i| {
                let grid = grids[self.bias_of_block(i)?]?;
                Some(match row {
                    Some(at) if pruned(i) && tape.shape(grid)[1] == l => {
                        tape.slice(grid, 1, at, at + 1)
                    }
                    _ => grid,
                })
            })
            .collect()
    }

    /// The forward pass. Call [`Model::check_batch`] first on untrusted batches.
    pub fn forward(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        batch: &Batch,
        opts: &ForwardOpts,
    ) -> Forward {
        let (b, l, d) = (batch.b, batch.l, self.config.d_model);
        let drop = self.config.dropout;
        let mut x = match (&batch.input, &self.input_embed, &self.input_proj) {
            (BatchInput::Tokens(ids), Some(emb), _) => emb.forward(tape, p, ids, b, l),
            (BatchInput::Features(v), _, Some(proj)) => {
                let dim = v.len() / (b * l);
                let data = v.iter().map(|&x| F::from_f64(x)).collect();
                let xs = tape.constant(Tensor::from_vec(&[b, l, dim], data));
                proj.forward(tape, p, xs)
            }
            _ => panic!("forward: batch input kind does not match the model (use check_batch)"),
        };
        if let Some(enc) = self.biases[0].input_encoding(l, d) {
            let enc = tape.constant(enc);
            x = tape.add(x, enc);
        }
        x = tape.dropout(x, drop.input, mix_seed(opts.seed, 1));
        if let Some(norm) = &self.input_norm {
            x = norm.forward(tape, p, x);
        }
        let mask = key_mask::<F>(&batch.pad, b, l);
        let row = self.pooled_row(l, opts);
        let block_biases = self.block_biases(tape, p, l, opts, row);
        let last = self.blocks.len() - 1;
        let mut biases = Vec::with_capacity(self.blocks.len());
        let mut traces = Vec::with_capacity(self.blocks.len());
        for (i, (block, bias)) in self.blocks.iter().zip(block_biases).enumerate() {
            let bd = BlockDropout {
                hidden: drop.hidden,
                attention: drop.attention,
                seed: mix_seed(opts.seed, 10 + i as u64),
            };
            let block_row = row.filter(|_| i == last);
            let (y, trace) = block.forward(tape, p, x, block_row, bias, &mask, bd);
            x = y;
            biases.push(bias);
            traces.push(trace);
        }
        let output = self.head(tape, p, x, batch, opts);
        Forward {
            output,
            biases,
            traces,
        }
    }

    /// The last block's output `[B, L, D]` (or its pooled row `[B, 1, D]`) → the output:
    /// pooling, the pooled vector's dropout and LayerNorm, the output layer.
    pub(super) fn head(
        &self,
        tape: &mut Tape<F>,
        p: &Bound,
        x: Var,
        batch: &Batch,
        opts: &ForwardOpts,
    ) -> Var {
        let pooled = self.pool(tape, x, batch);
        let rate = self
            .config
            .head
            .dropout
            .unwrap_or(self.config.dropout.hidden);
        let mut pooled = tape.dropout(pooled, rate, mix_seed(opts.seed, 2));
        if let Some(norm) = &self.head_norm {
            pooled = norm.forward(tape, p, pooled);
        }
        let mut output = self.head.forward(tape, p, pooled);
        if self.config.output == OutputKind::Regression {
            output = tape.reshape(output, &[batch.b]);
        }
        output
    }

    /// x `[B, L, D]` (or `[B, 1, D]`, the pooled row alone) → `[B, D]`.
    fn pool(&self, tape: &mut Tape<F>, x: Var, batch: &Batch) -> Var {
        let (b, l, d) = (batch.b, batch.l, self.config.d_model);
        if tape.shape(x)[1] == 1 {
            return tape.reshape(x, &[b, d]);
        }
        match self.config.pooling {
            Pooling::Last | Pooling::First => {
                let at = if self.config.pooling == Pooling::Last {
                    l - 1
                } else {
                    0
                };
                let s = tape.slice(x, 1, at, at + 1);
                tape.reshape(s, &[b, d])
            }
            Pooling::Mean => {
                let mut w = vec![F::ZERO; b * l];
                for (row, pad) in w.chunks_mut(l).zip(batch.pad.chunks(l)) {
                    let n = pad.iter().filter(|&&p| !p).count().max(1);
                    for (wi, &p) in row.iter_mut().zip(pad) {
                        if !p {
                            *wi = F::from_f64(1.0 / n as f64);
                        }
                    }
                }
                let w = tape.constant(Tensor::from_vec(&[b, l, 1], w));
                let xw = tape.mul(x, w);
                tape.sum_axis(xw, 1, false)
            }
        }
    }

    /// The training loss of a forward: mean cross-entropy, or mean squared error.
    pub fn loss(&self, tape: &mut Tape<F>, output: Var, targets: &Targets) -> Var {
        match targets {
            Targets::Classes(c) => tape.cross_entropy(output, c),
            Targets::Real(y) => {
                let t = Tensor::from_vec(&[y.len()], y.iter().map(|&v| F::from_f64(v)).collect());
                let t = tape.constant(t);
                tape.mse(output, t)
            }
        }
    }

    /// Puts constrained bias parameters back into their domain (after an optimizer step).
    pub fn project(&self, store: &mut ParamStore<F>) {
        for b in &self.biases {
            b.project(store);
        }
    }
}

/// The labels of a batch.
#[derive(Clone, Debug)]
pub enum Targets {
    /// Class ids `[B]`.
    Classes(Vec<usize>),
    /// Real targets `[B]`.
    Real(Vec<f64>),
}

impl<F: Float> std::fmt::Debug for Model<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .field("family", &self.family())
            .finish_non_exhaustive()
    }
}
