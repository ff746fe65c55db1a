//! `tldrgraph impact` and `tldrgraph check`: what a change touches, and whether it broke the
//! layering. Both compare two snapshots of the repository, each extracted and classified the
//! way `init` does it (so neither reads a graph that may be stale): the working tree (or the
//! index) against a commit, or, without git, against the last build.

pub mod check;
pub mod diff;
mod git;
mod render;
mod snapshot;

use crate::cli::{CheckArgs, CheckFormat, ImpactArgs};
use crate::mcp::budget;
use snapshot::{Snapshot, Tree};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tg_shared::artifacts;
use tg_shared::exit;
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// `check`'s exit code when it finds (new) violations.
pub const VIOLATIONS: i32 = 1;

/// The two snapshots a command compares, and what the first one is.
struct Compared {
    base: String,
    before: Snapshot,
    after: Snapshot,
    /// `--files`: only changes in these files count.
    only: Option<BTreeSet<String>>,
}

pub fn impact_command(args: &ImpactArgs) -> i32 {
    match impact(args) {
        Ok(text) => crate::print(&text),
        Err(failure) => crate::report(&failure),
    }
}

/// The impact `args` asks for, before any rendering (the CLI prints it, the MCP server returns
/// it).
pub fn analyse(args: &ImpactArgs) -> Result<diff::Impact, Failure> {
    if args.depth == 0 || !(0.0..=1.0).contains(&args.min_confidence) {
        return Err(Failure::new(
            exit::USAGE,
            format!(
                "--depth must be at least 1 (got {}) and --min-confidence between 0 and 1 (got {})",
                args.depth, args.min_confidence
            ),
        ));
    }
    let root = crate::repository(args.root.as_deref())?;
    let store = Store::at_root(&root);
    let _lock = crate::take_lock(&store)?;
    let compared = compare(&root, &store, args)?;
    let options = diff::Options {
        depth: args.depth,
        min_confidence: args.min_confidence,
    };
    Ok(diff::impact(
        compared.base,
        &compared.before,
        &compared.after,
        compared.only.as_ref(),
        options,
    ))
}

fn impact(args: &ImpactArgs) -> Result<String, Failure> {
    let found = analyse(args)?;
    let options = diff::Options {
        depth: args.depth,
        min_confidence: args.min_confidence,
    };
    let mut value = serde_json::to_value(&found)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise: {e}")))?;
    let cut = args
        .budget
        .map(|tokens| budget::fit(&mut value, budget::tokens(Some(tokens))))
        .unwrap_or_default();
    if args.json {
        if !cut.is_empty() {
            value["cut"] = serde_json::to_value(&cut).unwrap_or_default();
        }
        return Ok(value.to_string());
    }
    let found: diff::Impact = serde_json::from_value(value)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot read back: {e}")))?;
    Ok(render::markdown(&found, options, &cut))
}

/// The snapshots `args` asks to compare.
fn compare(root: &Path, store: &Store, args: &ImpactArgs) -> Result<Compared, Failure> {
    if !args.files.is_empty() {
        let before = last_build(store)?;
        let only = known_files(root, relative_files(root, &args.files)?, &before)?;
        let after = snapshot::of(root, &Tree::Worktree)?;
        return Ok(Compared {
            base: "the last build".into(),
            before,
            after,
            only: Some(only),
        });
    }
    if !git::is_repository(root) {
        return Err(Failure::new(
            exit::USAGE,
            format!("{} is not a git repository", root.display()),
        )
        .with_hint("name the changed files with --files (they are compared with the last build)"));
    }
    if args.staged {
        let before = match git::commit(root, "HEAD") {
            Ok(head) => snapshot::of(root, &Tree::Commit(head))?,
            // No commit yet: everything staged is new.
            Err(_) => Snapshot::default(),
        };
        let after = snapshot::of(root, &Tree::Index)?;
        return Ok(Compared {
            base: "HEAD (the index against it)".into(),
            before,
            after,
            only: None,
        });
    }
    let rev = args.since.as_deref().unwrap_or("HEAD");
    let commit = git::commit(root, rev)?;
    let before = snapshot::of(root, &Tree::Commit(commit.clone()))?;
    let after = snapshot::of(root, &Tree::Worktree)?;
    Ok(Compared {
        base: format!("{rev} ({})", &commit[..commit.len().min(12)]),
        before,
        after,
        only: None,
    })
}

