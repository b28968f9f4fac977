//! What a bias family declares ([`Family`]), the `families!` list that registers it, and the
//! one place that builds a configured family.
//!
//! Adding a family is its own file (the struct, `impl PositionBias`, and `impl Family`: its
//! name, options, checks, parameter count and constructor) plus one line in `families!` in
//! `position/mod.rs`; [`BiasConfig`], [`FAMILIES`], parsing, checking, building, the memory
//! estimate and the record format all come from that line.
use super::mlp::MlpOptions;
use super::{BiasConfig, PositionBias};
use crate::float::Float;
use crate::params::ParamStore;
use rand::rngs::StdRng;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, VariantAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::any::TypeId;
use std::fmt;

/// A bias family: what it is called, what it can be configured with, and how it is built.
pub trait Family: Sized {
    /// The command-line name (`t5`, `at5`, ...).
    const NAME: &'static str;
    /// Whether it has learnable parameters.
    const LEARNED: bool;
    /// Its options, as run records store them; `Default` gives the paper's values. A family
    /// without options uses [`NoOptions`] and is stored as its bare name.
    type Options: Clone + fmt::Debug + PartialEq + Default + Serialize + DeserializeOwned + 'static;

    /// The options a run can set, each with its flag: the one list of them, from which `train`'s
    /// flags, the check that an option belongs to the family asked for, and the flags a plan
    /// writes back all come (the record stores [`Family::Options`] itself). None by default.
    fn settings() -> Vec<Setting<Self::Options>> {
        Vec::new()
    }

    /// Every problem with `options` as one line naming the option, without building anything
    /// (the constructor runs the same checks).
    fn validate(_options: &Self::Options) -> Result<(), String> {
        Ok(())
    }

    /// How many parameters it has for `heads` heads and training length `len` (the memory
    /// estimate reads this).
    fn param_count(options: &Self::Options, heads: usize, len: usize) -> f64;

    /// Builds it for `heads` heads and training length `max_len`, registering its parameters
    /// in `store` under `prefix`.
    fn build<F: Float>(
        options: &Self::Options,
        heads: usize,
        max_len: usize,
        store: &mut ParamStore<F>,
        prefix: &str,
        rng: &mut StdRng,
    ) -> Result<Self, String>;
}

/// One option of a family as a run sets it: its flag (`num-buckets` for `--num-buckets`, the
/// options field `num_buckets`), its help, and how its text is read into the options and
/// written back (the written form is the one plans and job lists carry).
pub struct Setting<O> {
    /// The flag without its dashes.
    pub flag: &'static str,
    /// The value's name in `--help` (`N`, `STD`, `cell|offset`).
    pub value: &'static str,
    /// What it sets, for `--help`.
    pub help: &'static str,
    /// Reads `text` into the options; an error is one line naming the flag.
    pub set: fn(&mut O, &str) -> Result<(), String>,
    /// The option's value as the flag's text.
    pub get: fn(&O) -> String,
}

/// A flag of some family's [`Setting`], with every family that has it (AT5 and AT5-NoB share
/// their MLP's).
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyFlag {
    /// The flag without its dashes.
    pub flag: &'static str,
    /// The value's name in `--help`.
    pub value: &'static str,
    /// What it sets.
    pub help: &'static str,
    /// The families that have it, in registration order.
    pub families: Vec<&'static str>,
}

/// `text` as the whole number `--flag` takes.
pub fn parse_count(flag: &str, text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("--{flag} {text}: expected a whole number"))
}

/// `text` as the number `--flag` takes.
pub fn parse_real(flag: &str, text: &str) -> Result<f64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("--{flag} {text}: expected a number"))
}

/// Sets option `flag` of `options` from `text` through the family's `settings`; `Ok(None)` when
/// the family has no such option, else the value as the flag writes it back.
pub(super) fn set_option<O>(
    options: &mut O,
    settings: Vec<Setting<O>>,
    flag: &str,
    text: &str,
) -> Result<Option<String>, String> {
    let Some(s) = settings.into_iter().find(|s| s.flag == flag) else {
        return Ok(None);
    };
    (s.set)(options, text)?;
    Ok(Some((s.get)(options)))
}

/// The options of a family that has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoOptions;

