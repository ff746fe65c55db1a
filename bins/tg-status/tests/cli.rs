//! tg-status on small inline streams, run as a real process.

use assert_cmd::Command;
use serde_json::Value;

fn status(dir: &std::path::Path, lines: &[&str]) -> (Value, Option<i32>) {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let output = Command::cargo_bin("tg-status")
        .expect("binary")
        .arg("--root")
        .arg(dir)
        .write_stdin(input)
        .output()
        .expect("run");
    let payload = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (payload, output.status.code())
}

const HEADER: &str = r#"{"type":"header","schema":"1.0","producer":"test","root":"."}"#;
const NODE: &str = r#"{"type":"node","id":"a.py","kind":"module","name":"a","file":"a.py","line_start":1,"line_end":1,"hash":"0"}"#;
const SUMMARY: &str = r#"{"type":"summary","stage":"test"}"#;

#[test]
fn the_first_blocking_state_in_pipeline_order_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let enrichment = r#"{"type":"status","status":"needs_enrichment","batch":[]}"#;
    let layers = r#"{"type":"status","status":"needs_layers","reason":"r","extracted_symbols_count":0,"top_directories":[],"next_action":"x"}"#;
    let (payload, code) = status(dir.path(), &[HEADER, NODE, enrichment, layers, SUMMARY]);
    assert_eq!(code, Some(0));
    assert_eq!(payload["status"], "needs_layers");
    assert!(
        payload.get("type").is_none(),
        "the payload is the record without its type"
    );

    let (done, _) = status(dir.path(), &[HEADER, NODE, SUMMARY]);
    assert_eq!(
        done,
        serde_json::json!({"status":"done","nodes_count":1,"edges_count":0,"layers_count":0,"embeddings_ready":false,"enriched":0,"declined":0})
    );
    let graph = std::fs::read_to_string(dir.path().join(".tldrgraph/graph.json")).expect("graph");
    assert_eq!(
        graph,
        format!("{{\"schema\":\"1.0\",\"nodes\":[\n{NODE}\n],\"edges\":[\n\n],\"layers\":[\n\n],\"files\":[\n\n]}}\n")
    );
    let parsed: Value = serde_json::from_str(&graph).expect("graph.json is JSON");
    assert_eq!(parsed["nodes"][0]["id"], "a.py");
}

#[test]
fn a_stream_without_a_header_or_a_summary_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(status(dir.path(), &[NODE, SUMMARY]).1, Some(65));
    assert_eq!(status(dir.path(), &[HEADER, NODE]).1, Some(65));
    assert_eq!(status(dir.path(), &[HEADER, "{not json"]).1, Some(65));
    assert!(!dir.path().join(".tldrgraph/graph.json").exists());
    assert!(!dir.path().join(".tldrgraph/state.json").exists());
}

#[test]
fn empty_stdin_reports_the_last_build() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (payload, code) = status(dir.path(), &[]);
    assert_eq!(code, Some(0));
    assert_eq!(payload["status"], "not_built");
    assert!(
        !dir.path().join(".tldrgraph").exists(),
        "reporting writes nothing"
    );
    status(dir.path(), &[HEADER, NODE, SUMMARY]);
    let (payload, _) = status(dir.path(), &[]);
    assert_eq!(payload["status"], "done");
    assert_eq!(payload["nodes_count"], 1);
    assert_eq!(
        payload["fresh"], true,
        "no file records, nothing to compare"
    );
}
