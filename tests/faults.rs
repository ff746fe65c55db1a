//! Faults and hostile input, through the real binaries: damaged artifacts, a stage failing
//! mid-stream, a read-only or full store, kill -9 at random moments (`kill_loop.rs`), hostile
//! agent input. RELIABILITY.md records the figures.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tg_integration::{answer_batches, copy_fixture, init_json, json_payload, run, stage};

const PYTHON_LAYERS: &str = include_str!("fixtures/layers/python.layers.config.yaml");

/// The artifacts readers depend on; each must be whole (old or new), never a mix.
pub const CHECKED: &[&str] = &[
    "graph.json",
    "state.json",
    "plan.json",
    "layers.yaml",
    "intents.ndjson",
    "approval.json",
    "search.bin",
    "vectors.f32",
    "enrichment_request.json",
];

/// The python fixture with its layers designed, approved with --yes and every intent written
/// by a test agent: `done`.
fn enriched_repo() -> tempfile::TempDir {
    let repo = copy_fixture("python");
    fs::create_dir_all(repo.path().join(".tldrgraph")).expect("mkdir");
    fs::write(
        repo.path().join(".tldrgraph/layers.config.yaml"),
        PYTHON_LAYERS,
    )
    .expect("config");
    let (first, _) = init_json(repo.path(), &["--yes"]);
    let (done, _) = answer_batches(repo.path(), first);
    assert_eq!(done["status"], "done", "{done}");
    repo
}

/// The bytes of each checked artifact (`None` when absent).
fn snapshot(dir: &Path) -> BTreeMap<&'static str, Option<Vec<u8>>> {
    CHECKED
        .iter()
        .map(|name| (*name, fs::read(dir.join(".tldrgraph").join(name)).ok()))
        .collect()
}

fn assert_same(
    actual: &BTreeMap<&str, Option<Vec<u8>>>,
    expected: &BTreeMap<&str, Option<Vec<u8>>>,
    case: &str,
) {
    for (name, bytes) in expected {
        assert!(
            actual.get(name) == Some(bytes),
            "{case}: {name} differs from the clean build"
        );
    }
}

/// A copy of `from` (the repository and its `.tldrgraph/`) in a new temporary directory.
fn copy_repo(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_all(from, dir.path());
    dir
}

