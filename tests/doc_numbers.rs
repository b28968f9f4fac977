//! Docs that cannot drift: every number that docs/how-the-prior-is-learned.md, docs/theory.md,
//! docs/why-at5-starts-flat.md, docs/position-biases.md, docs/autodiff.md, docs/reproducing.md
//! and README.md quote from a run is made
//! again here by the command the page shows, at the size it states, and compared with the page
//! to the printed digits; a number the page reads from a committed result (a report, a record)
//! is compared with that file; a time is read from the committed records' `train_seconds`
//! (or, for a wall time, compared loosely with them). Runs are the same to the
//! bit at any thread count and on any CPU (every kernel path rounds alike: docs/autodiff.md), so
//! a mismatch means the code changed what the page describes: rerun the command and update it.
//!
//! The lag-k tour, the theory page's figure table and worked example, the tour's diagnostics and
//! `init-study --scaling` run here in seconds. Reber's and Process-50's runs and
//! `init-study --flat-start` take minutes, so they are `#[ignore]`d and
//! CI runs them in a step of its own (`cargo test --release --test doc_numbers -- --ignored`).
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const TOUR: &str = "docs/how-the-prior-is-learned.md";
const THEORY: &str = "docs/theory.md";
const README: &str = "README.md";
const AUTODIFF: &str = "docs/autodiff.md";
const FLAT: &str = "docs/why-at5-starts-flat.md";
const BIASES: &str = "docs/position-biases.md";
const REPRODUCING: &str = "docs/reproducing.md";

