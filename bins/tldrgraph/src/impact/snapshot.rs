//! The graph of one state of the repository (a commit, the index, the working tree), made the
//! way `init` makes it: `tg-extract | tg-classify` on that tree, judged by today's layers
//! config. A tree other than the working tree is written to a temporary directory with the
//! repository's extraction cache beside it, so only the files that differ are parsed.
//!
//! A snapshot keeps of the graph only what impact and check read, read as the stream goes by:
//! each symbol's facts, the call and inheritance edges reversed, and the violating edges. On
//! the Linux kernel that is a few hundred megabytes where the records would take gigabytes.

use crate::interner::Interner;
use crate::pipeline::Stage;
use std::io::Read;
use std::path::{Path, PathBuf};
use tg_shared::artifacts;
use tg_shared::exit;
use tg_shared::ndjson::{read_line_bounded, BoundedLine, MAX_LINE_BYTES};
use tg_shared::record::{Edge, EdgeKind, Node, NodeKind, Record, Role};
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// No layer, no parent.
const NONE: u32 = u32::MAX;

/// What a snapshot keeps of a node.
#[derive(Debug)]
struct Symbol {
    kind: NodeKind,
    role: Role,
    /// A test its runner collects by an attribute (Rust `#[test]`).
    test_case: bool,
    layer: u32,
    file: u32,
    line_start: u32,
    line_end: u32,
    /// Where the text its hash covers begins: `line_start`, or above it (decorators).
    text_start: u32,
    parent: u32,
    /// The node's `hash`, as a digest: only compared for equality.
    hash: u64,
    name: Box<str>,
    signature: Option<Box<str>>,
}

/// Symbols by id, who calls (or inherits from) each, and the edges that break the layering.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Every id seen, as a node or an edge's end.
    ids: Interner,
    /// By id number: the node, when the id is one (the first node of an id wins).
    symbols: Vec<Option<Symbol>>,
    file_names: Interner,
    layer_names: Interner,
    /// Call and inheritance edges as (target, source, confidence), by target; within a
    /// target, in the order read.
    reverse: Vec<(u32, u32, f64)>,
    /// Where each target's run starts in `reverse`, by id number (one past the last id
    /// closes the last run).
    reverse_start: Vec<u32>,
    /// The edges tg-classify marked as violations.
    pub violations: Vec<Edge>,
    /// Where the tree's files can be read, when they can (not for a past build).
    pub files: Option<PathBuf>,
    /// The exported tree, removed when the snapshot goes.
    _exported: Option<tempfile::TempDir>,
}

/// One symbol of a snapshot.
#[derive(Clone, Copy)]
pub struct Sym<'s> {
    snapshot: &'s Snapshot,
    number: u32,
    symbol: &'s Symbol,
}

impl<'s> Sym<'s> {
    pub fn id(&self) -> &'s str {
        self.snapshot.ids.text(self.number)
    }
    pub fn kind(&self) -> NodeKind {
        self.symbol.kind
    }
    pub fn role(&self) -> Role {
        self.symbol.role
    }
    /// Marked as a test its runner collects (Rust `#[test]`).
    pub fn test_case(&self) -> bool {
        self.symbol.test_case
    }
    pub fn layer(&self) -> Option<&'s str> {
        (self.symbol.layer != NONE).then(|| self.snapshot.layer_names.text(self.symbol.layer))
    }
    pub fn file(&self) -> &'s str {
        self.snapshot.file_names.text(self.symbol.file)
    }
    pub fn line_start(&self) -> u32 {
        self.symbol.line_start
    }
    pub fn line_end(&self) -> u32 {
        self.symbol.line_end
    }
    /// The first line of the text the symbol's hash covers (its decorators, if any).
    pub fn text_start(&self) -> u32 {
        self.symbol.text_start
    }
    pub fn parent(&self) -> Option<&'s str> {
        (self.symbol.parent != NONE).then(|| self.snapshot.ids.text(self.symbol.parent))
    }
    /// A digest of the node's hash: equal for the same source text.
    pub fn hash(&self) -> u64 {
        self.symbol.hash
    }
    pub fn name(&self) -> &'s str {
        &self.symbol.name
    }
    pub fn signature(&self) -> Option<&'s str> {
        self.symbol.signature.as_deref()
    }
}

/// A 64-bit digest of a node's hash (a blake3 hex string): two snapshots' symbols are only
/// compared for equality, and a collision among the symbols of one id is 2^-64 likely.
fn digest(hash: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hash.hash(&mut hasher);
    hasher.finish()
}

