//! Spawning the crate's binaries from a test the way cargo spawns the test itself.
//!
//! A test built for another architecture runs under its target's runner, e.g.
//! `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"` on
//! an x86-64 machine. The runner carries the test process but not the programs it starts: the
//! kernel cannot execute an aarch64 `train` on its own, so each is started through the same
//! runner, found in the environment the test inherits.
use std::process::Command;

/// A command running the binary at `path` (an `env!("CARGO_BIN_EXE_…")`), through the runner
/// cargo was given for this architecture and OS when one is set.
pub fn bin(path: &str) -> Command {
    let (arch, os) = (std::env::consts::ARCH, std::env::consts::OS);
    let (prefix, os) = (
        format!("CARGO_TARGET_{}_", arch.to_uppercase()),
        format!("_{}", os.to_uppercase()),
    );
    let runner = std::env::vars()
        .find(|(k, _)| k.starts_with(&prefix) && k.contains(&os) && k.ends_with("_RUNNER"))
        .map(|(_, v)| v);
    let words: Vec<&str> = runner.as_deref().unwrap_or("").split_whitespace().collect();
    match words.split_first() {
        Some((program, args)) => {
            let mut cmd = Command::new(program);
            cmd.args(args).arg(path);
            cmd
        }
        None => Command::new(path),
    }
}
