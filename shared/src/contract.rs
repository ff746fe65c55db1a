//! The agent contract: its states in pipeline order and the payloads of the ones built so far.
//! A state travels in the stream as a `status` record ([`crate::record::Status`]) and is printed
//! by `tldrgraph init --json` as the bare payload (the record without its `type`).

use crate::record::Status;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The blocking states, in the order of the stages that emit them; `tg-status` reports the first.
pub const BLOCKING_ORDER: [&str; 4] = [
    NEEDS_LAYERS,
    NEEDS_CONFIRMATION,
    NEEDS_ENRICHMENT,
    NEEDS_EMBEDDINGS,
];

pub const NEEDS_LAYERS: &str = "needs_layers";
pub const NEEDS_CONFIRMATION: &str = "needs_confirmation";
/// Symbols per enrichment batch unless `--batch` says otherwise (the seed's 200).
pub const DEFAULT_BATCH: u64 = 200;
pub const NEEDS_ENRICHMENT: &str = "needs_enrichment";
pub const NEEDS_EMBEDDINGS: &str = "needs_embeddings";
pub const DONE: &str = "done";
pub const ERROR: &str = "error";

/// The `next_action` of `needs_layers`, word for word.
pub const NEEDS_LAYERS_ACTION: &str =
    "Read repository symbols and create .tldrgraph/layers.config.yaml";

/// Position of a blocking state in pipeline order; `None` for `done`, `error` and unknown states.
pub fn blocking_rank(status: &str) -> Option<usize> {
    BLOCKING_ORDER.iter().position(|s| *s == status)
}

/// A directory and how many symbols (non-module nodes) and files it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryCount {
    /// Repo-relative, `.` for the root.
    pub path: String,
    pub symbols: u64,
    /// Of `symbols`, those of product code (not tests, examples, tooling or generated).
    #[serde(default)]
    pub product: u64,
    pub files: u64,
    /// `false` when only the files directly in `path` are counted (its subdirectories are listed
    /// separately).
    pub recursive: bool,
}

/// `.tldrgraph/layers.config.yaml` is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedsLayers {
    pub reason: String,
    pub extracted_symbols_count: u64,
    /// The directories' paths, most symbols first: a list of strings, as the seed spec has it.
    pub top_directories: Vec<String>,
    /// The same directories with their counts (an extra field beside the spec's).
    #[serde(default)]
    pub directories: Vec<DirectoryCount>,
    pub next_action: String,
    /// The overview to read before designing layers (`.tldrgraph/symbols.md`).
    pub symbols_overview: String,
    /// Where the config goes.
    pub config_path: String,
    /// Why nothing was extracted, when nothing was (additive): an empty directory, no file in a
    /// supported language, or ignore files or excludes that hide them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_sources: Option<String>,
}

/// Bottleneck candidates need intents the user has not approved spending tokens on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedsConfirmation {
    pub total_nodes: u64,
    pub candidates_count: u64,
    pub planned_this_run: u64,
    pub batch_size: u64,
    pub agent_rounds: u64,
    pub next_action: String,
    /// The command that records the user's yes.
    pub approve_command: String,
}

/// `next_action` of `needs_confirmation`, word for word as the contract gives it. "round(s)" is
/// kept as written whatever the count, so agents can match the sentence literally.
pub fn confirmation_action(planned: u64, rounds: u64) -> String {
    format!(
        "Ask user: 'TLDRGraph needs to enrich {planned} architectural bottleneck symbols across {rounds} agent round(s). Proceed?'"
    )
}

/// `ceil(planned / batch)`; 0 when nothing is planned.
pub fn agent_rounds(planned: u64, batch: u64) -> u64 {
    if batch == 0 {
        return 0;
    }
    planned.div_ceil(batch)
}

/// One symbol of a `needs_enrichment` batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnrichmentItem {
    pub id: String,
    /// The node kind (`function`, `method`, `class`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// The previous intent of a symbol whose source changed, else null.
    pub current_intent: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Ids of the symbols calling it and called by it (at most ten each, sorted).
    pub callers: Vec<String>,
    pub callees: Vec<String>,
    /// How many callers there are in all, when `callers` lists only the first ten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers_total: Option<u64>,
    /// How many callees there are in all, when `callees` lists only the first ten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callees_total: Option<u64>,
}

