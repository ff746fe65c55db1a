//! The `.tldrgraph/` directory: where each artifact lives, atomic and write-only-if-changed
//! writes, and the lock that serialises concurrent runs on one repository.

use crate::artifacts;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The repository a stage works on: `explicit` (relative to `cwd`) if given, else the git top
/// level above `cwd`, else `cwd`; canonical. The error says which path is missing.
pub fn find_root(cwd: &Path, explicit: Option<&Path>) -> Result<PathBuf, String> {
    let candidate = match explicit {
        Some(root) => cwd.join(root),
        None => cwd
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(cwd)
            .to_path_buf(),
    };
    fs::canonicalize(&candidate).map_err(|e| {
        format!(
            "root {} does not exist or cannot be opened: {e}",
            candidate.display()
        )
    })
}

/// Name of the artifact directory at the repository root.
pub const STORE_DIR: &str = ".tldrgraph";

/// The artifact directory of one repository.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store of the repository at `root` (nothing is created until something is written).
    pub fn at_root(root: &Path) -> Self {
        Store {
            dir: root.join(STORE_DIR),
        }
    }

    /// The store of the repository at `root`, refused when it would lead a run outside the
    /// repository: `.tldrgraph` must be a real directory (or not exist yet), and a symlink in it
    /// (or in `cache/`) must point inside the repository. Without this, a `.tldrgraph` linked to
    /// `/etc` would have every artifact written there, and a linked config would be read from
    /// anywhere.
    pub fn open_checked(root: &Path) -> Result<Self, String> {
        let store = Store::at_root(root);
        let meta = match fs::symlink_metadata(&store.dir) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(store),
            Err(err) => return Err(format!("{}: cannot be read: {err}", store.dir.display())),
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&store.dir)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(format!(
                "{} is a symlink (to {target}); refusing to read or write artifacts outside the repository: replace it with a directory",
                store.dir.display()
            ));
        }
        if !meta.is_dir() {
            return Err(format!(
                "{} is not a directory; move it away so tldrgraph can keep its artifacts there",
                store.dir.display()
            ));
        }
        let canonical_root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        for dir in [store.dir.clone(), store.dir.join(artifacts::CACHE_DIR)] {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                if !is_link {
                    continue;
                }
                let path = entry.path();
                let inside = fs::canonicalize(&path).is_ok_and(|t| t.starts_with(&canonical_root));
                if !inside {
                    return Err(format!(
                        "{} is a symlink that leads outside the repository (or nowhere); refusing to follow it: replace it with a regular file",
                        path.display()
                    ));
                }
            }
        }
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The repository root the store belongs to.
    pub fn root(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }

    /// A path inside the store.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The extraction cache (per file, keyed by content hash).
    pub fn extract_cache_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::EXTRACT_CACHE)
    }

    /// The extraction cache's delta over its base ([`Self::extract_cache_path`]).
    pub fn extract_cache_delta_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::EXTRACT_CACHE_DELTA)
    }

    /// tg-extract's last output, reused when nothing changed.
    pub fn extract_output_cache_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::EXTRACT_OUTPUT)
    }

    /// Each file's resolution counters in tg-extract's last output.
    pub fn resolve_stats_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::RESOLVE_STATS)
    }

    /// tg-plan's last ranking, with the key of the graph it ranked.
    pub fn plan_metrics_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::PLAN_METRICS)
    }

    /// tg-classify's tallies of the last whole stream it read ([`artifacts::CLASSIFY_STATE`]).
    pub fn classify_state_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::CLASSIFY_STATE)
    }

    /// What tg-plan read of the last whole stream ([`artifacts::PLAN_STATE`]).
    pub fn plan_state_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::PLAN_STATE)
    }

    /// What tg-enrich kept of the last whole stream ([`artifacts::ENRICH_STATE`]).
    pub fn enrich_state_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::ENRICH_STATE)
    }

    /// The words the code writes, summed by tg-extract for dead-code.
    pub fn words_path(&self) -> PathBuf {
        self.dir.join(artifacts::CACHE_DIR).join(artifacts::WORDS)
    }

    /// The stamp of vectors.i8 when a scan last found it to be the index's.
    pub fn vectors_verified_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::VECTORS_VERIFIED)
    }

    /// The stamp of the embedding model's table when an answer last found it to hash to the
    /// index's model id.
    pub fn model_verified_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::MODEL_VERIFIED)
    }

    /// The keys of the indexed symbols' lexical texts ([`artifacts::POSTINGS_KEYS`]).
    pub fn postings_keys_path(&self) -> PathBuf {
        self.dir
            .join(artifacts::CACHE_DIR)
            .join(artifacts::POSTINGS_KEYS)
    }

    /// The lock file that serialises runs on one repository.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(artifacts::LOCK)
    }

    /// Takes the repository lock, waiting for another run to finish. Released on drop.
    /// Under a `tldrgraph` run that already holds it ([`LOCK_HELD_ENV`]) this is a no-op.
    pub fn lock(&self) -> io::Result<StoreLock> {
        if lock_held_by_parent() {
            return Ok(StoreLock { _file: None });
        }
        let file = self.open_lock_file()?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                eprintln!(
                    "waiting for another tldrgraph run to release {}",
                    self.lock_path().display()
                );
                file.lock()?;
            }
            Err(fs::TryLockError::Error(err)) => return Err(err),
        }
        Ok(StoreLock { _file: Some(file) })
    }

    /// Takes the repository lock if it is free; `None` while another run holds it. For the
    /// process that owns a whole run (`tldrgraph`): unlike [`Store::lock`] it ignores
    /// [`LOCK_HELD_ENV`], so a stray variable in the environment cannot skip the lock.
    pub fn try_lock(&self) -> io::Result<Option<StoreLock>> {
        let file = self.open_lock_file()?;
        match file.try_lock() {
            Ok(()) => Ok(Some(StoreLock { _file: Some(file) })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(err)) => Err(err),
        }
    }

    /// Removes temporary files (`.tmp-*`) that a killed run left in the store and its cache, so
    /// they cannot pile up. Called under the whole-run lock; only files untouched for a minute
    /// go, as a stage run by hand outside `tldrgraph` may still be writing a younger one.
    /// Returns how many were removed.
    pub fn remove_stale_temporaries(&self) -> usize {
        let cutoff = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let mut removed = 0;
        for dir in [self.dir.clone(), self.dir.join(artifacts::CACHE_DIR)] {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let stale = entry.file_name().to_string_lossy().starts_with(".tmp-")
                    && entry
                        .metadata()
                        .ok()
                        .filter(|m| m.is_file())
                        .and_then(|m| m.modified().ok())
                        .is_some_and(|t| t < cutoff);
                if stale && fs::remove_file(entry.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }

    fn open_lock_file(&self) -> io::Result<File> {
        fs::create_dir_all(&self.dir)?;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.lock_path())
    }
}

