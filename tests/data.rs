//! Task generators and data files: grammar, statistics, marker rules, splits, determinism, I/O.
use at5::data::{
    AddingConfig, Example, Label, LagKConfig, PAD, Process50Config, ReberConfig, Sequence,
    TaskConfig, TaskData, TaskKind, adding, generate, load_dir, process50, reber, write_dir,
};
use at5::nn::Pooling;
use at5::train::pooling_for;
use std::collections::HashSet;
use std::path::PathBuf;

fn quick_configs() -> Vec<TaskConfig> {
    vec![
        TaskConfig::Reber(ReberConfig::quick()),
        TaskConfig::Process50(Process50Config::quick()),
        TaskConfig::Adding(AddingConfig::quick()),
        TaskConfig::LagK(LagKConfig::quick()),
    ]
}

fn all_examples(d: &TaskData) -> impl Iterator<Item = &Example> {
    d.train.iter().chain(&d.dev).chain(&d.test)
}

fn tokens(e: &Example) -> &[usize] {
    e.input.tokens().expect("token task")
}

/// Hashable identity of an input: tokens as they are, pairs by their bits.
fn key(e: &Example) -> Vec<u64> {
    match &e.input {
        Sequence::Tokens(t) => t.iter().map(|&t| t as u64).collect(),
        Sequence::Pairs(p) => p
            .iter()
            .map(|p| ((p[0].to_bits() as u64) << 32) | p[1].to_bits() as u64)
            .collect(),
    }
}

/// The whole embedded string: input with its dropped first symbol (B) and last (the label).
fn full_reber(e: &Example) -> Vec<usize> {
    let mut s = vec![reber::B];
    s.extend_from_slice(tokens(e));
    s.push(e.label.class().unwrap());
    s
}

