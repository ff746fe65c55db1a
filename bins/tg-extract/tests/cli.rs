//! tg-extract as a command: walking rules, bad input, exit codes, caching and determinism.

mod common;

use common::*;
use predicates::prelude::*;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use tg_integration::patch::apply_patch;
use tg_shared::record::Record;

fn diagnostics(records: &[Record]) -> Vec<(String, String)> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Diagnostic(d) => Some((d.file.clone().unwrap_or_default(), d.code.clone())),
            _ => None,
        })
        .collect()
}

fn node_ids(records: &[Record]) -> Vec<String> {
    nodes(records).into_iter().map(|n| n.id.clone()).collect()
}

#[test]
fn stream_starts_with_header_and_ends_with_summary() {
    let records = records(&extract(&fixture("python"), false));
    assert!(matches!(&records[0], Record::Header(h) if h.schema == "1.0" && h.root == "."));
    assert!(matches!(records.last(), Some(Record::Summary(s)) if s.stage == "tg-extract"));
    assert_eq!(summary_count(&records, "files"), 6);
    assert_eq!(summary_count(&records, "files_seen"), 6);
    assert_eq!(summary_count(&records, "skipped"), 0);
    assert_eq!(
        summary_count(&records, "nodes"),
        nodes(&records).len() as u64
    );
    let calls = edges(&records)
        .iter()
        .filter(|e| e.kind.as_str() == "calls")
        .count() as u64;
    assert_eq!(summary_count(&records, "edges_calls"), calls);
}

