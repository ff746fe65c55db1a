//! Which symbols are worth an intent, and why: a budget an agent can finish, spent on the
//! product code's core.
//!
//! Only product code counts. The metrics are computed on the dependency edges (calls,
//! inherits) between product symbols: a function the tests call 500 times is not central for
//! it. Reads of a property getter are left out (tg-plan's stream reader drops them): an
//! accessor read everywhere would make its readers look central. Eligible: product classes, functions, methods, structs, enums, unions and traits outside
//! the default (catch-all) layer that are not trivial (fewer than `min_lines` lines calling
//! nothing; an accessor: three lines or fewer calling nothing, or a property getter of any
//! size; a shim: a one-line body calling one thing; a constructor calling nothing). The
//! `plan:` settings change these rules.
//!
//! Score, each part normalised by its largest value among eligible symbols: `0.35 ×
//! betweenness + 0.25 × PageRank + 0.15 × cross-layer degree + 0.1 × fan-in + 0.15 × size`
//! (the logarithm of its lines: a long function holds more to understand than a short one).
//!
//! Budget: a small repository's whole core, then growing with the square root of the eligible
//! symbols (`max(min(E, 50), 5√E)`), never above `max_symbols` (1,000) nor `max_share` of them.
//!
//! Selection, within the budget, by marginal coverage:
//! 1. greedily the eligible symbol that is an endpoint of the most product dependency edges no
//!    pick covers yet (an edge between layers counts twice; ties: higher score, then id), until
//!    `coverage` of their weight is covered or no pick covers more;
//! 2. hubs: eligible symbols in the top 1% by fan-in (at least 3) or by betweenness;
//! 3. the rest of the budget by score.
//!
//! Candidates are ranked by score (then id) and say why they were chosen.

use crate::metrics::{self, Betweenness, Graph};
use rustc_hash::FxHashSet;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::Path;
use tg_shared::layers::PlanSettings;
use tg_shared::record::{Candidate, CandidateMetrics, EdgeKind, NodeKind, Role};

/// What selection needs to know of a node.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PlanNode {
    pub id: String,
    pub kind: NodeKind,
    pub file: String,
    pub lines: u32,
    pub layer: Option<String>,
    pub role: Role,
    /// A property getter: an accessor, never worth an intent of its own.
    pub getter: bool,
}

impl PlanNode {
    fn name(&self) -> &str {
        let tail = self.id.rsplit(['.', ':']).next().unwrap_or(&self.id);
        tail.split('#').next().unwrap_or(tail)
    }
}

/// The dependency graph of the stream, with each node's layer.
#[derive(Debug, Default)]
pub struct PlanInput {
    pub nodes: Vec<PlanNode>,
    /// (src, dst, kind) for calls, imports and inherits.
    pub edges: Vec<(u32, u32, EdgeKind)>,
    pub default_layer: Option<String>,
}

/// The plan and the figures behind it: what `.tldrgraph/plan.json` holds.
pub use tg_shared::artifacts::plan::PlanFile as Plan;

fn is_rankable(kind: NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Class
            | NodeKind::Function
            | NodeKind::Method
            | NodeKind::Struct
            | NodeKind::Enum
            | NodeKind::Union
            | NodeKind::Trait
    )
}

/// Whether a node's code counts as the product for this plan.
fn counts(node: &PlanNode, settings: &PlanSettings) -> bool {
    node.role == Role::Product || (settings.include_tests && node.role == Role::Test)
}

/// Why a rankable product symbol is not worth an intent, if it is not.
fn trivial(node: &PlanNode, calls_out: usize, settings: &PlanSettings) -> bool {
    let callable = matches!(node.kind, NodeKind::Function | NodeKind::Method);
    node.getter
        || (node.lines < settings.min_lines && calls_out == 0)
        || (callable && node.lines <= 3 && calls_out == 0)
        || (callable && node.lines <= 2 && calls_out <= 1)
        || (callable
            && calls_out == 0
            && tg_lang::for_path(&node.file)
                .is_some_and(|lang| lang.is_constructor_name(node.name())))
}

