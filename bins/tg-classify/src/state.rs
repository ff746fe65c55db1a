//! The tallies of the last whole stream this stage read, kept in the store so that a patch of
//! that stream ([`crate::patched`]) is applied to them instead of reading the stream again.

use crate::classify::Tally;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tg_shared::layers::LayerConfig;
use tg_shared::patch::{KeptState, StateHead};
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// Bumped when the tally's layout or meaning changes: an older state is then not applied.
const REVISION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Saved {
    head: StateHead,
    tally: Tally,
}

fn kept(store: &Store) -> KeptState<'_> {
    KeptState {
        stage: crate::STAGE,
        path: store.classify_state_path(),
        store,
    }
}

/// What the classification depends on besides the stream: what the config says of layers
/// and the layers the agent assigned.
pub fn settings_key(
    config: &LayerConfig,
    has_config: bool,
    overrides: &FxHashMap<String, usize>,
) -> String {
    let mut assigned: Vec<(&String, &usize)> = overrides.iter().collect();
    assigned.sort();
    let mut hasher = tg_shared::hash::Hasher::new();
    hasher.update(format!("{has_config}\n{}\n", config.layers_digest).as_bytes());
    for (id, layer) in assigned {
        hasher.update(format!("{id}\0{layer}\n").as_bytes());
    }
    hasher.finish()
}

/// Keeps `tally` as the state of the stream `stream`; none is kept for a stream without a
/// fingerprint, whose ids repeat, or with an edge to no node.
pub fn save(store: &Store, stream: Option<&str>, settings: String, tally: Tally) {
    let regular = tally.has_unique_ids() && !tally.has_dangling_edges();
    let saved = stream.filter(|_| regular).map(|stream| Saved {
        head: StateHead {
            revision: REVISION,
            stream: stream.to_string(),
            settings,
        },
        tally,
    });
    kept(store).save(saved.as_ref());
}

/// The tallies of the stream `base` classified with `settings`; why not, when the state is
/// missing, damaged, or of another stream or config.
pub fn load(store: &Store, base: &str, settings: &str) -> Result<Tally, Failure> {
    let kept = kept(store);
    let changed = "the layers config or the layers the agent assigned changed";
    let saved: Saved = kept.load(|s: &Saved| &s.head, (REVISION, base, settings), changed)?;
    let mut tally = saved.tally;
    if !tally.reindex() {
        return Err(kept.no_base("the kept state repeats a node id"));
    }
    Ok(tally)
}
