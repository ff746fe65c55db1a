//! A patch applied to what tg-plan read of the stream it leads from ([`crate::state`]): the
//! replaced files' nodes are swapped in place (the nodes stay in stream order, which ranking's
//! sampled sources depend on), the edges leaving them replaced, the other edges renumbered.
//! tg-plan changes no record of the stream, so its patch is the patch it read with its own
//! records in the tail.

use crate::state::{self, no_base};
use crate::{is_ranked_edge, Seen};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use tg_shared::intents::IntentStore;
use tg_shared::ndjson::Item;
use tg_shared::patch::Patch;
use tg_shared::record::{Edge, Node, Record};
use tg_shared::stage::{Failure, Output, Owned};
use tg_shared::store::Store;

/// Where no node is: an index past any graph.
const GONE: u32 = u32::MAX;

/// A section's records: each file's nodes (by path), and the edges.
#[derive(Default)]
struct Section<'p> {
    files: BTreeMap<&'p str, Vec<&'p Node>>,
    edges: Vec<&'p Edge>,
}

impl<'p> Section<'p> {
    fn of(items: &'p [Item]) -> Result<Self, Failure> {
        let mut section = Section::default();
        let mut file: Option<&str> = None;
        for item in items {
            match &item.record {
                Some(Record::File(record)) => {
                    file = Some(&record.path);
                    section.files.entry(&record.path).or_default();
                }
                Some(Record::Node(node)) => match file {
                    Some(path) => section.files.entry(path).or_default().push(node),
                    None => {
                        return Err(no_base(&format!(
                            "line {}: a node before any file",
                            item.line
                        )))
                    }
                },
                Some(Record::Edge(edge)) => section.edges.push(edge),
                _ => {}
            }
        }
        Ok(section)
    }
}

/// The state of the patch's base with the patch applied.
pub fn apply(store: &Store, intents: &IntentStore, patch: &Patch) -> Result<Seen, Failure> {
    let old = state::load(store, &patch.of.base, intents.digest())?;
    let removed = Section::of(&patch.removed)?;
    let added = Section::of(&patch.added)?;
    let mut paths: Vec<&str> = removed
        .files
        .keys()
        .chain(added.files.keys())
        .copied()
        .collect();
    paths.sort_unstable();
    paths.dedup();
    let mut seen = Seen {
        total_nodes: old.total_nodes,
        ..Seen::default()
    };
    for item in &patch.tail {
        seen.observe_tail(item.record.as_ref());
    }
    // Only the edges leaving a replaced file's nodes are replaced: any other is not a patch of
    // tg-extract's.
    let replaced: rustc_hash::FxHashSet<&str> = (removed.files.values())
        .chain(added.files.values())
        .flatten()
        .map(|node| node.id.as_str())
        .collect();
    let edges = removed.edges.iter().chain(&added.edges);
    if let Some(edge) = edges
        .into_iter()
        .find(|e| !replaced.contains(e.src.as_str()))
    {
        return Err(no_base(&format!(
            "changes an edge from {}, which is not a node of a file it replaces",
            edge.src
        )));
    }
    let moved = swap_nodes(&old, &mut seen, intents, &paths, (&removed, &added))?;
    renumber_edges(&old, &mut seen, &moved)?;
    let new_ids = added.files.values().flatten().map(|node| node.id.as_str());
    add_edges(&mut seen, &added.edges, new_ids)?;
    Ok(seen)
}

/// Where each node of the old state went.
struct Moved {
    /// Its new index, [`GONE`] when it left.
    to: Vec<u32>,
    /// Whether it was a node of a replaced file (the edges leaving it are in the patch).
    replaced: Vec<bool>,
}

