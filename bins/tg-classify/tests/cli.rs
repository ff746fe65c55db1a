//! tg-classify on small inline streams, run as a real process.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

const HEADER: &str = r#"{"type":"header","schema":"1.0","producer":"test","root":"."}"#;

/// A stream of two files, three symbols and four edges, in tg-extract's order.
fn stream() -> String {
    [
        HEADER,
        r#"{"type":"file","path":"app/api.py","lang":"python","hash":"a1","bytes":10,"lines":5}"#,
        r#"{"type":"node","id":"app/api.py","kind":"module","name":"api","file":"app/api.py","line_start":1,"line_end":5,"hash":"m1"}"#,
        r#"{"type":"node","id":"app/api.py::handle","kind":"function","name":"handle","file":"app/api.py","line_start":1,"line_end":3,"doc":"Handle it.","hash":"h1","future_field":[1,2]}"#,
        r#"{"type":"file","path":"lib/db.py","lang":"python","hash":"b1","bytes":10,"lines":5}"#,
        r#"{"type":"node","id":"lib/db.py","kind":"module","name":"db","file":"lib/db.py","line_start":1,"line_end":5,"hash":"m2"}"#,
        r#"{"type":"node","id":"lib/db.py::query","kind":"function","name":"query","file":"lib/db.py","line_start":1,"line_end":2,"hash":"q1"}"#,
        r#"{"type":"edge","kind":"contains","src":"app/api.py","dst":"app/api.py::handle","line":1,"count":1}"#,
        r#"{"type":"edge","kind":"calls","src":"app/api.py::handle","dst":"lib/db.py::query","line":2,"count":1,"resolution":"import","confidence":0.95}"#,
        r#"{"type":"edge","kind":"imports","src":"app/api.py","dst":"lib/db.py","line":1,"count":1}"#,
        r#"{"type":"edge","kind":"calls","src":"lib/db.py::query","dst":"lib/db.py::query","line":2,"count":1,"resolution":"local","confidence":1.0}"#,
        r#"{"type":"someday","x":1}"#,
        r#"{"type":"summary","stage":"tg-extract","nodes":4}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat()
}

const LAYERS: &str = "version: 1\ndefault_layer: lib\nlayers:\n  - id: api\n    name: API\n    order: 1\n    paths: [app]\n    may_depend_on: []\n  - id: lib\n    name: Library\n    order: 2\n";

fn repo(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join(".tldrgraph")).expect("mkdir");
    if let Some(text) = config {
        fs::write(dir.path().join(".tldrgraph/layers.config.yaml"), text).expect("config");
    }
    dir
}

