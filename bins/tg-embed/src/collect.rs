//! One pass over the stream: records are passed through as they come and kept in the compact
//! form the index needs (ids interned to numbers, so 4 million edges cost 80 MB, not the
//! gigabytes their id strings would), with the fingerprint of what was read.

use rustc_hash::FxHashMap;
use tg_shared::contract;
use tg_shared::hash::Hasher;
use tg_shared::record::{EdgeKind, Node, Record};
use tg_shared::search::{IndexEdge, IndexLayer, IndexSymbol, NO_VECTOR};
use tg_shared::stage::{Failure, Input, Output, Owned, StreamCheck};

/// An interned id that is not (yet) a symbol.
const NOT_A_SYMBOL: u32 = u32::MAX;

/// A raw edge between interned ids.
struct RawEdge {
    src: u32,
    dst: u32,
    kind: EdgeKind,
    confidence: f32,
    line: u32,
}

/// What the index is built from.
#[derive(Default)]
pub struct Collected {
    pub symbols: Vec<IndexSymbol>,
    pub layers: Vec<IndexLayer>,
    /// A `needs_layers` upstream: the agent is designing layers; nothing is indexed yet.
    pub layers_missing: bool,
    /// Every id met, as a node or an edge's end, to its number.
    ids: FxHashMap<Box<str>, u32>,
    /// Per interned id: its symbol, or [`NOT_A_SYMBOL`].
    symbol_of: Vec<u32>,
    /// Per symbol: the interned id of its parent, and its layer's id (interned in `layer_ids`).
    parents: Vec<Option<u32>>,
    layer_of: Vec<Option<u32>>,
    layer_ids: FxHashMap<String, u32>,
    edges: Vec<RawEdge>,
}

impl Collected {
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&n) = self.ids.get(id) {
            return n;
        }
        let n = self.symbol_of.len() as u32;
        self.ids.insert(id.into(), n);
        self.symbol_of.push(NOT_A_SYMBOL);
        n
    }

    fn add_node(&mut self, node: Node) {
        let n = self.intern(&node.id);
        if self.symbol_of[n as usize] != NOT_A_SYMBOL {
            return; // a duplicate id: the first record wins
        }
        self.symbol_of[n as usize] = self.symbols.len() as u32;
        let parent = node.parent.as_deref().map(|p| self.intern(p));
        self.parents.push(parent);
        let current = node.intent_is_current();
        let next_layer = self.layer_ids.len() as u32;
        let layer = node
            .layer
            .map(|l| *self.layer_ids.entry(l).or_insert(next_layer));
        self.layer_of.push(layer);
        self.symbols.push(IndexSymbol {
            id: node.id,
            kind: node.kind,
            name: node.name,
            file: node.file,
            line_start: node.line_start,
            line_end: node.line_end,
            // Resolved to an index once the layer records are in.
            layer: None,
            role: node.role,
            implements: node.implements,
            stub: node.stub,
            signature: node.signature,
            intent: node.intent,
            intent_source: node.intent_source,
            intent_current: current,
            doc: node.doc,
            parent: None,
            text_hash: String::new(),
            vector: NO_VECTOR,
        });
    }

    /// Puts the layer and parent indexes on the symbols, and gives the edges between indexed
    /// symbols, sorted.
    pub fn link(&mut self) -> Vec<IndexEdge> {
        // Layers in their order; symbols point at them by index.
        self.layers
            .sort_by(|a, b| a.order.cmp(&b.order).then(a.id.cmp(&b.id)));
        let mut position_of_layer: Vec<Option<u32>> = vec![None; self.layer_ids.len()];
        for (position, layer) in self.layers.iter().enumerate() {
            if let Some(&n) = self.layer_ids.get(&layer.id) {
                position_of_layer[n as usize] = Some(position as u32);
            }
        }
        let symbol_of = |n: u32| Some(self.symbol_of[n as usize]).filter(|&s| s != NOT_A_SYMBOL);
        for ((symbol, parent), layer) in self
            .symbols
            .iter_mut()
            .zip(&self.parents)
            .zip(&self.layer_of)
        {
            symbol.layer = layer.and_then(|l| position_of_layer[l as usize]);
            symbol.parent = parent.and_then(symbol_of);
        }
        let mut edges: Vec<IndexEdge> = self
            .edges
            .iter()
            .filter_map(|e| {
                Some(IndexEdge {
                    src: symbol_of(e.src)?,
                    dst: symbol_of(e.dst)?,
                    kind: e.kind,
                    confidence: e.confidence,
                    line: e.line,
                })
            })
            .collect();
        edges.sort_by_key(|e| (e.src, e.dst, e.kind));
        // What linking needed is done with.
        self.ids = FxHashMap::default();
        self.edges = Vec::new();
        edges
    }
}

/// Reads the stream, writing each record not `owned` by this stage to `output` as it comes, and
/// hashing those lines into `fingerprint`. `None` when the reader downstream went away.
pub fn collect(
    input: &mut Input,
    output: &mut Output,
    owned: &Owned,
    fingerprint: &mut Hasher,
) -> Result<Option<Collected>, Failure> {
    let mut check = StreamCheck::default();
    let mut seen = Collected::default();
    while let Some(item) = input.next_item(&mut check) {
        let item = item?;
        if owned.owns(item.record.as_ref()) {
            continue;
        }
        output.line(&item.raw)?;
        if output.is_closed() {
            return Ok(None);
        }
        fingerprint.update(item.raw.as_bytes()).update(b"\n");
        match item.record {
            Some(Record::Node(node)) => seen.add_node(node),
            Some(Record::Edge(edge)) if edge.kind != EdgeKind::Contains => {
                let (src, dst) = (seen.intern(&edge.src), seen.intern(&edge.dst));
                seen.edges.push(RawEdge {
                    src,
                    dst,
                    kind: edge.kind,
                    confidence: edge.confidence.unwrap_or(1.0) as f32,
                    line: edge.line,
                });
            }
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                seen.layers_missing = true;
            }
            Some(Record::Layer(layer)) => seen.layers.push(IndexLayer {
                id: layer.id,
                name: layer.name,
                order: layer.order,
            }),
            _ => {}
        }
    }
    check.finish(&input.name)?;
    Ok(Some(seen))
}
