//! Ranking: BM25 over identifier-aware terms, cosine over embeddings, and their reciprocal rank
//! fusion; then, for each hit, its execution flow across layers, and the context pack.

use crate::cli::Mode;
use crate::graph::{location, Graph};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, VecDeque};
use tg_shared::lexical;
use tg_shared::record::NodeKind;

/// BM25 parameters (the usual ones).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Reciprocal rank fusion: `Σ weight / (RRF_K + rank)`. The constant and the weights were
/// chosen on the retrieval benchmark (BENCHMARKS.md; Cormack et al.'s k = 60 with equal weights
/// did not beat BM25 alone there): identifiers carry more signal than the static embedding.
const RRF_K: f64 = 20.0;
const LEXICAL_WEIGHT: f64 = 1.0;
const SEMANTIC_WEIGHT: f64 = 0.5;
/// How deep each ranked list goes into the fusion.
const FUSION_DEPTH: usize = 200;
/// Flow: hops followed from a hit, the least confidence of an edge followed, rows shown.
const FLOW_DEPTH: u32 = 3;
const FLOW_MIN_CONFIDENCE: f32 = 0.5;
const FLOW_ROWS: usize = 12;

/// One ranked list: (symbol, score), best first.
type Ranked = Vec<(u32, f64)>;

/// Which symbols a search may return.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these layers (indices); empty: every layer.
    pub layers: Vec<u32>,
    /// Never these layers.
    pub exclude_layers: Vec<u32>,
    /// Rank tests, examples, generated code and tooling among the product code, by score
    /// alone; without it they only follow the product hits.
    pub include_tests: bool,
}

fn eligible(graph: &Graph, i: u32, filter: &Filter) -> bool {
    let symbol = graph.symbol(i);
    let layer_ok = |l: Option<u32>| {
        (filter.layers.is_empty() || l.is_some_and(|l| filter.layers.contains(&l)))
            && !l.is_some_and(|l| filter.exclude_layers.contains(&l))
    };
    // An `@overload` signature is never the answer: its implementation is, and is searched.
    symbol.kind != NodeKind::Module && !symbol.is_stub() && layer_ok(symbol.layer)
}

/// BM25 ranking, best first; only the best `depth` when given.
pub fn lexical(graph: &Graph, query: &str, layer: &Filter, depth: Option<usize>) -> Ranked {
    let index = &graph.index;
    let n = index.len().max(1) as f64;
    let average = index.total_length() as f64 / n;
    let mut scores: HashMap<u32, f64> = HashMap::new();
    let terms: BTreeSet<String> = lexical::query_terms(query).into_iter().collect();
    for term in &terms {
        let list = index.postings(term);
        if list.is_empty() {
            continue;
        }
        let df = list.len() as f64;
        let idf: f64 = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (doc, tf) in list {
            let tf = f64::from(tf);
            let length = f64::from(index.length(doc));
            let score =
                idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average.max(1.0)));
            *scores.entry(doc).or_default() += score;
        }
    }
    let mut ranked: Ranked = scores
        .into_iter()
        .filter(|&(i, _)| eligible(graph, i, layer))
        .collect();
    best(&mut ranked, depth);
    ranked
}

/// Sorts `ranked` best first, keeping only the best `depth` when given: selecting them first
/// spares sorting a million cosines to fuse two hundred of them. The order is total, so the
/// kept ones are the same as a whole sort's.
fn best(ranked: &mut Ranked, depth: Option<usize>) {
    best_by(ranked, depth.unwrap_or(0), by_score);
}

/// Sorts `items` by `order`, keeping only the first `top` (all when `top` is 0): selected
/// first, then sorted, which gives a whole sort's first `top` when `order` is total.
fn best_by<T>(items: &mut Vec<T>, top: usize, order: impl Fn(&T, &T) -> std::cmp::Ordering) {
    if top > 0 && top < items.len() {
        items.select_nth_unstable_by(top - 1, &order);
        items.truncate(top);
    }
    items.sort_unstable_by(order);
}

