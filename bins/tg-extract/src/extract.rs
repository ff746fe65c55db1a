//! Reading, checking and parsing each file, in parallel, with the cache in front.
//!
//! Two passes: [`probe_all`] reads and hashes every file (keeping no source in memory), which
//! is all a no-op run needs; [`extract_all`] then parses only the files whose (path, hash) the
//! cache does not know, reading them again one at a time.

use crate::cache::{CacheEntry, ExtractCache};
use rayon::prelude::*;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use tg_lang::walk::SourceFile;
use tg_lang::words::FileWords;
use tg_lang::FileFacts;
use tg_shared::freshness::{file_stamp, FileStamp, Verified};
use tg_shared::hash::{content_hash, Hasher};
use tg_shared::record::{Diagnostic, Level};

/// Bytes examined for NUL when deciding that a file is binary (as git does).
const BINARY_SNIFF: usize = 8000;

/// What reading a file found.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    TooLarge(u64),
    Unreadable(String),
    Binary,
    Text { hash: String },
}

/// One file after extraction: its facts, or why it was skipped.
pub struct Extracted {
    pub rel: String,
    pub lang: &'static dyn tg_lang::Language,
    pub outcome: Outcome,
    pub diagnostics: Vec<Diagnostic>,
    /// The file's content differed between the probe and the parse (it was being written):
    /// the run's fingerprint then describes other bytes, so its output must not be reused.
    pub changed_while_read: bool,
    /// Parsed over the cache's entry for the file's older content: what the previous run
    /// saw of it ([`Replaced`]).
    pub replaced: Option<Replaced>,
}

/// A file parsed again over the entry its older content left in the cache.
pub struct Replaced {
    /// The older content's hash: the probe the previous run saw.
    pub hash: String,
    /// The older content's symbol ids: its edges in the previous output leave from them.
    pub ids: Vec<String>,
    /// Its interface ([`tg_lang::FileFacts::interface_digest`]) is unchanged, so no other
    /// file's edges changed with it.
    pub same_interface: bool,
    /// Otherwise, when the change only appended symbols (or removed the last ones): their
    /// names ([`tg_lang::FileFacts::appended_names`]).
    pub appended: Option<Vec<String>>,
}

pub enum Outcome {
    Skipped,
    /// Boxed: a skipped file needs none of the entry's two hundred bytes.
    Ready {
        entry: Box<CacheEntry>,
        from_cache: bool,
    },
}

fn diag(rel: &str, level: Level, line: Option<u32>, code: &str, message: String) -> Diagnostic {
    Diagnostic {
        level,
        file: Some(rel.to_string()),
        line,
        code: code.to_string(),
        message,
    }
}

/// Reads and hashes every file in parallel, order preserved; a file whose metadata stamp is
/// the one `known` holds a hash for is not read at all. Each text file's stamp, taken before it
/// was read, comes back beside its probe for the caller to remember.
pub fn probe_all(
    files: &[SourceFile],
    max_size: u64,
    known: &Verified,
    done: &AtomicU64,
) -> Vec<(Probe, Option<FileStamp>)> {
    files
        .par_iter()
        .map(|file| {
            done.fetch_add(1, Ordering::Relaxed);
            let stamp = file_stamp(&file.abs);
            if let Some(hash) = stamp.and_then(|s| known.hash_of(&file.rel, &s)) {
                if stamp.is_some_and(|s| s.size <= max_size) {
                    return (
                        Probe::Text {
                            hash: hash.to_string(),
                        },
                        stamp,
                    );
                }
            }
            let probe = match read_bounded(&file.abs, max_size) {
                Ok(Some(bytes)) => probe_bytes(&bytes),
                Ok(None) => {
                    Probe::TooLarge(std::fs::metadata(&file.abs).map(|m| m.len()).unwrap_or(0))
                }
                Err(err) => Probe::Unreadable(err.to_string()),
            };
            (probe, stamp)
        })
        .collect()
}

/// Remembers the stamp of every text file probed, forgets the others, and (after a full walk)
/// drops the files that are gone.
pub fn remember_stamps(
    known: &mut Verified,
    files: &[SourceFile],
    probes: &[(Probe, Option<FileStamp>)],
    full_walk: bool,
) {
    for (file, (probe, stamp)) in files.iter().zip(probes) {
        match probe {
            Probe::Text { hash } => known.remember(&file.rel, *stamp, hash),
            _ => known.forget(&file.rel),
        }
    }
    if full_walk {
        let present: std::collections::HashSet<&str> =
            files.iter().map(|f| f.rel.as_str()).collect();
        known.retain(|rel| present.contains(rel));
    }
}

fn probe_bytes(bytes: &[u8]) -> Probe {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        Probe::Binary
    } else {
        Probe::Text {
            hash: content_hash(bytes),
        }
    }
}

