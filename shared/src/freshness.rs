//! Whether the last build is still current: the sources' content hashes (and those of the
//! layers config, the approval and the stored intents) against the ones the build saw, kept in
//! `.tldrgraph/state.json` ([`SavedState`]). `tldrgraph status` reports it whole; every answer of tg-query says
//! it in one line.

use crate::artifacts::{self, state::SavedState};
use crate::hash::content_hash;
use crate::store::{self, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// Paths of each kind of change listed in a payload (all are counted).
const EXAMPLES: usize = 5;

/// Hash of the layers config, `None` when there is none.
pub fn config_hash(store: &Store) -> Option<String> {
    std::fs::read(store.path(artifacts::LAYERS_CONFIG))
        .ok()
        .map(|bytes| content_hash(&bytes))
}

/// Hash of the user's and agent's decisions that change the state without touching a source:
/// the approval and the stored intents (`enrich --apply`).
pub fn decisions_hash(store: &Store) -> Option<String> {
    let mut hasher = crate::hash::Hasher::new();
    for name in [artifacts::APPROVAL, artifacts::INTENTS] {
        match std::fs::read(store.path(name)) {
            Ok(bytes) => hasher.update(content_hash(&bytes).as_bytes()),
            Err(_) => hasher.update(b"absent"),
        };
        hasher.update(b"\n");
    }
    Some(hasher.finish())
}

/// What changed since the last build.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub config_changed: bool,
    pub decisions_changed: bool,
}

impl Changes {
    pub fn fresh(&self) -> bool {
        self.changed.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
            && !self.config_changed
            && !self.decisions_changed
    }

    /// `fresh`, and when stale the `changes` (counts and a few paths) and `refresh_action`.
    pub fn to_fields(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        extra.insert("fresh".into(), Value::Bool(self.fresh()));
        if !self.fresh() {
            let list = |paths: &[String]| json!({"count": paths.len(), "examples": &paths[..paths.len().min(EXAMPLES)]});
            extra.insert(
                "changes".into(),
                json!({
                    "changed": list(&self.changed),
                    "added": list(&self.added),
                    "removed": list(&self.removed),
                    "config_changed": self.config_changed,
                    "decisions_changed": self.decisions_changed,
                }),
            );
            extra.insert(
                "refresh_action".into(),
                Value::String(
                    "Sources, the config, the approval or the intents changed since the last build: run `tldrgraph init --json`".into(),
                ),
            );
        }
        extra
    }

    /// One line for a human: `graph is stale: 2 files changed, 1 added since the last build ...`.
    pub fn line(&self) -> Option<String> {
        if self.fresh() {
            return None;
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.changed.len(), "changed"),
            (self.added.len(), "added"),
            (self.removed.len(), "removed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} file{} {what}", if n == 1 { "" } else { "s" }));
            }
        }
        if self.config_changed {
            parts.push("the layers config changed".to_string());
        }
        if self.decisions_changed {
            parts.push("the approval or the intents changed".to_string());
        }
        Some(format!(
            "the graph is stale: {} since the last build; run `tldrgraph init` to refresh",
            parts.join(", ")
        ))
    }
}

/// What a file's metadata says about it, as git's index keeps it: size, modification and
/// status-change times, inode. While all four stay the same the content was not rewritten (an
/// edit moves the modification time, a replacement the inode, and `touch -d` cannot set the
/// change time back), so the content hash found for that stamp still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub size: u64,
    /// Nanoseconds since the epoch.
    pub modified: u128,
    /// Nanoseconds since the epoch (0 where the platform has no change time).
    pub changed: u128,
    pub inode: u64,
}

impl FileStamp {
    /// Whether the file was last modified well before now, so that a content hash found now
    /// may be kept for this stamp: an edit within the same clock tick as the hash would leave
    /// the stamp as it is (git's "racy" rule).
    pub fn settled(&self) -> bool {
        self.settled_before(now_nanos())
    }

    /// Whether the file was last modified well before `nanos` (since the epoch): a stamp taken
    /// after a read that began at `nanos` then says what the read saw.
    pub fn settled_before(&self, nanos: u128) -> bool {
        self.modified + RACY_NANOS < nanos && self.changed + RACY_NANOS < nanos
    }
}

/// Now, in nanoseconds since the epoch (as [`FileStamp`] keeps times).
pub fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The stamp of `path`, `None` when it cannot be read.
pub fn file_stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    #[cfg(unix)]
    let (changed, inode) = {
        use std::os::unix::fs::MetadataExt;
        let secs = u128::try_from(meta.ctime()).unwrap_or(0);
        let nanos = u128::try_from(meta.ctime_nsec()).unwrap_or(0);
        (secs * 1_000_000_000 + nanos, meta.ino())
    };
    #[cfg(not(unix))]
    let (changed, inode) = (0, 0);
    Some(FileStamp {
        size: meta.len(),
        modified,
        changed,
        inode,
    })
}

