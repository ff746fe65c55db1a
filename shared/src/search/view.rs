//! search.bin read in place ([`super::layout`]): the header and directory at open, then each
//! section the first time an answer needs it, and single values of the large text columns
//! (signatures, intents, docs) without their column. Every byte read is checked
//! ([`super::blocks`]); every section is checked for shape when it is loaded, so no value read
//! from it can point outside the index. An accessor never panics: a section that could not be
//! loaded reads as empty, and [`IndexView::require`] reports why.

use super::blocks::BlockFile;
use super::layout::{
    flags, Column, IndexMeta, Section, EDGE, HEADER, MAGIC, POSTING, RECORD, SECTIONS,
};
use super::{IndexEdge, IndexLayer, NO_VECTOR};
use crate::record::{EdgeKind, NodeKind, Role};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub struct IndexView {
    file: BlockFile,
    path: PathBuf,
    pub meta: IndexMeta,
    directory: Vec<(u64, u64)>,
    loaded: Vec<OnceLock<Result<Vec<u8>, String>>>,
    /// The first read that failed after open (a damaged block under one value).
    failed: OnceLock<String>,
}

/// One symbol: its record's fields, and its text values read on demand.
#[derive(Clone, Copy)]
pub struct Symbol<'a> {
    view: &'a IndexView,
    pub index: u32,
    pub kind: NodeKind,
    pub role: Role,
    pub layer: Option<u32>,
    pub parent: Option<u32>,
    pub line_start: u32,
    pub line_end: u32,
    pub intent_current: bool,
    /// Row in vectors.i8, or [`NO_VECTOR`].
    pub vector: u32,
    file: u32,
    flags: u16,
}

