//! The call path from A to B, preferring confident edges: a shortest path where an edge costs
//! `-ln(confidence)` plus a little per hop (so of equally sure paths the shorter wins).

use crate::graph::{location, Graph};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const HOP_COST: f64 = 0.05;
/// Symbols listed as "what A reaches" when there is no path.
const REACH_SHOWN: usize = 15;

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Step {
    pub id: String,
    pub layer: String,
    pub location: String,
    /// Of the call edge into this step (none for A), to 3 decimals.
    pub confidence: Option<f64>,
    /// Line of the call in the caller's file.
    pub call_line: Option<u32>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Trace {
    pub from: String,
    pub to: String,
    pub found: bool,
    /// The path, A first.
    pub path: Vec<Step>,
    /// With no path: how many symbols A's calls reach, and the nearest of them.
    pub reachable: usize,
    pub reaches: Vec<String>,
}

fn step(graph: &Graph, i: u32, edge: Option<u32>) -> Step {
    let symbol = graph.symbol(i);
    let edge = edge.map(|e| graph.index.edge(e));
    Step {
        id: symbol.id().into_owned(),
        layer: graph.layer_name(i).to_string(),
        location: location(&symbol),
        confidence: edge.map(|e| crate::answer::rounded(e.confidence)),
        call_line: edge.map(|e| e.line),
    }
}

pub fn trace(graph: &Graph, from: u32, to: u32) -> Trace {
    let n = graph.len();
    let mut cost = vec![f64::INFINITY; n];
    let mut back: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut heap = BinaryHeap::new();
    cost[from as usize] = 0.0;
    // Costs as integer micro-units, so the heap orders them totally.
    heap.push(Reverse((0u64, from)));
    while let Some(Reverse((c, at))) = heap.pop() {
        let c = c as f64 / 1e6;
        if c > cost[at as usize] || at == to {
            continue;
        }
        for (edge, next) in graph.callees(at) {
            let confidence = f64::from(graph.index.edge(edge).confidence).clamp(0.01, 1.0);
            let through = c - confidence.ln() + HOP_COST;
            if through < cost[next as usize] {
                cost[next as usize] = through;
                back[next as usize] = Some((at, edge));
                heap.push(Reverse(((through * 1e6) as u64, next)));
            }
        }
    }
    let mut result = Trace {
        from: graph.symbol(from).id().into_owned(),
        to: graph.symbol(to).id().into_owned(),
        found: false,
        path: Vec::new(),
        reachable: 0,
        reaches: Vec::new(),
    };
    if cost[to as usize].is_finite() {
        let mut steps = vec![];
        let mut at = to;
        while let Some((prev, edge)) = back[at as usize] {
            steps.push(step(graph, at, Some(edge)));
            at = prev;
        }
        steps.push(step(graph, from, None));
        steps.reverse();
        result.found = true;
        result.path = steps;
        return result;
    }
    // No path: what A does reach, nearest first (breadth-first, in id order per level).
    let mut seen = vec![false; n];
    seen[from as usize] = true;
    let mut queue = VecDeque::from([from]);
    let mut order = Vec::new();
    while let Some(at) = queue.pop_front() {
        let mut next: Vec<u32> = graph.callees(at).map(|(_, d)| d).collect();
        next.sort_by(|a, b| graph.symbol(*a).id().cmp(&graph.symbol(*b).id()));
        for d in next {
            if !seen[d as usize] {
                seen[d as usize] = true;
                order.push(d);
                queue.push_back(d);
            }
        }
    }
    result.reachable = order.len();
    result.reaches = order
        .iter()
        .take(REACH_SHOWN)
        .map(|&i| graph.symbol(i).id().into_owned())
        .collect();
    result
}
