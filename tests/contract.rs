//! The agent contract end to end: `tldrgraph init --json` driven as an agent drives it, on
//! copies of the fixture repositories, through the real binaries and real pipes.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tg_integration::{
    answer_batches, apply_intents, assert_golden, copy_fixture, init_json, json_payload, pipe_into,
    run, stage,
};

/// Layers an agent could design for tests/fixtures/python.
const PYTHON_LAYERS: &str = include_str!("fixtures/layers/python.layers.config.yaml");

fn write_config(dir: &Path, text: &str) {
    fs::write(dir.join(".tldrgraph/layers.config.yaml"), text).expect("write config");
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("json") + "\n"
}

fn status_code(dir: &Path) -> (Value, i32) {
    json_payload(&run("tldrgraph", dir, &["status", "--json", "--exit-code"]))
}

fn graph(dir: &Path) -> Value {
    let text = fs::read_to_string(dir.join(".tldrgraph/graph.json")).expect("graph.json");
    serde_json::from_str(&text).expect("graph.json is JSON")
}

/// The layer graph.json gives node `id`.
fn layer_of(graph: &Value, id: &str) -> Option<Value> {
    graph["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["id"] == id))
        .map(|n| n["layer"].clone())
}

#[test]
fn an_agent_goes_from_needs_layers_to_done() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    assert_eq!(status_code(dir).1, 15, "nothing built yet");

    let (payload, code) = init_json(dir, &[]);
    assert_eq!(code, 0);
    assert_eq!(payload["status"], "needs_layers");
    assert_eq!(payload["extracted_symbols_count"], 26);
    assert_eq!(
        payload["next_action"],
        "Read repository symbols and create .tldrgraph/layers.config.yaml"
    );
    assert_eq!(payload["top_directories"][0], "pkg");
    assert_eq!(payload["directories"][0]["path"], "pkg");
    assert_eq!(payload["directories"][0]["symbols"], 25);
    assert_eq!(payload["symbols_overview"], ".tldrgraph/symbols.md");
    assert!(payload["reason"]
        .as_str()
        .unwrap_or("")
        .contains("layers.config.yaml"));
    assert_golden("needs_layers.python.json", &pretty(&payload));

    let store = dir.join(".tldrgraph");
    let overview = fs::read_to_string(store.join("symbols.md")).expect("symbols.md");
    assert!(
        overview.contains("- `main.py::main` (product, function, line 10)"),
        "{overview}"
    );
    assert!(overview.contains("| `pkg/api.py::get` | function | 3 | 1 | Fetch a URL. |"));
    let contract = fs::read_to_string(store.join("AGENT_CONTRACT.md")).expect("contract");
    assert_eq!(
        contract,
        include_str!("../bins/tldrgraph/src/agent_contract.md")
    );
    let (status, code) = status_code(dir);
    assert_eq!(
        (status["status"].as_str(), code),
        (Some("needs_layers"), 10)
    );
    assert_eq!(status["fresh"], true);
    // Every node sits in the one bucket until layers exist.
    let before = graph(dir);
    let nodes = before["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 32);
    assert!(nodes.iter().all(|n| n["layer"] == "unclassified"));

    write_config(dir, PYTHON_LAYERS);
    let contract_mtime = fs::metadata(store.join("AGENT_CONTRACT.md"))
        .and_then(|m| m.modified())
        .expect("mtime");
    // Layers exist: the bottleneck plan asks before any token is spent.
    let (payload, code) = init_json(dir, &[]);
    assert_eq!(code, 0);
    assert_golden("needs_confirmation.python.json", &pretty(&payload));
    assert_eq!(payload["status"], "needs_confirmation");
    assert_eq!(payload["total_nodes"], 32);
    let candidates = payload["candidates_count"].as_u64().expect("count");
    assert!(candidates > 0);
    assert_eq!(payload["planned_this_run"], candidates);
    assert_eq!(payload["batch_size"], 200);
    assert_eq!(payload["agent_rounds"], 1);
    assert_eq!(
        payload["next_action"],
        format!("Ask user: 'TLDRGraph needs to enrich {candidates} architectural bottleneck symbols across 1 agent round(s). Proceed?'")
    );
    let (status, code) = status_code(dir);
    assert_eq!(
        (status["status"].as_str(), code),
        (Some("needs_confirmation"), 11)
    );

    // The user says yes: the first batch of symbols to write intents for.
    let (payload, code) = init_json(dir, &["--yes"]);
    assert_eq!(code, 0);
    assert_golden("needs_enrichment.python.json", &pretty(&payload));
    let (status, code) = status_code(dir);
    assert_eq!(
        (status["status"].as_str(), code),
        (Some("needs_enrichment"), 12)
    );
    let (payload, rounds) = answer_batches(dir, payload);
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0].len() as u64, candidates);
    assert_golden("done.python.json", &pretty(&payload));
    assert_eq!(payload["nodes_count"], 32);
    // 57 before typed receivers and closures: `Session().send()` and `App.route`'s returned
    // `decorator` are edges now (bins/tg-extract/tests/fixtures.rs lists each).
    assert_eq!(payload["edges_count"], 59);
    assert_eq!(payload["layers_count"], 4);
    assert_eq!(
        payload["embeddings_ready"], true,
        "the model is installed (make model)"
    );
    assert_eq!(
        fs::metadata(store.join("AGENT_CONTRACT.md"))
            .and_then(|m| m.modified())
            .expect("mtime"),
        contract_mtime,
        "an unchanged contract file is not rewritten"
    );

    let after = graph(dir);
    let layer_of = |id: &str| layer_of(&after, id);
    assert_eq!(layer_of("pkg/web.py::App"), Some(Value::from("web")));
    assert_eq!(
        layer_of("pkg/api.py::Session.send"),
        Some(Value::from("api"))
    );
    assert_eq!(layer_of("pkg/util.py::helper"), Some(Value::from("shared")));
    let edge = |src: &str, dst: &str| {
        after["edges"]
            .as_array()
            .and_then(|edges| edges.iter().find(|e| e["src"] == src && e["dst"] == dst))
            .cloned()
            .unwrap_or_else(|| panic!("edge {src} -> {dst}"))
    };
    // web may depend on api only: a call into shared is a violation.
    let violation = edge("main.py", "pkg/util.py::helper");
    assert_eq!(
        (&violation["cross_layer"], &violation["violation"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    // api may depend on models: crossing, allowed.
    let allowed = edge("pkg/api.py::Session.send", "pkg/models.py::Base.save");
    assert_eq!(allowed["cross_layer"], true);
    assert!(allowed.get("violation").is_none(), "{allowed}");
    let report = fs::read_to_string(store.join("layers.yaml")).expect("layers.yaml");
    assert!(report.contains("config: native"), "{report}");
    assert!(
        report.contains("- main.py --calls--> pkg/util.py::helper (line 6)"),
        "{report}"
    );

    let (status, code) = status_code(dir);
    assert_eq!((status["status"].as_str(), code), (Some("done"), 0));
    fs::write(dir.join("pkg/new.py"), "def fresh():\n    pass\n").expect("write");
    let (status, code) = status_code(dir);
    assert_eq!(code, 14, "{status}");
    assert_eq!(status["changes"]["added"]["examples"][0], "pkg/new.py");
}

#[test]
fn bad_configs_are_located_errors_that_keep_the_previous_artifacts() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let (first, _) = init_json(dir, &[]);
    assert_eq!(first["status"], "needs_layers");
    write_config(dir, PYTHON_LAYERS);
    let (done, _) = answer_batches(dir, init_json(dir, &["--yes"]).0);
    assert_eq!(done["status"], "done");
    let store = dir.join(".tldrgraph");
    let snapshot = |name: &str| fs::read(store.join(name)).expect("artifact");
    let kept = ["graph.json", "layers.yaml", "state.json", "symbols.md"].map(snapshot);

    let cases = [
        (
            PYTHON_LAYERS.replace("    paths: [\"pkg/models.py\"]", "    pathz: [\"pkg/models.py\"]"),
            ".tldrgraph/layers.config.yaml:19:5: unknown key `pathz`; did you mean `paths`?",
        ),
        (
            PYTHON_LAYERS.replace("may_depend_on: [api]", "may_depend_on: [apis]"),
            ".tldrgraph/layers.config.yaml:10:21: `may_depend_on` names layer `apis`, which is not defined",
        ),
        (
            PYTHON_LAYERS.replace("[\"pkg/api.py\"]", "[\"pkg/[api.py\"]"),
            ".tldrgraph/layers.config.yaml:14:14: invalid glob \"pkg/[api.py\" in `paths`",
        ),
        (
            "version: 1\nlayers: [\n".to_string(),
            ".tldrgraph/layers.config.yaml:3:1: did not find expected node content",
        ),
        (
            PYTHON_LAYERS.replace("order: 3", "order: 2"),
            ".tldrgraph/layers.config.yaml:18:12: order 2 is used by two layers, `api` and `models`",
        ),
    ];
    for (text, expected) in cases {
        write_config(dir, &text);
        let (payload, code) = init_json(dir, &[]);
        assert_eq!(code, 65, "{payload}");
        assert_eq!(payload["status"], "error");
        assert_eq!(payload["stage"], "tg-classify");
        let error = payload["error"].as_str().unwrap_or("");
        assert!(error.contains(expected), "{error}\nexpected: {expected}");
        assert!(!payload["hint"].as_str().unwrap_or("").is_empty());
        let now = ["graph.json", "layers.yaml", "state.json", "symbols.md"].map(snapshot);
        assert!(now == kept, "a failed run changed an artifact ({expected})");
    }
    // The status of the last good build is still there, and knows the config changed since.
    let (status, code) = status_code(dir);
    assert_eq!(status["status"], "done");
    assert_eq!(code, 14);
    assert_eq!(status["changes"]["config_changed"], true);

    write_config(
        dir,
        &PYTHON_LAYERS.replace(
            "    paths: [\"pkg/models.py\"]",
            "    pathz: [\"pkg/models.py\"]",
        ),
    );
    let (payload, _) = init_json(dir, &[]);
    assert_golden("error.unknown_key.json", &pretty(&payload));
}

#[test]
fn the_original_tools_config_format_is_read() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(
        dir,
        "utility_id: shared\nlayers:\n  - id: api\n    name: \"Layer 1: API\"\n    order: 1\n    rules:\n      - file_contains: [\"api.py\"]\n  - id: models\n    name: Models\n    order: 2\n    rules:\n      - label_ends_with: [\"save()\"]\n        type_in: [class]\n  - id: shared\n    name: Shared\n    order: 3\n    rules: []\n",
    );
    let (payload, code) = init_json(dir, &["--enrich", "off"]);
    assert_eq!((payload["status"].as_str(), code), (Some("done"), 0));
    assert_eq!(payload["layers_count"], 3);
    let graph = graph(dir);
    let layer_of = |id: &str| layer_of(&graph, id);
    assert_eq!(layer_of("pkg/api.py::get"), Some(Value::from("api")));
    // `.save()` is that tool's label of the method; `type_in` also admits classes.
    assert_eq!(
        layer_of("pkg/models.py::Base.save"),
        Some(Value::from("models"))
    );
    assert_eq!(
        layer_of("pkg/models.py::Model"),
        Some(Value::from("models"))
    );
    assert_eq!(layer_of("pkg/util.py::helper"), Some(Value::from("shared")));
}