/// The most candidates a plan over `eligible` symbols may hold.
pub fn budget(eligible: usize, settings: &PlanSettings) -> usize {
    let grown = (5.0 * (eligible as f64).sqrt()).ceil() as usize;
    let share = (settings.max_share * eligible as f64).floor() as usize;
    grown
        .max(eligible.min(50))
        .min(share.max(1))
        .min(eligible)
        .min(settings.max_symbols as usize)
}

/// Share of `sorted` (ascending) strictly above `value`: 0.0 for the largest.
fn percentile_rank(sorted: &[f64], value: f64) -> f64 {
    let above = sorted.len() - sorted.partition_point(|&v| v <= value);
    above as f64 / sorted.len().max(1) as f64
}

/// A metric that overflowed (path counts on huge diamond chains) counts as 0, so that no record
/// ever carries a non-finite number.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Each node's metrics on the product graph.
struct Metrics {
    graph: Graph,
    betweenness: Vec<f64>,
    pagerank: Vec<f64>,
    how: Betweenness,
    /// The metrics are the last ranking's, kept for this very graph.
    reused: bool,
    cross_degree: Vec<u32>,
    calling_layers: Vec<u32>,
}

fn product_metrics(input: &PlanInput, settings: &PlanSettings, memo: Option<&Path>) -> Metrics {
    let n = input.nodes.len();
    let product = |i: u32| counts(&input.nodes[i as usize], settings);
    let mut graph = Graph::new(n);
    for &(src, dst, _) in &input.edges {
        if product(src) && product(dst) {
            graph.add(src, dst);
        }
    }
    graph.finish();
    let (ranked, reused) = metrics::rank(&graph, memo);
    let pagerank = ranked.pagerank.into_iter().map(finite).collect();
    let betweenness = ranked.betweenness.into_iter().map(finite).collect();
    let how = ranked.how;
    let layer = layer_numbers(input);
    // Neighbours in both lists once (both are sorted and deduplicated), when in another layer.
    let cross_degree = (0..n)
        .map(|i| {
            let (out, into) = (&graph.out[i], &graph.into[i]);
            let (mut a, mut b, mut count) = (0, 0, 0u32);
            while a < out.len() || b < into.len() {
                let next = match (out.get(a), into.get(b)) {
                    (Some(&x), Some(&y)) if x == y => {
                        (a, b) = (a + 1, b + 1);
                        x
                    }
                    (Some(&x), Some(&y)) if x < y => {
                        a += 1;
                        x
                    }
                    (Some(&x), None) => {
                        a += 1;
                        x
                    }
                    (_, Some(&y)) => {
                        b += 1;
                        y
                    }
                    (None, None) => break,
                };
                count += u32::from(layer[next as usize] != layer[i]);
            }
            count
        })
        .collect();
    let calling_layers = (0..n)
        .map(|i| {
            let mut layers: Vec<u32> = (graph.into[i].iter())
                .map(|&j| layer[j as usize])
                .filter(|&l| l != NO_LAYER && l != layer[i])
                .collect();
            layers.sort_unstable();
            layers.dedup();
            layers.len() as u32
        })
        .collect();
    Metrics {
        graph,
        betweenness,
        pagerank,
        how,
        reused,
        cross_degree,
        calling_layers,
    }
}

/// A node without a layer, in [`layer_numbers`].
const NO_LAYER: u32 = u32::MAX;

/// Each node's layer as a number (equal numbers, equal layers), [`NO_LAYER`] for none: the
/// counts over neighbours compare numbers, not strings.
fn layer_numbers(input: &PlanInput) -> Vec<u32> {
    let mut numbers: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    (input.nodes.iter())
        .map(|node| match node.layer.as_deref() {
            Some(layer) => {
                let next = numbers.len() as u32;
                *numbers.entry(layer).or_insert(next)
            }
            None => NO_LAYER,
        })
        .collect()
}

