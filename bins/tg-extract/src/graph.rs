//! From facts to records: ids, aggregated edges, and the stream in its fixed order.

use crate::extract::{Extracted, Outcome};
use crate::resolve::{PackageAlias, RawEdge, ResolveStats, Resolver, Sym, Unit};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::{self, Write};
use tg_lang::walk::SourceFile;
use tg_shared::ndjson::RecordWriter;
use tg_shared::record::{Diagnostic, Edge, EdgeKind, FileRecord, Node, Record, Resolution};

/// The graph, ready to be written: records are made one at a time while writing, so memory
/// holds the facts and the (index-based) edges, never the whole stream.
pub struct Graph<'a> {
    units: Vec<Unit<'a>>,
    /// Per file: another declares it a test module ([`Resolver::test_modules`]).
    test_modules: Vec<bool>,
    files: Vec<FileRecord>,
    ids: Vec<FileIds>,
    /// Each file's edges (their sources are its symbols), aggregated and sorted by ids.
    edges: Vec<Vec<Aggregated>>,
    /// The stream's edge order: the runs of each file's edges that share a source, sorted by
    /// that source's id (a source's edges are all in its own file's list).
    runs: Vec<Run>,
    diagnostics: Vec<Diagnostic>,
    pub nodes: u64,
    /// The edges this graph resolved, by kind.
    pub edges_by_kind: BTreeMap<EdgeKind, u64>,
    /// Each file's resolution counters (zero for a file not resolved).
    pub file_stats: Vec<ResolveStats>,
    /// Which files were resolved: all, or those [`Resolve::Only`] named.
    pub resolved: Vec<bool>,
}

/// Which files [`build`] resolves.
#[derive(Clone, PartialEq, Eq)]
pub enum Resolve {
    All,
    /// Only these (by the index of the extracted file): the files parsed over an older entry
    /// ([`crate::extract::Replaced`]) and those that mention what such a file appended; the
    /// others' edges are the previous output's ([`crate::splice`]).
    Only(Vec<bool>),
}

/// Files serialised per parallel batch, and edges by runs per parallel chunk: bounded memory.
const WRITE_BATCH_FILES: usize = 256;
const WRITE_BATCH_RUNS: usize = 2048;

/// A file's symbol ids in one buffer: a String each cost twice the text (the kernel has a
/// million ids).
struct FileIds {
    text: String,
    /// Where each id ends in `text`.
    ends: Vec<usize>,
}

impl FileIds {
    fn new(ids: Vec<String>) -> Self {
        let mut text = String::with_capacity(ids.iter().map(String::len).sum());
        let mut ends = Vec::with_capacity(ids.len());
        for id in ids {
            text.push_str(&id);
            ends.push(text.len());
        }
        FileIds { text, ends }
    }

    /// The id of symbol `i`.
    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// The edges of one source: `edges[file][start..end]`.
#[derive(Clone, Copy)]
struct Run {
    file: u32,
    start: u32,
    end: u32,
}

/// Where an edge stands in the stream: edges are sorted by (src, kind, dst).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct EdgeKey {
    pub src: String,
    pub kind: EdgeKind,
    pub dst: String,
}

/// One relation after aggregation, by symbol index.
struct Aggregated {
    kind: EdgeKind,
    src: Sym,
    dst: Sym,
    line: u32,
    count: u32,
    resolution: Option<Resolution>,
}

pub fn build<'a>(
    extracted: &'a [Extracted],
    aliases: &[PackageAlias],
    mut diagnostics: Vec<Diagnostic>,
    resolve: Resolve,
) -> Graph<'a> {
    let mut units = Vec::new();
    let mut files = Vec::new();
    let mut resolved = Vec::new();
    for (i, item) in extracted.iter().enumerate() {
        diagnostics.extend(item.diagnostics.iter().cloned());
        if let Outcome::Ready { entry, .. } = &item.outcome {
            resolved.push(match &resolve {
                Resolve::All => true,
                Resolve::Only(these) => these[i],
            });
            units.push(Unit {
                path: &item.rel,
                lang: item.lang,
                facts: &entry.facts,
            });
            files.push(FileRecord {
                path: item.rel.clone(),
                lang: item.lang.id().to_string(),
                hash: entry.hash.clone(),
                bytes: entry.bytes,
                lines: entry.lines,
            });
        }
    }
    let ids: Vec<FileIds> = units
        .par_iter()
        .map(|u| FileIds::new(u.facts.symbol_ids(u.path)))
        .collect();
    let resolver = Resolver::with_aliases(&units, aliases);
    let test_modules = resolver.test_modules().to_vec();
    let (edges, file_stats): (Vec<_>, Vec<_>) = resolver
        .edges_by_file(|f| resolved[f as usize], |raw| aggregate(raw, &ids))
        .into_iter()
        .unzip();
    let runs = runs_in_stream_order(&edges, &ids);
    let mut edges_by_kind = BTreeMap::new();
    for edge in edges.iter().flatten() {
        *edges_by_kind.entry(edge.kind).or_insert(0) += 1;
    }
    diagnostics.sort_by(|a, b| {
        (&a.file, a.line, &a.code, &a.message).cmp(&(&b.file, b.line, &b.code, &b.message))
    });
    let nodes = ids.iter().map(|i| i.ends.len() as u64).sum();
    Graph {
        units,
        test_modules,
        files,
        ids,
        edges,
        runs,
        diagnostics,
        nodes,
        edges_by_kind,
        file_stats,
        resolved,
    }
}

