//! Reading, checking and parsing each file (in parallel), with the cache in front.

use crate::cache::{CacheEntry, ExtractCache};

use crate::walk::SourceFile;
use rayon::prelude::*;
use std::io::Read;
use tg_shared::hash::content_hash;
use tg_shared::lang::{self, FileFacts};
use tg_shared::record::{Diagnostic, Level};

/// Bytes examined for NUL when deciding that a file is binary (as git does).
const BINARY_SNIFF: usize = 8000;

/// One file after reading: its facts, or why it was skipped.
pub struct Extracted {
    pub rel: String,
    pub lang: &'static dyn lang::Language,
    pub outcome: Outcome,
    pub diagnostics: Vec<Diagnostic>,
}

pub enum Outcome {
    Skipped,
    Ready {
        hash: String,
        bytes: u64,
        lines: u32,
        facts: FileFacts,
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

/// Extracts every file, using all threads of the current rayon pool; order is preserved.
/// Each file's cache entry is moved out of `cache` (no copies of cached facts).
pub fn extract_all(
    files: Vec<SourceFile>,
    max_size: u64,
    cache: &mut ExtractCache,
) -> Vec<Extracted> {
    let work: Vec<(SourceFile, Option<CacheEntry>)> = files
        .into_iter()
        .map(|file| {
            let cached = cache.entries.remove(&file.rel);
            (file, cached)
        })
        .collect();
    work.into_par_iter()
        .map(|(file, cached)| extract_one(file, max_size, cached))
        .collect()
}

fn extract_one(file: SourceFile, max_size: u64, cached: Option<CacheEntry>) -> Extracted {
    let rel = file.rel;
    let mut diagnostics = Vec::new();
    let skipped = |diagnostics| Extracted {
        rel: rel.clone(),
        lang: file.lang,
        outcome: Outcome::Skipped,
        diagnostics,
    };
    let bytes = match read_bounded(&file.abs, max_size) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            let size = std::fs::metadata(&file.abs).map(|m| m.len()).unwrap_or(0);
            diagnostics.push(diag(
                &rel,
                Level::Warning,
                None,
                "too_large",
                format!(
                    "skipped: file larger than --max-file-size {max_size} bytes ({size} bytes)"
                ),
            ));
            return skipped(diagnostics);
        }
        Err(err) => {
            diagnostics.push(diag(
                &rel,
                Level::Warning,
                None,
                "unreadable",
                format!("skipped: cannot read: {err}"),
            ));
            return skipped(diagnostics);
        }
    };
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        diagnostics.push(diag(
            &rel,
            Level::Info,
            None,
            "binary",
            "skipped: binary file (NUL byte)".into(),
        ));
        return skipped(diagnostics);
    }
    let hash = content_hash(&bytes);
    let source = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let bytes = err.into_bytes();
            let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            diagnostics.push(diag(
                &rel,
                Level::Warning,
                Some(line),
                "non_utf8",
                "not valid UTF-8: decoded lossily (invalid bytes became U+FFFD)".into(),
            ));
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let lines = source.lines().count() as u32;
    let byte_len = source.len() as u64;
    let (facts, from_cache) = match cached {
        Some(entry) if entry.hash == hash => (entry.facts, true),
        _ => match lang::extract_file(file.lang, &rel, &source) {
            Ok(facts) => (facts, false),
            Err(err) => {
                diagnostics.push(diag(
                    &rel,
                    Level::Error,
                    None,
                    "parse_failed",
                    format!("skipped: {err}"),
                ));
                return skipped(diagnostics);
            }
        },
    };
    if let Some(line) = facts.syntax_error_line {
        diagnostics.push(diag(
            &rel,
            Level::Warning,
            Some(line),
            "syntax_error",
            "syntax error: the definitions around it may be incomplete".into(),
        ));
    }
    if let Some(line) = facts.depth_limit_line {
        diagnostics.push(diag(
            &rel,
            Level::Warning,
            Some(line),
            "too_deep",
            format!(
                "nesting deeper than {} levels: the code inside was not examined",
                lang::MAX_DEPTH
            ),
        ));
    }
    Extracted {
        rel,
        lang: file.lang,
        outcome: Outcome::Ready {
            hash,
            bytes: byte_len,
            lines,
            facts,
            from_cache,
        },
        diagnostics,
    }
}

/// The file's bytes, or `None` when it is larger than `max` (read no further than `max + 1`).
fn read_bounded(path: &std::path::Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Ok(None);
    }
    Ok(Some(bytes))
}