/// Per node: eligible; and the counts of rankable symbols skipped as trivial and as not product.
fn eligibility(
    input: &PlanInput,
    settings: &PlanSettings,
    calls_out: &[usize],
) -> (Vec<bool>, u64, u64) {
    let (mut skipped_trivial, mut skipped_not_product) = (0, 0);
    let eligible = input
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            if !is_rankable(node.kind) {
                return false;
            }
            if !counts(node, settings) {
                skipped_not_product += 1;
                return false;
            }
            let in_default = input.default_layer.is_some()
                && node.layer.as_deref() == input.default_layer.as_deref();
            if in_default && !settings.include_default_layer {
                return false;
            }
            if trivial(node, calls_out[i], settings) {
                skipped_trivial += 1;
                return false;
            }
            true
        })
        .collect();
    (eligible, skipped_trivial, skipped_not_product)
}

/// The plan, and whether its ranking was the last one's, which `memo` keeps
/// ([`metrics::rank`]).
pub fn plan(input: &PlanInput, settings: &PlanSettings, memo: Option<&Path>) -> (Plan, bool) {
    let n = input.nodes.len();
    let m = product_metrics(input, settings, memo);
    // Calls out of each node to anything (a shim calling a library counts as calling).
    let mut calls_out = vec![0usize; n];
    for &(src, _, kind) in &input.edges {
        if kind == EdgeKind::Calls {
            calls_out[src as usize] += 1;
        }
    }
    let (eligible, skipped_trivial, skipped_not_product) = eligibility(input, settings, &calls_out);
    let eligible_ids: Vec<usize> = (0..n).filter(|&i| eligible[i]).collect();
    let score = scores(&m, &eligible_ids, input);
    let layer = |i: usize| input.nodes[i].layer.as_deref();

    // The product dependency edges selection covers: (src, dst, weight).
    let mut edges: Vec<(u32, u32, bool)> = input
        .edges
        .iter()
        .filter(|(s, d, k)| {
            matches!(k, EdgeKind::Calls | EdgeKind::Inherits)
                && s != d
                && counts(&input.nodes[*s as usize], settings)
                && counts(&input.nodes[*d as usize], settings)
        })
        .map(|&(s, d, k)| (s, d, k == EdgeKind::Calls))
        .collect();
    edges.sort_unstable();
    edges.dedup_by_key(|e| (e.0, e.1));
    let weight = |s: u32, d: u32| {
        if layer(s as usize) != layer(d as usize) {
            2
        } else {
            1
        }
    };
    let budget = budget(eligible_ids.len(), settings);
    let (mut chosen, covers_at_pick) = greedy_coverage(
        &edges
            .iter()
            .map(|&(s, d, _)| (s, d, weight(s, d)))
            .collect::<Vec<_>>(),
        &eligible,
        &score,
        input,
        budget,
        settings.coverage,
    );
    add_hubs(&m, &eligible_ids, &score, input, budget, &mut chosen);
    fill_by_score(&eligible_ids, &score, input, budget, &mut chosen);
    chosen.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(input.nodes[a].id.cmp(&input.nodes[b].id))
    });
    let chosen_set: FxHashSet<usize> = chosen.iter().copied().collect();
    let candidates = describe(&m, &eligible_ids, &score, input, &chosen, &covers_at_pick);

    let cross_calls: Vec<(u32, u32)> = edges
        .iter()
        .filter(|(s, d, call)| *call && layer(*s as usize) != layer(*d as usize))
        .map(|&(s, d, _)| (s, d))
        .collect();
    let touches =
        |s: u32, d: u32| chosen_set.contains(&(s as usize)) || chosen_set.contains(&(d as usize));
    let total_b: f64 = m.betweenness.iter().sum();
    let chosen_b: f64 = chosen.iter().map(|&i| m.betweenness[i]).sum();
    let plan = Plan {
        candidates,
        eligible: eligible_ids.len() as u64,
        budget: budget as u64,
        skipped_trivial,
        skipped_not_product,
        product_edges: edges.len() as u64,
        covered_edges: edges.iter().filter(|(s, d, _)| touches(*s, *d)).count() as u64,
        cross_layer_calls: cross_calls.len() as u64,
        coverable_calls: cross_calls
            .iter()
            .filter(|(s, d)| eligible[*s as usize] || eligible[*d as usize])
            .count() as u64,
        covered_calls: cross_calls.iter().filter(|(s, d)| touches(*s, *d)).count() as u64,
        betweenness_covered: if total_b > 0.0 {
            round(chosen_b / total_b).max(0.0)
        } else {
            0.0
        },
        betweenness: match m.how {
            Betweenness::Exact => "exact".to_string(),
            Betweenness::Sampled(k) => format!("sampled from {k} sources"),
        },
    };
    (plan, m.reused)
}

