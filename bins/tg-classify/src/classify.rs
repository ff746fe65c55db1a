//! The stream pass: a layer on every node, cross-layer and violation marks on edges, and the
//! tallies the artifacts are made from.
//!
//! tg-extract writes every node before the edges, so an edge's ends are known when it arrives;
//! an edge whose end was not seen as a node (a foreign stream) passes through unmarked.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tg_shared::layers::{LayerConfig, NodeView};
use tg_shared::record::{Edge, EdgeKind, Node, NodeKind, Resolution, Role};

/// What the artifacts need to know of a node.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeInfo {
    pub id: String,
    pub kind: NodeKind,
    pub file: String,
    pub line_start: u32,
    pub doc: Option<String>,
    pub layer: usize,
    /// The node's role, or its layer's `role:` where the config declares one.
    pub role: Role,
    /// Dependency edges (calls, imports, includes, inherits) in and out.
    pub fan_in: u32,
    pub fan_out: u32,
}

/// A dependency edge from one layer to another that `may_depend_on` forbids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Violation {
    pub src: String,
    pub dst: String,
    pub kind: EdgeKind,
    pub line: u32,
}

/// Everything the pass learned. Every artifact made from it is independent of the order of
/// `nodes` (they are counted, or sorted by id), so a patch may take nodes out and put them in.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tally {
    pub nodes: Vec<NodeInfo>,
    #[serde(skip)]
    index: FxHashMap<String, usize>,
    /// Files of the stream and their line counts.
    pub files: BTreeMap<String, u32>,
    /// Per layer: dependency edges to each other layer.
    pub cross: Vec<BTreeMap<usize, u64>>,
    /// Per layer: its violations (sorted when reported).
    pub violations: Vec<Vec<Violation>>,
    pub cross_layer_edges: u64,
    pub violation_count: u64,
    /// Forbidden dependencies seen only through `ambiguous` edges (not marked as violations).
    pub ambiguous_violation_count: u64,
    /// Layers assigned by the agent, by node id: they win over the config's rules.
    #[serde(skip)]
    pub overrides: FxHashMap<String, usize>,
    /// (source, class, line) of each violating call of a class: the edge to that class's
    /// constructor from the same call is the same dependency, not a second violation. Only
    /// edges of one source read it, and a patch holds all of a source's edges, so it is not
    /// kept between runs.
    #[serde(skip)]
    class_violations: rustc_hash::FxHashSet<(usize, usize, u32)>,
    /// An edge with an end that is not a node of the stream was seen.
    #[serde(skip)]
    dangling: bool,
}

/// Edges that make one symbol depend on another; `contains` is structure, not dependency.
pub fn is_dependency(kind: EdgeKind) -> bool {
    !matches!(kind, EdgeKind::Contains)
}

impl Tally {
    pub fn new(layers: usize) -> Self {
        Tally {
            cross: vec![BTreeMap::new(); layers],
            violations: vec![Vec::new(); layers],
            ..Tally::default()
        }
    }

    /// Nodes per layer.
    pub fn layer_counts(&self, layers: usize) -> Vec<u64> {
        let mut counts = vec![0u64; layers];
        for node in &self.nodes {
            counts[node.layer] += 1;
        }
        counts
    }

    /// Adds a classified node; a repeated id (a foreign stream) keeps its first
    /// classification for edges.
    pub fn push_node(&mut self, info: NodeInfo) {
        if !self.index.contains_key(&info.id) {
            self.index.insert(info.id.clone(), self.nodes.len());
        }
        self.nodes.push(info);
    }

    /// Takes the node `id` out; `None` when there is none.
    pub fn remove_node(&mut self, id: &str) -> Option<NodeInfo> {
        let at = self.index.remove(id)?;
        let removed = self.nodes.swap_remove(at);
        if let Some(moved) = self.nodes.get(at) {
            self.index.insert(moved.id.clone(), at);
        }
        Some(removed)
    }

    /// The node `id`.
    pub fn node(&self, id: &str) -> Option<&NodeInfo> {
        self.index.get(id).map(|&at| &self.nodes[at])
    }

    /// Builds the index of ids after the nodes were loaded; false when an id is repeated
    /// (then nodes cannot be taken out by id).
    pub fn reindex(&mut self) -> bool {
        self.index.clear();
        for (at, node) in self.nodes.iter().enumerate() {
            self.index.insert(node.id.clone(), at);
        }
        self.index.len() == self.nodes.len()
    }

    /// Whether no node id repeats (a foreign stream may repeat one).
    pub fn has_unique_ids(&self) -> bool {
        self.index.len() == self.nodes.len()
    }

    /// Whether an edge reached a node the stream does not hold (then no state is kept: an edge
    /// left unmarked is not remembered, and would stay unmarked when its end arrives).
    pub fn has_dangling_edges(&self) -> bool {
        self.dangling
    }

