//! What the text of the files says about names beyond the graph, for dead-code: a name written
//! more than once in the code (its definition and a use) may be called in a way the graph does
//! not record (through an untyped value, as a callback, by `getattr`); a name an interface file
//! (a C header) writes is API; a file that looks names up at run time may reach any of its
//! functions; a module's export list is what it offers.
//!
//! tg-extract reads every file anyway: it keeps each file's [`FileWords`] in its cache and sums
//! them into [`WordTable`] (`.tldrgraph/cache/words.bin`), so that dead-code reads a few
//! megabytes instead of the whole tree again (the kernel's 1.2 GB took it 5 to 8 s). Without
//! that file, dead-code makes the same table by reading the files itself.
//!
//! Identifiers are kept as 32-bit hashes ([`word_hash`]): the kernel's files write 23 million
//! (file, identifier) pairs. Two names sharing a hash only ever make a name look used, so a
//! collision can hide a finding, never invent one.

use crate::Language;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::OnceLock;
use tg_shared::codec;

/// The first line of `words.bin`: a file another revision of the table wrote is not read.
const TABLE_STAMP: &str = "tldrgraph words 3\n";

/// One file's words: what its text says, in the terms [`WordTable`] sums.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileWords {
    /// [`word_hash`]es of the identifiers its code writes exactly once, sorted.
    pub once: Vec<u32>,
    /// [`word_hash`]es of the identifiers its code writes more than once, sorted.
    pub repeated: Vec<u32>,
    /// The text holds one of its language's reflection markers (`getattr(`, `dlsym(`).
    pub reflective: bool,
    /// The names it lists as its exports (Python `__all__`).
    pub exports: Vec<String>,
}

impl FileWords {
    /// The words of `text`, a file of `lang`. Code is the text without its prose (comments,
    /// docstrings, by the language's own syntax: a C `#define` and a Python `//` are code);
    /// the reflection markers and the export list are looked for in the whole text.
    pub fn of(lang: &dyn Language, text: &str) -> FileWords {
        let mut hashes: Vec<u32> = Vec::new();
        for code in code_parts(lang, text) {
            hashes.extend(identifiers(code).map(word_hash));
        }
        hashes.sort_unstable();
        let (mut once, mut repeated) = (Vec::new(), Vec::new());
        for run in hashes.chunk_by(|a, b| a == b) {
            if run.len() == 1 {
                once.push(run[0]);
            } else {
                repeated.push(run[0]);
            }
        }
        // Held for every file until the cache is written: no spare capacity.
        once.shrink_to_fit();
        repeated.shrink_to_fit();
        FileWords {
            once,
            repeated,
            reflective: lang.reflection_markers().iter().any(|m| text.contains(m)),
            exports: lang.export_list(text),
        }
    }
}

/// The parts of `text` between its prose matches: what is left when prose is blanked.
fn code_parts<'t>(lang: &dyn Language, text: &'t str) -> Vec<&'t str> {
    let Some(prose) = prose_regex(lang) else {
        return vec![text];
    };
    let mut parts = Vec::new();
    let mut at = 0;
    for found in prose.find_iter(text) {
        parts.push(&text[at..found.start()]);
        at = found.end();
    }
    parts.push(&text[at..]);
    parts
}

/// Each language's prose pattern, compiled once; `None` for a pattern that does not compile
/// (then nothing is blanked).
fn prose_regex(lang: &dyn Language) -> Option<&'static Regex> {
    static COMPILED: OnceLock<HashMap<&'static str, Option<Regex>>> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            crate::REGISTRY
                .iter()
                .map(|lang| (lang.id(), Regex::new(lang.prose_pattern()).ok()))
                .collect()
        })
        .get(lang.id())
        .and_then(Option::as_ref)
}

/// The identifiers of `text` (`[A-Za-z_][A-Za-z0-9_]*`, leftmost and longest, as that regex
/// finds them), by a scan of its bytes: a regex searched forwards and back for each of the
/// hundreds of millions of words in a large tree cost seconds.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !(bytes[at].is_ascii_alphabetic() || bytes[at] == b'_') {
            at += 1;
        }
        if at == bytes.len() {
            return None;
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        // Both ends sit next to ASCII bytes (or the text's ends): character boundaries.
        Some(&text[start..at])
    })
}

