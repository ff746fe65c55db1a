//! Helpers for the cross-binary tests in this directory: the stage binaries come from the shared
//! target directory (`cargo build --workspace` first; `make test` does), fixtures are copied
//! into fresh temporary directories.

pub mod loopback;
pub mod patch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The built binary `name` (`tg-extract`, `tldrgraph`, ...) in the target directory.
pub fn stage(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test>-<hash> → target/<profile>/<name>
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace` first",
        path.display()
    );
    path
}

/// The layers config the agent writes for the python fixture.
pub const PYTHON_LAYERS: &str = include_str!("fixtures/layers/python.layers.config.yaml");

/// A copy of fixture `name` with the python layers config in its `.tldrgraph/`.
pub fn layered_fixture(name: &str) -> tempfile::TempDir {
    let repo = copy_fixture(name);
    std::fs::create_dir_all(repo.path().join(".tldrgraph")).expect("mkdir");
    std::fs::write(
        repo.path().join(".tldrgraph/layers.config.yaml"),
        PYTHON_LAYERS,
    )
    .expect("config");
    repo
}

/// Runs the built binary `name` in `dir` with `input` on its stdin (written from a thread, so a
/// stage that stops reading early cannot block the test).
pub fn pipe_into(name: &str, dir: &Path, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(stage(name))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("wait");
    let _ = writer.join();
    output
}

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// A copy of fixture `name` in a new temporary directory (without any `.tldrgraph/`).
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        if entry.file_name() == ".tldrgraph" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Runs the built binary `name` with `args` in `dir`.
pub fn run(name: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(stage(name))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run binary")
}

/// `tldrgraph init --json` (plus `args`) in `dir`: the payload and the exit code. Asserts that
/// stdout is exactly one JSON object on one line.
pub fn init_json(dir: &Path, args: &[&str]) -> (serde_json::Value, i32) {
    let mut all = vec!["init", "--json"];
    all.extend_from_slice(args);
    let output = run("tldrgraph", dir, &all);
    json_payload(&output)
}

/// The one JSON object on `output`'s stdout and the exit code.
pub fn json_payload(output: &Output) -> (serde_json::Value, i32) {
    let stdout = String::from_utf8(output.stdout.clone()).expect("utf-8 stdout");
    assert_eq!(
        stdout.lines().count(),
        1,
        "stdout must be one JSON line; stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let payload = serde_json::from_str(stdout.trim()).expect("stdout is JSON");
    (payload, output.status.code().unwrap_or(-1))
}

/// Compares `actual` with `tests/golden/<name>`. With `UPDATE_GOLDEN=1` a file that differs (or
/// is missing) is rewritten and the test still fails, naming it: blessing is never a pass, so a
/// run that rewrote goldens cannot be mistaken for a green one. Run again without it to check.
pub fn assert_golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name);
    let expected = std::fs::read_to_string(&path);
    if expected.as_deref().is_ok_and(|e| e == actual) {
        return;
    }
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("mkdir golden");
        std::fs::write(&path, actual).expect("write golden");
        panic!(
            "{} was rewritten (UPDATE_GOLDEN=1); review the diff and run again without it",
            path.display()
        );
    }
    let expected =
        expected.unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, expected, "differs from {}", path.display());
}

/// The intent a test agent writes for `id`.
pub fn test_intent(id: &str) -> String {
    format!("Intent of {id}.")
}

/// Answers `needs_enrichment` batches as an agent would (writes the answer file, applies it with
/// `tldrgraph enrich --apply`, runs `init --json` again) until another state comes: that state
/// and the ids of each batch answered.
pub fn answer_batches(
    dir: &Path,
    mut payload: serde_json::Value,
) -> (serde_json::Value, Vec<Vec<String>>) {
    let mut rounds = Vec::new();
    while payload["status"] == "needs_enrichment" {
        assert!(
            rounds.len() < 100,
            "the enrichment loop does not end: {payload}"
        );
        let ids: Vec<String> = payload["batch"]
            .as_array()
            .expect("batch")
            .iter()
            .map(|item| item["id"].as_str().expect("id").to_string())
            .collect();
        apply_intents(dir, &ids);
        rounds.push(ids);
        payload = init_json(dir, &[]).0;
    }
    (payload, rounds)
}

/// Stores an intent for each of `ids` with `tldrgraph enrich --apply`, as an agent answers a
/// batch; the apply must succeed.
pub fn apply_intents(dir: &Path, ids: &[String]) {
    let answer: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "intent": test_intent(id)}))
        .collect();
    let file = dir.join(".tldrgraph").join("test-answer.json");
    std::fs::write(&file, serde_json::to_string(&answer).expect("json")).expect("write answer");
    let applied = run(
        "tldrgraph",
        dir,
        &["enrich", "--apply", file.to_str().expect("utf-8 path")],
    );
    assert!(
        applied.status.success(),
        "apply failed: {}",
        String::from_utf8_lossy(&applied.stderr)
    );
}