fn copy_all(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_all(&entry.path(), &target);
        } else if entry.file_name() != "tldrgraph.lock" {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn query(dir: &Path) -> std::process::Output {
    run("tldrgraph", dir, &["query", "fetch url"])
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Turns an artifact's bytes (name, bytes, repository) into damaged ones.
type Damage = fn(&str, &[u8], &Path) -> Vec<u8>;

/// What an older build would have left: the index in the unsealed layout of index version 2,
/// a cache written by another extractor revision.
fn older_version(name: &str, bytes: &[u8], dir: &Path) -> Vec<u8> {
    match name {
        "search.bin" => {
            let mut index =
                tg_shared::search::SearchIndex::load(&dir.join(".tldrgraph/search.bin"))
                    .expect("clean index loads");
            index.head.version = 2;
            tg_shared::codec::encode(&index).expect("encode")
        }
        "cache/extract.bin" | "cache/extract.out" => {
            let at = bytes.iter().position(|&b| b == b'\n').unwrap_or(0);
            let mut out = b"tg-extract 0.0.1 rev 1".to_vec();
            out.extend_from_slice(&bytes[at..]);
            out
        }
        _ => bytes.iter().rev().copied().collect(),
    }
}

#[test]
fn damaged_or_older_artifacts_are_reported_and_rebuilt_to_the_clean_bytes() {
    let clean = enriched_repo();
    let reference = snapshot(clean.path());
    let clean_query = query(clean.path());
    assert!(clean_query.status.success());
    let targets = [
        "cache/extract.bin",
        "cache/extract.out",
        "search.bin",
        "vectors.f32",
        "search.sum",
        "init.key",
        "graph.json",
        "state.json",
        "plan.json",
        "layers.yaml",
    ];
    let damages: [(&str, Damage); 4] = [
        ("truncated", |_, b, _| b[..b.len() / 2].to_vec()),
        ("empty", |_, _, _| Vec::new()),
        ("flipped", |_, b, _| {
            let mut b = b.to_vec();
            let at = b.len() / 2;
            b[at] ^= 0x20;
            b
        }),
        ("older", older_version),
    ];
    let mut cases = 0;
    for target in targets {
        for (damage, mangle) in &damages {
            let case = format!("{target} {damage}");
            let repo = copy_repo(clean.path());
            let path = repo.path().join(".tldrgraph").join(target);
            let bytes = fs::read(&path).expect(target);
            fs::write(&path, mangle(target, &bytes, repo.path())).expect("damage");

            // Before the rebuild: the same answer, a refusal, or a lexical answer that says so;
            // never a different answer from damaged bytes.
            let before = query(repo.path());
            let said_why = !before.status.success() && stderr(&before).contains("tldrgraph init")
                || stderr(&before).contains("lexical ranking only");
            assert!(
                before.stdout == clean_query.stdout || said_why,
                "{case}: query answered from damaged bytes: {}",
                stderr(&before)
            );

            let output = run("tldrgraph", repo.path(), &["init", "--json"]);
            let (payload, code) = json_payload(&output);
            assert_eq!(
                (payload["status"].as_str(), code),
                (Some("done"), 0),
                "{case}: {payload}"
            );
            if matches!(target, "search.bin" | "vectors.f32") {
                assert!(
                    stderr(&output).contains("warning:"),
                    "{case}: no warning: {}",
                    stderr(&output)
                );
            }
            assert_same(&snapshot(repo.path()), &reference, &case);
            assert_eq!(query(repo.path()).stdout, clean_query.stdout, "{case}");
            cases += 1;
        }
    }
    assert_eq!(cases, 40);
}

#[test]
fn a_damaged_intents_store_stops_the_run_and_is_never_rewritten() {
    let repo = enriched_repo();
    let path = repo.path().join(".tldrgraph/intents.ndjson");
    let mut text = fs::read_to_string(&path).expect("intents");
    text.push_str("{\"id\": \"half a line\n");
    fs::write(&path, &text).expect("damage");
    fs::write(
        repo.path().join("main.py"),
        "def changed():\n    return 1\n",
    )
    .expect("edit");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(payload["status"], "error", "{payload}");
    assert_eq!(code, 65);
    let error = payload["error"].as_str().unwrap_or("");
    let line = text.lines().count();
    assert!(
        error.contains("intents.ndjson") && error.contains(&format!("line {line}")),
        "{error}"
    );
    assert_eq!(fs::read_to_string(&path).expect("intents"), text);
}

/// A directory holding `tldrgraph` and every stage, with `replace` swapped for a shell script.
fn stages_with(replace: &str, script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "tldrgraph",
        "tg-extract",
        "tg-classify",
        "tg-plan",
        "tg-enrich",
        "tg-embed",
        "tg-status",
        "tg-query",
    ] {
        let target = dir.path().join(name);
        if name == replace {
            fs::write(&target, script).expect("script");
            let mut permissions = fs::metadata(&target).expect("meta").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
            fs::set_permissions(&target, permissions).expect("chmod");
        } else {
            // A copy, not a link: the wrapper looks for its stages beside its own resolved path.
            fs::copy(stage(name), &target).expect("copy");
        }
    }
    dir
}

#[test]
fn a_stage_failing_mid_stream_is_named_and_later_artifacts_stay_as_they_were() {
    let repo = enriched_repo();
    let before = snapshot(repo.path());
    // Half a stream, then a failure: what a crash of tg-plan looks like downstream.
    let stages = stages_with(
        "tg-plan",
        "#!/bin/sh\nhead -n 5\necho 'tg-plan: error: simulated failure' >&2\nexit 3\n",
    );
    fs::write(
        repo.path().join("main.py"),
        fs::read_to_string(repo.path().join("main.py")).expect("main")
            + "\ndef extra():\n    return 2\n",
    )
    .expect("edit");
    let output = Command::new(stages.path().join("tldrgraph"))
        .args(["init", "--json"])
        .current_dir(repo.path())
        .output()
        .expect("run");
    let (payload, code) = json_payload(&output);
    assert_eq!(payload["stage"], "tg-plan", "{payload}");
    assert_eq!(
        (payload["exit_code"].as_i64(), code),
        (Some(70), 70),
        "{payload}"
    );
    let error = payload["error"].as_str().unwrap_or("");
    assert!(
        error.contains("exit code 3") && error.contains("simulated failure"),
        "{error}"
    );
    let after = snapshot(repo.path());
    for name in [
        "graph.json",
        "state.json",
        "plan.json",
        "intents.ndjson",
        "search.bin",
        "vectors.f32",
    ] {
        assert!(
            after[name] == before[name],
            "{name} changed after a failed run"
        );
    }
    // The real stages finish the job.
    assert_eq!(init_json(repo.path(), &[]).1, 0);
}

/// Mounts a tmpfs of `size` at `at`; `false` (the test is skipped, and says so) where this
/// machine does not allow it.
fn mount_tmpfs(at: &Path, options: &str) -> bool {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(at)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: cannot mount a tmpfs at {} here", at.display());
    }
    ok
}

struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_fails_clearly_and_keeps_the_previous_artifacts() {
    let built = enriched_repo();
    let repo = copy_fixture("python");
    let store = repo.path().join(".tldrgraph");
    fs::create_dir_all(&store).expect("mkdir");
    if !mount_tmpfs(&store, "size=512k") {
        return;
    }
    let _mounted = Mounted(store.clone());
    copy_all(&built.path().join(".tldrgraph"), &store);
    let before = snapshot(repo.path());
    // Fill the rest of the disk.
    let filler = store.join("filler");
    let chunk = vec![b'x'; 4096];
    {
        use std::io::Write;
        let mut file = fs::File::create(&filler).expect("filler");
        while file.write_all(&chunk).is_ok() {}
        let _ = file.sync_all();
    }
    fs::write(
        repo.path().join("main.py"),
        fs::read_to_string(repo.path().join("main.py")).expect("main")
            + "\ndef extra():\n    return 2\n",
    )
    .expect("edit");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(payload["status"], "error", "{payload}");
    assert!(
        code == 73 || code == 74 || code == 70,
        "exit {code}: {payload}"
    );
    let error = payload["error"].as_str().unwrap_or("");
    assert!(
        error.contains("No space left") || error.contains("os error 28"),
        "{error}"
    );
    assert_same(&snapshot(repo.path()), &before, "full disk");
    // Space again: the next run completes.
    fs::remove_file(&filler).expect("free");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(code, 0, "{payload}");
    assert_eq!(payload["status"], "done", "{payload}");
}

#[test]
fn a_read_only_store_fails_clearly_and_changes_nothing() {
    let built = enriched_repo();
    let repo = copy_fixture("python");
    let store = repo.path().join(".tldrgraph");
    fs::create_dir_all(&store).expect("mkdir");
    if !mount_tmpfs(&store, "size=4m") {
        return;
    }
    let _mounted = Mounted(store.clone());
    copy_all(&built.path().join(".tldrgraph"), &store);
    // The lock file exists already: opening it for writing is what fails first otherwise.
    fs::write(store.join("tldrgraph.lock"), "").expect("lock file");
    let before = snapshot(repo.path());
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&store)
        .status()
        .expect("mount");
    assert!(remount.success());
    fs::write(
        repo.path().join("main.py"),
        fs::read_to_string(repo.path().join("main.py")).expect("main")
            + "\ndef extra():\n    return 2\n",
    )
    .expect("edit");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(payload["status"], "error", "{payload}");
    assert_ne!(code, 0);
    let error = payload["error"].as_str().unwrap_or("");
    assert!(
        error.contains("Read-only file system") || error.contains("os error 30"),
        "{error}"
    );
    assert_same(&snapshot(repo.path()), &before, "read-only store");
}

