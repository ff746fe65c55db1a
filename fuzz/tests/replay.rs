//! Every corpus entry and every regression input, through its target, each in a process of
//! its own (`tg-fuzz TARGET --replay FILE`): an abort or a stack overflow fails that input
//! only, and the message names it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
}

fn replay(kind: &str) -> Vec<String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = std::env::temp_dir().join(format!("tg-fuzz-replay-{}", std::process::id()));
    let mut failures = Vec::new();
    for target in tg_fuzz::TARGETS {
        for file in files(&here.join(kind).join(target.name)) {
            let output = Command::new(env!("CARGO_BIN_EXE_tg-fuzz"))
                .arg(target.name)
                .arg("--artifacts")
                .arg(&artifacts)
                .arg("--replay")
                .arg(&file)
                .output()
                .expect("tg-fuzz runs");
            if !output.status.success() {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let why = stderr
                    .lines()
                    .find(|l| l.contains("panicked") || l.contains("memory allocation"))
                    .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
                    .unwrap_or("")
                    .to_string();
                failures.push(format!(
                    "{} {}: {} {why}",
                    target.name,
                    file.display(),
                    output.status
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&artifacts);
    failures
}

#[test]
fn corpus_entries_pass() {
    let failures = replay("corpus");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Fails until the findings in `regressions/` are fixed (see fuzz/README.md).
#[test]
fn regression_inputs_pass() {
    let failures = replay("regressions");
    assert!(failures.is_empty(), "{failures:#?}");
}