/// Best score first; ties broken by id order, so the same query gives the same answer (and the
/// order is total: an unstable sort gives it too, faster on a million rows).
fn by_score(a: &(u32, f64), b: &(u32, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Cosine ranking, best first (only the best `depth` when given); `Err` says why there is none
/// (no embeddings, model missing, endpoint down).
pub fn semantic(
    graph: &Graph,
    query: &str,
    layer: &Filter,
    depth: Option<usize>,
) -> Result<Ranked, String> {
    if graph.index.meta.embedder.is_none() {
        return Err("the index has no embeddings".to_string());
    }
    let embedder = graph.embedder()?;
    let vector = embedder
        .embed(&[query.to_string()])?
        .pop()
        .ok_or_else(|| "no vector for the query".to_string())?;
    if vector.iter().all(|x| *x == 0.0) {
        return Err("the query has no word the model knows".to_string());
    }
    // Which symbol each row is, for the eligible ones.
    let mut symbol_of_row = vec![u32::MAX; graph.index.meta.rows as usize];
    for i in 0..graph.len() as u32 {
        let row = graph.symbol(i).vector;
        if (row as usize) < symbol_of_row.len() && eligible(graph, i, layer) {
            symbol_of_row[row as usize] = i;
        }
    }
    let mut ranked: Ranked = Vec::new();
    graph.scan_vectors(|row, values| {
        if let Some(&i) = symbol_of_row.get(row as usize).filter(|&&i| i != u32::MAX) {
            ranked.push((i, f64::from(values.dot(&vector))));
        }
    })?;
    best(&mut ranked, depth);
    Ok(ranked)
}

/// A hit and where it stood in each list.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    #[serde(skip)]
    pub symbol: u32,
    pub score: f64,
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
}

/// The best `top` hits of `query`, with a note when semantic ranking was wanted and
/// unavailable.
pub fn rank(
    graph: &Graph,
    query: &str,
    mode: Mode,
    layer: &Filter,
    top: usize,
) -> (Vec<Hit>, Option<String>) {
    // Fused, each list counts only to its FUSION_DEPTH; alone, a list is the answer.
    let depth = (mode == Mode::Hybrid).then_some(FUSION_DEPTH);
    let lexical_list = if mode == Mode::Semantic {
        Vec::new()
    } else {
        lexical(graph, query, layer, depth)
    };
    let (semantic_list, note) = if mode == Mode::Lexical {
        (Vec::new(), None)
    } else {
        match semantic(graph, query, layer, depth) {
            Ok(list) => (list, None),
            Err(why) => (Vec::new(), Some(format!("lexical ranking only: {why}"))),
        }
    };
    let position = |list: &Ranked| -> HashMap<u32, usize> {
        list.iter()
            .take(FUSION_DEPTH)
            .enumerate()
            .map(|(r, &(i, _))| (i, r + 1))
            .collect()
    };
    let (lex_pos, sem_pos) = (position(&lexical_list), position(&semantic_list));
    let mut scored: Ranked = match mode {
        Mode::Lexical => lexical_list,
        Mode::Semantic => semantic_list,
        Mode::Hybrid => {
            let mut fused: HashMap<u32, f64> = HashMap::new();
            for (pos, weight) in [(&lex_pos, LEXICAL_WEIGHT), (&sem_pos, SEMANTIC_WEIGHT)] {
                for (&i, &r) in pos {
                    *fused.entry(i).or_default() += weight / (RRF_K + r as f64);
                }
            }
            fused.into_iter().collect()
        }
    };
    let named = named_symbols(graph, query, layer);
    order_by_name_and_role(graph, &mut scored, &named, layer.include_tests, top);
    let hits = scored
        .into_iter()
        .map(|(symbol, score)| Hit {
            symbol,
            score,
            lexical_rank: lex_pos.get(&symbol).copied(),
            semantic_rank: sem_pos.get(&symbol).copied(),
        })
        .collect();
    (hits, note)
}

/// Symbols the query names (`get_command`, `Typer callback`, `WalkBuilder::build`): its words
/// are the last segments of the symbol's qualified name, case aside. A name typed is the
/// strongest evidence a search gets, however far the embedding ranks it.
fn named_symbols(graph: &Graph, query: &str, filter: &Filter) -> HashMap<u32, bool> {
    let wanted: Vec<String> = query
        .split(|c: char| {
            c.is_whitespace() || c == '.' || c == ':' || c == '/' || c == '(' || c == ')'
        })
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if wanted.is_empty() || wanted.len() > 6 {
        return HashMap::new();
    }
    let mut named = HashMap::new();
    let Some(last) = wanted.last() else {
        return named;
    };
    for i in 0..graph.len() as u32 {
        let symbol = graph.symbol(i);
        if symbol.kind == NodeKind::Module || !eligible(graph, i, filter) {
            continue;
        }
        let name = symbol.name();
        let same = if name.is_ascii() {
            name.eq_ignore_ascii_case(last)
        } else {
            name.to_lowercase() == *last
        };
        if !same {
            continue;
        }
        // The file's path, then the qualified name, as `trace` reads names: so
        // `typer.main.get_command` and `walk::WalkBuilder::build` name their symbols too.
        let (segments, qualified) = crate::names::symbol_segments(&symbol.id());
        let segments: Vec<String> = segments.iter().map(|s| s.to_lowercase()).collect();
        if segments.ends_with(&wanted) {
            // true: the name covers the whole qualified name (a function, not a same-named
            // method).
            named.insert(i, wanted.len() >= qualified);
        }
    }
    named
}

/// Keeps the best `top` of `scored`: named symbols first (a whole qualified name before a tail,
/// product before the rest), then product code before tests, examples and tooling unless
/// `include_tests`; by score within each group, ties by id. Selected before sorting: a
/// semantic search alone ranks every symbol.
fn order_by_name_and_role(
    graph: &Graph,
    scored: &mut Ranked,
    named: &HashMap<u32, bool>,
    include_tests: bool,
    top: usize,
) {
    let mut missing: BTreeSet<u32> = named.keys().copied().collect();
    for (i, _) in scored.iter() {
        missing.remove(i);
    }
    scored.extend(missing.into_iter().map(|i| (i, 0.0)));
    let product = |i: u32| graph.symbol(i).role == tg_shared::record::Role::Product;
    let group = |i: u32| -> (u8, u8) {
        match named.get(&i) {
            Some(&whole) => (u8::from(!whole), u8::from(!product(i))),
            None => (2, u8::from(!include_tests && !product(i))),
        }
    };
    let mut keyed: Vec<((u8, u8), (u32, f64))> =
        scored.drain(..).map(|hit| (group(hit.0), hit)).collect();
    let order = |a: &((u8, u8), (u32, f64)), b: &((u8, u8), (u32, f64))| {
        a.0.cmp(&b.0).then_with(|| by_score(&a.1, &b.1))
    };
    best_by(&mut keyed, top, order);
    scored.extend(keyed.into_iter().map(|(_, hit)| hit));
}

/// One row of an execution flow.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowRow {
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub symbol: u32,
    pub layer: String,
    /// The layer's id, as `check`, `impact` and `--layer` name it (`layer` is its name).
    pub layer_id: String,
    pub id: String,
    pub intent: Option<String>,
    /// `agent`, `llm`, `doc`, or `doc-comment` when the intent is the raw doc line.
    pub intent_source: Option<String>,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Call hops from the hit (0 for the hit itself).
    pub depth: u32,
    /// The caller it was reached from.
    pub via: Option<String>,
}