/// The stamps of `paths`, in order, as [`file_stamp`] gives each. Each directory is opened once
/// and its files are stamped relative to it, so the kernel does not walk every path from the
/// root again, and long lists are split across the cores: on the Linux kernel's 55,000 files the
/// stamps are what an answer's freshness line costs.
pub fn file_stamps(paths: &[&Path]) -> Vec<Option<FileStamp>> {
    // Below this many a thread, one thread does it faster than starting others.
    stamps_split(paths, 8192)
}

fn stamps_split(paths: &[&Path], per_thread: usize) -> Vec<Option<FileStamp>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(paths.len() / per_thread)
        .max(1);
    if threads == 1 {
        return stamps_in_order(paths);
    }
    let chunk = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = paths
            .chunks(chunk)
            .map(|part| scope.spawn(move || stamps_in_order(part)))
            .collect();
        parts
            .into_iter()
            .flat_map(|part| {
                part.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// [`file_stamps`] on one thread, keeping the last directory open.
fn stamps_in_order(paths: &[&Path]) -> Vec<Option<FileStamp>> {
    #[cfg(unix)]
    {
        let mut open: Option<(&Path, rustix::fd::OwnedFd)> = None;
        paths
            .iter()
            .map(|path| {
                let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
                    return file_stamp(path);
                };
                if open.as_ref().is_none_or(|(at, _)| *at != dir) {
                    use rustix::fs::{Mode, OFlags};
                    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                    open = rustix::fs::open(dir, flags, Mode::empty())
                        .ok()
                        .map(|fd| (dir, fd));
                }
                match &open {
                    Some((_, fd)) => stamp_at(fd, name),
                    None => file_stamp(path),
                }
            })
            .collect()
    }
    #[cfg(not(unix))]
    {
        paths.iter().map(|path| file_stamp(path)).collect()
    }
}

/// The stamp of `name` in the directory `dir`, following a symbolic link as
/// [`std::fs::metadata`] does; the same values [`file_stamp`] reads.
#[cfg(unix)]
// The fields' types differ between architectures; a conversion that is the identity on one
// is not on another.
#[allow(clippy::useless_conversion, clippy::unnecessary_fallible_conversions)]
fn stamp_at(dir: &rustix::fd::OwnedFd, name: &std::ffi::OsStr) -> Option<FileStamp> {
    let stat = rustix::fs::statat(dir, name, rustix::fs::AtFlags::empty()).ok()?;
    let nanos = |secs: i64, nanos: u128| -> Option<u128> {
        Some(u128::try_from(secs).ok()? * 1_000_000_000 + nanos)
    };
    Some(FileStamp {
        size: u64::try_from(stat.st_size).ok()?,
        // Before the epoch is no stamp, as for `file_stamp`.
        modified: nanos(
            i64::try_from(stat.st_mtime).ok()?,
            u128::try_from(stat.st_mtime_nsec).ok()?,
        )?,
        changed: u128::try_from(stat.st_ctime).unwrap_or(0) * 1_000_000_000
            + u128::try_from(stat.st_ctime_nsec).unwrap_or(0),
        inode: u64::try_from(stat.st_ino).unwrap_or(0),
    })
}

/// A large artifact found to hash to what its writer recorded, remembered in `record` with the
/// stamp it had before it was read: while that stamp holds, it was not rewritten and is not
/// hashed again, as git trusts its index's stamps. `stamp` is taken before the artifact is read,
/// so a write during the read leaves a stamp that no longer matches.
pub fn verified_before(record: &Path, stamp: Option<FileStamp>, hash: &str) -> bool {
    let remembered: Option<(FileStamp, String)> = std::fs::read(record)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    stamp.is_some() && remembered == stamp.map(|s| (s, hash.to_string()))
}

/// Remembers in `record` that the artifact with `stamp` (taken before it was read) hashed to
/// `hash`, if that stamp is older than the racy window; a record that cannot be written only
/// means hashing again next time.
pub fn remember_verified(record: &Path, stamp: Option<FileStamp>, hash: &str) {
    let Some(stamp) = stamp.filter(FileStamp::settled) else {
        return;
    };
    if let Ok(bytes) = serde_json::to_vec(&(stamp, hash)) {
        let _ = store::write_atomic(record, &bytes);
    }
}

/// Files found to have a content hash, with the stamp they had then: a file whose stamp is
/// unchanged is not read again, as git's index does. tg-extract keeps it in
/// `.tldrgraph/cache/stamps.bin` for every file it hashes; the readers that check freshness
/// (tg-status, tg-query, `tldrgraph ui`, the MCP server) start from that file, so a no-op
/// check reads metadata only. A stamp is remembered only when the file was last modified well
/// before it was hashed, so an edit within the same clock tick as the hash cannot hide (git's
/// "racy" rule).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Verified {
    /// Per file: its stamp and the content hash it was found to have.
    files: std::collections::HashMap<String, (FileStamp, String)>,
    /// Changed since loaded (so worth saving).
    #[serde(skip)]
    dirty: bool,
}

