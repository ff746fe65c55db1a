//! Whether the last build is still current: the sources' content hashes (and those of the
//! layers config, the approval and the stored intents) against the ones the build saw, kept in
//! `.tldrgraph/state.json` ([`SavedState`]). `tldrgraph status` reports it whole; every answer of tg-query says
//! it in one line.

use crate::artifacts::{self, state::SavedState};
use crate::hash::content_hash;
use crate::store::{self, Store};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// Paths of each kind of change listed in a payload (all are counted).
const EXAMPLES: usize = 5;

/// Hash of the layers config, `None` when there is none.
pub fn config_hash(store: &Store) -> Option<String> {
    std::fs::read(store.path(artifacts::LAYERS_CONFIG))
        .ok()
        .map(|bytes| content_hash(&bytes))
}

/// Hash of the user's and agent's decisions that change the state without touching a source:
/// the approval and the stored intents (`enrich --apply`).
pub fn decisions_hash(store: &Store) -> Option<String> {
    let mut hasher = crate::hash::Hasher::new();
    for name in [artifacts::APPROVAL, artifacts::INTENTS] {
        match std::fs::read(store.path(name)) {
            Ok(bytes) => hasher.update(content_hash(&bytes).as_bytes()),
            Err(_) => hasher.update(b"absent"),
        };
        hasher.update(b"\n");
    }
    Some(hasher.finish())
}

/// What changed since the last build.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub config_changed: bool,
    pub decisions_changed: bool,
}

impl Changes {
    pub fn fresh(&self) -> bool {
        self.changed.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
            && !self.config_changed
            && !self.decisions_changed
    }

    /// `fresh`, and when stale the `changes` (counts and a few paths) and `refresh_action`.
    pub fn to_fields(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        extra.insert("fresh".into(), Value::Bool(self.fresh()));
        if !self.fresh() {
            let list = |paths: &[String]| json!({"count": paths.len(), "examples": &paths[..paths.len().min(EXAMPLES)]});
            extra.insert(
                "changes".into(),
                json!({
                    "changed": list(&self.changed),
                    "added": list(&self.added),
                    "removed": list(&self.removed),
                    "config_changed": self.config_changed,
                    "decisions_changed": self.decisions_changed,
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

    /// One line for a human: `graph is stale: 2 files changed, 1 added since the last build ...`.
    pub fn line(&self) -> Option<String> {
        if self.fresh() {
            return None;
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.changed.len(), "changed"),
            (self.added.len(), "added"),
            (self.removed.len(), "removed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} file{} {what}", if n == 1 { "" } else { "s" }));
            }
        }
        if self.config_changed {
            parts.push("the layers config changed".to_string());
        }
        if self.decisions_changed {
            parts.push("the approval or the intents changed".to_string());
        }
        Some(format!(
            "the graph is stale: {} since the last build; run `tldrgraph init` to refresh",
            parts.join(", ")
        ))
    }
}

/// Files a long-lived reader (the MCP server) found equal to the build, with the size and
/// modification time they had: one whose stamp is unchanged is not hashed again, as git's index
/// does. A stamp is remembered only when the file was last modified well before it was hashed,
/// so an edit within the same clock tick as the hash cannot hide (git's "racy" rule).
#[derive(Debug, Default)]
pub struct Verified {
    /// Per file: its stamp and the content hash it was found to have.
    files: std::collections::HashMap<String, ((u64, u128), String)>,
}

/// How far a file's modification must precede the hash for its stamp to be trusted.
const RACY_NANOS: u128 = 2_000_000_000;

impl Verified {
    /// Whether `abs` still has the content `hash`, hashing it only when its stamp moved.
    fn same(&mut self, rel: &str, abs: &Path, hash: &str) -> bool {
        let stamp = store::stamp(abs);
        if let (Some(stamp), Some((known, known_hash))) = (stamp, self.files.get(rel)) {
            if *known == stamp && known_hash == hash {
                return true;
            }
        }
        let same = std::fs::read(abs).is_ok_and(|b| content_hash(&b) == *hash);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        match stamp {
            Some(stamp) if same && stamp.1 + RACY_NANOS < now => {
                self.files
                    .insert(rel.to_string(), (stamp, hash.to_string()));
            }
            _ => {
                self.files.remove(rel);
            }
        }
        same
    }
}

/// What changed since `state` was written, given the source files as a walk like that build's
/// finds them now (`tg_lang::walk::changes_since` walks), as repo-relative and absolute paths.
/// `verified` spares hashing files already found unchanged (a fresh one hashes every file).
pub fn compare<'f>(
    store: &Store,
    state: &SavedState,
    sources: impl IntoIterator<Item = (&'f str, &'f Path)>,
    verified: &mut Verified,
) -> Changes {
    let mut seen = BTreeSet::new();
    let (mut changed, mut added) = (Vec::new(), Vec::new());
    for (rel, abs) in sources {
        seen.insert(rel);
        match state.files.get(rel) {
            Some(hash) => {
                if !verified.same(rel, abs, hash) {
                    changed.push(rel.to_string());
                }
            }
            None if state
                .skipped
                .binary_search_by(|s| s.as_str().cmp(rel))
                .is_ok() =>
            {
                // Skipped, so not hashed: its size and time tell whether it changed.
                if let Some(before) = state.skipped_stamps.get(rel) {
                    if store::stamp(abs).as_ref() != Some(before) {
                        changed.push(rel.to_string());
                    }
                }
            }
            None => added.push(rel.to_string()),
        }
    }
    let removed: Vec<String> = state
        .files
        .keys()
        .filter(|f| !seen.contains(f.as_str()))
        .cloned()
        .collect();
    Changes {
        changed,
        added,
        removed,
        config_changed: state.config_hash != config_hash(store),
        // A state written before decisions were hashed has none: it cannot tell, so it does
        // not claim.
        decisions_changed: state.decisions_hash.is_some()
            && state.decisions_hash != decisions_hash(store),
    }
}