/// The intent of a symbol, else its doc line, and where it came from.
pub fn about(graph: &Graph, i: u32) -> (Option<String>, Option<String>) {
    let symbol = graph.symbol(i);
    match (symbol.intent(), symbol.doc()) {
        (Some(intent), _) => (
            Some(if symbol.intent_current {
                intent.into_owned()
            } else {
                format!("{intent} (stale)")
            }),
            symbol.intent_source().map(Cow::into_owned),
        ),
        (None, Some(doc)) => (Some(doc.into_owned()), Some("doc-comment".into())),
        _ => (None, None),
    }
}

fn row(graph: &Graph, i: u32, depth: u32, via: Option<u32>) -> FlowRow {
    let symbol = graph.symbol(i);
    let (intent, intent_source) = about(graph, i);
    FlowRow {
        symbol: i,
        layer: graph.layer_name(i).to_string(),
        layer_id: graph.layer_id(i).to_string(),
        id: symbol.id().into_owned(),
        intent,
        intent_source,
        file: symbol.file().into_owned(),
        line_start: symbol.line_start,
        line_end: symbol.line_end,
        depth,
        via: via.map(|v| graph.symbol(v).id().into_owned()),
    }
}

/// The hit and the symbols its calls reach in other layers (up to three hops over edges of
/// confidence ≥ 0.5), ordered along the layers' order.
pub fn flow(graph: &Graph, hit: u32) -> Vec<FlowRow> {
    let mut seen = BTreeSet::from([hit]);
    let mut queue = VecDeque::from([(hit, 0u32)]);
    let mut reached: Vec<(u32, u32, u32)> = Vec::new();
    while let Some((at, depth)) = queue.pop_front() {
        if depth >= FLOW_DEPTH {
            continue;
        }
        let mut next: Vec<u32> = graph
            .callees(at)
            .filter(|&(e, _)| graph.index.edge(e).confidence >= FLOW_MIN_CONFIDENCE)
            .map(|(_, dst)| dst)
            .collect();
        next.sort_unstable();
        next.dedup();
        for dst in next {
            if !seen.insert(dst) {
                continue;
            }
            if graph.symbol(dst).layer != graph.symbol(at).layer {
                reached.push((dst, depth + 1, at));
            }
            queue.push_back((dst, depth + 1));
        }
    }
    reached.sort_by_key(|&(i, depth, _)| {
        (
            graph.layer_rank(i),
            depth,
            graph.symbol(i).id().into_owned(),
        )
    });
    reached.truncate(FLOW_ROWS - 1);
    std::iter::once(row(graph, hit, 0, None))
        .chain(
            reached
                .into_iter()
                .map(|(i, d, via)| row(graph, i, d, Some(via))),
        )
        .collect()
}

