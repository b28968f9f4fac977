//! Tests of the report module: atomic writes, JSON files, mean ± std tables and SVG figures.
use at5::report::{
    Better, Cell, LegendAt, LineOpts, MISSING, Series, Table, format_mean_std, heatmap, line_chart,
    mean_std, read_json, small_multiples, write_atomic, write_json,
};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// A fresh, empty directory per test, so parallel tests never see each other's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("at5-report-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn atomic_write_replaces_contents_and_leaves_no_temp_files() {
    let dir = scratch("atomic");
    let path = dir.join("nested/deeper/out.txt");
    write_atomic(&path, b"first version, longer than the second").unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        b"first version, longer than the second"
    );
    write_atomic(&path, b"second").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"second");
    assert_eq!(names_in(&dir.join("nested/deeper")), vec!["out.txt"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn atomic_write_error_names_the_path_and_cleans_up() {
    let dir = scratch("atomic-err");
    // The target is an existing directory, so the rename over it fails after the temp file
    // was written: the temp file must be removed again.
    let target = dir.join("occupied");
    fs::create_dir_all(target.join("child")).unwrap();
    let e = write_atomic(&target, b"x").unwrap_err();
    assert!(e.contains("occupied"), "{e}");
    assert_eq!(names_in(&dir), vec!["occupied"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn atomic_write_never_touches_temp_files_of_other_writers() {
    let dir = scratch("atomic-foreign");
    // What another process left (a dead run in another PID namespace with our pid, or one
    // writing right now): its temp names, in the old pid-derived form and the current one.
    let pid = std::process::id();
    let foreign = [
        format!(".out.txt.tmp.{pid}.0"),
        format!(".out.txt.tmp.{pid}.1"),
        ".out.txt.tmp.AbCdEf".to_string(),
    ];
    for f in &foreign {
        fs::write(dir.join(f), b"someone else's").unwrap();
    }
    for _ in 0..3 {
        write_atomic(&dir.join("out.txt"), b"ours").unwrap();
    }
    // A failed write removes only what it created.
    fs::create_dir_all(dir.join("occupied/child")).unwrap();
    assert!(write_atomic(&dir.join("occupied"), b"x").is_err());
    let mut expected: Vec<String> = foreign.to_vec();
    expected.extend(["occupied".to_string(), "out.txt".to_string()]);
    expected.sort();
    assert_eq!(names_in(&dir), expected);
    for f in &foreign {
        assert_eq!(fs::read(dir.join(f)).unwrap(), b"someone else's");
    }
    assert_eq!(fs::read(dir.join("out.txt")).unwrap(), b"ours");
    fs::remove_dir_all(&dir).unwrap();
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct RunResult {
    name: String,
    seed: u64,
    accuracy: f64,
    curve: Vec<(usize, f64)>,
    note: Option<String>,
}

fn sample_result() -> RunResult {
    RunResult {
        name: "at5-len64".into(),
        seed: 7,
        accuracy: 0.931,
        curve: vec![(0, 2.3), (100, 0.71), (200, 0.25)],
        note: None,
    }
}

#[test]
fn json_round_trip_is_pretty_with_trailing_newline() {
    let dir = scratch("json");
    let path = dir.join("results/run.json");
    let r = sample_result();
    write_json(&path, &r).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"), "{text:?}");
    assert!(text.contains("\n  \"seed\": 7"), "not pretty: {text}");
    let back: RunResult = read_json(&path).unwrap();
    assert_eq!(back, r);
    assert_eq!(names_in(&dir.join("results")), vec!["run.json"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn read_json_of_truncated_file_names_path_and_position() {
    let dir = scratch("json-trunc");
    let path = dir.join("run.json");
    write_json(&path, &sample_result()).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, &text[..text.len() / 2]).unwrap();
    let e = read_json::<RunResult>(&path).unwrap_err();
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("line"), "{e}");
    assert!(e.contains("column"), "{e}");

    let missing = dir.join("absent.json");
    let e = read_json::<RunResult>(&missing).unwrap_err();
    assert!(e.contains("absent.json"), "{e}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mean_std_matches_hand_computation() {
    // mean 5; squared deviations 9+1+1+9 = 20; 20/3 under n - 1.
    let (m, s) = mean_std(&[2.0, 4.0, 6.0, 8.0]);
    assert_eq!(m, 5.0);
    assert!((s - (20.0f64 / 3.0).sqrt()).abs() < 1e-12, "{s}");
    // mean 2; deviations -1, 0, 1: 2/2 = 1.
    assert_eq!(mean_std(&[1.0, 2.0, 3.0]), (2.0, 1.0));
    assert_eq!(mean_std(&[0.25]), (0.25, 0.0));
    let (m, s) = mean_std(&[]);
    assert!(m.is_nan() && s.is_nan());
    // Small spread on a large mean: the two-pass formula keeps it exact.
    let (m, s) = mean_std(&[1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0]);
    assert_eq!((m, s), (1e9 + 2.0, 1.0));
}

#[test]
fn format_mean_std_rounds_to_digits() {
    assert_eq!(format_mean_std(93.14, 0.426, 1), "93.1 ± 0.4");
    assert_eq!(format_mean_std(0.5, 0.0, 3), "0.500 ± 0.000");
    assert_eq!(format_mean_std(f64::NAN, 0.1, 2), MISSING);
    assert_eq!(format_mean_std(1.0, f64::NAN, 2), "1.00");
}

/// The cells of the data rows of a Markdown table, trimmed.
fn cells(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .skip(2)
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn table_bolds_highest_per_row() {
    let mut t = Table::new("Task", ["T5", "AT5", "None"], 1).bold_best(Better::Higher);
    t.row(
        "copy",
        [Some((93.1, 0.4)), Some((95.02, 0.2)), Some((60.0, 3.0))],
    );
    t.row("reverse", [Some((88.0, 1.0)), Some((87.5, 0.5)), None]);
    let md = t.to_markdown();
    let c = cells(&md);
    assert_eq!(c[0], ["copy", "93.1 ± 0.4", "**95.0 ± 0.2**", "60.0 ± 3.0"]);
    assert_eq!(c[1], ["reverse", "**88.0 ± 1.0**", "87.5 ± 0.5", MISSING]);
}

#[test]
fn table_bolds_lowest_per_row_with_ties_and_missing() {
    let mut t = Table::new("Model", ["a", "b", "c", "d"], 2).bold_best(Better::Lower);
    // b and c tie at the printed precision (0.30); d is missing; a NaN mean counts as missing.
    t.row(
        "loss",
        [
            Cell::from((0.5, 0.01)),
            Cell::from((0.301, 0.02)),
            Cell::from((0.299, 0.05)),
            Cell::Missing,
        ],
    );
    t.row(
        "err",
        [
            Cell::Stat(f64::NAN, 0.0),
            Cell::from("diverged"),
            Cell::from((0.1, 0.0)),
            Cell::from(None),
        ],
    );
    t.row(
        "none",
        [Cell::Missing, Cell::Missing, Cell::Missing, Cell::Missing],
    );
    let c = cells(&t.to_markdown());
    assert_eq!(
        c[0],
        [
            "loss",
            "0.50 ± 0.01",
            "**0.30 ± 0.02**",
            "**0.30 ± 0.05**",
            MISSING
        ]
    );
    assert_eq!(
        c[1],
        ["err", MISSING, "diverged", "**0.10 ± 0.00**", MISSING]
    );
    assert_eq!(c[2], ["none", MISSING, MISSING, MISSING, MISSING]);
}

#[test]
fn a_single_seed_prints_its_value_alone() {
    let mut t = Table::new("task", ["one seed", "two seeds", "none"], 1).bold_best(Better::Higher);
    t.row(
        "x",
        [
            Cell::of_samples(&[93.14]),
            Cell::of_samples(&[90.0, 92.0]),
            Cell::of_samples(&[]),
        ],
    );
    let md = t.to_markdown();
    assert_eq!(
        cells(&md)[0],
        vec!["x", "**93.1**", "91.0 ± 1.4", MISSING],
        "{md}"
    );
}

#[test]
fn table_without_direction_bolds_nothing() {
    let mut t = Table::new("x", ["a", "b"], 1);
    t.row("r", [(1.0, 0.0), (2.0, 0.0)]);
    assert!(!t.to_markdown().contains("**"));
}

#[test]
fn table_extra_columns_are_not_bolded_and_pipes_align() {
    let mut t = Table::new("Length", ["T5", "AT5"], 1)
        .bold_best(Better::Higher)
        .extra_column("Bayes ceiling");
    // The ceiling is higher than every model, yet must not take the bold.
    t.row_with_extras("64", [(90.0, 1.0), (91.0, 0.5)], ["99.9"]);
    t.row("128", [(80.0, 2.0), (79.0, 2.5)]);
    let md = t.to_markdown();
    let c = cells(&md);
    assert_eq!(c[0], ["64", "90.0 ± 1.0", "**91.0 ± 0.5**", "99.9"]);
    assert_eq!(c[1], ["128", "**80.0 ± 2.0**", "79.0 ± 2.5", MISSING]);

    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].contains("Bayes ceiling"));
    assert!(lines[1].starts_with("| ---"), "{}", lines[1]);
    // Every line has its pipes at the same character columns.
    let pipes = |l: &str| -> Vec<usize> {
        l.chars()
            .enumerate()
            .filter(|&(_, ch)| ch == '|')
            .map(|(i, _)| i)
            .collect()
    };
    for l in &lines {
        assert_eq!(pipes(l), pipes(lines[0]), "misaligned:\n{md}");
    }
    assert!(md.ends_with('\n'));
}

#[test]
#[should_panic(expected = "cells for")]
fn table_row_of_wrong_width_panics() {
    let mut t = Table::new("x", ["a", "b"], 1);
    t.row("r", [(1.0, 0.0)]);
}

/// Asserts `path` holds a complete SVG that shows every string of `texts`.
fn assert_svg(path: &Path, texts: &[&str]) {
    let svg = fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for t in texts {
        assert!(svg.contains(t), "{t:?} missing from {}", path.display());
    }
    let dir = path.parent().unwrap();
    assert!(
        names_in(dir).iter().all(|n| !n.contains(".tmp.")),
        "temp file left in {}",
        dir.display()
    );
}

fn curves() -> Vec<Series> {
    vec![
        Series::new(
            "T5",
            vec![(16.0, 0.9), (32.0, 0.85), (64.0, 0.7), (128.0, 0.55)],
        ),
        Series::new(
            "AT5",
            vec![(16.0, 0.92), (32.0, 0.9), (64.0, 0.88), (128.0, 0.8)],
        ),
        // A diverged run: the NaN must leave a gap, not a panic.
        Series::new("no bias", vec![(16.0, 0.8), (32.0, f64::NAN), (64.0, 0.5)]),
    ]
}

#[test]
fn line_chart_writes_svg_with_labels_and_legend() {
    let dir = scratch("line");
    let path = dir.join("fig/acc.svg");
    let opts = LineOpts {
        log_x: false,
        y_range: Some((0.0, 1.0)),
        ..LineOpts::default()
    };
    line_chart(
        &path,
        "Accuracy vs length",
        "sequence length",
        "accuracy",
        &curves(),
        opts,
    )
    .unwrap();
    assert_svg(
        &path,
        &[
            "Accuracy vs length",
            "sequence length",
            "accuracy",
            "T5",
            "AT5",
            "no bias",
            "<circle",
        ],
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// The legend's box (the translucent white rectangle plotters draws behind it) as `(x, y)`.
fn legend_box(svg: &str) -> (u32, u32) {
    let rect = svg
        .split("<rect")
        .find(|r| r.contains("opacity=\"0.85\""))
        .expect("a legend box");
    let attr = |name: &str| -> u32 {
        let v = rect.split(&format!(" {name}=\"")).nth(1).unwrap();
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    (attr("x"), attr("y"))
}

#[test]
fn the_legend_sits_where_the_chart_asks_and_upper_right_by_default() {
    let dir = scratch("legend");
    let draw = |name: &str, legend: LegendAt| {
        let path = dir.join(name);
        let opts = LineOpts {
            legend,
            ..LineOpts::default()
        };
        line_chart(&path, "t", "x", "y", &curves(), opts).unwrap();
        legend_box(&fs::read_to_string(path).unwrap())
    };
    let default = {
        let path = dir.join("default.svg");
        line_chart(&path, "t", "x", "y", &curves(), LineOpts::default()).unwrap();
        legend_box(&fs::read_to_string(path).unwrap())
    };
    let upper_right = draw("ur.svg", LegendAt::UpperRight);
    let upper_left = draw("ul.svg", LegendAt::UpperLeft);
    let middle_right = draw("mr.svg", LegendAt::MiddleRight);
    let lower_right = draw("lr.svg", LegendAt::LowerRight);
    assert_eq!(default, upper_right);
    assert!(upper_left.0 < upper_right.0 && upper_left.1 == upper_right.1);
    assert!(upper_right.1 < middle_right.1 && middle_right.1 < lower_right.1);
    assert_eq!(middle_right.0, upper_right.0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn line_chart_log_x() {
    let dir = scratch("line-log");
    let path = dir.join("lr.svg");
    let opts = LineOpts {
        log_x: true,
        y_range: None,
        ..LineOpts::default()
    };
    line_chart(&path, "LR sweep", "learning rate", "loss", &curves(), opts).unwrap();
    assert_svg(&path, &["LR sweep", "learning rate", "loss", "AT5"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn line_chart_errors() {
    let dir = scratch("line-err");
    let path = dir.join("bad.svg");
    let lin = LineOpts::default();
    let e = line_chart(&path, "t", "x", "y", &[], lin).unwrap_err();
    assert!(e.contains("bad.svg") && e.contains("no series"), "{e}");

    let empty = [Series::new("empty", vec![])];
    let e = line_chart(&path, "t", "x", "y", &empty, lin).unwrap_err();
    assert!(e.contains("\"empty\""), "{e}");

    let nan = [Series::new(
        "nan",
        vec![(f64::NAN, 1.0), (2.0, f64::INFINITY)],
    )];
    assert!(line_chart(&path, "t", "x", "y", &nan, lin).is_err());

    let log = LineOpts {
        log_x: true,
        y_range: None,
        ..LineOpts::default()
    };
    let zero = [Series::new("from zero", vec![(0.0, 1.0), (1.0, 2.0)])];
    let e = line_chart(&path, "t", "x", "y", &zero, log).unwrap_err();
    assert!(e.contains("log") && e.contains("from zero"), "{e}");
    let neg = [Series::new("neg", vec![(-1.0, 1.0), (1.0, 2.0)])];
    assert!(line_chart(&path, "t", "x", "y", &neg, log).is_err());

    let bad_range = LineOpts {
        log_x: false,
        y_range: Some((1.0, 1.0)),
        ..LineOpts::default()
    };
    assert!(line_chart(&path, "t", "x", "y", &curves(), bad_range).is_err());
    // Nothing was written for any failure.
    assert!(names_in(&dir).is_empty(), "{:?}", names_in(&dir));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn heatmap_writes_svg_with_labels_and_range() {
    let dir = scratch("heat");
    let path = dir.join("attn.svg");
    let values: Vec<Vec<f64>> = (0..6)
        .map(|r| (0..8).map(|c| (r * 8 + c) as f64 / 47.0).collect())
        .collect();
    heatmap(
        &path,
        "Head 0 attention",
        "key position",
        "query position",
        &values,
    )
    .unwrap();
    assert_svg(
        &path,
        &[
            "Head 0 attention",
            "key position",
            "query position",
            "max 1",
            "min 0",
            "<rect",
        ],
    );

    // Non-finite cells are tolerated and left out of the range.
    let holes = vec![vec![0.5, f64::NAN], vec![f64::INFINITY, 2.5]];
    heatmap(&path, "holes", "x", "y", &holes).unwrap();
    assert_svg(&path, &["max 2.5", "min 0.5"]);
    // A constant map does not divide by zero.
    heatmap(&path, "flat", "x", "y", &[vec![3.0, 3.0]]).unwrap();
    assert_svg(&path, &["max 3", "min 3"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn heatmap_errors() {
    let dir = scratch("heat-err");
    let path = dir.join("bad.svg");
    let e = heatmap(&path, "t", "x", "y", &[]).unwrap_err();
    assert!(e.contains("bad.svg"), "{e}");
    assert!(heatmap(&path, "t", "x", "y", &[vec![]]).is_err());
    let e = heatmap(&path, "t", "x", "y", &[vec![1.0, 2.0], vec![3.0]]).unwrap_err();
    assert!(e.contains("row 1"), "{e}");
    assert!(heatmap(&path, "t", "x", "y", &[vec![f64::NAN]]).is_err());
    assert!(names_in(&dir).is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_multiples_writes_one_panel_per_head() {
    let dir = scratch("multi");
    let path = dir.join("heads.svg");
    let panels: Vec<(String, Vec<Series>)> = (0..5)
        .map(|h| {
            let bias: Vec<(f64, f64)> = (-8..=8)
                .map(|d| (d as f64, -((d as f64).abs()) * (h as f64 + 1.0) / 10.0))
                .collect();
            let mut series = vec![Series::new("learned bias", bias)];
            if h % 2 == 0 {
                series.push(Series::new("T5 buckets", vec![(-8.0, -0.5), (8.0, -0.5)]));
            }
            (format!("head {h}"), series)
        })
        .collect();
    small_multiples(
        &path,
        "Relative position bias per head",
        &panels,
        "relative distance",
        "bias",
        3,
    )
    .unwrap();
    let mut texts = vec![
        "Relative position bias per head",
        "relative distance",
        "bias",
        "learned bias",
        "T5 buckets",
    ];
    let heads: Vec<String> = (0..5).map(|h| format!("head {h}")).collect();
    texts.extend(heads.iter().map(String::as_str));
    assert_svg(&path, &texts);

    assert!(small_multiples(&path, "t", &[], "x", "y", 2).is_err());
    assert!(small_multiples(&path, "t", &panels, "x", "y", 0).is_err());
    let empty = vec![("p".to_string(), vec![Series::new("s", vec![])])];
    let e = small_multiples(&path, "t", &empty, "x", "y", 2).unwrap_err();
    assert!(e.contains("heads.svg") && e.contains("\"s\""), "{e}");
    fs::remove_dir_all(&dir).unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
    /// Records are compared after a JSON round-trip (a finished run reused by a sweep), so every
    /// finite f64 must come back with the same bits, not merely close. Same encoder and parser as
    /// `write_json` / `read_json`; the file path itself is covered below.
    #[test]
    fn every_finite_f64_round_trips_through_json_bit_for_bit(bits in proptest::prelude::any::<u64>()) {
        let x = f64::from_bits(bits);
        proptest::prop_assume!(x.is_finite());
        let want = [x, x / 3.0, 1.0 / (1.0 + x.abs())];
        let bytes = serde_json::to_vec_pretty(&want).unwrap();
        let back: Vec<f64> = serde_json::from_slice(&bytes).unwrap();
        for (a, b) in back.iter().zip(want) {
            proptest::prop_assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}

#[test]
fn the_value_that_once_came_back_changed_round_trips_through_a_file() {
    // 1059.0067998826619 was read back as 1059.006799882662 by serde_json's default parser.
    let dir = scratch("f64-file");
    let file = dir.join("x.json");
    let values = vec![
        1059.0067998826619_f64,
        0.1 + 0.2,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
    ];
    write_json(&file, &values).unwrap();
    let back: Vec<f64> = read_json(&file).unwrap();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&values));
}

#[test]
fn welch_interval_matches_a_hand_computation() {
    use at5::report::welch_interval;
    // a: mean 2, var 1 (n 3); b: mean 0, var 1 (n 3): se = sqrt(2/3), df = 4, t = 2.7764451.
    let (d, lo, hi) = welch_interval(&[1.0, 2.0, 3.0], &[-1.0, 0.0, 1.0]).unwrap();
    let half = 2.776_445_105 * (2.0f64 / 3.0).sqrt();
    assert!((d - 2.0).abs() < 1e-12);
    assert!((lo - (2.0 - half)).abs() < 1e-8 && (hi - (2.0 + half)).abs() < 1e-8);
    // Between table rows (df ≈ 10.3 here) the quantile lies between its neighbours' values.
    let a: Vec<f64> = (0..8).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..8).map(|i| 0.5 * i as f64).collect();
    let (d, lo, hi) = welch_interval(&a, &b).unwrap();
    let se = ((6.0f64 + 1.5) / 8.0).sqrt();
    let t = (hi - d) / se;
    assert!(
        (lo + hi - 2.0 * d).abs() < 1e-12 && t > 2.179 && t < 2.228,
        "t = {t}"
    );
    assert!(welch_interval(&[1.0], &[1.0, 2.0]).is_none());
    assert_eq!(
        welch_interval(&[1.0, 1.0], &[0.0, 0.0]),
        Some((1.0, 1.0, 1.0))
    );
}

#[test]
fn the_t_quantile_matches_published_values_at_any_df() {
    use at5::report::t975;
    // Student's t, 0.975 quantiles (standard tables, to 9 digits), and the normal's in the limit.
    for (df, t) in [
        (1.0, 12.706_204_736),
        (2.0, 4.302_652_730),
        (3.0, 3.182_446_305),
        (5.0, 2.570_581_836),
        (10.0, 2.228_138_852),
        (30.0, 2.042_272_456),
        (1e15, 1.959_963_985),
    ] {
        assert!(
            (t975(df) - t).abs() < 1e-8 * t,
            "df {df}: {} vs {t}",
            t975(df)
        );
    }
    // At df 1 the t is Cauchy: its 0.975 quantile is tan(0.475π). Fractional df (Welch's)
    // fall between their neighbours, and the quantile falls as df grows.
    let cauchy = (0.475 * std::f64::consts::PI).tan();
    assert!((t975(1.0) - cauchy).abs() < 1e-9 * cauchy);
    let mut last = f64::INFINITY;
    for i in 0..200 {
        let q = t975(1.0 + 0.05 * i as f64);
        assert!(q < last, "df {}: {q} after {last}", 1.0 + 0.05 * i as f64);
        last = q;
    }
    assert!(t975(0.0).is_nan() && t975(0.4).is_nan() && t975(f64::NAN).is_nan());
    assert!((t975(0.5) - 164.557_673_480).abs() < 1e-8 * 164.56);
}

/// The quantile is where the t distribution function reaches 0.975, at every df a Welch
/// interval can have; past the df where it switches to the expansion in 1/df it joins without
/// a step, keeps falling and returns at any size.
#[test]
fn the_t_quantile_inverts_the_distribution_and_joins_its_expansion() {
    use at5::report::{stats::T_EXACT_DF, t975};
    use statrs::distribution::{ContinuousCDF, StudentsT};
    for i in 0..400 {
        let df = 1.0 + 0.37 * i as f64;
        let t = t975(df);
        let p = StudentsT::new(0.0, 1.0, df).unwrap().cdf(t);
        assert!((p - 0.975).abs() < 1e-12, "df {df}: F({t}) = {p}");
    }
    let (below, above) = (t975(T_EXACT_DF), t975(T_EXACT_DF * (1.0 + 1e-12)));
    assert!((below - above).abs() < 4e-12, "{below} then {above}");
    let mut last = below;
    for df in [2e4, 1e5, 1e7, 1e8, 1e12, 1e300, f64::INFINITY] {
        let q = t975(df);
        assert!(
            q < last || (q == last && df > 1e12),
            "df {df}: {q} after {last}"
        );
        assert!(q >= 1.959_963_984_540_054, "df {df}: {q}");
        last = q;
    }
}

#[test]
fn difference_phrase_reads_the_interval() {
    use at5::report::difference_phrase;
    // The hand-computed interval above: 2 ± 2.776·sqrt(2/3) = [-0.27, +4.27], holding zero.
    assert_eq!(
        difference_phrase(&[1.0, 2.0, 3.0], &[-1.0, 0.0, 1.0]),
        "+2.0 points, 95 % Welch interval [-0.3, +4.3] over 3 and 3 seeds: not separated"
    );
    // Shifted by 5 it excludes zero; the sign follows a − b.
    assert_eq!(
        difference_phrase(&[-1.0, 0.0, 1.0], &[4.0, 5.0, 6.0]),
        "-5.0 points, 95 % Welch interval [-7.3, -2.7] over 3 and 3 seeds: separated"
    );
    // Two families a test example apart: one decimal would print `+0.0 [+0.0, +0.0]`. Here
    // 0.032 ± 2.776·0.011/√5 = [+0.018, +0.046].
    assert_eq!(
        difference_phrase(&[100.0; 5], &[99.96, 99.96, 99.98, 99.98, 99.96]),
        "+0.03 points, 95 % Welch interval [+0.02, +0.05] over 5 and 5 seeds: separated"
    );
    assert_eq!(
        difference_phrase(&[84.0], &[85.0, 86.0]),
        "-1.5 points, too few seeds for an interval"
    );
}
