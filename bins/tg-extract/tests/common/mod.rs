//! Helpers for running the real tg-extract binary and reading its stream back through the
//! same record types it writes.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tg_shared::ndjson::RecordReader;
use tg_shared::record::{Edge, Node, Record};

pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_tg-extract"))
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Copies a fixture into a fresh temporary directory (so caches never touch the tree).
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(name), dir.path());
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Runs tg-extract on `root` (no cache unless `cache`), asserting success; returns stdout.
pub fn extract(root: &Path, cache: bool) -> Vec<u8> {
    let mut cmd = bin();
    cmd.arg("--root").arg(root).arg(root);
    if !cache {
        cmd.arg("--no-cache");
    }
    let output = cmd.output().expect("run tg-extract");
    assert!(
        output.status.success(),
        "tg-extract failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

pub fn records(stream: &[u8]) -> Vec<Record> {
    RecordReader::new(stream)
        .map(|item| item.expect("valid NDJSON line"))
        .filter_map(|item| item.record)
        .collect()
}

pub fn nodes(records: &[Record]) -> Vec<&Node> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Node(n) => Some(n),
            _ => None,
        })
        .collect()
}

pub fn edges(records: &[Record]) -> Vec<&Edge> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Edge(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// `(id, kind, line_start, line_end)` of every node.
pub fn node_set(records: &[Record]) -> BTreeSet<(String, String, u32, u32)> {
    nodes(records)
        .into_iter()
        .map(|n| {
            (
                n.id.clone(),
                n.kind.as_str().to_string(),
                n.line_start,
                n.line_end,
            )
        })
        .collect()
}

/// `"kind src -> dst (resolution)"` of every edge that is not `contains`.
pub fn relation_set(records: &[Record]) -> BTreeSet<String> {
    edges(records)
        .into_iter()
        .filter(|e| e.kind.as_str() != "contains")
        .map(|e| {
            let resolution = e
                .resolution
                .map(|r| serde_json::to_value(r).expect("serialises"))
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            format!("{} {} -> {} ({resolution})", e.kind.as_str(), e.src, e.dst)
        })
        .collect()
}

pub fn expect_nodes(expected: &[(&str, &str, u32, u32)]) -> BTreeSet<(String, String, u32, u32)> {
    expected
        .iter()
        .map(|(id, kind, a, b)| (id.to_string(), kind.to_string(), *a, *b))
        .collect()
}

pub fn expect_relations(expected: &[&str]) -> BTreeSet<String> {
    expected.iter().map(|s| s.to_string()).collect()
}

pub fn summary_count(records: &[Record], name: &str) -> u64 {
    records
        .iter()
        .find_map(|r| match r {
            Record::Summary(s) => s.counts.get(name).and_then(|v| v.as_u64()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("summary has no {name}"))
}