#[test]
fn a_missing_stage_is_named() {
    let alone = tempfile::tempdir().expect("tempdir");
    let wrapper = alone.path().join("tldrgraph");
    fs::copy(stage("tldrgraph"), &wrapper).expect("copy");
    let repo = copy_fixture("python");
    let output = Command::new(&wrapper)
        .args(["init", "--json"])
        .current_dir(repo.path())
        .env("PATH", alone.path())
        .output()
        .expect("run");
    let (payload, code) = json_payload(&output);
    assert_eq!(code, 69);
    assert_eq!(payload["stage"], "tg-extract");
    assert!(payload["error"]
        .as_str()
        .unwrap_or("")
        .starts_with("stage tg-extract is missing"));
    assert!(!repo.path().join(".tldrgraph/graph.json").exists());
}

#[test]
fn a_held_lock_is_an_error_and_changes_nothing() {
    let repo = copy_fixture("python");
    let store = tg_shared::store::Store::at_root(repo.path());
    let lock = store.lock().expect("take the lock");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(code, 75);
    assert_eq!(payload["status"], "error");
    assert!(payload["error"]
        .as_str()
        .unwrap_or("")
        .contains("tldrgraph.lock"));
    assert!(!repo.path().join(".tldrgraph/graph.json").exists());
    drop(lock);
    assert_eq!(init_json(repo.path(), &[]).1, 0);
}