/// A hash of everything the output depends on: the tool, the options, the walk's findings and
/// every file's path and content hash. Equal fingerprints mean byte-identical output.
pub fn fingerprint<'a>(
    settings: &str,
    files: impl Iterator<Item = (&'a str, &'a Probe)>,
    walk: &[Diagnostic],
) -> String {
    let mut hasher = Hasher::new();
    hasher.update(settings.as_bytes());
    for (rel, probe) in files {
        hasher.update(rel.as_bytes());
        hasher.update(b"\0");
        hasher.update(format!("{probe:?}\n").as_bytes());
    }
    for diagnostic in walk {
        hasher.update(format!("{diagnostic:?}\n").as_bytes());
    }
    hasher.finish()
}

/// Extracts every file, using the rayon pool; order is preserved. Each file's cache entry is
/// moved out of `cache` (no copies of cached facts); what is left belongs to unvisited files.
/// Each file's words come back beside it, taken out of its entry (empty for a skipped file):
/// the caller lets them go once they are saved, long before resolution is done.
pub fn extract_all(
    files: Vec<SourceFile>,
    probes: Vec<Probe>,
    max_size: u64,
    cache: &mut ExtractCache,
    done: &AtomicU64,
) -> (Vec<Extracted>, Vec<FileWords>) {
    let work: Vec<(SourceFile, Probe, Option<CacheEntry>)> = files
        .into_iter()
        .zip(probes)
        .map(|(file, probe)| {
            let cached = cache.entries.remove(&file.rel);
            (file, probe, cached)
        })
        .collect();
    work.into_par_iter()
        .map(|(file, probe, cached)| {
            let mut extracted = extract_one(file, probe, max_size, cached);
            done.fetch_add(1, Ordering::Relaxed);
            let words = match &mut extracted.outcome {
                Outcome::Ready { entry, .. } => std::mem::take(&mut entry.words),
                Outcome::Skipped => FileWords::default(),
            };
            (extracted, words)
        })
        .unzip()
}

fn skip_diagnostic(rel: &str, probe: &Probe, max_size: u64) -> Option<Diagnostic> {
    Some(match probe {
        Probe::TooLarge(size) => diag(
            rel,
            Level::Warning,
            None,
            "too_large",
            format!("skipped: file larger than --max-file-size {max_size} bytes ({size} bytes)"),
        ),
        Probe::Unreadable(err) => diag(
            rel,
            Level::Warning,
            None,
            "unreadable",
            format!("skipped: cannot read: {err}"),
        ),
        Probe::Binary => diag(
            rel,
            Level::Info,
            None,
            "binary",
            "skipped: binary file (NUL byte)".into(),
        ),
        Probe::Text { .. } => return None,
    })
}

fn extract_one(
    file: SourceFile,
    probe: Probe,
    max_size: u64,
    cached: Option<CacheEntry>,
) -> Extracted {
    let rel = file.rel;
    let lang = file.lang;
    let mut changed_while_read = false;
    let done = |outcome, diagnostics, changed_while_read| Extracted {
        rel: rel.clone(),
        lang,
        outcome,
        diagnostics,
        changed_while_read,
        replaced: None,
    };
    let (cached, stale) = match cached {
        Some(e) if matches!(&probe, Probe::Text { hash } if *hash == e.hash) => (Some(e), None),
        other => (None, other),
    };
    if let Some(entry) = cached {
        let diagnostics = entry_diagnostics(&rel, &entry);
        return done(
            Outcome::Ready {
                entry: Box::new(entry),
                from_cache: true,
            },
            diagnostics,
            false,
        );
    }
    if let Some(diagnostic) = skip_diagnostic(&rel, &probe, max_size) {
        return done(Outcome::Skipped, vec![diagnostic], false);
    }
    // Read again: the probe kept no bytes. If the file changed in between, the new content wins.
    let reread = match read_bounded(&file.abs, max_size) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(Probe::TooLarge(
            std::fs::metadata(&file.abs).map(|m| m.len()).unwrap_or(0),
        )),
        Err(err) => Err(Probe::Unreadable(err.to_string())),
    };
    let bytes = match reread {
        Ok(bytes) => bytes,
        Err(probe) => {
            let diagnostics = skip_diagnostic(&rel, &probe, max_size)
                .into_iter()
                .collect();
            return done(Outcome::Skipped, diagnostics, true);
        }
    };
    let fresh = probe_bytes(&bytes);
    changed_while_read |= fresh != probe;
    let Probe::Text { hash } = fresh else {
        let diagnostics = skip_diagnostic(&rel, &Probe::Binary, max_size)
            .into_iter()
            .collect();
        return done(Outcome::Skipped, diagnostics, changed_while_read);
    };
    let (source, non_utf8_line) = decode(bytes);
    if let Some(reason) = machine_written(&source) {
        let diagnostic = diag(&rel, Level::Info, None, "machine_written", reason);
        return done(Outcome::Skipped, vec![diagnostic], changed_while_read);
    }
    let facts: FileFacts = match tg_parse::extract_file(lang, &rel, &source) {
        Ok(mut facts) => {
            facts.shrink_to_fit();
            facts
        }
        Err(err) => {
            let diagnostic = diag(
                &rel,
                Level::Error,
                None,
                "parse_failed",
                format!("skipped: {err}"),
            );
            return done(Outcome::Skipped, vec![diagnostic], changed_while_read);
        }
    };
    let entry = CacheEntry {
        hash,
        bytes: source.len() as u64,
        lines: source.lines().count() as u32,
        non_utf8_line,
        facts,
        words: FileWords::of(lang, &source),
    };
    let diagnostics = entry_diagnostics(&rel, &entry);
    let replaced = stale.map(|old| replaced(&rel, &old, &entry));
    Extracted {
        replaced,
        ..done(
            Outcome::Ready {
                entry: Box::new(entry),
                from_cache: false,
            },
            diagnostics,
            changed_while_read,
        )
    }
}

