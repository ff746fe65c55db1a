//! What tg-plan learned of the last whole stream it read ([`crate::Seen`] but for the tail's
//! records, which every patch carries whole), kept in the store so that a patch of that stream
//! ([`crate::patched`]) is applied to it instead of reading the stream again.

use crate::select::PlanNode;
use crate::Seen;
use serde::{Deserialize, Serialize};
use tg_shared::codec;
use tg_shared::record::EdgeKind;
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};

/// Bumped when the layout or meaning of the state changes: an older state is then not applied.
const REVISION: u32 = 1;

#[derive(Deserialize)]
struct Saved {
    revision: u32,
    /// The fingerprint of the stream the state is of (its header's).
    stream: String,
    /// The intents' digest the nodes' `current_intent` was found with.
    intents: String,
    nodes: Vec<PlanNode>,
    current_intent: Vec<bool>,
    edges: Vec<(u32, u32, EdgeKind)>,
    total_nodes: u64,
}

/// [`Saved`] as it is written, borrowing what it writes (the same encoding).
#[derive(Serialize)]
struct ToSave<'a> {
    revision: u32,
    stream: &'a str,
    intents: &'a str,
    nodes: &'a [PlanNode],
    current_intent: &'a [bool],
    edges: &'a [(u32, u32, EdgeKind)],
    total_nodes: u64,
}

/// Keeps what `seen` holds as the state of the stream `stream`, or, when there is none (a
/// stream without a fingerprint) or the stream is irregular ([`Seen::irregular`]), removes the
/// state so that no patch is applied to an older one. A state that cannot be written is only a lost shortcut: the next patch is refused.
pub fn save(store: &Store, stream: Option<&str>, intents: &str, seen: &Seen) {
    let path = store.plan_state_path();
    let Ok(_lock) = store.lock() else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let Some(stream) = stream.filter(|_| !seen.irregular) else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let saved = ToSave {
        revision: REVISION,
        stream,
        intents,
        nodes: &seen.nodes,
        current_intent: &seen.current_intent,
        edges: &seen.edges,
        total_nodes: seen.total_nodes,
    };
    let written = store::AtomicFile::create(&path).and_then(|mut file| {
        codec::encode_sealed_into(&saved, &mut file).map_err(std::io::Error::other)?;
        file.commit()
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&path);
    }
}

/// The state of the stream `base` found with the intents `intents`; why not, when it is
/// missing, damaged, or of another stream or other intents.
pub fn load(store: &Store, base: &str, intents: &str) -> Result<Seen, Failure> {
    let path = store.plan_state_path();
    let saved: Saved = codec::decode_sealed_file(&path)
        .map_err(|e| no_base(&format!("{}: {e}", path.display())))?;
    if saved.revision != REVISION {
        return Err(no_base(&format!(
            "{} was written by another version",
            path.display()
        )));
    }
    if saved.stream != base {
        return Err(no_base(&format!(
            "the last stream planned is {}, the patch's base {base}",
            saved.stream
        )));
    }
    if saved.intents != intents {
        return Err(no_base(
            "the intents changed since the last stream (.tldrgraph/intents.ndjson)",
        ));
    }
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
    Failure::new(
        tg_shared::exit::NO_BASE,
        format!("cannot apply the patch: {why}"),
    )
    .with_hint("run the whole stream through tg-plan (tg-extract without --patch)")
}
