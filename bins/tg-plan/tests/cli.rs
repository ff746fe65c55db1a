//! tg-plan on a small graph of known structure, run as a real process.

use assert_cmd::Command;
use serde_json::Value;

/// A node record.
fn node(id: &str, layer: &str, lines: u32) -> String {
    let file = id.split("::").next().unwrap_or(id);
    let name = id.rsplit("::").next().unwrap_or(id);
    format!(
        r#"{{"type":"node","id":"{id}","kind":"function","name":"{name}","file":"{file}","line_start":1,"line_end":{lines},"hash":"h-{name}","layer":"{layer}"}}"#
    )
}

fn call(src: &str, dst: &str) -> String {
    format!(r#"{{"type":"edge","kind":"calls","src":"{src}","dst":"{dst}","line":1,"count":1}}"#)
}

/// A hub called from three layers (and from the catch-all), a chain a → bridge → c through one
/// bridge function, an isolated one-line helper, and a symbol of the catch-all layer.
fn stream() -> String {
    let mut lines =
        vec![r#"{"type":"header","schema":"1.0","producer":"test","root":"."}"#.to_string()];
    for (id, layer, len) in [
        ("a/x.py::fa", "a", 5),
        ("a/x.py::start", "a", 5),
        ("b/y.py::fb", "b", 5),
        ("c/z.py::fc", "c", 5),
        ("c/z.py::end", "c", 5),
        ("core/hub.py::hub", "core", 9),
        ("core/bridge.py::bridge", "core", 6),
        ("core/util.py::helper", "core", 1),
        ("shared/s.py::misc", "shared", 5),
    ] {
        lines.push(node(id, layer, len));
    }
    for (src, dst) in [
        ("a/x.py::fa", "core/hub.py::hub"),
        ("b/y.py::fb", "core/hub.py::hub"),
        ("c/z.py::fc", "core/hub.py::hub"),
        ("shared/s.py::misc", "core/hub.py::hub"),
        ("a/x.py::start", "core/bridge.py::bridge"),
        ("core/bridge.py::bridge", "c/z.py::end"),
    ] {
        lines.push(call(src, dst));
    }
    lines.push(
        r#"{"type":"layer","id":"shared","name":"Shared","order":9,"nodes":1,"default":true}"#
            .to_string(),
    );
    lines.push(r#"{"type":"summary","stage":"test"}"#.to_string());
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn plan(dir: &std::path::Path, args: &[&str]) -> (Vec<Value>, Option<i32>) {
    let output = Command::cargo_bin("tg-plan")
        .expect("binary")
        .arg("--root")
        .arg(dir)
        .args(args)
        .write_stdin(stream())
        .output()
        .expect("run");
    let records = String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    (records, output.status.code())
}

fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

#[test]
fn the_hub_and_the_bridge_are_chosen_and_the_rest_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (records, code) = plan(dir.path(), &["--max-symbols", "2"]);
    assert_eq!(code, Some(0));
    let candidates = of_type(&records, "candidate");
    let ids: Vec<&str> = candidates.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["core/bridge.py::bridge", "core/hub.py::hub"]);
    let hub = candidates[1];
    assert_eq!(hub["rank"], 2);
    assert_eq!(hub["metrics"]["fan_in"], 4);
    assert_eq!(hub["metrics"]["calling_layers"], 4);
    assert_eq!(hub["reasons"][0], "called from 4 other layers");
    let bridge = candidates[0];
    assert_eq!(bridge["metrics"]["betweenness"], 1.0);
    assert!(bridge["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .any(|r| r == "top 1% betweenness"));
    // Every record of the input passed through, in order, before ours.
    assert_eq!(records.len(), stream().lines().count() + 2 + 2);
    let status = of_type(&records, "status");
    assert_eq!(status.len(), 1);
    assert_eq!(status[0]["status"], "needs_confirmation");
    assert_eq!(status[0]["total_nodes"], 9);
    assert_eq!(status[0]["candidates_count"], 2);
    assert_eq!(status[0]["planned_this_run"], 2);
    assert_eq!(status[0]["agent_rounds"], 1);
    // The same graph ranks the same, byte for byte.
    assert_eq!(plan(dir.path(), &["--max-symbols", "2"]).0, records);
}

#[test]
fn a_small_repository_plans_its_whole_core_and_never_tests() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Within the budget (the whole eligible set of a small repository), every non-trivial
    // product symbol outside the catch-all layer; the one-line helper is trivial.
    let (records, _) = plan(dir.path(), &[]);
    let ids: Vec<&str> = of_type(&records, "candidate")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 7, "{ids:?}");
    assert!(!ids.contains(&"core/util.py::helper"));
    assert!(!ids.contains(&"shared/s.py::misc"));
    let summary = of_type(&records, "summary");
    let ours = summary.last().expect("summary");
    assert_eq!(
        (&ours["budget"], &ours["skipped_trivial"]),
        (&Value::from(7), &Value::from(1))
    );

    // The same graph with the callers of the hub marked as tests: their calls no longer make it
    // central, and they are never candidates.
    let tests: String = stream()
        .lines()
        .map(|l| {
            if l.contains("\"id\":\"a/x.py::fa\"") || l.contains("\"id\":\"b/y.py::fb\"") {
                l.replace("\"layer\"", "\"role\":\"test\",\"layer\"")
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    let output = Command::cargo_bin("tg-plan")
        .expect("binary")
        .arg("--root")
        .arg(dir.path())
        .write_stdin(tests)
        .output()
        .expect("run");
    let records: Vec<Value> = String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let candidates = of_type(&records, "candidate");
    let ids: Vec<&str> = candidates.iter().filter_map(|c| c["id"].as_str()).collect();
    assert!(
        !ids.contains(&"a/x.py::fa") && !ids.contains(&"b/y.py::fb"),
        "{ids:?}"
    );
    let hub = candidates
        .iter()
        .find(|c| c["id"] == "core/hub.py::hub")
        .expect("hub");
    assert_eq!(
        hub["metrics"]["fan_in"], 2,
        "only product callers count: {hub}"
    );
}

#[test]
fn edges_before_their_nodes_and_absurd_line_numbers_are_handled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = stream();
    let is_edge = |l: &&str| l.contains("\"type\":\"edge\"");
    let edges: Vec<&str> = text.lines().filter(is_edge).collect();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !is_edge(l))
        .map(str::to_string)
        .collect();
    // The edges first, right after the header; one node with an absurd line range.
    for (i, edge) in edges.into_iter().enumerate() {
        lines.insert(1 + i, edge.to_string());
    }
    let odd = node("core/odd.py::odd", "core", 1).replace(
        "\"line_start\":1,\"line_end\":1",
        "\"line_start\":0,\"line_end\":4294967295",
    );
    let last = lines.len() - 1;
    lines.insert(last, odd);
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let output = Command::cargo_bin("tg-plan")
        .expect("binary")
        .arg("--root")
        .arg(dir.path())
        .args(["--max-symbols", "2"])
        .write_stdin(input)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        text.contains("\"id\":\"core/hub.py::hub\",\"rank\""),
        "{text}"
    );
    assert!(!text.contains("null"), "no non-finite number in any record");
}

#[test]
fn limit_and_batch_arithmetic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let status = |args: &[&str]| {
        let mut all = vec!["--max-symbols", "2"];
        all.extend_from_slice(args);
        let (records, _) = plan(dir.path(), &all);
        of_type(&records, "status").first().map(|s| (*s).clone())
    };
    let one = status(&["--limit", "1"]).expect("status");
    assert_eq!(
        (
            one["planned_this_run"].as_u64(),
            one["agent_rounds"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let batch_one = status(&["--batch", "1"]).expect("status");
    assert_eq!(batch_one["agent_rounds"], 2);
    let big_batch = status(&["--batch", "500"]).expect("status");
    assert_eq!(
        (
            big_batch["agent_rounds"].as_u64(),
            big_batch["batch_size"].as_u64()
        ),
        (Some(1), Some(500))
    );
    assert!(
        status(&["--limit", "0"]).is_none(),
        "nothing planned, nothing to confirm"
    );
    assert!(
        status(&["--enrich", "off"]).is_none(),
        "zero-token mode never asks"
    );
}

#[test]
fn approval_lifecycle_and_a_malformed_approval_is_no_approval() {
    let dir = tempfile::tempdir().expect("tempdir");
    let approval = dir.path().join(".tldrgraph/approval.json");
    let (records, _) = plan(dir.path(), &["--max-symbols", "2", "--yes"]);
    assert!(of_type(&records, "status").is_empty());
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&approval).expect("approval")).expect("json");
    assert_eq!(
        saved["ids"],
        serde_json::json!(["core/bridge.py::bridge", "core/hub.py::hub"])
    );
    let (records, _) = plan(dir.path(), &["--max-symbols", "2"]);
    assert!(
        of_type(&records, "status").is_empty(),
        "approved: no question"
    );

    std::fs::write(&approval, "{ not json").expect("write");
    let (records, _) = plan(dir.path(), &["--max-symbols", "2"]);
    assert_eq!(
        of_type(&records, "status")[0]["status"],
        "needs_confirmation"
    );
    let diagnostic = of_type(&records, "diagnostic");
    assert_eq!(diagnostic[0]["code"], "bad_approval");
    assert!(diagnostic[0]["message"]
        .as_str()
        .unwrap_or("")
        .contains("line 1"));

    // `--yes --limit 1` approves what this run was asked about (the first by rank) and goes on;
    // the next run asks about the rest only.
    std::fs::remove_file(&approval).expect("rm");
    let (records, _) = plan(dir.path(), &["--max-symbols", "2", "--yes", "--limit", "1"]);
    assert!(
        of_type(&records, "status").is_empty(),
        "approved this run: no question"
    );
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&approval).expect("approval")).expect("json");
    assert_eq!(saved["ids"], serde_json::json!(["core/bridge.py::bridge"]));
    assert_eq!(saved["limit"], 1);
    // The approved symbol is written first; the question about the rest waits until it is.
    let (records, _) = plan(dir.path(), &["--max-symbols", "2"]);
    assert!(
        of_type(&records, "status").is_empty(),
        "approved work first"
    );
    let bridge = of_type(&records, "node")
        .into_iter()
        .find(|n| n["id"] == "core/bridge.py::bridge")
        .expect("bridge node");
    std::fs::write(
        dir.path().join(".tldrgraph/intents.ndjson"),
        format!(
            "{{\"id\":\"core/bridge.py::bridge\",\"intent\":\"Bridges.\",\"hash\":{},\"source\":\"agent\"}}\n",
            bridge["hash"]
        ),
    )
    .expect("intents");
    let (records, _) = plan(dir.path(), &["--max-symbols", "2"]);
    assert_eq!(of_type(&records, "status")[0]["planned_this_run"], 1);

    // A second tg-plan in the same pipeline gives the same bytes, malformed approval included.
    std::fs::write(&approval, "{ not json").expect("write");
    let run = |input: Vec<u8>| {
        Command::cargo_bin("tg-plan")
            .expect("binary")
            .arg("--root")
            .arg(dir.path())
            .write_stdin(input)
            .output()
            .expect("run")
            .stdout
    };
    let once = run(stream().into_bytes());
    let twice = run(once.clone());
    assert_eq!(
        String::from_utf8_lossy(&twice),
        String::from_utf8_lossy(&once)
    );
}
