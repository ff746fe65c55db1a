//! tg-enrich through real processes: the agent loop in batches, per-symbol staleness, the
//! answer checks, the dropped response file, zero-token mode, and the LLM endpoint mode
//! against a real HTTP server on 127.0.0.1.

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;
use tg_integration::loopback::{Received, Reply, Server};
use tg_integration::{
    answer_batches, init_json, json_payload, layered_fixture, run, stage, test_intent,
};

const KEY: &str = "sk-test-7Hq2-never-print-me";

fn graph_node(dir: &Path, id: &str) -> Value {
    let graph: Value =
        serde_json::from_slice(&fs::read(dir.join(".tldrgraph/graph.json")).expect("graph"))
            .expect("graph json");
    graph["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no node {id}"))
}

fn intents(dir: &Path) -> Vec<Value> {
    fs::read_to_string(dir.join(".tldrgraph/intents.ndjson"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("intent line"))
        .collect()
}

fn ids(batch: &Value) -> Vec<&str> {
    batch["batch"]
        .as_array()
        .expect("batch")
        .iter()
        .map(|i| i["id"].as_str().expect("id"))
        .collect()
}

#[test]
fn the_agent_loop_runs_in_batches_and_an_edit_requeues_only_its_symbol() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (asked, _) = init_json(dir, &[]);
    assert_eq!(asked["status"], "needs_confirmation");
    assert_eq!(asked["candidates_count"], 5);

    let (first, code) = init_json(dir, &["--yes", "--batch", "3"]);
    assert_eq!(
        (first["status"].as_str(), code),
        (Some("needs_enrichment"), 0)
    );
    assert_eq!(
        ids(&first),
        [
            "pkg/api.py::get",
            "pkg/api.py::request",
            "pkg/models.py::Model"
        ]
    );
    assert_eq!(
        (&first["pending"], &first["remaining_after_batch"]),
        (&Value::from(5), &Value::from(2))
    );
    let get = &first["batch"][0];
    assert_eq!(get["type"], "function");
    assert_eq!(
        (&get["line_start"], &get["line_end"]),
        (&Value::from(10), &Value::from(12))
    );
    assert_eq!(get["current_intent"], Value::Null);
    assert_eq!(get["layer"], "api");
    assert_eq!(get["callees"], serde_json::json!(["pkg/api.py::request"]));
    // The same batch, as a file, for agents whose tool output is cut.
    let request: Value = serde_json::from_slice(
        &fs::read(dir.join(".tldrgraph/enrichment_request.json")).expect("request file"),
    )
    .expect("json");
    assert_eq!(request, first);
    // Rerunning without answering asks for the same batch (the batch size was recorded).
    assert_eq!(init_json(dir, &[]).0, first);

    let (done, rounds) = answer_batches(dir, first);
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(rounds.len(), 2);
    assert_eq!(
        rounds[1],
        ["pkg/api.py::Session.send", "pkg/web.py::App.route"]
    );
    assert!(!dir.join(".tldrgraph/enrichment_request.json").exists());
    let stored = intents(dir);
    let stored_ids: Vec<&str> = stored
        .iter()
        .map(|i| i["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        stored_ids,
        [
            "pkg/api.py::Session.send",
            "pkg/api.py::get",
            "pkg/api.py::request",
            "pkg/models.py::Model",
            "pkg/web.py::App.route"
        ],
        "one line per symbol, sorted by id"
    );
    let request_node = graph_node(dir, "pkg/api.py::request");
    assert_eq!(request_node["intent"], test_intent("pkg/api.py::request"));
    assert_eq!(request_node["intent_hash"], request_node["hash"]);
    assert_eq!(request_node["intent_source"], "agent");

    // A comment above `request` shifts its lines: no intent goes stale.
    let api = dir.join("pkg/api.py");
    let text = fs::read_to_string(&api).expect("read");
    fs::write(
        &api,
        text.replace("def request(", "# Sends things.\n\ndef request("),
    )
    .expect("write");
    let (after_comment, _) = init_json(dir, &[]);
    assert_eq!(after_comment["status"], "done", "{after_comment}");
    assert_eq!(graph_node(dir, "pkg/api.py::request")["line_start"], 17);

    // An edit inside its body: that symbol alone comes back, with its old intent.
    let text = fs::read_to_string(&api).expect("read");
    fs::write(
        &api,
        text.replace("    date()\n", "    date()\n    os.getcwd()\n"),
    )
    .expect("write");
    let (again, _) = init_json(dir, &[]);
    assert_eq!(again["status"], "needs_enrichment", "{again}");
    assert_eq!(ids(&again), ["pkg/api.py::request"]);
    assert_eq!(
        again["batch"][0]["current_intent"],
        test_intent("pkg/api.py::request")
    );
    let stale = graph_node(dir, "pkg/api.py::request");
    assert_ne!(
        stale["intent_hash"], stale["hash"],
        "a stale intent shows its old hash"
    );
    let (done, rounds) = answer_batches(dir, again);
    assert_eq!((done["status"].as_str(), rounds.len()), (Some("done"), 1));

    // A file that breaks mid-edit (a syntax error) keeps every intent of its symbols.
    let before = intents(dir);
    let text = fs::read_to_string(&api).expect("read");
    fs::write(&api, format!("{text}\ndef broken(:\n")).expect("write");
    init_json(dir, &[]);
    assert_eq!(
        intents(dir),
        before,
        "nothing pruned from a file parsed with an error"
    );
    fs::write(&api, &text).expect("write");

    // A symbol that disappears takes its intent with it.
    let text = fs::read_to_string(&api).expect("read");
    let send = "    def send(self):\n        super().save()\n        return self.prepare()\n\n";
    assert!(text.contains(send), "the fixture's Session.send");
    fs::write(&api, text.replace(send, "")).expect("write");
    init_json(dir, &[]);
    assert!(
        !intents(dir)
            .iter()
            .any(|i| i["id"] == "pkg/api.py::Session.send"),
        "{:?}",
        intents(dir)
    );
}

#[test]
fn a_bad_answer_is_rejected_whole_and_good_ones_apply_in_every_shape() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (batch, _) = init_json(dir, &["--yes"]);
    assert_eq!(batch["status"], "needs_enrichment");
    let answer = dir.join("answer.json");
    fs::write(
        &answer,
        r#"[{"id":"pkg/api.py::get","intent":"Gets."},
            {"id":"pkg/api.py::nope","intent":"No such symbol."},
            {"id":"pkg/api.py::get","intent":"Twice."},
            {"id":"pkg/api.py::load","intent":""},
            {"id":"pkg/models.py::Model","intent":"One.\n\nTwo."}]"#,
    )
    .expect("write");
    let out = run(
        "tldrgraph",
        dir,
        &["enrich", "--json", "--apply", "answer.json"],
    );
    let (error, code) = json_payload(&out);
    assert_eq!(code, 65, "{error}");
    assert_eq!(
        (error["status"].as_str(), error["stage"].as_str()),
        (Some("error"), Some("tg-enrich"))
    );
    let message = error["error"].as_str().expect("message");
    for expected in [
        "answer.json: 4 problem(s), nothing applied",
        "entry 2: `pkg/api.py::nope`: unknown id",
        "entry 3: `pkg/api.py::get`: duplicate id (first at entry 1)",
        "entry 4: `pkg/api.py::load`: empty intent",
        "entry 5: `pkg/models.py::Model`: the intent has several paragraphs",
    ] {
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    assert!(
        !dir.join(".tldrgraph/intents.ndjson").exists(),
        "nothing half-applied"
    );

    // YAML, with a layer override, from a file.
    fs::write(
        dir.join("answer.yaml"),
        "- id: pkg/models.py::Model\n  intent: The data model.\n  layer: api\n  outputs: [validated records]\n",
    )
    .expect("write");
    assert!(run("tldrgraph", dir, &["enrich", "--apply", "answer.yaml"])
        .status
        .success());
    // The last build's state knows the intents changed since.
    let status = run("tldrgraph", dir, &["status", "--json", "--exit-code"]);
    let (state, code) = json_payload(&status);
    assert_eq!(code, 14, "{state}");
    assert_eq!(state["changes"]["decisions_changed"], true);
    // NDJSON, from stdin.
    let mut child = Command::new(stage("tldrgraph"))
        .args(["enrich", "--json", "--apply", "-"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"{\"id\":\"pkg/api.py::get\",\"intent\":\"Gets.\"}\n{\"id\":\"pkg/api.py::Session.send\",\"intent\":\"Sends.\"}\n{\"id\":\"pkg/models.py::Model\",\"intent\":\"The data model.\"}\n")
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    let (summary, code) = json_payload(&out);
    assert_eq!(code, 0);
    assert_eq!(
        (&summary["applied"], &summary["intents"]),
        (&Value::from(3), &Value::from(3))
    );
    // Re-answering Model without `layer` kept the override given with the YAML.
    let stored: Vec<Value> = intents(dir);
    let model_entry = stored
        .iter()
        .find(|i| i["id"] == "pkg/models.py::Model")
        .expect("Model");
    assert_eq!(model_entry["layer"], "api", "{model_entry}");
    assert_eq!(
        model_entry["outputs"],
        serde_json::json!(["validated records"])
    );

    // A dropped response file is applied by the next init and renamed.
    fs::write(
        dir.join(".tldrgraph/enrichment_response.json"),
        r#"{"intents":[{"id":"pkg/api.py::request","intent":"Sends."},{"id":"pkg/web.py::App.route","intent":"Registers a handler."}]}"#,
    )
    .expect("write");
    let (done, _) = init_json(dir, &[]);
    assert_eq!(done["status"], "done", "{done}");
    assert!(!dir.join(".tldrgraph/enrichment_response.json").exists());
    assert!(dir
        .join(".tldrgraph/enrichment_response.applied.json")
        .exists());
    let model = graph_node(dir, "pkg/models.py::Model");
    assert_eq!(
        (model["intent"].as_str(), model["layer"].as_str()),
        (Some("The data model."), Some("api"))
    );
    assert_eq!(
        model["layer_source"], "agent",
        "the override is recorded as such"
    );

    // A bad dropped file fails init, names its problem, and stays for fixing.
    fs::write(
        dir.join(".tldrgraph/enrichment_response.ndjson"),
        "{\"id\":\"x\",\"intent\":\"y\"}\n",
    )
    .expect("write");
    let (error, code) = init_json(dir, &[]);
    assert_eq!(code, 65, "{error}");
    assert!(
        error["error"]
            .as_str()
            .unwrap_or("")
            .contains("`x`: unknown id"),
        "{error}"
    );
    assert!(dir.join(".tldrgraph/enrichment_response.ndjson").exists());
}

#[test]
fn zero_token_mode_takes_the_first_doc_sentence_and_asks_nothing() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (done, _) = init_json(dir, &["--enrich", "off"]);
    assert_eq!(done["status"], "done");
    let get = graph_node(dir, "pkg/api.py::get");
    assert_eq!(get["intent"], "Fetch a URL.");
    assert_eq!(get["intent_source"], "doc");
    assert!(
        get.get("intent_hash").is_none(),
        "a doc intent is not an agent's"
    );
    assert!(graph_node(dir, "pkg/api.py::request")
        .get("intent")
        .is_none());
    assert!(
        !dir.join(".tldrgraph/intents.ndjson").exists(),
        "nothing stored"
    );
}