/// Rounded so that the ranking does not hang on the last bits of a float.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The rest of the budget, by score: what coverage and hubs left is still the core's next
/// most central and most substantial code.
fn fill_by_score(
    eligible_ids: &[usize],
    score: &[f64],
    input: &PlanInput,
    budget: usize,
    chosen: &mut Vec<usize>,
) {
    let taken: FxHashSet<usize> = chosen.iter().copied().collect();
    let mut rest: Vec<usize> = eligible_ids
        .iter()
        .copied()
        .filter(|i| !taken.contains(i))
        .collect();
    rest.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(input.nodes[a].id.cmp(&input.nodes[b].id))
    });
    let room = budget.saturating_sub(chosen.len());
    chosen.extend(rest.into_iter().take(room));
}

/// Weights of the score's parts (they sum to 1): how much being on many shortest paths,
/// being depended upon transitively, being reached from other layers, being called directly,
/// and being large make a symbol worth summarising.
const WEIGHT_BETWEENNESS: f64 = 0.35;
const WEIGHT_PAGERANK: f64 = 0.25;
const WEIGHT_CROSS_LAYER: f64 = 0.15;
const WEIGHT_FAN_IN: f64 = 0.1;
const WEIGHT_SIZE: f64 = 0.15;

/// A hub: in the top share of fan-in or betweenness among the eligible symbols.
const HUB_SHARE: f64 = 0.01;
/// A reason worth stating: the top share of betweenness or fan-in.
const REASON_SHARE: f64 = 0.05;
/// Fewer callers than this never make a symbol a hub or a fan-in reason.
const MIN_FAN_IN: usize = 3;

fn scores(m: &Metrics, eligible_ids: &[usize], input: &PlanInput) -> Vec<f64> {
    let size = |i: usize| f64::from(input.nodes[i].lines).ln_1p();
    let max_of = |f: &dyn Fn(usize) -> f64| {
        eligible_ids
            .iter()
            .map(|&i| f(i))
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE)
    };
    let max_b = max_of(&|i| m.betweenness[i]);
    let max_p = max_of(&|i| m.pagerank[i]);
    let max_x = max_of(&|i| f64::from(m.cross_degree[i]));
    let max_f = max_of(&|i| m.graph.into[i].len() as f64);
    let max_s = max_of(&size);
    (0..m.graph.len())
        .map(|i| {
            round(
                WEIGHT_BETWEENNESS * m.betweenness[i] / max_b
                    + WEIGHT_PAGERANK * m.pagerank[i] / max_p
                    + WEIGHT_CROSS_LAYER * f64::from(m.cross_degree[i]) / max_x
                    + WEIGHT_FAN_IN * m.graph.into[i].len() as f64 / max_f
                    + WEIGHT_SIZE * size(i) / max_s,
            )
        })
        .collect()
}

