//! `tldrgraph impact` and `tldrgraph check` on fixture repositories with real git histories
//! made here: each test commits the python fixture (with a test file), changes it the way a
//! developer would, and asserts what the change touches. The expected answers were read off the
//! fixture's code before the commands were run.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use tg_integration::{layered_fixture, run};

const TEST_FILE: &str = "from pkg.api import get\n\n\ndef test_get():\n    assert get(\"x\")\n\n\ndef helper_not_a_test():\n    return 1\n";

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
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
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The layered python fixture with a test file, committed once.
fn repository() -> tempfile::TempDir {
    let repo = layered_fixture("python");
    let dir = repo.path();
    std::fs::create_dir_all(dir.join("tests")).expect("mkdir");
    std::fs::write(dir.join("tests/test_api.py"), TEST_FILE).expect("test file");
    // The store is the tool's, not the project's (as `install` writes it).
    std::fs::write(dir.join(".gitignore"), ".tldrgraph/\n").expect(".gitignore");
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    repo
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

fn impact_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["impact", "--json"];
    all.extend_from_slice(args);
    let output = run("tldrgraph", dir, &all);
    assert!(
        output.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

/// (change, id, from) of each changed symbol, sorted.
fn changes(found: &Value) -> Vec<(String, String, Option<String>)> {
    let mut out: Vec<_> = found["changed"]
        .as_array()
        .expect("changed")
        .iter()
        .map(|c| {
            (
                c["change"].as_str().expect("change").to_string(),
                c["id"].as_str().expect("id").to_string(),
                c["from"].as_str().map(str::to_string),
            )
        })
        .collect();
    out.sort();
    out
}

fn callers_at(found: &Value, depth: u64) -> Vec<String> {
    let mut out: Vec<String> = found["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .filter(|c| c["depth"] == depth)
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect();
    out.sort();
    out
}

fn owned(items: &[(&str, &str, Option<&str>)]) -> Vec<(String, String, Option<String>)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.map(str::to_string)))
        .collect()
}

#[test]
fn an_edit_inside_one_function_is_that_function_and_what_reaches_it() {
    let repo = repository();
    let dir = repo.path();
    edit(dir, "pkg/api.py", "    h()\n", "    h()\n    h()\n");
    let found = impact_json(dir, &["--since", "HEAD"]);
    // Not the module, not the functions below whose lines moved.
    assert_eq!(
        changes(&found),
        owned(&[("changed", "pkg/api.py::request", None)])
    );
    assert_eq!(callers_at(&found, 1), ["pkg/api.py::get"]);
    let second = callers_at(&found, 2);
    for id in [
        "main.py",
        "pkg/api.py::Session.load.inner",
        "pkg/api.py::index",
        "tests/test_api.py::test_get",
    ] {
        assert!(second.contains(&id.to_string()), "{id} in {second:?}");
    }
    assert!(callers_at(&found, 3).contains(&"pkg/api.py::load".to_string()));
    // The test reaches request through get; the helper beside it is no test.
    let tests = found["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 1, "{tests:?}");
    assert_eq!(tests[0]["runner"], "tests/test_api.py::test_get");
    assert_eq!(tests[0]["reaches"], "pkg/api.py::request");
    assert_eq!(found["summary"]["files"], 1);
    assert_eq!(found["layers"]["api"]["changed"], 1);
    // The Markdown for a person has the same.
    let text = String::from_utf8(run("tldrgraph", dir, &["impact", "--since", "HEAD"]).stdout)
        .expect("utf-8");
    assert!(text.contains("## Layer api"), "{text}");
    assert!(text.contains("| changed | pkg/api.py::request |"), "{text}");
    assert!(text.contains("tests/test_api.py::test_get\n```"), "{text}");
}

#[test]
fn a_renamed_function_is_removed_and_added_and_its_caller_changed() {
    let repo = repository();
    let dir = repo.path();
    edit(
        dir,
        "pkg/api.py",
        "def request(method, url):",
        "def send_request(method, url):",
    );
    edit(
        dir,
        "pkg/api.py",
        "    return request(\"get\", url)",
        "    return send_request(\"get\", url)",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[
            ("added", "pkg/api.py::send_request", None),
            ("changed", "pkg/api.py::get", None),
            ("removed", "pkg/api.py::request", None),
        ])
    );
    // A public function whose signature changed is named (get's signature did not change).
    assert_eq!(found["signatures"], serde_json::json!([]));
}