/// A name's 32-bit hash: FNV-1a over its bytes, the 64 bits folded in half. Written here, not
/// taken from a crate, because cached files and `words.bin` keep it: it must not change with
/// a dependency's version.
pub fn word_hash(word: &str) -> u32 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for &byte in word.as_bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    ((hash >> 32) ^ hash) as u32
}

/// The repository's words, summed over its files: what dead-code asks about a name. Only the
/// names dead-code can ask about are kept, those of the functions and methods the build
/// defined (the kernel's code writes 5 million distinct identifiers, its functions have half
/// a million names); a name outside them is answered as used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordTable {
    /// Hashes of the names the table answers for: the functions' and methods'.
    covered: SortedHashes,
    /// Of those, the ones the code writes more than once in all.
    repeated: SortedHashes,
    /// Of those, the ones the interface files (C headers) write.
    declared: SortedHashes,
    /// The files that look names up at run time.
    reflective: BTreeSet<String>,
    /// Each module's export list, by file.
    exports: BTreeMap<String, BTreeSet<String>>,
}

/// A set of hashes kept sorted, with where each bucket of the top 16 bits starts, so that a
/// lookup searches a few dozen values, not millions (dead-code asks for every candidate of the
/// kernel's). Written as the gaps between the values: most take 3 bytes instead of 5.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SortedHashes {
    values: Vec<u32>,
    /// `starts[b]..starts[b + 1]` are the values whose top 16 bits are `b`.
    starts: Vec<u32>,
}

impl SortedHashes {
    fn from_sorted(values: Vec<u32>) -> Self {
        let mut starts = Vec::with_capacity((1 << 16) + 1);
        let mut at = 0usize;
        for bucket in 0..=(1u32 << 16) {
            while at < values.len() && (values[at] >> 16) < bucket {
                at += 1;
            }
            starts.push(at as u32);
        }
        SortedHashes { values, starts }
    }

    fn contains(&self, hash: u32) -> bool {
        let bucket = (hash >> 16) as usize;
        match (self.starts.get(bucket), self.starts.get(bucket + 1)) {
            (Some(&start), Some(&end)) => self.values[start as usize..end as usize]
                .binary_search(&hash)
                .is_ok(),
            _ => false,
        }
    }
}

impl Serialize for SortedHashes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Each value less the one before it (the first less 0): sorted, so never negative.
        let previous = std::iter::once(0).chain(self.values.iter().copied());
        let gaps = self.values.iter().zip(previous).map(|(&v, p)| v - p);
        serializer.collect_seq(gaps)
    }
}

impl<'de> Deserialize<'de> for SortedHashes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let gaps = Vec::<u32>::deserialize(deserializer)?;
        let mut values = Vec::with_capacity(gaps.len());
        let mut last = 0u32;
        for gap in gaps {
            last = last
                .checked_add(gap)
                .ok_or_else(|| serde::de::Error::custom("hashes out of order"))?;
            values.push(last);
        }
        Ok(SortedHashes::from_sorted(values))
    }
}

/// One file as [`WordTable::build`] takes it: its path and its words.
pub type FileEntry<'a> = (&'a str, &'a FileWords);

/// The hash space is summed a sixteenth at a time: a sixteenth of the kernel's 23 million
/// (file, identifier) pairs is sorted at once, never the whole.
const HASH_SLICES: u64 = 16;

