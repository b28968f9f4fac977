//! The original data files: `train.txt`, `dev.txt`, `test.txt`, one example a line.
//!
//! A line is space-separated tokens, then the label as its last field. Tokens: Reber letters
//! `B T P S X V E` (label a letter), Process digits `0`/`1` (label `0`/`1`), lag-k token ids
//! (label a token id), adding `value_marker` such as `0.1234_1` (label a real number). Blank
//! lines are skipped. Floats are written with Rust's shortest round-trip formatting, so writing
//! then loading gives back exactly the same data.
use super::{Example, Label, Sequence, TaskData, TaskKind, process50, reber};
use std::fmt::Write as _;
use std::path::Path;

/// The original code's split files, in train, dev, test order.
pub const SPLIT_FILES: [&str; 3] = ["train.txt", "dev.txt", "test.txt"];

/// Loads `train.txt`, `dev.txt` and `test.txt` from `dir` as `task` (one example a line:
/// space-separated tokens, then the label); errors name the file and line.
pub fn load_dir(dir: &Path, task: TaskKind) -> Result<TaskData, String> {
    let mut splits: [Vec<Example>; 3] = Default::default();
    for (split, file) in splits.iter_mut().zip(SPLIT_FILES) {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        *split = parse_split(&text, task, &path.display().to_string())?;
    }
    let (vocab_size, num_classes) = match task {
        TaskKind::Reber => (reber::VOCAB_SIZE, reber::VOCAB_SIZE),
        TaskKind::Process50 => (process50::VOCAB_SIZE, 2),
        TaskKind::Adding => (0, 0),
        TaskKind::LagK => {
            let max_id = splits
                .iter()
                .flatten()
                .flat_map(|e| {
                    let toks = e.input.tokens().unwrap_or(&[]);
                    toks.iter().copied().chain(e.label.class())
                })
                .max()
                .unwrap_or(0);
            (max_id + 1, max_id + 1)
        }
    };
    let training_nums = task.default_training_nums().min(splits[0].len());
    TaskData::assemble(
        task.name().into(),
        task,
        splits,
        training_nums,
        vocab_size,
        num_classes,
    )
    .map_err(|e| format!("{}: {e}", dir.display()))
}

/// Parses the text of one split file; `file` names it in error messages.
pub fn parse_split(text: &str, task: TaskKind, file: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let at = |msg: String| format!("{file}:{}: {msg}", i + 1);
        let (label, toks) = fields.split_last().expect("fields is not empty");
        if toks.is_empty() {
            return Err(at(format!(
                "expected at least one token before the label, got only {label:?}"
            )));
        }
        out.push(parse_example(task, toks, label).map_err(at)?);
    }
    if out.is_empty() {
        return Err(format!(
            "{file}: no examples (expected one example a line: tokens then the label)"
        ));
    }
    Ok(out)
}

