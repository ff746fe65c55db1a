//! What a full walk found, kept so that a freshness check need not walk again (git's
//! "untracked cache"): the source files, with the stamp of every directory the walk entered and
//! of every ignore file that could have changed its result. While each directory keeps its
//! stamp no entry was added, removed or renamed in it (the kernel moves a directory's times on
//! each), and while the ignore files keep theirs the same rules apply; so the walk would find
//! the same files, and only those files need a `stat`. Any moved stamp, or a stamp too recent
//! to be trusted when it was taken, means a full walk, as before.
//!
//! tg-extract writes it (`.tldrgraph/cache/walk.bin`) after each full walk, under the lock;
//! [`crate::walk::changes_since`] reads it (status, answers, `ui`, the MCP server, the no-op
//! `init`).

use crate::walk::{SourceFile, WalkResult};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tg_shared::artifacts;
use tg_shared::freshness::{file_stamp, FileStamp};
use tg_shared::store::{self, Store};

/// Ignore files a directory may hold (the walk obeys `.gitignore` and `.ignore`). One created
/// in a walked directory moves that directory's stamp, so only those present are stamped there.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];
/// A repository's own excludes, created inside `.git/` (which is not walked): stamped present
/// or absent.
const GIT_EXCLUDE: &str = ".git/info/exclude";

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WalkSnapshot {
    /// The walk's settings (excludes, `--no-ignore`): another setting is another walk.
    key: String,
    /// Repo-relative directories entered, with their stamps.
    dirs: Vec<(String, FileStamp)>,
    /// Ignore files in those directories and above the root, absent ones as `None`.
    ignore_files: Vec<(PathBuf, Option<FileStamp>)>,
    /// The symlinks followed, repo-relative, with where they led.
    links: Vec<(String, PathBuf)>,
    /// The source files found, repo-relative and sorted. (No diagnostics: a walk that
    /// reported anything is not kept, see [`WalkSnapshot::take`].)
    files: Vec<String>,
}

fn path(store: &Store) -> PathBuf {
    store.dir().join(artifacts::CACHE_DIR).join(artifacts::WALK)
}

/// What a snapshot stamps: 2 added a linked worktree's common exclude, so a snapshot kept
/// before (which lacks it) is not trusted.
const SNAPSHOT_REVISION: u32 = 2;

/// The key of a walk's settings: the build and its languages' extensions, its exclude globs
/// (in order) and whether it obeys ignore files.
pub fn key(excludes: &[String], no_ignore: bool) -> String {
    // Another build may read other languages: its walk finds other files.
    let extensions: Vec<&str> = crate::all_extensions().collect();
    let mut key = format!(
        "{} snapshot {SNAPSHOT_REVISION}\nextensions={}\nno_ignore={no_ignore}\n",
        env!("CARGO_PKG_VERSION"),
        extensions.join(",")
    );
    for glob in excludes {
        key.push_str(glob);
        key.push('\n');
    }
    key
}

/// Every ignore file that can change a walk of `root` entering `dirs`, with whether it must be
/// stamped even when absent: those of each walked directory (present ones only, see
/// [`IGNORE_FILES`]), each one's `.git/info/exclude`, and all of each directory above the root
/// (the walk reads parents' ignore files too, and those directories are not stamped).
fn ignore_files(root: &Path, dirs: &[String]) -> Vec<(PathBuf, bool)> {
    let walked = dirs.iter().map(|d| root.join(d)).flat_map(|dir| {
        let own = IGNORE_FILES.iter().map(|name| (dir.join(name), false));
        let git = git_excludes(&dir).into_iter().map(|p| (p, true));
        own.chain(git).collect::<Vec<_>>()
    });
    let above = root.ancestors().skip(1).flat_map(|dir| {
        let own = IGNORE_FILES.iter().map(|name| (dir.join(name), true));
        let git = git_excludes(dir).into_iter().map(|p| (p, true));
        own.chain(git).collect::<Vec<_>>()
    });
    walked.chain(above).collect()
}

/// How a path is watched for changes a walk would see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Watched {
    /// A walked directory: its entries appearing, going or being written.
    Entries,
    /// An ignore file outside the walked directories: its content.
    Content,
    /// The directory of such an ignore file: one appearing in it.
    Arrivals,
}

