//! Every question tg-query answers, as a typed value: the CLI renders it as Markdown
//! ([`crate::render`]) or JSON, and the MCP server (`tldrgraph mcp`) returns it as a tool's
//! structured output. Nothing here prints.

use crate::graph::{source_lines, Graph};
use crate::search::{self, FlowRow, Hit};
use crate::{deadcode, trace};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::Path;
use tg_shared::options::{Mode, SearchArgs};
use tg_shared::record::EdgeKind;

pub use crate::names::NameError;

/// A search's answer: the ranked symbols, each with its flow across layers.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchAnswer {
    pub query: String,
    /// `hybrid`, `lexical` or `semantic`.
    pub mode: String,
    pub results: Vec<SearchResult>,
    /// Why the ranking is not what was asked (no vectors for a semantic search).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The context pack, with a budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextPack>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchResult {
    pub rank: usize,
    pub id: String,
    pub kind: String,
    pub layer: String,
    /// The layer's id, as `check`, `impact` and `--layer` name it (`layer` is its name).
    pub layer_id: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    pub signature: Option<String>,
    pub intent: Option<String>,
    pub intent_source: Option<String>,
    pub score: f64,
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    pub flow: Vec<FlowRow>,
}

/// The hits' signatures and intents packed into a budget of tokens.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextPack {
    pub budget: usize,
    pub tokens: usize,
    pub text: String,
    pub tokens_are: String,
}

/// The search `args` ask for. An unknown layer is a usage error ([`crate::layer_indices`]).
pub fn search(graph: &Graph, args: &SearchArgs) -> Result<SearchAnswer, String> {
    let filter = search::Filter {
        layers: crate::layer_indices(graph, &args.layer)?,
        exclude_layers: crate::layer_indices(graph, &args.exclude_layer)?,
        include_tests: args.include_tests,
    };
    let (hits, note) = search::rank(graph, &args.text, args.mode, &filter, args.top_k);
    let flows: Vec<Vec<FlowRow>> = hits.iter().map(|h| search::flow(graph, h.symbol)).collect();
    let context = args.budget.map(|budget| {
        let (text, tokens) = search::pack(graph, &hits, &flows, budget);
        ContextPack {
            budget,
            tokens,
            text,
            tokens_are: "characters / 4".into(),
        }
    });
    let results = hits
        .iter()
        .zip(flows)
        .enumerate()
        .map(|(rank, (hit, flow))| search_result(graph, rank + 1, hit, flow))
        .collect();
    Ok(SearchAnswer {
        query: args.text.clone(),
        mode: mode_name(args.mode).into(),
        results,
        note,
        context,
    })
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Hybrid => "hybrid",
        Mode::Lexical => "lexical",
        Mode::Semantic => "semantic",
    }
}

fn search_result(graph: &Graph, rank: usize, hit: &Hit, flow: Vec<FlowRow>) -> SearchResult {
    let symbol = graph.symbol(hit.symbol);
    let (intent, intent_source) = search::about(graph, hit.symbol);
    SearchResult {
        rank,
        id: symbol.id().into_owned(),
        kind: symbol.kind.as_str().into(),
        layer: graph.layer_name(hit.symbol).into(),
        layer_id: graph.layer_id(hit.symbol).into(),
        file: symbol.file().into_owned(),
        line_start: symbol.line_start,
        line_end: symbol.line_end,
        signature: symbol.signature().map(Cow::into_owned),
        intent,
        intent_source,
        score: hit.score,
        lexical_rank: hit.lexical_rank,
        semantic_rank: hit.semantic_rank,
        flow,
    }
}

/// The call path from `from` to `to` (names as [`crate::names`] reads them).
pub fn trace(graph: &Graph, from: &str, to: &str) -> Result<trace::Trace, NameError> {
    let from = graph.resolve(from)?;
    let to = graph.resolve(to)?;
    Ok(trace::trace(graph, from, to))
}

/// Which way [`neighbours`] walks the call edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Callers,
    Callees,
}

/// A symbol's callers or callees, up to a depth.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Neighbours {
    pub symbol: String,
    /// `callers` or `callees`.
    pub direction: String,
    pub depth: u32,
    pub min_confidence: f32,
    /// Nearest first; within a depth, the surest first.
    pub results: Vec<Neighbour>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Neighbour {
    pub id: String,
    pub kind: String,
    pub layer: String,
    /// The layer's id, as `check`, `impact` and `--layer` name it (`layer` is its name).
    pub layer_id: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Calls between it and the symbol asked about (1: a direct caller or callee).
    pub depth: u32,
    /// The product of the edges' confidences along the surest path found (3 decimals).
    pub confidence: f64,
    /// Line of the call, in the caller's file, on the edge nearest this symbol.
    pub call_line: u32,
    /// The symbol it was reached through, deeper than 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    pub intent: Option<String>,
}

/// A confidence to 3 decimals: what the index's f32 knows, without its binary noise
/// (0.95, not 0.949999988).
pub fn rounded(confidence: f32) -> f64 {
    (f64::from(confidence) * 1000.0).round() / 1000.0
}

/// How a symbol was reached: (depth, path confidence, call line, via).
type Reached = (u32, f32, u32, Option<u32>);

