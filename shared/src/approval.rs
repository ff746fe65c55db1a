//! `.tldrgraph/approval.json`: which candidates the user approved spending tokens on.
//!
//! Keyed by a hash of the approved ids, with the batch size and limit in force; it survives
//! until revoked (`tldrgraph approve --revoke` deletes it). It also holds the candidates the user
//! declined (`tldrgraph approve --decline-rest`): never asked about again, while candidates that
//! appear later (new code) are. A file that cannot be read as an
//! approval (bad JSON, a hash that does not match its ids) is reported and counts as no
//! approval: never as approval.

use crate::hash::Hasher;
use crate::store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    pub version: u32,
    pub ids_hash: String,
    pub ids: Vec<String>,
    pub batch: u64,
    pub limit: Option<u64>,
    /// Candidates the user declined to enrich.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declined: Vec<String>,
}

/// What the approval file says.
#[derive(Debug)]
pub enum Loaded {
    None,
    /// The approved ids, and the declined ones.
    Approved(BTreeSet<String>, BTreeSet<String>),
    /// Unreadable: the message (with its line) for a diagnostic.
    Malformed(String),
}

pub fn ids_hash(ids: &BTreeSet<String>) -> String {
    let mut hasher = Hasher::new();
    for id in ids {
        hasher.update(id.as_bytes()).update(b"\n");
    }
    hasher.finish()
}

pub fn load(path: &Path) -> Loaded {
    match read(path) {
        Ok(None) => Loaded::None,
        Ok(Some(approval)) => Loaded::Approved(
            approval.ids.into_iter().collect(),
            approval.declined.into_iter().collect(),
        ),
        Err(message) => Loaded::Malformed(message),
    }
}

/// The whole approval (ids, and the batch size and limit it was given with), if there is a
/// valid one; the reason when the file cannot be used.
pub fn read(path: &Path) -> Result<Option<Approval>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read it: {err}")),
    };
    let approval: Approval =
        serde_json::from_slice(&bytes).map_err(|err| format!("line {}: {err}", err.line()))?;
    let ids: BTreeSet<String> = approval.ids.iter().cloned().collect();
    if approval.version != 1 || ids_hash(&ids) != approval.ids_hash {
        return Err("its ids_hash does not match its ids (edited by hand?)".to_string());
    }
    Ok(Some(approval))
}

pub fn save(
    path: &Path,
    ids: &BTreeSet<String>,
    declined: &BTreeSet<String>,
    batch: u64,
    limit: Option<u64>,
) -> std::io::Result<()> {
    let approval = Approval {
        version: 1,
        ids_hash: ids_hash(ids),
        ids: ids.iter().cloned().collect(),
        batch,
        limit,
        declined: declined.iter().cloned().collect(),
    };
    let text = serde_json::to_string_pretty(&approval).map_err(std::io::Error::other)? + "\n";
    store::write_if_changed(path, text.as_bytes()).map(|_| ())
}
