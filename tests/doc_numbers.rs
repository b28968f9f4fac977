//! Docs that cannot drift: every number that docs/how-the-prior-is-learned.md, docs/theory.md
//! and README.md quote from a run is made again here by the command the page shows, at the
//! size it states, and compared with the page to the printed digits. Runs are the same to the
//! bit at any thread count and on any CPU (every kernel path rounds alike: docs/autodiff.md), so
//! a mismatch means the code changed what the page describes: rerun the command and update it.
//!
//! The lag-k tour, the theory page's figure table and worked example and the tour's diagnostics
//! run here in seconds. Reber's and Process-50's runs take minutes, so they are `#[ignore]`d and
//! CI runs them in a step of its own (`cargo test --release --test doc_numbers -- --ignored`).
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const TOUR: &str = "docs/how-the-prior-is-learned.md";
const THEORY: &str = "docs/theory.md";
const README: &str = "README.md";
const AUTODIFF: &str = "docs/autodiff.md";

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
    let exe = match bin {
        "train" => env!("CARGO_BIN_EXE_train"),
        "prior" => env!("CARGO_BIN_EXE_prior"),
        "buckets" => env!("CARGO_BIN_EXE_buckets"),
        "gradcheck" => env!("CARGO_BIN_EXE_gradcheck"),
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
    let out = Command::new(exe).args(&args).output().expect("binary runs");
    assert!(
        out.status.success(),
        "{bin} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
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

/// The rows of the Markdown table in a binary's output (header and rule left out), as cells.
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
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
fn the_theory_alibi_example_is_its_arithmetic() {
    let theory = page(THEORY);
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
}