    /// Forgets which class calls violated the layering: before the edges of a patch's section.
    pub fn forget_class_violations(&mut self) {
        self.class_violations.clear();
    }
}

/// Classifies `node`: what the tally keeps of it and the line to write in place of `raw`.
pub fn classify_node(
    config: &LayerConfig,
    overrides: &FxHashMap<String, usize>,
    node: &Node,
    raw: &str,
) -> (NodeInfo, String) {
    let view = NodeView {
        id: &node.id,
        kind: node.kind,
        name: &node.name,
        file: &node.file,
    };
    let overridden = overrides.get(&node.id).copied();
    let layer = overridden.unwrap_or_else(|| config.classify(&view));
    let role = config.layers[layer].role.unwrap_or(node.role);
    let info = NodeInfo {
        id: node.id.clone(),
        kind: node.kind,
        file: node.file.clone(),
        line_start: node.line_start,
        doc: node.doc.clone(),
        layer,
        role,
        fan_in: 0,
        fan_out: 0,
    };
    let layer_id = Value::String(config.layers[layer].id.clone());
    let raw = if role == node.role {
        std::borrow::Cow::Borrowed(raw)
    } else {
        std::borrow::Cow::Owned(rewrite(
            raw,
            &["role"],
            &[("role", Value::String(role.as_str().to_string()))],
        ))
    };
    let raw = raw.as_ref();
    let line = if overridden.is_some() {
        // Recorded as such, so a reader can tell the agent's choice from the rules'.
        let source = Value::String("agent".into());
        rewrite(
            raw,
            &["layer", "layer_source"],
            &[("layer", layer_id), ("layer_source", source)],
        )
    } else if node.layer.is_none() && !raw.contains("\"layer") {
        append_fields(raw, &[("layer", &layer_id)])
    } else {
        rewrite(raw, &["layer", "layer_source"], &[("layer", layer_id)])
    };
    (info, line)
}

/// Classifies `node`, adds it to the tally and returns the line to write in place of `raw`.
pub fn node_line(config: &LayerConfig, tally: &mut Tally, node: &Node, raw: &str) -> String {
    let (info, line) = classify_node(config, &tally.overrides, node, raw);
    tally.push_node(info);
    line
}

/// What an edge between two known nodes is, by their layers.
#[derive(Debug, Clone, Copy)]
pub struct Marks {
    src: usize,
    dst: usize,
    dependency: bool,
    crossing: bool,
    /// Forbidden by `may_depend_on` (a violation unless the edge is `ambiguous`).
    forbidden: bool,
    violation: bool,
}

/// The marks of `edge`; `None` when an end is not a node of the stream.
pub fn edge_marks(config: &LayerConfig, tally: &mut Tally, edge: &Edge) -> Option<Marks> {
    let (&src, &dst) = (tally.index.get(&edge.src)?, tally.index.get(&edge.dst)?);
    let dependency = is_dependency(edge.kind);
    let (from, to) = (tally.nodes[src].layer, tally.nodes[dst].layer);
    // `contains` is structure: a file's module may hold a class another layer claims.
    let crossing = dependency && from != to;
    let forbidden = crossing && config.layers[from].forbids(&config.layers[to].id);
    // A call of a class also has an edge to its constructor (so traces pass through it): one
    // call, one dependency, one violation (on the class's edge).
    let forbidden = forbidden && !constructor_of_violating_call(tally, src, dst, edge);
    // An `ambiguous` edge may not exist in any build: a possible violation, counted apart.
    let violation = forbidden && edge.resolution != Some(Resolution::Ambiguous);
    if violation && edge.kind == EdgeKind::Calls && tally.nodes[dst].kind == NodeKind::Class {
        tally.class_violations.insert((src, dst, edge.line));
    }
    Some(Marks {
        src,
        dst,
        dependency,
        crossing,
        forbidden,
        violation,
    })
}

/// Counts `edge` with its marks into the tally (`add`), or takes it out of it (a patch's
/// removed edge, marked as the tally was when it was counted).
pub fn count_edge(tally: &mut Tally, edge: &Edge, marks: &Marks, add: bool) {
    let step = |n: &mut u64| *n = if add { *n + 1 } else { n.saturating_sub(1) };
    let step32 = |n: &mut u32| *n = if add { *n + 1 } else { n.saturating_sub(1) };
    if marks.dependency {
        step32(&mut tally.nodes[marks.src].fan_out);
        step32(&mut tally.nodes[marks.dst].fan_in);
    }
    if marks.forbidden && !marks.violation {
        step(&mut tally.ambiguous_violation_count);
    }
    let (from, to) = (tally.nodes[marks.src].layer, tally.nodes[marks.dst].layer);
    if marks.crossing {
        step(&mut tally.cross_layer_edges);
        let cross = &mut tally.cross[from];
        let count = cross.entry(to).or_default();
        step(count);
        if *count == 0 {
            cross.remove(&to);
        }
    }
    if marks.violation {
        step(&mut tally.violation_count);
        let violation = Violation {
            src: edge.src.clone(),
            dst: edge.dst.clone(),
            kind: edge.kind,
            line: edge.line,
        };
        let violations = &mut tally.violations[from];
        if add {
            violations.push(violation);
        } else if let Some(at) = violations.iter().position(|v| *v == violation) {
            violations.swap_remove(at);
        }
    }
}