/// The symbols that call `symbol` (or that it calls), breadth first up to `depth`, over call
/// edges of confidence at least `min_confidence`.
pub fn neighbours(
    graph: &Graph,
    symbol: u32,
    direction: Direction,
    depth: u32,
    min_confidence: f32,
) -> Neighbours {
    let n = graph.len();
    let mut best: Vec<Option<Reached>> = vec![None; n];
    best[symbol as usize] = Some((0, 1.0, 0, None));
    let mut queue = VecDeque::from([symbol]);
    let mut order = Vec::new();
    while let Some(at) = queue.pop_front() {
        let Some((d, confidence, _, _)) = best[at as usize] else {
            continue;
        };
        if d >= depth {
            continue;
        }
        let edges: Vec<u32> = match direction {
            Direction::Callers => graph.index.in_edges(at),
            Direction::Callees => graph.index.out_edges(at),
        };
        for e in edges {
            let edge = graph.index.edge(e);
            if edge.kind != EdgeKind::Calls || edge.confidence < min_confidence {
                continue;
            }
            let next = match direction {
                Direction::Callers => edge.src,
                Direction::Callees => edge.dst,
            };
            let through = confidence * edge.confidence;
            let via = (d > 0).then_some(at);
            match &mut best[next as usize] {
                Some((nd, nc, line, v)) if *nd == d + 1 && through > *nc => {
                    (*nc, *line, *v) = (through, edge.line, via);
                }
                Some(_) => {}
                slot @ None => {
                    *slot = Some((d + 1, through, edge.line, via));
                    order.push(next);
                    queue.push_back(next);
                }
            }
        }
    }
    let mut results: Vec<Neighbour> = order
        .into_iter()
        .filter_map(|i| {
            let (d, confidence, call_line, via) = best[i as usize]?;
            let s = graph.symbol(i);
            Some(Neighbour {
                id: s.id().into_owned(),
                kind: s.kind.as_str().into(),
                layer: graph.layer_name(i).into(),
                layer_id: graph.layer_id(i).into(),
                file: s.file().into_owned(),
                line_start: s.line_start,
                line_end: s.line_end,
                depth: d,
                confidence: rounded(confidence),
                call_line,
                via: via.map(|v| graph.symbol(v).id().into_owned()),
                intent: search::about(graph, i).0,
            })
        })
        .collect();
    results.sort_by(|a, b| {
        (a.depth, b.confidence, &a.id)
            .partial_cmp(&(b.depth, a.confidence, &b.id))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Neighbours {
        symbol: graph.symbol(symbol).id().into_owned(),
        direction: match direction {
            Direction::Callers => "callers",
            Direction::Callees => "callees",
        }
        .into(),
        depth,
        min_confidence,
        results,
    }
}

/// One symbol's definition and its direct neighbourhood.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SymbolAnswer {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    pub signature: Option<String>,
    pub intent: Option<String>,
    pub intent_source: Option<String>,
    pub doc: Option<String>,
    pub layer: String,
    /// The layer's id, as `check`, `impact` and `--layer` name it (`layer` is its name).
    pub layer_id: String,
    /// `product`, `test`, `example`, `generated` or `tooling`.
    pub role: String,
    /// The type or module it is defined in.
    pub parent: Option<String>,
    /// The interface method it implements, when it implements one.
    pub implements: Option<String>,
    /// Direct callers and callees, surest first.
    pub callers: Vec<Neighbour>,
    pub callees: Vec<Neighbour>,
    /// Its source lines, when asked for (and the file is readable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Vec<String>>,
}

pub fn symbol(graph: &Graph, root: &Path, i: u32, with_source: bool) -> SymbolAnswer {
    let s = graph.symbol(i);
    let (intent, intent_source) = search::about(graph, i);
    let direct = |direction| {
        let mut found = neighbours(graph, i, direction, 1, 0.0).results;
        found.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.id.cmp(&b.id)));
        found
    };
    SymbolAnswer {
        id: s.id().into_owned(),
        name: s.name().into_owned(),
        kind: s.kind.as_str().into(),
        file: s.file().into_owned(),
        line_start: s.line_start,
        line_end: s.line_end,
        signature: s.signature().map(Cow::into_owned),
        intent,
        intent_source,
        doc: s.doc().map(Cow::into_owned),
        layer: graph.layer_name(i).into(),
        layer_id: graph.layer_id(i).into(),
        role: s.role.as_str().into(),
        parent: s.parent.map(|p| graph.symbol(p).id().into_owned()),
        implements: s.implements().map(Cow::into_owned),
        callers: direct(Direction::Callers),
        callees: direct(Direction::Callees),
        source: with_source
            .then(|| source_lines(root, &s.file(), s.line_start, s.line_end))
            .flatten(),
    }
}

/// Functions and methods nothing reaches, surest first.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeadCodeAnswer {
    pub count: usize,
    pub findings: Vec<deadcode::Finding>,
}

pub fn dead_code(graph: &Graph, root: &Path, min_confidence: f64) -> DeadCodeAnswer {
    dead_code_of(&deadcode::find(graph, root), min_confidence)
}

/// The answer from findings already made (a reader that keeps them between questions).
pub fn dead_code_of(all: &[deadcode::Finding], min_confidence: f64) -> DeadCodeAnswer {
    let findings: Vec<deadcode::Finding> = all
        .iter()
        .filter(|f| f.confidence >= min_confidence)
        .cloned()
        .collect();
    DeadCodeAnswer {
        count: findings.len(),
        findings,
    }
}
