//! Graph metrics on the dependency graph (calls, imports, inherits): PageRank and betweenness
//! centrality. Both are deterministic: the same graph gives the same numbers, bit for bit.

use rayon::prelude::*;
use std::collections::VecDeque;

/// A directed graph on nodes `0..n`, each edge once.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    pub out: Vec<Vec<u32>>,
    pub into: Vec<Vec<u32>>,
}

impl Graph {
    pub fn new(n: usize) -> Self {
        Graph {
            out: vec![Vec::new(); n],
            into: vec![Vec::new(); n],
        }
    }

    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Sorts and dedups the adjacency lists (call once, after adding every edge).
    pub fn finish(&mut self) {
        for list in self.out.iter_mut().chain(self.into.iter_mut()) {
            list.sort_unstable();
            list.dedup();
        }
    }

    pub fn add(&mut self, src: u32, dst: u32) {
        if src != dst {
            self.out[src as usize].push(dst);
            self.into[dst as usize].push(src);
        }
    }
}

/// Both metrics of one graph.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ranked {
    pub pagerank: Vec<f64>,
    pub betweenness: Vec<f64>,
    pub how: Betweenness,
}

/// What names the metrics' definitions: a change to either function changes it, so a memo of
/// an older build is never taken.
const METRICS_REVISION: u32 = 1;

/// The memo of the last ranking: the key of the graph it ranked, and its metrics.
#[derive(serde::Serialize, serde::Deserialize)]
struct Memo {
    key: Vec<u8>,
    ranked: Ranked,
}

/// A hash of the graph's edges (the in-lists follow from them).
fn graph_key(graph: &Graph) -> Vec<u8> {
    let mut hasher = tg_shared::hash::Hasher::new();
    hasher.update(&METRICS_REVISION.to_le_bytes());
    hasher.update(&(graph.len() as u64).to_le_bytes());
    for list in &graph.out {
        hasher.update(&(list.len() as u32).to_le_bytes());
        for &dst in list {
            hasher.update(&dst.to_le_bytes());
        }
    }
    hasher.finish_raw().to_vec()
}

/// PageRank and betweenness of `graph`. Both are a function of the graph alone, bit for bit,
/// so the last ranking kept at `memo` is taken when it ranked this very graph: an edit that
/// changes no dependency between product symbols (most edits inside a body) ranks nothing.
/// Whether the memo was taken comes back beside the metrics. A memo that is missing, damaged
/// or of another graph only means ranking; failing to keep the new one only slows the next.
pub fn rank(graph: &Graph, memo: Option<&std::path::Path>) -> (Ranked, bool) {
    let key = graph_key(graph);
    if let Some(path) = memo {
        if let Ok(kept) = tg_shared::codec::decode_sealed_file::<Memo>(path) {
            if kept.key == key && kept.ranked.pagerank.len() == graph.len() {
                return (kept.ranked, true);
            }
        }
    }
    let pagerank = pagerank(graph);
    let (betweenness, how) = betweenness(graph);
    let ranked = Ranked {
        pagerank,
        betweenness,
        how,
    };
    if let Some(path) = memo {
        let memo = Memo {
            key,
            ranked: ranked.clone(),
        };
        if let Ok(bytes) = tg_shared::codec::encode_sealed(&memo) {
            let _ = tg_shared::store::write_atomic(path, &bytes);
        }
    }
    (ranked, false)
}

/// PageRank's damping factor (the usual one) and its fixed number of iterations.
const DAMPING: f64 = 0.85;
const PAGERANK_ITERATIONS: usize = 50;

/// PageRank with damping [`DAMPING`] and [`PAGERANK_ITERATIONS`] iterations; a dependency
/// passes rank to what it depends on, and nodes with no dependencies spread theirs evenly.
pub fn pagerank(graph: &Graph) -> Vec<f64> {
    let n = graph.len();
    if n == 0 {
        return Vec::new();
    }
    let damping = DAMPING;
    let base = (1.0 - damping) / n as f64;
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..PAGERANK_ITERATIONS {
        let dangling: f64 = (0..n)
            .filter(|&v| graph.out[v].is_empty())
            .map(|v| rank[v])
            .sum();
        let spread = damping * dangling / n as f64;
        // What each node gives each of its out-edges: divided once per node, not per edge
        // (the same quotient, so the same sums).
        let share: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|u| rank[u] / graph.out[u].len() as f64)
            .collect();
        let next: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|v| {
                let incoming: f64 = graph.into[v].iter().map(|&u| share[u as usize]).sum();
                base + spread + damping * incoming
            })
            .collect();
        rank = next;
    }
    rank
}

/// Graphs up to this many nodes get exact betweenness; larger ones are sampled.
pub const EXACT_LIMIT: usize = 4000;
/// Sources sampled on a large graph.
pub const SAMPLES: usize = 256;
/// The fixed seed of the sample, so a large graph ranks the same on every run.
const SEED: u64 = 0x7464_6772_6170_6800;

/// How betweenness was computed, for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Betweenness {
    Exact,
    Sampled(usize),
}

