//! A patch applied to the tallies of the stream it leads from ([`crate::state`]): the removed
//! records are classified as they were and counted out, the added ones classified and counted
//! in, and the stage writes its own patch (the removed and added lines as it writes them, and
//! its tail) with the artifacts a whole run of the patched stream gives.

use crate::classify::{self, Tally};
use rustc_hash::FxHashMap;
use tg_shared::layers::LayerConfig;
use tg_shared::ndjson::Item;
use tg_shared::patch::Patch;
use tg_shared::record::Record;
use tg_shared::stage::Failure;

/// The fan-in and fan-out a removed node kept from edges the patch does not touch.
type Residue = FxHashMap<String, (u32, u32, usize)>;

/// Takes the patch's removed records out of `tally`; their lines as this stage wrote them.
pub fn remove(
    config: &LayerConfig,
    tally: &mut Tally,
    removed: &[Item],
) -> Result<(Vec<String>, Residue), Failure> {
    let mut lines = Vec::with_capacity(removed.len());
    // Edges first, while their ends are still nodes, marked as they were.
    tally.forget_class_violations();
    for item in removed {
        let line = match &item.record {
            Some(Record::Node(node)) => {
                classify::classify_node(config, &tally.overrides, node, &item.raw).1
            }
            Some(Record::Edge(edge)) => {
                let marks = classify::edge_marks(config, tally, edge);
                if let Some(marks) = &marks {
                    classify::count_edge(tally, edge, marks, false);
                }
                classify::marked_line(edge, marks.as_ref(), &item.raw)
            }
            _ => item.raw.clone(),
        };
        lines.push(line);
    }
    let mut residue = Residue::default();
    for item in removed {
        match &item.record {
            Some(Record::Node(node)) => {
                let Some(info) = tally.remove_node(&node.id) else {
                    return Err(not_the_base(&format!(
                        "removes node {}, which the last stream does not hold",
                        node.id
                    )));
                };
                residue.insert(info.id, (info.fan_in, info.fan_out, info.layer));
            }
            Some(Record::File(file)) => {
                tally.files.remove(&file.path);
            }
            _ => {}
        }
    }
    Ok((lines, residue))
}

/// Puts the patch's added records into `tally`; their lines as this stage writes them. A
/// node put back keeps the edges the patch did not touch; one taken out for good must have
/// none left, and one put back must keep its layer (the untouched edges' marks depend on it).
pub fn add(
    config: &LayerConfig,
    tally: &mut Tally,
    added: &[Item],
    mut residue: Residue,
) -> Result<Vec<String>, Failure> {
    let mut lines = vec![String::new(); added.len()];
    for (item, line) in added.iter().zip(&mut lines) {
        match &item.record {
            Some(Record::Node(node)) => {
                let (mut info, text) =
                    classify::classify_node(config, &tally.overrides, node, &item.raw);
                if let Some((fan_in, fan_out, layer)) = residue.remove(&node.id) {
                    if layer != info.layer && (fan_in, fan_out) != (0, 0) {
                        return Err(not_the_base(&format!(
                            "moves {} to another layer while edges it does not hold reach it",
                            node.id
                        )));
                    }
                    (info.fan_in, info.fan_out) = (fan_in, fan_out);
                }
                if tally.node(&node.id).is_some() {
                    return Err(not_the_base(&format!(
                        "adds node {}, which the stream holds already",
                        node.id
                    )));
                }
                tally.push_node(info);
                *line = text;
            }
            Some(Record::File(file)) => {
                tally.files.insert(file.path.clone(), file.lines);
                *line = item.raw.clone();
            }
            _ => {}
        }
    }
    if let Some((id, _)) = residue.iter().find(|(_, r)| (r.0, r.1) != (0, 0)) {
        return Err(not_the_base(&format!(
            "removes {id} while edges it does not hold still reach it"
        )));
    }
    tally.forget_class_violations();
    for (item, line) in added.iter().zip(&mut lines) {
        if let Some(Record::Edge(edge)) = &item.record {
            *line = classify::edge_line(config, tally, edge, &item.raw);
        }
    }
    Ok(lines)
}

/// A patch that does not fit the state it names as its base.
fn not_the_base(what: &str) -> Failure {
    tg_shared::patch::no_base(crate::STAGE, &format!("it {what}"))
}

/// The patch's removed and added sections as this stage writes them.
pub struct Applied {
    pub removed: Vec<String>,
    pub added: Vec<String>,
}

/// Applies `patch`'s removed and added sections to `tally`.
pub fn apply(config: &LayerConfig, tally: &mut Tally, patch: &Patch) -> Result<Applied, Failure> {
    let (removed, residue) = remove(config, tally, &patch.removed)?;
    let added = add(config, tally, &patch.added, residue)?;
    Ok(Applied { removed, added })
}
