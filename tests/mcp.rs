//! `tldrgraph mcp` driven over real stdio: by the official MCP Python SDK (`ClientSession` over
//! `stdio_client`, tests/mcp/client.py; `bash tests/mcp/deps.sh` installs it, `make test` does)
//! and, for what no well-behaved client sends, by raw JSON-RPC lines on the server's pipes.
//! The expected answers were read off the fixture's code (tests/fixtures/python) before the
//! server was run on it.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tg_integration::{init_json, layered_fixture, stage};

/// The Python that has the SDK; a missing SDK fails the test (never a silent skip).
fn python() -> String {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import mcp, jsonschema"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    assert!(
        probe.status.success(),
        "the MCP Python SDK is missing for {python}: run `bash tests/mcp/deps.sh` (make test does)\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    python
}

/// The python fixture with its layers config, built to `done` in zero-token mode.
fn built() -> tempfile::TempDir {
    let repo = layered_fixture("python");
    let (payload, code) = init_json(repo.path(), &["--enrich", "off"]);
    assert_eq!(
        (payload["status"].as_str(), code),
        (Some("done"), 0),
        "{payload}"
    );
    repo
}

/// Runs the SDK client on `steps` against a server on `repo`: the handshake's record, then one
/// record per step.
fn drive(repo: &Path, steps: &Value, server_args: &[&str]) -> Vec<Value> {
    let child = drive_start(repo, steps, server_args);
    let output = child.wait_with_output().expect("wait for the client");
    drive_records(output)
}

fn drive_start(repo: &Path, steps: &Value, server_args: &[&str]) -> std::process::Child {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp/client.py");
    let mut child = Command::new(python())
        .arg(script)
        .arg(stage("tldrgraph"))
        .arg(repo)
        .args(server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the client");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(steps.to_string().as_bytes())
        .expect("write steps");
    drop(stdin);
    child
}

fn drive_records(output: std::process::Output) -> Vec<Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {}\nstdout: {stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The structured answer of a tool call record that must have succeeded.
fn answer(record: &Value) -> &Value {
    assert_eq!(record["is_error"], false, "{record}");
    &record["structured"]
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|item| item["id"].as_str().expect("id"))
        .collect()
}

#[test]
fn the_handshake_and_the_tool_list_with_valid_schemas() {
    let repo = built();
    let records = drive(repo.path(), &json!([{"list_tools": true}]), &[]);
    assert_eq!(records[0]["server"], "tldrgraph");
    assert!(records[0]["protocol"]
        .as_str()
        .is_some_and(|v| v >= "2025-06-18"));
    let tools = records[1]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "apply_intents",
            "callees",
            "callers",
            "check",
            "dead_code",
            "impact",
            "init",
            "layers",
            "search",
            "status",
            "symbol",
            "trace"
        ]
    );
    for tool in tools {
        assert_eq!(tool["schemas_valid"], true, "{tool}");
        assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
        assert_eq!(tool["output_schema"]["type"], "object", "{tool}");
        let writes = matches!(tool["name"].as_str(), Some("init" | "apply_intents"));
        assert_eq!(tool["read_only"], !writes, "{tool}");
    }
    let search = tools
        .iter()
        .find(|t| t["name"] == "search")
        .expect("search");
    assert_eq!(search["input_schema"]["required"], json!(["query"]));
    for field in ["results", "freshness", "budget"] {
        assert!(
            search["output_schema"]["properties"].get(field).is_some(),
            "{field}"
        );
    }
}

