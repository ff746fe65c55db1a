//! Finding the source files: .gitignore/.ignore aware, never into `.git/` or `.tldrgraph/`,
//! never along a symlink out of the root or around a loop.

use crate::walk_snapshot::{self, WalkSnapshot};
use crate::Language;
use globset::GlobSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tg_shared::artifacts::state::SavedState;
use tg_shared::freshness::{self, Changes};
use tg_shared::layers;
use tg_shared::record::{Diagnostic, Level};
use tg_shared::store::{Store, STORE_DIR};

/// A file to extract.
pub struct SourceFile {
    /// Repo-relative, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub lang: &'static dyn Language,
}

pub struct WalkResult {
    /// Sorted by `rel`, no duplicates.
    pub files: Vec<SourceFile>,
    /// The directories entered, repo-relative (`""` for the root), sorted.
    pub dirs: Vec<String>,
    /// The symlinks the walk followed (absolute paths, sorted): what it found through them
    /// depends on where they lead.
    pub links: Vec<PathBuf>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Repo-relative `/` path of `path` (which lies under `root`).
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

fn diagnostic(level: Level, file: Option<String>, code: &str, message: String) -> Diagnostic {
    Diagnostic {
        level,
        file,
        line: None,
        code: code.to_string(),
        message,
    }
}

/// A walk error as a diagnostic: symlink loops (found by the walker, or ELOOP from the OS) get
/// their own code; the path is taken from wherever the error nests it.
fn walk_diagnostic(root: &Path, err: &ignore::Error) -> Diagnostic {
    let mut path = None;
    let mut current = err;
    let mut is_loop = false;
    loop {
        match current {
            ignore::Error::WithPath { path: p, err } => {
                path.get_or_insert_with(|| p.clone());
                current = err;
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                current = err;
            }
            ignore::Error::Loop { child, .. } => {
                path.get_or_insert_with(|| child.clone());
                is_loop = true;
                break;
            }
            ignore::Error::Io(io) => {
                // ELOOP: "too many levels of symbolic links".
                is_loop = io.raw_os_error() == Some(40);
                break;
            }
            _ => break,
        }
    }
    let file = path.and_then(|p| relative(root, &p));
    if is_loop {
        diagnostic(
            Level::Warning,
            file,
            "symlink_loop",
            "skipped: symlink loop".into(),
        )
    } else {
        diagnostic(
            Level::Warning,
            file,
            "walk_error",
            format!("skipped: {err}"),
        )
    }
}

/// How to walk: the globs left out, and whether `.gitignore`/`.ignore` files are obeyed.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    pub excludes: GlobSet,
    /// Read ignored files too (`--no-ignore`, as ripgrep has); `.git/` and hidden entries are
    /// still skipped.
    pub no_ignore: bool,
}

impl WalkOptions {
    pub fn new(excludes: GlobSet, no_ignore: bool) -> Self {
        WalkOptions {
            excludes,
            no_ignore,
        }
    }
}

/// Why a walk of `starts` found no source file: the directory is empty, it holds no file of a
/// supported language, or the ignore files hide them (with how many).
pub fn why_empty(root: &Path, starts: &[PathBuf], options: &WalkOptions) -> String {
    let everything = WalkOptions::new(GlobSet::empty(), true);
    let (mut files, mut supported, mut kept) = (0u64, 0u64, 0u64);
    let mut builder = ignore::WalkBuilder::new(&starts[0]);
    for start in &starts[1..] {
        builder.add(start);
    }
    configure(&mut builder, &everything);
    for entry in builder.build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files += 1;
            let Some(rel) = relative(root, entry.path()) else {
                continue;
            };
            if crate::for_path(&rel).is_some() {
                supported += 1;
                kept += u64::from(!options.excludes.is_match(&rel));
            }
        }
    }
    let languages = crate::REGISTRY
        .iter()
        .flat_map(|l| l.extensions().iter().map(|e| format!(".{e}")))
        .collect::<Vec<_>>()
        .join(" ");
    if files == 0 {
        "no source file found: the directory holds no files (outside .git/ and hidden ones)"
            .to_string()
    } else if supported == 0 {
        format!("no source file found: none of the {files} files is in a supported language ({languages})")
    } else if kept == 0 {
        format!("no source file found: the `exclude` globs (flags or the config's `exclude:`) leave out all {supported} files in a supported language")
    } else {
        format!("no source file found: .gitignore or .ignore files hide all {supported} files in a supported language (a packaged source tree's `.gitignore` may hold `/*`); pass --no-ignore to read them")
    }
}

