//! Whether anything a freshness check reads may have changed since the last one: inotify
//! watches on the walked directories, the ignore files outside them and the store (Linux, with
//! rustix's safe inotify; elsewhere, or when the watch limit is reached, every check is made in
//! full). On the Linux kernel a full check stamps 55,000 files, about half a second per answer;
//! with nothing changed, an answer skips it.
//!
//! The kernel queues an event before the write that causes it returns, so a change made before
//! a question is in the queue when the question is answered.

use std::path::{Path, PathBuf};
use tg_lang::walk_snapshot::Watched;

#[cfg(target_os = "linux")]
pub use linux::Watch;

#[cfg(not(target_os = "linux"))]
pub use elsewhere::Watch;

/// The store's own files (state, layers config, approval, intents) are read by every check.
pub fn with_store(mut targets: Vec<(PathBuf, Watched)>, store: &Path) -> Vec<(PathBuf, Watched)> {
    targets.push((store.to_path_buf(), Watched::Entries));
    targets
}

#[cfg(target_os = "linux")]
mod linux {
    use super::Watched;
    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    use rustix::io::Errno;
    use std::collections::{BTreeMap, HashSet};
    use std::mem::MaybeUninit;
    use std::path::PathBuf;

    pub struct Watch {
        fd: OwnedFd,
        /// The watch descriptors added so far (a path watched again keeps its descriptor).
        watching: HashSet<i32>,
    }

    fn flags(how: Watched) -> WatchFlags {
        let written = WatchFlags::MODIFY | WatchFlags::ATTRIB | WatchFlags::CLOSE_WRITE;
        let moved = WatchFlags::DELETE_SELF | WatchFlags::MOVE_SELF;
        let arrivals = WatchFlags::CREATE | WatchFlags::MOVED_TO;
        match how {
            Watched::Entries => {
                written | moved | arrivals | WatchFlags::DELETE | WatchFlags::MOVED_FROM
            }
            Watched::Content => written | moved,
            Watched::Arrivals => arrivals,
        }
    }

    impl Watch {
        /// A watcher with nothing watched yet; `None` when the system refuses one.
        pub fn new() -> Option<Watch> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            Some(Watch {
                fd,
                watching: HashSet::new(),
            })
        }

        /// Watches `targets` too: `Some(true)` when a walked directory was not watched before
        /// (what was found there may already have changed unseen) or is gone since the walk
        /// (its parent's event says so), `None` when the system's limit of watches is reached:
        /// then nothing the watcher says can be trusted. A path outside the walk that cannot be
        /// watched (a directory above the repository without read permission) is left out:
        /// who cannot read it cannot add an ignore file there either, as a rule.
        pub fn add(&mut self, targets: &[(PathBuf, Watched)]) -> Option<bool> {
            let mut by_path: BTreeMap<&PathBuf, (WatchFlags, bool)> = BTreeMap::new();
            for (path, how) in targets {
                let entry = by_path.entry(path).or_insert((WatchFlags::empty(), false));
                entry.0 |= flags(*how);
                entry.1 |= *how == Watched::Entries;
            }
            let mut new = false;
            for (path, (flags, walked)) in by_path {
                match inotify::add_watch(&self.fd, path, flags) {
                    Ok(wd) => new |= self.watching.insert(wd),
                    Err(Errno::NOSPC | Errno::NOMEM) => return None,
                    Err(_) if walked => new = true,
                    Err(_) => {}
                }
            }
            Some(new)
        }

        /// Whether no event came since the last call (reading them all): `false` after any
        /// change, an overflow of the queue, or a read that failed.
        pub fn quiet(&mut self) -> bool {
            let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
            let mut events = inotify::Reader::new(&self.fd, &mut buf);
            let mut quiet = true;
            loop {
                match events.next() {
                    Ok(_) => quiet = false,
                    Err(Errno::AGAIN) => return quiet,
                    Err(_) => return false,
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod elsewhere {
    use super::Watched;
    use std::path::PathBuf;

    /// No watcher here: every check is made in full.
    pub struct Watch;

    impl Watch {
        pub fn new() -> Option<Watch> {
            None
        }

        pub fn add(&mut self, _targets: &[(PathBuf, Watched)]) -> Option<bool> {
            None
        }

        pub fn quiet(&mut self) -> bool {
            false
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_seen_once_and_a_vanished_directory_is_not_trusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let mut watch = Watch::new().expect("inotify");
        let targets = [(root.clone(), Watched::Entries)];
        assert_eq!(
            watch.add(&targets),
            Some(true),
            "watched for the first time"
        );
        assert_eq!(watch.add(&targets), Some(false), "already watched");
        assert!(watch.quiet());
        std::fs::write(root.join("notes.txt"), "x = 1\n").expect("write");
        assert!(!watch.quiet(), "the write is seen");
        assert!(watch.quiet(), "and only once");
        // A walked directory gone since the walk is not trusted; a path outside the walk that
        // cannot be watched is left out.
        let gone = root.join("gone");
        assert_eq!(watch.add(&[(gone.clone(), Watched::Entries)]), Some(true));
        assert_eq!(watch.add(&[(gone, Watched::Arrivals)]), Some(false));
    }
}
