//! The per-file extraction cache in `.tldrgraph/cache/extract.bin`: facts keyed by path and
//! content hash, so an unchanged file is never parsed twice. A cache from another build (or a
//! damaged one) is ignored and rebuilt, never trusted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use tg_lang::words::FileWords;
use tg_lang::FileFacts;
use tg_parse::EXTRACTOR_REVISION;
use tg_shared::artifacts;
use tg_shared::codec;
use tg_shared::frames::FrameWriter;
use tg_shared::freshness;
use tg_shared::store;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheEntry {
    pub hash: String,
    pub bytes: u64,
    pub lines: u32,
    /// Line of the first byte that is not UTF-8 (the file was decoded lossily).
    pub non_utf8_line: Option<u32>,
    pub facts: FileFacts,
    /// What its text says about names beyond the graph (dead-code's evidence).
    pub words: FileWords,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ExtractCache {
    /// Tool version and extractor revision that wrote the entries.
    pub stamp: String,
    pub entries: BTreeMap<String, CacheEntry>,
    /// Where the entries came from: the store's base and delta ([`ExtractCache::load_store`]).
    #[serde(skip)]
    pub origin: Origin,
}

/// The store's cache is a base (`extract.bin`, every entry) and a delta (`extract.delta`, the
/// entries of the files that changed since the base was written, `None` for a file gone): a
/// run that changed a few files writes a small delta instead of the whole base (330 MB on the
/// kernel, four seconds of a core). The delta names the base it amends by the base's seal.
#[derive(Debug, Default, Clone)]
pub struct Origin {
    /// The seal of the base the entries were loaded from.
    pub base_seal: Option<[u8; 32]>,
    /// The files the delta loaded with them held.
    pub delta_paths: Vec<String>,
}

#[derive(Deserialize)]
struct Delta {
    stamp: String,
    base: Vec<u8>,
    entries: BTreeMap<String, Option<CacheEntry>>,
}

/// A [`Delta`] as written: borrowed from the run's entries.
#[derive(Serialize)]
struct DeltaView<'a> {
    stamp: String,
    base: &'a [u8],
    entries: BTreeMap<&'a str, Option<EntryView<'a>>>,
}

/// A delta is written while it holds at most one file in this many of the cache's.
const DELTA_SHARE: usize = 32;

pub fn stamp() -> String {
    format!(
        "tg-extract {} rev {}",
        env!("CARGO_PKG_VERSION"),
        EXTRACTOR_REVISION
    )
}

impl ExtractCache {
    /// Loads the store's cache: its base, amended by its delta when the delta belongs to that
    /// base ([`Origin`]). A delta of another base or build is ignored: the base alone is a
    /// consistent (older) cache.
    pub fn load_store(base: &Path, delta: &Path) -> (ExtractCache, Option<String>) {
        let (mut cache, note) = Self::load(base);
        let Some(seal) = cache.origin.base_seal else {
            return (cache, note);
        };
        let loaded = match codec::decode_sealed_file::<Delta>(delta) {
            Ok(loaded) => loaded,
            Err(_) if !delta.exists() => return (cache, note),
            Err(err) => {
                let note = format!("warning: ignoring damaged {}: {err}", delta.display());
                return (cache, Some(note));
            }
        };
        if loaded.stamp != cache.stamp || loaded.base != seal {
            return (cache, note);
        }
        for (path, entry) in loaded.entries {
            match entry {
                Some(entry) => cache.entries.insert(path.clone(), entry),
                None => cache.entries.remove(&path),
            };
            cache.origin.delta_paths.push(path);
        }
        (cache, note)
    }

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
                    Some(format!(
                        "warning: cannot read cache {}: {err}",
                        path.display()
                    )),
                )
            }
        };
        // The stamp line comes first, so a cache from another build is recognised without
        // decoding a layout it may not share.
        let expected = format!("{}\n", stamp());
        let Some(payload) = bytes.strip_prefix(expected.as_bytes()) else {
            let written_by = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
            let note = match std::str::from_utf8(written_by) {
                Ok(other) if other.starts_with("tg-extract ") => format!(
                    "warning: cache {} was written by {other}; rebuilding it",
                    path.display()
                ),
                _ => format!(
                    "warning: ignoring damaged cache {} (no version line); rebuilding it",
                    path.display()
                ),
            };
            return (ExtractCache::empty(), Some(note));
        };
        match codec::decode_sealed::<ExtractCache>(payload) {
            Ok(mut cache) if cache.stamp == stamp() => {
                cache.origin.base_seal = codec::seal_of(payload);
                (cache, None)
            }
            Ok(_) => (ExtractCache::empty(), None),
            Err(err) => (
                ExtractCache::empty(),
                Some(format!(
                    "warning: ignoring damaged cache {}: {err}; rebuilding it",
                    path.display()
                )),
            ),
        }
    }

    pub fn empty() -> Self {
        ExtractCache {
            stamp: stamp(),
            entries: BTreeMap::new(),
            origin: Origin::default(),
        }
    }
}

