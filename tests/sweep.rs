//! Sweeps that survive: finished runs are skipped, emitted jobs name only unfinished runs, and
//! merge rebuilds the report from the result files.
use at5::data::TaskKind;
use at5::train::{Dial, Preset, RunRecord, RunRequest};
use at5_app::experiments::learned::Missing;
use at5_app::experiments::reproduce;
use at5_app::sweep::{self, Plan, RunSpec, SweepEvent};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A run at tiny sizes: D = 8, 2 heads, one epoch.
fn tiny(task: TaskKind, dial: Dial, bias: &str, seed: u64) -> RunRequest {
    RunRequest {
        d_model: Some(8),
        heads: Some(2),
        epochs: Some(1),
        ..RunRequest::new(task, bias, Preset::Quick, seed).with_dial(dial)
    }
}

fn tiny_plan() -> Plan {
    let dial = Dial {
        seq_len: Some(8),
        lag: Some(2),
    };
    let specs = ["t5", "at5"]
        .iter()
        .map(|b| RunSpec::new("lagk-tiny", tiny(TaskKind::LagK, dial, b, 1)))
        .collect();
    Plan::new("reproduce", "quick", specs)
}

#[test]
fn finished_runs_are_skipped_and_emitted_jobs_cover_the_rest() {
    let root = std::env::temp_dir().join(format!("at5-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let plan = tiny_plan();
    let (started, skipped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let count = |ev: SweepEvent| match ev {
        SweepEvent::Started(..) => {
            started.fetch_add(1, Ordering::SeqCst);
        }
        SweepEvent::Skipped(_) => {
            skipped.fetch_add(1, Ordering::SeqCst);
        }
        _ => {}
    };
    // Only the first run, as if the sweep had been interrupted after it.
    let first = sweep::run_all(&plan.specs[..1], &root, 1, &count).unwrap();
    assert!(first[0].is_some());
    let jobs = root.join("jobs.txt");
    let todo: Vec<RunSpec> = plan
        .specs
        .iter()
        .filter(|s| sweep::finished(&root, s).is_none())
        .cloned()
        .collect();
    sweep::emit_jobs(&todo, &root, &jobs).unwrap();
    let lines = std::fs::read_to_string(&jobs).unwrap();
    assert_eq!(lines.lines().count(), 1);
    assert!(
        lines.contains("--bias at5") && lines.contains("runs/lagk-tiny-at5-s1"),
        "{lines}"
    );

    let all = sweep::run_all(&plan.specs, &root, 2, &count).unwrap();
    assert!(all.iter().all(Option::is_some));
    assert_eq!(started.load(Ordering::SeqCst), 2, "each run trained once");
    assert_eq!(
        skipped.load(Ordering::SeqCst),
        1,
        "the finished run was reused"
    );
    // The reused record is the one on disk, unchanged.
    assert_eq!(first[0], all[0]);

    let md = reproduce::report(&root, &plan, &all, 1.0, Missing::Refuse).unwrap();
    assert!(md.contains("at5") && md.contains("t5"));
    for f in ["table.md", "results.json", "README.md"] {
        assert!(root.join(f).is_file(), "{f} missing");
    }
}

#[test]
fn a_typo_in_a_spec_fails_before_any_run() {
    let mut plan = tiny_plan();
    plan.specs[1].run.ffn = Some(0);
    let e = sweep::validate(&plan.specs).unwrap_err();
    assert!(e.contains("ffn"), "{e}");
    // A flag `train` does not know, given to every run (`--train-flags`), is refused as it is
    // added, naming the first run.
    let e = sweep::add_flags(&mut plan, "--bogus").unwrap_err();
    assert!(
        e.contains("lagk-tiny-t5-s1") && e.contains("--bogus") && e.lines().count() == 1,
        "{e}"
    );
}

#[test]
fn records_written_before_the_reliability_checks_are_still_finished() {
    // The committed experiments' plans and records, as earlier versions wrote them: each run
    // dir gets its record back, and `finished` must reuse it rather than train it again.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, experiment) in [
        ("results/quick", "reproduce"),
        ("results/sweep-lagk", "sweep"),
    ] {
        let read = |f: &str| std::fs::read_to_string(repo.join(dir).join(f)).unwrap();
        let plan: Plan = serde_json::from_str(&read(&format!("plan-{experiment}.json"))).unwrap();
        // As text, so each goes back to disk exactly as it was written.
        let records: Vec<serde_json::Value> = serde_json::from_str(&read("results.json")).unwrap();
        let parsed: Vec<RunRecord> = serde_json::from_str(&read("results.json")).unwrap();
        let root =
            std::env::temp_dir().join(format!("at5-sweep-old-{}-{experiment}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for spec in &plan.specs {
            let cfg = spec.config().unwrap();
            let i = parsed
                .iter()
                .position(|r| r.config == cfg)
                .unwrap_or_else(|| panic!("{dir}: no record has the config of {}", spec.id));
            let rec = &records[i];
            let run = spec.dir(&root);
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(run.join("record.json"), rec.to_string()).unwrap();
            assert!(
                sweep::finished(&root, spec).is_some(),
                "{dir}: {} is not recognised as finished",
                spec.id
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Records written before the config gained fields (the pruning flag, the pooled head, AT5's
/// per-cell dropout) still mark their runs finished: the sweep reuses them instead of training
/// again. The fixtures were written by `train` of that version with the flags below.
#[test]
fn records_of_the_earlier_config_format_are_still_finished() {
    let root = std::env::temp_dir().join(format!("at5-sweep-v1-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let lag = Dial {
        seq_len: Some(8),
        lag: Some(2),
    };
    let specs = [
        (
            RunSpec::new("lagk-tiny", tiny(TaskKind::LagK, lag, "at5", 1)),
            "lagk-at5.json",
        ),
        (
            RunSpec::new(
                "adding-tiny",
                tiny(TaskKind::Adding, Dial::length(20), "t5", 2),
            ),
            "adding-t5.json",
        ),
    ];
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/record-v1");
    for (spec, file) in &specs {
        let dir = spec.dir(&root);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixtures.join(file), dir.join("record.json")).unwrap();
        let rec = sweep::finished(&root, spec).unwrap_or_else(|| panic!("{file} not finished"));
        assert_eq!(rec.status, "completed");
        assert!(!rec.config.whole_graph);
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The flags of one emitted job line, as a shell would split them (the plans' flags need no
/// quoting), between `train --` and `--out`.
fn job_flags(line: &str) -> Vec<String> {
    let rest = line.split_once(" -- ").expect("a train command").1;
    let flags = rest.split_once(" --out ").expect("an --out").0;
    flags.split_whitespace().map(String::from).collect()
}

#[test]
fn emitted_job_lines_parse_back_to_the_planned_configs() {
    use at5::train::Preset;
    use at5_app::experiments::init;
    let root = std::env::temp_dir().join(format!("at5-jobs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let biases: Vec<String> = ["t5", "at5", "alibi"].map(String::from).to_vec();
    for plan in [
        reproduce::plan(Preset::Paper, 2, &biases),
        init::plan(Preset::Quick, 2, init::LAG_EPOCHS),
    ] {
        let file = root.join(format!("{}.txt", plan.experiment));
        sweep::emit_jobs(&plan.specs, &root, &file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), plan.specs.len());
        for (line, spec) in text.lines().zip(&plan.specs) {
            let back = at5_app::cli::parse_run_flags(&job_flags(line)).unwrap();
            assert_eq!(back, spec.run, "{line}");
            assert_eq!(back.resolve().unwrap(), spec.config().unwrap(), "{line}");
            assert!(line.contains(&format!("runs/{} ", spec.id)), "{line}");
        }
    }
}

#[test]
fn the_committed_paper_job_list_is_its_plan() {
    // Every line of results/paper/jobs.txt runs the config its plan gives the run it names.
    let plan: Plan =
        at5::report::read_json(std::path::Path::new("results/paper/plan-reproduce.json")).unwrap();
    let text = std::fs::read_to_string("results/paper/jobs.txt").unwrap();
    let mut seen = 0;
    for line in text.lines() {
        let out = line.split_once(" --out ").unwrap().1;
        let id = out
            .split_whitespace()
            .next()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        let spec = plan
            .specs
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("{id}"));
        let back = at5_app::cli::parse_run_flags(&job_flags(line)).unwrap();
        assert_eq!(back, spec.run, "{line}");
        assert_eq!(back.resolve().unwrap(), spec.config().unwrap(), "{line}");
        seen += 1;
    }
    assert_eq!(seen, plan.specs.len(), "one job per planned run");
}

#[test]
fn every_setting_of_a_run_renders_as_flags_and_parses_back() {
    // Every field is spelled out (no `..`), so a new setting fails to compile here until it is
    // given a value, and then fails this test until `run_flags` and the parser both carry it.
    use at5::nn::BiasScope;
    use at5::position::{BiasConfig, FAMILIES, family_flags};
    use at5::train::BiasRequest;
    // A value for every family option: a new option fails here until it is given one.
    let sample = |flag: &str| match flag {
        "num-buckets" => "16",
        "max-distance" => "20",
        "slope-min" => "0.5",
        "slope-max" => "2.5",
        "l1" => "5",
        "l2" => "3",
        "init-std" => "0.02",
        "at5-dropout-mask" => "offset",
        "at5-init" => "alive",
        other => panic!("no sample value for --{other}: add one"),
    };
    for f in family_flags() {
        sample(f.flag);
    }
    let full = |bias: BiasRequest| RunRequest {
        task: TaskKind::LagK,
        bias,
        preset: Preset::Paper,
        seed: 7,
        seq_len: Some(24),
        lag: Some(3),
        data_seed: Some(99),
        data_dir: Some("some dir/with space".into()),
        d_model: Some(16),
        heads: Some(2),
        ffn: Some(24),
        layers: Some(2),
        bias_scope: Some(BiasScope::PerLayer),
        dropout_input: Some(0.25),
        dropout_hidden: Some(0.125),
        dropout_attention: Some(1e-3),
        batch: Some(32),
        lr: Some(3e-4),
        epochs: Some(9),
        patience: Some(4),
        whole_graph: true,
        head_init: Some(at5::nn::OutputInit::Glorot),
        unbiased_heads: vec![0, 1],
    };
    // Every family with all its options set.
    let every = FAMILIES.iter().map(|name| {
        let mut bias = BiasRequest::family(name);
        for flag in BiasConfig::from_name(name).unwrap().option_flags() {
            bias.set(flag, sample(flag)).unwrap();
        }
        bias
    });
    for bias in every.collect::<Vec<_>>() {
        let run = full(bias);
        let flags = at5_app::cli::run_flags(&run);
        assert_eq!(
            at5_app::cli::parse_run_flags(&flags).unwrap(),
            run,
            "{flags:?}"
        );
    }
    let none = RunRequest::new(TaskKind::Reber, "t5", Preset::Quick, 1);
    let flags = at5_app::cli::run_flags(&none);
    assert_eq!(
        flags.join(" "),
        "--task reber --bias t5 --seed 1 --preset quick"
    );
    assert_eq!(at5_app::cli::parse_run_flags(&flags).unwrap(), none);
    // Another family's option does not get past the parser.
    let stray: Vec<String> = ["--task", "lagk", "--bias", "at5", "--num-buckets", "8"]
        .map(String::from)
        .to_vec();
    let e = at5_app::cli::parse_run_flags(&stray).unwrap_err();
    assert!(e.contains("--num-buckets is an option of --bias t5"), "{e}");
}

#[test]
fn a_report_names_the_command_that_plans_its_runs() {
    // The families, rows and extra train flags are read back from the runs, so the command
    // in a report's first line plans exactly the runs it reports on.
    let biases: Vec<String> = ["at5"].map(String::from).to_vec();
    let mut plan = reproduce::plan(Preset::Paper, 5, &biases);
    plan.specs.retain(|s| s.group == "reber");
    sweep::add_flags(&mut plan, "--at5-init alive --epochs 3").unwrap();
    assert_eq!(
        reproduce::command(&plan).as_deref(),
        Some(
            "cargo run --release -- --preset paper --seeds 5 --biases at5 --tasks reber \
             --train-flags \"--epochs 3 --at5-init alive\""
        )
    );
    let all: Vec<String> = reproduce::BIASES.map(String::from).to_vec();
    let full = reproduce::plan(Preset::Quick, 2, &all);
    assert_eq!(
        reproduce::command(&full).as_deref(),
        Some("cargo run --release -- --preset quick --seeds 2")
    );
    // One run edited by hand: no command plans that, and none is claimed.
    plan.specs[2] = RunSpec::new("reber", tiny(TaskKind::Reber, Dial::NONE, "at5", 3));
    assert_eq!(reproduce::command(&plan), None);
}

#[test]
fn the_saturation_table_reads_every_head_of_every_seed() {
    use at5_app::experiments::range::{SlopeSummary, saturation_row};
    let runs = [
        SlopeSummary {
            first: vec![10.0, 20.0],
            last: vec![4.0, 21.0],
            alpha_moved: 0,
            sharpest: Some(0),
        },
        SlopeSummary {
            first: vec![30.0, 8.0],
            last: vec![30.0, 12.0],
            alpha_moved: 1,
            sharpest: Some(1),
        },
    ];
    // 1/beta first: 8, 10, 20, 30 (median 15); last: 4, 12, 21, 30 (median 16.5). Moved by a
    // quarter or more: 10 → 4 and 8 → 12, not 20 → 21 nor 30 → 30. Sharpest: 4 and 12.
    assert_eq!(
        saturation_row(16, &runs),
        "| 16 | 2 | 15.0 [8.0–30.0] | 16.5 [4.0–30.0] | 2 of 4 | 8.0 [4.0–12.0] | 1 of 4 |"
    );
    // Records without diagnostics have no sharpest head.
    let old = [SlopeSummary {
        sharpest: None,
        ..runs[0].clone()
    }];
    assert!(saturation_row(2, &old).contains("| 1 of 2 | — | 0 of 2 |"));
}

/// Every finished run committed under `results/` is still its plan's finished run: a change to
/// presets, flags or config types that made one look like another run would have the next
/// sweep train it again (and `merge` refuse the folder). Counted, so the walk cannot pass empty.
#[test]
fn every_committed_finished_run_is_recognised_by_its_plan() {
    let mut recognised = 0;
    for entry in std::fs::read_dir("results").unwrap() {
        let root = entry.unwrap().path();
        let Ok(plans) = sweep::plans_in(&root) else {
            continue;
        };
        for plan in plans {
            let recs = sweep::records_to_merge(&root, &plan)
                .unwrap_or_else(|e| panic!("{}: {e}", root.display()));
            for (spec, rec) in plan.specs.iter().zip(&recs) {
                let path = spec.dir(&root).join("record.json");
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let status: serde_json::Value = serde_json::from_str(&text).unwrap();
                if status["status"] == "completed" {
                    assert!(rec.is_some(), "{} is no longer finished", path.display());
                    recognised += 1;
                }
            }
        }
    }
    assert!(
        recognised >= 200,
        "only {recognised} finished runs found under results/"
    );
}

/// The paper preset changed its output layer's init in revision 2. A plan written before says
/// no revision: its runs read as they were planned (`--head-init bert` spelled out), so its
/// finished runs stay finished; the same command today plans other runs, and is refused there
/// rather than training over them; a plan written now records its revision.
#[test]
fn a_plan_of_an_older_preset_revision_keeps_its_runs() {
    let root = std::path::Path::new("results/paper");
    let file = std::fs::read_to_string(root.join("plan-reproduce.json")).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert!(raw.get("revision").is_none(), "written before revisions");
    let old: Plan = serde_json::from_str(&file).unwrap();
    assert_eq!(old.specs.len(), 140);
    for s in &old.specs {
        assert_eq!(s.run.head_init, Some(at5::nn::OutputInit::Bert), "{}", s.id);
        assert!(
            s.flags().join(" ").ends_with("--head-init bert"),
            "{}",
            s.id
        );
        assert!(
            sweep::finished(root, s).is_some(),
            "{} no longer finished",
            s.id
        );
    }
    let biases: Vec<String> = ["none", "t5", "t5-nob", "at5", "at5-nob", "alibi", "fire"]
        .map(String::from)
        .to_vec();
    let mut now = reproduce::plan(Preset::Paper, 5, &biases);
    let glorot = now.specs[0].config().unwrap();
    assert_eq!(glorot.model.head.init, at5::nn::OutputInit::Glorot);
    let refused = sweep::check_plan(root, &now).unwrap_err();
    assert!(refused.contains("--head-init bert"), "{refused}");
    sweep::add_flags(&mut now, "--head-init bert").unwrap();
    sweep::check_plan(root, &now).unwrap();
    assert_eq!(
        reproduce::command(&old).unwrap(),
        "cargo run --release -- --preset paper --seeds 5 --biases \
         none,t5,t5-nob,at5,at5-nob,alibi,fire --train-flags \"--head-init bert\""
    );

    let written = serde_json::to_value(&now).unwrap();
    assert_eq!(written["revision"], at5::train::PAPER_REVISION);
    let mut future = written.clone();
    future["revision"] = (at5::train::PAPER_REVISION + 1).into();
    let err = serde_json::from_value::<Plan>(future)
        .unwrap_err()
        .to_string();
    assert!(err.contains("plan revision"), "{err}");
    // A quick plan is what it was in every revision.
    let mut quick = serde_json::to_value(tiny_plan()).unwrap();
    quick.as_object_mut().unwrap().remove("revision");
    let quick: Plan = serde_json::from_value(quick).unwrap();
    assert!(quick.specs.iter().all(|s| s.run.head_init.is_none()));
}
