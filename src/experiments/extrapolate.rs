//! `extrapolate`: train at length L, evaluate at 2L and 4L on tasks whose label rule does not
//! depend on the length (lag-k, adding).
use super::learned::{Missing, of_finished};
use crate::sweep::{Plan, RunSpec};
use at5::data::{self, TaskConfig, TaskKind};
use at5::nn::ForwardOpts;
use at5::report::{Better, Cell, Table, read_json, write_atomic};
use at5::train::{self, Dial, Preset, RunRecord, RunRequest, TaskSource, Trainer, evaluate};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Test lengths as multiples of the training length L.
pub const FACTORS: [usize; 3] = [1, 2, 4];
/// The tasks the extrapolation runs on, each a task and its dial.
pub const TASKS: [(&str, (TaskKind, Dial)); 2] = [
    (
        "lagk-L32-k4",
        (
            TaskKind::LagK,
            Dial {
                seq_len: Some(32),
                lag: Some(4),
            },
        ),
    ),
    ("adding-T50", (TaskKind::Adding, Dial::length(50))),
];

/// One run per task, family and seed at the training length.
pub fn plan(preset: Preset, seeds: u64, biases: &[String]) -> Plan {
    let mut specs = Vec::new();
    for (g, (task, dial)) in TASKS {
        for b in biases {
            for seed in 1..=seeds {
                let run = RunRequest::new(task, b, preset, seed).with_dial(dial);
                specs.push(RunSpec::new(g, run));
            }
        }
    }
    Plan::new("extrapolate", preset.name(), specs)
}

/// Test accuracy (%) at each length factor, cached beside the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lengths {
    /// The test lengths.
    pub lengths: Vec<usize>,
    /// Test accuracy (%) at each of them.
    pub accuracy: Vec<f64>,
}

/// The file beside a run's record that keeps its test accuracy at each length.
pub const EXTRAPOLATE: &str = "extrapolate.json";

/// Evaluates a trained model on test sets generated at L·factor.
pub fn evaluate_lengths(t: &Trainer) -> Result<Lengths, String> {
    let TaskSource::Generated { config, seed } = &t.config.task else {
        return Err("extrapolation needs a generated task".into());
    };
    let base = t.data.max_len;
    let mut out = Lengths {
        lengths: Vec::new(),
        accuracy: Vec::new(),
    };
    for f in FACTORS {
        let len = base * f;
        let mut cfg = config.clone();
        match &mut cfg {
            TaskConfig::LagK(c) => c.seq_len = len,
            TaskConfig::Adding(c) => c.seq_len = len,
            _ => return Err("extrapolation is defined for lag-k and adding only".into()),
        }
        let d = data::generate(&cfg, *seed)?;
        let acc = evaluate(&t.model, &t.store, &d.test, len, &ForwardOpts::default()).accuracy;
        out.lengths.push(len);
        out.accuracy.push(100.0 * acc);
    }
    Ok(out)
}

/// The finished run `spec`'s accuracy at each length: from its `extrapolate.json` when that is
/// of this run, else from its checkpoint (and cached). A file written before caches named
/// their run holds the bare lengths; it is read as it is when there is no checkpoint to
/// check it against, and replaced by one tied to the run when there is.
fn lengths_of(root: &Path, spec: &RunSpec, missing: Missing) -> Result<Option<Lengths>, String> {
    let dir = spec.dir(root);
    if !dir.join(train::CHECKPOINT).exists()
        && let Ok(untied) = read_json::<Lengths>(&dir.join(EXTRAPOLATE))
    {
        return Ok(Some(untied));
    }
    of_finished(root, spec, EXTRAPOLATE, missing, evaluate_lengths)
}

/// Tests every finished run at each length factor and writes `extrapolate.md`; returns it. A
/// finished run whose accuracies can be neither read nor computed fails it unless `missing`
/// allows leaving it out.
pub fn report(
    root: &Path,
    plan: &Plan,
    recs: &[Option<RunRecord>],
    missing: Missing,
) -> Result<String, String> {
    let mut md = String::new();
    for (g, _) in TASKS {
        let specs: Vec<(&RunSpec, &Option<RunRecord>)> = plan
            .specs
            .iter()
            .zip(recs)
            .filter(|(s, _)| s.group == g)
            .collect();
        if specs.is_empty() {
            continue;
        }
        let mut table = Table::new("bias", FACTORS.iter().map(|f| format!("{f}·L")), 1)
            .bold_best(Better::Higher);
        let mut biases: Vec<&str> = specs.iter().map(|(s, _)| s.bias.as_str()).collect();
        biases.dedup();
        for b in biases {
            let mut evals: Vec<Lengths> = Vec::new();
            for (s, _) in specs.iter().filter(|(s, r)| s.bias == b && r.is_some()) {
                evals.extend(lengths_of(root, s, missing)?);
            }
            let cells: Vec<Cell> = (0..FACTORS.len())
                .map(|k| {
                    let xs: Vec<f64> = evals.iter().map(|e| e.accuracy[k]).collect();
                    Cell::of_samples(&xs)
                })
                .collect();
            table.row(b, cells);
        }
        md.push_str(&format!(
            "\n### {g}: test accuracy (%) of the final model at the training length L and beyond\n\n"
        ));
        md.push_str(&table.to_markdown());
    }
    write_atomic(&root.join("extrapolate.md"), md.as_bytes())?;
    Ok(md)
}
