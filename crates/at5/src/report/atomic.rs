//! Crash-safe file writes (temp file, fsync, rename) and JSON results files built on them.
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that a reader sees either the old content or the new, never a
/// torn file: the bytes go to a temp file in the same directory, are fsynced, and the temp file
/// is renamed over `path`. Missing parent directories are created. Every error names the path.
///
/// The temp file's name is random and it is created exclusively (`O_EXCL`), so writers never
/// collide, whatever their pids (a pid is only unique within one PID namespace); on failure
/// only the temp file this call created is removed, never a file another process left.
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
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(file_name);
    prefix.push(".tmp.");
    let at = path.display();
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // A temp file is private (0600) by default; the file it becomes is a result like any other,
    // so it gets what `File::create` would give it (0666 less the umask): a lab's group can read
    // the records, reports and checkpoints of a shared results folder.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| format!("{at}: cannot create a temp file in {}: {e}", dir.display()))?;
    // Dropping `tmp` on any error below removes the temp file, and only it.
    tmp.write_all(bytes)
        .map_err(|e| format!("{at}: cannot write temp file {}: {e}", tmp.path().display()))?;
    // Without this the rename can reach the disk before the data, and a crash leaves an empty file.
    tmp.as_file()
        .sync_all()
        .map_err(|e| format!("{at}: cannot sync temp file {}: {e}", tmp.path().display()))?;
    tmp.persist(path)
        .map_err(|e| format!("{at}: cannot rename into place: {}", e.error))?;
    sync_dir(&dir);
    Ok(())
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