fn classify(dir: &Path, input: &str, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("tg-classify")
        .expect("binary")
        .arg("--root")
        .arg(dir)
        .args(args)
        .write_stdin(input.to_string())
        .output()
        .expect("run")
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8(bytes.to_vec())
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Calling a class has two edges, to the class and to its constructor (for traces): one call,
/// one violation. A constructor called on its own line is a violation of its own.
#[test]
fn a_call_of_a_class_is_one_violation_not_two() {
    let dir = repo(Some(LAYERS));
    let edge = |dst: &str, line: u32| {
        format!(
            r#"{{"type":"edge","kind":"calls","src":"app/api.py::handle","dst":"lib/db.py::{dst}","line":{line},"count":1,"resolution":"import","confidence":0.95}}"#
        )
    };
    let nodes = [
        r#"{"type":"node","id":"lib/db.py::Store","kind":"class","name":"Store","file":"lib/db.py","line_start":3,"line_end":5,"hash":"c1"}"#,
        r#"{"type":"node","id":"lib/db.py::Store.__init__","kind":"method","name":"__init__","file":"lib/db.py","line_start":4,"line_end":5,"parent":"lib/db.py::Store","hash":"i1"}"#,
    ];
    let with = |edges: &[String]| {
        let base = stream();
        let at = base.find(r#"{"type":"edge""#).expect("edges");
        let mut text = base[..at].to_string();
        for node in nodes {
            text.push_str(node);
            text.push('\n');
        }
        for e in edges {
            text.push_str(e);
            text.push('\n');
        }
        text.push_str(&base[at..]);
        text
    };
    let violations = |input: String| -> (Vec<String>, String) {
        let output = classify(dir.path(), &input, &[]);
        assert!(output.status.success());
        let out = lines(&output.stdout);
        let marked = out
            .iter()
            .filter(|l| l.contains(r#""violation":true"#))
            .map(|l| {
                l.split(r#""dst":""#)
                    .nth(1)
                    .unwrap_or("")
                    .split('"')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        let summary = out
            .iter()
            .rev()
            .find(|l| l.contains("tg-classify"))
            .cloned()
            .unwrap_or_default();
        (marked, summary)
    };
    let (marked, summary) = violations(with(&[edge("Store", 2), edge("Store.__init__", 2)]));
    // (The fixture's call of `query` and its import of lib/db.py violate too.)
    assert_eq!(
        marked,
        ["lib/db.py::Store", "lib/db.py::query", "lib/db.py"]
    );
    assert!(summary.contains(r#""violations":3,"#), "{summary}");
    let (marked, summary) = violations(with(&[edge("Store", 2), edge("Store.__init__", 1)]));
    assert_eq!(
        marked,
        [
            "lib/db.py::Store",
            "lib/db.py::Store.__init__",
            "lib/db.py::query",
            "lib/db.py"
        ]
    );
    assert!(summary.contains(r#""violations":4,"#), "{summary}");
}

/// An `ambiguous` edge (a guess, or one of several build variants) that crosses a forbidden
/// boundary is a cross-layer edge and a possible violation, never a violation.
#[test]
fn an_ambiguous_edge_is_a_possible_violation_not_a_violation() {
    let dir = repo(Some(LAYERS));
    let certain =
        r#""dst":"lib/db.py::query","line":2,"count":1,"resolution":"import","confidence":0.95"#;
    let input = stream();
    assert!(input.contains(certain), "the fixture stream's certain edge");
    let guessed =
        r#""dst":"lib/db.py::query","line":2,"count":1,"resolution":"ambiguous","confidence":0.3"#;
    let output = classify(dir.path(), &input.replace(certain, guessed), &[]);
    assert!(output.status.success());
    let out = lines(&output.stdout);
    assert!(
        out[8].ends_with(r#""confidence":0.3,"cross_layer":true}"#),
        "{}",
        out[8]
    );
    assert!(
        out[15].ends_with(r#""violations":1,"violations_ambiguous":1}"#),
        "{}",
        out[15]
    );
}

#[test]
fn layers_and_marks_are_added_and_everything_else_passes_through() {
    let dir = repo(Some(LAYERS));
    let output = classify(dir.path(), &stream(), &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out = lines(&output.stdout);
    let input: Vec<String> = stream().lines().map(str::to_string).collect();
    assert_eq!(
        out[..2],
        input[..2],
        "the header and the file record pass unchanged"
    );
    assert_eq!(
        out[3],
        r#"{"type":"node","id":"app/api.py::handle","kind":"function","name":"handle","file":"app/api.py","line_start":1,"line_end":3,"doc":"Handle it.","hash":"h1","future_field":[1,2],"layer":"api"}"#
    );
    assert!(out[2].ends_with(r#","layer":"api"}"#), "{}", out[2]);
    assert!(out[6].ends_with(r#","layer":"lib"}"#), "{}", out[6]);
    assert_eq!(out[7], input[7], "contains inside one layer is untouched");
    assert_eq!(
        out[8],
        r#"{"type":"edge","kind":"calls","src":"app/api.py::handle","dst":"lib/db.py::query","line":2,"count":1,"resolution":"import","confidence":0.95,"cross_layer":true,"violation":true}"#
    );
    assert!(out[9].ends_with(r#""cross_layer":true,"violation":true}"#));
    assert_eq!(out[10], input[10], "an edge inside one layer is untouched");
    assert_eq!(out[11], input[11], "unknown record types pass through");
    assert_eq!(out[12], input[12], "the upstream summary passes through");
    assert_eq!(
        out[13],
        r#"{"type":"layer","id":"api","name":"API","order":1,"nodes":2,"may_depend_on":[]}"#
    );
    assert_eq!(
        out[14],
        r#"{"type":"layer","id":"lib","name":"Library","order":2,"nodes":2,"default":true}"#
    );
    assert_eq!(
        out[15],
        r#"{"type":"summary","stage":"tg-classify","config":"native","cross_layer_edges":2,"layers":2,"nodes":4,"violations":2,"violations_ambiguous":0}"#
    );
    assert_eq!(out.len(), 16);

    // Run twice in one pipeline: the same output as once.
    let again = classify(dir.path(), &String::from_utf8_lossy(&output.stdout), &[]);
    let twice = lines(&again.stdout);
    assert_eq!(twice, out, "classifying twice gives the same bytes as once");
}

#[test]
fn without_a_config_everything_is_unclassified_and_layers_are_needed() {
    let dir = repo(None);
    let output = classify(dir.path(), &stream(), &[]);
    assert!(output.status.success());
    let out = lines(&output.stdout);
    assert!(out[3].ends_with(r#""layer":"unclassified"}"#));
    let status: serde_json::Value = serde_json::from_str(&out[14]).expect("status");
    assert_eq!(status["type"], "status");
    assert_eq!(status["status"], "needs_layers");
    assert_eq!(status["extracted_symbols_count"], 2);
    // The seed spec's list of path strings; the counts beside it.
    assert_eq!(status["top_directories"], serde_json::json!(["app", "lib"]));
    assert_eq!(
        status["directories"],
        serde_json::json!([
            {"path": "app", "symbols": 1, "product": 1, "files": 1, "recursive": true},
            {"path": "lib", "symbols": 1, "product": 1, "files": 1, "recursive": true}
        ])
    );
    assert!(dir.path().join(".tldrgraph/symbols.md").exists());
    let report = fs::read_to_string(dir.path().join(".tldrgraph/layers.yaml")).expect("report");
    assert!(report.contains("config: none"), "{report}");
}

#[test]
fn a_malformed_line_is_named_and_nothing_is_written() {
    let dir = repo(Some(LAYERS));
    let broken = stream().replacen(
        "{\"type\":\"node\",\"id\":\"lib/db.py\"",
        "{\"type\":\"node\",\"id\":",
        1,
    );
    let output = classify(dir.path(), &broken, &[]);
    assert_eq!(output.status.code(), Some(65));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("tg-classify: error: stdin: line 6: "),
        "{stderr}"
    );
    assert!(!dir.path().join(".tldrgraph/layers.yaml").exists());
}

#[test]
fn check_reports_what_each_layer_matches() {
    let dir = repo(Some(LAYERS));
    let output = classify(dir.path(), &stream(), &["--check", "--json"]);
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["valid"], true);
    assert_eq!(report["nodes"], 4);
    assert_eq!(report["layers"][0]["id"], "api");
    assert_eq!(
        report["layers"][0]["examples"],
        serde_json::json!(["app/api.py", "app/api.py::handle"])
    );
    assert!(
        !dir.path().join(".tldrgraph/layers.yaml").exists(),
        "--check writes nothing"
    );

    let bad = repo(Some(
        &LAYERS.replace("may_depend_on: []", "may_depend_on: [libs]"),
    ));
    let output = classify(bad.path(), &stream(), &["--check", "--json"]);
    assert_eq!(output.status.code(), Some(65));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["valid"], false);
    assert_eq!(report["line"], 8);
    assert!(
        report["hint"]
            .as_str()
            .unwrap_or("")
            .contains("did you mean `lib`?"),
        "{report}"
    );
}

#[test]
fn an_artifact_that_cannot_be_written_leaves_the_stream_without_a_summary() {
    let dir = repo(Some(LAYERS));
    // A directory where layers.yaml belongs: the write fails.
    fs::create_dir_all(dir.path().join(".tldrgraph/layers.yaml")).expect("mkdir");
    let output = classify(dir.path(), &stream(), &[]);
    assert_eq!(output.status.code(), Some(73));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(stderr.contains("layers.yaml"), "{stderr}");
    let out = lines(&output.stdout);
    assert!(
        out.iter().all(|l| !l.contains("\"stage\":\"tg-classify\"")),
        "no summary, so the stages after this one commit nothing"
    );
}
