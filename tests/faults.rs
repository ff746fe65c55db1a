//! Faults and hostile input, through the real binaries: damaged artifacts, a stage failing
//! mid-stream, a read-only or full store, kill -9 at random moments
//! (`kill_9_at_random_moments_leaves_whole_artifacts_and_loses_no_intent`), hostile agent input.
//! The two tmpfs tests mount a file system, which needs root: they are `#[ignore]`d in a plain
//! `cargo test`, and `make test` runs them where a mount is allowed (`tests/tmpfs.sh`). RELIABILITY.md records the figures.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tg_integration::{
    answer_batches, copy_fixture, init_json, json_payload, layered_fixture, pipe_into, run, stage,
};

/// The artifacts readers depend on; each must be whole (old or new), never a mix.
pub const CHECKED: &[&str] = &[
    "graph.json",
    "state.json",
    "plan.json",
    "layers.yaml",
    "intents.ndjson",
    "approval.json",
    "search.bin",
    "vectors.i8",
    "enrichment_request.json",
];

/// The python fixture with its layers designed, approved with --yes and every intent written
/// by a test agent: `done`.
fn enriched_repo() -> tempfile::TempDir {
    let repo = layered_fixture("python");
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
        "cache/extract.bin" | "cache/extract.out.zst" => {
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
        "cache/extract.out.zst",
        "search.bin",
        "vectors.i8",
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
            // A damaged record of the last build (state.json) may make the answer say the graph
            // is stale, and to run init: conservative, and it says why.
            let said_why = !before.status.success() && stderr(&before).contains("tldrgraph init")
                || stderr(&before).contains("lexical ranking only")
                || String::from_utf8_lossy(&before.stdout)
                    .starts_with("> Note: the graph is stale");
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
            if matches!(target, "search.bin" | "vectors.i8") {
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
    add_a_function(repo.path());
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
        "vectors.i8",
    ] {
        assert!(
            after[name] == before[name],
            "{name} changed after a failed run"
        );
    }
    // The real stages finish the job.
    assert_eq!(init_json(repo.path(), &[]).1, 0);
}

/// Mounts a tmpfs with mount `options` (`size=512k`) at `at`. A refused mount fails the test:
/// these tests run only when asked for (`--ignored`), and a test that did not run must not pass.
fn mount_tmpfs(at: &Path, options: &str) {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(at)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "cannot mount a tmpfs at {}: this test needs root (tests/tmpfs.sh runs it where a mount is allowed)",
        at.display()
    );
}

struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The python fixture whose `.tldrgraph/` is a tmpfs mounted with `options`, holding a
/// complete build. The mount goes with the guard.
fn built_on_tmpfs(options: &str) -> (tempfile::TempDir, Mounted) {
    let built = enriched_repo();
    let repo = copy_fixture("python");
    let store = repo.path().join(".tldrgraph");
    fs::create_dir_all(&store).expect("mkdir");
    mount_tmpfs(&store, options);
    let mounted = Mounted(store.clone());
    copy_all(&built.path().join(".tldrgraph"), &store);
    (repo, mounted)
}

/// A source change that gives the next run work to do.
fn add_a_function(dir: &Path) {
    let main = fs::read_to_string(dir.join("main.py")).expect("main");
    fs::write(dir.join("main.py"), main + "\ndef extra():\n    return 2\n").expect("edit");
}

#[test]
#[ignore = "mounts a tmpfs, which needs root: run by tests/tmpfs.sh (make test) where allowed"]
fn tmpfs_a_full_disk_fails_clearly_and_keeps_the_previous_artifacts() {
    let (repo, _mounted) = built_on_tmpfs("size=512k");
    let store = repo.path().join(".tldrgraph");
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
    add_a_function(repo.path());
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
    let failed = snapshot(repo.path());
    // Space again: the next run completes.
    fs::remove_file(&filler).expect("free");
    let (payload, code) = init_json(repo.path(), &[]);
    assert_eq!(code, 0, "{payload}");
    assert_eq!(payload["status"], "done", "{payload}");
    // As the contract says: nothing half-written. Each artifact is the previous run's or the
    // whole one this change gives (a stage that found room before another ran out wrote
    // its own, as the completed run writes it), and what `status` reports is the last
    // successful run's.
    let completed = snapshot(repo.path());
    for (name, bytes) in &failed {
        let previous = before.get(name) == Some(bytes);
        let whole_new =
            !matches!(*name, "graph.json" | "state.json") && completed.get(name) == Some(bytes);
        assert!(
            previous || whole_new,
            "full disk: {name} is neither the previous run's nor a whole new one"
        );
    }
}