/// Approved candidates lack a current intent: the next batch to write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedsEnrichment {
    pub batch: Vec<EnrichmentItem>,
    pub batch_size: u64,
    /// Approved symbols lacking a current intent, this batch included.
    pub pending: u64,
    /// What is left after this batch.
    pub remaining_after_batch: u64,
    /// The batch as a file (`.tldrgraph/enrichment_request.json`).
    pub request_file: String,
    pub apply_command: String,
    pub next_action: String,
    /// Ids an LLM endpoint did not answer this run (retried by the next run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// `next_action` of `needs_enrichment`.
pub fn enrichment_action(count: usize) -> String {
    format!(
        "Write a one-line intent (what it is for, not how it works) for each of the {count} symbols in `batch`, \
         as a JSON array of {{\"id\": ..., \"intent\": ...}}; run `tldrgraph enrich --apply FILE`, then `tldrgraph init --json` again"
    )
}

/// `needs_embeddings`: embeddings are on but could not be completed in this run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedsEmbeddings {
    pub symbols_count: u64,
    pub embedded_count: u64,
    pub missing_count: u64,
    pub reason: String,
    pub next_action: String,
}

/// Everything is up to date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    pub nodes_count: u64,
    pub edges_count: u64,
    pub layers_count: u64,
    pub embeddings_ready: bool,
    /// Plan candidates whose intent is current (additive).
    #[serde(default)]
    pub enriched: u64,
    /// Plan candidates the user declined to enrich (`tldrgraph approve --decline-rest`; additive).
    #[serde(default)]
    pub declined: u64,
}

/// A failure, as a state: what went wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorState {
    pub error: String,
    pub hint: String,
    /// The stage that failed, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
}

/// Wraps a payload struct as the status record of state `status`.
pub fn status<T: Serialize>(status: &str, payload: &T) -> Status {
    let fields = match serde_json::to_value(payload) {
        Ok(Value::Object(map)) => map,
        // Every payload above is a struct, so this is unreachable; keep the state anyway.
        _ => Map::new(),
    };
    Status {
        status: status.to_string(),
        fields,
    }
}

/// The payload printed for `status`: `{"status": ..., fields...}`.
pub fn payload(status: &Status) -> Value {
    let mut map = Map::new();
    map.insert("status".to_string(), Value::String(status.status.clone()));
    for (key, value) in &status.fields {
        map.insert(key.clone(), value.clone());
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    #[test]
    fn a_state_round_trips_as_a_status_record() {
        let done = status(
            DONE,
            &Done {
                nodes_count: 3,
                edges_count: 2,
                layers_count: 1,
                embeddings_ready: false,
                enriched: 0,
                declined: 0,
            },
        );
        let line = serde_json::to_string(&Record::Status(done.clone())).unwrap();
        assert_eq!(
            line,
            r#"{"type":"status","status":"done","nodes_count":3,"edges_count":2,"layers_count":1,"embeddings_ready":false,"enriched":0,"declined":0}"#
        );
        assert_eq!(
            serde_json::from_str::<Record>(&line).unwrap(),
            Record::Status(done)
        );
        assert_eq!(blocking_rank("needs_layers"), Some(0));
        assert_eq!(blocking_rank("needs_embeddings"), Some(3));
        assert_eq!(blocking_rank(DONE), None);
        assert_eq!(agent_rounds(0, 200), 0);
        assert_eq!(agent_rounds(200, 200), 1);
        assert_eq!(agent_rounds(201, 200), 2);
        assert_eq!(agent_rounds(5, 500), 1);
        assert_eq!(
            confirmation_action(12, 1),
            "Ask user: 'TLDRGraph needs to enrich 12 architectural bottleneck symbols across 1 agent round(s). Proceed?'"
        );
    }
}