fn sym(s: &str) -> Vec<usize> {
    reber::parse_symbols(s).unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("at5-data-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn reber_strings_are_grammatical_and_labelled_by_their_first_token() {
    let d = generate(&TaskConfig::Reber(ReberConfig::quick()), 1).unwrap();
    let mut label_p = 0;
    for e in all_examples(&d) {
        let s = full_reber(e);
        assert!(reber::accepts(&s), "rejected generated string {s:?}");
        assert!(s.len() < 500);
        let c = e.label.class().unwrap();
        assert_eq!(c, tokens(e)[0]);
        assert!(c == reber::P || c == reber::T);
        label_p += usize::from(c == reber::P);
    }
    let n = d.train.len() + d.dev.len() + d.test.len();
    let frac = label_p as f64 / n as f64;
    assert!((frac - 0.5).abs() < 0.03, "P labels: {frac}");
    // Both branches of both inner-string choices, and the P X recursion, do occur.
    let joined: Vec<String> = all_examples(&d)
        .map(|e| full_reber(e).iter().map(|&t| reber::SYMBOLS[t]).collect())
        .collect();
    for pat in ["BTSSX", "BTXX", "BPT", "VPXT", "VPSE", "VVE", "XSE"] {
        assert!(
            joined.iter().any(|s| s.contains(pat)),
            "no string contains {pat}"
        );
    }
}

#[test]
fn reber_recogniser_rejects_non_grammatical_strings() {
    assert!(reber::accepts(&sym("BTBTXSEPBPTVVET")));
    assert!(reber::accepts(&sym("BPBTSSXXTVPSETBPTTVVEP")));
    assert!(reber::accepts_inner(&sym("BPTVPXTVVE")));
    for bad in [
        "BTBTXSEPBPTVVEP", // last symbol differs from the second
        "BTBTXSETBPTVVET", // the middle symbol must be the other one of P/T
        "BTBPVVEPBTXSET",  // this variant's B-phrase needs at least one T
        "BTBTXSEPBPTVVE",  // missing the final symbol
        "BXBTXSEPBTXSEX",  // c must be P or T
        "BTBTXSPBTXSET",   // first inner string lacks its E
        "BTBTXSEPBTXSEET", // stray E
        "BTBTXSEPT",       // no second inner string
        "",
    ] {
        assert!(!reber::accepts(&sym(bad)), "accepted {bad:?}");
    }
    // Three mutations of generated strings that can never be grammatical.
    let d = generate(&TaskConfig::Reber(ReberConfig::quick()), 2).unwrap();
    for e in d.test.iter().take(300) {
        let s = full_reber(e);
        let other = |c: usize| if c == reber::P { reber::T } else { reber::P };
        let mut flipped = s.clone();
        *flipped.last_mut().unwrap() = other(s[1]);
        assert!(!reber::accepts(&flipped));
        let first_e = s.iter().position(|&t| t == reber::E).unwrap();
        let mut wrong_m = s.clone();
        wrong_m[first_e + 1] = s[1];
        assert!(!reber::accepts(&wrong_m));
        let mut no_e = s.clone();
        no_e.remove(first_e);
        assert!(!reber::accepts(&no_e));
    }
}

#[test]
fn reber_paper_sizes_and_training_subset() {
    let d = generate(&TaskConfig::Reber(ReberConfig::paper()), 3).unwrap();
    assert_eq!(
        (d.train.len(), d.dev.len(), d.test.len()),
        (20000, 5000, 5000)
    );
    let idx = d.training_indices();
    let want: Vec<usize> = (0..500).chain(10000..10500).collect();
    assert_eq!(idx, want);
    assert_eq!(d.training_examples().len(), 1000);
    assert_eq!(
        (d.vocab_size, d.num_classes, pooling_for(d.kind)),
        (8, 8, Pooling::Last)
    );
    let lens: Vec<usize> = all_examples(&d).map(|e| e.input.len()).collect();
    assert_eq!(d.max_len, *lens.iter().max().unwrap());
    assert_eq!(d.stats.min_len, *lens.iter().min().unwrap());
    let mean = lens.iter().sum::<usize>() as f64 / lens.len() as f64;
    assert!((d.stats.mean_len - mean).abs() < 1e-9);
    assert_eq!(d.stats.class_counts.iter().sum::<usize>(), 20000);
    assert_eq!(
        d.stats.class_counts[reber::P] + d.stats.class_counts[reber::T],
        20000
    );
    assert!(all_examples(&d).all(|e| tokens(e).iter().all(|&t| t != PAD && t < 8)));
}

/// Empirical transition probabilities (p01, p10) and first-state-0 frequency of one class.
fn chain_estimates(examples: &[Example], class: usize) -> (f64, f64, f64) {
    let (mut c0, mut c01, mut c1, mut c10, mut first0, mut n) = (0, 0, 0, 0, 0, 0);
    for e in examples.iter().filter(|e| e.label == Label::Class(class)) {
        let s: Vec<usize> = tokens(e).iter().map(|&t| t - 1).collect();
        n += 1;
        first0 += usize::from(s[0] == 0);
        for w in s.windows(2) {
            if w[0] == 0 {
                c0 += 1;
                c01 += usize::from(w[1] == 1);
            } else {
                c1 += 1;
                c10 += usize::from(w[1] == 0);
            }
        }
    }
    (
        c01 as f64 / c0 as f64,
        c10 as f64 / c1 as f64,
        first0 as f64 / n as f64,
    )
}

#[test]
fn process50_transition_frequencies_match_each_class_chain() {
    let d = generate(&TaskConfig::Process50(Process50Config::paper()), 4).unwrap();
    assert_eq!(
        (d.train.len(), d.dev.len(), d.test.len()),
        (20000, 5000, 5000)
    );
    assert_eq!(
        (d.vocab_size, d.num_classes, pooling_for(d.kind)),
        (3, 2, Pooling::Mean)
    );
    assert!(
        all_examples(&d)
            .all(|e| e.input.len() == 50 && tokens(e).iter().all(|&t| t == 1 || t == 2))
    );
    for (class, chain) in process50::CHAINS.iter().enumerate() {
        let (p01, p10, first0) = chain_estimates(&d.train, class);
        assert!((p01 - chain.p01).abs() < 0.01, "class {class}: p01 {p01}");
        assert!((p10 - chain.p10).abs() < 0.01, "class {class}: p10 {p10}");
        assert!(
            (first0 - 2.0 / 3.0).abs() < 0.02,
            "class {class}: first 0 {first0}"
        );
    }
    // Class blocks: train is 10000 of class 0 then 10000 of class 1, the subset half of each.
    assert!(d.train[..10000].iter().all(|e| e.label == Label::Class(0)));
    assert!(d.train[10000..].iter().all(|e| e.label == Label::Class(1)));
    assert_eq!(d.stats.class_counts, vec![10000, 10000]);
    let sub = d.training_examples();
    assert_eq!(sub.len(), 5000);
    assert_eq!(
        sub.iter().filter(|e| e.label == Label::Class(0)).count(),
        2500
    );
    for split in [&d.dev, &d.test] {
        let ones = split.iter().filter(|e| e.label == Label::Class(1)).count();
        assert_eq!(ones, 2500);
    }
    assert_eq!(d.stats.bayes_accuracy, Some(process50::bayes_accuracy(50)));
    // The likelihood-ratio rule reaches the computed ceiling on the test split.
    let log_lik = |s: &[usize], ch: process50::Chain| -> f64 {
        s.windows(2)
            .map(|w| match (w[0], w[1]) {
                (1, 1) => (1.0 - ch.p01).ln(),
                (1, _) => ch.p01.ln(),
                (_, 1) => ch.p10.ln(),
                _ => (1.0 - ch.p10).ln(),
            })
            .sum()
    };
    let [c0, c1] = process50::CHAINS;
    let correct = d
        .test
        .iter()
        .filter(|e| {
            let s = tokens(e);
            let pred = usize::from(log_lik(s, c1) > log_lik(s, c0));
            e.label == Label::Class(pred)
        })
        .count();
    let acc = correct as f64 / d.test.len() as f64;
    let bayes = process50::bayes_accuracy(50);
    assert!(
        (acc - bayes).abs() < 0.025,
        "empirical {acc} vs Bayes {bayes}"
    );
}

#[test]
fn process50_bayes_accuracy_matches_brute_force() {
    let mut prev = 0.5;
    for len in 1..=12usize {
        let mut total = 0.0;
        for bits in 0u32..(1 << len) {
            let s: Vec<usize> = (0..len).map(|i| ((bits >> i) & 1) as usize).collect();
            let lik = |ch: process50::Chain| {
                let first = if s[0] == 0 { 2.0 / 3.0 } else { 1.0 / 3.0 };
                s.windows(2).fold(first, |p, w| {
                    p * match (w[0], w[1]) {
                        (0, 0) => 1.0 - ch.p01,
                        (0, _) => ch.p01,
                        (_, 0) => ch.p10,
                        _ => 1.0 - ch.p10,
                    }
                })
            };
            let [c0, c1] = process50::CHAINS;
            total += lik(c0).max(lik(c1)) / 2.0;
        }
        let dp = process50::bayes_accuracy(len);
        assert!(
            (dp - total).abs() < 1e-12,
            "len {len}: dp {dp} vs brute {total}"
        );
        // More observations never hurt the Bayes rule.
        assert!(dp >= prev - 1e-12, "len {len}: {dp} < {prev}");
        prev = dp;
    }
    assert!((process50::bayes_accuracy(1) - 0.5).abs() < 1e-12);
    let b50 = process50::bayes_accuracy(50);
    assert!(b50 > 0.5 && b50 < 1.0 && b50 > prev, "{b50}");
}

fn check_adding(d: &TaskData, t: usize) {
    let hi = t / 2 - 1;
    let mut zeroed_t1 = 0;
    for e in all_examples(d) {
        let p = e.input.pairs().unwrap();
        assert_eq!(p.len(), t);
        let ones: Vec<usize> = (0..t).filter(|&i| p[i][1] == 1.0).collect();
        assert_eq!(ones.len(), 2, "markers {p:?}");
        for (i, q) in p.iter().enumerate() {
            let v = q[0];
            assert!((-1.0..=1.0).contains(&v));
            assert_eq!(
                ((v as f64 * 1e4).round() / 1e4) as f32,
                v,
                "not 4 decimals: {v}"
            );
            let want = if ones.contains(&i) {
                1.0
            } else if i == 0 || i == t - 1 {
                -1.0
            } else {
                0.0
            };
            assert_eq!(q[1], want, "marker at {i}");
        }
        let (a, b) = (ones[0], ones[1]);
        assert!(
            (a < 10 && b < hi) || (b < 10 && a < hi),
            "positions {a}, {b} fit no (t1, t2)"
        );
        // Position 0 can only be marked with another position >= 10 if t1 = 0.
        if a == 0 && b >= 10 {
            assert_eq!(p[0][0], 0.0);
            zeroed_t1 += 1;
        }
        let target = e.label.real().unwrap();
        assert_eq!(Some(target), adding::target_of(p));
        let direct = 0.5 + (p[a][0] as f64 + p[b][0] as f64) / 4.0;
        assert!((target as f64 - direct).abs() < 1e-6);
        assert!((0.0..=1.0).contains(&target));
    }
    if hi > 11 {
        assert!(zeroed_t1 > 0, "the t1 = 0 case never occurred");
    }
}

#[test]
fn adding_marker_rules_and_targets() {
    let d = generate(&TaskConfig::Adding(AddingConfig::quick()), 5).unwrap();
    assert_eq!(
        (d.vocab_size, d.num_classes, pooling_for(d.kind)),
        (0, 0, Pooling::Last)
    );
    assert_eq!(d.max_len, 50);
    assert!(d.stats.class_counts.is_empty() && d.stats.label_mean.is_some());
    assert!((d.stats.label_mean.unwrap() - 0.5).abs() < 0.01);
    check_adding(&d, 50);
    assert_eq!(d.training_indices(), (0..1000).collect::<Vec<_>>());
    // Short T: t1 can fall outside [0, T/2 - 1) and even on the last position.
    let short = AddingConfig {
        seq_len: 10,
        train: 2000,
        dev: 100,
        test: 100,
        training_nums: 100,
    };
    let d = generate(&TaskConfig::Adding(short), 6).unwrap();
    check_adding(&d, 10);
    let last_marked = all_examples(&d)
        .filter(|e| e.input.pairs().unwrap()[9][1] == 1.0)
        .count();
    assert!(last_marked > 0);
}

#[test]
fn lagk_label_is_the_token_k_before_the_last_slot() {
    let cfg = LagKConfig::quick();
    let d = generate(&TaskConfig::LagK(cfg.clone()), 7).unwrap();
    assert_eq!(
        (d.vocab_size, d.num_classes),
        (cfg.vocab + 1, cfg.vocab + 1)
    );
    assert_eq!(
        (d.max_len, pooling_for(d.kind)),
        (cfg.seq_len, Pooling::Last)
    );
    let mut counts = vec![0usize; cfg.vocab + 1];
    for e in all_examples(&d) {
        let s = tokens(e);
        assert_eq!(s.len(), cfg.seq_len);
        assert_eq!(e.label, Label::Class(s[cfg.seq_len - 1 - cfg.lag]));
        for &t in s {
            assert!((1..=cfg.vocab).contains(&t));
            counts[t] += 1;
        }
    }
    let total: usize = counts.iter().sum();
    for &c in &counts[1..] {
        let f = c as f64 / total as f64;
        assert!(
            (f - 1.0 / cfg.vocab as f64).abs() < 0.01,
            "token frequency {f}"
        );
    }
    // Exhausting a tiny space still terminates with every sequence exactly once.
    let full = LagKConfig {
        seq_len: 8,
        lag: 1,
        vocab: 2,
        train: 200,
        dev: 28,
        test: 28,
        training_nums: 10,
    };
    let d = generate(&TaskConfig::LagK(full), 8).unwrap();
    let keys: HashSet<_> = all_examples(&d).map(key).collect();
    assert_eq!(keys.len(), 256);
}

#[test]
fn inputs_are_unique_across_all_splits() {
    for cfg in quick_configs() {
        let d = generate(&cfg, 9).unwrap();
        let n = d.train.len() + d.dev.len() + d.test.len();
        let keys: HashSet<_> = all_examples(&d).map(key).collect();
        assert_eq!(keys.len(), n, "{}", d.name);
        assert_eq!(
            d.stats.split_sizes,
            [d.train.len(), d.dev.len(), d.test.len()]
        );
    }
}

#[test]
fn same_seed_same_data_different_seed_different_data() {
    for cfg in quick_configs() {
        let a = generate(&cfg, 10).unwrap();
        let b = generate(&cfg, 10).unwrap();
        let c = generate(&cfg, 11).unwrap();
        assert_eq!(a, b, "{}", a.name);
        assert_ne!(a.train, c.train, "{}", a.name);
        assert_ne!(a.test, c.test, "{}", a.name);
    }
}

#[test]
fn files_round_trip_exactly() {
    for cfg in quick_configs() {
        let d = generate(&cfg, 12).unwrap();
        let dir = temp_dir(d.kind.name());
        write_dir(&dir, &d).unwrap();
        let back = load_dir(&dir, d.kind).unwrap();
        assert_eq!(back.train, d.train, "{}", d.name);
        assert_eq!(back.dev, d.dev, "{}", d.name);
        assert_eq!(back.test, d.test, "{}", d.name);
        assert_eq!(
            (back.vocab_size, back.num_classes, back.max_len, back.kind),
            (d.vocab_size, d.num_classes, d.max_len, d.kind),
            "{}",
            d.name
        );
        assert_eq!(back.stats.bayes_accuracy, d.stats.bayes_accuracy);
        // Writing what was loaded gives byte-identical files.
        let dir2 = temp_dir(&format!("{}-again", d.kind.name()));
        write_dir(&dir2, &back).unwrap();
        for f in ["train.txt", "dev.txt", "test.txt"] {
            let x = std::fs::read(dir.join(f)).unwrap();
            assert_eq!(x, std::fs::read(dir2.join(f)).unwrap(), "{f}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&dir2);
    }
}

#[test]
fn file_formats_match_the_original_symbols() {
    let dir = temp_dir("format");
    let d = generate(&TaskConfig::Reber(ReberConfig::quick()), 13).unwrap();
    write_dir(&dir, &d).unwrap();
    let text = std::fs::read_to_string(dir.join("train.txt")).unwrap();
    let first: Vec<&str> = text.lines().next().unwrap().split(' ').collect();
    assert_eq!(first.len(), d.train[0].input.len() + 1);
    assert_eq!(first[0], *first.last().unwrap());
    assert!(first.iter().all(|f| f.len() == 1 && "BTPSXVE".contains(*f)));

    std::fs::write(dir.join("train.txt"), "T B T X S E P B P T V V E T\n").unwrap();
    for f in ["dev.txt", "test.txt"] {
        std::fs::write(dir.join(f), "P B P T V V E T B T X S E P\n\n").unwrap();
    }
    let r = load_dir(&dir, TaskKind::Reber).unwrap();
    assert_eq!(tokens(&r.train[0]), &sym("TBTXSEPBPTVVE")[..]);
    assert_eq!(r.train[0].label, Label::Class(reber::T));
    assert_eq!(r.training_nums, 1);

    for (f, line) in [
        ("train.txt", "0.1234_-1 -0.5_1 0.25_1 0_-1 0.4375\n"),
        ("dev.txt", "0.1_1 0.2_1 0.575\n"),
        ("test.txt", "1_1 -1_1 0.5\n"),
    ] {
        std::fs::write(dir.join(f), line).unwrap();
    }
    let a = load_dir(&dir, TaskKind::Adding).unwrap();
    let p = a.train[0].input.pairs().unwrap();
    assert_eq!(
        p,
        &[[0.1234, -1.0], [-0.5, 1.0], [0.25, 1.0], [0.0, -1.0]][..]
    );
    assert_eq!(adding::target_of(p), a.train[0].label.real());

    // Process digits map to token ids 1 and 2; the Bayes ceiling is reported where it is known.
    for (len, bayes) in [(5, Some(process50::bayes_accuracy(5))), (70, None)] {
        let line = |label: usize| {
            let digits: Vec<String> = (0..len).map(|i| ((i / 3) % 2).to_string()).collect();
            format!("{} {label}\n", digits.join(" "))
        };
        for f in ["train.txt", "dev.txt", "test.txt"] {
            std::fs::write(dir.join(f), line(0) + &line(1)).unwrap();
        }
        let pr = load_dir(&dir, TaskKind::Process50).unwrap();
        assert_eq!(&tokens(&pr.train[0])[..4], &[1, 1, 1, 2]);
        assert_eq!(pr.train[1].label, Label::Class(1));
        assert_eq!(pr.stats.bayes_accuracy, bayes);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_files_name_the_file_and_line() {
    let dir = temp_dir("malformed");
    let d = generate(&TaskConfig::Adding(AddingConfig::quick()), 14).unwrap();
    write_dir(&dir, &d).unwrap();
    let dev = std::fs::read_to_string(dir.join("dev.txt")).unwrap();
    let mut lines: Vec<String> = dev.lines().map(String::from).collect();
    lines[16] = lines[16].replacen(' ', " abc ", 1);
    std::fs::write(dir.join("dev.txt"), lines.join("\n")).unwrap();
    let err = load_dir(&dir, TaskKind::Adding).unwrap_err();
    assert!(err.contains("dev.txt:17:"), "{err}");
    assert!(
        err.contains("expected a token like 0.5_1") && err.contains("\"abc\""),
        "{err}"
    );

    lines[16] = "0.1_1 0.2_1 x".into();
    std::fs::write(dir.join("dev.txt"), lines.join("\n")).unwrap();
    let err = load_dir(&dir, TaskKind::Adding).unwrap_err();
    assert!(
        err.contains("dev.txt:17:") && err.contains("real-valued label"),
        "{err}"
    );

    std::fs::write(dir.join("dev.txt"), "0.1_1\n").unwrap();
    let err = load_dir(&dir, TaskKind::Adding).unwrap_err();
    assert!(
        err.contains("dev.txt:1:") && err.contains("at least one token"),
        "{err}"
    );

    std::fs::write(dir.join("dev.txt"), "\n  \n").unwrap();
    let err = load_dir(&dir, TaskKind::Adding).unwrap_err();
    assert!(
        err.contains("dev.txt") && err.contains("no examples"),
        "{err}"
    );

    std::fs::remove_file(dir.join("dev.txt")).unwrap();
    let err = load_dir(&dir, TaskKind::Adding).unwrap_err();
    assert!(
        err.contains("dev.txt") && err.contains("cannot read"),
        "{err}"
    );

    // The same file read as another task fails on its first token.
    let err = load_dir(&dir, TaskKind::Reber).unwrap_err();
    assert!(
        err.contains("train.txt:1:") && err.contains("Reber symbol"),
        "{err}"
    );
    std::fs::write(dir.join("train.txt"), "0 1 1 0 1\n1 1 2\n").unwrap();
    let err = load_dir(&dir, TaskKind::Process50).unwrap_err();
    assert!(
        err.contains("train.txt:2:") && err.contains("\"2\""),
        "{err}"
    );
    std::fs::write(dir.join("train.txt"), "3 1 0 2\n").unwrap();
    let err = load_dir(&dir, TaskKind::LagK).unwrap_err();
    assert!(
        err.contains("train.txt:1:") && err.contains("token id >= 1"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn invalid_configs_are_errors_not_panics() {
    let lag = LagKConfig::quick();
    let process = Process50Config::quick();
    let add = AddingConfig::quick();
    let cases: Vec<(TaskConfig, &str)> = vec![
        (
            TaskConfig::LagK(LagKConfig {
                lag: 16,
                ..lag.clone()
            }),
            "lag = 16 must be < seq_len",
        ),
        (
            TaskConfig::LagK(LagKConfig {
                lag: 0,
                ..lag.clone()
            }),
            "lag = 0 must be >= 1",
        ),
        (
            TaskConfig::LagK(LagKConfig {
                seq_len: 1,
                lag: 0,
                ..lag.clone()
            }),
            "seq_len = 1",
        ),
        (
            TaskConfig::LagK(LagKConfig {
                vocab: 1,
                ..lag.clone()
            }),
            "vocab = 1",
        ),
        (
            TaskConfig::LagK(LagKConfig {
                seq_len: 3,
                lag: 1,
                vocab: 2,
                ..lag.clone()
            }),
            "only 2^3 = 8 exist",
        ),
        (
            TaskConfig::LagK(LagKConfig {
                training_nums: 0,
                ..lag.clone()
            }),
            "training_nums = 0",
        ),
        (
            TaskConfig::LagK(LagKConfig { dev: 0, ..lag }),
            "split sizes must be positive",
        ),
        (
            TaskConfig::Process50(Process50Config {
                seq_len: 1,
                ..process.clone()
            }),
            "no transitions",
        ),
        (
            TaskConfig::Process50(Process50Config {
                seq_len: 10,
                ..process.clone()
            }),
            "only 2^10 exist",
        ),
        (
            TaskConfig::Process50(Process50Config {
                training_nums: 4001,
                ..process
            }),
            "training_nums = 4001",
        ),
        (
            TaskConfig::Adding(AddingConfig {
                seq_len: 5,
                ..add.clone()
            }),
            "T must be >= 10",
        ),
        (
            TaskConfig::Adding(AddingConfig {
                training_nums: 4001,
                ..add
            }),
            "1..=4000",
        ),
        (
            TaskConfig::Reber(ReberConfig {
                max_string_len: 14,
                ..ReberConfig::quick()
            }),
            "rejects every string",
        ),
    ];
    for (cfg, want) in cases {
        let err = generate(&cfg, 0).unwrap_err();
        assert!(err.contains(want), "{cfg:?}: {err}");
        assert_eq!(cfg.validate().unwrap_err(), err);
    }
    // Valid-looking but unsatisfiable: only two embedded strings are shorter than 15.
    let tiny = ReberConfig {
        train: 3,
        dev: 1,
        test: 1,
        training_nums: 1,
        max_string_len: 15,
    };
    let err = generate(&TaskConfig::Reber(tiny), 0).unwrap_err();
    assert!(err.contains("found only 2 unique"), "{err}");
    for cfg in quick_configs() {
        assert!(cfg.validate().is_ok());
    }
    for kind in [
        TaskKind::Reber,
        TaskKind::Process50,
        TaskKind::Adding,
        TaskKind::LagK,
    ] {
        assert_eq!(kind.name().parse::<TaskKind>(), Ok(kind));
    }
    assert!(
        "nope"
            .parse::<TaskKind>()
            .unwrap_err()
            .contains("unknown task")
    );
}
