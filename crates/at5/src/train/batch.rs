//! Padded batches and their labels from task examples.
use crate::data::{Example, Label, PAD, Sequence};
use crate::nn::{Batch, BatchInput, Targets};

/// Right-pads `examples` to `l` slots (padding token 0, zero features) and collects labels.
/// Every example must fit in `l`; classes and reals cannot be mixed in one batch.
pub fn make_batch(examples: &[&Example], l: usize) -> (Batch, Targets) {
    let b = examples.len();
    let mut pad = vec![true; b * l];
    let input = match examples.first().map(|e| &e.input) {
        Some(Sequence::Pairs(p0)) => {
            let dim = p0.first().map_or(2, |p| p.len());
            let mut x = vec![0.0; b * l * dim];
            for (s, e) in examples.iter().enumerate() {
                let Sequence::Pairs(p) = &e.input else {
                    panic!("make_batch: tokens and pairs in one batch")
                };
                assert!(p.len() <= l, "make_batch: length {} > {l}", p.len());
                for (t, v) in p.iter().enumerate() {
                    pad[s * l + t] = false;
                    for (k, &vk) in v.iter().enumerate() {
                        x[(s * l + t) * dim + k] = vk as f64;
                    }
                }
            }
            BatchInput::Features(x)
        }
        _ => {
            let mut ids = vec![PAD; b * l];
            for (s, e) in examples.iter().enumerate() {
                let Sequence::Tokens(t) = &e.input else {
                    panic!("make_batch: tokens and pairs in one batch")
                };
                assert!(t.len() <= l, "make_batch: length {} > {l}", t.len());
                for (k, &id) in t.iter().enumerate() {
                    ids[s * l + k] = id;
                    pad[s * l + k] = false;
                }
            }
            BatchInput::Tokens(ids)
        }
    };
    let targets = match examples.first().map(|e| &e.label) {
        Some(Label::Real(_)) => Targets::Real(
            examples
                .iter()
                .map(|e| e.label.real().expect("make_batch: mixed labels") as f64)
                .collect(),
        ),
        _ => Targets::Classes(
            examples
                .iter()
                .map(|e| e.label.class().expect("make_batch: mixed labels"))
                .collect(),
        ),
    };
    (Batch { b, l, input, pad }, targets)
}
