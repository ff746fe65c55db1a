//! The graph of one state of the repository (a commit, the index, the working tree), made the
//! way `init` makes it: `tg-extract | tg-classify` on that tree, judged by today's layers
//! config. A tree other than the working tree is written to a temporary directory with the
//! repository's extraction cache beside it, so only the files that differ are parsed.

use crate::pipeline::Stage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tg_shared::artifacts;
use tg_shared::exit;
use tg_shared::record::{Edge, Node, Record};
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// Symbols by id, and the dependency edges between them.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub nodes: BTreeMap<String, Node>,
    pub edges: Vec<Edge>,
    /// Where the tree's files can be read, when they can (not for a past build).
    pub files: Option<PathBuf>,
    /// The exported tree, removed when the snapshot goes.
    _exported: Option<tempfile::TempDir>,
}

impl Snapshot {
    /// A snapshot of a graph whose files cannot be read any more.
    pub fn without_files(nodes: BTreeMap<String, Node>, edges: Vec<Edge>) -> Snapshot {
        Snapshot {
            nodes,
            edges,
            files: None,
            _exported: None,
        }
    }

    /// The text of `node` (its lines) without the symbols defined inside it and without blank
    /// lines: what is its own (a member that grows, is added or goes leaves it as it was);
    /// `None` when the file cannot be read.
    pub fn own_text(&self, node: &Node) -> Option<String> {
        let text = std::fs::read_to_string(self.files.as_ref()?.join(&node.file)).ok()?;
        let (start, end) = (node.line_start.max(1) as usize, node.line_end as usize);
        let inner: Vec<(usize, usize)> = self
            .nodes
            .values()
            .filter(|n| n.parent.as_deref() == Some(node.id.as_str()))
            .map(|n| (n.line_start as usize, n.line_end as usize))
            .collect();
        let own: Vec<&str> = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line))
            .filter(|(n, line)| {
                *n >= start
                    && *n <= end
                    && !line.trim().is_empty()
                    && !inner.iter().any(|(a, b)| n >= a && n <= b)
            })
            .map(|(_, line)| line)
            .collect();
        Some(own.join("\n"))
    }
}

/// Which state of the repository.
#[derive(Debug, Clone)]
pub enum Tree {
    /// The files as they are on disk.
    Worktree,
    /// The files of a commit.
    Commit(String),
    /// The files staged for commit.
    Index,
}

/// The graph of `tree` in the repository at `root` (whose `.tldrgraph/` lends its layers config
/// and extraction cache).
pub fn of(root: &Path, tree: &Tree) -> Result<Snapshot, Failure> {
    let located = crate::locate_stages(&["tg-extract", "tg-classify"]).map_err(|(f, _)| f)?;
    let mut exported = None;
    let at = match tree {
        Tree::Worktree => root.to_path_buf(),
        Tree::Commit(_) | Tree::Index => {
            let dir = tempfile::tempdir().map_err(|e| {
                Failure::new(
                    exit::CANT_CREATE,
                    format!("cannot make a temporary directory: {e}"),
                )
            })?;
            match tree {
                Tree::Commit(commit) => super::git::export_commit(root, commit, dir.path())?,
                _ => super::git::export_index(root, dir.path())?,
            }
            lend_store(root, dir.path())?;
            let at = dir.path().to_path_buf();
            exported = Some(dir);
            at
        }
    };
    let stages: Vec<Stage> = located
        .into_iter()
        .map(|(name, exe)| {
            let mut args = vec![
                "--quiet".into(),
                "--root".into(),
                at.clone().into_os_string(),
            ];
            if name == "tg-extract" {
                args.push(at.clone().into_os_string());
            }
            Stage { name, exe, args }
        })
        .collect();
    let stream = crate::run_stages(&stages, false, false).map_err(|(failure, _)| failure)?;
    let mut snapshot = parse(&stream)?;
    snapshot.files = Some(at);
    snapshot._exported = exported;
    Ok(snapshot)
}

/// Copies the layers config and the extraction cache of `root` into the exported tree's own
/// `.tldrgraph/` (a tree from git never has one: it is not committed).
fn lend_store(root: &Path, tree: &Path) -> Result<(), Failure> {
    let from = Store::at_root(root);
    let to = Store::at_root(tree);
    let cache = Path::new(artifacts::CACHE_DIR).join(artifacts::EXTRACT_CACHE);
    for rel in [Path::new(artifacts::LAYERS_CONFIG), cache.as_path()] {
        let source = from.dir().join(rel);
        if !source.is_file() {
            continue;
        }
        let target = to.dir().join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                Failure::new(
                    exit::CANT_CREATE,
                    format!("cannot create {}: {e}", parent.display()),
                )
            })?;
        }
        std::fs::copy(&source, &target).map_err(|e| {
            Failure::new(
                exit::CANT_CREATE,
                format!(
                    "cannot copy {} to {}: {e}",
                    source.display(),
                    target.display()
                ),
            )
        })?;
    }
    Ok(())
}

/// The nodes and edges of a classified stream.
fn parse(stream: &[u8]) -> Result<Snapshot, Failure> {
    let mut snapshot = Snapshot::default();
    for (n, line) in stream.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        // The stages' own reader of a line, with its fast path for known records.
        let parsed = std::str::from_utf8(line)
            .map_err(|e| format!("not UTF-8 ({e})"))
            .and_then(|text| {
                tg_shared::ndjson::parse_line(n as u64 + 1, text).map_err(|e| e.message)
            });
        let record: Record = match parsed {
            Ok(item) => match item.record {
                Some(record) => record,
                // Record types this build does not know pass through the stages; not ours.
                None => continue,
            },
            Err(_)
                if !line.starts_with(b"{\"type\":\"node\"")
                    && !line.starts_with(b"{\"type\":\"edge\"") =>
            {
                continue
            }
            Err(message) => {
                return Err(Failure::new(
                    exit::DATA,
                    format!("line {} of the classified stream: {message}", n + 1),
                ))
            }
        };
        match record {
            Record::Node(node) => {
                snapshot.nodes.entry(node.id.clone()).or_insert(node);
            }
            Record::Edge(edge) => snapshot.edges.push(edge),
            _ => {}
        }
    }
    Ok(snapshot)
}