/// The cache as written: borrowed from the extraction results (same wire layout as
/// [`ExtractCache`], so it decodes into one).
#[derive(Serialize)]
pub struct CacheView<'a> {
    pub stamp: String,
    pub entries: &'a BTreeMap<&'a str, EntryView<'a>>,
}

/// A [`CacheEntry`] whose words are held apart from it: a run keeps each file's words beside
/// its entry and lets them go once the cache and the word table are written (the kernel's are
/// 90 MB), so the view writes the bytes a [`CacheEntry`] would.
#[derive(Clone, Copy)]
pub struct EntryView<'a> {
    pub entry: &'a CacheEntry,
    pub words: &'a FileWords,
}

impl Serialize for EntryView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // CacheEntry's fields, in its order.
        let mut out = serializer.serialize_struct("CacheEntry", 6)?;
        out.serialize_field("hash", &self.entry.hash)?;
        out.serialize_field("bytes", &self.entry.bytes)?;
        out.serialize_field("lines", &self.entry.lines)?;
        out.serialize_field("non_utf8_line", &self.entry.non_utf8_line)?;
        out.serialize_field("facts", &self.entry.facts)?;
        out.serialize_field("words", self.words)?;
        out.end()
    }
}

impl CacheView<'_> {
    /// Saves the store's cache ([`Origin`]): as a delta over the base it was loaded from,
    /// holding the files `changed` this run made or dropped and those the loaded delta held,
    /// while they are few; otherwise as a new base, and the delta is removed.
    pub fn save_store(
        &self,
        (base, delta): (&Path, &Path),
        origin: &Origin,
        changed: &[&str],
    ) -> Result<(), String> {
        if let Some(seal) = &origin.base_seal {
            let mut touched: Vec<&str> = origin.delta_paths.iter().map(String::as_str).collect();
            touched.extend_from_slice(changed);
            touched.sort_unstable();
            touched.dedup();
            if touched.len() * DELTA_SHARE <= self.entries.len() {
                let view = DeltaView {
                    stamp: self.stamp.clone(),
                    base: seal,
                    entries: (touched.iter())
                        .map(|&path| (path, self.entries.get(path).copied()))
                        .collect(),
                };
                let bytes = codec::encode_sealed(&view)?;
                return store::write_atomic(delta, &bytes)
                    .map_err(|e| format!("cannot write {}: {e}", delta.display()));
            }
        }
        self.save(base)?;
        match std::fs::remove_file(delta) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {err}", delta.display()))
            }
            _ => Ok(()),
        }
    }

    /// Written as it is encoded (the kernel's cache is a quarter of a gigabyte).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let cant = |e: io::Error| format!("cannot write {}: {e}", path.display());
        let mut file = store::AtomicFile::create(path).map_err(cant)?;
        file.write_all(format!("{}\n", self.stamp).as_bytes())
            .map_err(cant)?;
        codec::encode_sealed_into(self, &mut file)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        file.commit().map_err(cant)
    }
}

/// The previous run's whole output, reused byte for byte when the fingerprint of the inputs
/// (tool, options, file set, content hashes) is unchanged: a no-op run resolves nothing.
/// Layout: `<fingerprint>\n`, the stream as zstd frames ([`tg_shared::frames`]; 10x smaller
/// on the kernel), `end <fingerprint> <blake3 of the frames>\n`; a file without its trailer (a
/// crash mid-write) or whose frames no longer match their hash (damage) is never reused.
/// Returns the output, or why a file that is there cannot be used.
pub fn open_output(path: &Path, fingerprint: &str) -> Result<Option<PreviousOutput>, String> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
    };
    let cannot_read = |err: io::Error| format!("cannot read {}: {err}", path.display());
    let damaged = || {
        format!(
            "ignoring damaged {}: its checksum does not match",
            path.display()
        )
    };
    let header = format!("{fingerprint}\n");
    let mut head = vec![0; header.len()];
    if file.read_exact(&mut head).is_err() || head != header.as_bytes() {
        // Another input set or another build: not damage.
        return Ok(None);
    }
    // Taken before the read, so that a write during it leaves a stamp that no longer matches.
    let stamp = freshness::file_stamp(path);
    let mut frames = Vec::new();
    file.read_to_end(&mut frames).map_err(cannot_read)?;
    // `end <fingerprint> <hash>\n`, the hash as long as every content hash.
    let hash_len = tg_shared::hash::content_hash(b"").len();
    let trailer_start = format!("end {fingerprint} ");
    let trailer_len = trailer_start.len() + hash_len + 1;
    let Some(body_len) = frames.len().checked_sub(trailer_len) else {
        return Err(damaged());
    };
    let Some(expected) = frames[body_len..]
        .strip_prefix(trailer_start.as_bytes())
        .and_then(|t| t.strip_suffix(b"\n"))
    else {
        return Err(damaged());
    };
    let hash = String::from_utf8_lossy(expected).into_owned();
    frames.truncate(body_len);
    // Found intact before and not rewritten since (size, times, inode): not hashed again, as
    // git trusts its index's stamps. Each frame's own checksum still guards its content.
    let record = verified_path(path);
    if !freshness::verified_before(&record, stamp, &hash) {
        if tg_shared::hash::content_hash(&frames) != hash {
            return Err(damaged());
        }
        freshness::remember_verified(&record, stamp, &hash);
    }
    Ok(Some(PreviousOutput { frames, hash }))
}