/// Registers the bias families: one line per family, `Variant: module::Family`, declaring the
/// module, exporting the family and generating [`BiasConfig`] with everything that dispatches
/// on it. The order is the order experiments list families in (and the record's variant index).
macro_rules! families {
    ($($variant:ident: $module:ident::$family:ident,)*) => {
        $(mod $module;)*
        $(pub use self::$module::$family;)*

        /// A bias family and its options; stored in checkpoints and run records (a family
        /// without options as its bare name, `"Alibi"`, one with options as `{"T5": {...}}`).
        #[derive(Clone, Debug, PartialEq)]
        pub enum BiasConfig {
            $(
                #[doc = concat!("[`", stringify!($family), "`] with its options.")]
                $variant(<$family as config::Family>::Options),
            )*
        }

        /// The family names the command line accepts, in the order experiments list them.
        pub const FAMILIES: &[&str] = &[$(<$family as config::Family>::NAME),*];

        /// Every family's option flags ([`Family::settings`]), each once with the families that
        /// have it, in registration order.
        pub fn family_flags() -> Vec<config::FamilyFlag> {
            let mut out: Vec<config::FamilyFlag> = Vec::new();
            $(
                for s in <$family as config::Family>::settings() {
                    let name = <$family as config::Family>::NAME;
                    match out.iter_mut().find(|f| f.flag == s.flag) {
                        Some(f) => f.families.push(name),
                        None => out.push(config::FamilyFlag {
                            flag: s.flag,
                            value: s.value,
                            help: s.help,
                            families: vec![name],
                        }),
                    }
                }
            )*
            out
        }

        impl BiasConfig {
            /// The variant names records use, in registration order.
            const VARIANTS: &'static [&'static str] = &[$(stringify!($variant)),*];

            /// The family called `name` with its default options (the paper's: 32 buckets up to
            /// distance 128; AT5 slopes U(1, 10), widths 15 and 2, init std 0.01; FIRE width 32).
            pub fn from_name(name: &str) -> Result<BiasConfig, String> {
                $(
                    if name == <$family as config::Family>::NAME {
                        return Ok(BiasConfig::$variant(Default::default()));
                    }
                )*
                Err(format!("unknown bias `{name}`; expected one of {}", FAMILIES.join(", ")))
            }

            /// The command-line name of this family.
            pub fn name(&self) -> &'static str {
                match self {
                    $(BiasConfig::$variant(_) => <$family as config::Family>::NAME,)*
                }
            }

            /// Whether the family has learnable parameters.
            pub fn is_learned(&self) -> bool {
                match self {
                    $(BiasConfig::$variant(_) => <$family as config::Family>::LEARNED,)*
                }
            }

            /// This family's option flags, in its own order.
            pub fn option_flags(&self) -> Vec<&'static str> {
                match self {
                    $(
                        BiasConfig::$variant(_) => <$family as config::Family>::settings()
                            .iter()
                            .map(|s| s.flag)
                            .collect(),
                    )*
                }
            }

            /// Sets this family's option `flag` from `text`; `Ok(None)` when the family has no
            /// such option, else the value as the flag writes it back.
            pub fn set_option(&mut self, flag: &str, text: &str) -> Result<Option<String>, String> {
                match self {
                    $(
                        BiasConfig::$variant(o) => config::set_option(
                            o,
                            <$family as config::Family>::settings(),
                            flag,
                            text,
                        ),
                    )*
                }
            }

            /// Every problem with this family's options, without building it.
            pub fn validate(&self) -> Result<(), String> {
                match self {
                    $(BiasConfig::$variant(o) => <$family as config::Family>::validate(o),)*
                }
            }

            /// Its parameter count for `heads` heads and training length `len`.
            pub fn param_count(&self, heads: usize, len: usize) -> f64 {
                match self {
                    $(
                        BiasConfig::$variant(o) => {
                            <$family as config::Family>::param_count(o, heads, len)
                        }
                    )*
                }
            }

            fn build_family<F: Float>(
                &self,
                heads: usize,
                max_len: usize,
                store: &mut crate::params::ParamStore<F>,
                prefix: &str,
                rng: &mut rand::rngs::StdRng,
            ) -> Result<Box<dyn PositionBias<F>>, String> {
                Ok(match self {
                    $(
                        BiasConfig::$variant(o) => Box::new(<$family as config::Family>::build(
                            o, heads, max_len, store, prefix, rng,
                        )?),
                    )*
                })
            }
        }

        impl serde::Serialize for BiasConfig {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(BiasConfig::$variant(o) => config::serialize_variant(s, stringify!($variant), o),)*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for BiasConfig {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Read;
                impl<'de> serde::de::Visitor<'de> for Read {
                    type Value = BiasConfig;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a bias family")
                    }
                    fn visit_enum<A: serde::de::EnumAccess<'de>>(
                        self,
                        data: A,
                    ) -> Result<BiasConfig, A::Error> {
                        let (variant, content) =
                            data.variant_seed(config::VariantName(BiasConfig::VARIANTS))?;
                        match variant {
                            $(
                                stringify!($variant) => {
                                    config::read_options(content).map(BiasConfig::$variant)
                                }
                            )*
                            _ => unreachable!("VariantName yields registered variants only"),
                        }
                    }
                }
                d.deserialize_enum("BiasConfig", BiasConfig::VARIANTS, Read)
            }
        }
    };
}
pub(super) use families;