#[test]
fn a_moved_file_moves_its_symbols() {
    let repo = repository();
    let dir = repo.path();
    git(dir, &["mv", "pkg/util.py", "pkg/helpers.py"]);
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[
            ("moved", "pkg/helpers.py::date", Some("pkg/util.py::date")),
            (
                "moved",
                "pkg/helpers.py::helper",
                Some("pkg/util.py::helper")
            ),
        ])
    );
    // The same through the index: the move is staged.
    let staged = impact_json(dir, &["--staged"]);
    assert_eq!(changes(&staged), changes(&found));
}

#[test]
fn a_deleted_caller_names_what_called_it() {
    let repo = repository();
    let dir = repo.path();
    edit(dir, "pkg/api.py", "def load():\n    return index()\n", "");
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[("removed", "pkg/api.py::load", None)])
    );
    // main() and Session.load called it: they now call nothing there.
    assert_eq!(
        callers_at(&found, 1),
        ["main.py::main", "pkg/api.py::Session.load"]
    );
}

#[test]
fn a_changed_signature_of_public_api_is_reported_and_a_private_one_is_not() {
    // pkg/util.py gets a private function first, in the base commit.
    let repo = repository();
    let dir = repo.path();
    edit(
        dir,
        "pkg/api.py",
        "def get(url):",
        "def get(url, timeout=None):",
    );
    edit(
        dir,
        "pkg/util.py",
        "def date():",
        "def date(*, strict=False):",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    let ids: Vec<&str> = found["signatures"]
        .as_array()
        .expect("signatures")
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["pkg/api.py::get", "pkg/util.py::date"]);
    assert_eq!(found["signatures"][0]["before"], "def get(url)");
    assert_eq!(
        found["signatures"][0]["after"],
        "def get(url, timeout=None)"
    );
}

#[test]
fn without_git_the_named_files_are_compared_with_the_last_build() {
    let repo = layered_fixture("python");
    let dir = repo.path();
    let (payload, _) = tg_integration::init_json(dir, &["--enrich", "off"]);
    assert_eq!(payload["status"], "done");
    edit(dir, "pkg/api.py", "    h()\n", "    h()\n    h()\n");
    edit(dir, "pkg/util.py", "    return 1\n", "    return 2\n");
    let found = impact_json(dir, &["--files", "pkg/api.py"]);
    assert_eq!(
        changes(&found),
        owned(&[("changed", "pkg/api.py::request", None)])
    );
    let both = impact_json(dir, &["--files", "pkg/api.py", "pkg/util.py"]);
    assert_eq!(
        changes(&both),
        owned(&[
            ("changed", "pkg/api.py::request", None),
            ("changed", "pkg/util.py::date", None)
        ])
    );
    // A name that is no file here nor in the build is a typo, not "no change".
    let typo = run("tldrgraph", dir, &["impact", "--files", "pkg/apy.py"]);
    assert_eq!(typo.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&typo.stderr)
        .contains("pkg/apy.py is neither a file here nor in the last build"));
    // A directory stands for the files under it.
    let package = impact_json(dir, &["--files", "pkg"]);
    assert_eq!(changes(&package), changes(&both));
    assert_eq!(
        run(
            "tldrgraph",
            dir,
            &["impact", "--files", "pkg", "--depth", "0"]
        )
        .status
        .code(),
        Some(64)
    );
    let no_git = run("tldrgraph", dir, &["impact"]);
    assert_eq!(no_git.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&no_git.stderr).contains("--files"));
}

#[test]
fn a_budget_cuts_the_lists_and_says_so() {
    let repo = repository();
    let dir = repo.path();
    edit(dir, "pkg/api.py", "    h()\n", "    h()\n    h()\n");
    let found = impact_json(dir, &["--since", "HEAD", "--budget", "150"]);
    assert!(
        found.to_string().len() <= 150 * 4 + 200,
        "{}",
        found.to_string().len()
    );
    let cut = found["cut"].as_array().expect("cut reported");
    assert!(cut.iter().any(|c| c["path"] == "/callers"), "{cut:?}");
}