impl IndexView {
    /// Opens the index at `path`: its footer, trailer and header are checked, nothing else is
    /// read. The error names the file.
    pub fn open(path: &Path) -> Result<IndexView, String> {
        let damaged = |what: String| format!("{}: damaged ({what})", path.display());
        let (file, trailer) =
            BlockFile::open(path).map_err(|e| {
                match super::IndexHead::read_any(path).filter(|h| h.version != super::INDEX_VERSION)
                {
                    Some(head) => format!(
                        "{}: index version {} (this build reads {})",
                        path.display(),
                        head.version,
                        super::INDEX_VERSION
                    ),
                    None => e,
                }
            })?;
        let header = file.read(0, HEADER as u64)?;
        if &header[..4] != MAGIC {
            return Err(damaged("no index header".into()));
        }
        let version = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        super::check_version(path, version)?;
        let meta_len = u64_le(&header, 8);
        let meta: IndexMeta = crate::codec::decode(&file.read(HEADER as u64, meta_len)?)
            .map_err(|e| damaged(format!("header: {e}")))?;
        if trailer.len() != SECTIONS * 16 {
            return Err(damaged("section directory".into()));
        }
        let directory = trailer
            .chunks_exact(16)
            .map(|c| (u64_le(c, 0), u64_le(c, 8)))
            .collect();
        Ok(IndexView {
            file,
            path: path.to_path_buf(),
            meta,
            directory,
            loaded: (0..SECTIONS).map(|_| OnceLock::new()).collect(),
            failed: OnceLock::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> usize {
        self.meta.symbols as usize
    }

    pub fn is_empty(&self) -> bool {
        self.meta.symbols == 0
    }

    pub fn layers(&self) -> &[IndexLayer] {
        &self.meta.layers
    }

    pub fn edge_count(&self) -> usize {
        self.meta.edges as usize
    }

    /// Loads `sections` now; the first that is damaged or malformed, and why.
    pub fn require(&self, sections: &[Section]) -> Result<(), String> {
        use rayon::prelude::*;
        // Loaded and checked side by side; the first damaged in `sections`' order is reported.
        let outcomes: Vec<Result<(), String>> = sections
            .par_iter()
            .map(|&s| self.load(s).map(|_| ()).map_err(str::to_string))
            .collect();
        outcomes.into_iter().collect()
    }

    fn load(&self, s: Section) -> Result<&[u8], &str> {
        self.loaded[s.slot()]
            .get_or_init(|| {
                let (offset, len) = self.directory[s.slot()];
                let bytes = self.file.read(offset, len)?;
                self.check_shape(s, &bytes).map_err(|why| {
                    format!("{}: damaged {} ({why})", self.path.display(), s.name())
                })?;
                Ok(bytes)
            })
            .as_deref()
            .map_err(String::as_str)
    }

    /// A loaded section's bytes; empty if it could not be loaded (kept for
    /// [`IndexView::failure`]).
    fn bytes(&self, s: Section) -> &[u8] {
        match self.load(s) {
            Ok(bytes) => bytes,
            Err(why) => {
                self.fail(why.to_string());
                &[]
            }
        }
    }

    fn fail(&self, why: String) {
        let _ = self.failed.set(why);
    }

    /// Why a read since open failed, if one did: an answer computed with it is not to be given.
    pub fn failure(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Values in a column: symbols, files or terms.
    pub fn text_count(&self, c: Column) -> usize {
        match c {
            Column::File => self.meta.files as usize,
            Column::Term => self.meta.terms as usize,
            _ => self.len(),
        }
    }

    /// Small columns, read whole at their first use; the others are read a value at a time
    /// unless an answer that scans them loaded them ([`IndexView::require`]).
    fn read_whole(c: Column) -> bool {
        matches!(
            c,
            Column::Name | Column::File | Column::Implements | Column::IntentSource
        )
    }

    /// `len` bytes at `at` in section `s`: from the loaded section, else read alone (and
    /// checked). Empty past the section or when the read failed (kept for
    /// [`IndexView::failure`]).
    fn slice(&self, s: Section, at: usize, len: usize) -> Cow<'_, [u8]> {
        if let Some(Ok(bytes)) = self.loaded[s.slot()].get() {
            return Cow::Borrowed(bytes.get(at..at.saturating_add(len)).unwrap_or(&[]));
        }
        let (offset, size) = self.directory[s.slot()];
        if at.saturating_add(len) as u64 > size {
            return Cow::Borrowed(&[]);
        }
        let Some(start) = offset.checked_add(at as u64) else {
            self.fail(format!(
                "{}: damaged (a section past the end)",
                self.path.display()
            ));
            return Cow::Borrowed(&[]);
        };
        match self.file.read(start, len as u64) {
            Ok(bytes) => Cow::Owned(bytes),
            Err(why) => {
                self.fail(why);
                Cow::Borrowed(&[])
            }
        }
    }

    /// The `k`-th u32 of section `s`.
    fn u32_of(&self, s: Section, k: usize) -> u32 {
        u32_at(&self.slice(s, k * 4, 4), 0)
    }

    fn is_loaded(&self, s: Section) -> bool {
        matches!(self.loaded[s.slot()].get(), Some(Ok(_)))
    }

    /// The `k`-th value of column `c`; empty if there is none or it could not be read.
    pub fn text(&self, c: Column, k: u32) -> Cow<'_, str> {
        let offsets = Section::Offsets(c);
        let (start, end) = (
            self.u32_of(offsets, k as usize),
            self.u32_of(offsets, k as usize + 1),
        );
        if end <= start {
            return Cow::Borrowed("");
        }
        let blob = Section::Blob(c);
        if Self::read_whole(c) || self.is_loaded(blob) {
            let value = self
                .bytes(blob)
                .get(start as usize..end as usize)
                .unwrap_or(&[]);
            return Cow::Borrowed(std::str::from_utf8(value).unwrap_or(""));
        }
        match self.slice(blob, start as usize, (end - start) as usize) {
            Cow::Borrowed(_) => Cow::Borrowed(""),
            Cow::Owned(bytes) => String::from_utf8(bytes)
                .map(Cow::Owned)
                .unwrap_or_else(|_| {
                    self.fail(format!(
                        "{}: damaged {} (not UTF-8)",
                        self.path.display(),
                        c.name()
                    ));
                    Cow::Borrowed("")
                }),
        }
    }

    /// The values of column `c` that contain `needle`, by index, in order: one substring
    /// search over the column's blob, each match placed by its offsets, instead of a value at
    /// a time. Loads the column whole; empty when it could not be loaded.
    pub fn texts_containing(&self, c: Column, needle: &[u8]) -> Vec<u32> {
        let (offsets, blob) = (
            self.bytes(Section::Offsets(c)),
            self.bytes(Section::Blob(c)),
        );
        let count = self.text_count(c);
        let offset = |k: usize| u32_at(offsets, k) as usize;
        let mut found: Vec<u32> = Vec::new();
        if needle.is_empty() || offsets.len() < (count + 1) * 4 {
            return found;
        }
        for at in memchr::memmem::find_iter(blob, needle) {
            // The value holding byte `at`: the last whose start is at or before it.
            let (mut low, mut high) = (0, count);
            while low < high {
                let mid = low + (high - low) / 2;
                if offset(mid) <= at {
                    low = mid + 1;
                } else {
                    high = mid;
                }
            }
            let k = low.saturating_sub(1);
            let fits = at + needle.len() <= offset(k + 1);
            if fits && found.last() != Some(&(k as u32)) {
                found.push(k as u32);
            }
        }
        found
    }

    /// Symbol `i`; a default one past the end or when its record is damaged.
    pub fn symbol(&self, i: u32) -> Symbol<'_> {
        let read = self.slice(Section::Records, i as usize * RECORD, RECORD);
        let mut r = [0u8; RECORD];
        if read.len() == RECORD {
            r.copy_from_slice(&read);
        }
        if read.len() == RECORD && !self.is_loaded(Section::Records) {
            if let Err(why) = self.check_record(&r, i) {
                self.fail(format!(
                    "{}: damaged symbol records ({why})",
                    self.path.display()
                ));
                r = [0u8; RECORD];
            }
        }
        let flags = u16::from_le_bytes([r[2], r[3]]);
        let has = |bit: u16| flags & bit != 0;
        Symbol {
            view: self,
            index: i,
            kind: NodeKind::ALL
                .get(r[0] as usize)
                .copied()
                .unwrap_or(NodeKind::Module),
            role: Role::ALL.get(r[1] as usize).copied().unwrap_or_default(),
            layer: has(flags::LAYER).then(|| u32_at(&r, 1)),
            parent: has(flags::PARENT).then(|| u32_at(&r, 2)),
            file: u32_at(&r, 3),
            line_start: u32_at(&r, 4),
            line_end: u32_at(&r, 5),
            vector: u32_at(&r, 6),
            intent_current: has(flags::INTENT_CURRENT),
            flags,
        }
    }

    /// Edge `e`; a self-edge of symbol 0 that is no call when it is past the end or damaged.
    pub fn edge(&self, e: u32) -> IndexEdge {
        let read = self.slice(Section::Edges, e as usize * EDGE, EDGE);
        let mut r = [0u8; EDGE];
        if read.len() == EDGE {
            r.copy_from_slice(&read);
        }
        if read.len() == EDGE
            && !self.is_loaded(Section::Edges)
            && check_edge(&r, self.len()).is_err()
        {
            self.fail(format!("{}: damaged edges (edge {e})", self.path.display()));
            r = [0u8; EDGE];
        }
        IndexEdge {
            src: u32_at(&r, 0),
            dst: u32_at(&r, 1),
            confidence: f32::from_bits(u32_at(&r, 2)),
            line: u32_at(&r, 3),
            kind: EdgeKind::ALL
                .get(r[16] as usize)
                .copied()
                .unwrap_or(EdgeKind::Contains),
        }
    }

    /// Indices of the edges leaving symbol `i`, in edge order.
    pub fn out_edges(&self, i: u32) -> Vec<u32> {
        self.adjacent(Section::Out, i)
    }

    /// Indices of the edges entering symbol `i`, in edge order.
    pub fn in_edges(&self, i: u32) -> Vec<u32> {
        self.adjacent(Section::In, i)
    }

    fn adjacent(&self, s: Section, i: u32) -> Vec<u32> {
        let (a, b) = (self.u32_of(s, i as usize), self.u32_of(s, i as usize + 1));
        let count = b.saturating_sub(a) as usize;
        let list = self.slice(s, (self.len() + 1 + a as usize) * 4, count * 4);
        (0..list.len() / 4).map(|k| u32_at(&list, k)).collect()
    }

    /// Terms counted for symbol `i`.
    pub fn length(&self, i: u32) -> u32 {
        self.u32_of(Section::Lengths, i as usize)
    }

    /// Terms counted over all symbols.
    pub fn total_length(&self) -> u64 {
        let lengths = self.bytes(Section::Lengths);
        (0..lengths.len() / 4)
            .map(|i| u64::from(u32_at(lengths, i)))
            .sum()
    }

    /// The postings of `term`: (symbol, frequency) by symbol; empty for an unknown term.
    pub fn postings(&self, term: &str) -> Vec<(u32, u16)> {
        let terms = self.text_count(Column::Term);
        let (mut low, mut high) = (0usize, terms);
        while low < high {
            let mid = (low + high) / 2;
            match self.text(Column::Term, mid as u32).as_ref().cmp(term) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return self.postings_at(mid),
            }
        }
        Vec::new()
    }