#[test]
fn four_runs_at_once_are_serialised_and_lose_nothing() {
    let repo = copy_fixture("python");
    let spawn = || {
        Command::new(stage("tldrgraph"))
            .args(["init", "--json"])
            .current_dir(repo.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let children = [spawn(), spawn(), spawn(), spawn()];
    let outcomes = children.map(|child| json_payload(&child.wait_with_output().expect("wait")));
    for (payload, code) in &outcomes {
        match code {
            0 => assert_eq!(payload["status"], "needs_layers"),
            75 => assert_eq!(payload["status"], "error"),
            other => panic!("unexpected exit {other}: {payload}"),
        }
    }
    assert!(outcomes.iter().any(|(_, code)| *code == 0));
    // Whatever the interleaving, the artifacts are whole and a rerun agrees.
    let (again, code) = init_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(again["extracted_symbols_count"], 26);
    assert_eq!(
        graph(repo.path())["nodes"].as_array().map(Vec::len),
        Some(32)
    );
}

#[test]
fn the_shell_pipeline_reaches_the_same_state_as_init() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let (from_init, _) = init_json(dir, &[]);
    let graph_from_init = fs::read(dir.join(".tldrgraph/graph.json")).expect("graph");
    let script = format!(
        "set -e; '{}' . | '{}' | '{}'",
        stage("tg-extract").display(),
        stage("tg-classify").display(),
        stage("tg-status").display()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .output()
        .expect("sh");
    let (from_shell, code) = json_payload(&output);
    assert_eq!(code, 0);
    assert_eq!(from_shell, from_init);
    assert_eq!(
        fs::read(dir.join(".tldrgraph/graph.json")).expect("graph"),
        graph_from_init,
        "same input, same graph.json bytes"
    );
}

#[test]
fn a_truncated_stream_commits_no_artifact() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let stream = run("tg-extract", dir, &["--no-cache", "."]).stdout;
    let text = String::from_utf8(stream).expect("utf-8");
    let cut: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    for name in ["tg-classify", "tg-status"] {
        let output = pipe_into(name, dir, cut.as_bytes());
        assert_eq!(output.status.code(), Some(65), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("ends without a summary record"), "{stderr}");
    }
    for artifact in ["layers.yaml", "symbols.md", "graph.json", "state.json"] {
        assert!(
            !dir.join(".tldrgraph").join(artifact).exists(),
            "{artifact} written from a truncated stream"
        );
    }
}

#[test]
fn the_projects_own_contract_and_layers_are_current_and_valid() {
    assert_eq!(
        include_str!("../.tldrgraph/AGENT_CONTRACT.md"),
        include_str!("../bins/tldrgraph/src/agent_contract.md"),
        "run `tldrgraph contract` (or `make graph`) and commit .tldrgraph/AGENT_CONTRACT.md"
    );
    let config = tg_shared::layers::parse(
        Path::new(".tldrgraph/layers.config.yaml"),
        include_str!("../.tldrgraph/layers.config.yaml"),
    )
    .expect("the project's own layers config is valid");
    assert_eq!(config.layers.len(), 8);
}

#[test]
fn contract_check_tells_a_stale_file_from_a_current_one() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    assert_eq!(
        run("tldrgraph", dir, &["contract", "--check"])
            .status
            .code(),
        Some(1)
    );
    assert!(run("tldrgraph", dir, &["contract"]).status.success());
    assert_eq!(
        run("tldrgraph", dir, &["contract", "--check"])
            .status
            .code(),
        Some(0)
    );
    fs::write(dir.join(".tldrgraph/AGENT_CONTRACT.md"), "edited\n").expect("write");
    let check = run("tldrgraph", dir, &["contract", "--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stderr).contains("not what this build writes"));
}

#[test]
fn approval_survives_reruns_asks_only_about_new_candidates_and_can_be_revoked() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    init_json(dir, &[]);
    write_config(dir, PYTHON_LAYERS);
    let (first, _) = init_json(dir, &[]);
    assert_eq!(first["status"], "needs_confirmation");
    let all = first["candidates_count"].as_u64().expect("count");
    let (done, rounds) = answer_batches(dir, init_json(dir, &["--yes"]).0);
    assert_eq!((done["status"].as_str(), rounds.len()), (Some("done"), 1));
    assert_eq!(
        init_json(dir, &[]).0["status"],
        "done",
        "approval survives a rerun"
    );

    let plan = run("tldrgraph", dir, &["plan", "--json", "--top", "1"]);
    let plan: Value = serde_json::from_slice(&plan.stdout).expect("plan json");
    assert_eq!(plan["candidates"].as_array().map(Vec::len), Some(1));
    assert_eq!(plan["candidates"][0]["rank"], 1);
    let human = String::from_utf8(run("tldrgraph", dir, &["plan"]).stdout).expect("utf-8");
    assert!(human.contains("   1  "), "{human}");

    // A new hub used from every other layer joins the plan: only it is asked about. (Four
    // lines: three lines calling one thing would be a trivial shim, never a candidate.)
    fs::write(
        dir.join("pkg/models.py"),
        fs::read_to_string(dir.join("pkg/models.py")).expect("read")
            + "\n\ndef shared_hub(value):\n    \"\"\"Used everywhere.\"\"\"\n    model = Model()\n    return model if value else None\n",
    )
    .expect("write");
    for (file, caller) in [
        ("pkg/web.py", "web_uses"),
        ("pkg/api.py", "api_uses"),
        ("pkg/util.py", "util_uses"),
    ] {
        fs::write(
            dir.join(file),
            fs::read_to_string(dir.join(file)).expect("read")
                + &format!(
                    "\n\ndef {caller}():\n    from pkg.models import shared_hub\n    return shared_hub(1)\n"
                ),
        )
        .expect("write");
    }
    // The approve command repeats the flags that shape the question.
    let (limited, _) = init_json(dir, &["--limit", "1", "--batch", "7"]);
    assert_eq!(limited["status"], "needs_confirmation", "{limited}");
    assert_eq!(
        limited["approve_command"],
        "tldrgraph init --json --yes --batch 7 --limit 1"
    );
    let (again, _) = init_json(dir, &[]);
    assert_eq!(again["status"], "needs_confirmation", "{again}");
    assert_eq!(again["approve_command"], "tldrgraph init --json --yes");
    let planned = again["planned_this_run"].as_u64().expect("planned");
    assert!(
        planned >= 1 && planned < again["candidates_count"].as_u64().expect("count"),
        "{again}"
    );
    let plan: Value =
        serde_json::from_slice(&run("tldrgraph", dir, &["plan", "--json"]).stdout).expect("plan");
    assert!(
        plan["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .any(|c| c["id"] == "pkg/models.py::shared_hub"),
        "{plan}"
    );
    // Only the new symbol is asked for: the others keep their intents.
    let (done, rounds) = answer_batches(dir, init_json(dir, &["--yes"]).0);
    assert_eq!(done["status"], "done");
    assert_eq!(rounds.len(), 1);
    assert!(
        rounds[0].contains(&"pkg/models.py::shared_hub".to_string()),
        "{rounds:?}"
    );
    assert_eq!(rounds[0].len() as u64, planned, "{rounds:?}");

    // Revoked: every intent is current, so nothing costs anything and nothing is asked...
    let revoke = run("tldrgraph", dir, &["approve", "--revoke"]);
    assert!(revoke.status.success());
    assert_eq!(init_json(dir, &[]).0["status"], "done");
    // ...until a symbol's own source changes: its new intent needs the user's yes again.
    let api = fs::read_to_string(dir.join("pkg/api.py")).expect("read");
    fs::write(
        dir.join("pkg/api.py"),
        api.replace(
            "    return Session().send()",
            "    return Session().send() or None",
        ),
    )
    .expect("write");
    let (asked, _) = init_json(dir, &[]);
    assert_eq!(asked["status"], "needs_confirmation", "{asked}");
    assert_eq!(asked["planned_this_run"], 1, "{asked}");
    assert!(all > 1);
    // Zero-token mode reaches done without asking.
    assert_eq!(init_json(dir, &["--enrich", "off"]).0["status"], "done");
}

#[test]
fn a_repeated_init_with_nothing_changed_answers_from_the_last_build() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, PYTHON_LAYERS);
    let verbose = |args: &[&str]| {
        let mut all = vec!["init", "--json", "-v"];
        all.extend_from_slice(args);
        let out = run("tldrgraph", dir, &all);
        let (payload, _) = json_payload(&out);
        (payload, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (first, said) = verbose(&[]);
    assert_eq!(first["status"], "needs_confirmation");
    assert!(
        said.contains("tg-extract:"),
        "the first run runs the stages: {said}"
    );
    let (again, said) = verbose(&[]);
    assert_eq!(again, first, "the same payload, byte for byte");
    assert!(
        said.contains("nothing changed since the last build") && !said.contains("tg-extract:"),
        "{said}"
    );
    // A flag, a source edit or an approval is a change: the stages run.
    let (yes, said) = verbose(&["--yes"]);
    assert_eq!(yes["status"], "needs_enrichment");
    assert!(said.contains("tg-plan:"), "{said}");
    // `--yes` always runs: with a `--limit` each such run approves more.
    let (_, said) = verbose(&["--yes"]);
    assert!(said.contains("tg-plan:"), "{said}");
    let (_, said) = verbose(&[]);
    assert!(
        said.contains("tg-plan:"),
        "other flags than the last run's: {said}"
    );
    let (_, said) = verbose(&[]);
    assert!(said.contains("nothing changed"), "{said}");
    fs::write(dir.join("pkg/util.py"), "def helper():\n    return 2\n").expect("write");
    let (_, said) = verbose(&[]);
    assert!(said.contains("tg-extract:"), "a source edit: {said}");
    // Applied intents change the answer at once.
    let (batch, _) = verbose(&[]);
    let (done, _) = answer_batches(dir, batch);
    assert_eq!(done["status"], "done");
    let (_, said) = verbose(&[]);
    assert!(said.contains("nothing changed"), "{said}");
    // A deleted artifact is rebuilt, not reported.
    fs::remove_file(dir.join(".tldrgraph/graph.json")).expect("rm");
    let (rebuilt, said) = verbose(&[]);
    assert_eq!(rebuilt["status"], "done");
    assert!(said.contains("tg-status:"), "{said}");
}

#[test]
fn a_skipped_file_that_becomes_source_makes_the_state_stale() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, PYTHON_LAYERS);
    fs::write(
        dir.join("pkg/blob.py"),
        b"def hidden():\n    return 1\n\0\0",
    )
    .expect("write");
    init_json(dir, &["--enrich", "off"]);
    let (status, code) = status_code(dir);
    assert_eq!(
        (status["fresh"].as_bool(), code),
        (Some(true), 0),
        "{status}"
    );
    fs::write(dir.join("pkg/blob.py"), "def hidden():\n    return 1\n").expect("write");
    let (status, code) = status_code(dir);
    assert_eq!(code, 14, "{status}");
    assert_eq!(status["changes"]["changed"]["examples"][0], "pkg/blob.py");
    // And init does not answer from the last build: the symbol appears.
    init_json(dir, &["--enrich", "off"]);
    assert!(graph(dir)["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .any(|n| n["id"] == "pkg/blob.py::hidden"));
}

/// A graph over the plain limit (`TLDRGRAPH_PLAIN_GRAPH_LIMIT`, 256 MiB unless set) is written
/// as graph.json.zst: the same document, and every reader of the last build's graph answers
/// from it as from graph.json. Back under the limit, the plain file returns and the other goes.
#[test]
fn a_graph_over_the_plain_limit_is_compressed_and_read_the_same() {
    use std::io::Read;
    let repos = [copy_fixture("python"), copy_fixture("python")];
    let dirs = repos.each_ref().map(|repo| repo.path());
    let init = |dir: &Path, limit: Option<&str>| {
        let mut command = Command::new(stage("tldrgraph"));
        command
            .args(["init", "--json", "--enrich", "off"])
            .current_dir(dir);
        if let Some(limit) = limit {
            command.env("TLDRGRAPH_PLAIN_GRAPH_LIMIT", limit);
        }
        json_payload(&command.output().expect("init"))
    };
    for dir in dirs {
        fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
        write_config(dir, PYTHON_LAYERS);
    }
    let (plain, code) = init(dirs[0], None);
    assert_eq!(
        (plain["status"].as_str(), code),
        (Some("done"), 0),
        "{plain}"
    );
    assert_eq!(init(dirs[1], Some("0")), (plain, 0));
    let store = |dir: &Path, name: &str| dir.join(".tldrgraph").join(name);
    assert!(!store(dirs[0], "graph.json.zst").exists());
    assert!(!store(dirs[1], "graph.json").exists());
    let compressed = fs::read(store(dirs[1], "graph.json.zst")).expect("graph.json.zst");
    let mut document = Vec::new();
    tg_shared::frames::reader(&compressed[..])
        .expect("zstd")
        .read_to_end(&mut document)
        .expect("decompress");
    let plain_document = fs::read(store(dirs[0], "graph.json")).expect("graph.json");
    assert_eq!(document, plain_document);
    assert!(compressed.len() < plain_document.len());

    // The readers: impact against the last build, status, the map page.
    for dir in dirs {
        fs::write(dir.join("pkg/util.py"), "def only():\n    return 1\n").expect("edit");
    }
    for args in [
        &["impact", "--json", "--files", "pkg/util.py"][..],
        &["status", "--json"],
        &["ui", "--output", "map.html"],
    ] {
        // Each answer with its repository's path written as `<repo>`.
        let [a, b] = dirs.map(|dir| {
            let output = run("tldrgraph", dir, args);
            let stdout = String::from_utf8_lossy(&output.stdout)
                .replace(&dir.display().to_string(), "<repo>");
            (stdout, output.status.code())
        });
        assert_eq!(a.1, Some(0), "{args:?}: {}", a.0);
        assert_eq!(b, a, "{args:?}");
    }
    // An intent for a name the build does not have: the error suggests the nearest symbol,
    // read from either graph (the second pass over it).
    let [a, b] = dirs.map(|dir| {
        let answer = r#"[{"id": "pkg/util.py::helpr", "intent": "Helps."}]"#;
        fs::write(dir.join("answer.json"), answer).expect("answer");
        let output = run("tldrgraph", dir, &["enrich", "--apply", "answer.json"]);
        let stderr =
            String::from_utf8_lossy(&output.stderr).replace(&dir.display().to_string(), "<repo>");
        (stderr, output.status.code())
    });
    assert_eq!(a.1, Some(65), "{}", a.0);
    assert!(
        a.0.contains("did you mean `pkg/util.py::helper`?"),
        "{}",
        a.0
    );
    assert_eq!(b, a);
    // The page names its repository by the directory's name.
    let [a, b] = dirs.map(|dir| {
        let page = fs::read_to_string(dir.join("map.html")).expect("map.html");
        let name = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        page.replace(&name, "<repo>")
    });
    assert!(a == b, "the map pages differ");
    let removed = run(
        "tldrgraph",
        dirs[0],
        &["impact", "--json", "--files", "pkg/util.py"],
    );
    assert!(String::from_utf8_lossy(&removed.stdout).contains("pkg/util.py::helper"));

    // The next build under the default limit writes graph.json and removes graph.json.zst.
    assert_eq!(init(dirs[1], None).1, 0);
    assert!(store(dirs[1], "graph.json").is_file());
    assert!(!store(dirs[1], "graph.json.zst").exists());
    // A limit that is not a number is refused, naming the variable.
    let output = Command::new(stage("tg-status"))
        .current_dir(dirs[1])
        .env("TLDRGRAPH_PLAIN_GRAPH_LIMIT", "lots")
        .stdin(Stdio::null())
        .output()
        .expect("tg-status");
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains("TLDRGRAPH_PLAIN_GRAPH_LIMIT"));
}

/// The seed spec's fields and JSON types for each state, written from the spec (quoted in
/// `.tldrgraph/AGENT_CONTRACT.md`, issue 18), not from our output: every golden payload (each written by a real run in the
/// tests above) must carry them with exactly these types; extra fields may stand beside them.
#[test]
fn golden_payloads_keep_the_seed_specs_field_types() {
    #[derive(Clone, Copy, Debug)]
    enum Json {
        Str,
        Int,
        Bool,
        StrList,
        NullOrStr,
    }
    fn check(value: &Value, kind: Json) -> bool {
        match kind {
            Json::Str => value.is_string(),
            Json::Int => value.is_u64(),
            Json::Bool => value.is_boolean(),
            Json::StrList => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            Json::NullOrStr => value.is_null() || value.is_string(),
        }
    }
    use Json::*;
    /// (golden file, status, the spec's fields with their types)
    type State<'a> = (&'a str, &'a str, &'a [(&'a str, Json)]);
    let states: [State; 4] = [
        (
            "needs_layers.python.json",
            "needs_layers",
            &[
                ("reason", Str),
                ("extracted_symbols_count", Int),
                ("top_directories", StrList),
                ("next_action", Str),
            ],
        ),
        (
            "needs_confirmation.python.json",
            "needs_confirmation",
            &[
                ("total_nodes", Int),
                ("candidates_count", Int),
                ("planned_this_run", Int),
                ("batch_size", Int),
                ("agent_rounds", Int),
                ("next_action", Str),
            ],
        ),
        ("needs_enrichment.python.json", "needs_enrichment", &[]),
        (
            "done.python.json",
            "done",
            &[
                ("nodes_count", Int),
                ("edges_count", Int),
                ("layers_count", Int),
                ("embeddings_ready", Bool),
            ],
        ),
    ];
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden");
    for (file, status, fields) in states {
        let text = fs::read_to_string(golden.join(file)).expect("golden payload");
        let payload: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(payload["status"], status, "{file}");
        for (field, kind) in fields {
            assert!(
                check(&payload[*field], *kind),
                "{file}: `{field}` must be {kind:?}, is {}",
                payload[*field]
            );
        }
    }
    let text = fs::read_to_string(golden.join("needs_enrichment.python.json")).expect("golden");
    let payload: Value = serde_json::from_str(&text).expect("JSON");
    let batch = payload["batch"].as_array().expect("batch is a list");
    assert!(!batch.is_empty());
    for item in batch {
        for (field, kind) in [
            ("id", Str),
            ("type", Str),
            ("file", Str),
            ("line_start", Int),
            ("line_end", Int),
            ("current_intent", NullOrStr),
        ] {
            assert!(
                item.get(field).is_some() && check(&item[field], kind),
                "batch item `{field}` must be {kind:?}: {item}"
            );
        }
    }
}

/// A user who approves part of the plan and declines the rest reaches `done` and stays there;
/// the decision shows in `done`, survives reruns, asks about new candidates only, and is
/// withdrawn by `approve --revoke`.
#[test]
fn a_partial_approval_that_declines_the_rest_ends_and_stays_ended() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    // Without the fixture's budget of five: the whole core is planned, so new code joins it.
    let unbudgeted = PYTHON_LAYERS.replace("plan:\n  max_symbols: 5\n", "");
    assert_ne!(unbudgeted, PYTHON_LAYERS);
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, &unbudgeted);
    let (asked, _) = init_json(dir, &[]);
    assert_eq!(asked["status"], "needs_confirmation");
    let all = asked["candidates_count"].as_u64().expect("count");
    assert!(all >= 3, "{asked}");
    // Approve two, enrich them.
    let (batch, _) = init_json(dir, &["--yes", "--limit", "2"]);
    let (after, rounds) = answer_batches(dir, batch);
    assert_eq!(rounds.concat().len(), 2);
    // The rest is still asked about, until declined.
    assert_eq!(after["status"], "needs_confirmation", "{after}");
    let declined = run("tldrgraph", dir, &["approve", "--decline-rest"]);
    assert!(
        declined.status.success(),
        "{}",
        String::from_utf8_lossy(&declined.stderr)
    );
    for _ in 0..2 {
        let (done, _) = init_json(dir, &[]);
        assert_eq!(done["status"], "done", "{done}");
        assert_eq!(
            (done["enriched"].as_u64(), done["declined"].as_u64()),
            (Some(2), Some(all - 2))
        );
    }
    let (status, _) = status_code(dir);
    assert_eq!(status["declined"], all - 2, "{status}");
    let shown = String::from_utf8_lossy(&run("tldrgraph", dir, &["approve"]).stdout).to_string();
    assert!(shown.contains(&format!("{} declined", all - 2)), "{shown}");

    // New code brings a new candidate: only it is asked about.
    fs::write(
        dir.join("pkg/util.py"),
        fs::read_to_string(dir.join("pkg/util.py")).expect("read")
            + "\n\ndef brand_new(value):\n    total = value + 1\n    total = helper() + total\n    return total\n",
    )
    .expect("write");
    fs::write(
        dir.join("pkg/web.py"),
        fs::read_to_string(dir.join("pkg/web.py")).expect("read")
            + "\n\ndef uses_new():\n    from pkg.util import brand_new\n    return brand_new(1) + brand_new(2)\n",
    )
    .expect("write");
    let (new, _) = init_json(dir, &[]);
    assert_eq!(new["status"], "needs_confirmation", "{new}");
    assert_eq!(new["planned_this_run"], 1, "{new}");

    // Revoked: every unenriched candidate is asked about again.
    assert!(run("tldrgraph", dir, &["approve", "--revoke"])
        .status
        .success());
    let (again, _) = init_json(dir, &[]);
    assert_eq!(again["status"], "needs_confirmation", "{again}");
    assert!(
        again["planned_this_run"].as_u64().unwrap_or(0) >= all - 2,
        "{again}"
    );
}

/// Declining the rest after approving everything (the dogfood case: an agent that approved the
/// whole plan and wants to stop) declines the approved candidates still without an intent too,
/// so `init` ends, as `approve --decline-rest` says it does.
#[test]
fn declining_the_rest_after_approving_all_ends_the_run() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let unbudgeted = PYTHON_LAYERS.replace("plan:\n  max_symbols: 5\n", "");
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, &unbudgeted);
    let (asked, _) = init_json(dir, &[]);
    let all = asked["candidates_count"].as_u64().expect("count");
    assert!(all >= 3, "{asked}");
    let (first, _) = init_json(dir, &["--yes", "--batch", "1"]);
    assert_eq!(first["status"], "needs_enrichment", "{first}");
    let id = first["batch"][0]["id"].as_str().expect("an id").to_string();
    apply_intents(dir, &[id]);
    let (waiting, _) = init_json(dir, &[]);
    assert_eq!(waiting["status"], "needs_enrichment", "{waiting}");

    let declined = run("tldrgraph", dir, &["approve", "--decline-rest"]);
    let said = String::from_utf8_lossy(&declined.stdout).to_string();
    assert!(
        said.starts_with(&format!("{} candidates declined, 1 approved", all - 1)),
        "{said}"
    );
    for _ in 0..2 {
        let (done, _) = init_json(dir, &[]);
        assert_eq!(done["status"], "done", "{done}");
        assert_eq!(
            (done["enriched"].as_u64(), done["declined"].as_u64()),
            (Some(1), Some(all - 1)),
            "{done}"
        );
    }
}

