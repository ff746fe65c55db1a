//! The contract state in words, for a person at a terminal (`--json` prints the payload).

use serde_json::Value;
use std::fmt::Write;

fn field<'a>(payload: &'a Value, key: &str) -> &'a str {
    payload[key].as_str().unwrap_or("")
}

fn count(payload: &Value, key: &str) -> u64 {
    payload[key].as_u64().unwrap_or(0)
}

/// The contract state in a few lines.
pub fn human(payload: &Value) -> String {
    let status = field(payload, "status");
    let mut text = String::new();
    match status {
        "needs_layers" => needs_layers(&mut text, payload),
        "needs_confirmation" => needs_confirmation(&mut text, payload),
        "needs_enrichment" => needs_enrichment(&mut text, payload),
        "needs_embeddings" => {
            let _ = writeln!(
                text,
                "tldrgraph: needs_embeddings: {}",
                field(payload, "reason")
            );
            let _ = writeln!(text, "  Next: {}", field(payload, "next_action"));
        }
        "done" => {
            let ready = if payload["embeddings_ready"] == Value::Bool(true) {
                "ready"
            } else {
                "not built"
            };
            let _ = writeln!(
                text,
                "tldrgraph: done: {} nodes, {} edges, {} layers; embeddings {ready}",
                count(payload, "nodes_count"),
                count(payload, "edges_count"),
                count(payload, "layers_count")
            );
        }
        "error" => {
            let stage = match payload["stage"].as_str() {
                Some(stage) => format!(" in {stage}"),
                None => String::new(),
            };
            let _ = writeln!(text, "tldrgraph: error{stage}: {}", field(payload, "error"));
            let _ = writeln!(text, "  hint: {}", field(payload, "hint"));
        }
        "not_built" => {
            let _ = writeln!(text, "tldrgraph: nothing built yet here");
            let _ = writeln!(text, "  Next: {}", field(payload, "next_action"));
        }
        other => {
            let _ = writeln!(text, "tldrgraph: {other}");
            if let Some(map) = payload.as_object() {
                for (key, value) in map.iter().filter(|(k, _)| *k != "status") {
                    let _ = writeln!(text, "  {key}: {value}");
                }
            }
        }
    }
    if status != "not_built" {
        freshness(&mut text, payload);
    }
    text
}

fn needs_layers(text: &mut String, payload: &Value) {
    let _ = writeln!(text, "tldrgraph: needs_layers");
    let _ = writeln!(text, "  {}", field(payload, "reason"));
    let _ = writeln!(
        text,
        "  {} symbols extracted. Largest directories:",
        count(payload, "extracted_symbols_count")
    );
    for dir in payload["directories"]
        .as_array()
        .into_iter()
        .flatten()
        .take(8)
    {
        let path = dir["path"].as_str().unwrap_or("");
        let own = if dir["recursive"] == Value::Bool(false) {
            " (its own files)"
        } else {
            ""
        };
        let _ = writeln!(
            text,
            "    {path}{own}: {} symbols in {} files",
            dir["symbols"], dir["files"]
        );
    }
    let _ = writeln!(text, "  Next: {}.", field(payload, "next_action"));
    let _ = writeln!(
        text,
        "  Read {} first; the schema and the whole workflow are in .tldrgraph/AGENT_CONTRACT.md.",
        field(payload, "symbols_overview")
    );
}

fn needs_confirmation(text: &mut String, payload: &Value) {
    let _ = writeln!(text, "tldrgraph: needs_confirmation");
    let _ = writeln!(
        text,
        "  {} bottleneck symbols selected among {} nodes; {} to enrich this run, in {} round(s) of {}.",
        count(payload, "candidates_count"),
        count(payload, "total_nodes"),
        count(payload, "planned_this_run"),
        count(payload, "agent_rounds"),
        count(payload, "batch_size")
    );
    let _ = writeln!(text, "  Next: {}", field(payload, "next_action"));
    let _ = writeln!(
        text,
        "  `tldrgraph plan` lists them with their reasons; `{}` approves.",
        field(payload, "approve_command")
    );
}

/// Batch items listed before "... and N more".
const BATCH_SHOWN: usize = 10;

fn needs_enrichment(text: &mut String, payload: &Value) {
    let batch = payload["batch"].as_array().map_or(0, Vec::len);
    let _ = writeln!(
        text,
        "tldrgraph: needs_enrichment: {} approved symbols lack an intent; this batch has {batch} (also in {}).",
        count(payload, "pending"),
        field(payload, "request_file")
    );
    for item in payload["batch"]
        .as_array()
        .into_iter()
        .flatten()
        .take(BATCH_SHOWN)
    {
        let _ = writeln!(
            text,
            "  {}  {}:{}-{}",
            item["id"].as_str().unwrap_or(""),
            item["file"].as_str().unwrap_or(""),
            item["line_start"],
            item["line_end"]
        );
    }
    if batch > BATCH_SHOWN {
        let _ = writeln!(text, "  ... and {} more", batch - BATCH_SHOWN);
    }
    let _ = writeln!(text, "  Next: {}", field(payload, "next_action"));
}

/// Whether the state is current with the sources, when the payload says.
fn freshness(text: &mut String, payload: &Value) {
    match payload["fresh"] {
        Value::Bool(true) => {
            let _ = writeln!(text, "  Up to date with the sources.");
        }
        Value::Bool(false) => {
            let changes = &payload["changes"];
            let _ = writeln!(
                text,
                "  Stale: {} changed, {} added, {} removed source files{} since the last build; run `tldrgraph init`.",
                changes["changed"]["count"],
                changes["added"]["count"],
                changes["removed"]["count"],
                if changes["config_changed"] == Value::Bool(true) {
                    ", and the layers config changed"
                } else {
                    ""
                }
            );
        }
        _ => {}
    }
}