/// The walk settings shared by [`walk`] and [`why_empty`].
fn configure(builder: &mut ignore::WalkBuilder, options: &WalkOptions) {
    builder
        .follow_links(true)
        .require_git(false)
        .git_global(false)
        .sort_by_file_path(|a, b| a.cmp(b));
    if options.no_ignore {
        builder
            .git_ignore(false)
            .git_exclude(false)
            .ignore(false)
            .parents(false);
    }
}

/// The source file an entry is, with its canonical path (the path itself unless the walk came
/// through a symlink: only then can the same file be reached twice).
fn source_file(
    root: &Path,
    entry: &ignore::DirEntry,
    linked: &RwLock<Vec<PathBuf>>,
) -> Option<(PathBuf, SourceFile)> {
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let rel = relative(root, entry.path())?;
    let lang = crate::for_path(&rel)?;
    let via_link = entry.path_is_symlink()
        || linked.read().map_or(true, |linked| {
            linked.iter().any(|l| lies_under(entry.path(), l))
        });
    let canonical = if via_link {
        std::fs::canonicalize(entry.path()).unwrap_or_else(|_| entry.path().to_path_buf())
    } else {
        entry.path().to_path_buf()
    };
    let file = SourceFile {
        rel,
        abs: entry.path().to_path_buf(),
        lang,
    };
    Some((canonical, file))
}

/// Whether `path` is `dir` or lies under it, compared as bytes: `Path::starts_with` parses
/// both into components, which for every file of a large tree against every followed symlink
/// was most of a no-op run's time.
fn lies_under(path: &Path, dir: &Path) -> bool {
    let (path, dir) = (
        path.as_os_str().as_encoded_bytes(),
        dir.as_os_str().as_encoded_bytes(),
    );
    let dir = dir.strip_suffix(b"/").unwrap_or(dir);
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/") || rest.starts_with(b"\\"))
}

