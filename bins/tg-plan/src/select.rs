//! Which symbols are worth an intent, and why.
//!
//! Eligible: classes, functions, methods, structs, enums, unions and traits that are not in the
//! default (catch-all) layer, not test code, not generated code and not trivial (fewer than
//! `min_lines` lines and calling nothing); the `plan:` settings change these rules.
//!
//! Score, each part normalised by its largest value among eligible symbols:
//! `0.4 × betweenness + 0.3 × PageRank + 0.2 × cross-layer degree + 0.1 × fan-in`.
//!
//! Selection, within at most `max_share` of the eligible symbols:
//! 1. greedy coverage of cross-layer `calls` edges: repeatedly the eligible symbol that is an
//!    endpoint of the most cross-layer call edges not yet covered (ties: higher score, then id),
//!    until `coverage` of all of them has a selected endpoint, or none of those left has an
//!    eligible endpoint;
//! 2. hubs: eligible symbols in the top 1% by fan-in (at least 3) or by betweenness.
//!
//! Candidates are ranked by score (then id) and say why they were chosen.

use crate::metrics::{self, Betweenness, Graph};
use rustc_hash::FxHashSet;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};
use tg_shared::layers::PlanSettings;
use tg_shared::record::{Candidate, CandidateMetrics, EdgeKind, NodeKind};

/// What selection needs to know of a node.
#[derive(Debug, Clone)]
pub struct PlanNode {
    pub id: String,
    pub kind: NodeKind,
    pub file: String,
    pub lines: u32,
    pub layer: Option<String>,
}

/// The dependency graph of the stream, with each node's layer.
#[derive(Debug, Default)]
pub struct PlanInput {
    pub nodes: Vec<PlanNode>,
    /// (src, dst, kind) for calls, imports and inherits.
    pub edges: Vec<(u32, u32, EdgeKind)>,
    pub default_layer: Option<String>,
}

/// The plan and the figures behind it.
#[derive(Debug, Default)]
pub struct Plan {
    pub candidates: Vec<Candidate>,
    pub eligible: u64,
    pub cross_layer_calls: u64,
    /// Cross-layer call edges with an eligible endpoint: the ones selection can cover (an edge
    /// from test code into the catch-all layer has none).
    pub coverable_calls: u64,
    pub covered_calls: u64,
    /// Share of all betweenness mass that sits on the candidates.
    pub betweenness_covered: f64,
    pub betweenness: String,
}

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

/// Test code by the conventions of the three languages: `tests/`, `test/`, `testing/`
/// directories, `test_*.py`, `*_test.py`, `conftest.py`, `tests.rs`, `*_test.c`, and symbols
/// inside a Rust `mod tests` or named `test_*`.
pub fn is_test(node: &PlanNode) -> bool {
    let path = node.file.as_str();
    let file = path.rsplit('/').next().unwrap_or(path);
    let in_test_dir = path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| matches!(d, "tests" | "test" | "testing"));
    let stem = file.split('.').next().unwrap_or(file);
    let name = node.id.rsplit(['.', ':']).next().unwrap_or(&node.id);
    in_test_dir
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file == "conftest.py"
        || file == "tests.rs"
        || node.id.contains("::tests::")
        || name.starts_with("test_")
}

