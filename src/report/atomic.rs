//! Crash-safe file writes (temp file, fsync, rename) and JSON results files built on them.
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temp files of concurrent writers in one process; the pid separates processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` so that a reader sees either the old content or the new, never a
/// torn file: the bytes go to a temp file in the same directory, are fsynced, and the temp file
/// is renamed over `path`. Missing parent directories are created. Every error names the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let file_name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file path", path.display()))?;
    // An empty parent means a bare file name, i.e. the current directory.
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| {
        format!(
            "{}: cannot create directory {}: {e}",
            path.display(),
            dir.display()
        )
    })?;

    // Same directory as the target, so the rename never crosses filesystems (which would make it
    // a non-atomic copy). The leading dot keeps half-written files out of casual listings.
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(
        ".tmp.{}.{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);

    let result = write_synced(&tmp, bytes).and_then(|()| {
        fs::rename(&tmp, path).map_err(|e| format!("cannot rename into place: {e}"))
    });
    if let Err(e) = result {
        // Best effort: the temp file may not exist if creating it was what failed.
        let _ = fs::remove_file(&tmp);
        return Err(format!("{}: {e}", path.display()));
    }
    sync_dir(&dir);
    Ok(())
}

/// Creates `tmp` (refusing to reuse an existing file), writes `bytes` and fsyncs them.
fn write_synced(tmp: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| format!("cannot create temp file {}: {e}", tmp.display()))?;
    f.write_all(bytes)
        .map_err(|e| format!("cannot write temp file {}: {e}", tmp.display()))?;
    // Without this the rename can reach the disk before the data, and a crash leaves an empty file.
    f.sync_all()
        .map_err(|e| format!("cannot sync temp file {}: {e}", tmp.display()))
}

/// Makes the rename itself durable. Best effort: some platforms and filesystems cannot open or
/// sync a directory, and the new content is already safely in place for every reader.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Writes `value` to `path` as pretty-printed JSON with a trailing newline, atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), String> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| format!("{}: cannot serialize to JSON: {e}", path.display()))?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Reads `path` as JSON into a `T`. Parse errors name the path and serde's line and column.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let bytes = fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        // serde_json's message already ends in "at line L column C" for these categories;
        // spelling the position out keeps it present whatever the message wording. Valid JSON
        // with contents the type refuses (a plan's unknown flag) is not called invalid JSON.
        let what = match e.classify() {
            serde_json::error::Category::Data => "unexpected contents",
            _ => "invalid JSON",
        };
        format!(
            "{}:{}:{}: {what}: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}