/// Set by `tldrgraph` for the stages it spawns while it holds the lock for the whole pipeline;
/// without it each stage would wait on its own parent.
pub const LOCK_HELD_ENV: &str = "TLDRGRAPH_LOCK_HELD";

fn lock_held_by_parent() -> bool {
    std::env::var_os(LOCK_HELD_ENV).is_some_and(|v| v == "1")
}

/// Held while a run writes into the store.
#[derive(Debug)]
pub struct StoreLock {
    _file: Option<File>,
}

impl StoreLock {
    /// Lets the processes this one spawns inherit the lock (the descriptor stays open across
    /// exec). The lock is then released only when the last of them exits: if `tldrgraph` is
    /// killed mid-run, stages still writing keep the repository locked until they end, so a new
    /// run cannot interleave its artifacts with theirs.
    pub fn share_with_children(&self) -> io::Result<()> {
        #[cfg(unix)]
        if let Some(file) = &self._file {
            rustix::io::fcntl_setfd(file, rustix::io::FdFlags::empty())?;
        }
        Ok(())
    }
}

/// Gives the temporary file that will replace `target` the target's permissions, or those of an
/// ordinary file (rw-r--r--) for a new one: temporary files start private (rw-------), and an
/// atomic write must not change who can read AGENTS.md or an artifact.
fn keep_permissions(tmp: &File, target: &Path) -> io::Result<()> {
    let permissions = match fs::metadata(target) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs::Permissions::from_mode(0o644)
            }
            #[cfg(not(unix))]
            {
                tmp.metadata()?.permissions()
            }
        }
    };
    tmp.set_permissions(permissions)
}

