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

        /// Watches `targets` too: `Some(true)` when a path was not watched before (what was
        /// found there may already have changed unseen), `None` when one could not be watched
        /// (the limit of watches, a path gone meanwhile): then nothing it says can be trusted.
        pub fn add(&mut self, targets: &[(PathBuf, Watched)]) -> Option<bool> {
            let mut by_path: BTreeMap<&PathBuf, WatchFlags> = BTreeMap::new();
            for (path, how) in targets {
                *by_path.entry(path).or_insert(WatchFlags::empty()) |= flags(*how);
            }
            let mut new = false;
            for (path, flags) in by_path {
                let wd = inotify::add_watch(&self.fd, path, flags).ok()?;
                new |= self.watching.insert(wd);
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
                    Err(rustix::io::Errno::AGAIN) => return quiet,
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