/// The previous run's output as found intact by [`open_output`]: its compressed frames.
pub struct PreviousOutput {
    frames: Vec<u8>,
    /// The frames' hash: which stream they hold.
    hash: String,
}

impl PreviousOutput {
    /// Writes the stream to `path` (`-o FILE`), replacing it only when it differs, unless
    /// `path` is the file this cache last wrote there, untouched since (its stamp, remembered
    /// in `written` under git's racy rule): on the kernel, writing 1.1 GB to compare it took
    /// seconds for what Make runs as a no-op. `Ok(false)` when nothing was written.
    /// A special file (`/dev/null`, a FIFO a reader waits on) is always written.
    pub fn write_to_file(&self, path: &Path, written: &Path) -> io::Result<bool> {
        let key = format!("{} {}", self.hash, path.display());
        let special = store::is_special_file(path);
        if !special && freshness::verified_before(written, freshness::file_stamp(path), &key) {
            return Ok(false);
        }
        let mut file = store::AtomicFile::create(path)?;
        self.write_to(&mut file)?;
        file.commit_if_changed()?;
        // A file rewritten just now is remembered by a later run, once it has settled.
        if !special {
            freshness::remember_verified(written, freshness::file_stamp(path), &key);
        }
        Ok(true)
    }

    /// The stream's zstd frames.
    pub fn frames(&self) -> &[u8] {
        &self.frames
    }

    /// Writes the stream, decompressed across the cores.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        tg_shared::frames::decompress_to(&self.frames, out)
    }
}

/// Beside the output cache: its stamp when its stream last matched its trailer's hash.
fn verified_path(output: &Path) -> std::path::PathBuf {
    beside(output, ".verified")
}

/// Beside the output cache: the `-o FILE` it last wrote, with that file's stamp.
pub fn written_path(output: &Path) -> std::path::PathBuf {
    beside(output, ".written")
}

fn beside(output: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(suffix);
    std::path::PathBuf::from(name)
}

/// The output cache being written beside the stream; [`OutputCache::finish`] seals it.
pub struct OutputCache<'a> {
    frames: FrameWriter<'a, Hashed<store::AtomicFile>>,
    fingerprint: String,
    path: PathBuf,
}

impl<'a> OutputCache<'a> {
    /// A cache written afresh, copying the frames of `previous` (a previous output's frames,
    /// [`PreviousOutput::frames`]) whose content it holds again instead of compressing them.
    pub fn create(path: &Path, fingerprint: &str, previous: &'a [u8]) -> io::Result<Self> {
        let mut file = store::AtomicFile::create(path)?;
        writeln!(file, "{fingerprint}")?;
        let sink = Hashed {
            sink: file,
            hasher: tg_shared::hash::Hasher::new(),
        };
        Ok(OutputCache {
            frames: FrameWriter::reusing(sink, previous),
            fingerprint: fingerprint.to_string(),
            path: path.to_path_buf(),
        })
    }

    /// Seals and commits the cache, and removes the uncompressed one an older build kept.
    pub fn finish(self) -> io::Result<()> {
        let Hashed { mut sink, hasher } = self.frames.finish()?;
        writeln!(sink, "end {} {}", self.fingerprint, hasher.finish())?;
        sink.commit()?;
        let legacy = self.path.with_file_name(artifacts::LEGACY_EXTRACT_OUTPUT);
        for stale in [verified_path(&legacy), legacy] {
            match std::fs::remove_file(&stale) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Write for OutputCache<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.frames.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.frames.flush()
    }
}

/// A sink that hashes what passes through it.
struct Hashed<W> {
    sink: W,
    hasher: tg_shared::hash::Hasher,
}

impl<W: Write> Write for Hashed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.sink.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view of an entry and its words, held apart, is written as the entry holding them
    /// would be, so the cache reads back whole.
    #[test]
    fn an_entry_view_writes_the_bytes_of_its_entry() {
        let lang = tg_lang::for_path("m.py").expect("python");
        let source = "def f():\n    return g()\n\ndef g():\n    return 1\n";
        let entry = CacheEntry {
            hash: tg_shared::hash::content_hash(source.as_bytes()),
            bytes: source.len() as u64,
            lines: 5,
            non_utf8_line: Some(3),
            facts: tg_parse::extract_file(lang, "m.py", source).expect("parse"),
            words: FileWords::of(lang, source),
        };
        assert!(!entry.words.once.is_empty() && !entry.words.repeated.is_empty());
        let mut apart = entry.clone();
        let words = std::mem::take(&mut apart.words);
        let view = EntryView {
            entry: &apart,
            words: &words,
        };
        let written = codec::encode(&view).expect("encode view");
        assert_eq!(written, codec::encode(&entry).expect("encode entry"));
        let read: CacheEntry = codec::decode(&written).expect("decode");
        assert_eq!(read.words, entry.words);
        assert_eq!(read.words, words);
        assert_eq!(read.non_utf8_line, Some(3));
    }
}