fn check(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    run("tldrgraph", dir, &all)
}

#[test]
fn a_new_cross_layer_import_fails_the_gate_and_old_violations_do_not() {
    let repo = repository();
    let dir = repo.path();
    // The committed fixture already breaks its rules (main.py, in web, uses models): with
    // --since they are old, and a clean change passes.
    let clean = check(dir, &["--since", "HEAD"]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
    assert!(String::from_utf8_lossy(&clean.stdout)
        .contains("0 layering violations introduced since HEAD"));
    let all = check(dir, &[]);
    assert_eq!(all.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&all.stdout).contains("main.py:"));

    // web may depend on api only: a new import of models from web is a new violation.
    edit(
        dir,
        "pkg/web.py",
        "class App:",
        "from pkg.models import Model\n\n\nclass App:",
    );
    let new = check(dir, &["--since", "HEAD", "--format", "json"]);
    assert_eq!(new.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&new.stdout).expect("json");
    let violations = report["violations"].as_array().expect("violations");
    assert!(!violations.is_empty());
    for v in violations {
        assert_eq!(v["file"], "pkg/web.py", "{v}");
        assert_eq!(
            (v["src_layer"].as_str(), v["dst_layer"].as_str()),
            (Some("web"), Some("models")),
            "{v}"
        );
    }
    assert_eq!(report["count"].as_u64(), Some(violations.len() as u64));

    let github = String::from_utf8(check(dir, &["--since", "HEAD", "--format", "github"]).stdout)
        .expect("utf-8");
    assert!(github.lines().next().is_some_and(|l| l.starts_with("::error file=pkg/web.py,line=1,title=Layering violation::layer `web` may not depend on layer `models`")), "{github}");

    // The SARIF log is valid SARIF 2.1.0, by the OASIS schema.
    let sarif = check(dir, &["--since", "HEAD", "--format", "sarif"]);
    assert_eq!(sarif.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&sarif.stdout).expect("json");
    assert_eq!(
        log["runs"][0]["results"].as_array().map(Vec::len),
        Some(violations.len())
    );
    assert_eq!(
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "pkg/web.py"
    );
    validate_sarif(&sarif.stdout);
}

fn validate_sarif(log: &[u8]) {
    let schema = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sarif/sarif-schema-2.1.0.json"
    );
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(python)
        .args([
            "-c",
            "import json, sys, jsonschema; jsonschema.validate(json.load(sys.stdin), json.load(open(sys.argv[1]))); print('valid')",
            schema,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 with jsonschema (bash tests/mcp/deps.sh installs it)");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(log)
        .expect("write");
    let output = child.wait_with_output().expect("wait");
    assert!(
        output.status.success() && output.stdout.starts_with(b"valid"),
        "the SARIF log does not validate: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_gate_never_passes_by_accident() {
    let repo = repository();
    let dir = repo.path();
    // An unknown REF.
    let unknown = check(dir, &["--since", "no-such-branch"]);
    assert_eq!(unknown.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("`no-such-branch` names no commit"));
    // An edit not yet built is judged as it is: the check extracts the tree, it never reads a
    // graph that may be stale.
    let (payload, _) = tg_integration::init_json(dir, &["--enrich", "off"]);
    assert_eq!(payload["status"], "done");
    edit(
        dir,
        "pkg/web.py",
        "class App:",
        "from pkg.models import Model\n\n\nclass App:",
    );
    assert_eq!(check(dir, &["--since", "HEAD"]).status.code(), Some(1));
    // A REF whose tree cannot be built (its layers config is broken today) fails loudly.
    std::fs::write(
        dir.join(".tldrgraph/layers.config.yaml"),
        "version: 1\nlayers:\n  - id: web\n    pathz: [\"x\"]\n",
    )
    .expect("config");
    let broken = check(dir, &["--since", "HEAD"]);
    assert_eq!(
        broken.status.code(),
        Some(65),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
    // No layers config at all: nothing to judge against.
    std::fs::remove_file(dir.join(".tldrgraph/layers.config.yaml")).expect("rm");
    let none = check(dir, &[]);
    assert_eq!(none.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&none.stderr).contains("layers.config.yaml does not exist"));
    // Outside git, --since is a usage error.
    let plain = layered_fixture("python");
    let outside = check(plain.path(), &["--since", "HEAD"]);
    assert_eq!(outside.status.code(), Some(64));
}

#[test]
fn a_class_is_listed_when_its_own_text_changed_beside_a_method() {
    let repo = repository();
    let dir = repo.path();
    // A method that grows by a line: only the method (the class's own text is as it was).
    edit(
        dir,
        "pkg/api.py",
        "        super().save()\n",
        "        super().save()\n        super().save()\n",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[("changed", "pkg/api.py::Session.send", None)])
    );
    edit(
        dir,
        "pkg/api.py",
        "    \"\"\"A session.\"\"\"",
        "    \"\"\"A session with a server.\"\"\"",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[
            ("changed", "pkg/api.py::Session", None),
            ("changed", "pkg/api.py::Session.send", None)
        ])
    );
    // Module-level code beside a changed function: the module is listed too.
    edit(dir, "pkg/api.py", "import os\n", "import os\nimport sys\n");
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[
            ("changed", "pkg/api.py", None),
            ("changed", "pkg/api.py::Session", None),
            ("changed", "pkg/api.py::Session.send", None)
        ])
    );
}