    /// The postings of the `t`-th term in sorted order ([`Self::text`] of [`Column::Term`]).
    pub fn postings_at(&self, t: usize) -> Vec<(u32, u16)> {
        let offsets = Section::PostingOffsets;
        let (a, b) = (self.u32_of(offsets, t), self.u32_of(offsets, t + 1));
        let bytes = self.slice(
            Section::PostingEntries,
            a as usize * POSTING,
            b.saturating_sub(a) as usize * POSTING,
        );
        let n = self.meta.symbols;
        let list: Vec<(u32, u16)> = bytes
            .chunks_exact(POSTING)
            .map(|p| {
                let doc = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
                (doc, u16::from_le_bytes([p[4], p[5]]))
            })
            .collect();
        if list.iter().any(|&(doc, _)| doc >= n) {
            self.fail(format!(
                "{}: damaged postings (a symbol past the end)",
                self.path.display()
            ));
            return Vec::new();
        }
        list
    }
}

impl<'a> Symbol<'a> {
    fn optional(&self, c: Column) -> Option<Cow<'a, str>> {
        let bit = c.flag().unwrap_or(0);
        (self.flags & bit != 0).then(|| self.view.text(c, self.index))
    }

    pub fn id(&self) -> Cow<'a, str> {
        self.view.text(Column::Id, self.index)
    }

    pub fn name(&self) -> Cow<'a, str> {
        self.view.text(Column::Name, self.index)
    }

    pub fn file(&self) -> Cow<'a, str> {
        self.view.text(Column::File, self.file)
    }

    /// Whether an edge from another symbol enters it (read from its record, not the edges).
    pub fn is_entered(&self) -> bool {
        self.flags & flags::ENTERED != 0
    }

    /// Whether it is an `@overload` signature, which no call reaches.
    pub fn is_stub(&self) -> bool {
        self.flags & flags::STUB != 0
    }

    pub fn implements(&self) -> Option<Cow<'a, str>> {
        self.optional(Column::Implements)
    }

    pub fn signature(&self) -> Option<Cow<'a, str>> {
        self.optional(Column::Signature)
    }

    pub fn intent(&self) -> Option<Cow<'a, str>> {
        self.optional(Column::Intent)
    }

    /// `agent`, `llm` or `doc`.
    pub fn intent_source(&self) -> Option<Cow<'a, str>> {
        self.optional(Column::IntentSource)
    }

    pub fn doc(&self) -> Option<Cow<'a, str>> {
        self.optional(Column::Doc)
    }

    /// Hash of the text embedded for it.
    pub fn text_hash(&self) -> Cow<'a, str> {
        self.view.text(Column::TextHash, self.index)
    }

    pub fn has_vector(&self) -> bool {
        self.vector != NO_VECTOR
    }
}

