//! Questions to the graph through real processes: the embedder's vectors, query output (golden),
//! incremental embedding, trace and dead-code on fixtures with known answers, and the HTTP
//! embeddings provider against a loopback server.

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use tg_integration::loopback::{Received, Reply, Server};
use tg_integration::{
    assert_golden, copy_fixture, init_json, json_payload, layered_fixture, stage,
};
use tg_shared::embed::{self, StaticModel};

/// The installed model; `make model` installs it (`make test` does first).
fn model() -> StaticModel {
    let path = embed::model_path();
    StaticModel::load(&path).unwrap_or_else(|e| {
        panic!("the embedding model is missing ({e}): run `make model` (make test does)")
    })
}

fn tldrgraph(dir: &Path, args: &[&str]) -> Output {
    Command::new(stage("tldrgraph"))
        .args(args)
        .current_dir(dir)
        .env_remove("TLDRGRAPH_EMBEDDINGS")
        .output()
        .expect("run tldrgraph")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

#[test]
fn the_embedder_is_deterministic_and_similar_texts_score_higher() {
    let model = model();
    let cos = |a: &str, b: &str| embed::dot(&model.embed(a).unwrap(), &model.embed(b).unwrap());
    // Values from the independent numpy implementation (pipelines/model/bert.py tokenizer and
    // the same table): the Rust tokenizer and sum must agree with it.
    let similar = cos("open a file for reading", "read the contents of a file");
    let unrelated = cos(
        "open a file for reading",
        "compute the determinant of a matrix",
    );
    assert!((similar - 0.762).abs() < 0.005, "{similar}");
    assert!((unrelated - 0.189).abs() < 0.005, "{unrelated}");
    assert!((cos("get connection pool", "return a pool of connections") - 0.709).abs() < 0.005);
    assert!(
        cos("send an http request", "perform a network call to a url")
            > cos("send an http request", "parse command line arguments") + 0.2
    );
    assert_eq!(
        model.embed("same text").unwrap(),
        model.embed("same text").unwrap()
    );
    let v = model.embed("Fetch a URL.").unwrap();
    assert_eq!(v.len(), 384);
    assert!((embed::dot(&v, &v) - 1.0).abs() < 1e-5, "unit length");
    assert!(
        model.embed("").unwrap().iter().all(|x| *x == 0.0),
        "no token, no direction"
    );
}

#[test]
fn query_answers_with_flows_a_context_pack_and_json() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (done, _) = init_json(dir, &["--enrich", "off"]);
    assert_eq!(
        (done["status"].as_str(), &done["embeddings_ready"]),
        (Some("done"), &Value::Bool(true))
    );
    let index = fs::read(dir.join(".tldrgraph/search.bin")).expect("index");

    let text = tldrgraph(
        dir,
        &["query", "fetch a url", "--top-k", "2", "--budget", "60"],
    );
    assert!(text.status.success());
    assert_golden("query.fetch_url.md", &stdout(&text));
    let json = tldrgraph(dir, &["query", "fetch a url", "--top-k", "3", "--json"]);
    let (answer, _) = json_payload(&json);
    assert_eq!(answer["results"][0]["id"], "pkg/api.py::get");
    assert_eq!(answer["results"][0]["intent"], "Fetch a URL.");
    assert_eq!(answer["results"][0]["intent_source"], "doc");
    assert_eq!(answer["results"].as_array().map(Vec::len), Some(3));
    // The flow follows get's calls into the Models layer (request -> `Session().send()` ->
    // `super().save()`) and the Shared layer, after the hit, in layer order.
    let flow: Vec<(&str, &str)> = answer["results"][0]["flow"]
        .as_array()
        .expect("flow")
        .iter()
        .map(|r| {
            (
                r["layer"].as_str().unwrap_or(""),
                r["id"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        flow,
        [
            ("API", "pkg/api.py::get"),
            ("Models", "pkg/models.py::Base.save"),
            ("Shared", "pkg/util.py::helper")
        ]
    );
    // Each ranking alone, and a layer filter.
    for mode in ["lexical", "semantic"] {
        let (alone, _) = json_payload(&tldrgraph(
            dir,
            &["query", "validate the model", "--mode", mode, "--json"],
        ));
        assert_eq!(
            alone["results"][0]["id"], "pkg/models.py::Model.validate",
            "{mode}"
        );
    }
    let (web, _) = json_payload(&tldrgraph(
        dir,
        &["query", "fetch a url", "--layer", "web", "--json"],
    ));
    let web_results = web["results"].as_array().expect("results");
    assert!(!web_results.is_empty(), "{web}");
    assert!(web_results.iter().all(|r| r["layer"] == "Web"), "{web}");
    // Beside the name, the id `check`, `impact` and `--layer` use, for each hit and its flow.
    assert!(web_results.iter().all(|r| r["layer_id"] == "web"), "{web}");
    let flow_ids: Vec<&str> = web_results
        .iter()
        .flat_map(|r| r["flow"].as_array().expect("flow"))
        .map(|row| row["layer_id"].as_str().expect("a flow row's layer id"))
        .collect();
    assert!(
        flow_ids
            .iter()
            .all(|id| ["web", "api", "models", "shared"].contains(id)),
        "{flow_ids:?}"
    );
    // The layer as answers print it (its name) filters the same.
    let (by_name, _) = json_payload(&tldrgraph(
        dir,
        &["query", "fetch a url", "--layer", "Web", "--json"],
    ));
    assert_eq!(by_name["results"], web["results"], "{by_name}");
    // A budget too large to count in characters is all the context there is, not a crash.
    let (huge, _) = json_payload(&tldrgraph(
        dir,
        &[
            "query",
            "fetch a url",
            "--budget",
            "18446744073709551615",
            "--json",
        ],
    ));
    assert!(
        huge["context"]["text"]
            .as_str()
            .unwrap_or("")
            .contains("pkg/api.py::get"),
        "{huge}"
    );
    let bad = tldrgraph(dir, &["query", "x", "--layer", "nope"]);
    assert_eq!(bad.status.code(), Some(64));
    // Read-only.
    assert_eq!(
        fs::read(dir.join(".tldrgraph/search.bin")).expect("index"),
        index
    );
}

fn embed_stderr(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["init", "--json", "--enrich", "off", "-v"];
    args.extend_from_slice(extra);
    let out = tldrgraph(dir, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    // A rerun with nothing changed runs no stage at all (the wrapper says so). A progress line
    // (`tg-embed: embedding 0 of 26 texts ...`, on a loaded machine) is not the summary.
    stderr
        .lines()
        .find(|l| {
            (l.starts_with("tg-embed:") && !l.starts_with("tg-embed: embedding "))
                || l.starts_with("tldrgraph: nothing changed")
        })
        .unwrap_or_else(|| panic!("no tg-embed line in {stderr}"))
        .to_string()
}

#[test]
fn only_changed_texts_are_embedded_again_and_gone_symbols_lose_their_vectors() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    assert_eq!(
        embed_stderr(dir, &[]),
        "tg-embed: 26 symbols indexed; 26 texts embedded, 0 reused; 32 lexical texts tokenised"
    );
    assert_eq!(
        embed_stderr(dir, &[]),
        "tldrgraph: nothing changed since the last build; its state:"
    );
    let vectors = |dir: &Path| {
        fs::metadata(dir.join(".tldrgraph/vectors.i8"))
            .expect("vectors")
            .len()
    };
    let before = vectors(dir);
    // A new function: its text, and nothing else's (no call reaches it).
    let util = dir.join("pkg/util.py");
    let text = fs::read_to_string(&util).expect("read");
    fs::write(
        &util,
        format!("{text}\n\ndef brand_new(a, b):\n    return a\n"),
    )
    .expect("write");
    assert_eq!(
        embed_stderr(dir, &[]),
        "tg-embed: 27 symbols indexed; 1 texts embedded, 26 reused; 1 lexical texts tokenised"
    );
    assert_eq!(
        vectors(dir),
        before + (4 + 384),
        "one row: a scale and 384 bytes"
    );
    fs::write(&util, text).expect("write");
    assert_eq!(
        embed_stderr(dir, &[]),
        "tg-embed: 26 symbols indexed; 0 texts embedded, 26 reused; 0 lexical texts tokenised"
    );
    assert_eq!(vectors(dir), before, "the removed symbol's vector is gone");
    // Lexical only: no vectors, and `done` says so.
    let (off, _) = init_json(dir, &["--enrich", "off", "--embeddings", "off"]);
    assert_eq!(
        (off["status"].as_str(), &off["embeddings_ready"]),
        (Some("done"), &Value::Bool(false))
    );
    assert_eq!(vectors(dir), 0);
}

#[test]
fn without_the_model_the_state_says_so_and_search_is_lexical() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let out = Command::new(stage("tldrgraph"))
        .args(["init", "--json", "--enrich", "off"])
        .current_dir(dir)
        .env("TLDRGRAPH_MODEL", dir.join("no-such-model.bin"))
        .output()
        .expect("run");
    let (state, code) = json_payload(&out);
    assert_eq!(
        (state["status"].as_str(), code),
        (Some("needs_embeddings"), 0),
        "{state}"
    );
    assert_eq!(state["symbols_count"], 26);
    assert_eq!(
        (&state["embedded_count"], &state["missing_count"]),
        (&Value::from(0), &Value::from(26))
    );
    assert!(
        state["reason"]
            .as_str()
            .unwrap_or("")
            .contains("not installed"),
        "{state}"
    );
    assert!(
        state["next_action"]
            .as_str()
            .unwrap_or("")
            .contains("make model"),
        "{state}"
    );
    let (answer, _) = json_payload(&tldrgraph(dir, &["query", "fetch a url", "--json"]));
    assert_eq!(answer["results"][0]["id"], "pkg/api.py::get");
    assert!(
        answer["note"]
            .as_str()
            .unwrap_or("")
            .starts_with("lexical ranking only"),
        "{answer}"
    );
}

#[test]
fn trace_finds_the_confident_path_or_says_there_is_none() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    init_json(dir, &["--enrich", "off"]);
    let (path, _) = json_payload(&tldrgraph(dir, &["trace", "main", "get", "--json"]));
    let ids: Vec<&str> = path["path"]
        .as_array()
        .expect("path")
        .iter()
        .map(|s| s["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        ids,
        [
            "main.py::main",
            "pkg/api.py::load",
            "pkg/api.py::index",
            "pkg/api.py::get"
        ]
    );
    assert_eq!(path["path"][1]["call_line"], 11);
    let text = tldrgraph(dir, &["trace", "main.py::main", "pkg/api.py::get"]);
    assert_golden("trace.main_get.md", &stdout(&text));

    let none = tldrgraph(dir, &["trace", "pkg/util.py::helper", "get"]);
    assert_eq!(none.status.code(), Some(0));
    assert!(
        stdout(&none).starts_with("No call path from pkg/util.py::helper to pkg/api.py::get."),
        "{}",
        stdout(&none)
    );
    let unknown = tldrgraph(dir, &["trace", "no_such_thing", "get"]);
    assert_eq!(unknown.status.code(), Some(64));
    // A typo gets the nearest names, on stderr and, with --json, on stdout.
    let typo = tldrgraph(dir, &["trace", "Session.sendd", "get", "--json"]);
    assert_eq!(typo.status.code(), Some(64));
    let (said, _) = json_payload(&typo);
    assert_eq!(said["error"], "unknown_symbol", "{said}");
    assert_eq!(
        said["candidates"],
        serde_json::json!(["pkg/api.py::Session.send"])
    );
    // The forms an agent types: a function named exactly so wins over a method that only
    // ends with the name; `Type::method` is `Type.method`; an id's tail is the id.
    for (from, to) in [
        ("load", "get"),
        ("Session::load", "pkg/api.py::Session.send"),
        ("api.py::Session.load", "Session.send"),
        ("pkg.api.load", "api.get"),
    ] {
        let found = tldrgraph(dir, &["trace", from, to, "--json"]);
        assert_eq!(
            found.status.code(),
            Some(0),
            "{from} -> {to}: {}",
            String::from_utf8_lossy(&found.stderr)
        );
    }
    // Two product functions with the same whole name are ambiguous: the candidates are listed.
    fs::write(dir.join("pkg/other.py"), "def load():\n    return 1\n").expect("write");
    init_json(dir, &["--enrich", "off"]);
    let ambiguous = tldrgraph(dir, &["trace", "load", "get", "--json"]);
    assert_eq!(ambiguous.status.code(), Some(64));
    let said = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        said.contains("`load` is ambiguous") && said.contains("pkg/other.py::load"),
        "{said}"
    );
    let (listed, _) = json_payload(&ambiguous);
    assert_eq!(
        listed["candidates"],
        serde_json::json!(["pkg/api.py::load", "pkg/other.py::load"])
    );
}

#[test]
fn dead_code_lists_exactly_the_known_dead_functions() {
    let repo = copy_fixture("deadcode");
    let dir = repo.path();
    // Before layers exist nothing is indexed, and the question says so.
    let early = tldrgraph(dir, &["dead-code"]);
    assert_eq!(early.status.code(), Some(66));
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    fs::write(
        dir.join(".tldrgraph/layers.config.yaml"),
        "version: 1\ndefault_layer: rest\nlayers:\n  - id: app\n    name: App\n    order: 1\n    paths: [\"app/**\"]\n  - id: rest\n    name: Rest\n    order: 2\n",
    )
    .expect("config");
    let (state, _) = init_json(dir, &["--enrich", "off"]);
    assert_eq!(state["status"], "done", "{state}");
    let (answer, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    let found: Vec<(&str, f64)> = answer["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap_or(""),
                f["confidence"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    // Not listed: main, the __main__ block's target, tests, dunders, the __all__ export, the
    // decorated route, the method called on an untyped value, the nested function returned.
    assert_eq!(
        found,
        [
            ("app/core.py::_forgotten_helper", 0.9),
            ("app/core.py::unused_public", 0.7),
            ("app/core.py::Store.never_called", 0.5),
        ]
    );
    let (high, _) = json_payload(&tldrgraph(
        dir,
        &["dead-code", "--json", "--min-confidence", "0.8"],
    ));
    assert_eq!(high["count"], 1);
    // What the graph cannot tell is `unknown`, with the reason: a public method may be reached
    // through a receiver of unknown type.
    let statuses: Vec<(&str, &str)> = answer["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap_or(""),
                f["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("app/core.py::_forgotten_helper", "dead"),
            ("app/core.py::unused_public", "dead"),
            ("app/core.py::Store.never_called", "unknown"),
        ]
    );

    // The words came from the table tg-extract summed; without it dead-code reads the files
    // and finds the same.
    let words = dir.join(".tldrgraph/cache/words.bin");
    assert!(words.is_file(), "tg-extract wrote no word table");
    fs::remove_file(&words).expect("remove words.bin");
    let (read_again, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    assert_eq!(read_again["findings"], answer["findings"]);

    // A name written in a file changed since (a string the graph does not follow) is used:
    // the next build's table, made from the changed file and the cached others, says so.
    let web = dir.join("app/web.py");
    let mut text = fs::read_to_string(&web).expect("read web.py");
    text.push_str("\nHANDLER_NAMES = [\"unused_public\"]\n");
    fs::write(&web, text).expect("write web.py");
    init_json(dir, &["--enrich", "off"]);
    assert!(words.is_file(), "the word table was not written again");
    let (changed, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    let ids = |answer: &serde_json::Value| -> Vec<String> {
        answer["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f["id"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(
        ids(&changed),
        [
            "app/core.py::_forgotten_helper",
            "app/core.py::Store.never_called"
        ]
    );
    fs::remove_file(&words).expect("remove words.bin");
    let (read_again, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    assert_eq!(ids(&read_again), ids(&changed));

    // A name the configuration refers to is an entry point; Rust trait-impl methods and provided
    // trait methods are called by the trait's users, never dead; a private orphan is.
    fs::write(
        dir.join("pyproject.toml"),
        "[project.scripts]\nfrobnicate = \"app.core:unused_public\"\n",
    )
    .expect("write");
    fs::create_dir_all(dir.join("rs/src")).expect("mkdir");
    fs::write(
        dir.join("rs/src/main.rs"),
        "use std::fmt;\n\nstruct Shown;\n\nimpl fmt::Display for Shown {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"shown\")\n    }\n}\n\ntrait Greeter {\n    fn provided_greeting(&self) -> u8 {\n        1\n    }\n}\n\nfn orphan_helper() -> u8 {\n    2\n}\n\nfn main() {}\n",
    )
    .expect("write");
    init_json(dir, &["--enrich", "off"]);
    let (answer, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    let ids: Vec<&str> = answer["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "app/core.py::_forgotten_helper",
            "rs/src/main.rs::orphan_helper",
            "app/core.py::Store.never_called",
        ]
    );
}

/// A deterministic 8-dimensional "embedding": letters counted into buckets.
fn bag_of_letters(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; 8];
    for c in text.chars().filter(char::is_ascii_alphabetic) {
        v[(c.to_ascii_lowercase() as usize) % 8] += 1.0;
    }
    v[0] += 0.5;
    v
}

fn embeddings_reply(request: &Received) -> Reply {
    let body = request.json();
    let data: Vec<Value> = body["input"]
        .as_array()
        .map(|inputs| {
            inputs
                .iter()
                .enumerate()
                .map(|(i, t)| serde_json::json!({"index": i, "embedding": bag_of_letters(t.as_str().unwrap_or(""))}))
                .collect()
        })
        .unwrap_or_default();
    Reply::Respond(
        200,
        Vec::new(),
        serde_json::json!({"object": "list", "data": data}).to_string(),
    )
}

#[test]
fn an_http_embeddings_endpoint_is_batched_retried_and_used_for_queries() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let server = Server::start(vec![Reply::status(503, "warming up")], embeddings_reply);
    let with_env = |args: &[&str]| {
        Command::new(stage("tldrgraph"))
            .args(args)
            .current_dir(dir)
            .env("TLDRGRAPH_EMBED_BASE_URL", server.base_url())
            .env("TLDRGRAPH_EMBED_MODEL", "letters-8")
            .env("TLDRGRAPH_EMBED_API_KEY", "sk-embed-test")
            .env("TLDRGRAPH_EMBED_BACKOFF_MS", "10")
            .output()
            .expect("run")
    };
    let (done, _) = json_payload(&with_env(&[
        "init",
        "--json",
        "--enrich",
        "off",
        "--embeddings",
        "openai",
    ]));
    assert_eq!(
        (done["status"].as_str(), &done["embeddings_ready"]),
        (Some("done"), &Value::Bool(true)),
        "{done}"
    );
    let received = server.received();
    assert_eq!(received.len(), 2, "one 503, then one batch of 26 texts");
    let body = received[1].json();
    assert_eq!(
        (received[1].path.as_str(), body["model"].as_str()),
        ("/v1/embeddings", Some("letters-8"))
    );
    assert_eq!(body["input"].as_array().map(Vec::len), Some(26));
    assert_eq!(
        received[1].header("authorization"),
        Some("Bearer sk-embed-test")
    );
    assert_eq!(
        fs::metadata(dir.join(".tldrgraph/vectors.i8"))
            .expect("vectors")
            .len(),
        26 * (4 + 8)
    );
    // A query embeds its text at the same endpoint.
    let (answer, _) = json_payload(&with_env(&[
        "query",
        "fetch a url",
        "--mode",
        "semantic",
        "--json",
    ]));
    assert_eq!(server.received().len(), 3);
    assert_eq!(
        server.received()[2].json()["input"],
        serde_json::json!(["fetch a url"])
    );
    assert!(answer.get("note").is_none(), "{answer}");
    assert_eq!(answer["results"].as_array().map(Vec::len), Some(5));
    // Nothing changed: nothing is sent again.
    json_payload(&with_env(&[
        "init",
        "--json",
        "--enrich",
        "off",
        "--embeddings",
        "openai",
    ]));
    assert_eq!(server.received().len(), 3);

    // The endpoint gone: needs_embeddings, and the lexical index still answers.
    let unreachable = || {
        Command::new(stage("tldrgraph"))
            .args([
                "init",
                "--json",
                "--enrich",
                "off",
                "--embeddings",
                "ollama",
            ])
            .current_dir(dir)
            .env("TLDRGRAPH_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
            .env("TLDRGRAPH_EMBED_BACKOFF_MS", "1")
            .output()
            .expect("run")
    };
    let gone = unreachable();
    let (state, _) = json_payload(&gone);
    assert_eq!(state["status"], "needs_embeddings", "{state}");
    assert!(
        state["reason"]
            .as_str()
            .unwrap_or("")
            .contains("connection"),
        "{state}"
    );
    // The same again still tries (an incomplete build is never reused as is)...
    let again = unreachable();
    assert_eq!(json_payload(&again).0["status"], "needs_embeddings");
    // ...and once the endpoint is back, the build completes.
    let back = with_env(&[
        "init",
        "--json",
        "--enrich",
        "off",
        "--embeddings",
        "openai",
    ]);
    let (done, _) = json_payload(&back);
    assert_eq!(
        (done["status"].as_str(), &done["embeddings_ready"]),
        (Some("done"), &Value::Bool(true)),
        "{done}"
    );
    // The key went in headers only.
    for out in [&gone, &again, &back] {
        assert!(!String::from_utf8_lossy(&out.stderr).contains("sk-embed-test"));
    }
    let index = fs::read(dir.join(".tldrgraph/search.bin")).expect("index");
    assert!(!String::from_utf8_lossy(&index).contains("sk-embed-test"));
}

/// Vectors found to be the index's are not hashed again while their stamp holds; a change in
/// place (the same size) moves the stamp, so they are hashed and refused as before.
#[test]
fn vectors_found_intact_are_trusted_only_while_their_stamp_holds() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    init_json(dir, &["--enrich", "off"]);
    let record = dir.join(".tldrgraph/cache/vectors.i8.verified");
    let ask = || json_payload(&tldrgraph(dir, &["query", "fetch a url", "--json"])).0;
    // Older than the racy window: the next check that hashes them remembers their stamp.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let hashed = ask();
    assert!(hashed["note"].is_null(), "{hashed}");
    assert!(record.is_file(), "the stamp is remembered");
    let trusted = ask();
    assert_eq!(trusted, hashed, "the same answer without hashing");

    // The model's table, likewise: its stamp is remembered with the id it hashed to, and a
    // record that names another id is not trusted (the table is hashed again).
    let model_record = dir.join(".tldrgraph/cache/model.verified");
    let read_record = || -> Value {
        serde_json::from_slice(&fs::read(&model_record).expect("model record")).expect("json")
    };
    let remembered = read_record();
    let model_id = model().id().to_string();
    assert_eq!(
        remembered[1],
        Value::from(model_id.as_str()),
        "{remembered}"
    );
    let mut forged = remembered.clone();
    forged[1] = Value::from("static:all-MiniLM-L6-v2:000000000000");
    fs::write(&model_record, forged.to_string()).expect("write");
    assert_eq!(ask(), hashed, "hashed again, the same answer");
    assert_eq!(read_record(), remembered, "and remembered again");

    let vectors = dir.join(".tldrgraph/vectors.i8");
    let mut bytes = fs::read(&vectors).expect("vectors");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    fs::write(&vectors, &bytes).expect("write");
    let damaged = ask();
    assert!(
        damaged["note"]
            .as_str()
            .unwrap_or("")
            .starts_with("lexical ranking only"),
        "{damaged}"
    );
}

#[test]
fn a_damaged_or_missing_index_is_a_clear_error() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let missing = tldrgraph(dir, &["query", "fetch a url"]);
    assert_eq!(missing.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("run `tldrgraph init --json` first"));
    init_json(dir, &["--enrich", "off"]);
    let index = dir.join(".tldrgraph/search.bin");
    let bytes = fs::read(&index).expect("index");
    for damaged in [bytes[..bytes.len() / 2].to_vec(), b"not an index".to_vec()] {
        fs::write(&index, &damaged).expect("write");
        for args in [
            &["query", "fetch a url"][..],
            &["trace", "main", "get"],
            &["dead-code"],
        ] {
            let out = tldrgraph(dir, args);
            assert_eq!(out.status.code(), Some(65), "{args:?}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                said.contains("search.bin") && !said.contains("panicked"),
                "{said}"
            );
        }
    }
    // The next build replaces it.
    let (done, _) = init_json(dir, &["--enrich", "off"]);
    assert_eq!(done["status"], "done");
    assert!(tldrgraph(dir, &["query", "fetch a url"]).status.success());
}

#[test]
fn tg_embed_passes_an_unchanged_stream_through_with_the_same_bytes() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    write_stream(dir, "stream.ndjson");
    let embed = || {
        Command::new(stage("tg-embed"))
            .args(["-i", "stream.ndjson"])
            .current_dir(dir)
            .env_remove("TLDRGRAPH_EMBEDDINGS")
            .output()
            .expect("run tg-embed")
    };
    let (first, second) = (embed(), embed());
    assert!(String::from_utf8_lossy(&first.stderr).contains("26 texts embedded"));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("nothing changed since the last build")
    );
    assert_eq!(first.stdout, second.stdout);
    // A damaged index is not trusted: the stage rebuilds it.
    fs::write(dir.join(".tldrgraph/search.bin"), b"garbage").expect("write");
    let third = embed();
    let said = String::from_utf8_lossy(&third.stderr);
    assert!(said.contains("26 texts embedded, 0 reused"), "{said}");
    assert_eq!(third.stdout, first.stdout);
}

/// The stream tg-extract | tg-classify | tg-plan | tg-enrich gives in `dir`, into `file`.
fn write_stream(dir: &Path, file: &str) {
    let bin = |name: &str| stage(name).display().to_string();
    let upstream = format!(
        "{} . | {} | {} --enrich off | {} --enrich off > {file}",
        bin("tg-extract"),
        bin("tg-classify"),
        bin("tg-plan"),
        bin("tg-enrich")
    );
    let made = Command::new("bash")
        .args(["-c", &upstream])
        .current_dir(dir)
        .output()
        .expect("run");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
}

#[test]
fn postings_tokenise_only_changed_texts_and_equal_a_full_build() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    write_stream(dir, "before.ndjson");
    // A new function that calls `helper`: its own text, and the text of nothing else (a text
    // names what a symbol calls, not its callers).
    let util = dir.join("pkg/util.py");
    let text = fs::read_to_string(&util).expect("read");
    assert!(text.contains("def helper("), "{text}");
    fs::write(
        &util,
        format!("{text}\n\ndef brand_new(a, b):\n    return helper(a)\n"),
    )
    .expect("write");
    write_stream(dir, "after.ndjson");
    let embed = |stream: &str| {
        let out = Command::new(stage("tg-embed"))
            .args(["-i", stream, "-o", "/dev/null"])
            .current_dir(dir)
            .env_remove("TLDRGRAPH_EMBEDDINGS")
            .output()
            .expect("run tg-embed");
        assert!(out.status.success());
        let said = String::from_utf8_lossy(&out.stderr).to_string();
        let line = said.lines().last().unwrap_or_default().to_string();
        (
            line,
            fs::read(dir.join(".tldrgraph/search.bin")).expect("index"),
        )
    };
    let keys = dir.join(".tldrgraph/cache/postings.keys");
    let (said, _) = embed("before.ndjson");
    assert!(said.ends_with("; 32 lexical texts tokenised"), "{said}");
    let (said, reused) = embed("after.ndjson");
    assert!(said.ends_with("; 1 lexical texts tokenised"), "{said}");
    // The same index from every text tokenised again: without the keys, then with keys that
    // belong to another index, then with damaged keys.
    let rebuild = |spoil: &dyn Fn()| {
        embed("before.ndjson");
        spoil();
        let (said, full) = embed("after.ndjson");
        assert!(said.ends_with("; 33 lexical texts tokenised"), "{said}");
        assert!(
            full == reused,
            "the reused postings differ from a full build"
        );
    };
    rebuild(&|| fs::remove_file(&keys).expect("remove keys"));
    let other_index = fs::read(&keys).expect("keys");
    embed("before.ndjson");
    rebuild(&|| fs::write(&keys, &other_index).expect("write keys"));
    rebuild(&|| {
        let mut bytes = fs::read(&keys).expect("keys");
        bytes.truncate(bytes.len() - 3);
        fs::write(&keys, bytes).expect("write keys");
    });
    // A byte flipped in one symbol's key: that text is tokenised again, and only that one.
    embed("before.ndjson");
    let mut bytes = fs::read(&keys).expect("keys");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x20;
    fs::write(&keys, bytes).expect("write keys");
    let (said, flipped) = embed("after.ndjson");
    assert!(said.ends_with("; 2 lexical texts tokenised"), "{said}");
    assert!(flipped == reused, "a flipped key changed the postings");
    // A symbol gone: nothing to tokenise, and its terms leave the index.
    let (said, _) = embed("before.ndjson");
    assert!(said.ends_with("; 0 lexical texts tokenised"), "{said}");
}

/// Roles decided by the language rules and by a layer's `role:`, an `exclude:` list that keeps
/// files out of the graph (and out of "added"), answers that say when the graph is stale, and
/// searches that put product code first.
#[test]
fn roles_excludes_freshness_and_product_first_search() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    };
    // A test and a docs example that both call `get`, more often than the product does; a
    // script excluded by the config; a vendored copy a layer marks as tooling.
    write(
        "tests/test_api.py",
        "from pkg.api import get\n\n\ndef test_fetch_a_url():\n    get('a')\n    get('b')\n",
    );
    write(
        "docs_src/fetch.py",
        "from pkg.api import get\n\n\ndef fetch_a_url_example():\n    return get('x')\n",
    );
    write("scripts/release.py", "def release():\n    return 1\n");
    write(
        "tools/vendor.py",
        "def vendored_fetch(url):\n    return url\n",
    );
    let config = format!(
        "{}exclude: [\"scripts/**\"]\n",
        include_str!("fixtures/layers/python.layers.config.yaml").replace(
            "  - id: shared\n",
            "  - id: vendored\n    name: Vendored\n    order: 50\n    paths: [\"tools/**\"]\n    role: tooling\n  - id: shared\n",
        )
    );
    write(".tldrgraph/layers.config.yaml", &config);
    let (done, _) = init_json(dir, &["--enrich", "off"]);
    assert_eq!(done["status"], "done", "{done}");

    let graph: Value =
        serde_json::from_slice(&fs::read(dir.join(".tldrgraph/graph.json")).expect("graph"))
            .expect("json");
    let role = |id: &str| -> String {
        graph["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["id"] == id)
            .map(|n| n["role"].as_str().unwrap_or("").to_string())
            .unwrap_or_else(|| "absent".to_string())
    };
    assert_eq!(role("pkg/api.py::get"), "product");
    assert_eq!(role("tests/test_api.py::test_fetch_a_url"), "test");
    assert_eq!(role("docs_src/fetch.py::fetch_a_url_example"), "example");
    assert_eq!(role("tools/vendor.py::vendored_fetch"), "tooling");
    assert_eq!(role("scripts/release.py::release"), "absent");
    let layers = fs::read_to_string(dir.join(".tldrgraph/layers.yaml")).expect("layers.yaml");
    assert!(layers.contains("roles:"), "{layers}");
    let overview = fs::read_to_string(dir.join(".tldrgraph/symbols.md")).expect("symbols.md");
    assert!(overview.contains("by role: product "), "{overview}");

    // Fresh: the excluded script is not an "added" source.
    let (status, _) = json_payload(&tldrgraph(dir, &["status", "--json"]));
    assert_eq!(status["fresh"], true, "{status}");
    let (answer, _) = json_payload(&tldrgraph(dir, &["query", "fetch a url", "--json"]));
    assert_eq!(answer["fresh"], true);
    // Product first: the test and the example match the words better, and come after.
    let ids: Vec<&str> = answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids.first(), Some(&"pkg/api.py::get"), "{ids:?}");
    let first_other = ids
        .iter()
        .position(|id| id.starts_with("tests/") || id.starts_with("docs_src/"));
    let last_product = ids
        .iter()
        .rposition(|id| id.starts_with("pkg/") || id.starts_with("main"));
    if let (Some(other), Some(product)) = (first_other, last_product) {
        assert!(product < other, "{ids:?}");
    }
    // A name typed as an agent types it, with its module path, comes first.
    for (name, expected) in [
        ("pkg.api.get", "pkg/api.py::get"),
        ("api.py::get", "pkg/api.py::get"),
        ("Session::send", "pkg/api.py::Session.send"),
    ] {
        let (named, _) = json_payload(&tldrgraph(dir, &["query", name, "--json"]));
        assert_eq!(named["results"][0]["id"], expected, "{name}");
    }
    // --include-tests ranks by score alone; --exclude-layer removes a layer; --layer repeats.
    let (all, _) = json_payload(&tldrgraph(
        dir,
        &["query", "fetch a url example", "--json", "--include-tests"],
    ));
    assert_eq!(
        all["results"][0]["id"], "docs_src/fetch.py::fetch_a_url_example",
        "{all}"
    );
    let (only, _) = json_payload(&tldrgraph(
        dir,
        &[
            "query", "fetch", "--json", "--layer", "api", "--layer", "models",
        ],
    ));
    assert!(only["results"]
        .as_array()
        .expect("results")
        .iter()
        .all(|r| r["id"].as_str().unwrap_or("").starts_with("pkg/")));
    let (without, _) = json_payload(&tldrgraph(
        dir,
        &["query", "fetch a url", "--json", "--exclude-layer", "api"],
    ));
    assert!(!without["results"]
        .as_array()
        .expect("results")
        .iter()
        .any(|r| r["id"].as_str().unwrap_or("").starts_with("pkg/api.py")));
    let bad = tldrgraph(dir, &["query", "x", "--layer", "apj"]);
    assert_eq!(bad.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean `api`?"));

    // A source edited since the build: every answer says so, with counts.
    write("pkg/util.py", "def helper():\n    return 2\n");
    let (stale, _) = json_payload(&tldrgraph(dir, &["query", "fetch a url", "--json"]));
    assert_eq!(stale["fresh"], false);
    assert_eq!(stale["changes"]["changed"]["count"], 1);
    let text = String::from_utf8_lossy(&tldrgraph(dir, &["trace", "main.py::main", "get"]).stdout)
        .to_string();
    assert!(
        text.starts_with("> Note: the graph is stale: 1 file changed since the last build"),
        "{text}"
    );
    let (dead, _) = json_payload(&tldrgraph(dir, &["dead-code", "--json"]));
    assert_eq!(dead["fresh"], false);
}

#[test]
fn an_overloaded_function_is_named_traced_and_searched_as_its_implementation() {
    // app/routing.py: two `@overload` signatures of `parse`, then the `def` with a body (#3).
    let repo = layered_fixture("python_typed");
    let dir = repo.path();
    init_json(dir, &["--enrich", "off"]);
    let (trace, _) = json_payload(&tldrgraph(dir, &["trace", "App.serve", "parse", "--json"]));
    assert_eq!(trace["to"], "app/routing.py::parse#3", "{trace}");
    assert_eq!(trace["found"], true, "{trace}");
    let (found, _) = json_payload(&tldrgraph(dir, &["query", "parse", "--json"]));
    let ids: Vec<&str> = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids.first(), Some(&"app/routing.py::parse#3"), "{ids:?}");
    assert!(
        !ids.contains(&"app/routing.py::parse") && !ids.contains(&"app/routing.py::parse#2"),
        "a signature is never an answer: {ids:?}"
    );
    // A signature is still there by its id.
    let (by_id, _) = json_payload(&tldrgraph(
        dir,
        &["trace", "App.serve", "app/routing.py::parse", "--json"],
    ));
    assert_eq!(by_id["to"], "app/routing.py::parse", "{by_id}");
    assert_eq!(
        by_id["found"], false,
        "no call reaches a signature: {by_id}"
    );
}
