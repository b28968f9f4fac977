//! A family's own per-head numbers: the one place a generic layer (records, `prior`, the
//! playground) learns what a family wants kept, without naming the family.
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// A bias family's own numbers, one value per head, by name (AT5: its slopes `alpha` and
/// `beta`; most families have none), as [`super::PositionBias::per_head`] reports them.
///
/// Run records keep them after every epoch, each as a field of the epoch beside its metrics
/// (serde `flatten`), in name order; a field written as `null` (records of families without
/// it, before this type) reads as absent.
///
/// ```
/// use at5::position::PerHead;
/// let p = PerHead::from_iter([("beta", vec![0.5]), ("alpha", vec![0.25])]);
/// assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"alpha":[0.25],"beta":[0.5]}"#);
/// let old: PerHead = serde_json::from_str(r#"{"alpha":null,"beta":null}"#).unwrap();
/// assert!(old.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerHead(BTreeMap<String, Vec<f64>>);

impl PerHead {
    /// The values of `name`, one per head.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.0.get(name).map(Vec::as_slice)
    }
    /// Whether the family reported nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// (name, values per head), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[f64])> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }
    /// The number of heads the values cover (0 when empty).
    pub fn heads(&self) -> usize {
        self.0.values().map(Vec::len).max().unwrap_or(0)
    }
}

impl<S: Into<String>> FromIterator<(S, Vec<f64>)> for PerHead {
    fn from_iter<I: IntoIterator<Item = (S, Vec<f64>)>>(items: I) -> PerHead {
        PerHead(items.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl Serialize for PerHead {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for PerHead {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PerHead, D::Error> {
        let map = BTreeMap::<String, Option<Vec<f64>>>::deserialize(d)?;
        Ok(PerHead(
            map.into_iter().filter_map(|(k, v)| Some((k, v?))).collect(),
        ))
    }
}