/// A walk that finds no source file says why in the payload; `--no-ignore` reads what ignore
/// files hide; `--exclude` leaves paths out, and the state remembers how the build walked.
#[test]
fn an_empty_walk_says_why_and_the_walk_flags_are_remembered() {
    let reason = |dir: &Path, args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.push(dir.to_str().expect("utf-8"));
        init_json(dir, &all).0
    };
    let empty = tempfile::tempdir().expect("tempdir");
    let said = reason(empty.path(), &[]);
    assert_eq!(said["extracted_symbols_count"], 0, "{said}");
    assert!(
        said["no_sources"]
            .as_str()
            .unwrap_or("")
            .contains("holds no files"),
        "{said}"
    );

    let prose = tempfile::tempdir().expect("tempdir");
    fs::write(prose.path().join("README.md"), "hello\n").expect("write");
    let said = reason(prose.path(), &[]);
    assert!(
        said["no_sources"]
            .as_str()
            .unwrap_or("")
            .contains("supported language"),
        "{said}"
    );

    // A packaged source tree whose .gitignore holds `/*`.
    let packaged = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(packaged.path().join("src")).expect("mkdir");
    fs::write(packaged.path().join(".gitignore"), "/*\n").expect("write");
    fs::write(packaged.path().join("src/a.py"), "def f():\n    return 1\n").expect("write");
    let said = reason(packaged.path(), &[]);
    assert!(
        said["no_sources"]
            .as_str()
            .unwrap_or("")
            .contains("--no-ignore"),
        "{said}"
    );
    let read = reason(packaged.path(), &["--no-ignore"]);
    assert_eq!(read["extracted_symbols_count"], 1, "{read}");
    assert!(read.get("no_sources").is_none(), "{read}");
    let (state, _) = status_code(packaged.path());
    assert_eq!(
        state["fresh"], true,
        "the state walks as the build did: {state}"
    );

    // --exclude: the file is out of the graph, and the state does not call it added.
    let repo = copy_fixture("python");
    let dir = repo.path();
    let full = reason(dir, &[]);
    let fewer = reason(dir, &["--exclude", "pkg/web.py"]);
    assert!(
        fewer["extracted_symbols_count"].as_u64() < full["extracted_symbols_count"].as_u64(),
        "{fewer}"
    );
    let (state, _) = status_code(dir);
    assert_eq!(state["fresh"], true, "{state}");
}

