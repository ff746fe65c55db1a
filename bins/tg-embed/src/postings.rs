//! The BM25 postings, rebuilt in proportion to what changed.
//!
//! A symbol's terms depend only on its lexical text. Each build keeps the key (a 128-bit
//! hash) of every symbol's text in `cache/postings.keys`, bound to the index it wrote; the next
//! build tokenises only the texts whose key that index does not have, and takes the others'
//! postings from it, renumbered to their new positions. The result is the same as tokenising
//! every text again (a test builds both ways), and on the kernel one changed file tokenises a
//! handful of its 982,556 texts (one per symbol, modules included) instead of all of them.

use crate::corpus::Corpus;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use tg_shared::artifacts;
use tg_shared::hash::{reader_hash, ContentHash};
use tg_shared::lexical;
use tg_shared::search::layout::{Column, Section};
use tg_shared::search::{IndexView, Postings, INDEX_VERSION};
use tg_shared::store::{self, Store};

/// Symbols tokenised at a time: only one chunk's terms are held before they are merged.
const CHUNK: usize = 16_384;
/// The first line of the keys file; the index version follows, then the index's hash.
const MAGIC: &str = "tg-postings-keys";

/// The key of a lexical text: equal keys, equal terms.
pub type Key = ContentHash;

/// One symbol's terms: how many it has, and each distinct one with its count.
type DocTerms = (u32, Vec<(String, u16)>);

fn doc_terms(text: &str) -> DocTerms {
    let terms = lexical::terms(text);
    let mut counts: FxHashMap<String, u16> = FxHashMap::default();
    for term in &terms {
        let count = counts.entry(term.clone()).or_default();
        *count = count.saturating_add(1);
    }
    (terms.len() as u32, counts.into_iter().collect())
}

/// The last build's index and the keys of its symbols' texts, when both are whole and belong
/// together.
pub struct Previous {
    view: IndexView,
    keys: Vec<Key>,
}

impl Previous {
    /// The keys file and search.bin, if the keys were written for the very index on disk (its
    /// hash is in search.sum and in the keys file, and the file hashes to it) of this index
    /// version. Anything else, missing or damaged, means a full build.
    pub fn open(store: &Store) -> Option<Previous> {
        let bytes = std::fs::read(store.postings_keys_path()).ok()?;
        let header = format!("{MAGIC} {INDEX_VERSION}\n");
        let rest = bytes.strip_prefix(header.as_bytes())?;
        let newline = rest.iter().position(|&b| b == b'\n')?;
        let index_hash = std::str::from_utf8(&rest[..newline]).ok()?;
        let raw = &rest[newline + 1..];
        let sums = std::fs::read_to_string(store.path(artifacts::SEARCH_SUMS)).ok()?;
        if sums.split_whitespace().next() != Some(index_hash) || raw.len() % 16 != 0 {
            return None;
        }
        let index_path = store.path(artifacts::SEARCH_INDEX);
        let on_disk = std::fs::File::open(&index_path)
            .and_then(reader_hash)
            .ok()?;
        if on_disk != index_hash {
            return None;
        }
        let view = IndexView::open(&index_path).ok()?;
        let keys: Vec<Key> = raw
            .chunks_exact(16)
            .map(|c| {
                let mut key = [0u8; 16];
                key.copy_from_slice(c);
                ContentHash(key)
            })
            .collect();
        let sections = [
            Section::Lengths,
            Section::PostingOffsets,
            Section::PostingEntries,
            Section::Offsets(Column::Term),
            Section::Blob(Column::Term),
        ];
        (keys.len() == view.len() && view.require(&sections).is_ok())
            .then_some(Previous { view, keys })
    }
}

/// Keeps `keys` (one per symbol of the index whose hash is `index_hash`) for the next build. A
/// cache: failing to write it only makes the next build tokenise everything.
pub fn save_keys(store: &Store, index_hash: &str, keys: &[Key]) -> std::io::Result<()> {
    let mut bytes = format!("{MAGIC} {INDEX_VERSION}\n{index_hash}\n").into_bytes();
    bytes.reserve(keys.len() * 16);
    for key in keys {
        bytes.extend_from_slice(&key.0);
    }
    store::write_atomic(&store.postings_keys_path(), &bytes)
}

/// What a build did: the postings, the key of every symbol's text, and how many texts it
/// tokenised.
pub struct Built {
    pub postings: Postings,
    pub keys: Vec<Key>,
    pub tokenised: usize,
}

/// The postings over every symbol of `corpus`, taking unchanged texts' terms from `previous`.
/// A previous index that turns out damaged while it is read is dropped for a full build.
pub fn build(corpus: &Corpus<'_>, previous: Option<&Previous>) -> Built {
    if let Some(previous) = previous {
        let built = reuse(corpus, previous);
        if previous.view.failure().is_none() {
            return built;
        }
    }
    full(corpus)
}