/// The nodes of `old` with each replaced file's nodes swapped for the added ones, into `seen`.
fn swap_nodes(
    old: &Seen,
    seen: &mut Seen,
    intents: &IntentStore,
    paths: &[&str],
    (removed, added): (&Section, &Section),
) -> Result<Moved, Failure> {
    let mut moved = Moved {
        to: vec![GONE; old.nodes.len()],
        replaced: vec![false; old.nodes.len()],
    };
    let mut copied = 0usize;
    let keep = |seen: &mut Seen, moved: &mut Moved, range: std::ops::Range<usize>| {
        for at in range {
            moved.to[at] = seen.nodes.len() as u32;
            seen.nodes.push(old.nodes[at].clone());
            seen.current_intent.push(old.current_intent[at]);
        }
    };
    for path in paths {
        let start = old.nodes.partition_point(|n| n.file.as_str() < *path);
        let end = old.nodes.partition_point(|n| n.file.as_str() <= *path);
        let (gone, new) = (removed.files.get(path), added.files.get(path));
        let gone_ids = gone.into_iter().flatten().map(|n| n.id.as_str());
        if start < copied
            || !old.nodes[start..end]
                .iter()
                .map(|n| n.id.as_str())
                .eq(gone_ids)
        {
            return Err(no_base(&format!(
                "the nodes it removes from {path} are not those the last stream holds"
            )));
        }
        keep(seen, &mut moved, copied..start);
        let mut put: FxHashMap<&str, u32> = FxHashMap::default();
        for node in new.into_iter().flatten() {
            put.insert(&node.id, seen.nodes.len() as u32);
            seen.push_node(node, intents);
        }
        for at in start..end {
            moved.to[at] = put.get(old.nodes[at].id.as_str()).copied().unwrap_or(GONE);
            moved.replaced[at] = true;
        }
        seen.total_nodes =
            (seen.total_nodes + put.len() as u64).saturating_sub((end - start) as u64);
        copied = end;
    }
    keep(seen, &mut moved, copied..old.nodes.len());
    Ok(moved)
}

/// The edges of `old` that leave no replaced node, renumbered; one that reaches a node the
/// patch took out for good means the patch does not fit.
fn renumber_edges(old: &Seen, seen: &mut Seen, moved: &Moved) -> Result<(), Failure> {
    seen.edges.reserve(old.edges.len());
    for &(src, dst, kind) in &old.edges {
        if moved.replaced[src as usize] {
            continue;
        }
        match moved.to[dst as usize] {
            GONE => {
                return Err(no_base(&format!(
                    "removes {}, which edges it does not hold still reach",
                    old.nodes[dst as usize].id
                )))
            }
            to => seen.edges.push((moved.to[src as usize], to, kind)),
        }
    }
    Ok(())
}

/// The patch's added edges between nodes of the stream, by the nodes' new indices; an added
/// node whose id another node holds too means the patch does not fit (a whole run would keep
/// the first).
fn add_edges<'p>(
    seen: &mut Seen,
    edges: &[&'p Edge],
    new_ids: impl Iterator<Item = &'p str>,
) -> Result<(), Failure> {
    let ranked = || edges.iter().filter(|e| is_ranked_edge(e));
    let mut wanted: FxHashMap<&str, u32> = new_ids.map(|id| (id, GONE)).collect();
    for edge in ranked() {
        wanted.insert(&edge.src, GONE);
        wanted.insert(&edge.dst, GONE);
    }
    for (at, node) in seen.nodes.iter().enumerate() {
        if let Some(slot) = wanted.get_mut(node.id.as_str()) {
            if *slot != GONE {
                return Err(no_base(&format!("repeats the id {}", node.id)));
            }
            *slot = at as u32;
        }
    }
    for edge in ranked() {
        match (wanted[edge.src.as_str()], wanted[edge.dst.as_str()]) {
            (GONE, _) | (_, GONE) => seen.irregular = true,
            (src, dst) => seen.edges.push((src, dst, edge.kind)),
        }
    }
    Ok(())
}

/// Writes this stage's patch up to its own records: the patch's header and sections as read
/// (tg-plan changes no file, node or edge), then the tail's records but those of an earlier
/// tg-plan.
pub fn write_head(patch: &Patch, output: &mut Output, owned: &Owned) -> Result<(), Failure> {
    fn raw(items: &[Item]) -> Vec<&str> {
        items.iter().map(|item| item.raw.as_str()).collect()
    }
    tg_shared::patch::write_head(
        output,
        &patch.header,
        [raw(&patch.removed), raw(&patch.added)],
    )?;
    for item in &patch.tail {
        if !owned.owns(item.record.as_ref()) {
            output.line(&item.raw)?;
        }
    }
    Ok(())
}
