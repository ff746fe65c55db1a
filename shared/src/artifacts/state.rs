//! `.tldrgraph/state.json`: the last build's contract payload and what it was built from, so a
//! later reader can print it without running anything and tell whether it is still current
//! ([`crate::freshness`]). Written by tg-status, read by tg-status and tg-query.

use crate::store::{self, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Serialize, Deserialize)]
pub struct SavedState {
    /// The contract payload printed for that build.
    pub payload: Value,
    /// Every source file of the build and its content hash.
    pub files: BTreeMap<String, String>,
    /// Files the build saw and skipped (binary, too large, unreadable): known, not hashed.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// Size and modification time (ns) of each skipped file: one that changes (a huge file cut
    /// down, a binary replaced by source) makes the state stale. Not hashed: they may be huge.
    #[serde(default)]
    pub skipped_stamps: BTreeMap<String, (u64, u128)>,
    /// Content hash of `.tldrgraph/layers.config.yaml` when the state was computed.
    #[serde(default)]
    pub config_hash: Option<String>,
    /// Hash of approval.json and intents.ndjson when the state was computed.
    #[serde(default)]
    pub decisions_hash: Option<String>,
    /// The `--exclude` globs the build's walk was given (beside the config's `exclude:`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// The build read ignored files too (`--no-ignore`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_ignore: bool,
}

/// Why there is no state to read.
#[derive(Debug)]
pub enum ReadError {
    /// Never built (or the file was removed).
    Missing,
    /// The file exists but cannot be read.
    Unreadable(PathBuf, std::io::Error),
    /// Not a state: the serde error (its `line()` names the line).
    Damaged(PathBuf, serde_json::Error),
}

impl SavedState {
    pub fn read(store: &Store) -> Result<SavedState, ReadError> {
        let path = store.path(super::STATE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadError::Missing)
            }
            Err(err) => return Err(ReadError::Unreadable(path, err)),
        };
        serde_json::from_slice(&bytes).map_err(|e| ReadError::Damaged(path, e))
    }

    /// The bytes [`SavedState::write`] puts in the file.
    pub fn to_bytes(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec_pretty(self)
    }

    /// Writes `bytes` (from [`SavedState::to_bytes`]) as the state, only if they changed.
    pub fn write(store: &Store, bytes: &[u8]) -> std::io::Result<bool> {
        store::write_if_changed(&store.path(super::STATE), bytes)
    }
}