/// What to watch so that nothing a walk of `root` entering `dirs` (repo-relative, as
/// [`crate::walk::WalkResult::dirs`]) would find differently goes unseen: each walked directory,
/// and each ignore file outside them (the parents' own, `.git/info/exclude`) with the directory
/// that would hold it. Sorted, one entry per path and way.
pub fn watch_targets(root: &Path, dirs: &[String]) -> Vec<(PathBuf, Watched)> {
    let walked: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let is_walked: std::collections::HashSet<&Path> = walked.iter().map(PathBuf::as_path).collect();
    let mut targets: Vec<(PathBuf, Watched)> = walked
        .iter()
        .map(|dir| (dir.clone(), Watched::Entries))
        .collect();
    for (file, _) in ignore_files(root, dirs) {
        let Some(parent) = file.parent() else {
            continue;
        };
        if is_walked.contains(parent) {
            continue;
        }
        if file.exists() {
            targets.push((file.clone(), Watched::Content));
        }
        if parent.is_dir() {
            targets.push((parent.to_path_buf(), Watched::Arrivals));
        }
    }
    targets.sort();
    targets.dedup();
    targets
}

/// The files that decide `dir`'s git excludes, where the walker (the `ignore` crate) looks:
/// `.git/info/exclude`; or, in a linked worktree, whose `.git` is a file naming its git
/// directory, that file, the git directory's `commondir` and the common directory's
/// `info/exclude` (git keeps one exclude file for all of a repository's worktrees).
fn git_excludes(dir: &Path) -> Vec<PathBuf> {
    let dot_git = dir.join(".git");
    if !dot_git.is_file() {
        return vec![dir.join(GIT_EXCLUDE)];
    }
    let first_line = |path: &Path| {
        let text = std::fs::read_to_string(path).ok()?;
        Some(text.lines().next()?.trim_end().to_string())
    };
    let mut files = vec![dot_git.clone()];
    let Some(git_dir) =
        first_line(&dot_git).and_then(|line| line.strip_prefix("gitdir: ").map(|d| dir.join(d)))
    else {
        return files;
    };
    let commondir = git_dir.join("commondir");
    if let Some(common) = first_line(&commondir) {
        files.push(git_dir.join(common).join("info/exclude"));
    }
    files.push(commondir);
    files
}