/// Tokenises every text, a chunk at a time, merging in symbol order so lists come sorted.
fn full(corpus: &Corpus<'_>) -> Built {
    let mut by_term: FxHashMap<String, Vec<(u32, u16)>> = FxHashMap::default();
    let mut lengths = Vec::with_capacity(corpus.len());
    let mut keys = Vec::with_capacity(corpus.len());
    let all: Vec<usize> = (0..corpus.len()).collect();
    for chunk in all.chunks(CHUNK) {
        let per_doc: Vec<(Key, DocTerms)> = chunk
            .par_iter()
            .map(|&i| {
                let text = corpus.lexical_text(i);
                (ContentHash::of(text.as_bytes()), doc_terms(&text))
            })
            .collect();
        for (&doc, (key, (length, counts))) in chunk.iter().zip(per_doc) {
            keys.push(key);
            lengths.push(length);
            for (term, tf) in counts {
                by_term.entry(term).or_default().push((doc as u32, tf));
            }
        }
    }
    let mut sorted: Vec<(String, Vec<(u32, u16)>)> = by_term.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let (terms, lists) = sorted.into_iter().unzip();
    Built {
        postings: Postings {
            terms,
            lists,
            lengths,
        },
        keys,
        tokenised: corpus.len(),
    }
}

/// For each symbol of the previous index, the symbols of this build with the same text (almost
/// always one or none).
struct Renumbering {
    first: Vec<u32>,
    more: FxHashMap<u32, Vec<u32>>,
}

const NONE: u32 = u32::MAX;

impl Renumbering {
    fn push(&mut self, old: u32, new: u32) {
        match &mut self.first[old as usize] {
            slot if *slot == NONE => *slot = new,
            _ => self.more.entry(old).or_default().push(new),
        }
    }

    fn each(&self, old: u32, mut visit: impl FnMut(u32)) {
        let first = self.first[old as usize];
        if first != NONE {
            visit(first);
            for &new in self.more.get(&old).into_iter().flatten() {
                visit(new);
            }
        }
    }
}

/// Tokenises only the texts `previous` lacks; the rest keep their old postings, renumbered.
fn reuse(corpus: &Corpus<'_>, previous: &Previous) -> Built {
    let keys: Vec<Key> = (0..corpus.len())
        .into_par_iter()
        .map(|i| ContentHash::of(corpus.lexical_text(i).as_bytes()))
        .collect();
    let mut old_of_key: FxHashMap<Key, u32> = FxHashMap::default();
    for (old, key) in previous.keys.iter().enumerate() {
        old_of_key.entry(*key).or_insert(old as u32);
    }
    let mut renumbering = Renumbering {
        first: vec![NONE; previous.keys.len()],
        more: FxHashMap::default(),
    };
    let mut lengths = vec![0u32; keys.len()];
    let mut fresh_docs = Vec::new();
    for (new, key) in keys.iter().enumerate() {
        match old_of_key.get(key) {
            Some(&old) => {
                renumbering.push(old, new as u32);
                lengths[new] = previous.view.length(old);
            }
            None => fresh_docs.push(new),
        }
    }
    drop(old_of_key);
    let tokenised: Vec<DocTerms> = fresh_docs
        .par_iter()
        .map(|&i| doc_terms(&corpus.lexical_text(i)))
        .collect();
    let mut fresh: BTreeMap<String, Vec<(u32, u16)>> = BTreeMap::new();
    for (&doc, (length, counts)) in fresh_docs.iter().zip(tokenised) {
        lengths[doc] = length;
        for (term, tf) in counts {
            fresh.entry(term).or_default().push((doc as u32, tf));
        }
    }
    let postings = merge(&previous.view, &renumbering, fresh, lengths);
    Built {
        postings,
        keys,
        tokenised: fresh_docs.len(),
    }
}

/// The old terms' lists renumbered, merged with the fresh texts' terms in term order; a term
/// no symbol has any more is dropped, as a full build would never have it.
fn merge(
    view: &IndexView,
    renumbering: &Renumbering,
    fresh: BTreeMap<String, Vec<(u32, u16)>>,
    lengths: Vec<u32>,
) -> Postings {
    let mut terms = Vec::new();
    let mut lists = Vec::new();
    let mut fresh = fresh.into_iter().peekable();
    let mut push = |term: String, mut list: Vec<(u32, u16)>| {
        if list.is_empty() {
            return;
        }
        if !list.is_sorted_by_key(|entry| entry.0) {
            list.sort_unstable_by_key(|entry| entry.0);
        }
        terms.push(term);
        lists.push(list);
    };
    for t in 0..view.text_count(Column::Term) {
        let term = view.text(Column::Term, t as u32).into_owned();
        while let Some((earlier, list)) = fresh.next_if(|(f, _)| f.as_str() < term.as_str()) {
            push(earlier, list);
        }
        let mut list = Vec::new();
        for (old, tf) in view.postings_at(t) {
            renumbering.each(old, |new| list.push((new, tf)));
        }
        if let Some((_, mut added)) = fresh.next_if(|(f, _)| *f == term) {
            list.append(&mut added);
        }
        push(term, list);
    }
    for (term, list) in fresh {
        push(term, list);
    }
    Postings {
        terms,
        lists,
        lengths,
    }
}
