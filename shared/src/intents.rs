//! `.tldrgraph/intents.ndjson`: the one-line intents written for symbols, meant to be committed
//! so a team pays for its summaries once.
//!
//! One JSON object per line, sorted by id, each with the node `hash` it was written for:
//!
//! ```text
//! {"id":"pkg/api.py::handle","intent":"Routes one request to its handler.","hash":"1b7e…","source":"agent"}
//! ```
//!
//! An intent is *current* while its symbol's own source hash is unchanged (an edit elsewhere in
//! the file, or lines shifting above it, keeps it), *stale* once that hash changes (the old text
//! is offered back as `current_intent`), and *moved* when its id has no entry but a symbol of the
//! very same source has one under another id (a function moved to another file).

use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Who wrote an intent.
pub const SOURCE_AGENT: &str = "agent";
pub const SOURCE_LLM: &str = "llm";
pub const SOURCE_DOC: &str = "doc";

/// One stored intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredIntent {
    pub id: String,
    pub intent: String,
    /// The node `hash` the intent was written for.
    pub hash: String,
    /// `agent` or `llm`.
    pub source: String,
    /// The model, for an intent an LLM endpoint wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A layer the agent assigned, overriding the classifier's (applied by tg-classify).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// What the symbol takes and gives, as the agent described them (a string or a list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Value>,
}