/// The last build's graph (`.tldrgraph/graph.json`) as a snapshot.
fn last_build(store: &Store) -> Result<Snapshot, Failure> {
    Snapshot::of_last_build(store).map_err(|f| {
        f.with_hint("without git, --files compares with the last build: run `tldrgraph init` first")
    })
}

/// The files named, a directory standing for the files under it (as `dir/`); a name that is
/// neither a source here nor in the last build is a usage error (a typo must not read as "no
/// change").
fn known_files(
    root: &Path,
    named: BTreeSet<String>,
    before: &Snapshot,
) -> Result<BTreeSet<String>, Failure> {
    let built: BTreeSet<&str> = before.symbols().map(|s| s.file()).collect();
    let mut files = BTreeSet::new();
    for name in named {
        let under = format!("{}/", name.trim_end_matches('/'));
        if root.join(&name).is_dir() || built.iter().any(|f| f.starts_with(&under)) {
            files.insert(under);
        } else if built.contains(name.as_str()) || root.join(&name).is_file() {
            files.insert(name);
        } else {
            return Err(Failure::new(
                exit::USAGE,
                format!("{name} is neither a file here nor in the last build"),
            )
            .with_hint(
                "name files by their path from the current directory or the repository root",
            ));
        }
    }
    Ok(files)
}

/// `files` as repository-relative paths with `/` separators; a file outside the repository is
/// a usage error.
fn relative_files(root: &Path, files: &[PathBuf]) -> Result<BTreeSet<String>, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the current directory: {e}")))?;
    files
        .iter()
        .map(|file| {
            let absolute = if file.is_absolute() {
                file.clone()
            } else {
                cwd.join(file)
            };
            // A deleted file cannot be canonicalised: its directory can.
            let resolved = std::fs::canonicalize(&absolute).or_else(|_| {
                let parent = absolute.parent().unwrap_or(root);
                std::fs::canonicalize(parent)
                    .map(|p| p.join(absolute.file_name().unwrap_or_default()))
            });
            resolved
                .ok()
                .and_then(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .ok_or_else(|| {
                    Failure::new(
                        exit::USAGE,
                        format!("{} is not a file of {}", file.display(), root.display()),
                    )
                })
        })
        .collect()
}

pub fn check_command(args: &CheckArgs) -> i32 {
    match check(args) {
        Ok((text, found)) => match crate::print(&text) {
            exit::OK if found > 0 => VIOLATIONS,
            code => code,
        },
        Err(failure) => crate::report(&failure),
    }
}

/// The violations `args` asks for, and what they are measured against.
pub fn judge(args: &CheckArgs) -> Result<(String, Vec<check::Violation>), Failure> {
    let root = crate::repository(args.root.as_deref())?;
    let store = Store::at_root(&root);
    let config = store.path(artifacts::LAYERS_CONFIG);
    if !config.is_file() {
        return Err(Failure::new(
            exit::NO_INPUT,
            format!(
                "{} does not exist: without layers there is nothing to check, and a gate must not pass for that",
                config.display()
            ),
        )
        .with_hint("design the layers first (`tldrgraph init --json` says how), then check"));
    }
    let _lock = crate::take_lock(&store)?;
    let after = snapshot::of(&root, &Tree::Worktree)?;
    let (before, scope) = match &args.since {
        Some(rev) => {
            if !git::is_repository(&root) {
                return Err(Failure::new(
                    exit::USAGE,
                    format!(
                        "--since needs git, and {} is not a git repository",
                        root.display()
                    ),
                ));
            }
            let commit = git::commit(&root, rev)?;
            let before = snapshot::of(&root, &Tree::Commit(commit.clone())).map_err(|f| {
                Failure::new(
                    f.code,
                    format!("cannot build {rev} to compare with: {}", f.message),
                )
            })?;
            (
                Some(before),
                format!(
                    "introduced since {rev} ({})",
                    &commit[..commit.len().min(12)]
                ),
            )
        }
        None => (None, "in the working tree".to_string()),
    };
    Ok((scope, check::violations(&after, before.as_ref())))
}

/// The report in the format asked, and how many violations it has.
fn check(args: &CheckArgs) -> Result<(String, usize), Failure> {
    let (scope, found) = judge(args)?;
    let text = match args.format {
        CheckFormat::Text => check::text(&found, &scope),
        CheckFormat::Github => check::github(&found, &scope),
        CheckFormat::Json => serde_json::json!({
            "scope": scope,
            "count": found.len(),
            "violations": found,
        })
        .to_string(),
        CheckFormat::Sarif => check::sarif(&found).to_string(),
    };
    Ok((text, found.len()))
}
