//! Stages connected by real pipes, as a shell user runs them. The binaries come from the shared
//! target directory (`cargo build --workspace` first; `make test` does).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use tg_integration::{fixture, stage};

#[test]
fn extract_piped_into_a_reader_of_the_stream() {
    let root = fixture("python");
    let mut extract = Command::new(stage("tg-extract"))
        .arg("--root")
        .arg(&root)
        .arg("--no-cache")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tg-extract");
    let show = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines/show-graph.py"))
        .stdin(extract.stdout.take().expect("piped stdout"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn show-graph.py");
    let output = show.wait_with_output().expect("show-graph output");
    assert!(extract.wait().expect("tg-extract exit").success());
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        text.contains("pkg/api.py::Session.send --calls/self--> pkg/models.py::Base.save"),
        "{text}"
    );
    assert!(
        text.contains("method    pkg/api.py::Session.fetch  (lines 53-54)"),
        "{text}"
    );
    assert!(text.contains("\"nodes\": 32"), "{text}");
}

#[test]
fn the_stream_reads_back_through_the_shared_reader_from_a_pipe() {
    let mut child = Command::new(stage("tg-extract"))
        .arg("--root")
        .arg(fixture("c"))
        .arg("--no-cache")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tg-extract");
    let mut bytes = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut bytes)
        .expect("read pipe");
    assert!(child.wait().expect("exit").success());
    let items: Vec<_> = tg_shared::ndjson::RecordReader::new(&bytes[..])
        .collect::<Result<_, _>>()
        .expect("every line is a record");
    let summary = items.last().and_then(|i| i.record.clone());
    assert!(
        matches!(summary, Some(tg_shared::record::Record::Summary(s)) if s.stage == "tg-extract" && s.counts["nodes"] == 34)
    );
}

/// Runs `tg-extract | tg-classify | bash recipe args` on a copy of the python fixture with its
/// layers config; returns the recipe's stdout with runs of spaces or tabs collapsed to one tab.
fn recipe(name: &str, args: &[&str]) -> String {
    let repo = tg_integration::copy_fixture("python");
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    std::fs::copy(
        fixture("layers/python.layers.config.yaml"),
        dir.join(".tldrgraph/layers.config.yaml"),
    )
    .expect("config");
    let script = format!(
        "set -euo pipefail; '{}' . | '{}' | bash '{}' {}",
        stage("tg-extract").display(),
        stage("tg-classify").display(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../pipelines/recipes")
            .join(name)
            .display(),
        args.join(" ")
    );
    let output = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .output()
        .expect("bash");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join("\t"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn recipes_answer_from_a_piped_stream() {
    let violations = recipe("violations.sh", &[]);
    assert_eq!(
        violations.lines().next(),
        Some("from\tto\tkind\tsrc\tdst\tline")
    );
    assert!(violations.contains("web\tshared\tcalls\tmain.py\tpkg/util.py::helper\t6"));
    assert!(violations.contains("api\tweb\timports\tpkg/api.py\tpkg/web.py\t7"));
    assert_eq!(violations.lines().count(), 8, "{violations}");

    let callers = recipe("callers.sh", &["helper"]);
    assert_eq!(
        callers,
        "pkg/util.py::helper\tmain.py\timport\t6\npkg/util.py::helper\tpkg/api.py::request\timport\t16"
    );

    let bottlenecks = recipe("bottlenecks.sh", &["pkg/", "2"]);
    assert_eq!(
        bottlenecks,
        "fan_in\tcross_layer\tkind\tsymbol\n3\t1\tfunction\tpkg/api.py::get\n3\t2\tmethod\tpkg/models.py::Base.save"
    );
}

/// A stage reading a stream that lasts more than a second says how far it is each second in
/// which records came (and nothing with `--quiet`): the records are written in two parts, three
/// seconds apart, so the count at the pause is the first part's.
#[test]
fn a_stream_stage_reports_the_records_read_while_its_input_lasts() {
    use std::io::Write;
    let repo = tg_integration::layered_fixture("python");
    let stream = Command::new(stage("tg-extract"))
        .arg("--root")
        .arg(repo.path())
        .arg("--no-cache")
        .output()
        .expect("tg-extract");
    assert!(stream.status.success());
    let lines: Vec<&[u8]> = stream.stdout.split_inclusive(|&b| b == b'\n').collect();
    let first = lines.len() / 2;
    for quiet in [false, true] {
        let mut classify = Command::new(stage("tg-classify"));
        classify.current_dir(repo.path());
        if quiet {
            classify.arg("--quiet");
        }
        let mut child = classify
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tg-classify");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(&lines[..first].concat())
            .expect("first part");
        stdin.flush().expect("flush");
        // Long enough for a line to fall in the pause even if the stage starts slowly.
        std::thread::sleep(std::time::Duration::from_millis(3_000));
        stdin
            .write_all(&lines[first..].concat())
            .expect("second part");
        drop(stdin);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        assert!(child.wait().expect("exit").success(), "{stderr}");
        let meter = format!("tg-classify: read {first} records (");
        if quiet {
            assert!(!stderr.contains("records ("), "{stderr}");
        } else {
            assert!(stderr.contains(&meter), "no `{meter}` in:\n{stderr}");
        }
    }
}
