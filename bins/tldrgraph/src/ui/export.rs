//! The one exporter behind the map: the last build's graph.json and plan.json, turned into the
//! compact document the page embeds. Aggregates (layers, their counts by role, the weighted
//! dependencies between layers, the violations) are computed here so the first render draws
//! them at once; symbols and edges are rows (JSON arrays) the page reads only when asked.

use crate::interner::Interner;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use tg_shared::artifacts::plan::PlanFile;
use tg_shared::record::{Edge, EdgeKind, LayerRecord, Node, NodeKind, Record, Role};

/// The id the page gives symbols whose layer is unknown (no layers config yet, or a layer the
/// graph does not list).
pub const UNCLASSIFIED: &str = "(unclassified)";

/// The dependency kinds drawn (containment is the file tree, shown by drill-down instead).
const DEPENDENCY_KINDS: [EdgeKind; 4] = [
    EdgeKind::Calls,
    EdgeKind::Imports,
    EdgeKind::Inherits,
    EdgeKind::Includes,
];

/// Longest signature, doc and intent kept per symbol, in characters: the page shows one line of
/// each; the source has the rest.
const TEXT_LIMIT: usize = 300;

#[derive(Debug, Serialize)]
pub struct MapData {
    /// The repository's directory name.
    pub repo: String,
    /// Why the graph is not current, when it is not (one line), else `None`.
    pub stale: Option<String>,
    pub roles: Vec<&'static str>,
    pub kinds: Vec<&'static str>,
    pub edge_kinds: Vec<&'static str>,
    pub layers: Vec<LayerView>,
    pub files: Vec<String>,
    pub symbols: Vec<SymbolRow>,
    pub edges: Vec<EdgeRow>,
    pub layer_edges: Vec<LayerEdge>,
    /// Indices into `edges` of the layering violations, sorted by file and line.
    pub violations: Vec<u32>,
    /// Bottleneck candidates in the plan, and the plan's budget.
    pub candidates: u32,
    pub candidate_budget: u64,
}

#[derive(Debug, Serialize)]
pub struct LayerView {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub may_depend_on: Option<Vec<String>>,
    pub default: bool,
    /// Symbols (modules included) in the layer, as graph.json's layer record counts them.
    pub symbols: u64,
    /// The same by role, in [`MapData::roles`] order.
    pub by_role: Vec<u64>,
    pub files: u64,
    pub candidates: u64,
    /// Dependency edges with both ends in the layer.
    pub internal_edges: u64,
}

/// `[name, qualname, kind, file, line_start, line_end, layer, role, parent, candidate rank,
/// signature, intent, intent source, doc]`; `parent` is -1 for none, the rank 0 for none, texts
/// empty for none. Kind, role and layer are indices into the lists beside.
#[derive(Debug, Serialize)]
pub struct SymbolRow(
    String,
    String,
    u8,
    u32,
    u32,
    u32,
    u32,
    u8,
    i64,
    u32,
    String,
    String,
    String,
    String,
);

/// `[source, target, kind, confidence in thousandths, line, violation 0/1]`.
#[derive(Debug, Serialize)]
pub struct EdgeRow(u32, u32, u8, u16, u32, u8);

/// The dependencies from one layer on another, by kind (in [`MapData::edge_kinds`] order).
#[derive(Debug, Serialize)]
pub struct LayerEdge {
    pub from: u32,
    pub to: u32,
    pub total: u64,
    pub by_kind: Vec<u64>,
    pub violations: u64,
}

/// The map of the last build's graph, read record by record ([`Exporter::add`], in the
/// document's order: nodes, then edges, layers and files), then finished with the candidates
/// of the plan. Only the rows the page embeds are held, never the graph.
pub struct Exporter {
    ranks: HashMap<String, u32>,
    /// Each node's row, in document order; its file, layer and parent are provisional until
    /// [`Exporter::finish`] (numbers in `files` and `layer_ids`, and `parents`).
    symbols: Vec<SymbolRow>,
    parents: Vec<Option<Box<str>>>,
    /// Node id → row (a repeated id means its last row, as edges and parents see it).
    node_index: HashMap<Box<str>, u32>,
    files: Interner,
    layer_ids: Interner,
    edges: Vec<EdgeRow>,
    layers: Vec<LayerRecord>,
}

/// A layer number for a node without one (mapped to the unclassified layer).
const NO_LAYER: u32 = u32::MAX;

impl Exporter {
    /// An exporter ranking symbols by `plan`'s candidates, when there is a plan.
    pub fn new(plan: Option<&PlanFile>) -> Exporter {
        Exporter {
            ranks: plan
                .map(|p| {
                    p.candidates
                        .iter()
                        .map(|c| (c.id.clone(), c.rank))
                        .collect()
                })
                .unwrap_or_default(),
            symbols: Vec::new(),
            parents: Vec::new(),
            node_index: HashMap::new(),
            files: Interner::default(),
            layer_ids: Interner::default(),
            edges: Vec::new(),
            layers: Vec::new(),
        }
    }