/// Size and modification time (ns since the epoch) of `path`.
pub fn stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), modified))
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// killed run leaves either the old or the new content, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if is_special_file(path) {
        return open_through(path)?.write_all(bytes);
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    keep_permissions(tmp.as_file(), path)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether `path` is something other than a regular file or a directory: `/dev/null`, a FIFO,
/// a terminal. Such a target is written straight through; renaming a file over it would
/// replace the device (run as root, `--output /dev/null` left a regular file there that every
/// later reader of /dev/null read back).
pub fn is_special_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `path`, a special file ([`is_special_file`]), opened to write through.
fn open_through(path: &Path) -> io::Result<File> {
    fs::OpenOptions::new().write(true).open(path)
}

/// Where an [`AtomicFile`]'s bytes go until it is committed.
enum Sink {
    /// A temporary file beside the target, renamed over it on commit.
    Temp(tempfile::NamedTempFile),
    /// A special file, written as the bytes come ([`is_special_file`]).
    Through(File),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Temp(tmp) => tmp.write(buf),
            Sink::Through(file) => file.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Temp(tmp) => tmp.flush(),
            Sink::Through(file) => file.flush(),
        }
    }
}

/// A file written in a stream and moved into place only on [`AtomicFile::commit`]; dropped
/// uncommitted (an error, a kill), it leaves the previous content untouched. A special target
/// (`/dev/null`, a FIFO) is written through instead.
pub struct AtomicFile {
    out: io::BufWriter<Sink>,
    path: PathBuf,
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<Self> {
        let sink = if is_special_file(path) {
            Sink::Through(open_through(path)?)
        } else {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            fs::create_dir_all(dir)?;
            let tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
            keep_permissions(tmp.as_file(), path)?;
            Sink::Temp(tmp)
        };
        Ok(AtomicFile {
            out: io::BufWriter::with_capacity(1 << 16, sink),
            path: path.to_path_buf(),
        })
    }

    /// Reads back `buf.len()` bytes written at `offset` (what was written so far is flushed
    /// first); writing goes on where it was. A special file cannot be read back.
    pub fn read_back(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        self.out.flush()?;
        let Sink::Temp(tmp) = self.out.get_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{} is not a regular file", self.path.display()),
            ));
        };
        let file = tmp.as_file_mut();
        let end = file.stream_position()?;
        file.seek(SeekFrom::Start(offset))?;
        let read = file.read_exact(buf);
        file.seek(SeekFrom::Start(end))?;
        read
    }

    pub fn commit(self) -> io::Result<()> {
        match self.out.into_inner().map_err(|e| e.into_error())? {
            Sink::Temp(tmp) => {
                tmp.as_file().sync_data()?;
                tmp.persist(&self.path).map_err(|e| e.error)?;
            }
            Sink::Through(mut file) => file.flush()?,
        }
        Ok(())
    }
}

impl AtomicFile {
    /// Like [`AtomicFile::commit`], but keeps the existing file (and its mtime) when it already
    /// holds the same bytes, so Make sees no change. Returns whether the file was replaced (a
    /// special file was written through: always).
    pub fn commit_if_changed(self) -> io::Result<bool> {
        let tmp = match self.out.into_inner().map_err(|e| e.into_error())? {
            Sink::Temp(tmp) => tmp,
            Sink::Through(mut file) => {
                file.flush()?;
                return Ok(true);
            }
        };
        if same_content(tmp.path(), &self.path)? {
            return Ok(false);
        }
        tmp.as_file().sync_data()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(true)
    }
}