impl Snapshot {
    /// The symbol `id`, when the snapshot has it.
    pub fn get(&self, id: &str) -> Option<Sym<'_>> {
        self.sym(self.ids.number(id)?)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    fn sym(&self, number: u32) -> Option<Sym<'_>> {
        let symbol = self.symbols.get(number as usize)?.as_ref()?;
        Some(Sym {
            snapshot: self,
            number,
            symbol,
        })
    }

    /// Every symbol, in no particular order.
    pub fn symbols(&self) -> impl Iterator<Item = Sym<'_>> {
        (0..self.symbols.len() as u32).filter_map(|number| self.sym(number))
    }

    /// Who calls or inherits from `id` (itself aside), each with the edge's confidence, sorted
    /// by the caller's id (a caller with two edges comes twice, in the order read).
    pub fn callers(&self, id: &str) -> Vec<(&str, f64)> {
        let Some(number) = self.ids.number(id) else {
            return Vec::new();
        };
        let start = self.reverse_start[number as usize] as usize;
        let end = self.reverse_start[number as usize + 1] as usize;
        let mut callers: Vec<(&str, f64)> = self.reverse[start..end]
            .iter()
            .map(|&(_, src, confidence)| (self.ids.text(src), confidence))
            .collect();
        callers.sort_by(|a, b| a.0.cmp(b.0));
        callers
    }

    /// The text of `symbol` (its lines) without the symbols defined inside it (their decorators
    /// included, as their hashes include them) and without blank lines: what is its own (a
    /// member that grows, is added, goes or gets another decorator leaves it as it was); `None`
    /// when the file cannot be read.
    pub fn own_text(&self, symbol: Sym<'_>) -> Option<String> {
        let text = std::fs::read_to_string(self.files.as_ref()?.join(symbol.file())).ok()?;
        let (start, end) = (
            symbol.text_start().max(1) as usize,
            symbol.line_end() as usize,
        );
        let inner: Vec<(usize, usize)> = self
            .symbols()
            .filter(|s| s.symbol.parent == symbol.number)
            .map(|s| (s.text_start() as usize, s.line_end() as usize))
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

/// A snapshot being read, record by record.
#[derive(Default)]
pub struct Builder {
    snapshot: Snapshot,
}

impl Builder {
    pub fn add(&mut self, record: Record) {
        match record {
            Record::Node(node) => self.node(node),
            Record::Edge(edge) => self.edge(edge),
            _ => {}
        }
    }

    fn id(&mut self, id: &str) -> u32 {
        let number = self.snapshot.ids.intern(id);
        if number as usize == self.snapshot.symbols.len() {
            self.snapshot.symbols.push(None);
        }
        number
    }

    fn node(&mut self, node: Node) {
        let number = self.id(&node.id);
        if self.snapshot.symbols[number as usize].is_some() {
            return;
        }
        let parent = node.parent.as_deref().map_or(NONE, |p| self.id(p));
        let snapshot = &mut self.snapshot;
        snapshot.symbols[number as usize] = Some(Symbol {
            kind: node.kind,
            role: node.role,
            test_case: node.test_case,
            layer: node
                .layer
                .as_deref()
                .map_or(NONE, |l| snapshot.layer_names.intern(l)),
            file: snapshot.file_names.intern(&node.file),
            line_start: node.line_start,
            line_end: node.line_end,
            text_start: node
                .text_start
                .map_or(node.line_start, |l| l.min(node.line_start)),
            parent,
            hash: digest(&node.hash),
            name: node.name.into_boxed_str(),
            signature: node.signature.map(String::into_boxed_str),
        });
    }

    fn edge(&mut self, edge: Edge) {
        if edge.violation == Some(true) {
            self.snapshot.violations.push(edge.clone());
        }
        if matches!(edge.kind, EdgeKind::Calls | EdgeKind::Inherits) && edge.src != edge.dst {
            let (src, dst) = (self.id(&edge.src), self.id(&edge.dst));
            let confidence = edge.confidence.unwrap_or(1.0);
            self.snapshot.reverse.push((dst, src, confidence));
        }
    }

    pub fn finish(mut self) -> Snapshot {
        let snapshot = &mut self.snapshot;
        // Stable: each target's callers stay in the order read.
        snapshot.reverse.sort_by_key(|&(dst, _, _)| dst);
        let ids = snapshot.symbols.len();
        let mut start = vec![0u32; ids + 1];
        for &(dst, _, _) in &snapshot.reverse {
            start[dst as usize + 1] += 1;
        }
        for i in 0..ids {
            start[i + 1] += start[i];
        }
        snapshot.reverse_start = start;
        snapshot.reverse.shrink_to_fit();
        snapshot.symbols.shrink_to_fit();
        self.snapshot
    }
}

impl Snapshot {
    /// The last build's graph, read as it streams by.
    pub fn of_last_build(store: &Store) -> Result<Snapshot, Failure> {
        let mut builder = Builder::default();
        artifacts::graph::for_each_record(store, |record| {
            builder.add(record);
            Ok(())
        })?;
        Ok(builder.finish())
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
    let mut read = Err(Failure::new(exit::SOFTWARE, "the stages printed nothing"));
    crate::run_stages_into(&stages, false, false, &mut |out| read = parse(out))
        .map_err(|(failure, _)| failure)?;
    let mut snapshot = read?;
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

/// The snapshot of a classified stream, read as it comes. A line of a record type this build
/// does not know is not ours; a node or edge that cannot be read is bad data.
fn parse(stream: &mut dyn Read) -> Result<Snapshot, Failure> {
    let mut builder = Builder::default();
    let mut lines = std::io::BufReader::with_capacity(1 << 20, stream);
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        let read = read_line_bounded(&mut lines, &mut line, MAX_LINE_BYTES).map_err(|e| {
            Failure::new(exit::IO, format!("cannot read the classified stream: {e}"))
        })?;
        number += 1;
        let text = line.as_slice();
        match read {
            BoundedLine::End => break,
            BoundedLine::Line if text.is_empty() => continue,
            BoundedLine::Line => {}
            BoundedLine::TooLong => {
                let _ = std::io::copy(&mut lines, &mut std::io::sink());
                return Err(Failure::new(
                    exit::DATA,
                    format!("line {number} of the classified stream: longer than any record"),
                ));
            }
        }
        // The stages' own reader of a line, with its fast path for known records.
        let parsed = std::str::from_utf8(text)
            .map_err(|e| format!("not UTF-8 ({e})"))
            .and_then(|text| tg_shared::ndjson::parse_line(number, text).map_err(|e| e.message));
        match parsed {
            Ok(item) => {
                if let Some(record) = item.record {
                    builder.add(record);
                }
            }
            Err(_)
                if !text.starts_with(b"{\"type\":\"node\"")
                    && !text.starts_with(b"{\"type\":\"edge\"") => {}
            Err(message) => {
                // Read to the end, so that the stages finish and a failure of theirs is told.
                let _ = std::io::copy(&mut lines, &mut std::io::sink());
                return Err(Failure::new(
                    exit::DATA,
                    format!("line {number} of the classified stream: {message}"),
                ));
            }
        }
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str) -> Record {
        tg_shared::ndjson::parse_line(1, line)
            .expect("record")
            .record
            .expect("known")
    }

    fn node(id: &str, file: &str, hash: &str) -> Record {
        record(&format!(
            r#"{{"type":"node","id":"{id}","kind":"function","name":"n","file":"{file}","line_start":1,"line_end":2,"hash":"{hash}","layer":"core"}}"#
        ))
    }

    fn edge(kind: &str, src: &str, dst: &str, confidence: f64) -> Record {
        record(&format!(
            r#"{{"type":"edge","kind":"{kind}","src":"{src}","dst":"{dst}","line":1,"confidence":{confidence}}}"#
        ))
    }

    #[test]
    fn callers_are_the_call_and_inheritance_edges_reversed_sorted_by_caller() {
        let mut builder = Builder::default();
        // Edges may come before the nodes they join.
        builder.add(edge("calls", "z.c::z", "a.c::f", 0.5));
        builder.add(edge("calls", "b.c::b", "a.c::f", 0.9));
        builder.add(edge("imports", "c.c::c", "a.c::f", 1.0));
        builder.add(edge("calls", "a.c::f", "a.c::f", 1.0));
        builder.add(edge("inherits", "b.c::b", "a.c::f", 0.7));
        builder.add(node("a.c::f", "a.c", "00"));
        builder.add(node("a.c::f", "other.c", "11"));
        let snapshot = builder.finish();
        assert_eq!(
            snapshot.callers("a.c::f"),
            [("b.c::b", 0.9), ("b.c::b", 0.7), ("z.c::z", 0.5)]
        );
        assert!(snapshot.callers("z.c::z").is_empty());
        assert!(snapshot.callers("nowhere").is_empty());
        // The first node of an id wins; an edge's end is no symbol.
        let f = snapshot.get("a.c::f").expect("a.c::f");
        assert_eq!((f.file(), f.layer()), ("a.c", Some("core")));
        assert!(snapshot.get("z.c::z").is_none());
        assert_eq!(snapshot.symbols().count(), 1);
    }

    #[test]
    fn a_node_or_edge_that_cannot_be_read_is_bad_data_and_other_types_are_not_ours() {
        let good = "{\"type\":\"future\",\"x\":1}\n\n{\"type\":\"node\",\"id\":\"a\",\"kind\":\"function\",\"name\":\"a\",\"file\":\"a.c\",\"line_start\":1,\"line_end\":1,\"hash\":\"0\"}\n";
        let snapshot = parse(&mut good.as_bytes()).expect("parsed");
        assert!(snapshot.contains("a"));
        let bad = "{\"type\":\"edge\",\"kind\":\"calls\"}\n";
        let failure = parse(&mut bad.as_bytes()).expect_err("bad edge");
        assert_eq!(failure.code, exit::DATA);
        assert!(failure
            .message
            .starts_with("line 1 of the classified stream"));
    }
}
