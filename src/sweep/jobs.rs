//! Job lists: one `train … --continue` command per unfinished run, for GNU parallel or a Slurm
//! array, and which files a job list may replace.

use super::{Plan, RunSpec, finished};
use at5::report::write_atomic;
use std::path::Path;

/// One line per run for GNU parallel or a Slurm array: each runs `train` into the run's dir.
pub fn emit_jobs(specs: &[RunSpec], root: &Path, file: &Path) -> Result<(), String> {
    let mut text = String::new();
    for s in specs {
        let mut line = String::from("cargo run --release --quiet --bin train --");
        for f in &s.flags() {
            line.push(' ');
            line.push_str(&shell_quote(f));
        }
        let out = s.dir(root);
        line.push_str(&format!(
            " --out {} --continue --quiet --threads 1\n",
            shell_quote(&out.to_string_lossy())
        ));
        text.push_str(&line);
    }
    write_atomic(file, text.as_bytes())
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `--emit-jobs`: writes the unfinished runs' commands and says how to merge afterwards.
pub fn emit_unfinished(plan: &Plan, root: &Path, file: &Path) -> Result<(), String> {
    let todo: Vec<RunSpec> = plan
        .specs
        .iter()
        .filter(|s| finished(root, s).is_none())
        .cloned()
        .collect();
    emit_jobs(&todo, root, file)?;
    crate::outln!(
        "wrote {} command{} to {}; afterwards run `cargo run --release --bin merge -- {}`",
        todo.len(),
        if todo.len() == 1 { "" } else { "s" },
        file.display(),
        root.display()
    );
    Ok(())
}

/// `--emit-jobs FILE` may replace an earlier job list (every line a `--continue` job), never
/// another file, a folder, or one of the files the experiments keep in `root` (a plan, or a
/// file under `runs/`).
pub(super) fn check_jobs_file(file: &Path, root: &Path) -> Result<(), String> {
    let at = file.display();
    if file.is_dir() {
        return Err(format!("--emit-jobs {at}: is a folder; give a file path"));
    }
    // One spelling per place (`..` and links followed as far as the path exists), so
    // `root/../root/plan-x.json` is seen for what it is.
    let abs = |p: &Path| {
        let mut head = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let mut tail = Vec::new();
        while !head.exists() {
            match (head.file_name().map(|n| n.to_owned()), head.parent()) {
                (Some(name), Some(parent)) => {
                    tail.push(name);
                    head = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut resolved = std::fs::canonicalize(&head).unwrap_or(head);
        resolved.extend(tail.iter().rev());
        resolved
    };
    let f = abs(file);
    let is_plan = f.parent() == Some(abs(root).as_path())
        && f.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("plan-") && n.ends_with(".json"));
    if is_plan || f.starts_with(abs(&root.join("runs"))) {
        return Err(format!(
            "--emit-jobs {at}: would replace the experiment's own files in {}; write the job \
             list elsewhere",
            root.display()
        ));
    }
    let job_list = |text: String| {
        text.lines()
            .all(|l| l.trim().is_empty() || l.contains(" --continue"))
    };
    if file.exists() && !std::fs::read_to_string(file).is_ok_and(job_list) {
        return Err(format!(
            "--emit-jobs {at}: exists and is not a job list; give a new path, or remove it"
        ));
    }
    Ok(())
}