#[test]
fn zero_token_mode_sticks_until_enrich_auto() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, PYTHON_LAYERS);
    assert_eq!(init_json(dir, &["--enrich", "off"]).0["status"], "done");
    // A source edit, then a plain init (an agent's, or the MCP server's rebuild): still done.
    let util = fs::read_to_string(dir.join("pkg/util.py")).expect("read");
    fs::write(
        dir.join("pkg/util.py"),
        format!("{util}\n\ndef added():\n    return date()\n"),
    )
    .expect("write");
    let (kept, _) = init_json(dir, &[]);
    assert_eq!(kept["status"], "done", "{kept}");
    assert_eq!(
        fs::read_to_string(dir.join(".tldrgraph/enrich.mode")).expect("mode"),
        "off\n"
    );
    // Asking for enrichment again brings the question back, and that choice is kept too.
    assert_eq!(
        init_json(dir, &["--enrich", "auto"]).0["status"],
        "needs_confirmation"
    );
    assert_eq!(init_json(dir, &[]).0["status"], "needs_confirmation");
}

/// `tldrgraph layers` checks the config with the stages beside it (an agent may have only
/// `tldrgraph` on its PATH): what each layer matches, or every problem of a broken config.
#[test]
fn layers_checks_the_config_with_the_stages_beside_it() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    write_config(dir, PYTHON_LAYERS);
    let valid = run("tldrgraph", dir, &["layers", "--json"]);
    assert_eq!(valid.status.code(), Some(0), "{valid:?}");
    let report: Value = serde_json::from_slice(&valid.stdout).expect("a JSON report");
    assert_eq!(report["valid"], true);
    // Every module, class and def of the fixture, as Python's `ast` counts them.
    assert_eq!(report["nodes"], 32, "{report}");
    let models = report["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .find(|l| l["id"] == "models")
        .expect("the models layer");
    assert!(models["examples"]
        .as_array()
        .expect("examples")
        .iter()
        .any(|e| e.as_str().is_some_and(|id| id.starts_with("pkg/models.py"))));

    write_config(
        dir,
        &PYTHON_LAYERS.replace(
            "    paths: [\"pkg/models.py\"]",
            "    pathz: [\"pkg/models.py\"]",
        ),
    );
    let invalid = run("tldrgraph", dir, &["layers"]);
    assert_eq!(invalid.status.code(), Some(65));
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        stderr.contains("layers.config.yaml:19:5: unknown key `pathz`; did you mean `paths`?"),
        "{stderr}"
    );
}