#[test]
fn bad_inputs_are_diagnostics_and_the_rest_is_still_extracted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("good.py"), "def ok():\n    return 1\n").unwrap();
    fs::write(root.join("binary.py"), b"def x():\n\0\0\0 pass\n").unwrap();
    fs::write(root.join("latin1.py"), b"# caf\xe9\ndef caf():\n    pass\n").unwrap();
    // Past the default --max-file-size (32 MiB).
    let big = "x = 1\n".repeat(33 * 1024 * 1024 / 6 + 1);
    fs::write(root.join("big.py"), big).unwrap();
    // Minified: one 12 KB line.
    fs::write(
        root.join("min.py"),
        format!("x = [{}]\n", "1,".repeat(6000)),
    )
    .unwrap();
    // Nested across lines: one 10 KB line would be skipped as minified before parsing.
    let deep = format!(
        "y = {}1{}\ndef after_deep():\n    pass\n",
        "(\n".repeat(5000),
        ")".repeat(5000)
    );
    fs::write(root.join("deep.py"), deep).unwrap();
    fs::write(
        root.join("broken.py"),
        "def fine():\n    pass\n\ndef bad(:\n    pass\n\ndef later():\n    pass\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("loop"), root.join("loop")).unwrap_or(());
    fs::create_dir(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(root, root.join("sub/back")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("secret.py"),
        "def secret():\n    pass\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();

    let records = records(&extract(root, false));
    let ids = node_ids(&records);
    for id in [
        "good.py::ok",
        "latin1.py::caf",
        "broken.py::fine",
        "broken.py::later",
    ] {
        assert!(ids.contains(&id.to_string()), "{id} missing from {ids:?}");
    }
    assert!(
        !ids.iter().any(|id| id.contains("secret")),
        "followed a symlink out of the root"
    );
    assert!(
        !ids.iter().any(|id| id.starts_with("sub/back")),
        "followed a symlink loop"
    );
    let diags = diagnostics(&records);
    let has = |file: &str, code: &str| diags.iter().any(|(f, c)| f == file && c == code);
    assert!(has("binary.py", "binary"), "{diags:?}");
    assert!(has("latin1.py", "non_utf8"), "{diags:?}");
    assert!(has("big.py", "too_large"), "{diags:?}");
    assert!(has("min.py", "machine_written"), "{diags:?}");
    assert!(has("broken.py", "syntax_error"), "{diags:?}");
    assert!(has("escape", "symlink_outside_root"), "{diags:?}");
    assert!(diags.iter().any(|(_, c)| c == "symlink_loop"), "{diags:?}");
    // The deeply nested file is parsed; what lies past the depth limit is reported.
    assert!(has("deep.py", "too_deep"), "{diags:?}");
    // binary.py, big.py and min.py were seen and skipped; the symlinks were never files.
    assert_eq!(summary_count(&records, "skipped"), 3);
    assert_eq!(
        summary_count(&records, "files_seen"),
        summary_count(&records, "files") + 3
    );
    assert!(ids.contains(&"deep.py".to_string()));
}

#[test]
fn unreadable_file_is_a_diagnostic() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ok.py"), "def ok():\n    pass\n").unwrap();
    let locked = dir.path().join("locked.py");
    fs::write(&locked, "def hidden():\n    pass\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = fs::File::open(&locked).is_ok(); // root reads everything
    let records = records(&extract(dir.path(), false));
    let ids = node_ids(&records);
    assert!(ids.contains(&"ok.py::ok".to_string()));
    if readable_anyway {
        assert!(ids.contains(&"locked.py::hidden".to_string()));
    } else {
        assert!(diagnostics(&records).contains(&("locked.py".into(), "unreadable".into())));
    }
}

#[test]
fn paths_outside_the_root_or_missing_are_clear_errors() {
    let root = copy_fixture("python");
    let other = tempfile::tempdir().unwrap();
    bin()
        .arg("--root")
        .arg(root.path())
        .arg(other.path())
        .assert()
        .code(64)
        .stdout("")
        .stderr(predicate::str::contains("is outside the repository root"));
    bin()
        .arg("--root")
        .arg(root.path())
        .arg(root.path().join("no/such/dir"))
        .assert()
        .code(66)
        .stderr(predicate::str::contains("does not exist"));
    bin()
        .args(["--max-file-size", "lots"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a size"));
}

#[test]
fn gitignore_exclude_and_store_dirs_are_not_walked() {
    let root = copy_fixture("python");
    fs::write(root.path().join(".gitignore"), "pkg/web.py\n").unwrap();
    fs::create_dir_all(root.path().join(".tldrgraph")).unwrap();
    fs::write(
        root.path().join(".tldrgraph/artifact.py"),
        "def artifact(): pass\n",
    )
    .unwrap();
    fs::create_dir_all(root.path().join(".git")).unwrap();
    fs::write(root.path().join(".git/hook.py"), "def hook(): pass\n").unwrap();
    let output = bin()
        .arg("--root")
        .arg(root.path())
        .args(["--no-cache", "--exclude", "pkg/models.py"])
        .output()
        .unwrap();
    let records = records(&output.stdout);
    let files: Vec<String> = records
        .iter()
        .filter_map(|r| match r {
            Record::File(f) => Some(f.path.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        files,
        vec!["main.py", "pkg/__init__.py", "pkg/api.py", "pkg/util.py"]
    );
}

#[test]
fn only_the_given_paths_are_extracted() {
    let root = copy_fixture("python");
    let output = bin()
        .current_dir(root.path())
        .args(["--root", ".", "--no-cache", "pkg/util.py", "main.py"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let ids = node_ids(&records(&output.stdout));
    assert_eq!(
        ids,
        vec![
            "main.py",
            "main.py::main",
            "pkg/util.py",
            "pkg/util.py::helper",
            "pkg/util.py::date"
        ]
    );
}

#[test]
fn output_is_deterministic_and_incremental_runs_match_clean_runs() {
    let root = copy_fixture("python");
    let clean = extract(root.path(), false);
    assert_eq!(clean, extract(root.path(), false), "two clean runs differ");

    let first = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(first.stdout, clean);
    assert!(String::from_utf8_lossy(&first.stderr).contains("(6 parsed, 0 cached"));
    assert!(root.path().join(".tldrgraph/cache/extract.bin").exists());

    let noop = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(noop.stdout, clean);
    assert!(
        String::from_utf8_lossy(&noop.stderr).contains("0 parsed"),
        "{}",
        String::from_utf8_lossy(&noop.stderr)
    );

    // Touch one file's content: exactly that file is parsed again.
    let util = root.path().join("pkg/util.py");
    let mut text = fs::read_to_string(&util).unwrap();
    text.push_str("\n\ndef extra():\n    return helper()\n");
    fs::write(&util, text).unwrap();
    let incremental = bin().arg("--root").arg(root.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&incremental.stderr);
    assert!(stderr.contains("(1 parsed, 5 cached"), "{stderr}");
    let clean_after = extract(root.path(), false);
    assert_eq!(
        incremental.stdout, clean_after,
        "incremental output differs from a clean run"
    );
    assert!(node_ids(&records(&clean_after)).contains(&"pkg/util.py::extra".to_string()));

    // A deleted file disappears from the graph and from the cache.
    fs::remove_file(root.path().join("pkg/web.py")).unwrap();
    let after_delete = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(after_delete.stdout, extract(root.path(), false));
    assert!(!String::from_utf8_lossy(&after_delete.stdout).contains("pkg/web.py::App"));
}

#[test]
fn a_settled_tree_is_not_walked_again_until_a_directory_moves() {
    let root = copy_fixture("python");
    fs::create_dir_all(root.path().join(".tldrgraph")).unwrap();
    // Past the racy window: the walk's directories may be trusted from now on.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let first = extract(root.path(), true);
    let snapshot = root.path().join(".tldrgraph/cache/walk.bin");
    assert!(snapshot.exists(), "a settled full walk is kept");
    let kept = fs::read(&snapshot).unwrap();
    // The next run starts from the snapshot (and leaves it as it was): the same bytes.
    assert_eq!(extract(root.path(), true), first);
    assert_eq!(fs::read(&snapshot).unwrap(), kept);

    // A file added in a directory of the snapshot is found: the directory moved.
    fs::write(
        root.path().join("pkg/added.py"),
        "def added():\n    return 1\n",
    )
    .unwrap();
    let after = extract(root.path(), true);
    assert_eq!(after, extract(root.path(), false), "the clean run's bytes");
    assert!(node_ids(&records(&after)).contains(&"pkg/added.py::added".to_string()));
    assert!(
        !snapshot.exists(),
        "a walk over a directory just changed is not kept"
    );
}

/// The previous output is kept as zstd frames between its fingerprint line and its trailer,
/// and replaces the uncompressed `extract.out` an older build kept.
#[test]
fn the_previous_output_is_kept_compressed_and_replaces_the_old_form() {
    use std::io::Read;
    let root = copy_fixture("python");
    let clean = extract(root.path(), false);
    let cache_dir = root.path().join(".tldrgraph/cache");
    fs::create_dir_all(&cache_dir).unwrap();
    fs::write(cache_dir.join("extract.out"), &clean).unwrap();
    fs::write(cache_dir.join("extract.out.verified"), b"[]").unwrap();
    let first = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(first.stdout, clean);
    assert!(!cache_dir.join("extract.out").exists());
    assert!(!cache_dir.join("extract.out.verified").exists());

    let kept = fs::read(cache_dir.join("extract.out.zst")).unwrap();
    let header_end = kept.iter().position(|&b| b == b'\n').unwrap() + 1;
    // The trailer: `end <fingerprint> <hash>\n`; the frames before it end in no newline.
    let mut trailer = b"end ".to_vec();
    trailer.extend_from_slice(&kept[..header_end - 1]);
    trailer.push(b' ');
    let trailer_start = kept
        .windows(trailer.len())
        .rposition(|window| window == trailer)
        .unwrap();
    let mut stream = Vec::new();
    tg_shared::frames::reader(&kept[header_end..trailer_start])
        .unwrap()
        .read_to_end(&mut stream)
        .unwrap();
    assert_eq!(stream, clean);
    assert!(kept.len() < clean.len(), "{} bytes kept", kept.len());

    let noop = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(noop.stdout, clean);
    assert!(String::from_utf8_lossy(&noop.stderr).contains("reused the previous output"));
}

#[test]
fn a_damaged_cache_is_ignored_and_rebuilt() {
    let root = copy_fixture("c");
    let clean = extract(root.path(), false);
    let cache_dir = root.path().join(".tldrgraph/cache");
    fs::create_dir_all(&cache_dir).unwrap();
    fs::write(cache_dir.join("extract.bin"), b"garbage").unwrap();
    fs::write(cache_dir.join("extract.out.zst"), b"garbage\nmore").unwrap();
    let output = bin().arg("--root").arg(root.path()).output().unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout, clean);
    // And the rebuilt cache is used next time.
    let again = bin().arg("--root").arg(root.path()).output().unwrap();
    assert_eq!(again.stdout, clean);
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 parsed"));
}

#[test]
fn output_file_is_written_only_when_it_changes() {
    let root = copy_fixture("rust");
    let out = root.path().join("graph.ndjson");
    let extract_to_file = || {
        bin()
            .arg("--root")
            .arg(root.path())
            .arg("--output")
            .arg(&out)
            .arg(root.path().join("src"))
            .assert()
            .success()
            .stdout("");
    };
    extract_to_file();
    extract_to_file();
    let modified = fs::metadata(&out).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    extract_to_file();
    assert_eq!(fs::metadata(&out).unwrap().modified().unwrap(), modified);
    assert_eq!(fs::read(&out).unwrap(), {
        let mut cmd = bin();
        cmd.arg("--root")
            .arg(root.path())
            .arg("--no-cache")
            .arg(root.path().join("src"));
        cmd.output().unwrap().stdout
    });
}

/// A no-op run with `-o FILE` leaves alone the file it wrote, once that file has settled and
/// while nobody has touched it; a file changed since gets the stream again.
#[test]
fn a_no_op_leaves_its_settled_output_file_alone_until_it_is_touched() {
    let root = copy_fixture("rust");
    fs::create_dir_all(root.path().join(".tldrgraph")).unwrap();
    let out = root.path().join("graph.ndjson");
    // Whether the run left the file alone.
    let extract_to = |out: &std::path::Path| {
        let output = bin()
            .arg("--root")
            .arg(root.path())
            .arg("--output")
            .arg(out)
            .arg(root.path().join("src"))
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8_lossy(&output.stderr).contains("already holds this stream")
    };
    let extract_to_file = || extract_to(&out);
    assert!(!extract_to_file(), "written");
    let stream = fs::read(&out).unwrap();
    // Past the racy window: the next no-op remembers the file, the one after trusts it.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    assert!(!extract_to_file(), "compared, and remembered");
    assert!(extract_to_file(), "left alone");
    assert_eq!(fs::read(&out).unwrap(), stream);
    // Touched: compared again; damaged: the stream again.
    fs::write(&out, b"not the stream\n").unwrap();
    assert!(!extract_to_file(), "a changed file is written");
    assert_eq!(fs::read(&out).unwrap(), stream);
    // Another file is another target.
    let other = root.path().join("other.ndjson");
    fs::copy(&out, &other).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    assert!(!extract_to(&other), "another target is compared");
    assert_eq!(fs::read(&other).unwrap(), stream);
}

#[test]
fn two_runs_at_once_both_succeed_with_the_same_output() {
    let root = copy_fixture("python");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_tg-extract"))
            .arg("--root")
            .arg(root.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, extract(root.path(), false));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // Far more output than a pipe buffers, so the writer does meet the closed pipe.
    let root = tempfile::tempdir().unwrap();
    for i in 0..300 {
        let body: String = (0..10)
            .map(|j| format!("def f{j}():\n    return f{}()\n\n", (j + 1) % 10))
            .collect();
        fs::write(root.path().join(format!("m{i}.py")), body).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tg-extract"))
        .arg("--root")
        .arg(root.path())
        .arg("--no-cache")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A repository of several languages, with calls and imports across files.
fn mixed_repository() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temporary directory");
    for name in ["python", "c", "rust"] {
        copy_dir(&fixture(name), &root.path().join(name));
    }
    root
}

fn run_shards(
    root: &std::path::Path,
    facts: &std::path::Path,
    count: u64,
) -> Vec<std::path::PathBuf> {
    (0..count)
        .map(|k| {
            let out = facts.join(format!("{k}-of-{count}.facts"));
            let run = bin()
                .arg("--root")
                .arg(root)
                .args(["--shard", &format!("{k}/{count}"), "--facts-out"])
                .arg(&out)
                .output()
                .expect("run a shard");
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            assert!(run.stdout.is_empty(), "a shard writes facts, not a stream");
            out
        })
        .collect()
}

fn merge(root: &std::path::Path, facts: &[std::path::PathBuf]) -> (Vec<u8>, String) {
    let run = bin()
        .arg("--root")
        .arg(root)
        .arg("--no-cache")
        .arg("--merge")
        .args(facts)
        .output()
        .expect("run the merge");
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    (run.stdout, stderr)
}

#[test]
fn shards_merged_give_the_bytes_of_a_single_run_and_parse_nothing_again() {
    let root = mixed_repository();
    let single = extract(root.path(), false);
    let files = records(&single)
        .iter()
        .filter(|r| matches!(r, Record::File(_)))
        .count();
    assert!(files >= 15, "{files} files");
    let facts = tempfile::tempdir().unwrap();
    for count in [1, 4] {
        let written = run_shards(root.path(), facts.path(), count);
        assert!(
            !root.path().join(".tldrgraph").exists(),
            "shards leave the store alone"
        );
        let (merged, stderr) = merge(root.path(), &written);
        assert_eq!(
            merged, single,
            "N={count}: merged stream differs from a single run"
        );
        assert!(stderr.contains("(0 parsed"), "N={count}: {stderr}");
    }
    // A file changed after the shards ran: only it is parsed, and the stream is today's.
    let written = run_shards(root.path(), facts.path(), 4);
    let util = root.path().join("python/pkg/util.py");
    let mut text = fs::read_to_string(&util).unwrap();
    text.push_str("\n\ndef after_the_shards():\n    return helper()\n");
    fs::write(&util, text).unwrap();
    let (merged, stderr) = merge(root.path(), &written);
    assert!(stderr.contains("(1 parsed"), "{stderr}");
    assert_eq!(merged, extract(root.path(), false));
}

#[test]
fn bad_shard_arguments_and_facts_files_are_clear_errors() {
    let root = mixed_repository();
    let facts = tempfile::tempdir().unwrap();
    let out = facts.path().join("f.facts");
    for args in [
        vec!["--shard", "4/4", "--facts-out"],
        vec!["--shard", "1/0", "--facts-out"],
        vec!["--shard", "0/2"],
    ] {
        let mut cmd = bin();
        cmd.arg("--root").arg(root.path()).args(&args);
        if args.last() == Some(&"--facts-out") {
            cmd.arg(&out);
        }
        cmd.assert().code(2);
    }
    bin()
        .arg("--root")
        .arg(root.path())
        .arg("--merge")
        .arg(facts.path().join("missing.facts"))
        .assert()
        .code(66)
        .stderr(predicate::str::contains(
            "missing.facts: no such facts file",
        ));
    fs::write(&out, b"not facts\n").unwrap();
    bin()
        .arg("--root")
        .arg(root.path())
        .arg("--merge")
        .arg(&out)
        .assert()
        .code(65)
        .stderr(predicate::str::contains("f.facts"));
}

/// Edges are sorted by their ids as strings, across files: `a.c.h`'s edges come between
/// `a.c`'s own and those of its function `a.c::x` (`.` sorts before `:`), and `a-b.c` and
/// `a/b.c` fall either side of `a.c` (`-` < `.` < `/`).
#[test]
fn edges_are_in_id_order_when_file_ids_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("a")).unwrap();
    fs::write(root.join("a.c.h"), "int y(void) { return 1; }\n").unwrap();
    fs::write(
        root.join("a.c"),
        "#include \"a.c.h\"\nint x(void) { return y(); }\n",
    )
    .unwrap();
    fs::write(
        root.join("a-b.c"),
        "#include \"a.c.h\"\nint z(void) { return y(); }\n",
    )
    .unwrap();
    fs::write(
        root.join("a/b.c"),
        "#include \"../a.c.h\"\nint w(void) { return y(); }\n",
    )
    .unwrap();
    let records = records(&extract(root, false));
    let got: Vec<(String, &str, String)> = edges(&records)
        .iter()
        .map(|e| (e.src.clone(), e.kind.as_str(), e.dst.clone()))
        .collect();
    let expected = [
        ("a-b.c", "contains", "a-b.c::z"),
        ("a-b.c", "includes", "a.c.h"),
        ("a-b.c::z", "calls", "a.c.h::y"),
        ("a.c", "contains", "a.c::x"),
        ("a.c", "includes", "a.c.h"),
        ("a.c.h", "contains", "a.c.h::y"),
        ("a.c::x", "calls", "a.c.h::y"),
        ("a/b.c", "contains", "a/b.c::w"),
        ("a/b.c", "includes", "a.c.h"),
        ("a/b.c::w", "calls", "a.c.h::y"),
    ];
    let expected: Vec<(String, &str, String)> = expected
        .iter()
        .map(|(s, k, d)| (s.to_string(), *k, d.to_string()))
        .collect();
    assert_eq!(got, expected);
}

/// Rust calls through a path rooted at `crate`, `self` or `super` reach the function it names.
#[test]
fn rust_calls_through_crate_self_and_super_paths_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"qt\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "pub mod a;\npub fn f() {\n    crate::a::g();\n    self::h();\n}\npub fn h() {}\n",
    )
    .unwrap();
    fs::write(root.join("src/a.rs"), "pub fn g() {\n    super::h();\n}\n").unwrap();
    let records = records(&extract(root, false));
    let calls: Vec<(String, String, u32)> = edges(&records)
        .iter()
        .filter(|e| e.kind.as_str() == "calls")
        .map(|e| (e.src.clone(), e.dst.clone(), e.line))
        .collect();
    let expected = [
        ("src/a.rs::g", "src/lib.rs::h", 2),
        ("src/lib.rs::f", "src/a.rs::g", 3),
        ("src/lib.rs::f", "src/lib.rs::h", 4),
    ];
    let expected: Vec<(String, String, u32)> = expected
        .iter()
        .map(|(s, d, l)| (s.to_string(), d.to_string(), *l))
        .collect();
    assert_eq!(calls, expected);
}

/// A file a `#[cfg(test)] mod x;` declares is test code wherever it lies, and so are the
/// submodules it declares; code outside tests never calls into it.
#[test]
fn files_declared_as_test_modules_are_test_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/tests")).unwrap();
    fs::write(root.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "mod engine;\n#[cfg(test)]\nmod tests;\n#[cfg(all(test, feature = \"slow\"))]\nmod slow;\n\
         pub fn run() { engine::start(); setup(); }\n",
    )
    .unwrap();
    fs::write(
        root.join("src/engine.rs"),
        "pub fn start() {}\nfn setup() {}\n",
    )
    .unwrap();
    fs::write(
        root.join("src/tests.rs"),
        "mod support;\npub fn setup() {}\nfn runs() { super::run(); }\n",
    )
    .unwrap();
    fs::write(root.join("src/tests/support.rs"), "pub fn fake() {}\n").unwrap();
    fs::write(root.join("src/slow.rs"), "fn soak() {}\n").unwrap();
    let records = records(&extract(root, false));
    let mut roles: Vec<(String, String)> = nodes(&records)
        .iter()
        .filter(|n| n.kind.as_str() == "function")
        .map(|n| (n.id.clone(), format!("{:?}", n.role)))
        .collect();
    roles.sort();
    assert_eq!(
        roles,
        [
            ("src/engine.rs::setup", "Product"),
            ("src/engine.rs::start", "Product"),
            ("src/lib.rs::run", "Product"),
            ("src/slow.rs::soak", "Test"),
            ("src/tests.rs::runs", "Test"),
            ("src/tests.rs::setup", "Test"),
            ("src/tests/support.rs::fake", "Test"),
        ]
        .map(|(id, role)| (id.to_string(), role.to_string()))
    );
    let calls: std::collections::BTreeSet<(String, String)> = edges(&records)
        .iter()
        .filter(|e| e.kind.as_str() == "calls")
        .map(|e| (e.src.clone(), e.dst.clone()))
        .collect();
    // `setup()` in lib.rs is not the test module's `setup`; the test still reaches `run`.
    assert!(!calls.contains(&("src/lib.rs::run".into(), "src/tests.rs::setup".into())));
    assert!(calls.contains(&("src/tests.rs::runs".into(), "src/lib.rs::run".into())));
    assert!(calls.contains(&("src/lib.rs::run".into(), "src/engine.rs::start".into())));
}

/// Replaces the only `from` in the file at `path` (under `root`) with `to`.
fn edit(root: &Path, path: &str, from: &str, to: &str) {
    let path = root.join(path);
    let text = fs::read_to_string(&path).expect("read the file to edit");
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} in {}",
        path.display()
    );
    fs::write(&path, text.replace(from, to)).expect("write the edit");
}

/// A fixture, two edits inside bodies (file, text, replacement), a function to append to a
/// file, and an import to put at that file's top.
type SpliceCase<'a> = (
    &'a str,
    [(&'a str, &'a str, &'a str); 2],
    (&'a str, &'a str),
    &'a str,
);

/// Runs tg-extract with its cache; returns stdout and whether it spliced the previous output.
fn extract_incrementally(root: &Path) -> (Vec<u8>, bool) {
    let output = (bin().arg("--root").arg(root).arg(root).output()).expect("run tg-extract");
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.stdout, stderr.contains("spliced their records"))
}

/// An edit inside function bodies leaves every other file's edges as they were: only the
/// edited file is resolved, its records are spliced into the previous output, and the bytes
/// are a clean run's. So is a function appended at a file's end (the files naming it are
/// resolved too). An import added is not spliced, and neither is a run that lost the
/// per-file counters the summary totals.
#[test]
fn body_edits_are_spliced_into_the_previous_output_with_a_clean_run_s_bytes() {
    let cases: [SpliceCase; 3] = [
        (
            "python",
            [
                (
                    "pkg/api.py",
                    "    util.helper()\n",
                    "    util.helper()\n    get(url)\n",
                ),
                (
                    "main.py",
                    "def main():\n",
                    "# a comment\ndef main():\n    u.helper()\n",
                ),
            ],
            ("pkg/util.py", "\ndef spliced_never():\n    return 1\n"),
            "import os\n",
        ),
        (
            "rust",
            [
                (
                    "src/store.rs",
                    "        store.touch();\n",
                    "        store.touch();\n        Self::validate(&store);\n",
                ),
                (
                    "src/store.rs",
                    "        self.flush_all();\n",
                    "        self.flush_all();\n        self.flush_all();\n",
                ),
            ],
            ("src/util.rs", "\npub fn spliced_never() {}\n"),
            "use std::fmt;\n",
        ),
        (
            "c",
            [
                (
                    "src/main.c",
                    "    return twice(",
                    "    twice(3);\n    return twice(",
                ),
                ("src/util.c", "#include", "/* a comment */\n#include"),
            ],
            ("src/util.c", "\nint spliced_never(void) { return 1; }\n"),
            "#include <stdio.h>\n",
        ),
    ];
    for (fixture, body_edits, (added_to, added), new_import) in cases {
        let root = copy_fixture(fixture);
        let root = root.path();
        extract_incrementally(root);
        for (path, from, to) in body_edits {
            edit(root, path, from, to);
            let (stream, spliced) = extract_incrementally(root);
            assert!(
                spliced,
                "{fixture}: an edit of {path} inside bodies is spliced"
            );
            assert_eq!(stream, extract(root, false), "{fixture}: {path}");
        }
        // A function appended at the end: spliced, with the files that name it resolved too.
        let before = fs::read_to_string(root.join(added_to)).expect("read");
        fs::write(root.join(added_to), format!("{before}{added}")).expect("write");
        let (stream, spliced) = extract_incrementally(root);
        assert!(spliced, "{fixture}: a function appended at the end");
        assert_eq!(stream, extract(root, false), "{fixture}: {added_to}");
        assert!(String::from_utf8_lossy(&stream).contains("::spliced_never\""));
        // An import changes what the file's names resolve to: not spliced.
        fs::write(root.join(added_to), format!("{new_import}{before}{added}")).expect("write");
        let (stream, spliced) = extract_incrementally(root);
        assert!(!spliced, "{fixture}: an import added");
        assert_eq!(stream, extract(root, false), "{fixture}: {added_to}");

        let (path, from, to) = body_edits[0];
        edit(root, path, to, from);
        fs::remove_file(root.join(".tldrgraph/cache/resolve.stats")).unwrap();
        let (stream, spliced) = extract_incrementally(root);
        assert!(
            !spliced,
            "{fixture}: without the counters the summary needs"
        );
        assert_eq!(stream, extract(root, false), "{fixture}: {path} undone");
    }
}

/// Runs `tg-extract --patch`; returns stdout and the header's `patch` (base, result), if any.
fn extract_patch(root: &Path) -> (Vec<u8>, Option<(String, String)>) {
    let output = (bin()
        .args(["--patch", "--root"])
        .arg(root)
        .arg(root)
        .output())
    .expect("run tg-extract --patch");
    assert!(output.status.success());
    let first = output.stdout.split(|&b| b == b'\n').next().unwrap_or(b"");
    let header: serde_json::Value = serde_json::from_slice(first).expect("a header");
    let ends = header.get("patch").map(|patch| {
        let end = |key: &str| patch[key].as_str().expect("a fingerprint").to_string();
        (end("base"), end("result"))
    });
    (output.stdout, ends)
}

/// `--patch` after body edits gives what changed: applied to the previous stream, it gives a
/// clean run's bytes; a second run gives an empty patch from that stream to itself; a
/// function appended gives a patch from there, and an import added the whole stream.
#[test]
fn a_patch_applied_to_the_previous_stream_gives_a_clean_run_s_bytes() {
    let cases = [
        (
            "python",
            "pkg/api.py",
            "    util.helper()\n",
            "    util.helper()\n    get(url)\n",
            "pkg/util.py",
            "\ndef patched_never():\n    return 1\n",
            "import os\n",
        ),
        (
            "rust",
            "src/store.rs",
            "        store.touch();\n",
            "        store.touch();\n        Self::validate(&store);\n",
            "src/util.rs",
            "\npub fn patched_never() {}\n",
            "use std::fmt;\n",
        ),
        (
            "c",
            "src/main.c",
            "    return twice(",
            "    twice(3);\n    return twice(",
            "src/util.c",
            "\nint patched_never(void) { return 1; }\n",
            "#include <stdio.h>\n",
        ),
    ];
    for (fixture, path, from, to, added_to, added, new_import) in cases {
        let root = copy_fixture(fixture);
        let root = root.path();
        let (before, _) = extract_incrementally(root);
        edit(root, path, from, to);
        let (patch, ends) = extract_patch(root);
        let (base, result) = ends.unwrap_or_else(|| panic!("{fixture}: a body edit gives a patch"));
        assert_ne!(base, result);
        let clean = extract(root, false);
        assert_eq!(apply_patch(&before, &patch), clean, "{fixture}: {path}");
        // Only the edited file's records: its old and new `file` lines, no other file's.
        let patch_text = String::from_utf8_lossy(&patch).into_owned();
        let files: Vec<&str> = (patch_text.lines())
            .filter(|line| line.starts_with("{\"type\":\"file\""))
            .collect();
        assert_eq!(files.len(), 2, "{fixture}: {files:?}");
        let edited = format!("{{\"type\":\"file\",\"path\":\"{path}\"");
        assert!(files.iter().all(|line| line.starts_with(&edited)));

        let (empty, ends) = extract_patch(root);
        assert_eq!(
            ends,
            Some((result.clone(), result.clone())),
            "{fixture}: nothing changed"
        );
        assert_eq!(
            apply_patch(&clean, &empty),
            clean,
            "{fixture}: an empty patch"
        );

        // A function appended: a patch too; an import added: the whole stream.
        let text = fs::read_to_string(root.join(added_to)).expect("read");
        fs::write(root.join(added_to), format!("{text}{added}")).expect("write");
        let (patch, ends) = extract_patch(root);
        assert_eq!(
            ends.map(|(base, _)| base),
            Some(result),
            "{fixture}: from the last"
        );
        let appended = extract(root, false);
        assert_eq!(
            apply_patch(&clean, &patch),
            appended,
            "{fixture}: {added_to}"
        );
        fs::write(root.join(added_to), format!("{new_import}{text}{added}")).expect("write");
        let (whole, ends) = extract_patch(root);
        assert_eq!(
            ends, None,
            "{fixture}: an import changes what others resolve"
        );
        assert_eq!(whole, extract(root, false), "{fixture}: {added_to}");
    }
}

/// A function appended at the end of a file that another file already calls: the splice
/// resolves that file again too, so its call reaches the new function, and removing the
/// function again drops the edge; both are a clean run's bytes.
#[test]
fn a_function_appended_where_another_file_calls_it_is_spliced_with_the_caller_resolved() {
    let cases = [
        (
            "python",
            ("main.py", "u.helper()\n", "u.helper()\nu.spliced_late()\n"),
            ("pkg/util.py", "\n\ndef spliced_late():\n    return 1\n"),
            ("main.py", "pkg/util.py::spliced_late"),
        ),
        (
            "c",
            (
                "src/main.c",
                "    return twice(",
                "    spliced_late();\n    return twice(",
            ),
            ("src/util.c", "\nint spliced_late(void) { return 1; }\n"),
            ("src/main.c::main", "src/util.c::spliced_late"),
        ),
    ];
    for (fixture, (caller, from, to), (callee, appended), (src, dst)) in cases {
        let root = copy_fixture(fixture);
        let root = root.path();
        edit(root, caller, from, to);
        extract_incrementally(root);
        let edge = format!("\"src\":\"{src}\",\"dst\":\"{dst}\"");
        let before = fs::read_to_string(root.join(callee)).expect("read");
        fs::write(root.join(callee), format!("{before}{appended}")).expect("write");
        let (stream, spliced) = extract_incrementally(root);
        assert!(spliced, "{fixture}: appended to {callee}");
        assert_eq!(stream, extract(root, false), "{fixture}: appended");
        assert!(
            String::from_utf8_lossy(&stream).contains(&edge),
            "{fixture}: {edge}"
        );
        fs::write(root.join(callee), before).expect("write");
        let (stream, spliced) = extract_incrementally(root);
        assert!(spliced, "{fixture}: removed from {callee}");
        assert_eq!(stream, extract(root, false), "{fixture}: removed");
        assert!(
            !String::from_utf8_lossy(&stream).contains(&edge),
            "{fixture}: {edge}"
        );
    }
}

/// While few files change, the cache is kept as a delta over its base: the base is not
/// written again, the delta's entries are used (nothing is parsed twice), and a damaged
/// delta only costs parsing its files again.
#[test]
fn a_few_changed_files_are_cached_as_a_delta_over_the_base() {
    let root = copy_fixture("python");
    let root = root.path();
    for n in 0..70 {
        let module =
            format!("from pkg.util import helper\n\n\ndef gen_{n}():\n    return helper()\n");
        fs::write(root.join(format!("pkg/gen_{n:02}.py")), module).expect("write a module");
    }
    let cache = root.join(".tldrgraph/cache");
    extract_incrementally(root);
    let base = fs::read(cache.join("extract.bin")).expect("the base");
    assert!(!cache.join("extract.delta").exists());

    edit(
        root,
        "pkg/gen_03.py",
        "    return helper()\n",
        "    helper()\n    return helper()\n",
    );
    edit(
        root,
        "pkg/gen_41.py",
        "    return helper()\n",
        "    return gen_41()\n",
    );
    let (stream, _) = extract_incrementally(root);
    assert_eq!(stream, extract(root, false));
    assert_eq!(
        fs::read(cache.join("extract.bin")).expect("the base"),
        base,
        "not rewritten"
    );
    let delta = fs::read(cache.join("extract.delta")).expect("a delta");
    assert!(delta.len() * 10 < base.len(), "{} bytes", delta.len());

    // Without the previous output, the cache alone is read: base and delta, nothing parsed.
    let run_without_output = || {
        fs::remove_file(cache.join("extract.out.zst")).expect("remove the output cache");
        let output = bin()
            .arg("--root")
            .arg(root)
            .arg(root)
            .output()
            .expect("run");
        assert!(output.status.success());
        (
            output.stdout,
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (stream, stderr) = run_without_output();
    assert_eq!(stream, extract(root, false));
    assert!(stderr.contains("(0 parsed, 76 cached"), "{stderr}");

    let mut damaged = delta.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    fs::write(cache.join("extract.delta"), damaged).expect("damage the delta");
    let (stream, stderr) = run_without_output();
    assert_eq!(stream, extract(root, false));
    assert!(stderr.contains("(2 parsed, 74 cached"), "{stderr}");
}
