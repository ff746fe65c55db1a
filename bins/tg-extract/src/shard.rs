//! Extraction split over machines: `--shard K/N` parses the K-th of N slices of the files
//! (a file's slice comes from a hash of its path, so every shard agrees without talking) and
//! writes their facts, in the format of the per-file cache, to `--facts-out`; `--merge` loads
//! such files as the cache, so the run that resolves across all of them parses only what no
//! shard had (or what changed since), and writes the stream a single run writes.

use crate::cache::{CacheView, EntryView, ExtractCache};
use crate::extract::{self, Outcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tg_lang::walk::WalkResult;
use tg_shared::exit;
use tg_shared::hash::content_hash;
use tg_shared::stage::{Failure, Progress};

/// Slice `index` (from 0) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// `K/N` with `0 <= K < N` (as a Kubernetes Indexed Job numbers its pods).
pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?} is not K/N (e.g. 0/4)"))?;
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{text:?} is not K/N (e.g. 0/4)"))
    };
    let (index, count) = (number(k)?, number(n)?);
    if count == 0 || index >= count {
        return Err(format!(
            "{text:?}: K must be at least 0 and below N (0/4 to 3/4)"
        ));
    }
    Ok(Shard { index, count })
}

impl Shard {
    /// Whether the file at `rel` (its path from the root) falls in this slice.
    pub fn holds(&self, rel: &str) -> bool {
        let hash = content_hash(rel.as_bytes());
        let leading = u64::from_str_radix(&hash[..16], 16).unwrap_or(0);
        leading % self.count == self.index
    }
}

/// Parses this shard's files and writes their facts to `facts_out`; the exit code.
pub fn run(
    shard: Shard,
    walked: WalkResult,
    max_file_size: u64,
    facts_out: &Path,
    progress: &Progress,
) -> Result<i32, Failure> {
    let files: Vec<_> = walked
        .files
        .into_iter()
        .filter(|f| shard.holds(&f.rel))
        .collect();
    let total = files.len() as u64;
    let empty = tg_shared::freshness::Verified::default();
    let probes: Vec<extract::Probe> = progress
        .metered(("reading", "files"), total, |done| {
            extract::probe_all(&files, max_file_size, &empty, done)
        })
        .into_iter()
        .map(|(probe, _)| probe)
        .collect();
    let mut none = ExtractCache::empty();
    let (extracted, words) = progress.metered(("parsing", "files"), total, |done| {
        extract::extract_all(files, probes, max_file_size, &mut none, done)
    });
    let entries: BTreeMap<&str, _> = extracted
        .iter()
        .zip(&words)
        .filter_map(|(item, words)| match &item.outcome {
            Outcome::Ready { entry, .. } => Some((item.rel.as_str(), EntryView { entry, words })),
            _ => None,
        })
        .collect();
    let facts = entries.len();
    let view = CacheView {
        stamp: crate::cache::stamp(),
        entries: &entries,
    };
    view.save(facts_out)
        .map_err(|e| Failure::new(exit::CANT_CREATE, e))?;
    progress.say(format_args!(
        "shard {}/{}: {facts} of {total} files' facts written to {} in {:.2}s",
        shard.index,
        shard.count,
        facts_out.display(),
        progress.elapsed()
    ));
    Ok(exit::OK)
}

/// The facts of every file in `paths` (written by shards), added to `cache`. A file that is
/// missing, from another build or damaged is an error: a merge must not quietly parse alone.
pub fn load_facts(cache: &mut ExtractCache, paths: &[PathBuf]) -> Result<(), Failure> {
    for path in paths {
        if !path.is_file() {
            return Err(Failure::new(
                exit::NO_INPUT,
                format!("{}: no such facts file", path.display()),
            )
            .with_hint("give the files the shards wrote with --facts-out"));
        }
        let (facts, note) = ExtractCache::load(path);
        if let Some(note) = note {
            return Err(Failure::new(
                exit::DATA,
                format!(
                    "{}: {}",
                    path.display(),
                    note.trim_start_matches("warning: ")
                ),
            )
            .with_hint("run the shards again with this build of tg-extract"));
        }
        cache.entries.extend(facts.entries);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_read_as_k_of_n_and_each_file_falls_in_exactly_one() {
        assert_eq!(parse_shard("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (0..4).map(|k| Shard { index: k, count: 4 }).collect();
        let mut per_shard = [0; 4];
        for i in 0..400 {
            let rel = format!("src/module_{i}.py");
            let holders: Vec<u64> = shards
                .iter()
                .filter(|s| s.holds(&rel))
                .map(|s| s.index)
                .collect();
            assert_eq!(holders.len(), 1, "{rel}: {holders:?}");
            per_shard[holders[0] as usize] += 1;
        }
        assert!(per_shard.iter().all(|&n| n > 60), "{per_shard:?}");
    }
}