#[test]
fn a_store_that_is_a_symlink_is_refused_and_nothing_is_written_there() {
    let repo = copy_fixture("python");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(elsewhere.path(), repo.path().join(".tldrgraph")).expect("link");
    for args in [
        &["init", "--json"][..],
        &["status", "--json"],
        &["query", "fetch"],
    ] {
        let output = run("tldrgraph", repo.path(), args);
        assert_eq!(
            output.status.code(),
            Some(77),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let output = run("tg-extract", repo.path(), &["."]);
    assert_eq!(output.status.code(), Some(77));
    assert!(
        stderr(&output).contains("is a symlink"),
        "{}",
        stderr(&output)
    );
    assert_eq!(fs::read_dir(elsewhere.path()).expect("dir").count(), 0);
}

#[test]
fn symlinks_leading_out_of_the_repository_are_not_read() {
    let repo = copy_fixture("python");
    let outside = tempfile::tempdir().expect("tempdir");
    fs::write(
        outside.path().join("secret.py"),
        "def leaked_secret():\n    pass\n",
    )
    .expect("w");
    std::os::unix::fs::symlink(
        outside.path().join("secret.py"),
        repo.path().join("linked.py"),
    )
    .expect("link");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("linked_dir")).expect("link");
    let output = run("tg-extract", repo.path(), &["."]);
    assert!(output.status.success());
    let stream = String::from_utf8_lossy(&output.stdout);
    assert!(!stream.contains("leaked_secret"));
    assert_eq!(
        stream.matches("symlink_outside_root").count(),
        2,
        "{stream}"
    );
}

#[test]
fn hostile_intent_answers_are_refused_whole_and_escaped() {
    let repo = enriched_repo();
    let before = snapshot(repo.path());
    let answer = serde_json::json!([
        {"id": "../../etc/passwd", "intent": "Escapes the store."},
        {"id": "/etc/passwd", "intent": "An absolute path."},
        {"id": "main.py::main\u{0}", "intent": "A NUL byte."},
        {"id": "main.py::main", "intent": "Colours \u{1b}[31mthe terminal."},
    ]);
    let file = repo.path().join("answer.json");
    fs::write(&file, answer.to_string()).expect("answer");
    let output = run(
        "tldrgraph",
        repo.path(),
        &["enrich", "--apply", "answer.json"],
    );
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        !message.contains('\u{1b}') && !message.contains('\u{0}'),
        "{message:?}"
    );
    assert_eq!(message.matches("unknown id").count(), 3, "{message}");
    assert!(message.contains("control characters"), "{message}");
    assert_same(&snapshot(repo.path()), &before, "hostile answer");
    assert!(!repo.path().join("etc").exists());
}

#[test]
fn yaml_bombs_are_bounded_errors() {
    let repo = enriched_repo();
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (previous, name) in "abcdefghij".chars().zip("bcdefghijk".chars()) {
        let refs = vec![format!("*{previous}"); 9].join(", ");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let before = snapshot(repo.path());
    let config = repo.path().join(".tldrgraph/layers.config.yaml");
    let saved = fs::read_to_string(&config).expect("config");
    fs::write(&config, &bomb).expect("bomb");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(code, 65, "{payload}");
    assert!(
        payload["error"]
            .as_str()
            .unwrap_or("")
            .contains("repetition limit"),
        "{payload}"
    );
    fs::write(&config, saved).expect("restore");

    let answer = repo.path().join("answer.yaml");
    fs::write(&answer, &bomb).expect("bomb");
    let output = run(
        "tldrgraph",
        repo.path(),
        &["enrich", "--apply", "answer.yaml"],
    );
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("answer.yaml"),
        "{}",
        stderr(&output)
    );
    let deep = format!("{}x{}", "[".repeat(100_000), "]".repeat(100_000));
    fs::write(&answer, deep).expect("deep");
    let output = run(
        "tldrgraph",
        repo.path(),
        &["enrich", "--apply", "answer.yaml"],
    );
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    assert_same(&snapshot(repo.path()), &before, "yaml bombs");
}

#[test]
fn a_huge_line_is_refused_in_bounded_memory() {
    // Under a 1 GiB address-space limit, a stage that held a 1.5 GiB line would die of it.
    let script = format!(
        "ulimit -v 1048576; exec {} --root .",
        stage("tg-classify").display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let header =
            "{\"type\":\"header\",\"schema\":\"1.0\",\"producer\":\"test\",\"root\":\".\"}\n";
        stdin.write_all(header.as_bytes())?;
        stdin.write_all(b"{\"type\":\"node\",\"id\":\"")?;
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..1536 {
            stdin.write_all(&chunk)?;
        }
        stdin.write_all(b"\"}\n")
    });
    let output = child.wait_with_output().expect("wait");
    let _ = writer.join().expect("writer");
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("line 2") && message.contains("longer than 16 MiB"),
        "{message}"
    );
}