impl WordTable {
    /// Sums the files' words for the names in `covered` (hashes: the functions' and methods'
    /// names, in any order). The result does not depend on the files' order.
    pub fn build(files: &[FileEntry<'_>], mut covered: Vec<u32>) -> WordTable {
        covered.sort_unstable();
        covered.dedup();
        let interface: Vec<bool> = files
            .iter()
            .map(|&(path, _)| crate::for_path(path).is_some_and(|l| l.is_interface_file(path)))
            .collect();
        let (mut all_repeated, mut all_declared) = (Vec::new(), Vec::new());
        let width = (1u64 << 32) / HASH_SLICES;
        for slice in 0..HASH_SLICES {
            let (low, high) = (slice * width, (slice + 1) * width);
            let (mut once, mut repeated, mut declared) = (Vec::new(), Vec::new(), Vec::new());
            for (&(_, words), &interface) in files.iter().zip(&interface) {
                let once_here = within(&words.once, low, high);
                let repeated_here = within(&words.repeated, low, high);
                once.extend_from_slice(once_here);
                repeated.extend_from_slice(repeated_here);
                if interface {
                    declared.extend_from_slice(once_here);
                    declared.extend_from_slice(repeated_here);
                }
            }
            once.sort_unstable();
            // Written once in each of two files is written twice.
            repeated.extend(
                once.chunk_by(|a, b| a == b)
                    .filter(|run| run.len() > 1)
                    .map(|run| run[0]),
            );
            let asked = within(&covered, low, high);
            for list in [&mut repeated, &mut declared] {
                list.sort_unstable();
                list.dedup();
                list.retain(|h| asked.binary_search(h).is_ok());
            }
            all_repeated.append(&mut repeated);
            all_declared.append(&mut declared);
        }
        let mut table = WordTable {
            covered: SortedHashes::from_sorted(covered),
            repeated: SortedHashes::from_sorted(all_repeated),
            declared: SortedHashes::from_sorted(all_declared),
            ..WordTable::default()
        };
        for &(path, words) in files {
            if words.reflective {
                table.reflective.insert(path.to_string());
            }
            if !words.exports.is_empty() {
                let names = words.exports.iter().cloned().collect();
                table.exports.insert(path.to_string(), names);
            }
        }
        table
    }

    /// Whether the code writes `name` more than once (a definition and a use, or two uses);
    /// true for a name the table does not answer for.
    pub fn is_repeated(&self, name: &str) -> bool {
        let hash = word_hash(name);
        !self.covered.contains(hash) || self.repeated.contains(hash)
    }

    /// Whether an interface file (a C header) writes `name`; true for a name the table does
    /// not answer for.
    pub fn is_declared(&self, name: &str) -> bool {
        let hash = word_hash(name);
        !self.covered.contains(hash) || self.declared.contains(hash)
    }

    /// Whether `file` looks names up at run time.
    pub fn is_reflective(&self, file: &str) -> bool {
        self.reflective.contains(file)
    }

    /// Whether `file`'s export list names `name`.
    pub fn exports(&self, file: &str, name: &str) -> bool {
        self.exports
            .get(file)
            .is_some_and(|names| names.contains(name))
    }

    /// Writes the table to `path` whole or not at all, sealed with its checksum.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let mut bytes = TABLE_STAMP.as_bytes().to_vec();
        let sealed = codec::encode_sealed(self)
            .map_err(|e| format!("cannot encode {}: {e}", path.display()))?;
        bytes.extend(sealed);
        tg_shared::store::write_atomic(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Whether `path` holds a table of this revision (its first line only is read).
    pub fn is_current(path: &Path) -> bool {
        use std::io::Read;
        let mut head = vec![0u8; TABLE_STAMP.len()];
        std::fs::File::open(path)
            .and_then(|mut file| file.read_exact(&mut head))
            .is_ok_and(|()| head == TABLE_STAMP.as_bytes())
    }

    /// The table at `path`; `None` when it is missing, from another revision or damaged (the
    /// caller then reads the files).
    pub fn load(path: &Path) -> Option<WordTable> {
        let bytes = std::fs::read(path).ok()?;
        let payload = bytes.strip_prefix(TABLE_STAMP.as_bytes())?;
        codec::decode_sealed(payload).ok()
    }
}

/// The part of a sorted list whose values lie in `low..high`.
fn within(sorted: &[u32], low: u64, high: u64) -> &[u32] {
    let start = sorted.partition_point(|&h| u64::from(h) < low);
    let end = sorted.partition_point(|&h| u64::from(h) < high);
    &sorted[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte scan finds what the regex it replaced finds, on text meant to trip it:
    /// digits before and inside words, underscores alone, non-ASCII letters beside words.
    #[test]
    fn identifiers_are_what_the_word_regex_finds() {
        let word = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
        let texts = [
            "",
            "int main(void) { return 0; }",
            "1abc 2_x __init__ a1b2 9 _ __",
            "caf\u{e9}_bar na\u{ef}ve \u{3bb}x \u{1f600}emoji_1",
            "x->y.z::w /* c */ // d\n#define FOO(a,b) a##b",
            "tail_word",
        ];
        for text in texts {
            let expected: Vec<&str> = word.find_iter(text).map(|m| m.as_str()).collect();
            let found: Vec<&str> = identifiers(text).collect();
            assert_eq!(found, expected, "{text:?}");
        }
    }

    /// The FNV-1a reference values (the 64-bit hash of "" and "a"), folded: the hash kept in
    /// caches is the one written down.
    #[test]
    fn word_hash_is_folded_fnv1a() {
        let fold = |h: u64| ((h >> 32) ^ h) as u32;
        assert_eq!(word_hash(""), fold(0xcbf2_9ce4_8422_2325));
        assert_eq!(word_hash("a"), fold(0xaf63_dc4c_8601_ec8c));
    }

    /// A name written once in each of two files, twice in one, or once only: the sums say
    /// which are used; comments do not count; a header's names are declared.
    #[test]
    fn the_table_sums_what_the_files_write() {
        let c = &crate::C;
        let a = FileWords::of(c, "int used_twice(void) { return used_twice(); }\nint once_a(void);\n/* mentioned_in_comment */ int shared(void);");
        let b = FileWords::of(
            c,
            "int shared(void) { return 0; } // mentioned_in_comment\nvoid *p = dlsym(h, \"x\");",
        );
        let h = FileWords::of(c, "int header_only(void);");
        assert!(b.reflective && !a.reflective);
        let files = [("a.c", &a), ("b.c", &b), ("x.h", &h)];
        let names = [
            "used_twice",
            "shared",
            "int",
            "once_a",
            "mentioned_in_comment",
            "header_only",
        ];
        let covered: Vec<u32> = names.iter().map(|n| word_hash(n)).collect();
        let table = WordTable::build(&files, covered.clone());
        assert!(table.is_repeated("used_twice"));
        assert!(table.is_repeated("shared"));
        assert!(table.is_repeated("int"));
        assert!(!table.is_repeated("once_a"));
        assert!(!table.is_repeated("mentioned_in_comment"));
        assert!(!table.is_repeated("header_only"));
        assert!(table.is_declared("header_only") && !table.is_declared("once_a"));
        assert!(table.is_reflective("b.c") && !table.is_reflective("a.c"));
        // A name the table was not asked to answer for counts as used.
        assert!(table.is_repeated("return") && table.is_declared("return"));
        let mut reversed = files;
        reversed.reverse();
        let mut shuffled = covered;
        shuffled.reverse();
        assert_eq!(WordTable::build(&reversed, shuffled), table);
    }

    /// Lookups find exactly the values, at the ends of the hash space and of the buckets too.
    #[test]
    fn sorted_hashes_find_exactly_their_values() {
        let values = vec![
            0,
            1,
            0xffff,
            0x1_0000,
            0x1_0002,
            0xabcd_0000,
            u32::MAX - 1,
            u32::MAX,
        ];
        let set = SortedHashes::from_sorted(values.clone());
        for &v in &values {
            assert!(set.contains(v), "{v:#x}");
        }
        for v in [2, 0xfffe, 0x1_0001, 0xabcc_ffff, 0xabcd_0001, u32::MAX - 2] {
            assert!(!set.contains(v), "{v:#x}");
        }
        assert!(!SortedHashes::default().contains(0));
        let written = codec::encode(&set).unwrap();
        assert_eq!(codec::decode::<SortedHashes>(&written).unwrap(), set);
    }

    /// A saved table loads back equal; damage or another revision's stamp loads nothing.
    #[test]
    fn a_saved_table_loads_back_and_damage_is_refused() {
        let py = &crate::PYTHON;
        let words = FileWords::of(py, "__all__ = ['run']\ndef run(): pass\nrun()\n");
        assert_eq!(words.exports, vec!["run".to_string()]);
        let table = WordTable::build(&[("m.py", &words)], vec![word_hash("run")]);
        assert!(table.exports("m.py", "run") && table.is_repeated("run"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("words.bin");
        assert!(!WordTable::is_current(&path));
        table.save(&path).unwrap();
        assert!(WordTable::is_current(&path));
        assert_eq!(WordTable::load(&path), Some(table));
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 40;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(WordTable::load(&path), None);
        assert_eq!(WordTable::load(&dir.path().join("missing.bin")), None);
    }
}
