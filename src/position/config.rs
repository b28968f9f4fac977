//! Which bias family a model uses, with its options, and the one place that builds it.
use super::PositionBias;
use super::at5::{MlpInit, MlpOptions};
use crate::float::Float;
use crate::params::ParamStore;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

/// A bias family and its options; stored in checkpoints and run records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BiasConfig {
    /// No position information at all (a permutation-equivariant encoder).
    None,
    /// Absolute sine/cosine encodings added to the input (Vaswani et al. 2017).
    Sinusoidal,
    /// T5's log-spaced buckets, one learned scalar per (bucket, head).
    T5 {
        /// Buckets over both directions together (32 in the paper).
        num_buckets: usize,
        /// Distance from which every offset shares the last bucket.
        max_distance: usize,
        /// Whether keys before and after the query get separate buckets (an encoder: yes).
        bidirectional: bool,
    },
    /// One learned scalar per (offset, head): T5 without bucketing.
    T5NoB,
    /// AT5: soft bucket `1 - exp(-alpha |n|)` per head and direction, then a small MLP.
    At5 {
        /// Lower end of the uniform init of the slope parameters `a_h`, `c_h`.
        slope_min: f64,
        /// Upper end of that range.
        slope_max: f64,
        /// Width of the MLP's first hidden layer.
        l1: usize,
        /// Width of the MLP's second hidden layer.
        l2: usize,
        /// Std of the MLP's truncated-normal weight init.
        init_std: f64,
        /// Dropout inside the MLP (the input-dropout rate).
        dropout: f64,
        /// That dropout drawn per grid cell (the original code) rather than per offset.
        /// Absent in records written before the option, which dropped per offset.
        #[serde(default)]
        dropout_per_cell: bool,
        /// How the MLP starts; left out of records when it is the paper's (and so absent in
        /// every record written before the option).
        #[serde(default, skip_serializing_if = "MlpInit::is_paper")]
        init: MlpInit,
    },
    /// AT5 with the soft bucket replaced by a free table `sigmoid(w_h[n])`.
    At5NoB {
        /// Width of the MLP's first hidden layer.
        l1: usize,
        /// Width of the MLP's second hidden layer.
        l2: usize,
        /// Std of the MLP's truncated-normal weight init.
        init_std: f64,
        /// Dropout inside the MLP (the input-dropout rate).
        dropout: f64,
        /// As AT5's.
        #[serde(default)]
        dropout_per_cell: bool,
        /// As AT5's.
        #[serde(default, skip_serializing_if = "MlpInit::is_paper")]
        init: MlpInit,
    },
    /// ALiBi's fixed linear penalty `-m_h |n|` (Press et al. 2022), symmetric for an encoder.
    Alibi,
    /// KERPLE's logarithmic kernel `-r1 ln(1 + r2 |n|)` (Chi et al. 2022).
    KerpleLog,
    /// FIRE's learned function of progressive interpolated distance (Li et al. 2023).
    Fire {
        /// Width of the MLP's hidden layer (32 in the paper).
        hidden: usize,
    },
}

/// The family names the command line accepts, in the order experiments list them.
pub const FAMILIES: [&str; 9] = [
    "none",
    "sinusoidal",
    "t5",
    "t5-nob",
    "at5",
    "at5-nob",
    "alibi",
    "kerple-log",
    "fire",
];

impl BiasConfig {
    /// The family's defaults (DESIGN §1: 32 buckets up to distance 128; AT5 slopes U(1, 10),
    /// widths 15 and 2, init std 0.01; FIRE width 32).
    pub fn from_name(name: &str) -> Result<BiasConfig, String> {
        Ok(match name {
            "none" => BiasConfig::None,
            "sinusoidal" => BiasConfig::Sinusoidal,
            "t5" => BiasConfig::T5 {
                num_buckets: 32,
                max_distance: 128,
                bidirectional: true,
            },
            "t5-nob" => BiasConfig::T5NoB,
            "at5" => BiasConfig::At5 {
                slope_min: 1.0,
                slope_max: 10.0,
                l1: 15,
                l2: 2,
                init_std: 0.01,
                dropout: 0.0,
                dropout_per_cell: false,
                init: MlpInit::Paper,
            },
            "at5-nob" => BiasConfig::At5NoB {
                l1: 15,
                l2: 2,
                init_std: 0.01,
                dropout: 0.0,
                dropout_per_cell: false,
                init: MlpInit::Paper,
            },
            "alibi" => BiasConfig::Alibi,
            "kerple-log" => BiasConfig::KerpleLog,
            "fire" => BiasConfig::Fire { hidden: 32 },
            other => {
                return Err(format!(
                    "unknown bias `{other}`; expected one of {}",
                    FAMILIES.join(", ")
                ));
            }
        })
    }

    /// The options of AT5's or AT5-NoB's per-head MLPs; `None` for the other families.
    pub fn mlp_options(&self) -> Option<MlpOptions> {
        match *self {
            BiasConfig::At5 {
                l1,
                l2,
                init_std,
                dropout,
                dropout_per_cell,
                init,
                ..
            }
            | BiasConfig::At5NoB {
                l1,
                l2,
                init_std,
                dropout,
                dropout_per_cell,
                init,
            } => Some(MlpOptions {
                l1,
                l2,
                init_std,
                init,
                dropout,
                per_cell: dropout_per_cell,
            }),
            _ => None,
        }
    }