/// Greedy weighted coverage of `edges` (src, dst, weight) by eligible endpoints; the picks and,
/// per node, how many edges it covered when picked.
fn greedy_coverage(
    edges: &[(u32, u32, u32)],
    eligible: &[bool],
    score: &[f64],
    input: &PlanInput,
    budget: usize,
    coverage: f64,
) -> (Vec<usize>, Vec<u32>) {
    let n = eligible.len();
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (e, &(s, d, _)) in edges.iter().enumerate() {
        for end in [s, d] {
            if eligible[end as usize] {
                incident[end as usize].push(e as u32);
            }
        }
    }
    let total: u64 = edges.iter().map(|e| u64::from(e.2)).sum();
    let target = (coverage * total as f64).ceil() as u64;
    let mut covered = vec![false; edges.len()];
    let mut covered_weight = 0u64;
    let mut chosen = Vec::new();
    let mut covers_at_pick = vec![0u32; n];
    let gain = |i: usize, covered: &[bool]| -> u32 {
        incident[i]
            .iter()
            .filter(|&&e| !covered[e as usize])
            .map(|&e| edges[e as usize].2)
            .sum()
    };
    let key = |i: usize, g: u32| {
        (
            g,
            ScoreKey(score[i]),
            std::cmp::Reverse(input.nodes[i].id.clone()),
            i,
        )
    };
    let mut heap: BinaryHeap<(u32, ScoreKey, std::cmp::Reverse<String>, usize)> = (0..n)
        .filter(|&i| eligible[i] && !incident[i].is_empty())
        .map(|i| key(i, gain(i, &covered)))
        .collect();
    while covered_weight < target && chosen.len() < budget {
        let Some((g, _, _, i)) = heap.pop() else {
            break;
        };
        let fresh = gain(i, &covered);
        if fresh == 0 {
            continue;
        }
        if fresh < g {
            heap.push(key(i, fresh));
            continue;
        }
        let mut fresh_edges = 0;
        for &e in &incident[i] {
            if !covered[e as usize] {
                covered[e as usize] = true;
                covered_weight += u64::from(edges[e as usize].2);
                fresh_edges += 1;
            }
        }
        covers_at_pick[i] = fresh_edges;
        chosen.push(i);
    }
    (chosen, covers_at_pick)
}

/// Hubs: the top 1% by fan-in (at least 3) or by betweenness, by score, within the budget.
fn add_hubs(
    m: &Metrics,
    eligible_ids: &[usize],
    score: &[f64],
    input: &PlanInput,
    budget: usize,
    chosen: &mut Vec<usize>,
) {
    let (fan_ins, betweens) = sorted_metrics(m, eligible_ids);
    let mut hubs: Vec<usize> = eligible_ids
        .iter()
        .copied()
        .filter(|&i| {
            let fan_in = m.graph.into[i].len();
            (fan_in >= MIN_FAN_IN && percentile_rank(&fan_ins, fan_in as f64) < HUB_SHARE)
                || (m.betweenness[i] > 0.0
                    && percentile_rank(&betweens, m.betweenness[i]) < HUB_SHARE)
        })
        .collect();
    hubs.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(input.nodes[a].id.cmp(&input.nodes[b].id))
    });
    let mut seen: FxHashSet<usize> = chosen.iter().copied().collect();
    for i in hubs {
        if chosen.len() >= budget {
            break;
        }
        if seen.insert(i) {
            chosen.push(i);
        }
    }
}

/// Fan-ins and betweenness of the eligible symbols, each sorted ascending.
fn sorted_metrics(m: &Metrics, eligible_ids: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let mut fan_ins: Vec<f64> = eligible_ids
        .iter()
        .map(|&i| m.graph.into[i].len() as f64)
        .collect();
    let mut betweens: Vec<f64> = eligible_ids.iter().map(|&i| m.betweenness[i]).collect();
    fan_ins.sort_by(f64::total_cmp);
    betweens.sort_by(f64::total_cmp);
    (fan_ins, betweens)
}

/// The candidate records, in `chosen`'s order, with their reasons and metrics.
fn describe(
    m: &Metrics,
    eligible_ids: &[usize],
    score: &[f64],
    input: &PlanInput,
    chosen: &[usize],
    covers_at_pick: &[u32],
) -> Vec<Candidate> {
    let (fan_ins, betweens) = sorted_metrics(m, eligible_ids);
    let (all_b, all_p) = (largest(&m.betweenness), largest(&m.pagerank));
    chosen
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let mut reasons = Vec::new();
            let layers = m.calling_layers[i];
            if layers > 0 {
                reasons.push(format!(
                    "called from {layers} other layer{}",
                    if layers == 1 { "" } else { "s" }
                ));
            }
            if covers_at_pick[i] > 0 {
                reasons.push(format!(
                    "an end of {} product call or inheritance edge(s) no earlier pick covers",
                    covers_at_pick[i]
                ));
            }
            let b_rank = percentile_rank(&betweens, m.betweenness[i]);
            if m.betweenness[i] > 0.0 && b_rank < REASON_SHARE {
                reasons.push(format!("top {}% betweenness", percent(b_rank)));
            }
            let fan_in = m.graph.into[i].len();
            let f_rank = percentile_rank(&fan_ins, fan_in as f64);
            if fan_in >= MIN_FAN_IN && f_rank < REASON_SHARE {
                reasons.push(format!(
                    "used from {fan_in} places in the product (top {}%)",
                    percent(f_rank)
                ));
            }
            if reasons.is_empty() {
                reasons.push("next by score (centrality and size) within the budget".to_string());
            }
            Candidate {
                id: input.nodes[i].id.clone(),
                rank: rank as u32 + 1,
                score: score[i],
                reasons,
                metrics: CandidateMetrics {
                    fan_in: fan_in as u32,
                    fan_out: m.graph.out[i].len() as u32,
                    cross_layer_degree: m.cross_degree[i],
                    calling_layers: m.calling_layers[i],
                    betweenness: round(m.betweenness[i] / all_b),
                    pagerank: round(m.pagerank[i] / all_p),
                },
            }
        })
        .collect()
}

