//! The per-file extraction cache in `.tldrgraph/cache/extract.bin`: facts keyed by path and
//! content hash, so an unchanged file is never parsed twice. A cache from another build (or a
//! damaged one) is ignored and rebuilt, never trusted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use tg_shared::codec;
use tg_shared::lang::{FileFacts, EXTRACTOR_REVISION};
use tg_shared::store;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheEntry {
    pub hash: String,
    pub bytes: u64,
    pub lines: u32,
    /// Line of the first byte that is not UTF-8 (the file was decoded lossily).
    pub non_utf8_line: Option<u32>,
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
        // The stamp line comes first, so a cache from another build is recognised without
        // decoding a layout it may not share.
        let expected = format!("{}\n", stamp());
        let Some(payload) = bytes.strip_prefix(expected.as_bytes()) else {
            return (ExtractCache::empty(), None);
        };
        match codec::decode::<ExtractCache>(payload) {
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
    pub entries: BTreeMap<&'a str, &'a CacheEntry>,
}

impl CacheView<'_> {
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let mut bytes = format!("{}\n", self.stamp).into_bytes();
        bytes.extend(codec::encode(self)?);
        store::write_atomic(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The previous run's whole output, reused byte for byte when the fingerprint of the inputs
/// (tool, options, file set, content hashes) is unchanged: a no-op run resolves nothing.
/// Layout: `<fingerprint>\n`, the stream, `end <fingerprint>\n`; a file without its trailer
/// (a crash mid-write) is never reused.
pub fn open_output(path: &Path, fingerprint: &str) -> Option<io::Take<BufReader<File>>> {
    let mut file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let header = format!("{fingerprint}\n");
    let trailer = format!("end {fingerprint}\n");
    let overhead = (header.len() + trailer.len()) as u64;
    if size < overhead {
        return None;
    }
    let mut tail = vec![0; trailer.len()];
    file.seek(SeekFrom::Start(size - trailer.len() as u64))
        .ok()?;
    file.read_exact(&mut tail).ok()?;
    let mut head = vec![0; header.len()];
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_exact(&mut head).ok()?;
    if head != header.as_bytes() || tail != trailer.as_bytes() {
        return None;
    }
    Some(BufReader::with_capacity(1 << 16, file).take(size - overhead))
}

/// The output cache being written beside the stream; [`OutputCache::finish`] seals it.
pub struct OutputCache {
    file: store::AtomicFile,
    fingerprint: String,
}

impl OutputCache {
    pub fn create(path: &Path, fingerprint: &str) -> io::Result<Self> {
        let mut file = store::AtomicFile::create(path)?;
        writeln!(file, "{fingerprint}")?;
        Ok(OutputCache {
            file,
            fingerprint: fingerprint.to_string(),
        })
    }

    pub fn finish(mut self) -> io::Result<()> {
        writeln!(self.file, "end {}", self.fingerprint)?;
        self.file.commit()
    }
}

impl Write for OutputCache {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