fn stamps_path(store: &Store) -> std::path::PathBuf {
    store
        .dir()
        .join(artifacts::CACHE_DIR)
        .join(artifacts::STAMPS)
}

/// How far a file's modification must precede the hash for its stamp to be trusted.
const RACY_NANOS: u128 = 2_000_000_000;

impl Verified {
    /// The stamps tg-extract saved for `store`; none when there are none or they are damaged
    /// (then every file is hashed, as before there was a cache).
    pub fn load(store: &Store) -> Verified {
        std::fs::read(stamps_path(store))
            .ok()
            .and_then(|bytes| crate::codec::decode_sealed(&bytes).ok())
            .unwrap_or_default()
    }

    /// Saves the stamps when they changed since [`Verified::load`] (under the repository lock).
    pub fn save(&self, store: &Store) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let bytes = crate::codec::encode_sealed(self).map_err(std::io::Error::other)?;
        store::write_atomic(&stamps_path(store), &bytes)
    }

    /// The content hash `rel` had when its stamp was `stamp`, if that is known.
    pub fn hash_of(&self, rel: &str, stamp: &FileStamp) -> Option<&str> {
        self.files
            .get(rel)
            .filter(|(known, _)| known == stamp)
            .map(|(_, hash)| hash.as_str())
    }

    /// Records that `rel`, stamped `stamp` before it was read, has content `hash`; a stamp too
    /// recent to be trusted is forgotten instead.
    pub fn remember(&mut self, rel: &str, stamp: Option<FileStamp>, hash: &str) {
        match stamp {
            Some(stamp) if stamp.settled() => {
                if self.hash_of(rel, &stamp) != Some(hash) {
                    self.files
                        .insert(rel.to_string(), (stamp, hash.to_string()));
                    self.dirty = true;
                }
            }
            _ => self.forget(rel),
        }
    }

    pub fn forget(&mut self, rel: &str) {
        if self.files.remove(rel).is_some() {
            self.dirty = true;
        }
    }

    /// Keeps only the files `keep` accepts (a full walk drops the ones that are gone).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let before = self.files.len();
        self.files.retain(|rel, _| keep(rel));
        self.dirty |= self.files.len() != before;
    }

    /// Whether `abs`, stamped `stamp` now, still has the content `hash`, reading it only when
    /// its stamp moved.
    fn same(&mut self, rel: &str, abs: &Path, stamp: Option<FileStamp>, hash: &str) -> bool {
        if stamp.is_some_and(|stamp| self.hash_of(rel, &stamp) == Some(hash)) {
            return true;
        }
        let same = std::fs::read(abs).is_ok_and(|b| content_hash(&b) == *hash);
        if same {
            self.remember(rel, stamp, hash);
        } else {
            self.forget(rel);
        }
        same
    }
}