impl BiasConfig {
    /// The options of AT5's or AT5-NoB's per-head MLPs; `None` for the other families.
    pub fn mlp_options(&self) -> Option<&MlpOptions> {
        match self {
            BiasConfig::At5(o) => Some(&o.mlp),
            BiasConfig::At5NoB(o) => Some(o),
            _ => None,
        }
    }

    /// [`BiasConfig::mlp_options`], to change them.
    pub fn mlp_options_mut(&mut self) -> Option<&mut MlpOptions> {
        match self {
            BiasConfig::At5(o) => Some(&mut o.mlp),
            BiasConfig::At5NoB(o) => Some(o),
            _ => None,
        }
    }
}

fn stored_as_name<O: 'static>() -> bool {
    TypeId::of::<O>() == TypeId::of::<NoOptions>()
}

/// Writes a family as the derived enum did before families were registered: a bare name when
/// it has no options, a one-key map otherwise.
pub(super) fn serialize_variant<S: Serializer, O: Serialize + 'static>(
    s: S,
    variant: &'static str,
    options: &O,
) -> Result<S::Ok, S::Error> {
    let index = BiasConfig::VARIANTS
        .iter()
        .position(|v| *v == variant)
        .expect("a registered variant") as u32;
    if stored_as_name::<O>() {
        s.serialize_unit_variant("BiasConfig", index, variant)
    } else {
        s.serialize_newtype_variant("BiasConfig", index, variant, options)
    }
}

/// Reads a family's options as the kind of variant [`serialize_variant`] wrote.
pub(super) fn read_options<'de, A, O>(content: A) -> Result<O, A::Error>
where
    A: VariantAccess<'de>,
    O: DeserializeOwned + Default + 'static,
{
    if stored_as_name::<O>() {
        content.unit_variant().map(|()| O::default())
    } else {
        content.newtype_variant()
    }
}

/// Reads a variant's name (or its index, in a format that writes indices), refusing names that
/// are not registered.
pub(super) struct VariantName(pub &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for VariantName {
    type Value = &'static str;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for VariantName {
    type Value = &'static str;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "one of {}", self.0.join(", "))
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<&'static str, E> {
        self.0
            .iter()
            .find(|v| **v == name)
            .copied()
            .ok_or_else(|| E::unknown_variant(name, self.0))
    }
    fn visit_u64<E: de::Error>(self, index: u64) -> Result<&'static str, E> {
        let found = usize::try_from(index).ok().and_then(|i| self.0.get(i));
        found.copied().ok_or_else(|| {
            E::invalid_value(
                de::Unexpected::Unsigned(index),
                &"a registered variant index",
            )
        })
    }
}

/// Builds `cfg` for `heads` heads and training length `max_len`, registering its parameters in
/// `store` under `prefix` (e.g. `bias`). Impossible settings are an `Err` naming the option.
///
/// The family's [`PositionBias::grid`] gives `b_h(j - i)` for every query and key; a softmax
/// over the keys turns it into the prior of each query:
///
/// ```
/// use at5::position::{BiasConfig, NoOptions, PositionBias, build};
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
///     (head0[(len - 1) * len..].to_vec(), bias.per_head(&store))
/// };
///
/// // ALiBi: the prior decays with distance, so it rises toward the query (the last key).
/// let (row, own) = prior_of_last_query(&BiasConfig::Alibi(NoOptions));
/// assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// assert!(row.windows(2).all(|w| w[0] < w[1]));
/// assert!(own.is_empty()); // ALiBi's slopes are fixed: nothing of its own to record
///
/// // AT5 starts almost flat (its MLPs are initialised at std 0.01); its slopes are
/// // alpha = relu(a)/L with a ~ U(1, 10).
/// let (row, own) = prior_of_last_query(&BiasConfig::from_name("at5").unwrap());
/// assert!(row.iter().all(|p| (p - 1.0 / len as f64).abs() < 1e-3));
/// let (alpha, beta) = (own.get("alpha").unwrap(), own.get("beta").unwrap());
/// assert_eq!((alpha.len(), beta.len()), (heads, heads));
/// assert!(alpha.iter().chain(beta).all(|&r| (1.0 / 8.0..=10.0 / 8.0).contains(&r)));
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
    cfg.build_family(heads, max_len, store, prefix, rng)
}
