//! A repeated `init` with nothing changed answers from the last build instead of running six
//! stages over the whole stream again (2.7 s on the CPython stdlib, against 0.1 s).
//!
//! "Nothing changed" means all of: the same stages (executables, their sizes and times) with the
//! same arguments; the same embedding model and provider settings; every source file, the layers
//! config, the approval and the stored intents with the content hashes the last build saw (what
//! `tldrgraph status` checks); graph.json still there; and a last state that a rerun could not
//! move on: not an error, not `needs_embeddings` (an endpoint may be back), not
//! `needs_enrichment` with LLM failures to retry. Never with `--yes` or an LLM provider: those
//! runs make progress by themselves ([`may_answer`]).

use crate::pipeline::Stage;
use serde_json::Value;
use std::path::Path;
use tg_shared::artifacts;
use tg_shared::hash::Hasher;
use tg_shared::store::{self, Store};

/// Settings from the environment that change what the stages do (never the API keys).
const ENV_SETTINGS: [&str; 7] = [
    "TLDRGRAPH_EMBEDDINGS",
    "TLDRGRAPH_MODEL",
    "TLDRGRAPH_LLM_PROVIDER",
    "TLDRGRAPH_LLM_BASE_URL",
    "TLDRGRAPH_LLM_MODEL",
    "TLDRGRAPH_EMBED_BASE_URL",
    "TLDRGRAPH_EMBED_MODEL",
];

/// The key of a run of `stages` here and now.
pub fn key(stages: &[Stage]) -> String {
    let mut hasher = Hasher::new();
    for stage in stages {
        hasher.update(stage.name.as_bytes()).update(b"\0");
        hasher.update(stamp(&stage.exe).unwrap_or_default().as_bytes());
        for arg in &stage.args {
            hasher
                .update(arg.to_string_lossy().as_bytes())
                .update(b"\0");
        }
    }
    for name in ENV_SETTINGS {
        let value = std::env::var(name).unwrap_or_default();
        hasher
            .update(name.as_bytes())
            .update(b"=")
            .update(value.as_bytes())
            .update(b"\0");
    }
    // The model table by size and time: hashing its 47 MB on every run would cost more than
    // the rest of the answer; a new table (`make model`) is a new file.
    let model = stamp(&tg_shared::embed::model_path()).unwrap_or_else(|| "absent".into());
    hasher.update(model.as_bytes());
    hasher.finish()
}

/// Whether a run with these flags could only repeat the last one. `--yes` records approval (a
/// `--limit` run approves the next symbols each time) and an LLM provider writes intents as it
/// goes (and is capped per run), so such runs make progress even when nothing else changed.
pub fn may_answer(args: &crate::cli::InitArgs) -> bool {
    let agent = |name: &str| matches!(name.trim().to_ascii_lowercase().as_str(), "" | "agent");
    let provider_is_agent = match args.llm.provider {
        Some(provider) => provider == tg_shared::options::Provider::Agent,
        None => std::env::var("TLDRGRAPH_LLM_PROVIDER").map_or(true, |v| agent(&v)),
    };
    !args.approval.yes && provider_is_agent
}

/// Artifacts a shortcut answers for: each must be as the last run left it (size and time).
const ARTIFACTS: [&str; 6] = [
    artifacts::GRAPH,
    artifacts::GRAPH_COMPRESSED,
    artifacts::STATE,
    artifacts::SEARCH_INDEX,
    artifacts::SEARCH_VECTORS,
    artifacts::INTENTS,
];

/// `key`, then one line per artifact: its name, size and modification time (or `absent`).
fn record(store: &Store, key: &str) -> String {
    let mut text = format!("{key}\n");
    for name in ARTIFACTS {
        let stamp = stamp(&store.path(name));
        text.push_str(&format!(
            "{name} {}\n",
            stamp.as_deref().unwrap_or("absent")
        ));
    }
    text
}

/// A file's size and modification time, as text.
fn stamp(path: &Path) -> Option<String> {
    store::stamp(path).map(|(size, modified)| format!("{size} {modified}"))
}

/// Whether the last successful run had this key and left the artifacts as they are now.
pub fn same_key(store: &Store, key: &str) -> bool {
    artifacts::graph::path(store).is_some()
        && std::fs::read_to_string(store.path(artifacts::INIT_KEY))
            .is_ok_and(|saved| saved == record(store, key))
}

/// The last build's payload, if `from_artifacts` (tg-status's answer) says it is fresh and a
/// rerun could not change it; the payload without the `fresh` field, as `init` prints it.
pub fn answer(from_artifacts: Value) -> Option<Value> {
    if from_artifacts["fresh"] != Value::Bool(true) {
        return None;
    }
    let status = from_artifacts["status"].as_str()?;
    let retry = match status {
        "error" | "not_built" | "needs_embeddings" => true,
        "needs_enrichment" => from_artifacts["failed"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        _ => false,
    };
    if retry {
        return None;
    }
    let mut payload = from_artifacts;
    if let Value::Object(map) = &mut payload {
        map.remove("fresh");
    }
    Some(payload)
}

/// Records the key of a successful run; forgets it after a failed one.
pub fn remember(store: &Store, key: Option<&str>) {
    let path = store.path(artifacts::INIT_KEY);
    // Best effort: without the file the next run simply runs the stages.
    let _ = match key {
        Some(key) => store::write_if_changed(&path, record(store, key).as_bytes()).map(|_| ()),
        None => std::fs::remove_file(&path).or_else(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Ok(())
            } else {
                Err(e)
            }
        }),
    };
}

/// Whether `dir` holds an answer dropped for the next `init` (that run must apply it).
pub fn response_waiting(dir: &Path) -> bool {
    artifacts::ENRICHMENT_RESPONSE_EXTENSIONS.iter().any(|ext| {
        dir.join(format!("{}.{ext}", artifacts::ENRICHMENT_RESPONSE_STEM))
            .is_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_fresh_state_a_rerun_cannot_move_is_reused() {
        let done = json!({"status": "done", "nodes_count": 3, "fresh": true});
        assert_eq!(
            answer(done),
            Some(json!({"status": "done", "nodes_count": 3}))
        );
        assert_eq!(answer(json!({"status": "done", "fresh": false})), None);
        assert_eq!(
            answer(json!({"status": "needs_embeddings", "fresh": true})),
            None
        );
        assert_eq!(
            answer(json!({"status": "needs_enrichment", "failed": ["a"], "fresh": true})),
            None
        );
        assert!(
            answer(json!({"status": "needs_enrichment", "batch": [], "fresh": true})).is_some()
        );
    }
}