/// Brandes' betweenness centrality (unweighted, directed), exact on small graphs and from a
/// fixed-seed sample of sources on large ones (scaled by n / samples).
pub fn betweenness(graph: &Graph) -> (Vec<f64>, Betweenness) {
    let n = graph.len();
    let (sources, how): (Vec<u32>, Betweenness) = if n <= EXACT_LIMIT {
        ((0..n as u32).collect(), Betweenness::Exact)
    } else {
        (sample(n, SAMPLES), Betweenness::Sampled(SAMPLES))
    };
    let scale = n as f64 / sources.len().max(1) as f64;
    // Fixed chunks summed in order: the floating-point sums do not depend on thread timing.
    let partials: Vec<Vec<f64>> = sources
        .par_chunks(32)
        .map(|chunk| {
            let mut acc = vec![0.0; n];
            let mut state = Brandes::new(n);
            for &s in chunk {
                state.accumulate(graph, s, &mut acc);
            }
            acc
        })
        .collect();
    let mut total = vec![0.0; n];
    for partial in partials {
        for (t, p) in total.iter_mut().zip(partial) {
            *t += p;
        }
    }
    if how != Betweenness::Exact {
        for t in &mut total {
            *t *= scale;
        }
    }
    (total, how)
}

/// `count` distinct sources out of `0..n`, chosen by splitmix64 from a fixed seed, sorted.
fn sample(n: usize, count: usize) -> Vec<u32> {
    let mut state = SEED;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut chosen = std::collections::BTreeSet::new();
    while chosen.len() < count.min(n) {
        chosen.insert((next() % n as u64) as u32);
    }
    chosen.into_iter().collect()
}

/// Scratch space for one source at a time.
struct Brandes {
    sigma: Vec<f64>,
    dist: Vec<i64>,
    delta: Vec<f64>,
    order: Vec<u32>,
    queue: VecDeque<u32>,
}

impl Brandes {
    fn new(n: usize) -> Self {
        Brandes {
            sigma: vec![0.0; n],
            dist: vec![-1; n],
            delta: vec![0.0; n],
            order: Vec::with_capacity(n),
            queue: VecDeque::new(),
        }
    }

    fn accumulate(&mut self, graph: &Graph, s: u32, acc: &mut [f64]) {
        for &v in &self.order {
            self.sigma[v as usize] = 0.0;
            self.dist[v as usize] = -1;
            self.delta[v as usize] = 0.0;
        }
        self.order.clear();
        self.sigma[s as usize] = 1.0;
        self.dist[s as usize] = 0;
        self.queue.push_back(s);
        while let Some(v) = self.queue.pop_front() {
            self.order.push(v);
            let dv = self.dist[v as usize];
            for &w in &graph.out[v as usize] {
                let wi = w as usize;
                if self.dist[wi] < 0 {
                    self.dist[wi] = dv + 1;
                    self.queue.push_back(w);
                }
                if self.dist[wi] == dv + 1 {
                    self.sigma[wi] += self.sigma[v as usize];
                }
            }
        }
        for &w in self.order.iter().rev() {
            let wi = w as usize;
            for &v in &graph.into[wi] {
                let vi = v as usize;
                if self.dist[vi] >= 0 && self.dist[vi] + 1 == self.dist[wi] {
                    self.delta[vi] += self.sigma[vi] / self.sigma[wi] * (1.0 + self.delta[wi]);
                }
            }
            if w != s {
                acc[wi] += self.delta[wi];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut g = Graph::new(n);
        for &(a, b) in edges {
            g.add(a, b);
        }
        g.finish();
        g
    }

    #[test]
    fn a_bridge_carries_all_the_paths_through_it() {
        // 0 -> 1 -> 2 -> 3 -> 4: the middle lies on the most shortest paths.
        let g = graph(5, &[(0, 1), (1, 2), (2, 3), (3, 4)]);
        let (b, how) = betweenness(&g);
        assert_eq!(how, Betweenness::Exact);
        assert_eq!(b, vec![0.0, 3.0, 4.0, 3.0, 0.0]);
    }

    #[test]
    fn pagerank_flows_to_what_many_depend_on() {
        let g = graph(4, &[(0, 3), (1, 3), (2, 3)]);
        let rank = pagerank(&g);
        assert!(rank[3] > rank[0] * 2.0, "{rank:?}");
        assert!((rank.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(rank, pagerank(&g), "deterministic");
    }

    #[test]
    fn sampling_is_fixed_by_the_seed() {
        assert_eq!(sample(10_000, 8), sample(10_000, 8));
        assert_eq!(sample(5, 8), vec![0, 1, 2, 3, 4]);
    }

    /// The last ranking is taken for the same graph only; any other, or a damaged memo, is
    /// ranked again, with the numbers ranking afresh gives.
    #[test]
    fn the_last_ranking_is_taken_for_the_same_graph_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memo = dir.path().join("plan.metrics");
        let first = graph(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (0, 2)]);
        let (ranked, reused) = rank(&first, Some(&memo));
        assert!(!reused);
        assert_eq!(ranked, rank(&first, None).0);
        assert_eq!(rank(&first, Some(&memo)), (ranked.clone(), true));

        let other = graph(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (0, 3)]);
        let (fresh, reused) = rank(&other, Some(&memo));
        assert!(!reused);
        assert_eq!(fresh, rank(&other, None).0);
        assert_ne!(fresh, ranked);

        let mut bytes = std::fs::read(&memo).expect("the memo");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&memo, bytes).expect("damage it");
        assert_eq!(rank(&other, Some(&memo)), (fresh, false));
    }
}
