//! `tldrgraph ui` in a real browser: the page is loaded from disk into Debian's Chromium, driven
//! by playwright-core (tests/ui/drive.mjs; `bash tests/ui/deps.sh` installs both, `make test`
//! does) with the network cut, and what it shows is checked against graph.json and against the
//! fixture's code. Screenshots are kept in target/ui-screenshots/. A missing browser or driver
//! fails the tests; it never skips them.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tg_integration::{init_json, layered_fixture, run, stage};

/// An intent no page may execute: it closes the data block, opens a script, and hides a script
/// in an image's error handler.
const HOSTILE_INTENT: &str = "</script><script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> & <!-- fetches";

/// The python fixture with its layers config, built to `done` with every candidate given the
/// hostile intent (as an agent answering its batches would).
fn built_with_hostile_intents() -> tempfile::TempDir {
    let repo = layered_fixture("python");
    let (payload, _) = init_json(repo.path(), &[]);
    assert_eq!(payload["status"], "needs_confirmation", "{payload}");
    let (mut payload, _) = init_json(repo.path(), &["--yes"]);
    while payload["status"] == "needs_enrichment" {
        let answer: Vec<Value> = payload["batch"]
            .as_array()
            .expect("batch")
            .iter()
            .map(|item| json!({"id": item["id"], "intent": HOSTILE_INTENT}))
            .collect();
        let file = repo.path().join("answer.json");
        std::fs::write(&file, Value::Array(answer).to_string()).expect("answer");
        let applied = run(
            "tldrgraph",
            repo.path(),
            &["enrich", "--apply", file.to_str().expect("utf-8")],
        );
        assert!(
            applied.status.success(),
            "{}",
            String::from_utf8_lossy(&applied.stderr)
        );
        std::fs::remove_file(&file).expect("rm answer");
        payload = init_json(repo.path(), &[]).0;
    }
    assert_eq!(payload["status"], "done", "{payload}");
    repo
}

fn ui(repo: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["ui"];
    all.extend_from_slice(args);
    run("tldrgraph", repo, &all)
}

fn graph(repo: &Path) -> Value {
    let text = std::fs::read_to_string(repo.join(".tldrgraph/graph.json")).expect("graph.json");
    serde_json::from_str(&text).expect("graph.json is JSON")
}

/// Where the browser driver is; fails (never skips) when it or Chromium is missing.
fn driver_prefix() -> PathBuf {
    let prefix = std::env::var_os("TG_UI_PREFIX").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/tldrgraph-ui"),
        PathBuf::from,
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        prefix.join("node_modules/playwright-core/package.json").is_file() && Path::new(&chromium).is_file(),
        "playwright-core ({}) or Chromium ({chromium}) is missing: run `bash tests/ui/deps.sh` (make test does)",
        prefix.display()
    );
    prefix
}

