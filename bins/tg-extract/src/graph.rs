//! From facts to records: ids, aggregated edges, and the stream in its fixed order.

use crate::extract::{Extracted, Outcome};
use crate::resolve::{RawEdge, ResolveStats, Resolver, Unit};
use std::collections::{BTreeMap, HashMap};
use tg_shared::lang::FileFacts;
use tg_shared::record::{Diagnostic, Edge, EdgeKind, FileRecord, Node, NodeKind, Resolution};

/// Ids of every symbol of one file: `path` for the module, `path::qualname`, and `#k` for the
/// k-th repeat of a qualified name in source order.
pub fn symbol_ids(path: &str, facts: &FileFacts) -> Vec<String> {
    let mut seen: HashMap<&str, u32> = HashMap::new();
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

/// What the stream holds, in output order.
pub struct Graph {
    pub files: Vec<(FileRecord, Vec<Node>)>,
    pub edges: Vec<Edge>,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: ResolveStats,
}

pub fn build(extracted: &[Extracted], mut diagnostics: Vec<Diagnostic>) -> Graph {
    let mut units = Vec::new();
    let mut records = Vec::new();
    for item in extracted {
        diagnostics.extend(item.diagnostics.iter().cloned());
        if let Outcome::Ready {
            hash,
            bytes,
            lines,
            facts,
            ..
        } = &item.outcome
        {
            units.push(Unit {
                path: &item.rel,
                lang: item.lang,
                facts,
            });
            records.push(FileRecord {
                path: item.rel.clone(),
                lang: item.lang.id().to_string(),
                hash: hash.clone(),
                bytes: *bytes,
                lines: *lines,
            });
        }
    }
    let ids: Vec<Vec<String>> = units.iter().map(|u| symbol_ids(u.path, u.facts)).collect();
    let resolver = Resolver::new(&units);
    let mut stats = ResolveStats::default();
    let raw = resolver.edges(&mut stats);
    let edges = aggregate(&raw, &ids);

    let files = records
        .into_iter()
        .zip(&units)
        .zip(&ids)
        .map(|((record, unit), ids)| {
            let nodes = unit
                .facts
                .symbols
                .iter()
                .zip(ids)
                .map(|(sym, id)| Node {
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
                })
                .collect();
            (record, nodes)
        })
        .collect();
    diagnostics.sort_by(|a, b| {
        (&a.file, a.line, &a.code, &a.message).cmp(&(&b.file, b.line, &b.code, &b.message))
    });
    Graph {
        files,
        edges,
        diagnostics,
        stats,
    }
}

/// One edge per (src, kind, dst): first line, number of sites, most certain resolution.
fn aggregate(raw: &[RawEdge], ids: &[Vec<String>]) -> Vec<Edge> {
    struct Acc {
        line: u32,
        count: u32,
        resolution: Option<Resolution>,
    }
    let mut acc: BTreeMap<(&str, EdgeKind, &str), Acc> = BTreeMap::new();
    for edge in raw {
        let src = ids[edge.src.0 as usize][edge.src.1 as usize].as_str();
        let dst = ids[edge.dst.0 as usize][edge.dst.1 as usize].as_str();
        acc.entry((src, edge.kind, dst))
            .and_modify(|a| {
                a.line = a.line.min(edge.line);
                a.count += 1;
                a.resolution = a.resolution.min(edge.resolution);
            })
            .or_insert(Acc {
                line: edge.line,
                count: 1,
                resolution: edge.resolution,
            });
    }
    acc.into_iter()
        .map(|((src, kind, dst), a)| Edge {
            kind,
            src: src.to_string(),
            dst: dst.to_string(),
            line: a.line,
            count: a.count,
            resolution: a.resolution,
            confidence: a.resolution.map(Resolution::confidence),
            cross_layer: None,
            violation: None,
        })
        .collect()
}
