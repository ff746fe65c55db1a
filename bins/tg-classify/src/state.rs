//! The tallies of the last whole stream this stage read, kept in the store so that a patch of
//! that stream ([`crate::patched`]) is applied to them instead of reading the stream again.

use crate::classify::Tally;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tg_shared::codec;
use tg_shared::layers::LayerConfig;
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};

/// Bumped when the tally's layout or meaning changes: an older state is then not applied.
const REVISION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Saved {
    revision: u32,
    /// The fingerprint of the stream the tallies are of (its header's).
    stream: String,
    /// [`settings_key`] of the config and the agent's layers they were classified with.
    settings: String,
    tally: Tally,
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

/// Keeps `tally` as the state of the stream `stream`, or, when there is none (a stream without
/// a fingerprint), its ids repeat or an edge reaches no node, removes the state so that no
/// patch is applied to an older one. A state that cannot be written is only a lost shortcut: the next patch is refused.
pub fn save(store: &Store, stream: Option<&str>, settings: String, tally: Tally) -> Tally {
    let path = store.classify_state_path();
    let regular = tally.has_unique_ids() && !tally.has_dangling_edges();
    let Some(stream) = stream.filter(|_| regular) else {
        let _ = std::fs::remove_file(&path);
        return tally;
    };
    let Ok(_lock) = store.lock() else {
        let _ = std::fs::remove_file(&path);
        return tally;
    };
    let saved = Saved {
        revision: REVISION,
        stream: stream.to_string(),
        settings,
        tally,
    };
    let written = store::AtomicFile::create(&path).and_then(|mut file| {
        codec::encode_sealed_into(&saved, &mut file).map_err(std::io::Error::other)?;
        file.commit()
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&path);
    }
    saved.tally
}

/// The tallies of the stream `base` classified with `settings`; why not, when the state is
/// missing, damaged, or of another stream or config.
pub fn load(store: &Store, base: &str, settings: &str) -> Result<Tally, Failure> {
    let path = store.classify_state_path();
    let no_base = |why: String| {
        Failure::new(
            tg_shared::exit::NO_BASE,
            format!("cannot apply the patch: {why}"),
        )
        .with_hint("run the whole stream through tg-classify (tg-extract without --patch)")
    };
    let saved: Saved = codec::decode_sealed_file(&path)
        .map_err(|e| no_base(format!("{}: {e}", path.display())))?;
    if saved.revision != REVISION {
        return Err(no_base(format!(
            "{} was written by another version",
            path.display()
        )));
    }
    if saved.stream != base {
        return Err(no_base(format!(
            "the last stream classified is {}, the patch's base {base}",
            saved.stream
        )));
    }
    if saved.settings != settings {
        return Err(no_base(
            "the layers config or the layers the agent assigned changed since the last stream"
                .to_string(),
        ));
    }
    let mut tally = saved.tally;
    if !tally.reindex() {
        return Err(no_base(format!("{} repeats a node id", path.display())));
    }
    Ok(tally)
}