/// Generated code: protobuf outputs and files or directories named as generated.
pub fn is_generated(node: &PlanNode) -> bool {
    let path = node.file.as_str();
    path.contains("_pb2.py")
        || path.contains(".pb.")
        || path.split('/').any(|part| {
            part == "generated"
                || part == "gen"
                || part.contains("_generated")
                || part.contains("autogen")
        })
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

pub fn plan(input: &PlanInput, settings: &PlanSettings) -> Plan {
    let n = input.nodes.len();
    let mut graph = Graph::new(n);
    for &(src, dst, _) in &input.edges {
        graph.add(src, dst);
    }
    graph.finish();
    let pagerank = metrics::pagerank(&graph);
    let (betweenness, how) = metrics::betweenness(&graph);
    let betweenness: Vec<f64> = betweenness.into_iter().map(finite).collect();
    let pagerank: Vec<f64> = pagerank.into_iter().map(finite).collect();

    let layer = |i: usize| input.nodes[i].layer.as_deref();
    let eligible: Vec<bool> = input
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            is_rankable(node.kind)
                && (settings.include_default_layer
                    || input.default_layer.is_none()
                    || layer(i) != input.default_layer.as_deref())
                && (settings.include_tests || !is_test(node))
                && !is_generated(node)
                && !(node.lines < settings.min_lines && graph.out[i].is_empty())
        })
        .collect();
    let eligible_ids: Vec<usize> = (0..n).filter(|&i| eligible[i]).collect();

    let cross_degree: Vec<u32> = (0..n)
        .map(|i| {
            let neighbours: BTreeSet<u32> = graph.out[i]
                .iter()
                .chain(&graph.into[i])
                .copied()
                .filter(|&j| layer(j as usize) != layer(i))
                .collect();
            neighbours.len() as u32
        })
        .collect();
    let calling_layers: Vec<u32> = (0..n)
        .map(|i| {
            let layers: BTreeSet<&str> = graph.into[i]
                .iter()
                .filter_map(|&j| layer(j as usize))
                .filter(|l| Some(*l) != layer(i))
                .collect();
            layers.len() as u32
        })
        .collect();
    let max_of = |f: &dyn Fn(usize) -> f64| {
        eligible_ids
            .iter()
            .map(|&i| f(i))
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE)
    };
    let max_b = max_of(&|i| betweenness[i]);
    let max_p = max_of(&|i| pagerank[i]);
    let max_x = max_of(&|i| f64::from(cross_degree[i]));
    let max_f = max_of(&|i| graph.into[i].len() as f64);
    let all_b = betweenness
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let all_p = pagerank
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    // Rounded so that the ranking does not hang on the last bits of a float.
    let round = |x: f64| (x * 1e6).round() / 1e6;
    let score: Vec<f64> = (0..n)
        .map(|i| {
            round(
                0.4 * betweenness[i] / max_b
                    + 0.3 * pagerank[i] / max_p
                    + 0.2 * f64::from(cross_degree[i]) / max_x
                    + 0.1 * graph.into[i].len() as f64 / max_f,
            )
        })
        .collect();

    // 1. Greedy coverage of cross-layer call edges.
    let mut calls: Vec<(u32, u32)> = input
        .edges
        .iter()
        .filter(|(s, d, k)| *k == EdgeKind::Calls && layer(*s as usize) != layer(*d as usize))
        .map(|(s, d, _)| (*s, *d))
        .collect();
    calls.sort_unstable();
    calls.dedup();
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (e, &(s, d)) in calls.iter().enumerate() {
        for end in [s, d] {
            if eligible[end as usize] {
                incident[end as usize].push(e as u32);
            }
        }
    }
    let cap = ((settings.max_share * eligible_ids.len() as f64).floor() as usize).max(1);
    let coverable = calls
        .iter()
        .filter(|(s, d)| eligible[*s as usize] || eligible[*d as usize])
        .count();
    // The aim is a share of all cross-layer calls; edges with no eligible end can never be
    // covered, so the greedy pass also stops when nothing coverable is left.
    let target = (settings.coverage * calls.len() as f64).ceil() as usize;
    let mut covered = vec![false; calls.len()];
    let mut covered_count = 0usize;
    let mut chosen: Vec<usize> = Vec::new();
    let mut chosen_set: FxHashSet<usize> = FxHashSet::default();
    let mut covers_at_pick: Vec<u32> = vec![0; n];
    let key = |i: usize, count: usize| {
        (
            count,
            ScoreKey(score[i]),
            std::cmp::Reverse(input.nodes[i].id.clone()),
        )
    };
    let mut heap: BinaryHeap<(usize, ScoreKey, std::cmp::Reverse<String>, usize)> = eligible_ids
        .iter()
        .filter(|&&i| !incident[i].is_empty())
        .map(|&i| {
            let (c, s, id) = key(i, incident[i].len());
            (c, s, id, i)
        })
        .collect();
    while covered_count < target && chosen.len() < cap {
        let Some((count, _, _, i)) = heap.pop() else {
            break;
        };
        let fresh = incident[i]
            .iter()
            .filter(|&&e| !covered[e as usize])
            .count();
        if fresh == 0 {
            continue;
        }
        if fresh < count {
            let (c, s, id) = key(i, fresh);
            heap.push((c, s, id, i));
            continue;
        }
        for &e in &incident[i] {
            if !covered[e as usize] {
                covered[e as usize] = true;
                covered_count += 1;
            }
        }
        covers_at_pick[i] = fresh as u32;
        chosen.push(i);
        chosen_set.insert(i);
    }

    // 2. Hubs: the top 1% by fan-in (at least 3) or by betweenness.
    let mut fan_ins: Vec<f64> = eligible_ids
        .iter()
        .map(|&i| graph.into[i].len() as f64)
        .collect();
    let mut betweens: Vec<f64> = eligible_ids.iter().map(|&i| betweenness[i]).collect();
    fan_ins.sort_by(f64::total_cmp);
    betweens.sort_by(f64::total_cmp);
    let mut hubs: Vec<usize> = eligible_ids
        .iter()
        .copied()
        .filter(|&i| {
            (graph.into[i].len() >= 3
                && percentile_rank(&fan_ins, graph.into[i].len() as f64) < 0.01)
                || (betweenness[i] > 0.0 && percentile_rank(&betweens, betweenness[i]) < 0.01)
        })
        .collect();
    hubs.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(input.nodes[a].id.cmp(&input.nodes[b].id))
    });
    for i in hubs {
        if chosen.len() >= cap {
            break;
        }
        if chosen_set.insert(i) {
            chosen.push(i);
        }
    }

    chosen.sort_by(|&a, &b| {
        score[b]
            .total_cmp(&score[a])
            .then(input.nodes[a].id.cmp(&input.nodes[b].id))
    });
    let total_b: f64 = betweenness.iter().sum();
    let chosen_b: f64 = chosen.iter().map(|&i| betweenness[i]).sum();
    let candidates = chosen
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let mut reasons = Vec::new();
            if calling_layers[i] > 0 {
                reasons.push(format!(
                    "called from {} other layer{}",
                    calling_layers[i],
                    if calling_layers[i] == 1 { "" } else { "s" }
                ));
            }
            if covers_at_pick[i] > 0 {
                reasons.push(format!(
                    "covers {} cross-layer call edge(s)",
                    covers_at_pick[i]
                ));
            }
            let b_rank = percentile_rank(&betweens, betweenness[i]);
            if betweenness[i] > 0.0 && b_rank < 0.05 {
                reasons.push(format!("top {}% betweenness", percent(b_rank)));
            }
            let fan_in = graph.into[i].len();
            let f_rank = percentile_rank(&fan_ins, fan_in as f64);
            if fan_in >= 3 && f_rank < 0.05 {
                reasons.push(format!(
                    "used from {fan_in} places (top {}%)",
                    percent(f_rank)
                ));
            }
            Candidate {
                id: input.nodes[i].id.clone(),
                rank: rank as u32 + 1,
                score: score[i],
                reasons,
                metrics: CandidateMetrics {
                    fan_in: fan_in as u32,
                    fan_out: graph.out[i].len() as u32,
                    cross_layer_degree: cross_degree[i],
                    calling_layers: calling_layers[i],
                    betweenness: round(betweenness[i] / all_b),
                    pagerank: round(pagerank[i] / all_p),
                },
            }
        })
        .collect();
    Plan {
        candidates,
        eligible: eligible_ids.len() as u64,
        cross_layer_calls: calls.len() as u64,
        coverable_calls: coverable as u64,
        covered_calls: calls
            .iter()
            .filter(|(s, d)| {
                chosen_set.contains(&(*s as usize)) || chosen_set.contains(&(*d as usize))
            })
            .count() as u64,
        betweenness_covered: if total_b > 0.0 {
            round(chosen_b / total_b).max(0.0)
        } else {
            0.0
        },
        betweenness: match how {
            Betweenness::Exact => "exact".to_string(),
            Betweenness::Sampled(k) => format!("sampled from {k} sources"),
        },
    }
}

/// `0.004` → `1`: the smallest whole percent at or above a share (at least 1).
fn percent(share: f64) -> u32 {
    ((share * 100.0).ceil() as u32).max(1)
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
        let plan = plan(&input, &PlanSettings::default());
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
}