/// Characters per token of the budget's approximation.
pub const CHARS_PER_TOKEN: usize = 4;

/// The context pack: the hits' and then their flows' signatures and intents, in relevance
/// order, each symbol once, until the budget (in approximate tokens) is spent.
pub fn pack(graph: &Graph, hits: &[Hit], flows: &[Vec<FlowRow>], budget: usize) -> (String, usize) {
    let limit = budget.saturating_mul(CHARS_PER_TOKEN);
    let mut text = String::new();
    let mut done = BTreeSet::new();
    let order = hits
        .iter()
        .map(|h| h.symbol)
        .chain(flows.iter().flatten().map(|r| r.symbol));
    for i in order {
        if !done.insert(i) {
            continue;
        }
        let symbol = graph.symbol(i);
        let mut entry = format!(
            "{} [{}] {}\n",
            symbol.id(),
            graph.layer_name(i),
            location(&symbol)
        );
        if let Some(signature) = symbol.signature() {
            entry.push_str(&format!("  {signature}\n"));
        }
        if let (Some(intent), _) = about(graph, i) {
            entry.push_str(&format!("  {intent}\n"));
        }
        if text.len() + entry.len() > limit {
            break;
        }
        text.push_str(&entry);
    }
    let tokens = text.len().div_ceil(CHARS_PER_TOKEN);
    (text, tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_few_are_a_whole_sort_s_first_few() {
        // Repeated scores, so that ties by id decide, and a negative and a NaN-free spread.
        let ranked: Ranked = (0..500u32)
            .map(|i| ((i * 7919) % 500, f64::from((i * 31) % 17) - 3.0))
            .collect();
        let mut whole = ranked.clone();
        whole.sort_unstable_by(by_score);
        for depth in [0, 1, 2, 17, 200, 499, 500, 501] {
            let mut some = ranked.clone();
            best(&mut some, Some(depth));
            let expected = if depth == 0 { 500 } else { depth.min(500) };
            assert_eq!(some, whole[..expected], "depth {depth}");
        }
        let mut all = ranked;
        best(&mut all, None);
        assert_eq!(all, whole);
    }
}
