//! What tg-plan learned of the last whole stream it read ([`crate::Seen`] but for the tail's
//! records, which every patch carries whole), kept in the store so that a patch of that stream
//! ([`crate::patched`]) is applied to it instead of reading the stream again.

use crate::select::PlanNode;
use crate::Seen;
use serde::{Deserialize, Serialize};
use tg_shared::patch::{KeptState, StateHead};
use tg_shared::record::EdgeKind;
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// Bumped when the layout or meaning of the state changes: an older state is then not applied.
const REVISION: u32 = 1;

#[derive(Deserialize)]
struct Saved {
    head: StateHead,
    nodes: Vec<PlanNode>,
    current_intent: Vec<bool>,
    edges: Vec<(u32, u32, EdgeKind)>,
    total_nodes: u64,
}

/// [`Saved`] as it is written, borrowing what it writes (the same encoding).
#[derive(Serialize)]
struct ToSave<'a> {
    head: StateHead,
    nodes: &'a [PlanNode],
    current_intent: &'a [bool],
    edges: &'a [(u32, u32, EdgeKind)],
    total_nodes: u64,
}

fn kept(store: &Store) -> KeptState<'_> {
    KeptState {
        stage: crate::STAGE,
        path: store.plan_state_path(),
        store,
    }
}

/// Keeps what `seen` holds as the state of the stream `stream` (its nodes' intents judged by
/// the intents of digest `intents`); none is kept for a stream without a fingerprint or an
/// irregular one ([`Seen::irregular`]).
pub fn save(store: &Store, stream: Option<&str>, intents: &str, seen: &Seen) {
    let saved = stream.filter(|_| !seen.irregular).map(|stream| ToSave {
        head: StateHead {
            revision: REVISION,
            stream: stream.to_string(),
            settings: intents.to_string(),
        },
        nodes: &seen.nodes,
        current_intent: &seen.current_intent,
        edges: &seen.edges,
        total_nodes: seen.total_nodes,
    });
    kept(store).save(saved.as_ref());
}

/// The state of the stream `base` found with the intents `intents`; why not, when it is
/// missing, damaged, or of another stream or other intents.
pub fn load(store: &Store, base: &str, intents: &str) -> Result<Seen, Failure> {
    let changed = "the intents (.tldrgraph/intents.ndjson) changed";
    let saved: Saved = kept(store).load(|s: &Saved| &s.head, (REVISION, base, intents), changed)?;
    Ok(Seen {
        nodes: saved.nodes,
        current_intent: saved.current_intent,
        edges: saved.edges,
        total_nodes: saved.total_nodes,
        ..Seen::default()
    })
}

/// A patch this stage cannot apply ([`tg_shared::exit::NO_BASE`]).
pub fn no_base(why: &str) -> Failure {
    tg_shared::patch::no_base(crate::STAGE, why)
}