#[test]
#[ignore = "mounts a tmpfs, which needs root: run by tests/tmpfs.sh (make test) where allowed"]
fn tmpfs_a_read_only_store_fails_clearly_and_changes_nothing() {
    let (repo, _mounted) = built_on_tmpfs("size=4m");
    let store = repo.path().join(".tldrgraph");
    // The lock file exists already: opening it for writing is what fails first otherwise.
    fs::write(store.join("tldrgraph.lock"), "").expect("lock file");
    let before = snapshot(repo.path());
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&store)
        .status()
        .expect("mount");
    assert!(remount.success());
    add_a_function(repo.path());
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

    // As a list of answers, so the parser reaches the aliases.
    let list_bomb = format!(
        "- id: x\n  intent: y\n{}",
        bomb.lines().map(|l| format!("  {l}\n")).collect::<String>()
    );
    let answer = repo.path().join("answer.yaml");
    fs::write(&answer, &list_bomb).expect("bomb");
    let output = run(
        "tldrgraph",
        repo.path(),
        &["enrich", "--apply", "answer.yaml"],
    );
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("answer.yaml") && stderr(&output).contains("repetition limit"),
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

/// The repository lock, once every process of a killed run has ended (stages outlive a
/// wrapper killed alone, and hold the lock they inherited until they finish).
fn wait_for_lock(dir: &Path) {
    let store = tg_shared::store::Store::at_root(dir);
    let started = std::time::Instant::now();
    loop {
        if let Ok(Some(lock)) = store.try_lock() {
            drop(lock);
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the lock of a killed run was never released"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A small deterministic generator (xorshift64*), so a failing run can be repeated by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

type Snapshot = BTreeMap<&'static str, Option<Vec<u8>>>;

/// Runs `args` to completion (exit 0); how long it took.
fn complete(dir: &Path, args: &[&str]) -> u64 {
    let started = std::time::Instant::now();
    let output = run("tldrgraph", dir, args);
    let took = started.elapsed().as_micros() as u64;
    assert!(
        output.status.success(),
        "{args:?} failed after a kill: {}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    took
}

/// kill -9 at random moments of `tldrgraph init` and `tldrgraph enrich --apply`, the whole
/// process group or the wrapper alone, for TG_KILL_SECONDS (default 20; `make reliability`
/// runs longer) or TG_KILL_ITERATIONS. The repository alternates between two sources and the
/// answer between two intents, four states whose artifacts are built cleanly first. After each
/// kill every artifact must be byte-identical to the state before or the state after (never a
/// mix, never lost intents), and the next run must complete to exactly the clean bytes.
#[test]
fn kill_9_at_random_moments_leaves_whole_artifacts_and_loses_no_intent() {
    let seconds = env_number("TG_KILL_SECONDS", 20);
    let max_iterations = env_number("TG_KILL_ITERATIONS", u64::MAX);
    let mut rng = Rng(env_number("TG_KILL_SEED", 0x9e37_79b9_7f4a_7c15) | 1);
    let base = enriched_repo();
    let main_a = fs::read_to_string(base.path().join("main.py")).expect("main.py");
    let sources = [
        main_a.clone(),
        main_a + "\n\ndef added_by_the_kill_test():\n    return 1\n",
    ];
    let intents =
        fs::read_to_string(base.path().join(".tldrgraph/intents.ndjson")).expect("intents");
    let stored_before = intents.lines().count();
    let symbol = intents
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["id"].as_str().map(str::to_string))
        .find(|id| !id.starts_with("main.py"))
        .expect("an intent outside main.py");
    let texts = ["Fault test intent one.", "Fault test intent two."];
    let answer = |dir: &Path, text: usize| {
        let file = dir.join(".tldrgraph/kill-answer.json");
        let body = serde_json::json!([{"id": symbol, "intent": texts[text]}]);
        fs::write(&file, body.to_string()).expect("answer");
    };
    let apply_args = ["enrich", "--apply", ".tldrgraph/kill-answer.json"];
    let init_args = ["init", "--json"];

    // The four clean states.
    let mut clean: BTreeMap<(usize, usize), Snapshot> = BTreeMap::new();
    for (source, code) in sources.iter().enumerate() {
        for text in 0..2 {
            let repo = copy_repo(base.path());
            fs::write(repo.path().join("main.py"), code).expect("source");
            answer(repo.path(), text);
            complete(repo.path(), &apply_args);
            complete(repo.path(), &init_args);
            clean.insert((source, text), snapshot(repo.path()));
        }
    }

    let repo = copy_repo(base.path());
    let dir = repo.path();
    let (mut source, mut text) = (0usize, 0usize);
    answer(dir, text);
    complete(dir, &apply_args);
    complete(dir, &init_args);
    assert_same(&snapshot(dir), &clean[&(0, 0)], "start");
    // How long each operation takes here when it has work to do: kills land uniformly within
    // 1.2 times the median so far, so most hit a run in progress.
    let mut durations: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        fs::write(dir.join("main.py"), &sources[1]).expect("source");
        durations[0].push(complete(dir, &init_args));
        fs::write(dir.join("main.py"), &sources[0]).expect("source");
        durations[0].push(complete(dir, &init_args));
        answer(dir, 1);
        durations[1].push(complete(dir, &apply_args));
        answer(dir, 0);
        durations[1].push(complete(dir, &apply_args));
    }
    complete(dir, &init_args);
    assert_same(&snapshot(dir), &clean[&(0, 0)], "after the warm-up");

    let started = std::time::Instant::now();
    let (mut iterations, mut mid_run, mut group_kills) = (0u64, 0u64, 0u64);
    let mut by_op = [0u64; 2];
    while started.elapsed().as_secs() < seconds && iterations < max_iterations {
        let op = rng.below(2) as usize;
        let before = (source, text);
        let args: &[&str] = if op == 0 {
            source = 1 - source;
            fs::write(dir.join("main.py"), &sources[source]).expect("source");
            &init_args
        } else {
            text = 1 - text;
            answer(dir, text);
            &apply_args
        };
        let after = (source, text);
        let mut child = Command::new(stage("tldrgraph"))
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn");
        let window = {
            let mut sorted = durations[op].clone();
            sorted.sort_unstable();
            sorted[sorted.len() / 2] * 6 / 5
        };
        std::thread::sleep(std::time::Duration::from_micros(rng.below(window)));
        if child.try_wait().expect("try_wait").is_none() {
            mid_run += 1;
        }
        let group = rng.below(2) == 0;
        if group {
            group_kills += 1;
            // The wrapper and every stage at once, as a terminal's kill of the job would.
            let _ = Command::new("kill")
                .args(["-9", "--", &format!("-{}", child.id())])
                .status();
        } else {
            let _ = child.kill();
        }
        let _ = child.wait();
        wait_for_lock(dir);

        let case = format!("iteration {iterations} (op {op}, group kill {group})");
        let now = snapshot(dir);
        for name in CHECKED {
            let old = &clean[&before][name];
            let new = &clean[&after][name];
            assert!(
                now[name] == *old || now[name] == *new,
                "{case}: {name} is neither the old nor the new version"
            );
        }
        let stored = fs::read_to_string(dir.join(".tldrgraph/intents.ndjson")).expect("intents");
        assert_eq!(
            stored.lines().count(),
            stored_before,
            "{case}: intents lost"
        );

        if op == 1 {
            durations[1].push(complete(dir, &apply_args));
            complete(dir, &init_args);
        } else {
            durations[0].push(complete(dir, &init_args));
        }
        assert_same(
            &snapshot(dir),
            &clean[&after],
            &format!("{case}, completed"),
        );
        by_op[op] += 1;
        iterations += 1;
    }
    let median_ms = |op: usize| {
        let mut sorted = durations[op].clone();
        sorted.sort_unstable();
        sorted[sorted.len() / 2] / 1000
    };
    let summary = format!(
        "kill -9 loop: {iterations} iterations in {:.0} s ({} init, median run {} ms; {} enrich --apply, median run {} ms; {mid_run} killed mid-run, {group_kills} whole-group kills); every artifact old or new, no intent lost, every next run completed to the clean bytes",
        started.elapsed().as_secs_f64(),
        by_op[0],
        median_ms(0),
        by_op[1],
        median_ms(1),
    );
    eprintln!("{summary}");
    if let Ok(path) = std::env::var("TG_KILL_REPORT") {
        fs::write(path, summary + "\n").expect("report");
    }
    assert!(iterations > 0);
}

#[test]
fn a_file_rewritten_while_it_is_read_never_poisons_the_caches() {
    let repo = copy_fixture("python");
    let dir = repo.path().to_path_buf();
    let path = dir.join("pkg/churn.py");
    let versions = [
        "def alpha():\n    return 1\n".to_string(),
        (0..400)
            .map(|i| format!("def beta_{i}(x):\n    return alpha(x) + {i}\n\n"))
            .collect::<String>(),
    ];
    let (mut torn_runs, mut flips) = (0, 0);
    for round in 0..40 {
        fs::write(&path, &versions[0]).expect("write");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, path, versions) = (stop.clone(), path.clone(), versions.clone());
            std::thread::spawn(move || {
                let mut flips = 0u64;
                // In place (truncate, then write), so a reader can see half a file.
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = fs::write(&path, &versions[(flips % 2) as usize]);
                    flips += 1;
                }
                flips
            })
        };
        let output = run("tg-extract", &dir, &["."]);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        flips += writer.join().expect("writer");
        assert!(output.status.success(), "{}", stderr(&output));
        let stream = String::from_utf8(output.stdout.clone()).expect("utf-8");
        assert!(stream
            .lines()
            .last()
            .is_some_and(|l| l.contains("\"type\":\"summary\"")));
        if stderr(&output).contains("changed while it was read") {
            torn_runs += 1;
        }
        // The run may have probed one version and parsed another: its cache must still give
        // exactly what a clean run gives, whichever version the file settles on.
        let version = &versions[round % 2];
        fs::write(&path, version).expect("write");
        let cached = run("tg-extract", &dir, &["."]);
        let clean = run("tg-extract", &dir, &["--no-cache", "."]);
        assert!(cached.status.success() && clean.status.success());
        assert!(
            cached.stdout == clean.stdout,
            "round {round}: a cache kept what a torn read saw"
        );
    }
    eprintln!("{torn_runs} of 40 runs saw the file change while reading it ({flips} rewrites)");
    assert!(flips > 40);
}