    pub fn add(&mut self, record: Record) {
        match record {
            Record::Node(node) => self.node(node),
            Record::Edge(edge) => self.edge(&edge),
            Record::Layer(layer) => self.layers.push(layer),
            Record::File(file) => {
                self.files.intern(&file.path);
            }
            _ => {}
        }
    }

    fn node(&mut self, node: Node) {
        let row = self.symbols.len() as u32;
        let layer = node
            .layer
            .as_deref()
            .map_or(NO_LAYER, |id| self.layer_ids.intern(id));
        let qualname = qualname(&node.id, &node.file);
        self.symbols.push(SymbolRow(
            node.name,
            qualname,
            kind_index(node.kind),
            self.files.intern(&node.file),
            node.line_start,
            node.line_end,
            layer,
            role_index(node.role),
            -1,
            self.ranks.get(node.id.as_str()).copied().unwrap_or(0),
            cut(node.signature.as_deref()),
            cut(node.intent.as_deref()),
            node.intent_source.unwrap_or_default(),
            cut(node.doc.as_deref()),
        ));
        self.parents.push(node.parent.map(String::into_boxed_str));
        self.node_index.insert(node.id.into_boxed_str(), row);
    }

    /// A dependency edge between known symbols (all nodes come before the edges).
    fn edge(&mut self, e: &Edge) {
        let Some(kind) = DEPENDENCY_KINDS.iter().position(|k| *k == e.kind) else {
            return;
        };
        let (Some(&src), Some(&dst)) = (
            self.node_index.get(e.src.as_str()),
            self.node_index.get(e.dst.as_str()),
        ) else {
            return;
        };
        let confidence = (e.confidence.unwrap_or(1.0).clamp(0.0, 1.0) * 1000.0).round() as u16;
        self.edges.push(EdgeRow(
            src,
            dst,
            kind as u8,
            confidence,
            e.line,
            u8::from(e.violation == Some(true)),
        ));
    }

    /// The map, with the aggregates the page draws first.
    pub fn finish(mut self, repo: &str, plan: Option<&PlanFile>, stale: Option<String>) -> MapData {
        let (mut layers, layer_of_id) = layer_views(&self.layers);
        let files = self.sorted_files();
        let unclassified = layers.len() as u32;
        let layer_of: Vec<Option<u32>> = self
            .layer_ids
            .texts()
            .map(|id| layer_of_id.get(id).copied())
            .collect();
        let mut needs_unclassified = false;
        for (row, parent) in self.symbols.iter_mut().zip(&self.parents) {
            row.6 = match layer_of.get(row.6 as usize).copied().flatten() {
                Some(layer) => layer,
                None => {
                    needs_unclassified = true;
                    unclassified
                }
            };
            row.3 = files.1[row.3 as usize];
            row.8 = parent
                .as_deref()
                .and_then(|p| self.node_index.get(p))
                .map_or(-1, |&p| i64::from(p));
        }
        if needs_unclassified {
            layers.push(LayerView {
                id: UNCLASSIFIED.to_string(),
                name: "Unclassified".to_string(),
                description: Some("Symbols no layer of the config claims".to_string()),
                may_depend_on: None,
                default: false,
                symbols: 0,
                by_role: vec![0; Role::ALL.len()],
                files: 0,
                candidates: 0,
                internal_edges: 0,
            });
        }
        count_symbols(&mut layers, &self.symbols);
        let (layer_edges, violations) = aggregate(&mut layers, &self.symbols, &self.edges);
        MapData {
            repo: repo.to_string(),
            stale,
            roles: Role::ALL.iter().map(|r| r.as_str()).collect(),
            kinds: NodeKind::ALL.iter().map(|k| k.as_str()).collect(),
            edge_kinds: DEPENDENCY_KINDS.iter().map(|k| k.as_str()).collect(),
            layers,
            files: files.0,
            symbols: self.symbols,
            edges: self.edges,
            layer_edges,
            violations,
            candidates: self.ranks.len() as u32,
            candidate_budget: plan.map_or(0, |p| p.budget),
        }
    }

    /// Every file path the graph names (its file records and its nodes' files), sorted, and
    /// each interned number's place in that order.
    fn sorted_files(&self) -> (Vec<String>, Vec<u32>) {
        let mut files: Vec<(&str, u32)> = self.files.texts().zip(0..).collect();
        files.sort_unstable();
        let mut place = vec![0u32; files.len()];
        for (at, &(_, number)) in files.iter().enumerate() {
            place[number as usize] = at as u32;
        }
        let sorted = files
            .into_iter()
            .map(|(file, _)| file.to_string())
            .collect();
        (sorted, place)
    }
}

