//! The original data files: `train.txt`, `dev.txt`, `test.txt`, one example a line.
//!
//! A line is space-separated tokens, then the label as its last field. Tokens: Reber letters
//! `B T P S X V E` (label a letter), Process digits `0`/`1` (label `0`/`1`), lag-k token ids
//! (label a token id), adding `value_marker` such as `0.1234_1` (label a real number). Blank
//! lines are skipped. Floats are written with Rust's shortest round-trip formatting, so writing
//! then loading gives back exactly the same data.
//!
//! What would load and then fail mid-training is refused here, naming the file and line: a
//! non-finite or huge adding value or label (`NaN`, `inf`, `1e39`), a marker other than -1, 0
//! or 1, a token id beyond [`MAX_TOKEN_ID`].
use super::{Example, Label, Sequence, TaskData, TaskKind, process50, reber};
use std::fmt::Write as _;
use std::path::Path;

/// The original code's split files, in train, dev, test order.
pub const SPLIT_FILES: [&str; 3] = ["train.txt", "dev.txt", "test.txt"];

/// The largest token id a lag-k file may hold. An id is a row of the embedding table, so an id
/// this large is a corrupt file, not a vocabulary (2^24 rows of width 32 with their optimizer
/// state already take gigabytes); ids below it are left to the memory check.
pub const MAX_TOKEN_ID: usize = 1 << 24;

/// The largest magnitude of an adding value or label. The loss squares errors in f32, so a
/// finite but huge target (`1e30`) would overflow to a non-finite loss mid-training.
pub const MAX_ADDING_MAGNITUDE: f32 = 1e6;

/// Where the sizes of a loaded directory come from, for messages about what does not fit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extremes {
    /// `file:line` of the longest sequence, and its length.
    pub longest: (String, usize),
    /// `file:line` of the largest token id or class label, and the id (token tasks only).
    pub largest_id: Option<(String, usize)>,
}

/// Loads `train.txt`, `dev.txt` and `test.txt` from `dir` as `task` (one example a line:
/// space-separated tokens, then the label); errors name the file and line.
pub fn load_dir(dir: &Path, task: TaskKind) -> Result<TaskData, String> {
    load_dir_with_extremes(dir, task).map(|(data, _)| data)
}

/// [`load_dir`], also saying which lines hold the longest sequence and the largest token id.
pub fn load_dir_with_extremes(dir: &Path, task: TaskKind) -> Result<(TaskData, Extremes), String> {
    let mut splits: [Vec<Example>; 3] = Default::default();
    let mut extremes = Extremes::default();
    for (split, file) in splits.iter_mut().zip(SPLIT_FILES) {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let name = path.display().to_string();
        let (examples, lines) = parse_lines(&text, task, &name)?;
        for (e, line) in examples.iter().zip(lines) {
            let at = || format!("{name}:{line}");
            if e.input.len() > extremes.longest.1 {
                extremes.longest = (at(), e.input.len());
            }
            let id = e.input.tokens().into_iter().flatten().copied();
            if let Some(m) = id.chain(e.label.class()).max()
                && extremes.largest_id.as_ref().is_none_or(|(_, x)| m > *x)
            {
                extremes.largest_id = Some((at(), m));
            }
        }
        *split = examples;
    }
    if task == TaskKind::Adding {
        extremes.largest_id = None;
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
    let data = TaskData::assemble(
        task.name().into(),
        task,
        splits,
        training_nums,
        vocab_size,
        num_classes,
    )
    .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok((data, extremes))
}

/// Parses the text of one split file; `file` names it in error messages.
pub fn parse_split(text: &str, task: TaskKind, file: &str) -> Result<Vec<Example>, String> {
    parse_lines(text, task, file).map(|(examples, _)| examples)
}

/// The examples of one split file and the (1-based) line each came from.
fn parse_lines(
    text: &str,
    task: TaskKind,
    file: &str,
) -> Result<(Vec<Example>, Vec<usize>), String> {
    let (mut out, mut lines) = (Vec::new(), Vec::new());
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
        lines.push(i + 1);
    }
    if out.is_empty() {
        return Err(format!(
            "{file}: no examples (expected one example a line: tokens then the label)"
        ));
    }
    Ok((out, lines))
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
            let what = format!("a token id >= 1 (and at most {MAX_TOKEN_ID})");
            let ids = toks
                .iter()
                .map(|t| token_id(t).ok_or_else(|| format!("expected {what}, got {t:?}")))
                .collect::<Result<Vec<_>, _>>()?;
            Example {
                input: Sequence::Tokens(ids),
                label: Label::Class(
                    token_id(label)
                        .ok_or_else(|| format!("expected {what} as the label, got {label:?}"))?,
                ),
            }
        }
        TaskKind::Adding => {
            let pairs = toks
                .iter()
                .map(|t| adding_pair(t))
                .collect::<Result<Vec<_>, _>>()?;
            let target = real(label, "label")?;
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
    s.parse().ok().filter(|&t| (1..=MAX_TOKEN_ID).contains(&t))
}

/// A finite real within [`MAX_ADDING_MAGNITUDE`]; `what` names it in the message. Rust parses
/// `NaN`, `inf` and `1e39` (as infinity) without complaint, so parsing alone lets them through.
fn real(s: &str, what: &str) -> Result<f32, String> {
    let x: f32 = s
        .parse()
        .map_err(|_| format!("expected a real-valued {what}, got {s:?}"))?;
    if !x.is_finite() || x.abs() > MAX_ADDING_MAGNITUDE {
        return Err(format!(
            "{what} {s:?} is not a finite number of magnitude at most {MAX_ADDING_MAGNITUDE:e}"
        ));
    }
    Ok(x)
}

fn adding_pair(t: &str) -> Result<[f32; 2], String> {
    let (v, m) = t
        .split_once('_')
        .ok_or_else(|| format!("expected a token like 0.5_1, got {t:?}"))?;
    let in_token = |e: String| format!("token {t:?}: {e}");
    let v = real(v, "value").map_err(in_token)?;
    let m = real(m, "marker").map_err(in_token)?;
    if ![-1.0, 0.0, 1.0].contains(&m) {
        return Err(in_token(format!("the marker must be -1, 0 or 1, got {m}")));
    }
    // `-0` is the marker 0 (and writes back as `0`).
    Ok([v, if m == 0.0 { 0.0 } else { m }])
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