fn u32_at(bytes: &[u8], k: usize) -> u32 {
    match bytes.get(k * 4..k * 4 + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

fn u64_le(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

impl IndexView {
    /// Whether a loaded section has the shape its counts say, and points only inside the
    /// index: a file that passed its checksums but was written wrong must not send a reader
    /// out of bounds.
    fn check_shape(&self, s: Section, bytes: &[u8]) -> Result<(), String> {
        let (n, m) = (self.len(), self.edge_count());
        let expect = |want: usize| {
            if bytes.len() == want {
                Ok(())
            } else {
                Err(format!("{} bytes, expected {want}", bytes.len()))
            }
        };
        match s {
            Section::Records => {
                expect(n * RECORD)?;
                (bytes.chunks_exact(RECORD).zip(0u32..))
                    .try_for_each(|(record, i)| self.check_record(record, i))
            }
            Section::Edges => {
                expect(m * EDGE)?;
                bytes
                    .chunks_exact(EDGE)
                    .try_for_each(|record| check_edge(record, n))
            }
            Section::Out | Section::In => {
                expect((n + 1 + m) * 4)?;
                check_offsets(bytes, n, m)?;
                (n + 1..n + 1 + m)
                    .all(|k| (u32_at(bytes, k) as usize) < m)
                    .then_some(())
                    .ok_or_else(|| "an edge index past the edges".to_string())
            }
            Section::Lengths => expect(n * 4),
            Section::PostingOffsets => {
                let entries = self.directory[Section::PostingEntries.slot()].1 as usize;
                let terms = self.text_count(Column::Term);
                expect((terms + 1) * 4)?;
                check_offsets(bytes, terms, entries / POSTING)
            }
            Section::PostingEntries => {
                expect(bytes.len() - bytes.len() % POSTING)?;
                bytes
                    .chunks_exact(POSTING)
                    .all(|p| (u32_at(p, 0) as usize) < n)
                    .then_some(())
                    .ok_or_else(|| "a symbol past the end".to_string())
            }
            Section::Offsets(c) => {
                let count = self.text_count(c);
                expect((count + 1) * 4)?;
                check_offsets(
                    bytes,
                    count,
                    self.directory[Section::Blob(c).slot()].1 as usize,
                )
            }
            Section::Blob(c) => {
                let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
                let offsets = self.bytes(Section::Offsets(c));
                (0..=self.text_count(c))
                    .all(|k| text.is_char_boundary(u32_at(offsets, k) as usize))
                    .then_some(())
                    .ok_or_else(|| "a value cut inside a character".to_string())
            }
        }
    }

    /// Whether one record (of symbol `i`) points only inside the index.
    fn check_record(&self, symbol: &[u8], i: u32) -> Result<(), String> {
        let flags = u16::from_le_bytes([symbol[2], symbol[3]]);
        let (layer, parent, file, vector) = (
            u32_at(symbol, 1),
            u32_at(symbol, 2),
            u32_at(symbol, 3),
            u32_at(symbol, 6),
        );
        let ok = (symbol[0] as usize) < NodeKind::ALL.len()
            && (symbol[1] as usize) < Role::ALL.len()
            && (flags & flags::LAYER == 0 || (layer as usize) < self.meta.layers.len())
            && (flags & flags::PARENT == 0 || (parent as usize) < self.len())
            && file < self.meta.files.max(1)
            && (vector == NO_VECTOR || vector < self.meta.rows);
        ok.then_some(())
            .ok_or_else(|| format!("symbol {i} points outside the index"))
    }
}

/// Whether one edge record joins two symbols of `n` by a known kind.
fn check_edge(record: &[u8], n: usize) -> Result<(), String> {
    let inside = (u32_at(record, 0) as usize) < n && (u32_at(record, 1) as usize) < n;
    let kind = record
        .get(16)
        .is_some_and(|&k| (k as usize) < EdgeKind::ALL.len());
    (inside && kind)
        .then_some(())
        .ok_or_else(|| "an edge outside the index".to_string())
}

/// Offsets (`count + 1` u32 at the start of `bytes`): from 0, never decreasing, ending at `end`.
fn check_offsets(bytes: &[u8], count: usize, end: usize) -> Result<(), String> {
    let mut previous = 0u32;
    for k in 0..=count {
        let at = u32_at(bytes, k);
        if at < previous || (k == 0 && at != 0) {
            return Err("offsets out of order".into());
        }
        previous = at;
    }
    if previous as usize != end {
        return Err(format!("offsets end at {previous}, expected {end}"));
    }
    Ok(())
}

impl IndexView {
    /// The whole index in memory (tests, and tools that rewrite an index).
    pub fn to_index(&self) -> super::SearchIndex {
        let every = Section::all();
        if let Err(why) = self.require(&every) {
            self.fail(why);
        }
        let symbols = (0..self.len() as u32)
            .map(|i| {
                let s = self.symbol(i);
                let owned = |c: Option<Cow<'_, str>>| c.map(Cow::into_owned);
                super::IndexSymbol {
                    id: s.id().into_owned(),
                    kind: s.kind,
                    name: s.name().into_owned(),
                    file: s.file().into_owned(),
                    line_start: s.line_start,
                    line_end: s.line_end,
                    layer: s.layer,
                    role: s.role,
                    implements: owned(s.implements()),
                    stub: s.is_stub(),
                    signature: owned(s.signature()),
                    intent: owned(s.intent()),
                    intent_source: owned(s.intent_source()),
                    intent_current: s.intent_current,
                    doc: owned(s.doc()),
                    parent: s.parent,
                    text_hash: s.text_hash().into_owned(),
                    vector: s.vector,
                }
            })
            .collect();
        let terms: Vec<String> = (0..self.meta.terms)
            .map(|t| self.text(Column::Term, t).into_owned())
            .collect();
        let lists = terms.iter().map(|t| self.postings(t)).collect();
        super::SearchIndex {
            head: self.meta.head.clone(),
            embedder: self.meta.embedder.clone(),
            rows: self.meta.rows,
            vectors_hash: self.meta.vectors_hash.clone(),
            layers: self.meta.layers.clone(),
            symbols,
            edges: (0..self.meta.edges).map(|e| self.edge(e)).collect(),
            postings: super::Postings {
                terms,
                lists,
                lengths: (0..self.meta.symbols).map(|i| self.length(i)).collect(),
            },
        }
    }
}