impl Graph<'_> {
    pub fn diagnostics(&self) -> u64 {
        self.diagnostics.len() as u64
    }

    /// Writes files with their nodes, then edges, then diagnostics (no header or summary).
    /// Records are serialised in parallel, a bounded batch at a time, and written in order.
    pub fn write<W: Write>(&self, writer: &mut RecordWriter<W>) -> io::Result<()> {
        let files: Vec<usize> = (0..self.files.len()).collect();
        for batch in files.chunks(WRITE_BATCH_FILES) {
            let buffers: Vec<io::Result<Vec<u8>>> =
                batch.par_iter().map(|&f| self.file_lines(f)).collect();
            for buffer in buffers {
                writer.write_bytes(&buffer?)?;
            }
        }
        for batch in self
            .runs
            .chunks(WRITE_BATCH_RUNS * rayon::current_num_threads())
        {
            let buffers: Vec<io::Result<Vec<u8>>> = batch
                .par_chunks(WRITE_BATCH_RUNS)
                .map(|runs| self.edge_lines(runs))
                .collect();
            for buffer in buffers {
                writer.write_bytes(&buffer?)?;
            }
        }
        self.write_diagnostics(writer)
    }

    pub fn write_diagnostics<W: Write>(&self, writer: &mut RecordWriter<W>) -> io::Result<()> {
        for diagnostic in &self.diagnostics {
            writer.write(&Record::Diagnostic(diagnostic.clone()))?;
        }
        Ok(())
    }

    /// The `file` record and the nodes of file `f` (in [`Self::files`]), as NDJSON lines.
    pub fn file_lines(&self, f: usize) -> io::Result<Vec<u8>> {
        let (unit, ids) = (&self.units[f], &self.ids[f]);
        let mut out = RecordWriter::new(Vec::with_capacity(256 * ids.ends.len()));
        out.write(&Record::File(self.files[f].clone()))?;
        for (i, sym) in unit.facts.symbols.iter().enumerate() {
            out.write(&Record::Node(Node {
                id: ids.get(i as u32).to_string(),
                kind: sym.kind,
                name: sym.name.clone(),
                file: unit.path.to_string(),
                line_start: sym.line_start,
                line_end: sym.line_end,
                text_start: sym.text_start,
                parent: sym.parent.map(|p| ids.get(p).to_string()),
                signature: sym.signature.clone(),
                doc: sym.doc.clone(),
                hash: sym.hash.hex(),
                role: unit
                    .facts
                    .role(unit.lang, unit.path, i, self.test_modules[f]),
                implements: sym.implements.clone(),
                stub: sym.stub,
                getter: sym.getter,
                test_case: sym.test_case,
                layer: None,
                intent: None,
                intent_hash: None,
                intent_source: None,
            }))?;
        }
        Ok(out.into_inner())
    }

    fn edge_lines(&self, runs: &[Run]) -> io::Result<Vec<u8>> {
        let count: usize = runs.iter().map(|run| (run.end - run.start) as usize).sum();
        let mut out = RecordWriter::new(Vec::with_capacity(160 * count));
        for edge in self.run_edges(runs) {
            out.write(&self.edge_record(edge))?;
        }
        Ok(out.into_inner())
    }

    fn run_edges<'r>(&'r self, runs: &'r [Run]) -> impl Iterator<Item = &'r Aggregated> + 'r {
        runs.iter()
            .flat_map(|run| &self.edges[run.file as usize][run.start as usize..run.end as usize])
    }

    fn edge_record(&self, edge: &Aggregated) -> Record {
        Record::Edge(Edge {
            kind: edge.kind,
            src: self.id(edge.src).to_string(),
            dst: self.id(edge.dst).to_string(),
            line: edge.line,
            count: edge.count,
            resolution: edge.resolution,
            confidence: edge.resolution.map(Resolution::confidence),
            cross_layer: None,
            violation: None,
        })
    }

    /// The edges this graph resolved, in stream order, each with its key and its line.
    pub fn resolved_edges(&self) -> io::Result<Vec<(EdgeKey, Vec<u8>)>> {
        self.run_edges(&self.runs)
            .map(|edge| {
                let key = EdgeKey {
                    src: self.id(edge.src).to_string(),
                    kind: edge.kind,
                    dst: self.id(edge.dst).to_string(),
                };
                let mut line = RecordWriter::new(Vec::with_capacity(160));
                line.write(&self.edge_record(edge))?;
                Ok((key, line.into_inner()))
            })
            .collect()
    }

    /// The files' records, in stream order.
    /// The ids of file `f`'s symbols.
    pub fn file_ids(&self, f: usize) -> impl Iterator<Item = &str> {
        let ids = &self.ids[f];
        (0..ids.ends.len() as u32).map(move |i| ids.get(i))
    }

    pub fn files(&self) -> &[FileRecord] {
        &self.files
    }

    fn id(&self, (f, i): Sym) -> &str {
        self.ids[f as usize].get(i)
    }
}