fn parse_example(task: TaskKind, toks: &[&str], label: &str) -> Result<Example, String> {
    let each = |f: fn(&str) -> Option<usize>, what: &str| -> Result<Vec<usize>, String> {
        toks.iter()
            .map(|t| f(t).ok_or_else(|| format!("expected {what}, got {t:?}")))
            .collect()
    };
    Ok(match task {
        TaskKind::Reber => {
            Example {
                input: Sequence::Tokens(each(reber_id, "a Reber symbol (B T P S X V E)")?),
                label: Label::Class(reber_id(label).ok_or_else(|| {
                    format!("expected a Reber symbol as the label, got {label:?}")
                })?),
            }
        }
        TaskKind::Process50 => Example {
            input: Sequence::Tokens(each(process_token, "a state 0 or 1")?),
            label: Label::Class(match label {
                "0" => 0,
                "1" => 1,
                _ => return Err(format!("expected the label 0 or 1, got {label:?}")),
            }),
        },
        TaskKind::LagK => {
            Example {
                input: Sequence::Tokens(each(token_id, "a token id >= 1")?),
                label: Label::Class(token_id(label).ok_or_else(|| {
                    format!("expected a token id >= 1 as the label, got {label:?}")
                })?),
            }
        }
        TaskKind::Adding => {
            let pairs = toks
                .iter()
                .map(|t| {
                    adding_pair(t).ok_or_else(|| format!("expected a token like 0.5_1, got {t:?}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let target: f32 = label
                .parse()
                .map_err(|_| format!("expected a real-valued label, got {label:?}"))?;
            Example {
                input: Sequence::Pairs(pairs),
                label: Label::Real(target),
            }
        }
    })
}

fn reber_id(s: &str) -> Option<usize> {
    let mut chars = s.chars();
    let (c, rest) = (chars.next()?, chars.next());
    if rest.is_some() {
        return None;
    }
    (1..reber::VOCAB_SIZE).find(|&i| reber::SYMBOLS[i] == c)
}

fn process_token(s: &str) -> Option<usize> {
    match s {
        "0" => Some(process50::STATE_TOKEN_OFFSET),
        "1" => Some(1 + process50::STATE_TOKEN_OFFSET),
        _ => None,
    }
}

fn token_id(s: &str) -> Option<usize> {
    s.parse().ok().filter(|&t| t >= 1)
}

fn adding_pair(s: &str) -> Option<[f32; 2]> {
    let (v, m) = s.split_once('_')?;
    Some([v.parse().ok()?, m.parse().ok()?])
}

/// Writes the three split files into `dir` (created if missing).
pub fn write_dir(dir: &Path, data: &TaskData) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    for (split, file) in [&data.train, &data.dev, &data.test]
        .into_iter()
        .zip(SPLIT_FILES)
    {
        let path = dir.join(file);
        let mut text = String::new();
        for (i, ex) in split.iter().enumerate() {
            format_example(&mut text, data.kind, ex)
                .map_err(|e| format!("{}: example {i}: {e}", path.display()))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

fn format_example(out: &mut String, task: TaskKind, ex: &Example) -> Result<(), String> {
    let bad_token = |t: usize| format!("token {t} has no symbol in the {} format", task.name());
    match (&ex.input, task) {
        (Sequence::Tokens(toks), TaskKind::Reber | TaskKind::Process50 | TaskKind::LagK) => {
            for &t in toks {
                match task {
                    TaskKind::Reber if (1..reber::VOCAB_SIZE).contains(&t) => {
                        out.push(reber::SYMBOLS[t])
                    }
                    TaskKind::Process50 if (1..process50::VOCAB_SIZE).contains(&t) => {
                        let _ = write!(out, "{}", t - process50::STATE_TOKEN_OFFSET);
                    }
                    TaskKind::LagK if t >= 1 => {
                        let _ = write!(out, "{t}");
                    }
                    _ => return Err(bad_token(t)),
                }
                out.push(' ');
            }
        }
        (Sequence::Pairs(pairs), TaskKind::Adding) => {
            for p in pairs {
                let _ = write!(out, "{}_{} ", p[0], p[1]);
            }
        }
        _ => return Err(format!("input does not fit the {} format", task.name())),
    }
    match (ex.label, task) {
        (Label::Class(c), TaskKind::Reber) if (1..reber::VOCAB_SIZE).contains(&c) => {
            out.push(reber::SYMBOLS[c])
        }
        (Label::Class(c @ (0 | 1)), TaskKind::Process50) => {
            let _ = write!(out, "{c}");
        }
        (Label::Class(c), TaskKind::LagK) if c >= 1 => {
            let _ = write!(out, "{c}");
        }
        (Label::Real(r), TaskKind::Adding) => {
            let _ = write!(out, "{r}");
        }
        (l, _) => {
            return Err(format!(
                "label {l:?} does not fit the {} format",
                task.name()
            ));
        }
    }
    out.push('\n');
    Ok(())
}
