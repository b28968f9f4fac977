//! Faults a long run meets, each on tiny real processes: two writers in one folder, a writer
//! killed while holding its folder, a closed or full standard output, a full disk while a
//! snapshot is written, a clone without checkpoints, checkpoints swapped between runs, caches
//! and checkpoints written before they named their run, and inputs refused before training.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const TINY: [&str; 10] = [
    "--task",
    "lagk",
    "--seq-len",
    "8",
    "--lag",
    "2",
    "--d-model",
    "8",
    "--heads",
    "2",
];

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("at5-faults-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn train_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_train"));
    c.args(TINY).args(args).args(["--quiet", "--threads", "1"]);
    c
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
}

/// Exit code 2 with one line on standard error; returns the line.
fn refused(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    err
}

/// Waits until `dir`'s lock file names `child` as its holder.
fn wait_for_lock(child: &mut Child, dir: &Path) {
    let file = dir.join(at5::report::LOCK_FILE);
    let pid = child.id().to_string();
    let start = Instant::now();
    while std::fs::read_to_string(&file).map_or(true, |s| s.trim() != pid) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "the first writer ended ({status}) before locking {}",
                dir.display()
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no lock after 120 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn epochs_of(record: &Path) -> Vec<(u64, u64)> {
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    rec["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let bits = |v: &serde_json::Value| v.as_f64().unwrap().to_bits();
            (bits(&e["train_loss"]), bits(&e["dev"]["accuracy"]))
        })
        .collect()
}