/// One edge per (src, kind, dst), sorted by those ids: first line, number of sites, most
/// certain resolution. Called on one file's edges: equal (src, kind, dst) share a file.
fn aggregate(mut raw: Vec<RawEdge>, ids: &[FileIds]) -> Vec<Aggregated> {
    let id = |(f, i): Sym| ids[f as usize].get(i);
    raw.sort_unstable_by(|a, b| {
        (id(a.src), a.kind, id(a.dst), a.line).cmp(&(id(b.src), b.kind, id(b.dst), b.line))
    });
    let mut edges: Vec<Aggregated> = Vec::new();
    for raw in raw {
        if let Some(last) = edges.last_mut() {
            if (last.src, last.kind, last.dst) == (raw.src, raw.kind, raw.dst) {
                last.count += 1;
                last.resolution = last.resolution.min(raw.resolution);
                continue;
            }
        }
        edges.push(Aggregated {
            kind: raw.kind,
            src: raw.src,
            dst: raw.dst,
            line: raw.line,
            count: 1,
            resolution: raw.resolution,
        });
    }
    edges.shrink_to_fit();
    edges
}

/// The runs of equal sources in each file's sorted edges, in the order of the sources' ids:
/// with each file's edges sorted, this is the order of a sort of all edges by (src, kind,
/// dst) ids. A source has one run, so no two runs compare equal.
fn runs_in_stream_order(edges: &[Vec<Aggregated>], ids: &[FileIds]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (file, list) in edges.iter().enumerate() {
        let mut start = 0;
        while start < list.len() {
            let src = list[start].src;
            let end = start + list[start..].partition_point(|e| e.src == src);
            runs.push(Run {
                file: file as u32,
                start: start as u32,
                end: end as u32,
            });
            start = end;
        }
    }
    let source_id = |run: &Run| {
        let (f, i) = edges[run.file as usize][run.start as usize].src;
        ids[f as usize].get(i)
    };
    runs.par_sort_unstable_by(|a, b| source_id(a).cmp(source_id(b)));
    runs
}

/// The other packages of the repository by the names code uses for them, read from their
/// manifests (Rust: `tg_shared` for `shared/Cargo.toml`; TypeScript: a package.json `name`, a
/// tsconfig's `paths`, and the manifests those extend). Sorted, so the output is stable.
pub fn package_aliases(root: &std::path::Path, files: &[SourceFile]) -> Vec<PackageAlias> {
    let mut packages = std::collections::BTreeMap::new();
    for file in files {
        if let Some(package) = file.lang.package(&file.rel) {
            packages
                .entry((file.lang.module_space(), package))
                .or_insert(file.lang);
        }
    }
    let mut aliases = Vec::new();
    for ((space, package), lang) in packages {
        for manifest in lang.manifests(&package) {
            for (path, text) in manifest_chain(root, lang, &manifest) {
                let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
                for (name, root_file) in lang.package_names(&path, &text) {
                    // The package's root module: the manifest's own root file, else the
                    // package key.
                    let root = match root_file {
                        Some(file) => lang
                            .module_keys(
                                &format!("{dir}{}", file.trim_start_matches("./")),
                                &|_| false,
                            )
                            .into_iter()
                            .next(),
                        None => Some(package.clone()),
                    };
                    if let Some(root) = root {
                        aliases.push((space, name, root));
                    }
                }
            }
        }
    }
    aliases.sort();
    aliases.dedup();
    aliases
}

/// How many manifests one may extend, one after another (a tsconfig's `extends`).
const MAX_MANIFEST_CHAIN: usize = 8;

/// A manifest and those it extends, bases first, each with its repo-relative path and text;
/// a missing or unreadable one is left out, and a cycle ends the chain.
fn manifest_chain(
    root: &std::path::Path,
    lang: &dyn tg_lang::Language,
    manifest: &str,
) -> Vec<(String, String)> {
    let mut chain: Vec<(String, String)> = Vec::new();
    let mut pending = vec![manifest.to_string()];
    while let Some(path) = pending.pop() {
        if chain.len() >= MAX_MANIFEST_CHAIN || chain.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&path)) else {
            continue;
        };
        let dir = path.rfind('/').map_or("", |i| &path[..i]);
        for include in lang.manifest_includes(&path, &text) {
            if let Some(joined) = tg_lang::normalize_join(dir, &include) {
                pending.push(joined);
            }
        }
        chain.push((path, text));
    }
    chain.reverse();
    chain
}