/// What the store knows of a symbol with a given id and source hash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup<'a> {
    /// Written for this very source.
    Current(&'a StoredIntent),
    /// Written for an earlier version of the symbol.
    Stale(&'a StoredIntent),
    /// Stored under another id whose symbol had this exact source (moved).
    Moved(&'a StoredIntent),
    None,
}

impl<'a> Lookup<'a> {
    /// The intent that describes the present source, if any.
    pub fn current(self) -> Option<&'a StoredIntent> {
        match self {
            Lookup::Current(stored) | Lookup::Moved(stored) => Some(stored),
            Lookup::Stale(_) | Lookup::None => None,
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct IntentStore {
    entries: BTreeMap<String, StoredIntent>,
    /// Source hash to the ids holding an intent written for it.
    by_hash: HashMap<String, BTreeSet<String>>,
    /// The content hash of the file as loaded (empty for none): state a stage keeps across
    /// runs holds for one version of the intents.
    digest: String,
}

/// Two stores are equal when they hold the same intents, whatever file they came from.
impl PartialEq for IntentStore {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl IntentStore {
    /// The content hash of the file this store was loaded from; empty when there was none.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Reads the store; a missing file is an empty store. A malformed line is an error naming
    /// the file and line: the file is committed work, never silently dropped.
    pub fn load(path: &Path) -> Result<IntentStore, String> {
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8(bytes)
                .map_err(|e| format!("{}: not UTF-8 ({e})", path.display()))?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(IntentStore::default())
            }
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        let mut store = IntentStore {
            digest: crate::hash::content_hash(text.as_bytes()),
            ..IntentStore::default()
        };
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: StoredIntent = serde_json::from_str(line).map_err(|e| {
                format!(
                    "{}: line {}: not an intent record ({e})",
                    path.display(),
                    index + 1
                )
            })?;
            store.insert(entry);
        }
        Ok(store)
    }

    /// The file's bytes: one line per intent, sorted by id.
    pub fn to_ndjson(&self) -> String {
        let mut out = String::new();
        for entry in self.entries.values() {
            // A struct of strings and JSON values always serialises.
            if let Ok(line) = serde_json::to_string(entry) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }

    /// Writes the store atomically, only if its bytes changed; whether they did.
    pub fn save(&self, path: &Path) -> std::io::Result<bool> {
        if self.entries.is_empty() && !path.exists() {
            // No intents yet: no empty file to commit.
            return Ok(false);
        }
        store::write_if_changed(path, self.to_ndjson().as_bytes())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, id: &str) -> Option<&StoredIntent> {
        self.entries.get(id)
    }

    pub fn entries(&self) -> impl Iterator<Item = &StoredIntent> {
        self.entries.values()
    }

    /// Adds or replaces the intent of `entry.id`.
    pub fn insert(&mut self, entry: StoredIntent) {
        if let Some(old) = self.entries.get(&entry.id) {
            if let Some(ids) = self.by_hash.get_mut(&old.hash) {
                ids.remove(&old.id);
                if ids.is_empty() {
                    self.by_hash.remove(&old.hash);
                }
            }
        }
        self.by_hash
            .entry(entry.hash.clone())
            .or_default()
            .insert(entry.id.clone());
        self.entries.insert(entry.id.clone(), entry);
    }

    /// What the store holds for the symbol `id` whose source hashes to `hash`.
    pub fn lookup(&self, id: &str, hash: &str) -> Lookup<'_> {
        if let Some(entry) = self.entries.get(id) {
            return if entry.hash == hash {
                Lookup::Current(entry)
            } else {
                Lookup::Stale(entry)
            };
        }
        // Identical source, identical intent: the first holder (in id order) lends it.
        match self
            .by_hash
            .get(hash)
            .and_then(|ids| ids.iter().next())
            .and_then(|id| self.entries.get(id))
        {
            Some(entry) => Lookup::Moved(entry),
            None => Lookup::None,
        }
    }

    /// Keeps only the intents of symbols in `live` (id to source hash) or that `keep` vouches
    /// for (a symbol whose file was not seen whole this time), re-keying the ones whose symbol
    /// is gone to the id now holding the very same source (it moved). Returns (pruned, moved).
    pub fn reconcile(
        &mut self,
        live: &HashMap<String, String>,
        keep: impl Fn(&StoredIntent) -> bool,
    ) -> (u64, u64) {
        let stays = |entry: &StoredIntent| live.contains_key(&entry.id) || keep(entry);
        let mut moved = Vec::new();
        let mut ids: Vec<&String> = live.keys().collect();
        ids.sort();
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        for id in ids {
            if self.entries.contains_key(id) {
                continue;
            }
            let gone = self.by_hash.get(&live[id]).and_then(|holders| {
                holders
                    .iter()
                    .filter_map(|h| self.entries.get(h))
                    .find(|e| !stays(e) && !taken.contains(e.id.as_str()))
            });
            if let Some(entry) = gone {
                taken.insert(entry.id.as_str());
                moved.push(StoredIntent {
                    id: id.clone(),
                    ..entry.clone()
                });
            }
        }
        let before = self.entries.len() as u64;
        let kept: Vec<StoredIntent> = self
            .entries
            .values()
            .filter(|entry| stays(entry))
            .cloned()
            .collect();
        let pruned = before - kept.len() as u64;
        let moved_count = moved.len() as u64;
        *self = IntentStore::default();
        for entry in kept.into_iter().chain(moved) {
            self.insert(entry);
        }
        (pruned, moved_count)
    }
}

/// The first sentence of a doc comment, on one line: what zero-token mode uses as an intent.
pub fn first_sentence(doc: &str) -> Option<String> {
    let paragraph = doc.trim().split("\n\n").next()?;
    let flat = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return None;
    }
    // A sentence ends at ". " (or the end); "e.g. x" stays whole only when followed by lowercase.
    let bytes = flat.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1) == Some(&b' ')
            && bytes.get(i + 2).is_some_and(|c| c.is_ascii_uppercase())
        {
            return Some(flat[..=i].to_string());
        }
    }
    Some(flat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, hash: &str, intent: &str) -> StoredIntent {
        StoredIntent {
            id: id.into(),
            intent: intent.into(),
            hash: hash.into(),
            source: SOURCE_AGENT.into(),
            model: None,
            layer: None,
            inputs: None,
            outputs: None,
        }
    }

    #[test]
    fn lookup_tells_current_stale_moved_and_unknown() {
        let mut store = IntentStore::default();
        store.insert(entry("a.py::f", "h1", "Does f."));
        assert!(
            matches!(store.lookup("a.py::f", "h1"), Lookup::Current(e) if e.intent == "Does f.")
        );
        assert!(matches!(store.lookup("a.py::f", "h2"), Lookup::Stale(e) if e.hash == "h1"));
        assert!(matches!(store.lookup("b.py::f", "h1"), Lookup::Moved(e) if e.id == "a.py::f"));
        assert_eq!(store.lookup("b.py::g", "h3"), Lookup::None);
    }

    #[test]
    fn the_file_is_sorted_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::artifacts::INTENTS);
        let mut store = IntentStore::default();
        store.insert(entry("z.py::z", "h2", "Zed."));
        store.insert(entry("a.py::a", "h1", "Ay."));
        store.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(r#"{"id":"a.py::a","intent":"Ay.","hash":"h1","source":"agent"}"#));
        assert_eq!(IntentStore::load(&path).unwrap(), store);
        std::fs::write(&path, format!("{text}not json\n")).unwrap();
        let err = IntentStore::load(&path).unwrap_err();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn reconcile_prunes_the_gone_and_rekeys_the_moved() {
        let mut store = IntentStore::default();
        store.insert(entry("old.py::f", "hf", "Moves."));
        store.insert(entry("a.py::gone", "hg", "Gone."));
        store.insert(entry("a.py::kept", "hk", "Kept."));
        let live: HashMap<String, String> = [("new.py::f", "hf"), ("a.py::kept", "hk2")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(store.reconcile(&live, |_| false), (2, 1));
        let ids: Vec<&str> = store.entries().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a.py::kept", "new.py::f"]);
        assert_eq!(store.get("new.py::f").unwrap().intent, "Moves.");
        // A stale intent is kept: its old text is offered back to the writer.
        assert_eq!(store.get("a.py::kept").unwrap().hash, "hk");
    }

    #[test]
    fn a_copy_is_not_a_move_and_what_keep_vouches_for_stays() {
        let mut store = IntentStore::default();
        store.insert(entry("a.py::A.f", "same", "Shared body."));
        store.insert(entry("big.py::g", "hg", "In a file skipped this time."));
        let live: HashMap<String, String> = [("a.py::A.f", "same"), ("a.py::B.f", "same")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(
            store.reconcile(&live, |e| e.id.starts_with("big.py")),
            (0, 0)
        );
        assert!(
            store.get("a.py::B.f").is_none(),
            "the original is still there"
        );
        assert!(store.get("big.py::g").is_some());
        // Two entries sharing a hash: replacing one keeps the other findable by hash.
        store.insert(entry("c.py::h", "same", "Also."));
        store.insert(entry("a.py::A.f", "changed", "New."));
        assert!(matches!(store.lookup("d.py::x", "same"), Lookup::Moved(e) if e.id == "c.py::h"));
    }

    #[test]
    fn first_sentence_of_a_doc() {
        assert_eq!(
            first_sentence("Load a graph.  Then cache it.\n\nMore.").as_deref(),
            Some("Load a graph.")
        );
        assert_eq!(
            first_sentence("Parse e.g. a file\nin one go").as_deref(),
            Some("Parse e.g. a file in one go")
        );
        assert_eq!(first_sentence("  \n "), None);
    }
}