#[test]
fn a_second_train_into_a_busy_folder_is_refused_and_a_killed_one_blocks_nothing() {
    let dir = tmp("two-trains");
    let out = dir.join("run");
    let o = out.to_str().unwrap();
    let mut first = train_cmd(&["--epochs", "100000", "--out", o])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lock(&mut first, &out);
    // Another seed, the same folder: refused at once, naming the folder and the holder.
    let started = Instant::now();
    let second = train_cmd(&["--epochs", "1", "--seed", "2", "--out", o])
        .output()
        .unwrap();
    let err = refused(&second);
    assert!(started.elapsed() < Duration::from_secs(30), "{err}");
    assert!(
        err.contains(o) && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    // `--continue` of the very same run is a second writer too.
    let again = train_cmd(&["--epochs", "100000", "--continue", "--out", o])
        .output()
        .unwrap();
    assert!(refused(&again).contains(o));

    // Killed outright (no handler runs): its lock dies with it and the run resumes.
    let ck = out.join("checkpoint.bin");
    let start = Instant::now();
    while !ck.exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(&mut first);
    let trained = at5::train::Trainer::from_checkpoint(&ck)
        .unwrap()
        .state
        .epoch;
    let next = (trained + 1).to_string();
    let resumed = Command::new(env!("CARGO_BIN_EXE_train"))
        .args([
            "--resume",
            ck.to_str().unwrap(),
            "--epochs",
            &next,
            "--quiet",
        ])
        .output()
        .unwrap();
    ok(&resumed);
    assert_eq!(epochs_of(&out.join("record.json")).len(), trained + 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_sweep_or_a_merge_into_a_busy_folder_is_refused() {
    let dir = tmp("two-sweeps");
    let root = dir.join("sweep");
    let r = root.to_str().unwrap();
    let sweep = |biases: &str, epochs: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sweep"));
        let flags = format!("--epochs {epochs} --d-model 8 --heads 2 --ffn 8");
        c.args(["--task", "lagk", "--ranges", "2", "--lag-len", "8"])
            .args([
                "--biases",
                biases,
                "--jobs",
                "1",
                "--threads",
                "1",
                "--quiet",
            ])
            .args(["--train-flags", &flags, "--out", r]);
        c
    };
    let mut first = sweep("t5", "100000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lock(&mut first, &root);
    let start = Instant::now();
    while !root.join("plan-sweep.json").exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no plan");
        std::thread::sleep(Duration::from_millis(10));
    }
    let plan = std::fs::read(root.join("plan-sweep.json")).unwrap();
    let second = sweep("alibi", "1").output().unwrap();
    let err = refused(&second);
    assert!(
        err.contains(r) && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    let merge = Command::new(env!("CARGO_BIN_EXE_merge"))
        .arg(r)
        .output()
        .unwrap();
    assert!(refused(&merge).contains(&format!("pid {}", first.id())));
    // The refused sweep left the first one's plan as it was.
    assert_eq!(std::fs::read(root.join("plan-sweep.json")).unwrap(), plan);
    kill(&mut first);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_or_full_stdout_stops_printing_not_the_run() {
    let dir = tmp("stdout");
    // `train | head -n 0`: the pipe is closed before the first line is written.
    let closed = dir.join("closed");
    let mut child = train_cmd(&["--epochs", "3", "--out", closed.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    ok(&done);
    assert!(stderr(&done).contains("cannot write to standard output"));
    // `train > /dev/full`: every write fails.
    let full = dir.join("full");
    let done = train_cmd(&["--epochs", "3", "--out", full.to_str().unwrap()])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    ok(&done);
    for run in [&closed, &full] {
        let rec = std::fs::read_to_string(run.join("record.json")).unwrap();
        assert!(rec.contains("\"completed\""), "{rec}");
        assert_eq!(epochs_of(&run.join("record.json")).len(), 3);
    }
    // The run is the same as one printed in full.
    let printed = dir.join("printed");
    ok(
        &train_cmd(&["--epochs", "3", "--out", printed.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(
        epochs_of(&printed.join("record.json")),
        epochs_of(&full.join("record.json"))
    );
    // The other printing binaries end cleanly too.
    let ck = printed.join("checkpoint.bin");
    for mut cmd in [Command::new(env!("CARGO_BIN_EXE_gradcheck")), {
        let mut c = Command::new(env!("CARGO_BIN_EXE_prior"));
        c.args(["--checkpoint", ck.to_str().unwrap(), "--kl-examples", "4"]);
        c
    }] {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let done = child.wait_with_output().unwrap();
        ok(&done);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Trains `--epochs 2 --snapshots 1,2 --continue` into `out` (the command a job list reruns).
fn snapshot_run(out: &Path) -> Output {
    let o = out.to_str().unwrap();
    train_cmd(&[
        "--epochs",
        "2",
        "--snapshots",
        "1,2",
        "--continue",
        "--out",
        o,
    ])
    .output()
    .unwrap()
}

#[test]
fn a_snapshot_that_cannot_be_written_is_written_on_continue() {
    let dir = tmp("snapshot");
    let reference = dir.join("reference");
    ok(&snapshot_run(&reference));
    // Something in the way of epoch 1's snapshot (a folder where the file goes) fails the run
    // at epoch 1, as a full disk would.
    let out = dir.join("run");
    std::fs::create_dir_all(out.join("snapshots/epoch-0001.bin")).unwrap();
    let failed = snapshot_run(&out);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    // No checkpoint went past the missing snapshot.
    assert!(!out.join("checkpoint.bin").exists());
    std::fs::remove_dir(out.join("snapshots/epoch-0001.bin")).unwrap();
    ok(&snapshot_run(&out));
    for e in [1, 2] {
        let snap = at5::train::snapshot_path(&out, e);
        let t = at5::train::Trainer::from_checkpoint(&snap).unwrap();
        assert_eq!(t.state.epoch, e);
    }
    assert_eq!(
        epochs_of(&out.join("record.json")),
        epochs_of(&reference.join("record.json"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mounts a tmpfs of `kib` KiB at `at`, or says why not (not root, no mount allowed here).
fn tmpfs(at: &Path, kib: usize) -> Result<(), String> {
    let size = format!("size={kib}k");
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &size, "tmpfs", at.to_str().unwrap()])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(stderr(&out))
    }
}

#[test]
fn a_full_disk_while_a_snapshot_is_written_loses_nothing() {
    let dir = tmp("full-disk");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    if let Err(e) = tmpfs(&mnt, 1024) {
        eprintln!("skipped: cannot mount a tmpfs here ({})", e.trim());
        return;
    }
    let unmount = || {
        let _ = Command::new("umount").arg(&mnt).status();
    };
    let reference = dir.join("reference");
    ok(&snapshot_run(&reference));
    // Fill the disk to the last byte, then train into it.
    let filler = mnt.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![1u8; 4096];
        while f.write_all(&chunk).and_then(|()| f.sync_all()).is_ok() {}
        let _ = f.write_all(&[1u8]);
    }
    let out = mnt.join("run");
    let failed = snapshot_run(&out);
    let err = stderr(&failed);
    assert_eq!(failed.status.code(), Some(1), "{err}");
    assert!(!out.join("checkpoint.bin").exists(), "{err}");
    // Nothing half-written is left behind.
    let left: Vec<_> = std::fs::read_dir(out.join("snapshots"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_file(&filler).unwrap();
    let done = snapshot_run(&out);
    let same = done.status.success()
        && epochs_of(&out.join("record.json")) == epochs_of(&reference.join("record.json"))
        && [1, 2]
            .iter()
            .all(|&e| at5::train::snapshot_path(&out, e).is_file());
    let err = stderr(&done);
    unmount();
    assert!(same, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn merge(root: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_merge"))
        .arg(root)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn merge_without_checkpoints_refuses_to_lose_a_run_and_a_swapped_checkpoint_is_named() {
    let dir = tmp("merge");
    let root = dir.join("extra");
    let r = root.to_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_extrapolate"))
        .args(["--tasks", "lagk-L32-k4", "--biases", "t5,alibi", "--quiet"])
        .args(["--train-flags", "--epochs 1 --d-model 8 --heads 2 --ffn 8"])
        .args(["--out", r])
        .output()
        .unwrap();
    ok(&out);
    let md = root.join("extrapolate.md");
    let complete = std::fs::read_to_string(&md).unwrap();
    assert!(!complete.contains('—'), "{complete}");
    let run = |bias: &str| root.join(format!("runs/lagk-L32-k4-{bias}-s1"));
    let (t5, alibi) = (run("t5"), run("alibi"));
    let ck = |d: &Path| d.join("checkpoint.bin");
    let cache = |d: &Path| d.join("extrapolate.json");
    // The caches name their run.
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cache(&t5)).unwrap()).unwrap();
    assert!(
        kept["config"].is_object() && kept["record"].is_string(),
        "{kept}"
    );

    // A clone: no checkpoints, and T5's cache lost. Refused, the report left whole.
    let away = dir.join("away");
    std::fs::create_dir_all(&away).unwrap();
    for (d, name) in [(&t5, "t5"), (&alibi, "alibi")] {
        std::fs::rename(ck(d), away.join(name)).unwrap();
    }
    let t5_cache = std::fs::read(cache(&t5)).unwrap();
    std::fs::remove_file(cache(&t5)).unwrap();
    let err = refused(&merge(&root, &[]));
    assert!(
        err.contains("lagk-L32-k4-t5-s1") && err.contains("--allow-missing"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&md).unwrap(), complete);
    // Asked for, the run is left out and said so.
    let allowed = merge(&root, &["--allow-missing"]);
    ok(&allowed);
    assert!(stderr(&allowed).contains("lagk-L32-k4-t5-s1"));
    assert!(std::fs::read_to_string(&md).unwrap().contains('—'));

    // Each run's checkpoint in the other's folder: refused, naming both runs.
    std::fs::rename(away.join("t5"), ck(&alibi)).unwrap();
    std::fs::rename(away.join("alibi"), ck(&t5)).unwrap();
    let err = refused(&merge(&root, &[]));
    assert!(
        err.contains("checkpoint of run") && err.contains("t5") && err.contains("alibi"),
        "{err}"
    );
    // Put back, the cache is computed again and the report is the complete one.
    std::fs::rename(ck(&alibi), away.join("t5")).unwrap();
    std::fs::rename(ck(&t5), ck(&alibi)).unwrap();
    std::fs::rename(away.join("t5"), ck(&t5)).unwrap();
    ok(&merge(&root, &[]));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), complete);
    assert_eq!(std::fs::read(cache(&t5)).unwrap(), t5_cache);

    // A cache written before caches named their run (the bare numbers) still reads where
    // there is no checkpoint to check it against.
    let value = kept["value"].to_string();
    std::fs::write(cache(&t5), value).unwrap();
    std::fs::remove_file(ck(&t5)).unwrap();
    ok(&merge(&root, &[]));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), complete);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_to_draw_a_priors_figure_with_a_panel_lost() {
    let dir = tmp("priors");
    let root = dir.join("repro");
    let r = root.to_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reproduce"))
        .args(["--tasks", "reber", "--biases", "t5,alibi", "--seeds", "1"])
        .args(["--train-flags", "--epochs 1 --d-model 8 --heads 2 --ffn 8"])
        .args(["--quiet", "--out", r])
        .output()
        .unwrap();
    ok(&out);
    let fig = root.join("figures/priors-reber.svg");
    let complete = std::fs::read(&fig).unwrap();
    let run = root.join("runs/reber-alibi-s1");
    std::fs::remove_file(run.join("checkpoint.bin")).unwrap();
    std::fs::remove_file(run.join("prior.json")).unwrap();
    let err = refused(&merge(&root, &[]));
    assert!(
        err.contains("reber-alibi-s1") && err.contains("prior.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(&fig).unwrap(), complete);
    ok(&merge(&root, &["--allow-missing"]));
    assert_ne!(std::fs::read(&fig).unwrap(), complete);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_checkpoint_written_before_checkpoints_named_their_run_resumes_and_is_tied() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoint-v2-untied");
    let dir = tmp("legacy");
    for f in ["checkpoint.bin", "record.json"] {
        std::fs::copy(fixture.join(f), dir.join(f)).unwrap();
    }
    let ck = dir.join("checkpoint.bin");
    let rec: at5::train::RunRecord =
        serde_json::from_str(&std::fs::read_to_string(dir.join("record.json")).unwrap()).unwrap();
    // Resumed with --epochs 3, the run's config (and so its id) is that budget's.
    let mut resumed = rec.config.clone();
    resumed.epochs = 3;
    let tag = format!("\"run\":\"{}\"", resumed.id());
    let holds_id = |p: &Path| {
        let bytes = std::fs::read(p).unwrap();
        String::from_utf8_lossy(&bytes).contains(&tag)
    };
    assert!(!holds_id(&ck), "the fixture predates run ids");
    let t = at5::train::Trainer::from_checkpoint(&ck).unwrap();
    t.check_run_of(&ck, &rec, &dir.join("record.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--resume", ck.to_str().unwrap(), "--epochs", "3", "--quiet"])
        .output()
        .unwrap();
    ok(&out);
    assert!(holds_id(&ck), "a checkpoint written now names its run");
    let e = epochs_of(&dir.join("record.json"));
    assert_eq!(e.len(), 3);
    assert_eq!(&e[..2], &epochs_of(&fixture.join("record.json"))[..]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn a_data_dir_whose_name_is_not_utf8_is_refused_before_training() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tmp("non-utf8");
    let data = dir.join(std::ffi::OsStr::from_bytes(b"data-\xff"));
    let task = at5::data::TaskConfig::LagK(at5::data::LagKConfig {
        seq_len: 8,
        lag: 2,
        vocab: 4,
        train: 50,
        dev: 20,
        test: 20,
        training_nums: 50,
    });
    at5::data::write_dir(&data, &at5::data::generate(&task, 1).unwrap()).unwrap();
    let out = dir.join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .args([
            "--task",
            "lagk",
            "--d-model",
            "8",
            "--heads",
            "2",
            "--epochs",
            "1",
        ])
        .arg("--data-dir")
        .arg(&data)
        .args(["--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(err.contains("--data-dir") && err.contains("UTF-8"), "{err}");
    assert!(!out.exists(), "nothing is written before the refusal");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prior_compare_checks_every_checkpoint_before_writing() {
    let dir = tmp("compare");
    let run = dir.join("run");
    ok(
        &train_cmd(&["--epochs", "1", "--out", run.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, b"not a checkpoint").unwrap();
    let figs = dir.join("figs");
    let out = Command::new(env!("CARGO_BIN_EXE_prior"))
        .args(["--checkpoint", run.join("checkpoint.bin").to_str().unwrap()])
        .args(["--compare", garbage.to_str().unwrap()])
        .args(["--out", figs.to_str().unwrap()])
        .output()
        .unwrap();
    let err = refused(&out);
    assert!(err.contains("garbage.bin"), "{err}");
    assert!(!figs.exists(), "no figure before the refusal");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_quick_report_keeps_its_reading_through_a_rebuild() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/quick/README.md");
    let text = std::fs::read_to_string(readme).unwrap();
    let marker = at5_app::experiments::reproduce::KEPT_MARKER;
    let at = text
        .find(marker)
        .expect("results/quick/README.md has the marker");
    assert!(
        text[at..].contains("## Reading this run"),
        "the reading is below it"
    );
}

#[test]
fn a_refused_writer_leaves_no_folder_behind() {
    let dir = tmp("no-folder");
    let missing = dir.join("missing");
    let m = missing.to_str().unwrap();
    refused(&merge(&missing, &[]));
    let ck = missing.join("checkpoint.bin");
    let resume = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--resume", ck.to_str().unwrap(), "--epochs", "2"])
        .output()
        .unwrap();
    assert!(refused(&resume).contains(m));
    let sweep = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["--task", "lagk", "--ranges", "4,4", "--out", m])
        .output()
        .unwrap();
    refused(&sweep);
    assert!(!missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file written atomically (records, reports, checkpoints) gets the permissions a plain
/// `File::create` gives in the same folder, not the temp file's private 0600: a lab's group can
/// read a shared results folder.
#[cfg(unix)]
#[test]
fn an_atomic_write_gets_the_permissions_of_a_plain_one() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp("permissions");
    let plain = dir.join("plain.json");
    std::fs::File::create(&plain).unwrap();
    let atomic = dir.join("atomic.json");
    at5::report::write_atomic(&atomic, b"{}\n").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&atomic), mode(&plain));
    // The umask of a test process leaves at least the owner's read and write.
    assert_eq!(mode(&atomic) & 0o600, 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}