/// Whether the files at `a` and `b` hold the same bytes (`false` when `b` does not exist).
fn same_content(a: &Path, b: &Path) -> io::Result<bool> {
    use std::io::Read;
    let other = match File::open(b) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    let this = File::open(a)?;
    if this.metadata()?.len() != other.metadata()?.len() {
        return Ok(false);
    }
    let (mut this, mut other) = (io::BufReader::new(this), io::BufReader::new(other));
    let (mut x, mut y) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = this.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        other.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Like [`write_atomic`], but leaves the file (and its mtime) alone when it already holds
/// exactly `bytes`, so Make sees no change. Returns whether the file was written.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    // Never read first: reading a FIFO waits for a writer.
    if is_special_file(path) {
        return write_atomic(path, bytes).map(|()| true);
    }
    match fs::read(path) {
        Ok(existing) if existing == bytes => return Ok(false),
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    write_atomic(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fifo_or_device_is_written_through_never_replaced() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        assert!(is_special_file(&fifo));
        assert!(!is_special_file(dir.path()) && !is_special_file(&dir.path().join("none")));
        let reader = |path: PathBuf| {
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(path).unwrap().read_to_string(&mut text).unwrap();
                text
            })
        };
        let read = reader(fifo.clone());
        let mut out = AtomicFile::create(&fifo).unwrap();
        out.write_all(b"streamed\n").unwrap();
        let mut back = [0u8; 2];
        assert!(
            out.read_back(0, &mut back).is_err(),
            "a pipe cannot be read back"
        );
        assert!(out.commit_if_changed().unwrap());
        assert_eq!(read.join().unwrap(), "streamed\n");
        let read = reader(fifo.clone());
        assert!(write_if_changed(&fifo, b"whole").unwrap());
        assert_eq!(read.join().unwrap(), "whole");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        // No temporary file was made beside it.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_if_changed_keeps_mtime_of_identical_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("a.txt");
        assert!(write_if_changed(&path, b"one").unwrap());
        let before = fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!write_if_changed(&path, b"one").unwrap());
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);
        assert!(write_if_changed(&path, b"two").unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"two");
        // No temporary files are left beside the artifact.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
    }

    #[test]
    fn atomic_file_commit_if_changed_keeps_identical_content_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.json");
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"{\"nodes\":[]}").unwrap();
        assert!(file.commit_if_changed().unwrap());
        let before = fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut same = AtomicFile::create(&path).unwrap();
        same.write_all(b"{\"nodes\":[]}").unwrap();
        assert!(!same.commit_if_changed().unwrap());
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);
        let mut other = AtomicFile::create(&path).unwrap();
        other.write_all(b"{\"nodes\":[1]}").unwrap();
        assert!(other.commit_if_changed().unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"{\"nodes\":[1]}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_atomic_file_reads_back_what_it_wrote_and_goes_on_writing_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.bin");
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"0123456789").unwrap();
        let mut back = [0u8; 3];
        file.read_back(4, &mut back).unwrap();
        assert_eq!(&back, b"456");
        file.write_all(b"ab").unwrap();
        assert!(file.read_back(11, &mut back).is_err(), "past the end");
        file.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"0123456789ab");
    }

    #[test]
    fn uncommitted_atomic_file_leaves_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write_atomic(&path, b"old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"new, half written").unwrap();
        drop(file);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_store_leading_outside_the_repository_is_refused() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        assert!(
            Store::open_checked(repo.path()).is_ok(),
            "no store yet is fine"
        );
        symlink(outside.path(), repo.path().join(STORE_DIR)).unwrap();
        let err = Store::open_checked(repo.path()).unwrap_err();
        assert!(err.contains("is a symlink"), "{err}");
        fs::remove_file(repo.path().join(STORE_DIR)).unwrap();
        fs::create_dir(repo.path().join(STORE_DIR)).unwrap();
        fs::write(repo.path().join("layers.yaml"), "x").unwrap();
        // A link to a file inside the repository is followed; one leading out is not.
        symlink(
            repo.path().join("layers.yaml"),
            repo.path().join(STORE_DIR).join("layers.config.yaml"),
        )
        .unwrap();
        assert!(Store::open_checked(repo.path()).is_ok());
        fs::create_dir(repo.path().join(STORE_DIR).join("cache")).unwrap();
        symlink(
            "/etc/passwd",
            repo.path()
                .join(STORE_DIR)
                .join("cache")
                .join("extract.bin"),
        )
        .unwrap();
        let err = Store::open_checked(repo.path()).unwrap_err();
        assert!(
            err.contains("extract.bin") && err.contains("outside"),
            "{err}"
        );
    }

    #[test]
    fn temporaries_of_a_killed_run_are_removed_once_a_minute_old() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at_root(dir.path());
        fs::create_dir_all(store.dir().join("cache")).unwrap();
        let old = store.dir().join("cache").join(".tmp-old");
        let young = store.path(".tmp-young");
        let artifact = store.path("graph.json");
        for path in [&old, &young, &artifact] {
            fs::write(path, "x").unwrap();
        }
        let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        for path in [&old, &artifact] {
            File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(an_hour_ago)
                .unwrap();
        }
        assert_eq!(store.remove_stale_temporaries(), 1);
        assert!(!old.exists() && young.exists() && artifact.exists());
    }

    #[test]
    fn second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at_root(dir.path());
        let first = store.lock().unwrap();
        let store2 = store.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _second = store2.lock().unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        drop(first);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }
}