#[test]
fn every_query_tool_answers_on_the_fixture() {
    let repo = built();
    let steps = json!([
        {"call": "status"},
        {"call": "search", "args": {"query": "fetch a url", "k": 3}},
        {"call": "trace", "args": {"from": "main", "to": "pkg/api.py::get"}},
        {"call": "callers", "args": {"symbol": "pkg/api.py::get"}},
        {"call": "callees", "args": {"symbol": "request", "depth": 2}},
        {"call": "symbol", "args": {"symbol": "api.get", "source": true}},
        {"call": "dead_code"},
        {"call": "layers"},
        {"call": "symbol", "args": {"symbol": "no_such_function"}},
        {"call": "trace", "args": {"from": "load", "to": "get"}},
    ]);
    let r = drive(repo.path(), &steps, &[]);

    let status = answer(&r[1]);
    assert_eq!(
        (status["status"].as_str(), status["fresh"].as_bool()),
        (Some("done"), Some(true))
    );
    assert!(
        status.to_string().len() < 600,
        "status stays small: {status}"
    );

    let search = answer(&r[2]);
    assert_eq!(search["results"][0]["id"], "pkg/api.py::get");
    assert_eq!(search["results"][0]["intent"], "Fetch a URL.");
    assert_eq!(search["freshness"]["fresh"], true);
    assert_eq!(search["freshness"]["state"], "done");
    assert!(search["budget"]["tokens"]
        .as_u64()
        .is_some_and(|t| t <= 4000));

    let trace = answer(&r[3]);
    assert_eq!(trace["found"], true);
    let path: Vec<&str> = trace["path"]
        .as_array()
        .expect("path")
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        path,
        [
            "main.py::main",
            "pkg/api.py::load",
            "pkg/api.py::index",
            "pkg/api.py::get"
        ]
    );

    // `get` is called by the module main.py (line 5), by index (line 24) and by the closure
    // inner in Session.load.
    let callers = answer(&r[4]);
    let mut found = ids(&callers["results"]);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "main.py",
            "pkg/api.py::Session.load.inner",
            "pkg/api.py::index"
        ]
    );
    let index = &callers["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|c| c["id"] == "pkg/api.py::index")
        .expect("index")["call_line"];
    assert_eq!(index, 24);

    // request calls util.helper (twice, once through an alias) and Session().send(); send
    // calls save and prepare one call further.
    let callees = answer(&r[5]);
    let direct: Vec<&str> = callees["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|c| c["depth"] == 1)
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    assert!(direct.contains(&"pkg/util.py::helper"), "{direct:?}");
    assert!(direct.contains(&"pkg/api.py::Session.send"), "{direct:?}");
    let deeper = callees["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|c| c["id"] == "pkg/api.py::Session.prepare")
        .expect("prepare at depth 2");
    assert_eq!(
        (deeper["depth"].as_u64(), deeper["via"].as_str()),
        (Some(2), Some("pkg/api.py::Session.send"))
    );

    let symbol = answer(&r[6]);
    assert_eq!(symbol["id"], "pkg/api.py::get");
    assert_eq!(
        (symbol["line_start"].as_u64(), symbol["line_end"].as_u64()),
        (Some(10), Some(12))
    );
    assert_eq!(symbol["signature"], "def get(url)");
    assert_eq!(symbol["layer"], "API");
    assert_eq!(
        symbol["source"],
        json!([
            "def get(url):",
            "    \"\"\"Fetch a URL.\"\"\"",
            "    return request(\"get\", url)"
        ])
    );
    assert_eq!(ids(&symbol["callees"]), ["pkg/api.py::request"]);
    assert_eq!(symbol["callers"].as_array().map(Vec::len), Some(3));

    // Nothing calls the coroutine Session.fetch: a public method, so `unknown`, not `dead`.
    let dead = answer(&r[7]);
    let fetch = dead["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == "pkg/api.py::Session.fetch")
        .expect("fetch is found");
    assert_eq!(fetch["status"], "unknown");
    assert_eq!(
        dead["count"].as_u64(),
        dead["findings"].as_array().map(|f| f.len() as u64)
    );
    assert!(!ids(&dead["findings"]).contains(&"pkg/api.py::get"));

    let layers = answer(&r[8]);
    let names: Vec<&str> = layers["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["id"].as_str().expect("id"))
        .collect();
    assert_eq!(names, ["web", "api", "models", "shared"]);
    // main.py (web) reaches models directly, which web's may_depend_on: [api] forbids.
    let web = &layers["layers"][0];
    assert!(web["violations"].as_u64().is_some_and(|v| v > 0), "{web}");
    assert!(
        web["violation_samples"]
            .to_string()
            .contains("main.py --imports--> pkg/models.py"),
        "{web}"
    );

    let unknown = &r[9];
    assert_eq!(unknown["is_error"], true);
    let error: Value =
        serde_json::from_str(unknown["text"].as_str().expect("text")).expect("json error");
    assert_eq!(error["error"], "no symbol named `no_such_function`");
    assert_eq!(error["kind"], "unknown_symbol");
    assert!(error["hint"]
        .as_str()
        .is_some_and(|h| h.contains("`search`")));
    // An error about the graph says how current that graph is, like an answer.
    assert_eq!(error["freshness"]["fresh"], true);

    // `load` names two symbols (the function and Session.load): the function's whole name
    // wins, as the CLI reads names.
    let trace = answer(&r[10]);
    assert_eq!(trace["from"], "pkg/api.py::load");
    assert_eq!(trace["found"], true);
}

#[test]
fn every_answer_fits_its_budget_and_says_what_was_cut() {
    let repo = built();
    let steps = json!([
        {"call": "dead_code", "args": {"budget_tokens": 200}},
        {"call": "callees", "args": {"symbol": "main", "depth": 10, "budget_tokens": 200}},
        {"call": "dead_code"},
        {"call": "search", "args": {"query": "get", "k": 0, "budget_tokens": 50}},
        {"call": "callers", "args": {"symbol": "pkg/api.py::get", "depth": 11, "min_confidence": 1.5}},
    ]);
    let r = drive(repo.path(), &steps, &[]);
    // Arguments out of range are said to be, with the value used.
    assert_eq!(
        answer(&r[4])["notes"],
        json!([
            "k 0 is outside 1..=100: 1 was used",
            "budget_tokens 50 is below 200: 200 was used"
        ])
    );
    assert_eq!(answer(&r[4])["budget"]["budget_tokens"], 200);
    assert!(answer(&r[4]).to_string().len() <= 200 * 4);
    assert_eq!(
        answer(&r[5])["notes"],
        json!([
            "depth 11 is outside 1..=10: 10 was used",
            "min_confidence 1.5 is outside 0..=1: 1 was used"
        ])
    );
    assert!(answer(&r[1]).get("notes").is_none());
    let full = answer(&r[3]);
    let total = full["findings"].as_array().map_or(0, Vec::len);
    for record in [&r[1], &r[2]] {
        let small = answer(record);
        let size = small.to_string().len();
        assert!(
            size <= 200 * 4,
            "{size} characters for a budget of 200 tokens: {small}"
        );
        assert_eq!(small["budget"]["budget_tokens"], 200);
        assert_eq!(
            small["budget"]["tokens"].as_u64(),
            Some(size.div_ceil(4) as u64)
        );
    }
    let cut = &answer(&r[1])["budget"]["cut"][0];
    assert_eq!(cut["path"], "/findings");
    assert_eq!(cut["total"].as_u64(), Some(total as u64));
    let shown = answer(&r[1])["findings"].as_array().map_or(0, Vec::len);
    assert_eq!(cut["shown"].as_u64(), Some(shown as u64));
    assert!(shown >= 1 && shown < total, "{shown} of {total}");
    // Cut from the tail: the surest findings stay, in order.
    assert_eq!(answer(&r[1])["findings"][0], full["findings"][0]);
    assert_eq!(full["budget"]["cut"], json!([]));
}

#[test]
fn a_source_edit_between_two_calls_is_in_the_second_answer() {
    let repo = built();
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    let edited = format!("{util}\n\ndef freshly_added_parser(text):\n    \"\"\"Parse a freshly fetched page.\"\"\"\n    return helper()\n");
    let steps = json!([
        {"call": "symbol", "args": {"symbol": "freshly_added_parser"}},
        {"write": "pkg/util.py", "text": edited},
        {"call": "status"},
        {"call": "symbol", "args": {"symbol": "freshly_added_parser"}},
        {"call": "status"},
    ]);
    let r = drive(repo.path(), &steps, &["--enrich", "off"]);
    assert_eq!(
        r[1]["is_error"], true,
        "not there before the edit: {}",
        r[1]
    );
    let before = answer(&r[3]);
    assert_eq!(
        (
            before["fresh"].as_bool(),
            before["changes"]["changed"].as_u64()
        ),
        (Some(false), Some(1))
    );
    assert!(
        before["stale"]
            .as_str()
            .is_some_and(|s| s.contains("pkg/util.py")),
        "{before}"
    );
    let after = answer(&r[4]);
    assert_eq!(after["id"], "pkg/util.py::freshly_added_parser");
    assert_eq!(after["intent"], "Parse a freshly fetched page.");
    assert_eq!(ids(&after["callees"]), ["pkg/util.py::helper"]);
    assert_eq!(after["freshness"]["fresh"], true, "{after}");
    assert_eq!(after["freshness"]["state"], "done", "{after}");
    assert!(
        after["freshness"]["rebuilt"]["changes"]
            .as_str()
            .is_some_and(|c| c.contains("pkg/util.py")),
        "{after}"
    );
    assert!(after["freshness"].get("stale").is_none(), "{after}");
    assert_eq!(answer(&r[5])["fresh"], true);
}

/// With nothing changed, an answer reuses the last freshness check (the server watches what a
/// check reads); every kind of change still reaches the next answer: an edit, a new file, a
/// file in a new directory, an ignore file that hides a source, the layers config.
#[test]
fn answers_between_changes_see_every_change_of_the_sources_and_the_config() {
    let repo = built();
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    let config =
        std::fs::read_to_string(repo.path().join(".tldrgraph/layers.config.yaml")).expect("config");
    let steps = json!([
        {"call": "status"},
        {"call": "status"},
        {"call": "status"},
        {"write": "pkg/util.py", "text": format!("{util}\nX = 1\n")},
        {"call": "status"},
        {"call": "status"},
        {"write": "pkg/fresh.py", "text": "def fresh():\n    return 1\n"},
        {"call": "status"},
        {"write": "newpkg/deep/inner.py", "text": "def inner():\n    return 2\n"},
        {"call": "status"},
        {"call": "status"},
        {"write": ".gitignore", "text": "pkg/fresh.py\n"},
        {"call": "status"},
        {"write": ".tldrgraph/layers.config.yaml", "text": format!("{config}\n# edited\n")},
        {"call": "status"},
    ]);
    let r = drive(repo.path(), &steps, &["--enrich", "off"]);
    let counts = |i: usize| {
        let a = answer(&r[i]);
        let n = |key: &str| a["changes"][key].as_u64().unwrap_or(0);
        (a["fresh"].as_bool(), n("changed"), n("added"), n("removed"))
    };
    for (i, record) in r.iter().enumerate().take(4).skip(1) {
        assert_eq!(counts(i), (Some(true), 0, 0, 0), "{record}");
    }
    assert_eq!(counts(5), (Some(false), 1, 0, 0), "the edit: {}", r[5]);
    assert_eq!(counts(6), (Some(false), 1, 0, 0), "asked again: {}", r[6]);
    assert_eq!(counts(8), (Some(false), 1, 1, 0), "a new file: {}", r[8]);
    assert_eq!(
        counts(10),
        (Some(false), 1, 2, 0),
        "a new directory: {}",
        r[10]
    );
    assert_eq!(counts(11), (Some(false), 1, 2, 0), "asked again: {}", r[11]);
    assert_eq!(
        counts(13),
        (Some(false), 1, 1, 0),
        "ignored again: {}",
        r[13]
    );
    let last = answer(&r[15]);
    assert!(
        last["stale"]
            .as_str()
            .is_some_and(|s| s.contains("layers config")),
        "the config: {last}"
    );
}

#[test]
fn a_rebuild_past_the_wait_budget_answers_from_the_previous_build_and_says_so() {
    let repo = built();
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    let steps = json!([
        {"write": "pkg/util.py", "text": format!("{util}\n\ndef late_arrival():\n    return 1\n")},
        {"call": "search", "args": {"query": "fetch a url", "k": 1}},
    ]);
    // A wait of 0 ms: the rebuild cannot be done before the answer.
    let r = drive(repo.path(), &steps, &["--wait-ms", "0", "--enrich", "off"]);
    let search = answer(&r[2]);
    assert_eq!(search["results"][0]["id"], "pkg/api.py::get");
    assert_eq!(search["freshness"]["fresh"], false);
    assert_eq!(search["freshness"]["pending_changes"]["changed"], 1);
    let stale = search["freshness"]["stale"].as_str().expect("stale");
    assert!(
        stale.contains("pkg/util.py") && stale.contains("previous build"),
        "{stale}"
    );
}

#[test]
fn init_and_apply_intents_drive_the_contract() {
    let repo = layered_fixture("python");
    let steps = json!([
        {"call": "status"},
        {"call": "init"},
        {"call": "init", "args": {"yes": true, "batch": 2}},
        {"call": "apply_intents", "args": {"intents": [{"id": "not/a/symbol.py::x", "intent": "Nothing."}]}},
        {"call": "init", "args": {"budget_tokens": 200}},
    ]);
    let r = drive(repo.path(), &steps, &[]);
    assert_eq!(answer(&r[1])["status"], "never_built");
    let first = answer(&r[2]);
    assert_eq!(first["status"], "needs_confirmation", "{first}");
    // The same payload as the CLI's, field for field (the CLI's own run comes later).
    for field in [
        "total_nodes",
        "candidates_count",
        "planned_this_run",
        "batch_size",
        "agent_rounds",
        "next_action",
        "approve_command",
    ] {
        assert!(first.get(field).is_some(), "{field}: {first}");
    }
    let batch = answer(&r[3]);
    assert_eq!(batch["status"], "needs_enrichment", "{batch}");
    let items = batch["batch"].as_array().expect("batch");
    assert_eq!(items.len(), 2);
    let rejected = &r[4];
    assert_eq!(rejected["is_error"], true);
    assert!(
        rejected["text"]
            .as_str()
            .is_some_and(|t| t.contains("not/a/symbol.py::x")),
        "{rejected}"
    );
    // Beside the contract's fields, the call that moves the loop on.
    assert_eq!(first["next_tool"]["name"], "init");
    assert_eq!(first["next_tool"]["arguments"], json!({"yes": true}));
    assert_eq!(batch["next_tool"]["name"], "apply_intents");
    // A batch cut to a small budget is a smaller batch, counted as such.
    let small = answer(&r[5]);
    assert_eq!(small["status"], "needs_enrichment", "{small}");
    let cut = small["budget"]["cut"]
        .as_array()
        .expect("cut")
        .iter()
        .find(|c| c["path"] == "/batch")
        .expect("the batch was cut");
    let shown = cut["shown"].as_u64().expect("shown");
    assert_eq!(
        small["batch"].as_array().map(|b| b.len() as u64),
        Some(shown)
    );
    assert_eq!(
        small["remaining_after_batch"].as_u64(),
        batch["remaining_after_batch"]
            .as_u64()
            .map(|r| r + 2 - shown)
    );
    assert!(
        small["next_action"]
            .as_str()
            .is_some_and(|a| a.contains(&format!("each of the {shown} symbols"))),
        "{small}"
    );

    // Answer the batch through the tool: the next state comes back with what was applied.
    let intents: Vec<Value> = items.iter().map(|i| json!({"id": i["id"], "intent": format!("Serves {}.", i["name"].as_str().unwrap_or("it"))})).collect();
    let r = drive(
        repo.path(),
        &json!([{"call": "apply_intents", "args": {"intents": intents}}, {"call": "symbol", "args": {"symbol": items[0]["id"]}}]),
        &[],
    );
    let next = answer(&r[1]);
    assert_eq!(next["applied"]["applied"], 2, "{next}");
    assert!(
        ["needs_enrichment", "done"].contains(&next["status"].as_str().unwrap_or("")),
        "{next}"
    );
    let symbol = answer(&r[2]);
    assert_eq!(
        symbol["intent"],
        format!("Serves {}.", items[0]["name"].as_str().unwrap_or("it"))
    );
    assert_eq!(symbol["intent_source"], "agent");
    // The CLI sees the same state the tool returned.
    let (cli, _) = init_json(repo.path(), &[]);
    assert_eq!(cli["status"], next["status"]);
    assert_eq!(cli["pending"], next["pending"]);
}

#[test]
fn two_servers_on_one_repository_both_answer_the_edit() {
    let repo = built();
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    std::fs::write(
        repo.path().join("pkg/util.py"),
        format!("{util}\n\ndef seen_by_both():\n    return helper()\n"),
    )
    .expect("edit");
    let steps = json!([{"call": "symbol", "args": {"symbol": "seen_by_both"}}, {"call": "status"}]);
    let first = drive_start(repo.path(), &steps, &["--enrich", "off"]);
    let second = drive_start(repo.path(), &steps, &["--enrich", "off"]);
    for child in [first, second] {
        let r = drive_records(child.wait_with_output().expect("wait"));
        let symbol = answer(&r[1]);
        assert_eq!(symbol["id"], "pkg/util.py::seen_by_both");
        assert_eq!(symbol["freshness"]["fresh"], true, "{symbol}");
        assert_eq!(answer(&r[2])["fresh"], true);
    }
    let (payload, _) = init_json(repo.path(), &["--enrich", "off"]);
    assert_eq!(payload["status"], "done");
}

/// A server on raw pipes, for what the SDK never sends: its stdin, and its stdout lines as
/// they come.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Raw {
    fn start(repo: &Path) -> Raw {
        let mut child = Command::new(stage("tldrgraph"))
            .args(["mcp", "--root"])
            .arg(repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| json!({"not_json": line, "why": e.to_string()}));
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut raw = Raw {
            child,
            stdin,
            lines,
        };
        raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
        assert_eq!(raw.next()["id"], 0);
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("open stdin");
        writeln!(stdin, "{line}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// The next line, within a minute (a hung server fails the test instead of hanging it).
    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer from the server")
    }
}

#[test]
fn malformed_requests_and_unknown_tools_get_json_rpc_errors_and_the_server_goes_on() {
    let repo = built();
    let mut raw = Raw::start(repo.path());
    raw.send("{this is not json");
    raw.send(r#"{"id": 7, "method": "tools/list"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":8,"method":"no/such/method"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","arguments":{"query":5}}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","unknown_option":1}}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"status","arguments":{}}}"#);
    let mut by_id = std::collections::BTreeMap::new();
    while by_id.len() < 7 {
        let line = raw.next();
        assert!(
            line.get("not_json").is_none(),
            "stdout carries the protocol only: {line}"
        );
        by_id.insert(line["id"].to_string(), line);
    }
    assert_eq!(by_id["null"]["error"]["code"], -32700);
    assert_eq!(by_id["7"]["error"]["code"], -32600);
    assert_eq!(by_id["8"]["error"]["code"], -32601);
    assert_eq!(by_id["9"]["error"]["code"], -32602);
    assert_eq!(by_id["10"]["result"]["isError"], true);
    assert_eq!(by_id["11"]["result"]["isError"], true);
    assert_eq!(by_id["12"]["result"]["structuredContent"]["status"], "done");
    drop(raw.stdin.take());
    let status = raw
        .child
        .wait()
        .expect("the server ends when its stdin closes");
    assert!(status.success(), "{status}");
}

#[test]
fn a_client_that_disconnects_mid_call_leaves_the_repository_whole() {
    let repo = built();
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    std::fs::write(
        repo.path().join("pkg/util.py"),
        format!("{util}\n\ndef abandoned():\n    return helper()\n"),
    )
    .expect("edit");
    // The call starts a rebuild; the client is gone before the answer.
    let mut raw = Raw::start(repo.path());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dead_code","arguments":{}}}"#);
    drop(raw.stdin.take());
    let (done, waited) = mpsc::channel();
    let mut child = raw.child;
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let status = waited
        .recv_timeout(Duration::from_secs(60))
        .expect("the server exits")
        .expect("status");
    assert!(status.success(), "{status}");
    // The same disconnect through the SDK client: it cancels its call and leaves.
    let util = std::fs::read_to_string(repo.path().join("pkg/util.py")).expect("util.py");
    std::fs::write(
        repo.path().join("pkg/util.py"),
        format!("{util}\n\ndef abandoned_twice():\n    return helper()\n"),
    )
    .expect("edit");
    drive(
        repo.path(),
        &json!([{"call_and_leave": "search", "args": {"query": "abandoned"}}]),
        &[],
    );
    // Whatever the rebuilds were doing, the next build reads a whole repository.
    let (payload, code) = init_json(repo.path(), &["--enrich", "off"]);
    assert_eq!(
        (payload["status"].as_str(), code),
        (Some("done"), 0),
        "{payload}"
    );
    let r = drive(
        repo.path(),
        &json!([{"call": "symbol", "args": {"symbol": "abandoned_twice"}}]),
        &[],
    );
    assert_eq!(answer(&r[1])["freshness"]["fresh"], true);
}

#[test]
fn impact_and_check_answer_through_the_server() {
    let repo = built();
    let dir = repo.path();
    let git = |args: &[&str]| {
        let done = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    };
    std::fs::write(dir.join(".gitignore"), ".tldrgraph/\n").expect(".gitignore");
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    let api = std::fs::read_to_string(dir.join("pkg/api.py")).expect("api.py");
    let edited = api.replacen("    h()\n", "    h()\n    h()\n", 1);
    let steps = json!([
        {"write": "pkg/api.py", "text": edited},
        {"call": "impact", "args": {"depth": 1}},
        {"call": "check", "args": {"since": "HEAD"}},
        {"call": "check", "args": {"since": "no-such-ref"}},
    ]);
    let r = drive(dir, &steps, &["--enrich", "off"]);
    let impact = answer(&r[2]);
    assert_eq!(ids(&impact["changed"]), ["pkg/api.py::request"]);
    assert_eq!(ids(&impact["callers"]), ["pkg/api.py::get"]);
    assert_eq!(impact["budget"]["cut"], json!([]));
    let check = answer(&r[3]);
    assert_eq!(
        (
            check["count"].as_u64(),
            check["violations"].as_array().map(Vec::len)
        ),
        (Some(0), Some(0))
    );
    assert!(check["scope"]
        .as_str()
        .is_some_and(|s| s.starts_with("introduced since HEAD")));
    assert_eq!(r[4]["is_error"], true);
    assert!(
        r[4]["text"]
            .as_str()
            .is_some_and(|t| t.contains("`no-such-ref` names no commit")),
        "{}",
        r[4]
    );
}