/// What the previous run saw of a file whose content changed since: `old` is the cache's entry
/// for that content, `new` the file's entry now.
fn replaced(rel: &str, old: &CacheEntry, new: &CacheEntry) -> Replaced {
    let same_interface = match (old.facts.interface_digest(), new.facts.interface_digest()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let appended = match same_interface {
        true => None,
        false => tg_lang::FileFacts::appended_names(&old.facts, &new.facts),
    };
    Replaced {
        hash: old.hash.clone(),
        ids: old.facts.symbol_ids(rel),
        same_interface,
        appended,
    }
}

/// Average line length (bytes) above which a file is minified code, not source a person reads.
const MINIFIED_AVERAGE_LINE: usize = 300;
/// Size above which a file marked as generated is skipped: big generated tables and bundles
/// cost time and drown the map; smaller generated modules are kept (their role says what they
/// are). Amalgamated sources such as sqlite3.c carry no such marker and are mapped.
const GENERATED_SKIP_BYTES: usize = 2 * 1024 * 1024;
/// Markers tools write at the top of generated files.
const GENERATED_MARKERS: &[&str] = &["@generated", "DO NOT EDIT", "Code generated by"];

/// Why a file is left out as written by a tool rather than a person, judged by its shape:
/// minified (long lines on average), or large and marked as generated in its first lines.
fn machine_written(source: &str) -> Option<String> {
    let lines = source.lines().count().max(1);
    let average = source.len() / lines;
    if source.len() > 4096 && average > MINIFIED_AVERAGE_LINE {
        return Some(format!(
            "skipped: minified or machine-written (average line {average} bytes)"
        ));
    }
    if source.len() > GENERATED_SKIP_BYTES {
        let mut end = 4096;
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        let head = &source[..end];
        if let Some(marker) = GENERATED_MARKERS.iter().find(|m| head.contains(*m)) {
            return Some(format!(
                "skipped: generated file larger than {GENERATED_SKIP_BYTES} bytes (`{marker}` in its first lines)"
            ));
        }
    }
    None
}

/// Source text, decoded lossily when it is not UTF-8 (with the line of the first bad byte).
fn decode(bytes: Vec<u8>) -> (String, Option<u32>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let bytes = err.into_bytes();
            let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            (String::from_utf8_lossy(&bytes).into_owned(), Some(line))
        }
    }
}

/// The diagnostics a file's extraction yields; derived from the entry, so a cached file reports
/// exactly what a freshly parsed one does.
fn entry_diagnostics(rel: &str, entry: &CacheEntry) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(line) = entry.non_utf8_line {
        out.push(diag(
            rel,
            Level::Warning,
            Some(line),
            "non_utf8",
            "not valid UTF-8: decoded lossily (invalid bytes became U+FFFD)".into(),
        ));
    }
    if let Some(line) = entry.facts.syntax_error_line {
        out.push(diag(
            rel,
            Level::Warning,
            Some(line),
            "syntax_error",
            "syntax error: the definitions around it may be incomplete".into(),
        ));
    }
    if let Some(line) = entry.facts.depth_limit_line {
        out.push(diag(
            rel,
            Level::Warning,
            Some(line),
            "too_deep",
            format!(
                "nesting deeper than {} levels: the code inside was not examined",
                tg_parse::MAX_DEPTH
            ),
        ));
    }
    out
}

/// The file's bytes, or `None` when it is larger than `max` (reads no further than `max + 1`).
fn read_bounded(path: &std::path::Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Ok(None);
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_stamp_is_known_is_not_read_and_an_edited_one_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let abs = dir.path().join("a.py");
        std::fs::write(&abs, "def f():\n    pass\n").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let files = [SourceFile {
            rel: "a.py".into(),
            abs: abs.clone(),
            lang: tg_lang::for_path("a.py").expect("python"),
        }];
        // A hash no read could give: the probe can only have taken it from the stamps.
        let mut known = Verified::default();
        known.remember("a.py", file_stamp(&abs), "from-the-stamp");
        let probes = probe_all(&files, u64::MAX, &known, &AtomicU64::new(0));
        assert_eq!(
            probes[0].0,
            Probe::Text {
                hash: "from-the-stamp".into()
            }
        );
        std::fs::write(&abs, "def g():\n    pass\n").expect("edit");
        let probes = probe_all(&files, u64::MAX, &known, &AtomicU64::new(0));
        assert_eq!(
            probes[0].0,
            Probe::Text {
                hash: content_hash(b"def g():\n    pass\n")
            }
        );
    }
}