/// The graph's layers in their configured order, and each layer id's index.
fn layer_views(records: &[LayerRecord]) -> (Vec<LayerView>, HashMap<String, u32>) {
    let mut records: Vec<_> = records.iter().collect();
    records.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.id.cmp(&b.id)));
    let views: Vec<LayerView> = records
        .iter()
        .map(|l| LayerView {
            id: l.id.clone(),
            name: l.name.clone(),
            description: l.description.clone(),
            may_depend_on: l.may_depend_on.clone(),
            default: l.default,
            symbols: 0,
            by_role: vec![0; Role::ALL.len()],
            files: 0,
            candidates: 0,
            internal_edges: 0,
        })
        .collect();
    let index = views
        .iter()
        .enumerate()
        .map(|(i, l)| (l.id.clone(), i as u32))
        .collect();
    (views, index)
}

/// Counts per layer: symbols, by role, files, candidates.
fn count_symbols(layers: &mut [LayerView], symbols: &[SymbolRow]) {
    let mut files_per_layer: Vec<std::collections::BTreeSet<u32>> =
        vec![Default::default(); layers.len()];
    for s in symbols {
        let layer = &mut layers[s.6 as usize];
        layer.symbols += 1;
        layer.by_role[s.7 as usize] += 1;
        if s.9 > 0 {
            layer.candidates += 1;
        }
        files_per_layer[s.6 as usize].insert(s.3);
    }
    for (layer, files) in layers.iter_mut().zip(files_per_layer) {
        layer.files = files.len() as u64;
    }
}

/// The weighted layer-to-layer dependencies (sorted by the layers' order) and the violations
/// (sorted by file and line); counts each layer's internal edges on the way.
fn aggregate(
    layers: &mut [LayerView],
    symbols: &[SymbolRow],
    edges: &[EdgeRow],
) -> (Vec<LayerEdge>, Vec<u32>) {
    let mut between: BTreeMap<(u32, u32), LayerEdge> = BTreeMap::new();
    let mut violations = Vec::new();
    for (i, e) in edges.iter().enumerate() {
        let (from, to) = (symbols[e.0 as usize].6, symbols[e.1 as usize].6);
        if e.5 == 1 {
            violations.push(i as u32);
        }
        if from == to {
            layers[from as usize].internal_edges += 1;
            continue;
        }
        let entry = between.entry((from, to)).or_insert_with(|| LayerEdge {
            from,
            to,
            total: 0,
            by_kind: vec![0; DEPENDENCY_KINDS.len()],
            violations: 0,
        });
        entry.total += 1;
        entry.by_kind[e.2 as usize] += 1;
        entry.violations += u64::from(e.5);
    }
    violations.sort_by_key(|&i| {
        let e = &edges[i as usize];
        let src = &symbols[e.0 as usize];
        (src.3, e.4, e.1)
    });
    (between.into_values().collect(), violations)
}

/// The id's part after `file::` (empty for a module).
fn qualname(id: &str, file: &str) -> String {
    id.strip_prefix(file)
        .and_then(|rest| rest.strip_prefix("::"))
        .unwrap_or(if id == file { "" } else { id })
        .to_string()
}

fn kind_index(kind: NodeKind) -> u8 {
    NodeKind::ALL.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

fn role_index(role: Role) -> u8 {
    Role::ALL.iter().position(|r| *r == role).unwrap_or(0) as u8
}

/// At most [`TEXT_LIMIT`] characters, cut at a character boundary with an ellipsis.
fn cut(text: Option<&str>) -> String {
    let Some(text) = text else {
        return String::new();
    };
    match text.char_indices().nth(TEXT_LIMIT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualnames_drop_the_file() {
        assert_eq!(qualname("pkg/a.py::C.m", "pkg/a.py"), "C.m");
        assert_eq!(qualname("pkg/a.py", "pkg/a.py"), "");
        assert_eq!(qualname("src/x.rs::m::f#2", "src/x.rs"), "m::f#2");
        assert_eq!(qualname("odd", "pkg/a.py"), "odd");
    }

    #[test]
    fn long_texts_are_cut_on_a_character() {
        let long = "é".repeat(TEXT_LIMIT + 5);
        let cut_text = cut(Some(&long));
        assert_eq!(cut_text.chars().count(), TEXT_LIMIT + 1);
        assert!(cut_text.ends_with('…'));
        assert_eq!(cut(Some("short")), "short");
        assert_eq!(cut(None), "");
    }
}