impl WalkSnapshot {
    /// The snapshot of `walked` (a full walk of `root` with the settings `key`, begun at
    /// `walk_began`, [`tg_shared::freshness::now_nanos`]), or `None` when a directory or ignore
    /// file changed too close to the walk for its stamp to say what the walk saw.
    pub fn take(
        root: &Path,
        key: String,
        walked: &WalkResult,
        walk_began: u128,
    ) -> Option<WalkSnapshot> {
        // A symlink refused (out of the root, or leading nowhere yet) or an entry the walk could
        // not read may change with no stamped directory moving, and a file name that is not
        // UTF-8 is not found again from its repo-relative form.
        let same_paths = walked.files.iter().all(|f| f.abs == root.join(&f.rel));
        if !walked.diagnostics.is_empty() || !same_paths {
            return None;
        }
        // A followed symlink holds while it leads to the same place (a directory there is
        // stamped through the link).
        let links = walked
            .links
            .iter()
            .map(|l| {
                Some((
                    crate::walk::relative(root, l)?,
                    std::fs::canonicalize(l).ok()?,
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        let dirs = walked
            .dirs
            .iter()
            .map(|d| {
                let stamp = file_stamp(&root.join(d)).filter(|s| s.settled_before(walk_began))?;
                Some((d.clone(), stamp))
            })
            .collect::<Option<Vec<_>>>()?;
        let ignore_files = ignore_files(root, &walked.dirs)
            .into_iter()
            .filter_map(|(p, even_absent)| match file_stamp(&p) {
                Some(stamp) if !stamp.settled_before(walk_began) => Some(None),
                None if !even_absent => None,
                stamp => Some(Some((p, stamp))),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(WalkSnapshot {
            key,
            dirs,
            ignore_files,
            links,
            files: walked.files.iter().map(|f| f.rel.clone()).collect(),
        })
    }

    /// Saves `snapshot`, or removes the last one when there is none to trust.
    pub fn save(store: &Store, snapshot: Option<&WalkSnapshot>) -> std::io::Result<()> {
        match snapshot {
            Some(snapshot) => {
                let bytes =
                    tg_shared::codec::encode_sealed(snapshot).map_err(std::io::Error::other)?;
                store::write_if_changed(&path(store), &bytes).map(|_| ())
            }
            None => match std::fs::remove_file(path(store)) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
                _ => Ok(()),
            },
        }
    }

    /// What a full walk of `root` with the settings `key` would find now, if the saved
    /// snapshot still holds for every directory and ignore file; `None` otherwise (or when
    /// there is none, or it is damaged).
    pub fn walk_if_unchanged(store: &Store, root: &Path, key: &str) -> Option<WalkResult> {
        let bytes = std::fs::read(path(store)).ok()?;
        let snapshot: WalkSnapshot = tg_shared::codec::decode_sealed(&bytes).ok()?;
        let dirs: Vec<PathBuf> = snapshot.dirs.iter().map(|(d, _)| root.join(d)).collect();
        let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        let holds = snapshot.key == key
            && tg_shared::freshness::file_stamps(&dirs)
                .iter()
                .zip(&snapshot.dirs)
                .all(|(now, (_, stamp))| now.as_ref() == Some(stamp))
            && snapshot
                .ignore_files
                .iter()
                .all(|(p, stamp)| file_stamp(p) == *stamp)
            && snapshot
                .links
                .iter()
                .all(|(l, to)| std::fs::canonicalize(root.join(l)).ok().as_ref() == Some(to));
        if !holds {
            return None;
        }
        let files = snapshot
            .files
            .into_iter()
            .map(|rel| {
                Some(SourceFile {
                    abs: root.join(&rel),
                    lang: crate::for_path(&rel)?,
                    rel,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(WalkResult {
            files,
            dirs: snapshot.dirs.into_iter().map(|(d, _)| d).collect(),
            links: snapshot
                .links
                .into_iter()
                .map(|(l, _)| root.join(l))
                .collect(),
            // Only a walk that reported nothing was kept.
            diagnostics: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::{walk, WalkOptions};
    use globset::GlobSet;
    use std::fs;

    /// A repository (with its store) whose directories and ignore file are older than the racy
    /// window.
    #[test]
    fn a_watcher_watches_the_walked_directories_and_the_ignore_files_outside_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("pkg")).expect("mkdir");
        fs::create_dir_all(root.join(".git/info")).expect("mkdir");
        fs::write(root.join(".git/info/exclude"), "*.tmp\n").expect("write");
        let targets = watch_targets(root, &["".to_string(), "pkg".to_string()]);
        let has = |path: PathBuf, how: Watched| targets.contains(&(path, how));
        assert!(has(root.join(""), Watched::Entries));
        assert!(has(root.join("pkg"), Watched::Entries));
        assert!(has(root.join(".git/info/exclude"), Watched::Content));
        assert!(has(root.join(".git/info"), Watched::Arrivals));
        // pkg has no .git: its exclude file would be in a directory that does not exist.
        assert!(!targets
            .iter()
            .any(|(p, _)| p.starts_with(root.join("pkg/.git"))));
        // An ignore file may appear above the root.
        let parent = root.parent().expect("parent").to_path_buf();
        assert!(has(parent, Watched::Arrivals));
        // In a walked directory, its own ignore files are the directory's entries.
        assert!(!targets
            .iter()
            .any(|(p, _)| p.starts_with(root) && p.ends_with(".gitignore")));
    }

    fn settled_repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("pkg/gen")).expect("mkdir");
        // The store exists before a walk is kept (tg-extract holds its lock while it walks).
        fs::create_dir_all(root.join(".tldrgraph")).expect("mkdir");
        fs::write(root.join("pkg/a.py"), "def a():\n    pass\n").expect("write");
        fs::write(root.join("pkg/gen/g.py"), "def g():\n    pass\n").expect("write");
        fs::write(root.join(".gitignore"), "gen/\n").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        dir
    }

    fn full_walk(root: &Path) -> WalkResult {
        walk(
            root,
            &[root.to_path_buf()],
            &WalkOptions::new(GlobSet::empty(), false),
        )
    }

    /// Walks and saves the snapshot, as tg-extract does.
    fn snapshot(root: &Path, store: &Store) -> Option<WalkSnapshot> {
        let began = tg_shared::freshness::now_nanos();
        let walked = full_walk(root);
        let snapshot = WalkSnapshot::take(root, key(&[], false), &walked, began);
        WalkSnapshot::save(store, snapshot.as_ref()).expect("save");
        snapshot
    }

    fn files(store: &Store, root: &Path) -> Option<Vec<String>> {
        WalkSnapshot::walk_if_unchanged(store, root, &key(&[], false))
            .map(|w| w.files.into_iter().map(|f| f.rel).collect())
    }

    #[test]
    fn a_snapshot_answers_until_a_directory_or_an_ignore_file_moves() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        assert!(snapshot(root, &store).is_some(), "settled: trusted");
        assert_eq!(files(&store, root), Some(vec!["pkg/a.py".to_string()]));
        assert_eq!(
            WalkSnapshot::walk_if_unchanged(&store, root, &key(&["x/**".into()], false))
                .map(|w| w.files.len()),
            None,
            "other settings are another walk"
        );

        // An edit in place leaves the directory alone: the snapshot holds (the file's own
        // stamp is the content check's business).
        fs::write(root.join("pkg/a.py"), "def a():\n    return 1\n").expect("edit");
        assert!(files(&store, root).is_some());

        // A file added: its directory moved.
        fs::write(root.join("pkg/b.py"), "def b():\n    pass\n").expect("add");
        assert_eq!(files(&store, root), None);
        fs::remove_file(root.join("pkg/b.py")).expect("remove");
        assert_eq!(files(&store, root), None, "removed again: still moved");
    }

    #[test]
    fn an_ignore_file_edited_in_place_ends_the_snapshot() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        assert!(snapshot(root, &store).is_some());
        // The same directory entries; only the rule changed, which un-ignores pkg/gen/g.py.
        fs::write(root.join(".gitignore"), "nothing/\n").expect("edit");
        assert_eq!(files(&store, root), None);
        let walked: Vec<String> = full_walk(root).files.into_iter().map(|f| f.rel).collect();
        assert_eq!(walked, vec!["pkg/a.py", "pkg/gen/g.py"]);
    }

    #[test]
    fn a_git_exclude_created_inside_git_ends_the_snapshot() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        fs::create_dir_all(root.join(".git/info")).expect("mkdir");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        assert!(snapshot(root, &store).is_some());
        // `.git/` is not walked, so the root's stamp does not move: the exclude's own does.
        fs::write(root.join(".git/info/exclude"), "pkg/a.py\n").expect("write");
        assert_eq!(files(&store, root), None);
        assert!(full_walk(root).files.is_empty(), "the rule applies");
    }

    #[test]
    fn the_common_exclude_of_a_linked_worktree_ends_the_snapshot() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        // As `git worktree add` leaves it: `.git` names the worktree's git directory, whose
        // `commondir` leads to the main repository's, where the one exclude file lives.
        let main = tempfile::tempdir().expect("tempdir");
        let git_dir = main.path().join(".git/worktrees/wt");
        fs::create_dir_all(&git_dir).expect("mkdir");
        fs::create_dir_all(main.path().join(".git/info")).expect("mkdir");
        fs::write(git_dir.join("commondir"), "../..\n").expect("write");
        fs::write(
            root.join(".git"),
            format!("gitdir: {}\n", git_dir.display()),
        )
        .expect("write");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        assert!(snapshot(root, &store).is_some());
        assert_eq!(files(&store, root), Some(vec!["pkg/a.py".to_string()]));
        fs::write(main.path().join(".git/info/exclude"), "pkg/a.py\n").expect("write");
        assert_eq!(files(&store, root), None);
        assert!(full_walk(root).files.is_empty(), "the walker obeys it too");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_keep_the_snapshot_only_while_they_lead_to_the_same_place() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        // Leading nowhere yet: its target may appear where no stamped directory would move.
        std::os::unix::fs::symlink("../build/gen.py", root.join("pkg/gen.py")).expect("link");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        assert_eq!(snapshot(root, &store), None);
        assert_eq!(files(&store, root), None);

        // Leading into an ignored directory: kept, until the link (deep in a chain) moves.
        fs::create_dir_all(root.join("build/one")).expect("mkdir");
        fs::create_dir_all(root.join("build/two")).expect("mkdir");
        fs::write(root.join(".gitignore"), "gen/\nbuild/\n").expect("write");
        fs::write(root.join("build/one/gen.py"), "def one():\n    pass\n").expect("write");
        fs::write(root.join("build/two/gen.py"), "def two():\n    pass\n").expect("write");
        std::os::unix::fs::symlink("one", root.join("build/cur")).expect("link");
        fs::remove_file(root.join("pkg/gen.py")).expect("unlink");
        std::os::unix::fs::symlink("../build/cur/gen.py", root.join("pkg/gen.py")).expect("link");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        assert!(snapshot(root, &store).is_some());
        assert_eq!(
            files(&store, root),
            Some(vec!["pkg/a.py".to_string(), "pkg/gen.py".to_string()])
        );
        fs::remove_file(root.join("build/cur")).expect("unlink");
        std::os::unix::fs::symlink("two", root.join("build/cur")).expect("link");
        assert_eq!(files(&store, root), None, "the chain leads elsewhere now");
    }

    #[test]
    fn a_walk_over_a_directory_changed_just_before_is_not_kept() {
        let repo = settled_repo();
        let (root, store) = (repo.path(), Store::at_root(repo.path()));
        assert!(snapshot(root, &store).is_some());
        fs::write(root.join("pkg/c.py"), "def c():\n    pass\n").expect("add");
        assert_eq!(
            snapshot(root, &store),
            None,
            "pkg/ moved within the racy window"
        );
        assert!(
            !store
                .dir()
                .join(artifacts::CACHE_DIR)
                .join(artifacts::WALK)
                .exists(),
            "the old snapshot is dropped"
        );
        assert_eq!(files(&store, root), None);
    }
}