fn page(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Shell continuations joined and runs of white space made one space, so a command reads the
/// same however the page wraps it.
fn normalise(s: &str) -> String {
    s.replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The page shows `command` (up to wrapping).
fn shows(path: &str, text: &str, command: &str) {
    assert!(
        normalise(text).contains(&normalise(command)),
        "{path} no longer shows the command\n  {command}\nthat this test runs"
    );
}

/// The page says `line` exactly (up to wrapping), as the run made it today.
fn says(path: &str, text: &str, line: &str, from: &str) {
    assert!(
        normalise(text).contains(&normalise(line)),
        "{path} should say\n{line}\n(from {from}, as the code runs today): rerun the page's command and update it"
    );
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-doc-numbers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs one of the crate's binaries with the page's arguments, `runs/tour` moved to `root`.
fn run(bin: &str, args: &str, root: &Path) -> String {
    let (code, out) = run_exiting(bin, args, root);
    assert_eq!(code, 0, "{bin} {args}");
    out
}

/// `run` for a command that may fail: its exit code and standard output.
fn run_exiting(bin: &str, args: &str, root: &Path) -> (i32, String) {
    let exe = match bin {
        "train" => env!("CARGO_BIN_EXE_train"),
        "prior" => env!("CARGO_BIN_EXE_prior"),
        "buckets" => env!("CARGO_BIN_EXE_buckets"),
        "gradcheck" => env!("CARGO_BIN_EXE_gradcheck"),
        "init-study" => env!("CARGO_BIN_EXE_init-study"),
        "extrapolate" => env!("CARGO_BIN_EXE_extrapolate"),
        other => panic!("no binary {other}"),
    };
    let args: Vec<String> = normalise(args)
        .split(' ')
        .map(
            |a| match (a.strip_prefix("/tmp/"), a.starts_with("runs/tour")) {
                (Some(rest), _) => root.join(rest).to_str().unwrap().to_string(),
                (None, true) => root.join(a).to_str().unwrap().to_string(),
                _ => a.to_string(),
            },
        )
        .collect();
    // run in `root`, so a command's default output folder lands there too
    let out = Command::new(exe)
        .args(&args)
        .current_dir(root)
        .output()
        .expect("binary runs");
    let code = out.status.code().expect("an exit code");
    if code != 0 {
        // shown with the failing assertion, whichever caller makes it
        eprintln!("{bin} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    (code, String::from_utf8(out.stdout).unwrap())
}

/// Checks that the tour shows each `train` command, then runs them side by side in `root`.
fn train_as_shown(tour: &str, commands: &[&str], root: &Path) {
    for args in commands {
        shows(
            TOUR,
            tour,
            &format!("cargo run --release --bin train -- {args}"),
        );
    }
    std::thread::scope(|s| {
        for &args in commands {
            s.spawn(move || run("train", args, root));
        }
    });
}

/// The rows of every Markdown table in a binary's output or a committed report (each table's
/// header and rule left out), as cells.
fn table(out: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = out.lines().collect();
    let is_rule = |l: &str| l.starts_with('|') && l.chars().all(|c| "|-: ".contains(c));
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    (0..lines.len())
        .filter(|&i| lines[i].starts_with('|') && !is_rule(lines[i]))
        .filter(|&i| !lines.get(i + 1).is_some_and(|l| is_rule(l)))
        .map(|i| cells(lines[i]))
        .collect()
}

/// The row of `rows` whose first cells are `key`.
fn row<'a>(rows: &'a [Vec<String>], key: &[&str]) -> &'a [String] {
    rows.iter()
        .find(|r| r.len() >= key.len() && r.iter().zip(key).all(|(c, k)| c == k))
        .unwrap_or_else(|| panic!("no row {key:?}"))
}

/// A report's cell as a number (`1.4e0`, `0.36`, `99 %`).
fn num(cell: &str) -> f64 {
    cell.trim_end_matches('%')
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{cell:?} is not a number"))
}

fn record(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("record.json")).unwrap()).unwrap()
}

fn pct(x: &Value) -> String {
    format!("{:.1} %", 100.0 * x.as_f64().unwrap())
}

/// `a, b, c, d` from column `col` of every head's row.
fn per_head(rows: &[Vec<String>], col: usize) -> String {
    rows.iter()
        .map(|r| r[col].as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The row of a per-epoch table: the epoch, the mode and 90 % radius of every head, the chosen
/// saturation distances (columns 6 = `1/alpha`, 7 = `1/beta` of `prior`'s table) and the dev
/// accuracy at that epoch (none before training).
fn epoch_row(epoch: usize, rows: &[Vec<String>], distances: &[usize], rec: &Value) -> String {
    let mut cells = vec![epoch.to_string(), per_head(rows, 1), per_head(rows, 2)];
    cells.extend(distances.iter().map(|&c| per_head(rows, c)));
    cells.push(if epoch == 0 {
        "—".to_string()
    } else {
        pct(&rec["epochs"][epoch - 1]["dev"]["accuracy"])
    });
    format!("| {} |", cells.join(" | "))
}

/// A final checkpoint's row: the family, every head's mode, radius and mean KL, and the test
/// accuracy at the best dev epoch.
fn final_row(name: &str, rows: &[Vec<String>], rec: &Value) -> String {
    format!(
        "| {name} | {} | {} | {} | {} (epoch {}) |",
        per_head(rows, 1),
        per_head(rows, 2),
        per_head(rows, 3),
        pct(&rec["best"]["test"]["accuracy"]),
        rec["best"]["epoch"]
    )
}

const LAGK_TRAIN: &str = "--task lagk --seq-len 32 --lag 16 --bias $b --d-model 32 --lr 3e-3 \
     --epochs 80 --snapshots 0,20,40,50,60,80 --threads 1 --quiet --out runs/tour/lagk-$b";
const LAGK_EPOCHS: [usize; 6] = [0, 20, 40, 50, 60, 80];

/// The prior binary on one snapshot of a tour run, as the page shows it.
fn prior_at(run_dir: &str, epoch: usize, root: &Path) -> Vec<Vec<String>> {
    let args = format!(
        "--checkpoint runs/tour/{run_dir}/snapshots/epoch-{epoch:04}.bin --record \
         runs/tour/{run_dir}/record.json --out /tmp/{run_dir}-e{epoch} --threads 1"
    );
    table(&run("prior", &args, root))
}

/// The best-dev test accuracy of a run's first `epochs` epochs, from its record (the test split
/// is scored at each new best dev epoch, so the last scored epoch within the budget is it).
fn best_within(rec: &Value, epochs: usize) -> (String, u64) {
    let e = rec["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["epoch"].as_u64().unwrap() <= epochs as u64 && !e["test"].is_null())
        .unwrap();
    (pct(&e["test"]["accuracy"]), e["epoch"].as_u64().unwrap())
}

/// T5's ceiling on lag-16: a reader who sees the four tokens of the shared bucket, not which is
/// which, guesses their most frequent symbol; the label is one of the four, so it is right with
/// probability E[largest count] / 4 over four draws from eight symbols.
fn shared_bucket_ceiling() -> f64 {
    let mut total = 0usize;
    for draw in 0..8usize.pow(4) {
        let mut counts = [0usize; 8];
        for k in 0..4 {
            counts[draw / 8usize.pow(k) % 8] += 1;
        }
        total += counts.iter().max().unwrap();
    }
    total as f64 / (4.0 * 8f64.powi(4))
}

#[test]
fn the_lag_k_tour_readme_caption_and_worked_example_are_what_the_runs_give() {
    let tour = page(TOUR);
    let readme = page(README);
    let theory = page(THEORY);
    let root = tmp("lagk");
    shows(
        TOUR,
        &tour,
        &format!("for b in at5 t5 alibi; do cargo run --release --bin train -- {LAGK_TRAIN}"),
    );
    // the three runs, side by side on two cores
    std::thread::scope(|s| {
        for b in ["at5", "t5", "alibi"] {
            let root = &root;
            s.spawn(move || run("train", &LAGK_TRAIN.replace("$b", b), root));
        }
    });
    let dir = |b: &str| root.join(format!("runs/tour/lagk-{b}"));
    let at5 = record(&dir("at5"));

    // AT5's prior epoch by epoch
    shows(
        TOUR,
        &tour,
        "cargo run --release --bin prior -- --checkpoint runs/tour/lagk-at5/snapshots/epoch-0040.bin \
         --record runs/tour/lagk-at5/record.json --out /tmp/lagk-at5-e40",
    );
    let mut snaps = Vec::new();
    for e in LAGK_EPOCHS {
        let rows = prior_at("lagk-at5", e, &root);
        says(
            TOUR,
            &tour,
            &epoch_row(e, &rows, &[7], &at5),
            "the lag-k AT5 run",
        );
        snaps.push(rows);
    }
    let (first, last) = (&snaps[0], &snaps[LAGK_EPOCHS.len() - 1]);
    // "alpha_h did not move: its values at epochs 0 and 80 agree to four digits in every head"
    for h in 0..4 {
        assert_eq!(first[h][4], last[h][4], "alpha of head {h}");
    }
    let line = format!(
        "`1/beta_1` (second number of the `1/beta` column) went from {} to {}",
        first[1][7], last[1][7]
    );
    says(TOUR, &tour, &line, "the lag-k AT5 run");
    // "the other heads' 1/beta moved by less than 0.5"
    let dist = |rows: &Vec<Vec<String>>, h: usize| rows[h][7].parse::<f64>().unwrap();
    for h in [0, 2, 3] {
        for s in &snaps {
            assert!((dist(s, h) - dist(first, h)).abs() < 0.5, "head {h}");
        }
    }

    // the three families' final priors and accuracies
    for (b, name) in [("at5", "AT5"), ("t5", "T5"), ("alibi", "ALiBi")] {
        let args = format!(
            "--checkpoint runs/tour/lagk-{b}/checkpoint.bin --out /tmp/lagk-{b}-final --threads 1"
        );
        let rows = table(&run("prior", &args, &root));
        let rec = record(&dir(b));
        says(TOUR, &tour, &final_row(name, &rows, &rec), "the lag-k runs");
        let acc = pct(&rec["best"]["test"]["accuracy"]);
        says(README, &readme, &format!("({acc}"), "the lag-k runs");
        if b == "at5" {
            let radius = &rows[1][2];
            says(
                README,
                &readme,
                &format!("90 % of it within {radius} positions"),
                "AT5's head 1",
            );
        }
    }
    let ceiling = format!("{:.1} %", 100.0 * shared_bucket_ceiling());
    assert_eq!(ceiling, "41.2 %");
    // "T5 stays below that ceiling"
    let t5 = record(&dir("t5"))["best"]["test"]["accuracy"]
        .as_f64()
        .unwrap();
    assert!(t5 < shared_bucket_ceiling(), "T5 {t5}");
    says(TOUR, &tour, &ceiling, "four draws from eight symbols");

    // theory.md's worked example: offset -16 of head 1 at epoch 80
    let explain = "--checkpoint runs/tour/lagk-at5/checkpoint.bin --explain -16 --head 1";
    shows(
        THEORY,
        &theory,
        &format!("cargo run --release --bin prior -- {explain}"),
    );
    let out = run("prior", explain, &root);
    for line in out.lines() {
        says(THEORY, &theory, line, "`prior --explain -16 --head 1`");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_theory_figure_table_is_what_buckets_prints() {
    let theory = page(THEORY);
    let args = "--len 32 --num-buckets 32 --max-distance 32 --lag 16 --distances 4,16,64";
    shows(
        THEORY,
        &theory,
        &format!("cargo run --release --bin buckets -- {args}"),
    );
    let root = tmp("buckets");
    let rows = table(&run("buckets", args, &root));
    let cell = |m: usize, col: usize| rows[m][col].clone();
    // "distances 16–19 all get bucket 12"
    for m in 16..=19 {
        assert_eq!(cell(m, 1), "12", "distance {m}");
    }
    assert_ne!(cell(15, 1), "12");
    assert_ne!(cell(20, 1), "12");
    says(
        THEORY,
        &theory,
        "distances 16–19 all get bucket 12",
        "`buckets`",
    );
    for (col, d) in [(2, 4), (3, 16), (4, 64)] {
        let line = format!(
            "With `1/β = {d}`, `f(-16)` = {} and `f(-17)` = {}",
            cell(16, col),
            cell(17, col)
        );
        says(THEORY, &theory, &line, "`buckets`");
    }
    says(
        THEORY,
        &theory,
        &format!("`f(-31)` = {}", cell(31, 4)),
        "`buckets`",
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_tour_diagnostics_are_what_the_lag_3_run_records() {
    let tour = page(TOUR);
    let args = "--task lagk --lag 3 --bias at5 --epochs 5 --out /tmp/diag --quiet";
    shows(
        TOUR,
        &tour,
        &format!("cargo run --release --bin train -- {args}"),
    );
    let root = tmp("diag");
    run("train", args, &root);
    let rec = record(&root.join("diag"));
    let epochs = rec["epochs"].as_array().unwrap();
    let norms = |e: &Value, names: &[&str]| -> Vec<f64> {
        e["diagnostics"]["grad_norms"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| names.contains(&p[0].as_str().unwrap()))
            .map(|p| p[1].as_f64().unwrap())
            .collect()
    };
    let weights = ["bias.neg.w1", "bias.neg.w2", "bias.neg.w3"];
    let span = |e: &Value| {
        let w = norms(e, &weights);
        let (lo, hi) = w
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        format!(
            "{lo:.1e} to {hi:.1e}, `bias.c` {:.1e}",
            norms(e, &["bias.c"])[0]
        )
    };
    let line = format!(
        "epoch 1: {}; epoch 5: {}",
        span(&epochs[0]),
        span(&epochs[4])
    );
    says(TOUR, &tour, &line, "the lag-3 run's record");
    // "every head's prior keeps the entropy of the uniform distribution, ln 16 = 2.772589"
    for e in epochs {
        for h in e["diagnostics"]["prior_entropy"].as_array().unwrap() {
            assert_eq!(format!("{:.6}", h.as_f64().unwrap()), "2.772589");
        }
    }
    // "bias.a and every bias.pos tensor get exactly zero gradient"
    for e in epochs {
        for p in e["diagnostics"]["grad_norms"].as_array().unwrap() {
            let name = p[0].as_str().unwrap();
            let zero = name == "bias.a" || name.starts_with("bias.pos.");
            assert_eq!(p[1].as_f64().unwrap() == 0.0, zero, "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
#[ignore = "minutes: CI runs it (cargo test --release --test doc_numbers -- --ignored)"]
fn the_reber_tour_is_what_the_runs_give() {
    let tour = page(TOUR);
    let root = tmp("reber");
    let at5 = "--task reber --bias at5 --epochs 60 --snapshots 0,10,20,40,60 --threads 1 --quiet \
               --out runs/tour/reber-at5";
    let t5 = "--task reber --bias t5 --epochs 60 --threads 1 --quiet --out runs/tour/reber-t5";
    train_as_shown(&tour, &[at5, t5], &root);
    let rec = record(&root.join("runs/tour/reber-at5"));
    let mut distances = Vec::new();
    for e in [0, 10, 20, 40, 60] {
        let rows = prior_at("reber-at5", e, &root);
        says(
            TOUR,
            &tour,
            &epoch_row(e, &rows, &[7], &rec),
            "the Reber AT5 run",
        );
        distances.push(rows[2][7].clone());
    }
    // head 2's saturation distance, and the part of [0, 1) that f spans over 63 offsets
    let (d0, d60) = (&distances[0], &distances[4]);
    let span = |d: &str| format!("{:.2}", -(-63.0 / d.parse::<f64>().unwrap()).exp_m1());
    let line = format!(
        "went from {d0} at epoch 0 to {d60} at epoch 60. With `1/beta = {}`",
        d0.trim_end_matches(".00")
    );
    says(TOUR, &tour, &line, "the Reber AT5 run");
    let line = format!("only spans `[0, {}]`", span(d0));
    says(TOUR, &tour, &line, "f at head 2's distance");
    let line = format!("at {d60} it spans `[0, {}]`", span(d60));
    says(TOUR, &tour, &line, "f at head 2's distance");
    for (b, name) in [("at5", "AT5"), ("t5", "T5")] {
        let args = format!(
            "--checkpoint runs/tour/reber-{b}/checkpoint.bin --out /tmp/reber-{b}-final --threads 1"
        );
        let rows = table(&run("prior", &args, &root));
        let rec = record(&root.join(format!("runs/tour/reber-{b}")));
        says(TOUR, &tour, &final_row(name, &rows, &rec), "the Reber runs");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
#[ignore = "minutes: CI runs it (cargo test --release --test doc_numbers -- --ignored)"]
fn the_process_50_tour_is_what_the_runs_give() {
    let tour = page(TOUR);
    let root = tmp("process50");
    let at5 = "--task process50 --bias at5 --epochs 100 --snapshots 0,25,50,100 --threads 1 \
               --quiet --out runs/tour/process50-at5-100";
    let t5 = "--task process50 --bias t5 --epochs 100 --threads 1 --quiet --out \
              runs/tour/process50-t5-100";
    train_as_shown(&tour, &[at5, t5], &root);
    let rec = record(&root.join("runs/tour/process50-at5-100"));
    let mut snaps = Vec::new();
    for e in [0, 25, 50, 100] {
        let rows = prior_at("process50-at5-100", e, &root);
        says(
            TOUR,
            &tour,
            &epoch_row(e, &rows, &[6, 7], &rec),
            "the Process-50 AT5 run",
        );
        snaps.push(rows);
    }
    let (first, last) = (&snaps[0], &snaps[3]);
    let line = format!(
        "head 3's `1/alpha` went from {} to {} and its `1/beta` from {} to {}",
        first[3][6], last[3][6], first[3][7], last[3][7]
    );
    says(TOUR, &tour, &line, "the Process-50 AT5 run");
    // "and head 0's 1/alpha not at all"
    assert!(snaps.iter().all(|s| s[0][6] == first[0][6]));
    let mut first25 = Vec::new();
    for (b, name) in [("at5", "AT5"), ("t5", "T5")] {
        let args = format!(
            "--checkpoint runs/tour/process50-{b}-100/checkpoint.bin --out /tmp/p50-{b}-final \
             --threads 1"
        );
        let rows = table(&run("prior", &args, &root));
        let rec = record(&root.join(format!("runs/tour/process50-{b}-100")));
        says(
            TOUR,
            &tour,
            &final_row(name, &rows, &rec),
            "the Process-50 runs",
        );
        let (acc, epoch) = best_within(&rec, 25);
        first25.push(format!("{name} {acc} (epoch {epoch})"));
    }
    says(
        TOUR,
        &tour,
        &first25.join(", "),
        "the Process-50 records' first 25 epochs",
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_lag_4_exercise_is_what_the_run_gives() {
    let tour = page(TOUR);
    let train = "--task lagk --seq-len 16 --lag 4 --bias at5 --d-model 32 --lr 3e-3 --epochs 40 \
                 --threads 1 --quiet --out /tmp/lag4";
    let prior = "--checkpoint /tmp/lag4/checkpoint.bin";
    shows(
        TOUR,
        &tour,
        &format!("cargo run --release --bin train -- {train}"),
    );
    shows(
        TOUR,
        &tour,
        &format!("cargo run --release --bin prior -- {prior}"),
    );
    let root = tmp("lag4");
    run("train", train, &root);
    let out = run("prior", &format!("{prior} --threads 1"), &root);
    let rec = record(&root.join("lag4"));
    let head = out
        .lines()
        .find(|l| l.starts_with("| 1 "))
        .expect("head 1's row");
    says(TOUR, &tour, head, "`prior` on the lag-4 run");
    says(
        TOUR,
        &tour,
        &format!(
            "reaches {} dev accuracy at epoch {}",
            pct(&rec["best"]["dev"]["accuracy"]),
            rec["best"]["epoch"]
        ),
        "the lag-4 run's record",
    );
    let first = 1.0 / rec["epochs"][0]["beta"][1].as_f64().unwrap();
    let cells: Vec<&str> = head.split('|').map(str::trim).collect();
    says(
        TOUR,
        &tour,
        &format!("went from {first:.2} (after epoch 1) to {}", cells[8]),
        "the lag-4 run",
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_gradcheck_output_in_autodiff_md_is_what_the_binary_prints() {
    let doc = page(AUTODIFF);
    let command = "cargo run --release --bin gradcheck -- --bias at5";
    let at = doc
        .find(command)
        .expect("autodiff.md shows the gradcheck command");
    let block = doc[at..]
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the output block after the command");
    let root = tmp("gradcheck");
    let out = run("gradcheck", "--bias at5", &root);
    let printed: Vec<&str> = out.lines().collect();
    let shown: Vec<&str> = block.lines().filter(|l| *l != "...").collect();
    assert!(shown.len() > 10, "{block}");
    for line in shown {
        assert!(
            printed.contains(&line),
            "{AUTODIFF} shows\n{line}\nwhich `{command}` no longer prints: update the block"
        );
    }
    // "9.604 at h = 1e-3, 9604 at h = 1e-6 at the default seed"
    let t5 = run("gradcheck", "--bias t5", &root);
    assert!(
        t5.contains("9.604e0 at h = 1e-3, 9.604e3 at h = 1e-6"),
        "{t5}"
    );
    says(
        AUTODIFF,
        &doc,
        "(9.604 at h = 1e-3, 9604 at h = 1e-6 at the default seed)",
        "`gradcheck --bias t5`",
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_negative_control_in_autodiff_md_is_what_the_binary_prints() {
    let doc = page(AUTODIFF);
    let root = tmp("negative-control");
    shows(
        AUTODIFF,
        &doc,
        "`--perturb-backward` is the negative control",
    );
    let (code, out) = run_exiting("gradcheck", "--bias at5 --perturb-backward", &root);
    assert_eq!(code, 1, "{out}");
    let rows = table(&out);
    let (rest, bias): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r[2] == "(rest of the model)");
    assert!(!rest.is_empty() && bias.len() > 4, "{out}");
    assert!(rest.iter().all(|r| r[8] == "pass"), "{out}");
    assert!(bias.iter().all(|r| r[8] == "FAIL"), "{out}");
    // a sign error doubles the difference: |−g − g| = 2|g|, twice the gradient relative to it
    for r in &bias {
        let twice = num(&r[6]) / num(&r[5]);
        assert!((1.9..2.1).contains(&twice), "{r:?}");
    }
    let rel = &bias[0][7];
    assert!(bias.iter().all(|r| &r[7] == rel), "{out}");
    let line = format!(
        "Every bias row then reads `FAIL` (absolute error twice the gradient, relative error {rel}), \
         the rest-of-model rows still pass, and the binary exits with code {code}"
    );
    says(
        AUTODIFF,
        &doc,
        &line,
        "`gradcheck --bias at5 --perturb-backward`",
    );
    // at the paper's init the floor hides the sign error in `a` and `c`
    let args = "--bias at5 --perturb-backward --init-std 0.01";
    let (_, out) = run_exiting("gradcheck", args, &root);
    for r in table(&out).iter().filter(|r| r[2] == "a" || r[2] == "c") {
        assert_eq!(r[8], "pass", "{r:?}");
    }
    says(
        AUTODIFF,
        &doc,
        "With `--init-std 0.01` as well, `a` and `c` still *pass*",
        "`gradcheck --perturb-backward --init-std 0.01`",
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_alibi_examples_of_theory_md_and_position_biases_md_are_their_arithmetic() {
    let theory = page(THEORY);
    let biases = page(BIASES);
    let softmax = |x: &[f64]| {
        let z: f64 = x.iter().map(|v| v.exp()).sum();
        x.iter().map(|v| v.exp() / z).collect::<Vec<f64>>()
    };
    let show = |p: &[f64]| {
        let cells: Vec<String> = p.iter().map(|v| format!("{v:.3}")).collect();
        format!("({})", cells.join(", "))
    };
    // slope 1/2, query i = 1, keys j = 0..3: b = -|j - i| / 2
    let bias: Vec<f64> = (0..4).map(|j: i32| -((j - 1).abs() as f64) / 2.0).collect();
    let prior = softmax(&bias);
    says(
        THEORY,
        &theory,
        &format!("`softmax = {}`", show(&prior)),
        "the arithmetic",
    );
    // content scores (0, 0, 1, 0): the posterior is softmax(bias + scores)
    let post = softmax(&[bias[0], bias[1], bias[2] + 1.0, bias[3]]);
    says(
        THEORY,
        &theory,
        &format!("renormalised: `{}`", show(&post)),
        "the arithmetic",
    );
    // position-biases.md's table, normaliser and posterior
    for j in 0..4 {
        let line = format!(
            "| {j} | {} | {} | {:.4} | {:.3} |",
            j - 1,
            if bias[j as usize] == 0.0 {
                "0".to_string()
            } else {
                format!("{:.1}", bias[j as usize])
            },
            bias[j as usize].exp(),
            prior[j as usize]
        );
        says(BIASES, &biases, &line, "the arithmetic");
    }
    let z: f64 = bias.iter().map(|b| b.exp()).sum();
    says(
        BIASES,
        &biases,
        &format!("(`Z = {z:.4}`.)"),
        "the arithmetic",
    );
    let weighted: f64 = prior[0] + prior[1] + prior[2] * 1f64.exp() + prior[3];
    let cells: Vec<String> = post.iter().map(|v| format!("{v:.3}")).collect();
    let line = format!("/ {weighted:.4} = {}", cells.join(", "));
    says(BIASES, &biases, &line, "the arithmetic");
}

/// The most likely Process-50 sequence, by a Viterbi pass over each class's chain (its first
/// state drawn from the generator's start distribution), as position-biases.md quotes it.
#[test]
fn the_most_likely_process_50_sequence_is_what_position_biases_md_says() {
    use at5::data::process50::{CHAINS, FIRST_STATE_ZERO};
    let biases = page(BIASES);
    let len: i32 = 50;
    let best = CHAINS
        .iter()
        .map(|c| {
            let step = [[1.0 - c.p01, c.p01], [c.p10, 1.0 - c.p10]];
            let mut p = [FIRST_STATE_ZERO, 1.0 - FIRST_STATE_ZERO];
            for _ in 1..len {
                p = [0, 1].map(|to| {
                    (0..2)
                        .map(|from| p[from] * step[from][to])
                        .fold(0.0, f64::max)
                });
            }
            p[0].max(p[1])
        })
        .fold(0.0, f64::max);
    let all_zero = FIRST_STATE_ZERO * (1.0 - CHAINS[0].p01).powi(len - 1);
    assert!(
        (best - all_zero).abs() < 1e-12 * all_zero,
        "the most likely sequence is class 0's all-zero one: {best} vs {all_zero}"
    );
    says(
        BIASES,
        &biases,
        &format!(
            "probability about {best:.0e} (class 0's all-zero sequence, 2/3 · {}^{} = {best:.1e})",
            1.0 - CHAINS[0].p01,
            len - 1
        ),
        "the generator's chains",
    );
}

/// When the paper run's Adding-500 runs start to learn: the first epoch whose dev accuracy
/// reaches 30 % (chance is about 15 %), per family, as the README's table and
/// why-at5-starts-flat.md quote it.
#[test]
fn adding_500_learns_late_as_the_pages_say() {
    let first_over = |rec: &Value| {
        let epochs = rec["epochs"].as_array().unwrap();
        epochs
            .iter()
            .position(|e| e["dev"]["accuracy"].as_f64().unwrap() >= 0.3)
            .map(|i| i + 1)
            .expect("every Adding-500 run of T5 and AT5 learns the task")
    };
    let range = |family: &str| {
        let firsts: Vec<usize> = paper_runs("adding-500", &[family])
            .iter()
            .map(first_over)
            .collect();
        assert_eq!(firsts.len(), 5, "five seeds of {family}");
        span(firsts.iter().map(|&e| e as f64), |x| format!("{x}"))
    };
    let (t5, at5) = (range("t5"), range("at5"));
    says(
        README,
        &page(README),
        &format!("dev accuracy first reaches 30 % at epochs {t5} (T5) and {at5} (AT5)"),
        "results/paper's Adding-500 records",
    );
    says(
        FLAT,
        &page(FLAT),
        &format!("its dev accuracy first reaches 30 % at epochs {at5}"),
        "results/paper's Adding-500 records",
    );
}

/// The first epoch whose dev accuracy is above `level`, counted from 1.
fn first_dev_at(rec: &Value, level: f64) -> usize {
    rec["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["dev"]["accuracy"].as_f64().unwrap() > level)
        .map(|i| i + 1)
        .expect("the run gets above the level")
}

/// paper-std01's running notes on its finished Process-50 runs and on the first departures
/// run are what their committed records hold.
#[test]
fn the_paper_std01_running_notes_are_the_committed_records() {
    const NOTES: &str = "results/paper-std01/README.md";
    let notes = page(NOTES);
    let p50 = records("results/paper-std01", "process50-at5-s");
    assert_eq!(p50.len(), 5);
    assert!(p50.iter().all(|r| r["status"] == "completed"));
    let from = "results/paper-std01/runs/process50-at5-s{1..5}";
    let line = format!(
        "**Process-50, complete (5 seeds): {}** (best dev\n  epochs {} of 100)",
        each_of(&p50, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&p50, |r| r["best"]["epoch"].to_string()),
    );
    says(NOTES, &notes, &line, from);
    let line = format!(
        "dev first\n  above 80 % at epochs {}",
        each_of(&p50, |r| first_dev_at(r, 0.8).to_string())
    );
    says(NOTES, &notes, &line, from);
    let minutes: Vec<f64> = p50
        .iter()
        .map(|r| r["train_seconds"].as_f64().unwrap() / 60.0)
        .collect();
    let line = format!(
        "{} minutes of one\n  core a run",
        span(minutes, |m| format!("{m:.0}"))
    );
    says(NOTES, &notes, &line, from);
    // C1 on Process-50 at std 0.1, against T5 and against AT5 at std 0.01 (`paper/`).
    let interval = |a: &[f64], b: &[f64]| {
        let (d, lo, hi) = at5::report::welch_interval(a, b).unwrap();
        (
            format!("{} [{}, {}]", signed(d), signed(lo), signed(hi)),
            lo > 0.0 || hi < 0.0,
        )
    };
    let tests = |dir: &str, prefix: &str| -> Vec<f64> {
        records(dir, prefix).iter().map(best_test).collect()
    };
    let a01: Vec<f64> = p50.iter().map(best_test).collect();
    let t5 = tests("results/paper", "process50-t5-s");
    let a001 = tests("results/paper", "process50-at5-s");
    assert_eq!((t5.len(), a001.len()), (5, 5));
    let cell = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.1} ± {s:.1} %")
    };
    let (vs_t5, separated) = interval(&a01, &t5);
    assert!(separated, "the notes call AT5 (0.1) − T5 separated");
    let (vs_t5_001, separated) = interval(&a001, &t5);
    assert!(separated, "and AT5 (0.01) − T5 too");
    let (vs_std, separated) = interval(&a01, &a001);
    assert!(!separated, "the notes call the two stds not separated");
    let line = format!(
        "AT5 (0.1) {} against T5's {} (`../paper/`): AT5 − T5 = {vs_t5},\n    **separated**, \
         as at std 0.01 ({vs_t5_001})",
        cell(&a01),
        cell(&t5)
    );
    says(NOTES, &notes, &line, from);
    let line = format!("AT5 (0.1) − AT5 (0.01) = {vs_std}, not separated");
    says(NOTES, &notes, &line, from);
    let line = format!(
        "AT5 at 0.1 is {}, AT5 − T5 = {vs_t5},\n  separated (at 0.01: {vs_t5_001})",
        cell(&a01)
    );
    says(README, &page(README), &line, from);
    // Reber AT5-NoB at std 0.1 against std 0.01, five seeds each.
    let nob = seed_records("paper-std01", "reber-at5-nob", 1..=5);
    assert!(nob.iter().all(|r| r["status"] == "completed"));
    let nob001 = tests("results/paper", "reber-at5-nob-s");
    assert_eq!(nob001.len(), 5);
    let solved = nob001.iter().filter(|&&a| a > 99.0).count();
    assert_eq!(solved, 4, "the notes say 4 of 5 seeds solve it at std 0.01");
    let line = format!(
        "**Reber AT5-NoB, complete (5 seeds): {}** (best dev epochs {}), as at std 0.01, where \
         AT5-NoB solves Reber in 4 of 5 seeds ({}, `../paper/`).",
        each_of(&nob, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&nob, |r| r["best"]["epoch"].to_string()),
        cell(&nob001)
    );
    says(
        NOTES,
        &notes,
        &line,
        "results/paper{-std01,}/runs/reber-at5-nob-s*",
    );
    let deps = seed_records("paper-departures", "reber-at5", 1..=5);
    assert!(deps.iter().all(|r| r["status"] == "completed"));
    let line = format!(
        "Dev above 60 % at epochs {}, above 90 % at {}; {} test at the best dev epochs {}",
        each_of(&deps, |r| first_dev_at(r, 0.6).to_string()),
        each_of(&deps, |r| first_dev_at(r, 0.9).to_string()),
        each_of(&deps, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&deps, |r| r["best"]["epoch"].to_string()),
    );
    says(
        NOTES,
        &notes,
        &line,
        "results/paper-departures/runs/reber-at5-s{1..5}",
    );
    // T5 under the same departures, and AT5 − T5 there, in the notes, the README and the
    // paper run's reading.
    let t5 = seed_records("paper-departures", "reber-t5", 1..=5);
    assert!(t5.iter().all(|r| r["status"] == "completed"));
    let pct2 = |r: &Value| {
        format!(
            "{:.2} %",
            100.0 * r["best"]["test"]["accuracy"].as_f64().unwrap()
        )
    };
    let line = format!(
        "**The departures, T5 on Reber complete**: {} test (best dev epochs {} of 500)",
        each_of(&t5, pct2),
        each_of(&t5, |r| r["best"]["epoch"].to_string()),
    );
    says(
        NOTES,
        &notes,
        &line,
        "results/paper-departures/runs/reber-t5-s{1..5}",
    );
    let (a, t): (Vec<f64>, Vec<f64>) = (
        deps.iter().map(best_test).collect(),
        t5.iter().map(best_test).collect(),
    );
    let cell = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.1} ± {s:.1} %")
    };
    let (d, lo, hi) = at5::report::welch_interval(&a, &t).unwrap();
    assert!(lo < 0.0 && hi > 0.0, "the notes call it not separated");
    let diff = format!("{} [{}, {}]", signed(d), signed(lo), signed(hi));
    let from = "results/paper-departures/runs/reber-{at5,t5}-s{1..5}";
    says(
        NOTES,
        &notes,
        &format!(
            "AT5 is {} and T5 {}: AT5 − T5 = {diff}, **not separated**",
            cell(&a),
            cell(&t)
        ),
        from,
    );
    let both = format!(
        "AT5 {}, T5 {}, AT5 − T5 = {diff}, not separated",
        cell(&a),
        cell(&t)
    );
    says(README, &page(README), &both, from);
    let reading = "results/paper/README.md";
    says(
        reading,
        &page(reading),
        &format!("AT5 {}, T5 {}, AT5 − T5 = {diff}, not", cell(&a), cell(&t)),
        from,
    );
    let departures = "results/paper-departures/README.md";
    let pct2s: Vec<String> = t5.iter().map(|r| format!("{:.2}", best_test(r))).collect();
    let (last, rest) = pct2s.split_last().unwrap();
    says(
        departures,
        &page(departures),
        &format!(
            "AT5 100.0 % test in every seed, T5 {} and {last} %; AT5 − T5 = {diff}, not separated",
            rest.join(", ")
        ),
        from,
    );
    assert!(a.iter().all(|&x| x == 100.0));
    // The two departures one at a time: each family's seeds finished so far (a running run's
    // folder, never committed, is passed over), what each reached, and the reading the notes
    // give.
    let alone = |set: &str, bias: &str, places: usize| -> (String, Vec<f64>, String) {
        let done = finished_seeds(set, &format!("reber-{bias}"));
        assert!(!done.is_empty(), "{set}: no finished {bias} run");
        let and = |xs: Vec<String>| match xs.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => xs.concat(),
        };
        let seeds = and(done.iter().map(|(s, _)| s.to_string()).collect());
        let tests: Vec<f64> = done.iter().map(|(_, r)| best_test(r)).collect();
        let cells = format!(
            "{} % test; best dev epochs {}",
            and(tests.iter().map(|t| format!("{t:.places$}")).collect()),
            and(done
                .iter()
                .map(|(_, r)| r["best"]["epoch"].to_string())
                .collect())
        );
        (seeds, tests, cells)
    };
    let (init_seeds, init, init_cells) = alone("paper-head-init", "at5", 1);
    let (mask_seeds, mask, mask_cells) = alone("paper-head-mask", "at5", 1);
    assert!(
        init.iter().all(|&t| t >= 99.0),
        "the Glorot output layer alone: {init:?}"
    );
    assert!(
        mask.iter().all(|&t| t <= 60.0),
        "the head mask alone: {mask:?}"
    );
    says(
        NOTES,
        &notes,
        &format!(
            "with the Glorot output layer alone AT5 solves Reber in seeds {init_seeds} \
             ({init_cells}); with the head mask alone it stays at chance in seeds {mask_seeds} \
             ({mask_cells})"
        ),
        "results/paper-head-{init,mask}/runs/reber-at5-s*",
    );
    let cell = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.1} ± {s:.1} %")
    };
    assert_eq!((init.len(), mask.len()), (5, 5), "the README counts 5 of 5");
    says(
        README,
        &page(README),
        &format!(
            "with it alone AT5 solves Reber in 5 of 5 seeds ({}), with the head mask alone in \
             none ({})",
            cell(&init),
            cell(&mask)
        ),
        "results/paper-head-{init,mask}/runs/reber-at5-s*",
    );
    says(
        NOTES,
        &notes,
        &format!(
            "(AT5 {} with it alone, {} with the mask alone)",
            cell(&init),
            cell(&mask)
        ),
        "results/paper-head-{init,mask}/runs/reber-at5-s*",
    );
    let biases_page = "docs/position-biases.md";
    let paper_at5 = best_tests("results/paper", "reber-at5-s");
    for line in [
        format!(
            "solved in 5 of 5 ({}, against {} under revision 1)",
            cell(&init),
            cell(&paper_at5)
        ),
        format!("leaves AT5 at chance in 5 of 5 seeds ({})", cell(&mask)),
    ] {
        says(
            biases_page,
            &page(biases_page),
            &line,
            "results/paper{,-head-init,-head-mask}/runs/reber-at5-s*",
        );
    }
    let (init_seeds, _, init_cells) = alone("paper-head-init", "t5", 2);
    let (mask_seeds, _, mask_cells) = alone("paper-head-mask", "t5", 2);
    says(
        NOTES,
        &notes,
        &format!(
            "with the output layer alone seeds {init_seeds} ({init_cells}); with the head mask \
             alone seeds {mask_seeds} ({mask_cells})"
        ),
        "results/paper-head-{init,mask}/runs/reber-t5-s*",
    );
    // Revision 2's Reber cells: the output layer alone, both families complete.
    let (a2, t2): (Vec<f64>, Vec<f64>) = (
        seed_records("paper-head-init", "reber-at5", 1..=5)
            .iter()
            .map(best_test)
            .collect(),
        seed_records("paper-head-init", "reber-t5", 1..=5)
            .iter()
            .map(best_test)
            .collect(),
    );
    let cell2 = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.2} ± {s:.2} %")
    };
    let signed2 = |x: f64| format!("{x:+.2}").replace('-', "−");
    let (d2, lo2, hi2) = at5::report::welch_interval(&a2, &t2).unwrap();
    assert!(
        lo2 > 0.0 && d2 < 0.1,
        "the pages call it separated by a hair: {d2} [{lo2}, {hi2}]"
    );
    let rev2 = format!(
        "AT5 {}, T5 {}, AT5 − T5 = {} [{}, {}]",
        cell2(&a2),
        cell2(&t2),
        signed2(d2),
        signed2(lo2),
        signed2(hi2)
    );
    for page_path in [NOTES, README] {
        says(
            page_path,
            &page(page_path),
            &rev2,
            "results/paper-head-init/runs/reber-{at5,t5}-s{1..5}",
        );
    }
    // The paper set's reading names the departure that decides it, with both sets' cells.
    says(
        reading,
        &page(reading),
        &format!(
            "with the original's alone AT5 solves Reber in 5 of 5 seeds ({}, AT5 − T5 = {} [{}, \
             {}]; `../paper-head-init/`), with the head mask alone in none ({}; \
             `../paper-head-mask/`)",
            cell(&init),
            signed2(d2),
            signed2(lo2),
            signed2(hi2),
            cell(&mask)
        ),
        "results/paper-head-{init,mask}/runs/reber-{at5,t5}-s*",
    );
    // ... and in the set's own reading, with when each run first passed 90 % dev.
    let init_page = "results/paper-head-init/README.md";
    let first90 = |bias: &str| -> String {
        let v: Vec<String> = (1..=5)
            .map(|s| {
                let r = record(Path::new(&format!(
                    "results/paper-head-init/runs/reber-{bias}-s{s}"
                )));
                first_dev_at(&r, 0.9).to_string()
            })
            .collect();
        let (last, rest) = v.split_last().unwrap();
        format!("{} and {last}", rest.join(", "))
    };
    let t5_tests: Vec<String> = t2.iter().map(|t| format!("{t:.2}")).collect();
    let (last, rest) = t5_tests.split_last().unwrap();
    for line in [
        format!(
            "AT5 100.0 % test in every seed, T5 {} and {last} %: AT5 − T5 = {} [{}, {}]",
            rest.join(", "),
            signed2(d2),
            signed2(lo2),
            signed2(hi2)
        ),
        format!(
            "dev first above 90 % at epochs {} (T5: {})",
            first90("at5"),
            first90("t5")
        ),
    ] {
        says(
            init_page,
            &page(init_page),
            &line,
            "results/paper-head-init/runs/reber-{at5,t5}-s{1..5}",
        );
    }
    assert!(a2.iter().all(|&x| x == 100.0));
    let flat = "docs/why-at5-starts-flat.md";
    let at5_first90 = (1..=5).map(|s| {
        first_dev_at(
            &record(Path::new(&format!(
                "results/paper-head-init/runs/reber-at5-s{s}"
            ))),
            0.9,
        ) as f64
    });
    says(
        flat,
        &page(flat),
        &format!(
            "leaves chance in 5 of 5 seeds (dev first above 90 % at epochs {};",
            span(at5_first90, |x| format!("{x}"))
        ),
        "results/paper-head-init/runs/reber-at5-s{1..5}",
    );
    // The one T5 run at chance under the mask: dev within a point of 50 % nearly throughout.
    let stuck = record(Path::new("results/paper-head-mask/runs/reber-t5-s1"));
    let dev = dev_accuracies(&stuck);
    let near = dev.iter().filter(|a| (*a - 0.5).abs() < 0.01).count();
    says(
        NOTES,
        &notes,
        &format!(
            "dev within a point of 50 % in {near} of its {} epochs; {} at its best, epoch {}",
            dev.len(),
            pct(&stuck["best"]["dev"]["accuracy"]),
            stuck["best"]["epoch"]
        ),
        "results/paper-head-mask/runs/reber-t5-s1",
    );
    // ... beside the paper preset's own Reber difference, from `results/paper/`'s records.
    let paper = |bias: &str| -> Vec<f64> {
        records("results/paper", &format!("reber-{bias}-s"))
            .iter()
            .map(best_test)
            .collect()
    };
    let (d, lo, hi) = at5::report::welch_interval(&paper("at5"), &paper("t5")).unwrap();
    let paper_diff = format!("{} [{}, {}]", signed(d), signed(lo), signed(hi));
    says(
        departures,
        &page(departures),
        &format!("In `../paper/` the same comparison is {paper_diff}, separated"),
        "results/paper/runs/reber-{at5,t5}-s{1..5}",
    );
    says(
        NOTES,
        &notes,
        &format!("at the paper preset the same difference is {paper_diff}, separated"),
        "results/paper/runs/reber-{at5,t5}-s{1..5}",
    );
    let mask_page = "results/paper-head-mask/README.md";
    let mask_t5 = best_tests("results/paper-head-mask", "reber-t5-s");
    assert_eq!((mask.len(), mask_t5.len()), (5, 5));
    let (dm, lom, him) = at5::report::welch_interval(&mask, &mask_t5).unwrap();
    assert!(him < 0.0, "the page calls it separated against AT5");
    says(
        mask_page,
        &page(mask_page),
        &format!(
            "AT5 {}, T5 {}, AT5 − T5 = {} [{}, {}], separated against AT5 — in `../paper/`, \
             with a bias on every head, {paper_diff}",
            cell(&mask),
            cell(&mask_t5),
            signed(dm),
            signed(lom),
            signed(him)
        ),
        "results/paper{,-head-mask}/runs/reber-{at5,t5}-s*",
    );
    let init_page = "results/paper-head-init/README.md";
    says(
        init_page,
        &page(init_page),
        &format!("(BERT's init) the same comparison is {paper_diff}, AT5 at chance"),
        "results/paper/runs/reber-{at5,t5}-s{1..5}",
    );
}

const SCALING: &str = "results/init-study/scaling.md";
const FLAT_START: &str = "results/init-study/flat-start.md";

/// `f` of each run, written as the notes list them: `a, b and c`.
fn each_of(runs: &[Value], f: impl Fn(&Value) -> String) -> String {
    let v: Vec<String> = runs.iter().map(f).collect();
    let (last, rest) = v.split_last().expect("at least one run");
    format!("{} and {last}", rest.join(", "))
}

/// `lo–hi` of `values` (each formatted by `f`), as the pages write a range.
fn span(values: impl IntoIterator<Item = f64>, f: impl Fn(f64) -> String) -> String {
    let (lo, hi) = values
        .into_iter()
        .fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
    format!("{}–{}", f(lo), f(hi))
}

/// The records of `results/{set}/runs/{run}-s{seed}`, one per seed of `seeds`.
fn seed_records(set: &str, run: &str, seeds: std::ops::RangeInclusive<u32>) -> Vec<Value> {
    seeds
        .map(|s| {
            record(
                &Path::new("results")
                    .join(set)
                    .join(format!("runs/{run}-s{s}")),
            )
        })
        .collect()
}

/// The seeds 1 to 5 of `results/{set}/runs/{run}-s*` that have finished, with their records: a
/// running run's folder, never committed, is passed over.
fn finished_seeds(set: &str, run: &str) -> Vec<(u32, Value)> {
    (1..=5)
        .map(|s| {
            (
                s,
                Path::new("results")
                    .join(set)
                    .join(format!("runs/{run}-s{s}")),
            )
        })
        .filter(|(_, d)| d.join("record.json").exists())
        .map(|(s, d)| (s, record(&d)))
        .filter(|(_, r)| r["status"] == "completed")
        .collect()
}

/// `x` to one decimal with its sign, the pages' minus sign for negatives.
fn signed(x: f64) -> String {
    format!("{x:+.1}").replace('-', "−")
}

/// The records of seeds 1 to 5 of `results/{set}/runs/{run}-s*`, every one finished: for a
/// note that calls a run complete.
fn all_five_finished(set: &str, run: &str) -> Vec<Value> {
    let (seeds, done): (Vec<u32>, Vec<Value>) = finished_seeds(set, run).into_iter().unzip();
    assert_eq!(
        seeds,
        [1, 2, 3, 4, 5],
        "{set}/{run}: the note covers all five seeds"
    );
    done
}

/// Every record under `dir/runs/` whose folder name starts with `prefix`, in name order.
fn records(dir: &str, prefix: &str) -> Vec<Value> {
    let mut names: Vec<String> = std::fs::read_dir(Path::new(dir).join("runs"))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no run {prefix}* in {dir}");
    names
        .iter()
        .map(|n| record(&Path::new(dir).join("runs").join(n)))
        .collect()
}

fn best_test(rec: &Value) -> f64 {
    100.0 * rec["best"]["test"]["accuracy"].as_f64().unwrap()
}

/// A record's dev accuracy per epoch.
fn dev_accuracies(rec: &Value) -> Vec<f64> {
    rec["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["dev"]["accuracy"].as_f64().unwrap())
        .collect()
}

/// The best-dev test accuracy (%) of every record under `dir/runs/` named `prefix*`.
fn best_tests(dir: &str, prefix: &str) -> Vec<f64> {
    records(dir, prefix).iter().map(best_test).collect()
}

/// The share of a standard normal truncated at ±2 (the init's) that lies below `t`, by
/// Simpson's rule.
fn truncated_normal_below(t: f64) -> f64 {
    let mass = |a: f64, b: f64| {
        let n = 2000;
        let h = (b - a) / n as f64;
        let sum: f64 = (0..=n)
            .map(|i| {
                let w = match i {
                    0 => 1.0,
                    _ if i == n => 1.0,
                    _ if i % 2 == 1 => 4.0,
                    _ => 2.0,
                };
                let z = a + i as f64 * h;
                w * (-z * z / 2.0).exp()
            })
            .sum();
        sum * h / 3.0
    };
    mass(-2.0, t) / mass(-2.0, 2.0)
}

#[test]
fn the_init_scaling_numbers_are_what_init_study_scaling_prints() {
    let flat = page(FLAT);
    let args = "--scaling --seeds 3";
    shows(
        FLAT,
        &flat,
        &format!("cargo run --release --bin init-study -- {args}"),
    );
    let root = tmp("scaling");
    let out = run("init-study", args, &root);
    assert_eq!(
        out.trim_end(),
        page(SCALING).trim_end(),
        "{SCALING} is no longer what `init-study {args}` prints: commit its output"
    );
    let rows = table(&out);
    // the exponents, b2 and b3 shown as the vanishing gradients they are
    for (len, widths) in [
        ("16", "15, 2"),
        ("16", "60, 8"),
        ("64", "15, 2"),
        ("64", "60, 8"),
    ] {
        let r = rows
            .iter()
            .find(|r| r.len() == 10 && r[0] == len && r[1] == widths)
            .expect("an exponent row");
        let line = format!(
            "| {len} | {widths} | {} | {} | {} | {} | (≈ 0) | (≈ 0) | {} | {} |",
            r[2], r[3], r[4], r[5], r[8], r[9]
        );
        says(FLAT, &flat, &line, "`init-study --scaling`");
    }
    let exps = row(&rows, &["16", "15, 2", "2.00"]);
    let line = format!("measured exponents {} and {}", exps[2], exps[8]);
    says(FLAT, &flat, &line, "`init-study --scaling`");
    // b3's gradient is rounding at every std, b2's until std 0.1
    for r in rows
        .iter()
        .filter(|r| r.len() == 11 && r[2].starts_with("paper"))
    {
        assert!(num(&r[8]) < 1e-19, "b3 {r:?}");
        assert_eq!(num(&r[7]) < 1e-20, r[2] != "paper, std 0.1", "b2 {r:?}");
    }
    // the absolute sizes at std 0.01 and L = 64
    let at = row(&rows, &["64", "15, 2", "paper, std 0.01"]);
    let t5 = rows.iter().find(|r| r.len() == 4 && r[0] == "64").unwrap();
    let line = format!(
        "the MLP weights' gradient norms are {}, {} and {} and the slope parameter `c`'s {} (per \
         element smaller still); T5's bias table, on the same batch, gets {}, and the rest of the \
         model {}",
        at[3],
        at[4],
        at[5],
        at[9],
        t5[1],
        num(&t5[2])
    );
    says(FLAT, &flat, &line, "`init-study --scaling`");
    let small = row(&rows, &["16", "15, 2", "paper, std 0.01"]);
    says(
        FLAT,
        &flat,
        &format!("at `s = 0.01` {} — measured below", small[10]),
        "`init-study --scaling`",
    );
    // the page's summary: the same sizes, weights as a range
    let line = format!(
        "puts them at {} and {} on a small lag-k model",
        span((3..=5).map(|c| num(&at[c])), |x| format!("{x:.1e}")).replace('–', " to "),
        at[9]
    );
    says(FLAT, &flat, &line, "`init-study --scaling`");
    // Adam's first step, the arithmetic of its ε̂
    let eps_hat = 1e-8 / (1.0f64 - 0.999).sqrt();
    let step = |g: f64| g / (g + eps_hat);
    for line in [
        format!("1e-8 / √0.001 ≈ {eps_hat:.1e}"),
        format!(
            "A gradient of 1e-9 moves its parameter at {:.1} % of the learning rate",
            100.0 * step(1e-9)
        ),
    ] {
        says(FLAT, &flat, &line, "Adam's first step");
    }
    assert_eq!(format!("{:.0}", step(1e-12) * 1e6), "3", "three millionths");
    // `b1`'s exception: first-layer units below −1/x at the far keys
    let line = format!(
        "a normal truncated at two standard deviations puts {:.0} % of units below −1",
        100.0 * truncated_normal_below(-1.0)
    );
    says(FLAT, &flat, &line, "the truncated normal");
    // widening the MLP, against the √(l1·l2) ratio
    let wide = row(&rows, &["16", "60, 8", "paper, std 0.01"]);
    let widening = span((3..=5).map(|c| num(&wide[c]) / num(&small[c])), |x| {
        format!("{x:.1}")
    });
    let line = format!(
        "multiplies the weights' gradients by {widening}× at L = 16 (std 0.01), against the \
         `√(l1·l2)` ratio of {} (`√480/√30`)",
        (480f64 / 30.0).sqrt()
    );
    says(FLAT, &flat, &line, "`init-study --scaling`");
    let shrink = span((3..=5).map(|c| num(&small[c]) / num(&at[c])), |x| {
        format!("{x:.1}")
    });
    let line = format!("from L = 16 to 64 the gradients shrink by {shrink}×");
    says(FLAT, &flat, &line, "`init-study --scaling`");
    // the alive start
    let alive: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() == 11 && r[2] == "alive")
        .collect();
    let ranges = span(alive.iter().map(|r| num(&r[10])), |x| format!("{x:.2}"));
    let weights = span(
        alive.iter().flat_map(|r| (3..=5).map(|c| num(&r[c]))),
        |x| format!("{x:.1e}"),
    );
    let slopes = span(alive.iter().map(|r| num(&r[9])), |x| format!("{x:.1e}"));
    let line = format!(
        "(bias range {ranges} in the scaling table, against {} for the paper's)",
        small[10]
    );
    says(FLAT, &flat, &line, "the alive rows");
    let line = format!(
        "the MLP weights' {} and the slope parameters' {}",
        weights.replace('–', " to "),
        slopes.replace('–', " to ")
    );
    says(FLAT, &flat, &line, "the alive rows");
    let _ = std::fs::remove_dir_all(&root);
}

/// A row of the committed flat-start report by task and variant.
fn flat_start<'a>(rows: &'a [Vec<String>], task: &str, variant: &str) -> &'a [String] {
    row(rows, &[task, variant])
}

#[test]
fn the_flat_start_numbers_are_the_committed_flat_start_report() {
    let flat = page(FLAT);
    let biases = page(BIASES);
    let readme = page(README);
    let rows = table(&page(FLAT_START));
    // §7's table: the report's rows without its rest-of-model column
    for (task, name) in [
        ("reber", "Reber"),
        ("process50", "Process-50"),
        ("lag-k L=64 k=32", "lag-k, L = 64, k = 32"),
        ("adding-100", "Adding-100"),
    ] {
        for std in ["0.01", "0.1"] {
            let r = flat_start(&rows, task, &format!("std {std}"));
            let line = format!(
                "| {name} | {std} | {} / {} / {} | {} | {} | {} | {} | {} |",
                r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]
            );
            says(FLAT, &flat, &line, FLAT_START);
        }
    }
    let steps = |r: &[String]| -> Vec<String> { r[6].split(" / ").map(str::to_string).collect() };
    let one_digit = |cell: &str| format!("{:.0e}", num(cell));
    // Reber at the paper's init and with the original head
    let reber = flat_start(&rows, "reber", "std 0.01");
    let reber01 = flat_start(&rows, "reber", "std 0.1");
    let glorot = flat_start(&rows, "reber", "std 0.01, original head");
    let (on, off) = reber[9].split_once(" / ").unwrap();
    let s = steps(reber);
    for line in [
        format!(
            "per element they are {} to {}",
            one_digit(&reber[3]),
            one_digit(&reber[4])
        ),
        format!(
            "move `w1` and `w2` at {:.0}–{:.0} % of the",
            num(&s[1]) * 100.0,
            num(&s[0]) * 100.0
        ),
        format!(
            "multiplies its norm by {:.0}, and at a fixed batch {on} of its energy changes from \
             one mask to the next ({off} without the MLP dropout)",
            num(&reber[8])
        ),
        format!("stays flat (range {}", reber[7]),
        format!(
            "every weight's first step is {} % of a learning rate and the bias range is {}",
            span(steps(reber01).iter().map(|x| num(x) * 100.0), |x| format!(
                "{x:.0}"
            )),
            reber01[7]
        ),
        format!(
            "the rest of the model's gradient norm is {:.1} against {:.1} with BERT's init, and \
             the MLP's {:.0}×, so its `w3` steps at {} of a learning rate instead of {}",
            num(&glorot[10]),
            num(&reber[10]),
            num(&glorot[4]) / num(&reber[4]),
            steps(glorot)[2],
            s[2]
        ),
        format!("bias starts flat to {}", one_digit(&reber[7])),
    ] {
        says(FLAT, &flat, &line, FLAT_START);
    }
    let line = format!(
        "gradient norm is {:.1} against {:.1}, and AT5's MLP gradients {:.0}× larger",
        num(&glorot[10]),
        num(&reber[10]),
        num(&glorot[4]) / num(&reber[4])
    );
    says(BIASES, &biases, &line, FLAT_START);
    let line = format!(
        "its bias starts flat to {}, and {} of its MLP's gradient",
        one_digit(&reber[7]),
        on
    );
    says(README, &readme, &line, FLAT_START);
    // Process-50, lag-k and Adding-100 at the paper's init
    let p50 = flat_start(&rows, "process50", "std 0.01");
    let lagk = flat_start(&rows, "lag-k L=64 k=32", "std 0.01");
    let lagk01 = flat_start(&rows, "lag-k L=64 k=32", "std 0.1");
    let adding = flat_start(&rows, "adding-100", "std 0.01");
    let eps_hat = 1e-8 / (1.0f64 - 0.999).sqrt();
    let (l, sl) = (steps(lagk), steps(lagk01));
    for line in [
        format!("changes the gradient's norm by a factor {}", p50[8]),
        format!(
            "`c` are frozen at the first step ({} of a learning rate) and only `w3` moves",
            steps(p50)[0]
        ),
        format!(
            "({}, {} and {} of a learning rate) and `c`'s gradient is {}, about {:.0} 000 times \
             below `ε̂`; dropout adds a factor {:.0} and {} noise. At std 0.1 the weights move at \
             {:.0}–{:.0} % of a learning rate",
            l[0],
            l[1],
            l[2],
            lagk[5],
            eps_hat / num(&lagk[5]) / 1000.0,
            num(&lagk[8]),
            lagk[9].split(" / ").next().unwrap(),
            num(&sl[0]) * 100.0,
            num(&sl[2]) * 100.0
        ),
        format!(
            "`w3` moves at {:.0} % of a learning rate at std 0.01",
            num(&steps(adding)[2]) * 100.0
        ),
    ] {
        says(FLAT, &flat, &line, FLAT_START);
    }
    assert!(
        num(&steps(p50)[2]) > 0.5 && num(&steps(p50)[2]) < 0.6,
        "w3 moves at half"
    );
    // the page's summary of Reber
    let line = format!(
        "larger ({} to {} per element), but its per-cell dropout makes {} of their energy",
        one_digit(&reber[3]),
        one_digit(&reber[4]),
        on
    );
    says(FLAT, &flat, &line, FLAT_START);
    let line = format!(
        "the bias range {:.0}× larger",
        num(&reber01[7]) / num(&reber[7])
    );
    says(FLAT, &flat, &line, FLAT_START);
    // std 0.1 over std 0.01, per task: the weights (RMS w1, w2, w3), then `c` and the bias
    // range, Process-50's w3 and bias range apart; dropout's effect on all but Reber unchanged
    let tasks = ["reber", "process50", "lag-k L=64 k=32", "adding-100"];
    let ratio = |task: &str, col: usize| {
        num(&flat_start(&rows, task, "std 0.1")[col])
            / num(&flat_start(&rows, task, "std 0.01")[col])
    };
    let odd = |task: &str, col: usize| task == "process50" && (col == 4 || col == 7);
    let ratios = |cols: &[usize]| {
        let cells = tasks
            .iter()
            .flat_map(|&t| cols.iter().map(move |&c| (t, c)))
            .filter(|&(t, c)| !odd(t, c));
        span(cells.map(|(t, c)| ratio(t, c)), |x| format!("{x:.0}"))
    };
    let line = format!(
        "(×{} for the weights, ×{} for `c` and the bias range) except Process-50's `w3` (×{:.0}) \
         and bias range (×{:.0})",
        ratios(&[2, 3, 4]),
        ratios(&[5, 7]),
        ratio("process50", 4),
        ratio("process50", 7)
    );
    says(FLAT, &flat, &line, FLAT_START);
    for task in &tasks[1..] {
        let (a, b) = (
            flat_start(&rows, task, "std 0.01"),
            flat_start(&rows, task, "std 0.1"),
        );
        assert_eq!((&a[8], &a[9]), (&b[8], &b[9]), "{task}");
    }
    let off = |r: &[String]| r[9].split_once(" / ").unwrap().1.to_string();
    let line = format!(
        "but on Reber (dropout × {} and {}, noise without the MLP dropout {} and {})",
        reber[8],
        reber01[8],
        off(reber),
        off(reber01)
    );
    says(FLAT, &flat, &line, FLAT_START);
}

#[test]
#[ignore = "minutes: CI runs it (cargo test --release --test doc_numbers -- --ignored)"]
fn the_committed_flat_start_report_is_what_init_study_prints() {
    let args = "--flat-start --seeds 3";
    let report = page(FLAT_START);
    shows(
        FLAT_START,
        &report,
        &format!("cargo run --release --bin init-study -- {args}"),
    );
    let root = tmp("flat-start");
    // the report is the output under a title and the line that names the command
    let out = run("init-study", args, &root);
    assert!(
        report.trim_end().ends_with(out.trim()),
        "{FLAT_START} is no longer what `init-study {args}` prints: commit its output\n{out}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A row of an init-study report as the page writes it: the name, then solved, accuracies,
/// epochs to 95 % and dead units (the gradient columns left out), bold marks dropped.
fn init_study_row(r: &[String], name: &str) -> String {
    format!(
        "| {name} | {} | {} | {} | {} | {} |",
        r[1], r[2], r[3], r[4], r[7]
    )
}

#[test]
fn the_init_study_numbers_are_the_committed_reports_and_records() {
    let flat = page(FLAT).replace("**", "");
    let short = table(&page("results/init-study/init-study.md"));
    for r in &short {
        let (task, bias) = r[0].split_once(" / ").unwrap();
        let task = match task {
            "process50" => "Process-50".to_string(),
            t => format!("lag-k, k = {}", t.trim_start_matches("lagk-k")),
        };
        let bias = match bias {
            "at5-paper" => "AT5 paper",
            "at5-alive" => "AT5 alive",
            _ => "T5",
        };
        let line = init_study_row(r, &format!("{task} / {bias}"));
        says(FLAT, &flat, &line, "results/init-study/init-study.md");
    }
    let long = table(&page("results/init-study-long/init-study.md"));
    for (key, name) in [
        ("lagk-k16 / at5-paper", "AT5 paper"),
        ("lagk-k16 / at5-alive", "AT5 alive"),
        ("lagk-k16 / t5", "T5"),
    ] {
        let line = init_study_row(row(&long, &[key]), name);
        says(FLAT, &flat, &line, "results/init-study-long/init-study.md");
    }
    // the solved seeds of both inits, and how surprising 5/5 against 2/5 is (Fisher's exact
    // test, one-sided: all 5 of the 7 solved seeds in one arm, out of C(10, 5) splits)
    let solved = |prefix: &str, at: f64| {
        span(
            records("results/init-study", prefix)
                .iter()
                .map(best_test)
                .filter(|&a| a >= at),
            |x| format!("{x:.0}"),
        )
    };
    let line = format!(
        "({} % on lag-k, {} % on Process-50)",
        solved("lagk-k4-at5-", 90.0),
        solved("process50-at5-", 80.0)
    );
    says(FLAT, &flat, &line, "results/init-study's records");
    let p = 21.0 / 252.0;
    says(
        FLAT,
        &flat,
        &format!("one-sided p of about {p:.2}"),
        "C(7, 5) / C(10, 5)",
    );
    // at the paper's sizes, the first epoch AT5's Process-50 dev accuracy passes 80 %
    let passes = records("results/paper", "process50-at5-s")
        .into_iter()
        .map(|r| {
            r["epochs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["dev"]["accuracy"].as_f64().unwrap() >= 0.8)
                .unwrap()["epoch"]
                .as_f64()
                .unwrap()
        });
    let line = format!("80 % at epochs {})", span(passes, |x| format!("{x}")));
    says(FLAT, &flat, &line, "results/paper's Process-50 AT5 records");
    // Process-50's last-epoch priors: the solved alive runs' sharpest heads, and every head of
    // the paper-init runs at chance
    let p50 = |init: &str| records("results/init-study", &format!("process50-at5-{init}-"));
    let last_entropies = |r: &Value| -> Vec<f64> {
        let last = r["epochs"].as_array().unwrap().last().unwrap();
        last["diagnostics"]["prior_entropy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_f64().unwrap())
            .collect()
    };
    let sharpest = |r: &Value| last_entropies(r).into_iter().fold(f64::MAX, f64::min);
    let solved_alive = p50("alive").into_iter().filter(|r| best_test(r) >= 80.0);
    let at_chance = p50("paper").into_iter().filter(|r| best_test(r) < 80.0);
    let line = format!(
        "(the sharpest head's entropy at the last epoch {} nats against the uniform {:.2}); the \
         paper-init runs that stay at chance keep all four heads at {}",
        span(solved_alive.map(|r| sharpest(&r)), |x| format!("{x:.1}")),
        50f64.ln(),
        span(at_chance.flat_map(|r| last_entropies(&r)), |x| format!(
            "{x:.2}"
        ))
    );
    says(
        FLAT,
        &flat,
        &line,
        "results/init-study's Process-50 records",
    );
    // the long runs seed by seed, their Welch interval and their sharpest heads
    let dir = "results/init-study-long";
    let paper = records(dir, "lagk-k16-at5-paper-");
    let alive = records(dir, "lagk-k16-at5-alive-");
    let accs = |rs: &[Value]| rs.iter().map(best_test).collect::<Vec<f64>>();
    let list = |xs: &[f64]| {
        xs.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (pa, al) = (accs(&paper), accs(&alive));
    let line = format!("Per seed, paper: {} %; alive: {} %", list(&pa), list(&al));
    says(FLAT, &flat, &line, dir);
    let (_, lo, hi) = at5::report::welch_interval(&pa, &al).unwrap();
    let line = format!("difference, [{lo:+.1}, {hi:+.1}] points");
    says(FLAT, &flat, &line, dir);
    // the page's summary of both studies
    let long_cell = |key: &str, col: usize| row(&long, &[key])[col].clone();
    let line = format!(
        "the paper init reaches {} % and the alive init {} % (95 % Welch interval of the \
         difference [{lo:+.1}, {hi:+.1}] points; T5, whose bucket merges offset −16 with its \
         neighbours, stays at {:.0} %)",
        long_cell("lagk-k16 / at5-paper", 2),
        long_cell("lagk-k16 / at5-alive", 2),
        num(long_cell("lagk-k16 / t5", 2).split(" ± ").next().unwrap())
    );
    says(FLAT, &flat, &line, dir);
    let solved = |key: &str| {
        let (n, of) = row(&short, &[key])[1].split_once('/').unwrap();
        format!("{n} of {of}")
    };
    let line = format!(
        "it solves lag-k at k = 4 in {} seeds (the paper init: {}) and in 40 epochs Process-50 \
         in {} (the paper init: {})",
        solved("lagk-k4 / at5-alive"),
        solved("lagk-k4 / at5-paper"),
        solved("process50 / at5-alive"),
        solved("process50 / at5-paper")
    );
    says(FLAT, &flat, &line, "results/init-study/init-study.md");
    let mean = |rows: &[Vec<String>], key: &str| {
        format!(
            "{:.0} %",
            num(row(rows, &[key])[2].split(" ± ").next().unwrap())
        )
    };
    let line = format!("so it plateaus at {}", mean(&short, "lagk-k16 / t5"));
    says(FLAT, &flat, &line, "results/init-study/init-study.md");
    let line = format!(
        "the two-to-three-way guess of {}",
        mean(&long, "lagk-k16 / t5")
    );
    says(FLAT, &flat, &line, dir);
    // §3's dead first-layer units after Process-50's 40 epochs
    let dead = |key: &str| {
        row(&short, &[key])[7]
            .split(" / ")
            .next()
            .unwrap()
            .to_string()
    };
    let line = format!(
        "the paper init has lost {} of the left MLPs' first-layer units (mean over 4 heads × 5 \
         seeds), the alive init {}",
        dead("process50 / at5-paper"),
        dead("process50 / at5-alive")
    );
    says(FLAT, &flat, &line, "results/init-study/init-study.md");
    let line = format!(
        "(seed 1: entropy {:.2} nats, 90 % of the mass within 3 offsets of the mode); the alive \
         runs' sharpest heads stay at {} nats",
        sharpest(&paper[0]),
        span(alive.iter().map(sharpest), |x| format!("{x:.1}"))
    );
    says(FLAT, &flat, &line, dir);
    // epoch 1's prior is uniform in every head at the paper's init: entropy ln L
    for (prefix, len) in [("lagk-", 64f64), ("process50-", 50f64)] {
        for r in records("results/init-study", prefix) {
            if r["config"].to_string().contains("\"Alive\"") {
                continue;
            }
            for h in r["epochs"][0]["diagnostics"]["prior_entropy"]
                .as_array()
                .unwrap()
            {
                assert_eq!(
                    format!("{:.2}", h.as_f64().unwrap()),
                    format!("{:.2}", len.ln())
                );
            }
        }
    }
    // how far a head's 1/beta moved from epoch 1 to epoch 10, per seed
    let moved = |r: &Value| {
        let inv = |e: usize| -> Vec<f64> {
            r["epochs"][e]["beta"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| 1.0 / b.as_f64().unwrap())
                .collect()
        };
        inv(0)
            .iter()
            .zip(inv(9))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let moves = |prefix: &str| {
        span(
            records("results/init-study", prefix).iter().map(moved),
            |x| format!("{x:.2}"),
        )
    };
    let line = format!(
        "on Process-50 {} positions under the paper init against {} under the alive one; on \
         lag-k at k = 40, {} against {}; at k = 16, {} against {}",
        moves("process50-at5-paper-"),
        moves("process50-at5-alive-"),
        moves("lagk-k40-at5-paper-"),
        moves("lagk-k40-at5-alive-"),
        moves("lagk-k16-at5-paper-"),
        moves("lagk-k16-at5-alive-")
    );
    says(FLAT, &flat, &line, "results/init-study's records");
    // what the runs cost, from the records (one thread each, two at a time on the
    // development machine's 2 cores): the page's ranges are the records' to the second
    let seconds = |rs: &[Value]| train_time(rs, 1.0);
    let line = format!(
        "{} s per lag-k run and {} s per Process-50 run. The 15 runs of 200 epochs at k = 16 \
         took about 20 minutes ({} s each)",
        seconds(&records("results/init-study", "lagk-")),
        seconds(&records("results/init-study", "process50-")),
        seconds(&records(dir, "lagk-"))
    );
    says(FLAT, &flat, &line, "the records' train_seconds");
}

#[test]
fn the_reber_numbers_of_the_flat_start_page_are_the_committed_records() {
    let flat = page(FLAT);
    let at5 = records("results/paper", "reber-at5-s");
    let list = at5
        .iter()
        .map(|r| format!("{:.1}", best_test(r)))
        .collect::<Vec<_>>()
        .join(", ");
    says(
        FLAT,
        &flat,
        &format!("(seeds 1–5: {list} % test)"),
        "results/paper",
    );
    let t5: Vec<f64> = records("results/paper", "reber-t5-s")
        .iter()
        .map(best_test)
        .collect();
    let solved: Vec<f64> = t5.iter().copied().filter(|&a| a > 90.0).collect();
    assert_eq!(solved.len(), 4, "{t5:?}");
    let line = format!(
        "(four of five seeds at {}; the fifth, {:.1} %",
        span(solved.iter().copied(), |x| format!("{x:.1}")).replace("100.0", "100 %"),
        t5.iter().copied().fold(f64::MAX, f64::min)
    );
    says(FLAT, &flat, &line, "results/paper");
    // the alive init's two solved seeds, and seed 1's saturation distances
    let alive = records("results/paper-alive", "reber-at5-s");
    let dists = |e: &Value| {
        span(
            e["beta"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| 1.0 / b.as_f64().unwrap()),
            |x| format!("{x:.0}"),
        )
    };
    let s1 = &alive[0];
    let line = format!(
        "seed 1 reaches {:.0} % (best dev at epoch {}), its 1/beta moving from {} positions \
         toward the label's offset, {}, and seed 2 too (epoch {})",
        best_test(s1),
        s1["best"]["epoch"],
        dists(&s1["epochs"][0]),
        dists(s1["epochs"].as_array().unwrap().last().unwrap()),
        alive[1]["best"]["epoch"]
    );
    says(FLAT, &flat, &line, "results/paper-alive");
    // std 0.1, seed 1: when it leaves chance
    let std01 = record(Path::new("results/paper-std01/runs/reber-at5-s1"));
    let dev = dev_accuracies(&std01);
    let first = |t: f64| dev.iter().position(|&a| a >= t).unwrap() + 1;
    let line = format!(
        "stays at chance to epoch {}, passes 60 % dev at epoch {} and 90 % at {}, and reaches \
         {:.0} % test (best dev at epoch {}",
        first(0.6) - 1,
        first(0.6),
        first(0.9),
        best_test(&std01),
        std01["best"]["epoch"]
    );
    says(FLAT, &flat, &line, "results/paper-std01/runs/reber-at5-s1");
    // std 0.1, all five seeds: which solve Reber
    let std01: Vec<f64> = records("results/paper-std01", "reber-at5-s")
        .iter()
        .map(best_test)
        .collect();
    assert_eq!(std01.len(), 5, "{std01:?}");
    let line = format!(
        "seeds 1 and 2 solve Reber ({:.1} %), seeds 3–5 stay at chance ({:.1}, {:.1}, {:.1} %), 2 \
         of 5 against none of 5 at std 0.01",
        std01[0], std01[2], std01[3], std01[4]
    );
    assert_eq!(std01[0], std01[1]);
    assert!(std01[2..].iter().all(|&a| a < 60.0), "{std01:?}");
    assert!(at5.iter().all(|r| best_test(r) < 60.0));
    says(FLAT, &flat, &line, "results/paper-std01");
    // the quick preset's Reber AT5
    let quick = table(&page("results/quick/README.md"));
    let cell = &row(&quick, &["reber"])[4];
    let line = format!(
        "the paper init got out on Reber ({} %)",
        cell.split(" ± ").next().unwrap()
    );
    says(FLAT, &flat, &line, "results/quick/README.md");
}

/// `lo–hi` (or `lo` when they agree) of the records' training time per run (one core each,
/// `train_seconds`), in units of `unit` seconds (60: minutes), rounded as the pages write it.
fn train_time(records: &[Value], unit: f64) -> String {
    let range = span(
        records
            .iter()
            .map(|r| r["train_seconds"].as_f64().unwrap() / unit),
        |x| format!("{x:.0}"),
    );
    match range.split_once('–') {
        Some((lo, hi)) if lo == hi => lo.to_string(),
        _ => range,
    }
}

/// The fastest epoch of any of the records, in seconds: the nearest they come to a quiet core.
fn fastest_epoch(records: &[Value]) -> f64 {
    records
        .iter()
        .flat_map(|r| r["epochs"].as_array().unwrap())
        .map(|e| e["seconds"].as_f64().unwrap())
        .fold(f64::MAX, f64::min)
}

/// Every seed's record of the paper preset's `task` for each of `families`.
fn paper_runs(task: &str, families: &[&str]) -> Vec<Value> {
    families
        .iter()
        .flat_map(|f| records("results/paper", &format!("{task}-{f}-s")))
        .collect()
}

/// A wall-time claim, checked loosely since times vary with the machine and its load: the
/// `minutes` a page quotes are within a factor 2 of the records' training time run two at a
/// time, as on the development machine's 2 cores.
fn about_two_at_a_time(minutes: f64, records: &[Value], what: &str) {
    let trained: f64 = records
        .iter()
        .map(|r| r["train_seconds"].as_f64().unwrap())
        .sum();
    let wall = trained / 2.0 / 60.0;
    assert!(
        (0.5..2.0).contains(&(minutes / wall)),
        "{what}: the page says {minutes} minutes; its records trained {wall:.1} minutes two at a time"
    );
}

#[test]
fn the_wall_times_the_pages_quote_are_the_order_of_their_records() {
    let readme = page(README);
    let minutes = 7.7;
    let line = format!(
        "on this project's 2-core development machine (AMD EPYC, AVX2 + FMA; {minutes} minutes, \
         72 runs"
    );
    says(README, &readme, &line, "results/quick/results.json");
    let quick: Value =
        serde_json::from_str(&page("results/quick/results.json")).expect("results.json");
    let quick = quick.as_array().unwrap();
    assert_eq!(quick.len(), 72);
    about_two_at_a_time(minutes, quick, "the quick run");
    let flat = page(FLAT);
    for (dir, runs, minutes) in [
        ("results/init-study", 60, 25.0),
        ("results/init-study-long", 15, 20.0),
    ] {
        let line = format!("The {runs} ");
        says(FLAT, &flat, &line, dir);
        let line = format!("took about {minutes} minutes");
        says(FLAT, &flat, &line, dir);
        let recs = records(dir, "");
        assert_eq!(recs.len(), runs, "{dir}");
        about_two_at_a_time(minutes, &recs, dir);
    }
}

#[test]
fn the_readme_tables_are_the_committed_reports_and_records() {
    let readme = page(README).replace("**", "");
    // the quick run's table is the committed report's
    let quick = page("results/quick/README.md").replace("**", "");
    for r in table(&quick).iter().filter(|r| r.len() == 11) {
        let line = format!("| {} |", r.join(" | "));
        says(README, &readme, &line, "results/quick/README.md");
    }
    // the paper preset's first question, from the records: T5, AT5 and AT5 − T5 with its 95 %
    // Welch interval
    for task in ["reber", "process50", "adding-100", "adding-500"] {
        let accs = |bias: &str| -> Vec<f64> {
            records("results/paper", &format!("{task}-{bias}-s"))
                .iter()
                .map(best_test)
                .collect()
        };
        let (t5, at5) = (accs("t5"), accs("at5"));
        assert_eq!((t5.len(), at5.len()), (5, 5), "{task}");
        let cell = |xs: &[f64]| {
            let (m, s) = at5::report::mean_std(xs);
            format!("{m:.1} ± {s:.1}")
        };
        let (diff, lo, hi) = at5::report::welch_interval(&at5, &t5).unwrap();
        let line = format!(
            "| {task} | {} | {} | {} [{}, {}] |",
            cell(&t5),
            cell(&at5),
            signed(diff),
            signed(lo),
            signed(hi)
        );
        says(README, &readme, &line, "results/paper's records");
    }
}

/// `68512` as the pages write it, `68 512`.
fn thousands(n: usize) -> String {
    match n {
        0..1000 => n.to_string(),
        _ => format!("{} {:03}", n / 1000, n % 1000),
    }
}

#[test]
fn the_parameter_counts_in_position_biases_md_are_the_families_at_the_defaults() {
    use at5::position::BiasConfig;
    use rand::SeedableRng;
    let doc = page(BIASES);
    // H = 8 heads at L = 128, each family's default options
    let count = |cfg: &BiasConfig| {
        let mut store = at5::ParamStore::<f64>::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        at5::position::build(cfg, 8, 128, &mut store, "bias", &mut rng)
            .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        store.num_scalars()
    };
    let by_name = |name: &str| count(&BiasConfig::from_name(name).unwrap());
    let mut original = BiasConfig::from_name("at5").unwrap();
    if let BiasConfig::At5(o) = &mut original {
        (o.mlp.l1, o.mlp.l2) = (100, 40);
    }
    let mlps = by_name("at5-nob") - by_name("t5-nob");
    let line = format!(
        "`t5` {}, `t5-nob` {}, `at5` with `l1 = 15, l2 = 2` {} (with the original default \
         `l1 = 100, l2 = 40`: {}), `at5-nob` {} + {mlps} = {}, `kerple-log` {}, `fire` with \
         `hidden = 32` {}",
        by_name("t5"),
        by_name("t5-nob"),
        by_name("at5"),
        thousands(count(&original)),
        by_name("t5-nob"),
        by_name("at5-nob"),
        by_name("kerple-log"),
        by_name("fire")
    );
    says(BIASES, &doc, &line, "the families built at H = 8, L = 128");
}

/// The decimal figures of `text` (`92.8`, `0.03`, a mean with its spread `92.8 ± 16.1` as one;
/// integers are too common to trace).
fn decimals(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    // the end of the decimal starting at `i`, if one does
    let decimal = |mut i: usize| -> Option<usize> {
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let dot = i > start && chars.get(i) == Some(&'.');
        if !(dot && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())) {
            return None;
        }
        i += 1;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        Some(i)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let fresh = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.');
        match decimal(i).filter(|_| fresh) {
            Some(mut end) => {
                let spread: String = chars[end..chars.len().min(end + 3)].iter().collect();
                if spread == " ± "
                    && let Some(e) = decimal(end + 3)
                {
                    end = e;
                }
                out.push(chars[i..end].iter().collect());
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// The part of a page from the heading `from` to the next heading of its level.
fn section<'a>(text: &'a str, from: &str) -> &'a str {
    let at = text
        .find(from)
        .unwrap_or_else(|| panic!("no section {from:?}"));
    let level = &from[..from.find(' ').unwrap() + 1];
    let rest = &text[at + from.len()..];
    let end = rest
        .find(&format!("\n{level}"))
        .map_or(text.len(), |e| at + from.len() + e);
    &text[at..end]
}

/// Every decimal figure of a page's prose is in one of the committed reports it reads them
/// from: a report that changes takes the page's stale figures with it.
fn figures_from(path: &str, text: &str, files: &[&str]) {
    let sources: String = files.iter().map(|f| page(f)).collect();
    let figures = decimals(text);
    assert!(!figures.is_empty(), "{path}: no figures in {text}");
    for f in figures {
        assert!(
            sources.contains(&f),
            "{path} quotes {f}, which none of {files:?} holds any more: update the page"
        );
    }
}

#[test]
fn the_readme_s_paper_preset_prose_quotes_the_committed_reports() {
    let readme = page(README);
    figures_from(
        README,
        section(&readme, "## What the paper preset shows"),
        &[
            "results/paper/README.md",
            "results/paper-longer/README.md",
            "results/paper-range/README.md",
            "results/paper-std01/README.md",
            "results/paper-alive/README.md",
        ],
    );
    figures_from(
        README,
        section(&readme, "## What the quick run shows"),
        &["results/quick/README.md"],
    );
}

/// The cells of the row of a page's table whose first cell shows `command`.
fn row_showing(text: &str, command: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with('|') && l.contains(command))
        .unwrap_or_else(|| panic!("no row shows {command}"));
    table(&format!("{line}\n"))[0].clone()
}

#[test]
fn reproducing_md_s_results_are_the_committed_reports_and_the_smoke_run() {
    let doc = page(REPRODUCING);
    let sweep = row_showing(&doc, "--out results/sweep-lagk");
    figures_from(REPRODUCING, &sweep[1], &["results/sweep-lagk/table.md"]);
    let ablate = row_showing(&doc, "--bin ablate`");
    figures_from(REPRODUCING, &ablate[1], &["results/quick/ablate.md"]);
    let scaling = row_showing(&doc, "--scaling --seeds 3`");
    figures_from(REPRODUCING, &scaling[1], &[SCALING]);
    // the wall times of the committed runs, loosely
    let quick = row_showing(&doc, "(= `reproduce --preset quick`)");
    says(
        REPRODUCING,
        &quick[2],
        "7.7 min for the 72 runs",
        "results/quick",
    );
    let results: Value = serde_json::from_str(&page("results/quick/results.json")).unwrap();
    about_two_at_a_time(7.7, results.as_array().unwrap(), "the quick run");
    says(
        REPRODUCING,
        &sweep[2],
        "6.7 min (6 runs",
        "results/sweep-lagk",
    );
    let results: Value = serde_json::from_str(&page("results/sweep-lagk/results.json")).unwrap();
    about_two_at_a_time(6.7, results.as_array().unwrap(), "results/sweep-lagk");
    let study = row_showing(&doc, "`cargo run --release --bin init-study` |");
    says(
        REPRODUCING,
        &study[2],
        "about 25 min (60 runs",
        "results/init-study",
    );
    about_two_at_a_time(
        25.0,
        &records("results/init-study", ""),
        "results/init-study",
    );
    // the smoke run, rerun as shown
    let args = "--task lagk --lag 3 --bias at5 --epochs 13 --lr 3e-3 --d-model 32";
    let smoke = row_showing(&doc, &format!("--bin train -- {args}`"));
    let root = tmp("smoke");
    run("train", args, &root);
    let rec = record(&root.join("runs/lagk-k3-at5-s1"));
    let line = format!(
        "13 epochs at L = 16: {} test",
        pct(&rec["best"]["test"]["accuracy"])
    );
    says(REPRODUCING, &smoke[1], &line, "the smoke run");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn reproducing_md_s_extrapolation_is_what_the_run_gives() {
    let doc = page(REPRODUCING);
    let args = "--biases t5,alibi --seeds 1 --out /tmp/ex";
    let shown = row_showing(&doc, &format!("--bin extrapolate -- {args}`"));
    let root = tmp("extrapolate");
    run("extrapolate", args, &root);
    let report = page(root.join("ex/extrapolate.md").to_str().unwrap()).replace("**", "");
    // the first table is lag-4 at L = 32: test accuracy at L, 2L and 4L
    let rows = table(&report);
    let at = |bias: &str| row(&rows, &[bias]).to_vec();
    let (t5, alibi) = (at("t5"), at("alibi"));
    let line = format!(
        "T5 {} % at L = 32 on lag-4, {} % at 2L, {} % at 4L; ALiBi {} %, {} % and {} %",
        t5[1], t5[2], t5[3], alibi[1], alibi[2], alibi[3]
    );
    says(REPRODUCING, &shown[1], &line, "`extrapolate`");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn reproducing_md_s_cost_log_is_the_committed_records() {
    let doc = page(REPRODUCING);
    let hours = |rs: &[Value]| {
        rs.iter()
            .map(|r| r["train_seconds"].as_f64().unwrap())
            .sum::<f64>()
            / 3600.0
    };
    // the paper preset's hours of one core, per task
    let five = ["none", "t5", "t5-nob", "at5", "at5-nob"];
    let (mut total5, mut total7) = (0.0, 0.0);
    for (task, name) in [
        ("reber", "Reber"),
        ("process50", "Process-50"),
        ("adding-100", "Adding-100"),
        ("adding-500", "Adding-500"),
    ] {
        let paper = hours(&paper_runs(task, &five));
        let all = paper + hours(&paper_runs(task, &["alibi", "fire"]));
        says(
            REPRODUCING,
            &doc,
            &format!("| {name} | {paper:.1} | {all:.1} |"),
            "results/paper's records",
        );
        (total5, total7) = (total5 + paper, total7 + all);
    }
    let line = format!("| **total** | **{total5:.1}** | **{total7:.1}** |");
    says(REPRODUCING, &doc, &line, "results/paper's records");
    let first: Vec<Value> = ["reber", "process50", "adding-100"]
        .iter()
        .flat_map(|t| paper_runs(t, &["t5", "at5"]))
        .collect();
    assert_eq!(first.len(), 30);
    let line = format!("is {:.1} hours of one core of it", hours(&first));
    says(REPRODUCING, &doc, &line, "results/paper's records");

    // per run, on the development machine
    let minutes = |task: &str, families: &[&str]| train_time(&paper_runs(task, families), 60.0);
    let fastest = |task: &str, families: &[&str]| fastest_epoch(&paper_runs(task, families));
    let ablation = ["none", "t5-nob", "at5-nob"];
    let range = records("results/paper-range", "");
    assert_eq!(range.len(), 7 * 3 * 5);
    for line in [
        format!(
            "Adding-100 took {} minutes a run (T5's 300 epochs, AT5's 500); Process-50 {} \
             minutes a run (100 epochs, the fastest epoch {:.0} s;",
            minutes("adding-100", &["t5", "at5"]),
            minutes("process50", &["t5", "at5"]),
            fastest("process50", &["t5", "at5"])
        ),
        format!(
            "Reber {} minutes a T5 run (500 epochs, the fastest epoch {:.1} s) and {} minutes an \
             AT5 run (1000 epochs;",
            minutes("reber", &["t5"]),
            fastest("reber", &["t5"]),
            minutes("reber", &["at5"])
        ),
        format!(
            "The ablation runs: Adding-100 {} minutes each, Process-50 {} (the fastest epoch \
             {:.0} s), Reber {} for no bias and T5-NoB (500 epochs) and {} for AT5-NoB (1000)",
            minutes("adding-100", &ablation),
            minutes("process50", &ablation),
            fastest("process50", &ablation),
            minutes("reber", &["none", "t5-nob"]),
            minutes("reber", &["at5-nob"])
        ),
        format!(
            "took {} minutes a run, {:.1} hours of one core for all {}",
            train_time(&range, 60.0),
            hours(&range),
            range.len()
        ),
        // on the second machine
        format!(
            "Adding-500's T5 runs took {} minutes there and its AT5 runs {} (300 and 500 epochs, \
             the fastest epoch {:.1} s). Its ablation runs took {} minutes each for no bias and \
             T5-NoB (300 epochs) and {} for AT5-NoB (500)",
            minutes("adding-500", &["t5"]),
            minutes("adding-500", &["at5"]),
            fastest("adding-500", &["t5", "at5"]),
            minutes("adding-500", &["none", "t5-nob"]),
            minutes("adding-500", &["at5-nob"])
        ),
        format!(
            "Adding-100 took {} minutes a run (ALiBi) and {} (FIRE), Reber {} (either; 500 \
             epochs), Adding-500 {} (ALiBi) and {} (FIRE; 300 epochs), Process-50 {} (ALiBi) \
             and {} (FIRE; 100 epochs, the fastest epoch {:.0} s)",
            minutes("adding-100", &["alibi"]),
            minutes("adding-100", &["fire"]),
            minutes("reber", &["alibi", "fire"]),
            minutes("adding-500", &["alibi"]),
            minutes("adding-500", &["fire"]),
            minutes("process50", &["alibi"]),
            minutes("process50", &["fire"]),
            fastest("process50", &["alibi", "fire"])
        ),
    ] {
        says(REPRODUCING, &doc, &line, "results/paper's records");
    }
    // the committed sweeps' runs, in the table of every binary
    let quick: Value = serde_json::from_str(&page("results/quick/results.json")).unwrap();
    let quick_row = row_showing(&doc, "(= `reproduce --preset quick`)");
    let line = format!("({} s per run;", train_time(quick.as_array().unwrap(), 1.0));
    says(
        REPRODUCING,
        &quick_row[2],
        &line,
        "results/quick/results.json",
    );
    let sweep: Value = serde_json::from_str(&page("results/sweep-lagk/results.json")).unwrap();
    let sweep_row = row_showing(&doc, "--out results/sweep-lagk");
    let line = format!(
        "(6 runs of {} s,",
        train_time(sweep.as_array().unwrap(), 1.0)
    );
    says(
        REPRODUCING,
        &sweep_row[2],
        &line,
        "results/sweep-lagk/results.json",
    );
}

#[test]
fn the_init_and_quick_figures_of_theory_md_and_position_biases_md_are_their_sources() {
    let theory = page(THEORY);
    let quick = table(&page("results/quick/README.md").replace("**", ""));
    let reber = row(&quick, &["reber"]);
    let mean = |cell: &str| cell.split(" ± ").next().unwrap().to_string();
    let line = format!(
        "T5 stays at chance on Reber ({} %) while a free per-offset table (`t5-nob`) reaches {} %",
        mean(&reber[2]),
        mean(&reber[3])
    );
    says(THEORY, &theory, &line, "results/quick/README.md");
    // Glorot-uniform's standard deviation (its bound over √3) against BERT's 0.02, C = 8 outputs
    let biases = page(BIASES);
    let glorot = (6.0f64 / (256.0 + 8.0)).sqrt() / 3f64.sqrt();
    let line = format!(
        "its weights' standard deviation √(2/(256 + C)) is {:.1}× BERT's on Reber (C = 8)",
        glorot / 0.02
    );
    says(BIASES, &biases, &line, "the arithmetic");
}

#[test]
fn the_two_process50_dedup_rules_give_the_same_data_at_the_paper_seed() {
    use at5::data::process50::{CHAINS, Process50Config, sample_chain};
    use at5::data::{Label, Sequence, TaskConfig};
    use rand::SeedableRng;
    use std::collections::HashSet;
    // The generator's stream replayed: class 0's sequences, then class 1's, from seed 2021.
    let cfg = Process50Config::paper();
    let per_class = cfg.train_per_class + cfg.dev_per_class + cfg.test_per_class;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2021);
    let draws: Vec<Vec<Vec<usize>>> = CHAINS
        .iter()
        .map(|&chain| {
            (0..per_class)
                .map(|_| sample_chain(&mut rng, chain, cfg.seq_len))
                .collect()
        })
        .collect();
    // No draw repeats another, within a class or across: deduplicating by sequence (here) or by
    // (sequence, label) (the original) rejects nothing, so the two rules keep the same draws.
    let all: HashSet<&Vec<usize>> = draws.iter().flatten().collect();
    assert_eq!(all.len(), 2 * per_class);
    // ... and those draws are the generated data, each with its class.
    let data = at5::data::generate(&TaskConfig::Process50(cfg), 2021).unwrap();
    let classes: Vec<HashSet<&Vec<usize>>> = draws.iter().map(|d| d.iter().collect()).collect();
    let mut n = 0;
    for ex in data.train.iter().chain(&data.dev).chain(&data.test) {
        let (Sequence::Tokens(t), Label::Class(c)) = (&ex.input, &ex.label) else {
            panic!("process50 examples are token sequences with a class");
        };
        assert!(classes[*c].contains(t));
        n += 1;
    }
    assert_eq!(n, 2 * per_class);
    let doc = page(BIASES);
    says(
        BIASES,
        &doc,
        "none of the 30 000 draws repeats another, within a class or across the two, so both",
        "the generator's stream at seed 2021",
    );
    assert_eq!(thousands(2 * per_class), "30 000");
}

/// The departures' running notes on Process-50 are what the finished records hold.
#[test]
fn the_departures_process50_notes_are_the_committed_records() {
    const NOTES: &str = "results/paper-departures/README.md";
    let done = finished_seeds("paper-departures", "process50-t5");
    let seeds: Vec<u32> = done.iter().map(|(s, _)| *s).collect();
    assert_eq!(seeds, [1, 2, 3], "the notes cover seeds 1 to 3");
    let runs: Vec<Value> = done.into_iter().map(|(_, r)| r).collect();
    let paper = seed_records("paper", "process50-t5", 1..=3);
    let line = format!(
        "**Process-50, T5 so far (seeds 1, 2 and 3)**: {} test (best dev epochs {} of 100), \
         against {} for the same seeds in `../paper/`.",
        each_of(&runs, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&runs, |r| r["best"]["epoch"].to_string()),
        each_of(&paper, |r| pct(&r["best"]["test"]["accuracy"])),
    );
    let from = "results/paper{-departures,}/runs/process50-t5-s{1..3}";
    says(NOTES, &page(NOTES), &line, from);
    let dev = dev_accuracies(&runs[1]);
    assert_eq!(dev.len(), 100);
    let line = format!(
        "(seed 2's last ten epochs: {} %)",
        span(dev[90..].iter().map(|x| 100.0 * x), |x| format!("{x:.1}"))
    );
    says(NOTES, &page(NOTES), &line, from);
}

/// paper-std01's note on its Process-50 AT5-NoB seeds is what their records hold.
#[test]
fn the_paper_std01_process50_nob_note_is_the_committed_records() {
    const NOTES: &str = "results/paper-std01/README.md";
    let done = all_five_finished("paper-std01", "process50-at5-nob");
    let at001 = seed_records("paper", "process50-at5-nob", 1..=5);
    let from = "results/paper{-std01,}/runs/process50-at5{,-nob}-s{1..5}";
    let line = format!(
        "**Process-50 AT5-NoB, complete (5 seeds): {}** (best dev epochs {} of 100), against {} \
         for the same seeds at std 0.01 (`../paper/`); dev first above 80 % at epochs {}.",
        each_of(&done, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| r["best"]["epoch"].to_string()),
        each_of(&at001, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| first_dev_at(r, 0.8).to_string()),
    );
    says(NOTES, &page(NOTES), &line, from);
    // Against std 0.01, and against AT5 at the same std (the MLP's bucket input, C3).
    let interval = |a: &[f64], b: &[f64]| {
        let (d, lo, hi) = at5::report::welch_interval(a, b).unwrap();
        (
            format!("{} [{}, {}]", signed(d), signed(lo), signed(hi)),
            lo > 0.0 || hi < 0.0,
        )
    };
    let cell = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.1} ± {s:.1} %")
    };
    let nob01: Vec<f64> = done.iter().map(best_test).collect();
    let nob001: Vec<f64> = at001.iter().map(best_test).collect();
    let at5_01: Vec<f64> = seed_records("paper-std01", "process50-at5", 1..=5)
        .iter()
        .map(best_test)
        .collect();
    let (vs_std, separated) = interval(&nob01, &nob001);
    assert!(!separated, "the note calls the two stds not separated");
    let (vs_at5, separated) = interval(&at5_01, &nob01);
    assert!(
        !separated,
        "the note calls AT5 − AT5-NoB at std 0.1 not separated"
    );
    let line = format!(
        "AT5-NoB (0.1) {} against {} at 0.01: {vs_std}, not separated; AT5 (0.1) − AT5-NoB \
         (0.1) = {vs_at5}, not separated.",
        cell(&nob01),
        cell(&nob001)
    );
    says(NOTES, &page(NOTES), &line, from);
    let line = format!(
        "AT5-NoB there is {} at 0.1 against {} at 0.01 ({vs_std})",
        cell(&nob01),
        cell(&nob001)
    );
    says(README, &page(README), &line, from);
}

/// The C1 table under both MLP init stds, in the README and in `results/paper/README.md`, is
/// what the records hold: T5 and AT5 at std 0.01 from `paper/`, AT5 at 0.1 from
/// `paper-std01/` where all five seeds have finished ("running" until then).
#[test]
fn the_c1_table_under_both_stds_is_the_records() {
    let versus = |a: &[f64], b: &[f64]| {
        let (d, lo, hi) = at5::report::welch_interval(a, b).unwrap();
        let verdict = if lo > 0.0 || hi < 0.0 {
            "separated"
        } else {
            "not separated"
        };
        format!("{} [{}, {}], {verdict}", signed(d), signed(lo), signed(hi))
    };
    let cell = |xs: &[f64]| {
        let (m, s) = at5::report::mean_std(xs);
        format!("{m:.1} ± {s:.1}")
    };
    let tests = |set: &str, run: &str| -> Vec<f64> {
        finished_seeds(set, run)
            .iter()
            .map(|(_, r)| best_test(r))
            .collect()
    };
    let mut table = String::from(
        "| task | T5 | AT5, std 0.01 | AT5 − T5, std 0.01 | AT5, std 0.1 | AT5 − T5, std 0.1 |\n\
         | --- | ---: | ---: | --- | ---: | --- |\n",
    );
    for task in ["reber", "process50", "adding-100", "adding-500"] {
        let t5 = tests("paper", &format!("{task}-t5"));
        let a001 = tests("paper", &format!("{task}-at5"));
        assert_eq!((t5.len(), a001.len()), (5, 5), "{task}: paper/ is complete");
        let a01 = tests("paper-std01", &format!("{task}-at5"));
        let (at01, vs01) = if a01.len() == 5 {
            (cell(&a01), versus(&a01, &t5))
        } else {
            ("running".to_string(), "—".to_string())
        };
        table += &format!(
            "| {task} | {} | {} | {} | {at01} | {vs01} |\n",
            cell(&t5),
            cell(&a001),
            versus(&a001, &t5)
        );
    }
    let from = "results/paper{,-std01}/runs/*-{t5,at5}-s{1..5}";
    says(README, &page(README), &table, from);
    let paper = "results/paper/README.md";
    says(paper, &page(paper), &table, from);
}

/// paper-std01's note on Adding-100 AT5 is what the records hold.
#[test]
fn the_paper_std01_adding100_note_is_the_committed_records() {
    const NOTES: &str = "results/paper-std01/README.md";
    let done = all_five_finished("paper-std01", "adding-100-at5");
    let at001 = seed_records("paper", "adding-100-at5", 1..=5);
    let minutes: Vec<f64> = done
        .iter()
        .map(|r| r["train_seconds"].as_f64().unwrap() / 60.0)
        .collect();
    let line = format!(
        "**Adding-100 AT5, complete (5 seeds): {}** (best dev epochs {} of 500), against {} for \
         the same seeds at std 0.01 (`../paper/`); dev first above 90 % at epochs {} (at 0.01: \
         {}). {} minutes of one core a run.",
        each_of(&done, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| r["best"]["epoch"].to_string()),
        each_of(&at001, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| first_dev_at(r, 0.9).to_string()),
        each_of(&at001, |r| first_dev_at(r, 0.9).to_string()),
        span(minutes, |m| format!("{m:.0}")),
    );
    says(
        NOTES,
        &page(NOTES),
        &line,
        "results/paper{-std01,}/runs/adding-100-at5-s{1..5}",
    );
}

/// paper-std01's note on Adding-100 AT5-NoB is what the records hold: the same best epochs and
/// test accuracies (to the digit shown) as at std 0.01, from runs that differ.
#[test]
fn the_paper_std01_adding100_nob_note_is_the_committed_records() {
    const NOTES: &str = "results/paper-std01/README.md";
    let done = all_five_finished("paper-std01", "adding-100-at5-nob");
    let at001 = seed_records("paper", "adding-100-at5-nob", 1..=5);
    let tests = |rs: &[Value]| each_of(rs, |r| pct(&r["best"]["test"]["accuracy"]));
    let epochs = |rs: &[Value]| each_of(rs, |r| r["best"]["epoch"].to_string());
    assert_eq!(tests(&done), tests(&at001));
    assert_eq!(epochs(&done), epochs(&at001));
    let equal_epochs = done.iter().zip(&at001).map(|(a, b)| {
        let (a, b) = (dev_accuracies(a), dev_accuracies(b));
        a.iter().zip(&b).filter(|(x, y)| x == y).count() as f64
    });
    let line = format!(
        "**Adding-100 AT5-NoB, complete (5 seeds): {}** (best dev epochs {} of 500): the same \
         test accuracies, to the digit shown, at the same best epochs as at std 0.01 (`../paper/`), \
         though the runs differ (their dev accuracies agree in only {} of 500 epochs).",
        tests(&done),
        epochs(&done),
        span(equal_epochs, |n| format!("{n:.0}")),
    );
    says(
        NOTES,
        &page(NOTES),
        &line,
        "results/paper{-std01,}/runs/adding-100-at5-nob-s{1..5}",
    );
}

/// paper-std01's running note on Adding-500 AT5 is what the finished records hold.
#[test]
fn the_paper_std01_adding500_note_is_the_committed_records() {
    const NOTES: &str = "results/paper-std01/README.md";
    let (seeds, done): (Vec<u32>, Vec<Value>) = finished_seeds("paper-std01", "adding-500-at5")
        .into_iter()
        .unzip();
    let n = seeds.len() as u32;
    assert!(n >= 1, "the note reports finished seeds");
    assert_eq!(seeds, (1..=n).collect::<Vec<_>>(), "seeds finish in order");
    let at001 = seed_records("paper", "adding-500-at5", 1..=n);
    let which = if n == 5 {
        "complete (5 seeds)".to_string()
    } else {
        format!("so far (seeds 1 to {n})")
    };
    let line = format!(
        "**Adding-500 AT5 {which}: {}** (best dev epochs {} of 500), against {} \
         for the same seeds at std 0.01 (`../paper/`); dev first above 30 % at epochs {} (at \
         0.01: {}).",
        each_of(&done, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| r["best"]["epoch"].to_string()),
        each_of(&at001, |r| pct(&r["best"]["test"]["accuracy"])),
        each_of(&done, |r| first_dev_at(r, 0.3).to_string()),
        each_of(&at001, |r| first_dev_at(r, 0.3).to_string()),
    );
    says(
        NOTES,
        &page(NOTES),
        &line,
        "results/paper{-std01,}/runs/adding-500-at5-s*",
    );
}