/// What changed since `state` was written, given the source files as a walk like that build's
/// finds them now (`tg_lang::walk::changes_since` walks), as repo-relative and absolute paths.
/// `verified` spares hashing files already found unchanged (a fresh one hashes every file).
pub fn compare<'f>(
    store: &Store,
    state: &SavedState,
    sources: impl IntoIterator<Item = (&'f str, &'f Path)>,
    verified: &mut Verified,
) -> Changes {
    let sources: Vec<(&str, &Path)> = sources.into_iter().collect();
    let known: Vec<&Path> = sources
        .iter()
        .filter(|(rel, _)| state.files.contains_key(*rel))
        .map(|(_, abs)| *abs)
        .collect();
    let mut stamps = file_stamps(&known).into_iter();
    let mut seen = BTreeSet::new();
    let (mut changed, mut added) = (Vec::new(), Vec::new());
    for (rel, abs) in sources {
        seen.insert(rel);
        match state.files.get(rel) {
            Some(hash) => {
                let stamp = stamps.next().flatten();
                if !verified.same(rel, abs, stamp, hash) {
                    changed.push(rel.to_string());
                }
            }
            None if state
                .skipped
                .binary_search_by(|s| s.as_str().cmp(rel))
                .is_ok() =>
            {
                // Skipped, so not hashed: its size and time tell whether it changed.
                if let Some(before) = state.skipped_stamps.get(rel) {
                    if store::stamp(abs).as_ref() != Some(before) {
                        changed.push(rel.to_string());
                    }
                }
            }
            None => added.push(rel.to_string()),
        }
    }
    let removed: Vec<String> = state
        .files
        .keys()
        .filter(|f| !seen.contains(f.as_str()))
        .cloned()
        .collect();
    Changes {
        changed,
        added,
        removed,
        config_changed: state.config_hash != config_hash(store),
        // A state written before decisions were hashed has none: it cannot tell, so it does
        // not claim.
        decisions_changed: state.decisions_hash.is_some()
            && state.decisions_hash != decisions_hash(store),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_taken_by_directory_are_the_stamps_of_each_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let mut paths = Vec::new();
        for (i, name) in ["a/1.py", "a/b/2.py", "a/3.py", "4.py", "a/b/5.py"]
            .iter()
            .enumerate()
        {
            std::fs::write(root.join(name), "x".repeat(i)).expect("write");
            paths.push(root.join(name));
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("a/1.py"), root.join("link.py")).expect("link");
            paths.push(root.join("link.py"));
        }
        paths.push(root.join("a/gone.py"));
        paths.push(root.join("no/such/dir.py"));
        let paths: Vec<&Path> = paths.iter().map(std::path::PathBuf::as_path).collect();
        let one_by_one: Vec<Option<FileStamp>> = paths.iter().map(|p| file_stamp(p)).collect();
        assert!(one_by_one[0].is_some() && one_by_one[paths.len() - 1].is_none());
        assert_eq!(file_stamps(&paths), one_by_one);
        // Split across threads, in order.
        assert_eq!(stamps_split(&paths, 2), one_by_one);
    }

    #[test]
    fn a_verified_stamp_holds_until_the_file_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let (file, record) = (dir.path().join("big"), dir.path().join("big.verified"));
        std::fs::write(&file, b"content").unwrap();
        // Within the racy window: not remembered.
        remember_verified(&record, file_stamp(&file), "h");
        assert!(!record.exists());
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let stamp = file_stamp(&file);
        remember_verified(&record, stamp, "h");
        assert!(verified_before(&record, stamp, "h"));
        assert!(!verified_before(&record, stamp, "another hash"));
        assert!(!verified_before(&record, None, "h"));
        std::fs::write(&file, b"CONTENT").unwrap();
        assert!(!verified_before(&record, file_stamp(&file), "h"));
    }

    /// Past the racy window, so a stamp taken now may be trusted.
    fn wait_out_the_racy_window() {
        std::thread::sleep(std::time::Duration::from_nanos(
            RACY_NANOS as u64 + 100_000_000,
        ));
    }

    #[test]
    fn a_stamp_is_trusted_only_once_the_file_is_older_than_the_racy_window() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.py");
        std::fs::write(&file, "x = 1\n").expect("write");
        let hash = content_hash(b"x = 1\n");
        let mut known = Verified::default();
        known.remember("a.py", file_stamp(&file), &hash);
        assert_eq!(
            known.hash_of("a.py", &file_stamp(&file).expect("stamp")),
            None,
            "too recent"
        );
        wait_out_the_racy_window();
        known.remember("a.py", file_stamp(&file), &hash);
        assert_eq!(
            known.hash_of("a.py", &file_stamp(&file).expect("stamp")),
            Some(hash.as_str())
        );
        // An edit of the same size moves the stamp: the old hash is no longer offered.
        std::fs::write(&file, "x = 2\n").expect("edit");
        assert_eq!(
            known.hash_of("a.py", &file_stamp(&file).expect("stamp")),
            None
        );
        let stamp = file_stamp(&file);
        assert!(!known.same("a.py", &file, stamp, &hash), "the edit is seen");
    }

    #[test]
    fn stamps_are_saved_loaded_and_refused_when_damaged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::at_root(dir.path());
        std::fs::create_dir_all(dir.path().join(".tldrgraph/cache")).expect("mkdir");
        let file = dir.path().join("a.py");
        std::fs::write(&file, "y = 1\n").expect("write");
        wait_out_the_racy_window();
        let stamp = file_stamp(&file);
        let mut known = Verified::default();
        known.remember("a.py", stamp, "h1");
        known.save(&store).expect("save");
        let loaded = Verified::load(&store);
        assert_eq!(loaded.hash_of("a.py", &stamp.expect("stamp")), Some("h1"));
        let path = stamps_path(&store);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[0] ^= 0xff;
        std::fs::write(&path, bytes).expect("damage");
        assert_eq!(
            Verified::load(&store).files.len(),
            0,
            "a damaged file is ignored"
        );
        let mut retained = loaded;
        retained.retain(|rel| rel != "a.py");
        assert!(retained.files.is_empty() && retained.dirty);
    }
}
