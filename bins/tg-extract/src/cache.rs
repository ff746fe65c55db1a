//! The per-file extraction cache in `.tldrgraph/cache/extract.bin`: facts keyed by path and
//! content hash, so an unchanged file is never parsed twice. A cache from another build (or a
//! damaged one) is ignored and rebuilt, never trusted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use tg_shared::codec;
use tg_shared::lang::{FileFacts, EXTRACTOR_REVISION};
use tg_shared::store;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheEntry {
    pub hash: String,
    pub facts: FileFacts,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ExtractCache {
    /// Tool version and extractor revision that wrote the entries.
    pub stamp: String,
    pub entries: BTreeMap<String, CacheEntry>,
}

pub fn stamp() -> String {
    format!(
        "tg-extract {} rev {}",
        env!("CARGO_PKG_VERSION"),
        EXTRACTOR_REVISION
    )
}

impl ExtractCache {
    /// Loads the cache, or an empty one (with the reason) when it is missing, stale or damaged.
    pub fn load(path: &Path) -> (ExtractCache, Option<String>) {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return (ExtractCache::empty(), None)
            }
            Err(err) => {
                return (
                    ExtractCache::empty(),
                    Some(format!("cannot read cache {}: {err}", path.display())),
                )
            }
        };
        match codec::decode::<ExtractCache>(&bytes) {
            Ok(cache) if cache.stamp == stamp() => (cache, None),
            Ok(_) => (ExtractCache::empty(), None),
            Err(err) => (
                ExtractCache::empty(),
                Some(format!("ignoring damaged cache {}: {err}", path.display())),
            ),
        }
    }

    pub fn empty() -> Self {
        ExtractCache {
            stamp: stamp(),
            entries: BTreeMap::new(),
        }
    }
}

/// The cache as written: borrowed from the extraction results (same wire layout as
/// [`ExtractCache`], so it decodes into one).
#[derive(Serialize)]
pub struct CacheView<'a> {
    pub stamp: String,
    pub entries: BTreeMap<&'a str, CacheEntryRef<'a>>,
}

#[derive(Serialize)]
pub struct CacheEntryRef<'a> {
    pub hash: &'a str,
    pub facts: &'a FileFacts,
}

impl CacheView<'_> {
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let bytes = codec::encode(self)?;
        store::write_atomic(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}