#[test]
fn every_stream_reader_rejects_bad_streams_by_line_and_passes_unknown_records_through() {
    let repo = layered_fixture("python");
    let extracted = run("tg-extract", repo.path(), &["."]);
    assert!(extracted.status.success());
    let stream = String::from_utf8(extracted.stdout).expect("utf-8");
    let lines: Vec<&str> = stream.lines().collect();
    let unknown = r#"{"type":"from_the_future","id":"x","payload":[1,2,3]}"#;
    let with_unknown = format!("{}\n{unknown}\n{}\n", lines[0], lines[1..].join("\n"));
    let newer = stream.replacen("\"schema\":\"1.", "\"schema\":\"2.", 1);
    assert_ne!(newer, stream);
    let node_line = lines
        .iter()
        .position(|l| l.contains("\"type\":\"node\""))
        .expect("a node");
    let mut wrong: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    wrong[node_line] =
        wrong[node_line].replacen("\"line_start\":", "\"line_start\":\"one\",\"x\":", 1);
    let wrong_types = wrong.join("\n") + "\n";
    let truncated = lines[..lines.len() - 1].join("\n") + "\n";
    let cut_mid_line = &stream[..stream.len() - 10];

    for name in [
        "tg-classify",
        "tg-plan",
        "tg-enrich",
        "tg-embed",
        "tg-status",
    ] {
        let output = pipe_into(name, repo.path(), newer.as_bytes());
        assert_eq!(
            output.status.code(),
            Some(65),
            "{name}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("line 1") && stderr(&output).contains("schema 2."),
            "{name}: {}",
            stderr(&output)
        );

        let output = pipe_into(name, repo.path(), wrong_types.as_bytes());
        assert_eq!(
            output.status.code(),
            Some(65),
            "{name}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&format!("line {}", node_line + 1)),
            "{name}: {}",
            stderr(&output)
        );

        for (what, input) in [("truncated", truncated.as_str()), ("cut", cut_mid_line)] {
            let output = pipe_into(name, repo.path(), input.as_bytes());
            assert_eq!(
                output.status.code(),
                Some(65),
                "{name} {what}: {}",
                stderr(&output)
            );
        }

        let output = pipe_into(name, repo.path(), with_unknown.as_bytes());
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        if name != "tg-status" {
            let out = String::from_utf8_lossy(&output.stdout);
            assert!(
                out.lines().any(|l| l == unknown),
                "{name} dropped the unknown record"
            );
        }
    }
}