    /// Every problem with this family's options, without building it (the constructors run
    /// the same checks): T5's bucket layout, AT5's slope range, the MLPs' widths, init and
    /// dropout, FIRE's width.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            BiasConfig::T5 {
                num_buckets,
                max_distance,
                bidirectional,
            } => super::check_t5_config(*num_buckets, *max_distance, *bidirectional),
            BiasConfig::At5 {
                slope_min,
                slope_max,
                ..
            } => {
                super::at5::check_slopes(*slope_min, *slope_max)?;
                self.mlp_options().map_or(Ok(()), |m| m.check("at5"))
            }
            BiasConfig::At5NoB { .. } => self.mlp_options().map_or(Ok(()), |m| m.check("at5-nob")),
            BiasConfig::Fire { hidden } => super::fire::check_hidden(*hidden),
            BiasConfig::None
            | BiasConfig::Sinusoidal
            | BiasConfig::T5NoB
            | BiasConfig::Alibi
            | BiasConfig::KerpleLog => Ok(()),
        }
    }

    /// The command-line name of this family.
    pub fn name(&self) -> &'static str {
        match self {
            BiasConfig::None => "none",
            BiasConfig::Sinusoidal => "sinusoidal",
            BiasConfig::T5 { .. } => "t5",
            BiasConfig::T5NoB => "t5-nob",
            BiasConfig::At5 { .. } => "at5",
            BiasConfig::At5NoB { .. } => "at5-nob",
            BiasConfig::Alibi => "alibi",
            BiasConfig::KerpleLog => "kerple-log",
            BiasConfig::Fire { .. } => "fire",
        }
    }

    /// Whether the family has learnable parameters.
    pub fn is_learned(&self) -> bool {
        !matches!(
            self,
            BiasConfig::None | BiasConfig::Sinusoidal | BiasConfig::Alibi
        )
    }
}

/// Builds `cfg` for `heads` heads and training length `max_len`, registering its parameters in
/// `store` under `prefix` (e.g. `bias`). Impossible settings are an `Err` naming the option.
///
/// The family's [`PositionBias::grid`] gives `b_h(j - i)` for every query and key; a softmax
/// over the keys turns it into the prior of each query:
///
/// ```
/// use at5::position::{BiasConfig, PositionBias, build};
/// use at5::{ParamStore, Tape};
/// use rand::SeedableRng;
///
/// let (heads, len) = (2, 8);
/// let prior_of_last_query = |cfg: &BiasConfig| {
///     let mut store: ParamStore<f64> = ParamStore::new();
///     let mut rng = rand::rngs::StdRng::seed_from_u64(0);
///     let bias = build(cfg, heads, len, &mut store, "bias", &mut rng).unwrap();
///     let mut tape = Tape::eval();
///     let p = store.bind(&mut tape);
///     let grid = bias.grid(&mut tape, &p, len, len, 0).unwrap(); // [H, L, L]
///     let prior = tape.softmax(grid);
///     let head0 = &tape.value(prior).data[..len * len];
///     (head0[(len - 1) * len..].to_vec(), bias.slopes(&store))
/// };
///
/// // ALiBi: the prior decays with distance, so it rises toward the query (the last key).
/// let (row, slopes) = prior_of_last_query(&BiasConfig::Alibi);
/// assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// assert!(row.windows(2).all(|w| w[0] < w[1]));
/// assert!(slopes.is_none());
///
/// // AT5 starts almost flat (its MLPs are initialised at std 0.01); its slopes are
/// // alpha = relu(a)/L with a ~ U(1, 10).
/// let (row, slopes) = prior_of_last_query(&BiasConfig::from_name("at5").unwrap());
/// assert!(row.iter().all(|p| (p - 1.0 / len as f64).abs() < 1e-3));
/// let (alpha, beta) = slopes.unwrap();
/// assert_eq!((alpha.len(), beta.len()), (heads, heads));
/// assert!(alpha.iter().chain(&beta).all(|&r| (1.0 / 8.0..=10.0 / 8.0).contains(&r)));
/// ```
pub fn build<F: Float>(
    cfg: &BiasConfig,
    heads: usize,
    max_len: usize,
    store: &mut ParamStore<F>,
    prefix: &str,
    rng: &mut StdRng,
) -> Result<Box<dyn PositionBias<F>>, String> {
    if heads == 0 {
        return Err("bias: heads must be at least 1".into());
    }
    if max_len < 2 {
        return Err(format!("bias: max_len must be at least 2, got {max_len}"));
    }
    Ok(match cfg {
        BiasConfig::None => Box::new(super::NoBias),
        BiasConfig::T5 {
            num_buckets,
            max_distance,
            bidirectional,
        } => Box::new(super::T5::new(
            *num_buckets,
            *max_distance,
            *bidirectional,
            heads,
            store,
            prefix,
            rng,
        )?),
        BiasConfig::Sinusoidal => Box::new(super::Sinusoidal),
        BiasConfig::T5NoB => Box::new(super::T5NoB::new(heads, max_len, store, prefix, rng)),
        BiasConfig::At5 {
            slope_min,
            slope_max,
            ..
        } => {
            let mlp = cfg.mlp_options().expect("AT5 has MLP options");
            let slopes = (*slope_min, *slope_max);
            Box::new(super::At5::new(
                slopes, &mlp, heads, max_len, store, prefix, rng,
            )?)
        }
        BiasConfig::At5NoB { .. } => {
            let mlp = cfg.mlp_options().expect("AT5-NoB has MLP options");
            Box::new(super::At5NoB::new(
                &mlp, heads, max_len, store, prefix, rng,
            )?)
        }
        BiasConfig::Alibi => Box::new(super::Alibi::new(heads)),
        BiasConfig::KerpleLog => Box::new(super::KerpleLog::new(heads, store, prefix, rng)),
        BiasConfig::Fire { hidden } => Box::new(super::Fire::new(
            *hidden, heads, max_len, store, prefix, rng,
        )?),
    })
}