/// A completion naming the symbol the prompt is about.
fn echo_symbol(request: &Received) -> Reply {
    let body = request.json();
    let prompt = body["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let id = prompt
        .strip_prefix("Symbol: ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("?")
        .to_string();
    Reply::completion(&format!("\"LLM intent of {id}.\"\nignored second line"))
}

fn provider_env(command: &mut Command, server: &Server) {
    command
        .env("TLDRGRAPH_LLM_BASE_URL", server.base_url())
        .env("TLDRGRAPH_LLM_MODEL", "test-model")
        .env("TLDRGRAPH_LLM_API_KEY", KEY)
        .env("TLDRGRAPH_LLM_BACKOFF_MS", "20")
        .env_remove("TLDRGRAPH_LLM_PROVIDER")
        .env_remove("OPENAI_API_KEY");
}

/// Every file under `dir` (recursively) that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).contains(needle))
            .unwrap_or(false)
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn an_llm_endpoint_writes_the_intents_through_429s_and_500s_and_never_leaks_the_key() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let server = Server::start(
        vec![
            Reply::Respond(
                429,
                vec![("Retry-After".into(), "0".into())],
                "slow down".into(),
            ),
            Reply::status(500, &format!("upstream broke; echoing {KEY}")),
        ],
        echo_symbol,
    );
    let mut command = Command::new(stage("tldrgraph"));
    command
        .args(["init", "--json", "--yes", "--provider", "openai"])
        .current_dir(dir);
    provider_env(&mut command, &server);
    let out = command.output().expect("run");
    let (done, code) = json_payload(&out);
    assert_eq!((done["status"].as_str(), code), (Some("done"), 0), "{done}");

    let received = server.received();
    assert_eq!(received.len(), 7, "5 symbols, one 429 and one 500 retried");
    for request in &received {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        let body = request.json();
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["messages"][0]["role"], "system");
    }
    let prompts: Vec<String> = received
        .iter()
        .map(|r| {
            r.json()["messages"][1]["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let get_prompt = prompts
        .iter()
        .find(|p| p.starts_with("Symbol: pkg/api.py::get "))
        .expect("a prompt for get");
    assert!(
        get_prompt.contains(
            "def get(url):\n    \"\"\"Fetch a URL.\"\"\"\n    return request(\"get\", url)\n"
        ),
        "{get_prompt}"
    );
    assert!(
        get_prompt.contains("Architectural layer: api"),
        "{get_prompt}"
    );
    assert!(get_prompt.contains("Calls: request"), "{get_prompt}");
    assert!(
        !get_prompt.contains("def request("),
        "only the symbol's own source: {get_prompt}"
    );

    let stored = intents(dir);
    assert_eq!(stored.len(), 5);
    for entry in &stored {
        assert_eq!(entry["source"], "llm");
        assert_eq!(entry["model"], "test-model");
        assert_eq!(
            entry["intent"],
            format!("LLM intent of {}.", entry["id"].as_str().unwrap_or(""))
        );
    }
    let get = graph_node(dir, "pkg/api.py::get");
    assert_eq!(
        (get["intent_source"].as_str(), &get["intent_hash"]),
        (Some("llm"), &get["hash"])
    );

    // A rerun with every intent current sends nothing.
    let mut again = Command::new(stage("tldrgraph"));
    again
        .args(["init", "--json", "--provider", "openai"])
        .current_dir(dir);
    provider_env(&mut again, &server);
    let rerun = again.output().expect("run");
    assert_eq!(json_payload(&rerun).0["status"], "done");
    assert_eq!(server.received().len(), 7);

    // The key is in no artifact and in no output.
    assert_eq!(files_containing(dir, KEY), Vec::<String>::new());
    for output in [&out, &rerun] {
        assert!(!String::from_utf8_lossy(&output.stdout).contains(KEY));
        assert!(!String::from_utf8_lossy(&output.stderr).contains(KEY));
    }
}

/// The stages as a shell would pipe them, tg-enrich with `enrich_args`.
fn piped(dir: &Path, server: &Server, enrich_args: &str) -> std::process::Output {
    let bin = |name: &str| stage(name).display().to_string();
    let script = format!(
        "set -o pipefail; {} . | {} | {} --yes | {} --provider openai {enrich_args} | {}",
        bin("tg-extract"),
        bin("tg-classify"),
        bin("tg-plan"),
        bin("tg-enrich"),
        bin("tg-status")
    );
    let mut command = Command::new("bash");
    command.args(["-c", &script]).current_dir(dir);
    provider_env(&mut command, server);
    command.output().expect("run the pipeline")
}

#[test]
fn failures_timeouts_and_the_spend_cap_leave_symbols_for_the_next_run() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let server = Server::start(
        vec![
            Reply::status(200, "{this is not json"),
            Reply::Hang(std::time::Duration::from_secs(3), "too late".into()),
            Reply::status(401, &format!("bad key {KEY}")),
        ],
        echo_symbol,
    );
    let out = piped(dir, &server, "--concurrency 1 --timeout 1 --retries 0");
    let (state, code) = json_payload(&out);
    assert_eq!(code, 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(state["status"], "needs_enrichment", "{state}\n{stderr}");
    assert_eq!(state["failed"].as_array().map(Vec::len), Some(3), "{state}");
    assert_eq!(state["pending"], 3);
    assert!(stderr.contains("malformed response"), "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    // A server echoing the key: the message says it was there, never what it is.
    assert!(stderr.contains("HTTP 401: bad key [redacted]"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
    assert_eq!(intents(dir).len(), 2, "the answers that came are kept");

    // The next run asks for the three that failed, and no more; a spend cap of 1 stops after one.
    let before = server.received().len();
    let out = piped(dir, &server, "--max-requests 1");
    let (state, _) = json_payload(&out);
    assert_eq!(server.received().len(), before + 1);
    assert_eq!(state["status"], "needs_enrichment");
    assert_eq!(state["pending"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("spend cap"));
    let out = piped(dir, &server, "");
    assert_eq!(json_payload(&out).0["status"], "done");
    assert_eq!(server.received().len(), before + 3);
    assert_eq!(intents(dir).len(), 5);
    assert_eq!(files_containing(dir, KEY), Vec::<String>::new());
}

#[test]
fn init_sh_applies_a_dropped_answer_too() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (batch, _) = init_json(dir, &["--yes"]);
    let answer: Vec<Value> = ids(&batch)
        .iter()
        .map(|id| serde_json::json!({"id": id, "intent": test_intent(id)}))
        .collect();
    fs::write(
        dir.join(".tldrgraph/enrichment_response.json"),
        serde_json::to_string(&answer).expect("json"),
    )
    .expect("write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipelines/init.sh");
    let bin_dir = stage("tldrgraph")
        .parent()
        .expect("target dir")
        .display()
        .to_string();
    let out = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .env("TLDRGRAPH_BIN", format!("{bin_dir}/"))
        .output()
        .expect("init.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(state["status"], "done", "{state}");
    assert!(dir
        .join(".tldrgraph/enrichment_response.applied.json")
        .exists());
    assert_eq!(intents(dir).len(), 5);
}
