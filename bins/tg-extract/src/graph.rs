//! From facts to records: ids, aggregated edges, and the stream in its fixed order.

use crate::extract::{Extracted, Outcome};
use crate::resolve::{RawEdge, ResolveStats, Resolver, Unit};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use tg_shared::lang::FileFacts;
use tg_shared::record::{
    Diagnostic, Edge, EdgeKind, FileRecord, Node, NodeKind, Record, Resolution,
};

/// Ids of every symbol of one file: `path` for the module, `path::qualname`, and `#k` for the
/// k-th repeat of a qualified name in source order.
pub fn symbol_ids(path: &str, facts: &FileFacts) -> Vec<String> {
    let mut seen: FxHashMap<&str, u32> = FxHashMap::default();
    facts
        .symbols
        .iter()
        .map(|sym| {
            if sym.kind == NodeKind::Module {
                return path.to_string();
            }
            let count = seen.entry(sym.qualname.as_str()).or_insert(0);
            *count += 1;
            if *count == 1 {
                format!("{path}::{}", sym.qualname)
            } else {
                format!("{path}::{}#{}", sym.qualname, count)
            }
        })
        .collect()
}

/// What the stream holds, in output order, with the counts the summary reports.
pub struct Graph {
    pub records: Vec<Record>,
    pub nodes: u64,
    pub edges_by_kind: BTreeMap<EdgeKind, u64>,
    pub diagnostics: u64,
    pub stats: ResolveStats,
}

pub fn build(extracted: &[Extracted], mut diagnostics: Vec<Diagnostic>) -> Graph {
    let mut units = Vec::new();
    let mut records = Vec::new();
    for item in extracted {
        diagnostics.extend(item.diagnostics.iter().cloned());
        if let Outcome::Ready { entry, .. } = &item.outcome {
            units.push(Unit {
                path: &item.rel,
                lang: item.lang,
                facts: &entry.facts,
            });
            records.push(FileRecord {
                path: item.rel.clone(),
                lang: item.lang.id().to_string(),
                hash: entry.hash.clone(),
                bytes: entry.bytes,
                lines: entry.lines,
            });
        }
    }
    let ids: Vec<Vec<String>> = units.iter().map(|u| symbol_ids(u.path, u.facts)).collect();
    let resolver = Resolver::new(&units);
    let (raw, stats) = resolver.edges();
    let edges = aggregate(&raw, &ids);

    let mut out = Vec::with_capacity(raw.len() + ids.iter().map(Vec::len).sum::<usize>());
    let mut nodes = 0;
    for ((record, unit), ids) in records.into_iter().zip(&units).zip(&ids) {
        out.push(Record::File(record));
        for (sym, id) in unit.facts.symbols.iter().zip(ids) {
            nodes += 1;
            out.push(Record::Node(Node {
                id: id.clone(),
                kind: sym.kind,
                name: sym.name.clone(),
                file: unit.path.to_string(),
                line_start: sym.line_start,
                line_end: sym.line_end,
                parent: sym.parent.map(|p| ids[p as usize].clone()),
                signature: sym.signature.clone(),
                doc: sym.doc.clone(),
                hash: sym.hash.clone(),
                layer: None,
                intent: None,
                intent_hash: None,
            }));
        }
    }
    let mut edges_by_kind = BTreeMap::new();
    for edge in edges {
        *edges_by_kind.entry(edge.kind).or_insert(0) += 1;
        out.push(Record::Edge(edge));
    }
    diagnostics.sort_by(|a, b| {
        (&a.file, a.line, &a.code, &a.message).cmp(&(&b.file, b.line, &b.code, &b.message))
    });
    let diagnostic_count = diagnostics.len() as u64;
    out.extend(diagnostics.into_iter().map(Record::Diagnostic));
    Graph {
        records: out,
        nodes,
        edges_by_kind,
        diagnostics: diagnostic_count,
        stats,
    }
}

/// One edge per (src, kind, dst): first line, number of sites, most certain resolution.
fn aggregate(raw: &[RawEdge], ids: &[Vec<String>]) -> Vec<Edge> {
    let id = |(f, i): (u32, u32)| ids[f as usize][i as usize].as_str();
    let mut keyed: Vec<(&str, EdgeKind, &str, &RawEdge)> = raw
        .iter()
        .map(|e| (id(e.src), e.kind, id(e.dst), e))
        .collect();
    keyed.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    let mut edges: Vec<Edge> = Vec::new();
    let mut last: Option<(&str, EdgeKind, &str)> = None;
    for (src, kind, dst, raw) in keyed {
        if last == Some((src, kind, dst)) {
            if let Some(edge) = edges.last_mut() {
                edge.line = edge.line.min(raw.line);
                edge.count += 1;
                edge.resolution = edge.resolution.min(raw.resolution);
                edge.confidence = edge.resolution.map(Resolution::confidence);
            }
            continue;
        }
        last = Some((src, kind, dst));
        edges.push(Edge {
            kind,
            src: src.to_string(),
            dst: dst.to_string(),
            line: raw.line,
            count: 1,
            resolution: raw.resolution,
            confidence: raw.resolution.map(Resolution::confidence),
            cross_layer: None,
            violation: None,
        });
    }
    edges
}
