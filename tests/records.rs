//! Every committed run record still reads, and writing its config back keeps every field as it
//! was read: a change to a config type that would make a finished run look like another run (or
//! fail to parse) fails here, before any sweep re-runs it.
use at5::train::RunRecord;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn records(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            records(&path, out);
        } else if path.file_name().is_some_and(|n| n == "record.json") {
            out.push(path);
        }
    }
}

/// Whether every field of `old` is in `new` with the same value (`new` may add fields that
/// records written before them lack; a `null` may be left out, which reads back the same).
fn keeps(old: &Value, new: &Value, at: &str) -> Result<(), String> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => o.iter().try_for_each(|(k, v)| match n.get(k) {
            Some(w) => keeps(v, w, &format!("{at}.{k}")),
            None if v.is_null() => Ok(()),
            None => Err(format!("{at}.{k} is no longer written")),
        }),
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => o
            .iter()
            .zip(n)
            .enumerate()
            .try_for_each(|(i, (v, w))| keeps(v, w, &format!("{at}[{i}]"))),
        _ if old == new => Ok(()),
        _ => Err(format!("{at}: read {old}, written back as {new}")),
    }
}

#[test]
fn every_committed_record_reads_and_its_config_is_written_back_as_read() {
    let mut paths = Vec::new();
    records(Path::new("results"), &mut paths);
    // The committed record sets, so the walk cannot pass by finding nothing.
    for dir in [
        "results/paper/",
        "results/init-study/",
        "results/init-study-long/",
    ] {
        let n = paths.iter().filter(|p| p.starts_with(dir)).count();
        assert!(n > 0, "no records under {dir}");
    }
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        let record: RunRecord = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: no longer reads: {e}", path.display()));
        let written = serde_json::to_value(&record.config).unwrap();
        if let Err(e) = keeps(&file["config"], &written, "config") {
            panic!("{}: {e}", path.display());
        }
        let again: at5::train::TrainConfig = serde_json::from_value(written).unwrap();
        assert_eq!(again, record.config, "{}", path.display());
        // The epochs too: a family's per-head numbers (AT5's slopes) are fields of the epoch.
        let epochs = serde_json::to_value(&record.epochs).unwrap();
        if let Err(e) = keeps(&file["epochs"], &epochs, "epochs") {
            panic!("{}: {e}", path.display());
        }
    }
}