/// Walks `starts` (absolute, under `root`, which is canonical).
pub fn walk(root: &Path, starts: &[PathBuf], options: &WalkOptions) -> WalkResult {
    let excludes = &options.excludes;
    let diagnostics = Arc::new(Mutex::new(Vec::new()));
    let mut builder = ignore::WalkBuilder::new(&starts[0]);
    for start in &starts[1..] {
        builder.add(start);
    }
    let filter_root = root.to_path_buf();
    let filter_excludes = excludes.clone();
    let filter_diags = Arc::clone(&diagnostics);
    // Symlinks inside the root that the walk follows: only a file under one can be reached
    // twice, so only those files pay for `canonicalize` (a dozen system calls a file).
    let linked: Arc<RwLock<Vec<PathBuf>>> = Arc::new(RwLock::new(Vec::new()));
    let filter_linked = Arc::clone(&linked);
    configure(&mut builder, options);
    builder.filter_entry(move |entry| {
        let name = entry.file_name();
        if entry.depth() > 0 && (name == ".git" || name == STORE_DIR) {
            return false;
        }
        let Some(rel) = relative(&filter_root, entry.path()) else {
            return true;
        };
        if !rel.is_empty() && filter_excludes.is_match(&rel) {
            return false;
        }
        if entry.path_is_symlink() {
            let inside = std::fs::canonicalize(entry.path())
                .map(|target| target.starts_with(&filter_root))
                .unwrap_or(false);
            if !inside {
                if let Ok(mut diags) = filter_diags.lock() {
                    diags.push(diagnostic(
                        Level::Warning,
                        Some(rel),
                        "symlink_outside_root",
                        "skipped: symlink points outside the repository root (or nowhere)".into(),
                    ));
                }
                return false;
            }
            if let Ok(mut linked) = filter_linked.write() {
                linked.push(entry.path().to_path_buf());
            }
        }
        true
    });

    // In parallel (the walk is most of a no-op run on a large tree), then put in order.
    let found: Mutex<Vec<(PathBuf, SourceFile)>> = Mutex::new(Vec::new());
    let dirs: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<Diagnostic>> = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        Box::new(|result| {
            let entry = match result {
                Ok(entry) => entry,
                Err(err) => {
                    if let Ok(mut errors) = errors.lock() {
                        errors.push(walk_diagnostic(root, &err));
                    }
                    return ignore::WalkState::Continue;
                }
            };
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                if let (Some(rel), Ok(mut dirs)) = (relative(root, entry.path()), dirs.lock()) {
                    dirs.push(rel);
                }
            }
            if let Some(file) = source_file(root, &entry, &linked) {
                if let Ok(mut found) = found.lock() {
                    found.push(file);
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_default();
    found.sort_by(|a, b| a.1.rel.cmp(&b.1.rel));
    // Canonical path → the file: one reached twice (through a symlink inside the root) is
    // extracted once, under its smallest path.
    let mut by_canonical: HashMap<PathBuf, SourceFile> = HashMap::with_capacity(found.len());
    for (canonical, file) in found {
        by_canonical.entry(canonical).or_insert(file);
    }
    let mut local = errors.into_inner().unwrap_or_default();
    let mut files: Vec<SourceFile> = by_canonical.into_values().collect();
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let mut diagnostics = match Arc::try_unwrap(diagnostics) {
        Ok(mutex) => mutex.into_inner().unwrap_or_default(),
        Err(shared) => shared.lock().map(|d| d.clone()).unwrap_or_default(),
    };
    diagnostics.append(&mut local);
    diagnostics.sort_by(|a, b| {
        (&a.file, &a.code, &a.message, a.line).cmp(&(&b.file, &b.code, &b.message, b.line))
    });
    let mut dirs = dirs.into_inner().unwrap_or_default();
    dirs.sort();
    let mut links = linked.read().map(|l| l.clone()).unwrap_or_default();
    links.sort();
    WalkResult {
        files,
        dirs,
        links,
        diagnostics,
    }
}

/// What changed in the repository at `root` since `state` was written, walking as that build
/// walked: files the config's `exclude:` or the build's `--exclude` left out are not sources, so
/// they are never "added"; with `--no-ignore`, ignored files are.
/// `verified` carries what an earlier call found unchanged ([`freshness::Verified`]).
pub fn changes_since(
    root: &Path,
    store: &Store,
    state: &SavedState,
    verified: &mut freshness::Verified,
) -> Changes {
    changes_since_walking(root, store, state, verified).0
}

/// [`changes_since`], and the directories the walk entered (repo-relative, sorted), which is
/// what a watcher of the sources watches ([`crate::walk_snapshot::watch_targets`]).
pub fn changes_since_walking(
    root: &Path,
    store: &Store,
    state: &SavedState,
    verified: &mut freshness::Verified,
) -> (Changes, Vec<String>) {
    let mut globs = layers::repo_excludes(store);
    globs.extend(state.exclude.iter().cloned());
    let key = walk_snapshot::key(&globs, state.no_ignore);
    let walked = WalkSnapshot::walk_if_unchanged(store, root, &key).unwrap_or_else(|| {
        let excludes = tg_shared::exclude::compile(&globs).unwrap_or_else(|_| GlobSet::empty());
        walk(
            root,
            &[root.to_path_buf()],
            &WalkOptions::new(excludes, state.no_ignore),
        )
    });
    let sources = walked
        .files
        .iter()
        .map(|f| (f.rel.as_str(), f.abs.as_path()));
    let changes = freshness::compare(store, state, sources, verified);
    (changes, walked.dirs)
}

#[cfg(test)]
mod tests {
    use super::lies_under;
    use std::path::Path;

    #[test]
    fn a_path_lies_under_a_directory_only_at_a_separator() {
        let dir = Path::new("/repo/arch/dts");
        assert!(lies_under(Path::new("/repo/arch/dts/a.h"), dir));
        assert!(lies_under(Path::new("/repo/arch/dts"), dir));
        assert!(lies_under(
            Path::new("/repo/arch/dts/x/y.c"),
            Path::new("/repo/arch/dts/")
        ));
        assert!(!lies_under(Path::new("/repo/arch/dtsx/a.h"), dir));
        assert!(!lies_under(Path::new("/repo/arch/dt"), dir));
        assert!(!lies_under(Path::new("/other/arch/dts/a.h"), dir));
    }
}