#[test]
fn a_decorator_changed_on_a_method_is_the_method_s_change_not_its_class_s() {
    let repo = repository();
    let dir = repo.path();
    // A decorator added: the method's text (its hash covers its decorators) changed, and the
    // class's own text is as it was.
    edit(
        dir,
        "pkg/api.py",
        "    def send(self):\n",
        "    @app.route(\"/send\")\n    def send(self):\n",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[("changed", "pkg/api.py::Session.send", None)])
    );
    // One changed in place: likewise.
    git(dir, &["checkout", "-q", "--", "."]);
    edit(
        dir,
        "pkg/api.py",
        "    @property\n",
        "    @functools.cached_property\n",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[("changed", "pkg/api.py::Session.name", None)])
    );
}

/// Rust's runner runs what `#[test]` marks: an unmarked function of a test module is a helper,
/// even when it reaches the change, and a file a `#[cfg(test)] mod tests;` declares is tests.
#[test]
fn a_rust_test_is_what_test_marks_not_its_helpers() {
    let repo = tempfile::tempdir().expect("tempdir");
    let dir = repo.path();
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n").expect("toml");
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n\n#[cfg(test)]\nmod tests;\n",
    )
    .expect("lib.rs");
    std::fs::write(
        dir.join("src/tests.rs"),
        "use super::parse;\n\nfn fixture() -> usize {\n    parse(\"ab\")\n}\n\n#[test]\n\
         fn parses() {\n    assert_eq!(fixture(), 2);\n}\n\n#[tokio::test]\n\
         async fn parses_async() {\n    assert_eq!(parse(\"a\"), 1);\n}\n",
    )
    .expect("tests.rs");
    std::fs::write(dir.join(".gitignore"), ".tldrgraph/\n").expect(".gitignore");
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    edit(
        dir,
        "src/lib.rs",
        "    s.len()\n",
        "    s.chars().count()\n",
    );
    let found = impact_json(dir, &["--since", "HEAD"]);
    assert_eq!(
        changes(&found),
        owned(&[("changed", "src/lib.rs::parse", None)])
    );
    assert_eq!(
        callers_at(&found, 1),
        ["src/tests.rs::fixture", "src/tests.rs::parses_async"]
    );
    let mut tests: Vec<(String, String)> = found["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            (
                t["id"].as_str().expect("id").to_string(),
                t["runner"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    tests.sort();
    assert_eq!(
        tests,
        [
            ("src/tests.rs::parses", "tests::parses"),
            ("src/tests.rs::parses_async", "tests::parses_async"),
        ]
        .map(|(id, runner)| (id.to_string(), runner.to_string()))
    );
}
