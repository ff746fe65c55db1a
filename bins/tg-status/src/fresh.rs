//! The state of the last build, read from `.tldrgraph/`, and whether it is still current:
//! content hashes of the sources (and of the layers config) against those the build saw.

use crate::{extend, SavedState, STATE_FILE};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::Path;
use tg_shared::exit;
use tg_shared::hash::content_hash;
use tg_shared::layers::CONFIG_FILE;
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};
use tg_shared::walk;

/// Paths of each kind of change listed in the payload (all are counted).
const EXAMPLES: usize = 5;

/// The status of a repository where nothing was built yet.
pub const NOT_BUILT: &str = "not_built";

/// Hash of the layers config, `None` when there is none.
pub fn config_hash(store: &Store) -> Option<String> {
    std::fs::read(store.path(CONFIG_FILE))
        .ok()
        .map(|bytes| content_hash(&bytes))
}

/// Hash of the user's and agent's decisions that change the state without touching a source:
/// the approval and the stored intents (`enrich --apply`).
pub fn decisions_hash(store: &Store) -> Option<String> {
    let mut hasher = tg_shared::hash::Hasher::new();
    for name in [
        tg_shared::approval::APPROVAL_FILE,
        tg_shared::intents::INTENTS_FILE,
    ] {
        match std::fs::read(store.path(name)) {
            Ok(bytes) => hasher.update(content_hash(&bytes).as_bytes()),
            Err(_) => hasher.update(b"absent"),
        };
        hasher.update(b"\n");
    }
    Some(hasher.finish())
}

pub fn from_artifacts(root: &Path, store: &Store) -> Result<Value, Failure> {
    let path = store.path(STATE_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(json!({
                "status": NOT_BUILT,
                "fresh": false,
                "next_action": "Run `tldrgraph init --json` to build the graph",
            }));
        }
        Err(err) => {
            return Err(Failure::new(
                exit::NO_INPUT,
                format!("cannot read {}: {err}", path.display()),
            ))
        }
    };
    let state: SavedState = match serde_json::from_slice(&bytes) {
        Ok(state) => state,
        Err(e) => {
            // A damaged record of the last build is no build: say so, and let init rewrite it.
            eprintln!(
                "tg-status: warning: ignoring damaged {}: line {}: {e}",
                path.display(),
                e.line()
            );
            return Ok(json!({
                "status": NOT_BUILT,
                "fresh": false,
                "reason": format!("{STATE_FILE} is damaged (line {}: {e})", e.line()),
                "next_action": "Run `tldrgraph init --json` to build the graph again",
            }));
        }
    };
    let changes = compare(root, &state, config_hash(store), decisions_hash(store));
    Ok(extend(state.payload, changes))
}

fn compare(
    root: &Path,
    state: &SavedState,
    config: Option<String>,
    decisions: Option<String>,
) -> Map<String, Value> {
    let walked = walk::walk(root, &[root.to_path_buf()], &globset::GlobSet::empty());
    let mut seen = BTreeSet::new();
    let (mut changed, mut added) = (Vec::new(), Vec::new());
    for file in &walked.files {
        seen.insert(file.rel.as_str());
        match state.files.get(&file.rel) {
            Some(hash) => {
                let same = std::fs::read(&file.abs).is_ok_and(|b| content_hash(&b) == *hash);
                if !same {
                    changed.push(file.rel.clone());
                }
            }
            None if state.skipped.binary_search(&file.rel).is_ok() => {
                // Skipped, so not hashed: its size and time tell whether it changed.
                if let Some(before) = state.skipped_stamps.get(&file.rel) {
                    if store::stamp(&file.abs).as_ref() != Some(before) {
                        changed.push(file.rel.clone());
                    }
                }
            }
            None => added.push(file.rel.clone()),
        }
    }
    let removed: Vec<String> = state
        .files
        .keys()
        .filter(|f| !seen.contains(f.as_str()))
        .cloned()
        .collect();
    let config_changed = state.config_hash != config;
    // A state written before decisions were hashed has none: it cannot tell, so it does not claim.
    let decisions_changed = state.decisions_hash.is_some() && state.decisions_hash != decisions;
    let fresh = changed.is_empty()
        && added.is_empty()
        && removed.is_empty()
        && !config_changed
        && !decisions_changed;
    let mut extra = Map::new();
    extra.insert("fresh".into(), Value::Bool(fresh));
    if !fresh {
        let list = |paths: &[String]| json!({"count": paths.len(), "examples": &paths[..paths.len().min(EXAMPLES)]});
        extra.insert(
            "changes".into(),
            json!({
                "changed": list(&changed),
                "added": list(&added),
                "removed": list(&removed),
                "config_changed": config_changed,
                "decisions_changed": decisions_changed,
            }),
        );
        extra.insert(
            "refresh_action".into(),
            Value::String(
                "Sources, the config, the approval or the intents changed since the last build: run `tldrgraph init --json`".into(),
            ),
        );
    }
    extra
}