#[test]
fn plain_http_beyond_loopback_is_refused_before_anything_is_sent() {
    let repo = enriched_repo();
    // Nothing listens there, and nothing is tried: the refusal comes before any connection.
    let remote = "http://192.0.2.1:8080/v1";
    let enrich = Command::new(stage("tg-enrich"))
        .args(["--provider", "openai"])
        .current_dir(repo.path())
        .env("TLDRGRAPH_LLM_BASE_URL", remote)
        .env("TLDRGRAPH_LLM_API_KEY", "sk-never-sent")
        .env_remove("TLDRGRAPH_ALLOW_INSECURE_HTTP")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let embed = Command::new(stage("tg-embed"))
        .args(["--embeddings", "openai"])
        .current_dir(repo.path())
        .env("TLDRGRAPH_EMBED_BASE_URL", remote)
        .env("TLDRGRAPH_EMBED_API_KEY", "sk-never-sent")
        .env_remove("TLDRGRAPH_ALLOW_INSECURE_HTTP")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    for (name, output) in [("tg-enrich", enrich), ("tg-embed", embed)] {
        assert_eq!(
            output.status.code(),
            Some(64),
            "{name}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains("--allow-insecure-http") && message.contains("192.0.2.1"),
            "{name}: {message}"
        );
        assert!(!message.contains("sk-never-sent"), "{name}: {message}");
    }
}

/// Every source file the fuzzers found crashing an extractor (fuzz/regressions/), through the
/// real tg-extract: it must finish, with the file in its stream.
#[test]
fn sources_the_fuzzers_found_are_extracted_without_a_crash() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut checked = 0;
    for language in ["python", "c", "rust", "typescript"] {
        let Ok(entries) = fs::read_dir(root.join(language)) else {
            continue;
        };
        for entry in entries.flatten() {
            let repo = tempfile::tempdir().expect("tempdir");
            let name = entry.file_name();
            fs::copy(entry.path(), repo.path().join(&name)).expect("copy");
            let output = run("tg-extract", repo.path(), &["--no-cache", "."]);
            assert!(
                output.status.success(),
                "{}: {}",
                entry.path().display(),
                stderr(&output)
            );
            let stream = String::from_utf8_lossy(&output.stdout);
            assert!(
                stream.contains(&*name.to_string_lossy()),
                "{}",
                entry.path().display()
            );
            assert!(stream
                .lines()
                .last()
                .is_some_and(|l| l.contains("\"type\":\"summary\"")));
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} regression sources");
}