/// Marks `edge` and returns the line to write in place of `raw`.
pub fn edge_line(config: &LayerConfig, tally: &mut Tally, edge: &Edge, raw: &str) -> String {
    let marks = edge_marks(config, tally, edge);
    match &marks {
        Some(marks) => count_edge(tally, edge, marks, true),
        None => tally.dangling = true,
    }
    marked_line(edge, marks.as_ref(), raw)
}

/// `raw` with `marks` written in (an edge without marks passes through as it came).
pub fn marked_line(edge: &Edge, marks: Option<&Marks>, raw: &str) -> String {
    let Some(marks) = marks else {
        return raw.to_string();
    };
    let marked_before = edge.cross_layer.is_some() || edge.violation.is_some();
    if !marks.crossing && !marked_before {
        return raw.to_string();
    }
    let mut fields = Vec::new();
    if marks.crossing {
        fields.push(("cross_layer", Value::Bool(true)));
    }
    if marks.violation {
        fields.push(("violation", Value::Bool(true)));
    }
    if !marked_before && !raw.contains("\"cross_layer\"") && !raw.contains("\"violation\"") {
        let refs: Vec<(&str, &Value)> = fields.iter().map(|(k, v)| (*k, v)).collect();
        append_fields(raw, &refs)
    } else {
        rewrite(raw, &["cross_layer", "violation"], &fields)
    }
}

/// Whether `edge` (from node `src` to node `dst`) goes to the constructor of a class that the
/// same call, from the same line, already violates the layering by calling. tg-extract writes
/// an edge to the class before the edge to its constructor (ids sort so).
fn constructor_of_violating_call(tally: &Tally, src: usize, dst: usize, edge: &Edge) -> bool {
    let target = &tally.nodes[dst];
    let Some(constructor) = tg_lang::for_path(&target.file).and_then(|l| l.constructor()) else {
        return false;
    };
    let class = target
        .id
        .strip_suffix(constructor)
        .and_then(|id| id.strip_suffix('.'));
    class
        .and_then(|class| tally.index.get(class))
        .is_some_and(|&class| tally.class_violations.contains(&(src, class, edge.line)))
}

/// `raw` (a JSON object the reader already parsed) with `fields` appended before its `}`.
fn append_fields(raw: &str, fields: &[(&str, &Value)]) -> String {
    let body = raw.trim_end();
    let body = body.strip_suffix('}').unwrap_or(body);
    let mut out = String::with_capacity(raw.len() + 32);
    out.push_str(body);
    for (key, value) in fields {
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":");
        out.push_str(&value.to_string());
    }
    out.push('}');
    out
}

/// `raw` with the keys in `remove` dropped and `set` put in (in place where a key already was,
/// else at the end); other fields keep their order and values.
fn rewrite(raw: &str, remove: &[&str], set: &[(&str, Value)]) -> String {
    let Ok(mut map) = serde_json::from_str::<Map<String, Value>>(raw) else {
        return raw.to_string();
    };
    for key in remove {
        if !set.iter().any(|(k, _)| k == key) {
            map.shift_remove(*key);
        }
    }
    for (key, value) in set {
        map.insert((*key).to_string(), value.clone());
    }
    Value::Object(map).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_appended_or_replaced_in_place() {
        let raw = r#"{"type":"edge","kind":"calls","src":"a","dst":"b","line":3}"#;
        assert_eq!(
            append_fields(raw, &[("cross_layer", &Value::Bool(true))]),
            r#"{"type":"edge","kind":"calls","src":"a","dst":"b","line":3,"cross_layer":true}"#
        );
        let marked = r#"{"type":"edge","cross_layer":true,"violation":true,"x":1}"#;
        assert_eq!(
            rewrite(marked, &["cross_layer", "violation"], &[]),
            r#"{"type":"edge","x":1}"#
        );
        assert_eq!(
            rewrite(
                marked,
                &["cross_layer", "violation"],
                &[("cross_layer", Value::Bool(true))]
            ),
            r#"{"type":"edge","cross_layer":true,"x":1}"#
        );
        let node = r#"{"type":"node","id":"a","layer":"old","future":[1]}"#;
        assert_eq!(
            rewrite(node, &["layer"], &[("layer", Value::String("new".into()))]),
            r#"{"type":"node","id":"a","layer":"new","future":[1]}"#
        );
    }
}