/// Runs tests/ui/drive.mjs on `scenario`, screenshots into target/ui-screenshots/`shots`: the
/// page's report.
fn drive(mut scenario: Value, shots: &str) -> Value {
    let prefix = driver_prefix();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/ui-screenshots")
        .join(shots);
    scenario["shots"] = json!(dir);
    let output = Command::new("node")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/ui/drive.mjs"))
        .arg(scenario.to_string())
        .env("TG_UI_PREFIX", &prefix)
        .output()
        .expect("run node");
    assert!(
        output.status.success(),
        "the browser driver failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("the driver prints JSON");
    assert!(
        dir.join("overview.png").is_file(),
        "no screenshot in {}",
        dir.display()
    );
    report
}

/// The page the way a reader meets it: no request leaves the file, nothing fails, nothing from
/// the repository runs.
fn assert_safe_and_quiet(report: &Value) {
    assert_eq!(report["requests"], json!([]), "the page asked the network");
    assert_eq!(report["errors"], json!([]), "the page logged errors");
    assert_eq!(report["pwned"], Value::Null, "text from the repository ran");
    assert_eq!(
        report["script_elements"], 2,
        "only the page's own two scripts"
    );
    assert_eq!(
        report["injected_images"], 0,
        "markup from an intent became an element"
    );
}

#[test]
fn the_map_shows_every_layer_its_dependencies_and_violations_as_graph_json_has_them() {
    let repo = built_with_hostile_intents();
    let made = ui(repo.path(), &[]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let page = repo.path().join(".tldrgraph/map.html");
    assert_eq!(
        String::from_utf8_lossy(&made.stdout).trim(),
        page.to_str().expect("utf-8"),
        "stdout names the page"
    );
    let report = drive(
        json!({"page": page, "layer": "api", "between": "web,models"}),
        "layers",
    );
    assert_safe_and_quiet(&report);
    assert_eq!(
        report["stale"],
        Value::Null,
        "a fresh build is not called stale"
    );

    // Every layer, in the configured order, with graph.json's counts.
    let g = graph(repo.path());
    let mut layers: Vec<&Value> = g["layers"].as_array().expect("layers").iter().collect();
    layers.sort_by_key(|l| l["order"].as_i64());
    let shown: Vec<(String, u64)> = report["layers"]
        .as_array()
        .expect("bands")
        .iter()
        .map(|b| {
            (
                b["id"].as_str().expect("id").to_string(),
                b["symbols"].as_u64().expect("n"),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = layers
        .iter()
        .map(|l| {
            (
                l["id"].as_str().expect("id").to_string(),
                l["nodes"].as_u64().expect("nodes"),
            )
        })
        .collect();
    assert_eq!(shown, expected);
    assert_eq!(
        shown.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["web", "api", "models", "shared"],
        "the fixture's config order"
    );
    // The layer opened: its counts by role, counted here from graph.json's nodes.
    let mut by_role: BTreeMap<String, u64> = BTreeMap::new();
    for node in g["nodes"].as_array().expect("nodes") {
        if node["layer"] == "api" {
            *by_role
                .entry(node["role"].as_str().unwrap_or("product").to_string())
                .or_default() += 1;
        }
    }
    let counts = &report["layer"]["counts"];
    assert_eq!(counts["symbols"], 17);
    for role in ["product", "test", "example", "generated", "tooling"] {
        assert_eq!(
            counts[role].as_u64(),
            Some(by_role.get(role).copied().unwrap_or(0)),
            "api's {role} count"
        );
    }
    assert_eq!(report["layer"]["files"], json!(["pkg/api.py"]));
    assert_eq!(report["file"]["path"], "pkg/api.py");
    assert!(report["file"]["symbols"]
        .as_array()
        .expect("file symbols")
        .contains(&json!("pkg/api.py::request")));

    // The violations: graph.json's flagged edges, each listed, and the arcs that carry them red.
    let flagged: BTreeSet<(String, String)> = g["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter(|e| e["violation"] == true)
        .map(|e| {
            (
                e["src"].as_str().expect("src").into(),
                e["dst"].as_str().expect("dst").into(),
            )
        })
        .collect();
    let listed: BTreeSet<(String, String)> = report["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| {
            (
                v["src"].as_str().expect("src").into(),
                v["dst"].as_str().expect("dst").into(),
            )
        })
        .collect();
    assert!(
        !flagged.is_empty(),
        "the fixture's config is broken by main.py"
    );
    assert_eq!(listed, flagged);
    assert!(flagged.contains(&("main.py".into(), "pkg/util.py::helper".into())));
    let web_models = report["arcs"]
        .as_array()
        .expect("arcs")
        .iter()
        .find(|a| a["from"] == "web" && a["to"] == "models")
        .expect("an arc from web to models");
    assert!(web_models["violations"].as_u64() > Some(0));
    assert_eq!(
        web_models["violation_colour"], "rgb(220, 38, 38)",
        "violations have their own colour"
    );
    let allowed = report["arcs"]
        .as_array()
        .expect("arcs")
        .iter()
        .find(|a| a["from"] == "web" && a["to"] == "api")
        .expect("an arc from web to api");
    assert_eq!(allowed["violations"], 0);
    assert_ne!(allowed["violation_colour"], "rgb(220, 38, 38)");
    // The arc opened: its dependencies, the violating ones marked.
    let between = report["between"].as_array().expect("between");
    assert_eq!(
        between.len() as u64,
        web_models["total"].as_u64().expect("total")
    );
    assert!(between.iter().all(|e| e["violation"] == true));
}

#[test]
fn a_symbol_found_by_name_shows_its_callers_callees_intent_and_signature() {
    let repo = built_with_hostile_intents();
    assert!(ui(repo.path(), &[]).status.success());
    let page = repo.path().join(".tldrgraph/map.html");
    let report = drive(
        json!({"page": page, "search": "helper", "open": "pkg/util.py::helper"}),
        "symbol",
    );
    assert_safe_and_quiet(&report);
    assert_eq!(
        report["search"][0], "pkg/util.py::helper",
        "the exact name ranks first"
    );
    let symbol = &report["symbol"];
    assert_eq!(symbol["id"], "pkg/util.py::helper");
    assert_eq!(symbol["name"], "helper");
    // From the fixture's code: `def helper():` on lines 1-2 of pkg/util.py, in the shared layer,
    // called by main.py (a violation: web may not use shared) and by pkg/api.py's request;
    // it calls date.
    assert_eq!(symbol["where"], "pkg/util.py:1-2");
    assert_eq!(symbol["layer"], "Shared");
    assert_eq!(symbol["signature"], "def helper()");
    let ids = |list: &Value| -> BTreeSet<String> {
        list.as_array()
            .expect("list")
            .iter()
            .map(|x| x["id"].as_str().expect("id").to_string())
            .collect()
    };
    assert_eq!(
        ids(&symbol["callers"]),
        BTreeSet::from(["main.py".to_string(), "pkg/api.py::request".to_string()])
    );
    assert_eq!(
        ids(&symbol["callees"]),
        BTreeSet::from(["pkg/util.py::date".to_string()])
    );
    let from_main = symbol["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .find(|c| c["id"] == "main.py")
        .expect("main.py");
    assert_eq!(from_main["violation"], true);
    // The confidences are graph.json's.
    let g = graph(repo.path());
    for caller in symbol["callers"].as_array().expect("callers") {
        let edge = g["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .find(|e| {
                e["src"] == caller["id"]
                    && e["dst"] == "pkg/util.py::helper"
                    && e["kind"] == "calls"
            })
            .expect("the caller's edge");
        assert_eq!(caller["confidence"].as_f64(), edge["confidence"].as_f64());
    }

    // A candidate carries the hostile intent: it is shown as text, and ran nothing.
    let report = drive(
        json!({"page": page, "search": "request", "open": "pkg/api.py::request"}),
        "hostile",
    );
    assert_safe_and_quiet(&report);
    let intent = report["symbol"]["intent"].as_str().expect("intent");
    assert!(
        intent.starts_with(HOSTILE_INTENT),
        "shown literally: {intent}"
    );
    // Search by intent: every candidate has the same one, so it finds them.
    let report = drive(
        json!({"page": page, "search": "window.__pwned"}),
        "by-intent",
    );
    assert_safe_and_quiet(&report);
    assert!(report["search"]
        .as_array()
        .expect("results")
        .contains(&json!("pkg/api.py::request")));
}

#[test]
fn the_page_is_one_deterministic_file_with_its_own_policy() {
    let repo = built_with_hostile_intents();
    let out = repo.path().join("maps/out.html");
    assert!(ui(repo.path(), &["--output", "maps/out.html"])
        .status
        .success());
    let first = std::fs::read(&out).expect("page");
    let printed = ui(repo.path(), &["--output", "-"]);
    assert!(printed.status.success());
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout).trim_end(),
        String::from_utf8_lossy(&first).trim_end(),
        "the same input gives the same bytes"
    );
    let text = String::from_utf8(first).expect("utf-8");
    assert!(text.contains("Content-Security-Policy"));
    assert!(text.contains("connect-src 'none'"));
    assert_eq!(
        text.matches("</script>").count(),
        2,
        "no data closes a script block"
    );
    assert!(
        !text.contains("<script>window.__pwned"),
        "the intent is escaped in the data"
    );
    for reference in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(
            !text.contains(reference),
            "the page refers outside itself: {reference}"
        );
    }
    // The default place, and --open hands the page to $BROWSER.
    let opened = repo.path().join("opened.txt");
    let browser = repo.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .expect("browser script");
    Command::new("chmod")
        .arg("+x")
        .arg(&browser)
        .status()
        .expect("chmod");
    let run_open = Command::new(stage("tldrgraph"))
        .args(["ui", "--open"])
        .current_dir(repo.path())
        // As browsers read $BROWSER: a `:` list, the first command that starts wins.
        .env(
            "BROWSER",
            format!("/nonexistent/browser --new-window:{}", browser.display()),
        )
        .output()
        .expect("ui --open");
    assert!(run_open.status.success());
    let page = repo.path().join(".tldrgraph/map.html");
    assert_eq!(
        std::fs::read_to_string(&opened)
            .expect("the browser ran")
            .trim(),
        page.to_str().expect("utf-8")
    );
}

#[test]
fn without_a_build_there_is_no_map_and_the_error_says_what_to_run() {
    let repo = layered_fixture("python");
    let out = ui(repo.path(), &[]);
    assert_eq!(out.status.code(), Some(66));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("graph.json") && stderr.contains("tldrgraph init"),
        "{stderr}"
    );
    assert!(!repo.path().join(".tldrgraph/map.html").exists());
    let out = ui(repo.path(), &["--output", "-", "--serve"]);
    assert_eq!(
        out.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ui(repo.path(), &["--port", "80"]);
    assert_eq!(out.status.code(), Some(2), "--port needs --serve");
}

/// An HTTP/1.1 request on loopback: the status line, the headers (lowercased names) and the body.
fn http(url_base: &str, method: &str, path: &str) -> (String, BTreeMap<String, String>, String) {
    let address = url_base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = TcpStream::connect(address).expect("connect");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines.next().expect("status").to_string();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    (status, headers, body.to_string())
}

#[test]
fn serve_answers_on_loopback_only_and_follows_a_rebuild() {
    let repo = built_with_hostile_intents();
    let mut server = Command::new(stage("tldrgraph"))
        .args(["ui", "--serve", "--port", "0"])
        .current_dir(repo.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL");
    let url = url.trim().to_string();
    let result = std::panic::catch_unwind(|| {
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let (status, headers, body) = http(&url, "GET", "/");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(headers["content-security-policy"].contains("connect-src 'none'"));
        assert_eq!(headers["content-type"], "text/html; charset=utf-8");
        let on_disk =
            std::fs::read_to_string(repo.path().join(".tldrgraph/map.html")).expect("page");
        assert_eq!(body, on_disk);
        assert_eq!(http(&url, "GET", "/etc/passwd").0, "HTTP/1.1 404 Not Found");
        assert_eq!(http(&url, "POST", "/").0, "HTTP/1.1 405 Method Not Allowed");
        let (status, _, body) = http(&url, "HEAD", "/map.html");
        assert_eq!((status.as_str(), body.as_str()), ("HTTP/1.1 200 OK", ""));

        // The served page works in the browser under the served policy.
        let report = drive(json!({"url": url, "search": "helper"}), "served");
        assert_safe_and_quiet(&report);
        assert_eq!(report["search"][0], "pkg/util.py::helper");

        // An edit is told at the next request (the page says it is stale), and a rebuild is
        // picked up by the one after.
        assert!(!body.contains("brand_new_function") && !body.contains("the graph is stale"));
        let util = repo.path().join("pkg/util.py");
        let mut text = std::fs::read_to_string(&util).expect("util.py");
        text.push_str("\n\ndef brand_new_function():\n    return helper()\n");
        std::fs::write(&util, text).expect("edit");
        let (_, _, body) = http(&url, "GET", "/");
        assert!(
            body.contains("the graph is stale: 1 file changed"),
            "the edit is told"
        );
        let (payload, _) = init_json(repo.path(), &["--enrich", "off"]);
        assert_eq!(payload["status"], "done", "{payload}");
        let (_, _, body) = http(&url, "GET", "/");
        assert!(
            body.contains("brand_new_function"),
            "the page follows the build"
        );
    });
    let _ = server.kill();
    let _ = server.wait();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