/// `0.004` → `1`: the smallest whole percent at or above a share (at least 1).
fn percent(share: f64) -> u32 {
    ((share * 100.0).ceil() as u32).max(1)
}

/// The largest of `values`, at least the smallest positive float (a divisor).
fn largest(values: &[f64]) -> f64 {
    values
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE)
}

/// A score as a totally ordered heap key.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ScoreKey(f64);

impl Eq for ScoreKey {}

impl PartialOrd for ScoreKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ScoreKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_counts_that_overflow_never_reach_a_record() {
        // 1,100 diamonds in a chain: 2^1100 shortest paths end to end, beyond f64.
        let mut input = PlanInput::default();
        let node = |id: String, layer: &str| PlanNode {
            file: format!("{layer}/f.py"),
            id,
            kind: NodeKind::Function,
            lines: 5,
            layer: Some(layer.to_string()),
            role: Role::Product,
            getter: false,
        };
        input.nodes.push(node("a/f.py::n0".into(), "a"));
        for d in 0..1100u32 {
            let top = input.nodes.len() as u32;
            input.nodes.push(node(format!("b/f.py::t{d}"), "b"));
            input.nodes.push(node(format!("b/f.py::u{d}"), "b"));
            input.nodes.push(node(format!("a/f.py::n{}", d + 1), "a"));
            let (from, next) = (top - 1, top + 2);
            for mid in [top, top + 1] {
                input.edges.push((from, mid, EdgeKind::Calls));
                input.edges.push((mid, next, EdgeKind::Calls));
            }
        }
        let (plan, _) = plan(&input, &PlanSettings::default(), None);
        assert!(!plan.candidates.is_empty());
        for c in &plan.candidates {
            assert!(
                c.score.is_finite() && c.metrics.betweenness.is_finite(),
                "{c:?}"
            );
            assert!(c.metrics.pagerank.is_finite());
        }
        assert!(plan.betweenness_covered.is_finite());
    }

    #[test]
    fn a_property_getter_is_never_a_candidate_however_central() {
        // A hub everyone reads, as a getter and as a plain method: only the method is planned.
        for getter in [true, false] {
            let mut input = PlanInput::default();
            let node = |id: &str, lines: u32, getter: bool| PlanNode {
                file: "a/f.py".into(),
                id: id.into(),
                kind: NodeKind::Method,
                lines,
                layer: Some("a".into()),
                role: Role::Product,
                getter,
            };
            input.nodes.push(node("a/f.py::C.headers", 12, getter));
            input.nodes.push(node("a/f.py::C.parse", 12, false));
            input.edges.push((0, 1, EdgeKind::Calls));
            for k in 0..30 {
                input
                    .nodes
                    .push(node(&format!("a/f.py::reader{k}"), 2, false));
                input
                    .edges
                    .push((input.nodes.len() as u32 - 1, 0, EdgeKind::Calls));
            }
            let (plan, _) = plan(&input, &PlanSettings::default(), None);
            let planned = plan.candidates.iter().any(|c| c.id == "a/f.py::C.headers");
            assert_eq!(planned, !getter, "getter: {getter}");
        }
    }
}
