//! One writer per output folder: an exclusive OS lock on a file inside it.
//!
//! Two runs writing one folder at once would each pass the "is this folder free" checks before
//! either writes, then overwrite each other's checkpoint and record. The lock is taken before
//! those checks and held until the process ends. It is an OS lock (`flock` on Unix), so it dies
//! with its holder: a run that was killed never leaves a lock behind that blocks the next one.
//! The file itself stays (it holds only the last holder's pid); removing it on exit would let a
//! third process lock a new file while a second still waits on the old one.
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The lock file inside a locked folder.
pub const LOCK_FILE: &str = ".at5.lock";

/// The locks this process holds, by folder (a handful at most: one binary's output folder and
/// its runs). A folder locked twice in one process (a binary that locks its output folder,
/// then a library call that locks it again) shares one lock, since an OS lock taken twice by
/// one process through two open files would refuse itself.
static HELD: Mutex<Vec<(PathBuf, std::sync::Weak<File>)>> = Mutex::new(Vec::new());

/// Holds a folder's lock; dropping the last guard of a folder releases it.
#[derive(Clone, Debug)]
pub struct FolderLock {
    _file: Option<Arc<File>>,
}

/// Takes the exclusive lock on the existing folder `dir` for this process, or says who holds
/// it: `{dir} is being written by another process (pid N); ...`. Never waits. Where the
/// filesystem has no locks, the folder is used unlocked. The caller creates the folder, once
/// the input has been checked (a refused command leaves no folder behind).
pub fn lock_folder(dir: &Path) -> Result<FolderLock, String> {
    let at = dir.display();
    if !dir.is_dir() {
        return Err(format!("{at}: no such folder"));
    }
    let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    held.retain(|(_, f)| f.strong_count() > 0);
    if let Some(file) = held
        .iter()
        .find(|(p, _)| *p == key)
        .and_then(|(_, f)| f.upgrade())
    {
        return Ok(FolderLock { _file: Some(file) });
    }
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| {
            format!(
                "{}: cannot open the folder's lock file: {e}",
                path.display()
            )
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = match text.trim().parse::<u32>() {
                Ok(pid) => format!("another process (pid {pid})"),
                Err(_) => "another process".to_string(),
            };
            return Err(format!(
                "{at} is being written by {holder}; two writers in one folder would overwrite \
                 each other's runs: wait for it to finish, or give another output folder"
            ));
        }
        Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
            return Ok(FolderLock { _file: None });
        }
        Err(TryLockError::Error(e)) => {
            return Err(format!("{}: cannot lock the folder: {e}", path.display()));
        }
    }
    // Who holds it, for the message a second writer prints. Best effort: a full disk must not
    // stop a run that can still write its checkpoints into space freed later.
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()));
    let file = Arc::new(file);
    held.push((key, Arc::downgrade(&file)));
    Ok(FolderLock { _file: Some(file) })
}
