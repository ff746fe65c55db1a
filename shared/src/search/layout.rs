//! search.bin's layout, read in place ([`super::view`]): a header a reader decodes from the
//! first bytes (magic, version, then [`IndexMeta`]), then fixed-width sections, then the
//! sections' directory in the trailer of a [`super::blocks`] file (every block hashed).
//!
//! Sections, all little-endian: one 32-byte record per symbol (kind, role, flags, layer,
//! parent, file, lines, vector row); one 20-byte record per edge; the edges leaving and
//! entering each symbol (offsets, then edge indices); terms per symbol; posting offsets per term
//! and (symbol u32, frequency u16) entries; and each text column as offsets (`count + 1` u32)
//! and a UTF-8 blob, so one value is read without the column.

use super::blocks::BlockWriter;
use super::{Embedder, IndexHead, IndexLayer, SearchIndex};
use crate::record::{EdgeKind, NodeKind, Role};
use serde::{Deserialize, Serialize};
use std::io::Write;

pub const MAGIC: &[u8; 4] = b"TGIX";
/// Magic, version (u32), meta length (u64).
pub const HEADER: usize = 16;
pub const RECORD: usize = 32;
pub const EDGE: usize = 20;
pub const POSTING: usize = 6;

/// The index's small fields, decoded whole at open. `head` stays first: [`IndexHead::read`]
/// decodes it alone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IndexMeta {
    pub head: IndexHead,
    pub embedder: Option<Embedder>,
    pub rows: u32,
    pub vectors_hash: String,
    pub layers: Vec<IndexLayer>,
    pub symbols: u32,
    pub edges: u32,
    pub files: u32,
    pub terms: u32,
}

/// A text column: offsets then blob, one value per symbol (per file, per term for those).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Id,
    Name,
    File,
    Implements,
    Signature,
    Intent,
    IntentSource,
    Doc,
    TextHash,
    Term,
}

impl Column {
    pub const ALL: [Column; 10] = [
        Column::Id,
        Column::Name,
        Column::File,
        Column::Implements,
        Column::Signature,
        Column::Intent,
        Column::IntentSource,
        Column::Doc,
        Column::TextHash,
        Column::Term,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Column::Id => "ids",
            Column::Name => "names",
            Column::File => "files",
            Column::Implements => "implements",
            Column::Signature => "signatures",
            Column::Intent => "intents",
            Column::IntentSource => "intent sources",
            Column::Doc => "docs",
            Column::TextHash => "text hashes",
            Column::Term => "terms",
        }
    }

    /// The record flag saying an optional value is present (`None`: always present).
    pub fn flag(self) -> Option<u16> {
        match self {
            Column::Implements => Some(flags::IMPLEMENTS),
            Column::Signature => Some(flags::SIGNATURE),
            Column::Intent => Some(flags::INTENT),
            Column::IntentSource => Some(flags::INTENT_SOURCE),
            Column::Doc => Some(flags::DOC),
            _ => None,
        }
    }
}

/// The fixed sections, after which come each column's offsets and blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Records,
    Edges,
    Out,
    In,
    Lengths,
    PostingOffsets,
    PostingEntries,
    Offsets(Column),
    Blob(Column),
}

pub const FIXED_SECTIONS: usize = 7;
pub const SECTIONS: usize = FIXED_SECTIONS + 2 * Column::ALL.len();

impl Section {
    /// Every section, in directory order.
    pub fn all() -> Vec<Section> {
        [
            Section::Records,
            Section::Edges,
            Section::Out,
            Section::In,
            Section::Lengths,
            Section::PostingOffsets,
            Section::PostingEntries,
        ]
        .into_iter()
        .chain(
            Column::ALL
                .iter()
                .flat_map(|&c| [Section::Offsets(c), Section::Blob(c)]),
        )
        .collect()
    }

    /// Position in the directory.
    pub fn slot(self) -> usize {
        let column = |c: Column| Column::ALL.iter().position(|&k| k == c).unwrap_or(0);
        match self {
            Section::Records => 0,
            Section::Edges => 1,
            Section::Out => 2,
            Section::In => 3,
            Section::Lengths => 4,
            Section::PostingOffsets => 5,
            Section::PostingEntries => 6,
            Section::Offsets(c) => FIXED_SECTIONS + 2 * column(c),
            Section::Blob(c) => FIXED_SECTIONS + 2 * column(c) + 1,
        }
    }

    pub fn name(self) -> String {
        match self {
            Section::Records => "symbol records".into(),
            Section::Edges => "edges".into(),
            Section::Out => "outgoing edges".into(),
            Section::In => "incoming edges".into(),
            Section::Lengths => "term counts".into(),
            Section::PostingOffsets => "posting offsets".into(),
            Section::PostingEntries => "postings".into(),
            Section::Offsets(c) => format!("{} offsets", c.name()),
            Section::Blob(c) => c.name().into(),
        }
    }
}

pub mod flags {
    pub const LAYER: u16 = 1;
    pub const PARENT: u16 = 1 << 1;
    pub const INTENT_CURRENT: u16 = 1 << 2;
    pub const IMPLEMENTS: u16 = 1 << 3;
    pub const SIGNATURE: u16 = 1 << 4;
    pub const INTENT: u16 = 1 << 5;
    pub const INTENT_SOURCE: u16 = 1 << 6;
    pub const DOC: u16 = 1 << 7;
    /// An edge from another symbol enters it (a call, import, include, inheritance): set when
    /// the index is written, so dead-code need not read the edges of a million symbols.
    pub const ENTERED: u16 = 1 << 8;
    /// An `@overload` signature (an index written before this bit reads as none).
    pub const STUB: u16 = 1 << 9;
}

pub fn kind_code(kind: NodeKind) -> u8 {
    NodeKind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as u8
}

pub fn role_code(role: Role) -> u8 {
    Role::ALL.iter().position(|&r| r == role).unwrap_or(0) as u8
}

pub fn edge_code(kind: EdgeKind) -> u8 {
    EdgeKind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as u8
}

/// Writes `index` in this layout to `out`, a section at a time.
pub fn write(index: &SearchIndex, out: impl Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let files = file_table(index);
    let meta = IndexMeta {
        head: index.head.clone(),
        embedder: index.embedder.clone(),
        rows: index.rows,
        vectors_hash: index.vectors_hash.clone(),
        layers: index.layers.clone(),
        symbols: count(index.symbols.len(), "symbols")?,
        edges: count(index.edges.len(), "edges")?,
        files: count(files.len(), "files")?,
        terms: count(index.postings.terms.len(), "terms")?,
    };
    let encoded = crate::codec::encode(&meta)?;
    let mut w = BlockWriter::new(out);
    w.write_all(MAGIC).map_err(io)?;
    w.write_all(&index.head.version.to_le_bytes()).map_err(io)?;
    w.write_all(&(encoded.len() as u64).to_le_bytes())
        .map_err(io)?;
    w.write_all(&encoded).map_err(io)?;
    let mut directory = vec![(0u64, 0u64); SECTIONS];
    let mut section = |w: &mut BlockWriter<_>, s: Section, bytes: Vec<u8>| -> Result<(), String> {
        directory[s.slot()] = (w.position(), bytes.len() as u64);
        w.write_all(&bytes).map_err(io)
    };
    section(&mut w, Section::Records, records(index, &files))?;
    section(&mut w, Section::Edges, edges(index))?;
    let (out_csr, in_csr) = adjacency(index);
    section(&mut w, Section::Out, out_csr)?;
    section(&mut w, Section::In, in_csr)?;
    section(&mut w, Section::Lengths, u32s(&index.postings.lengths))?;
    let (offsets, entries) = postings(index)?;
    section(&mut w, Section::PostingOffsets, offsets)?;
    section(&mut w, Section::PostingEntries, entries)?;
    for column in Column::ALL {
        let (offsets, blob) = text_column(index, &files, column)?;
        section(&mut w, Section::Offsets(column), offsets)?;
        section(&mut w, Section::Blob(column), blob)?;
    }
    let mut trailer = Vec::with_capacity(SECTIONS * 16);
    for (offset, len) in directory {
        trailer.extend_from_slice(&offset.to_le_bytes());
        trailer.extend_from_slice(&len.to_le_bytes());
    }
    let mut out = w.finish(&trailer).map_err(io)?;
    out.flush().map_err(io)
}

fn count(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("too many {what} for the index ({n})"))
}

/// The distinct files, sorted: records point into this table.
fn file_table(index: &SearchIndex) -> Vec<&str> {
    let mut files: Vec<&str> = index.symbols.iter().map(|s| s.file.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    files
}

fn u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn records(index: &SearchIndex, files: &[&str]) -> Vec<u8> {
    let mut entered = vec![false; index.symbols.len()];
    for e in index.edges.iter().filter(|e| e.src != e.dst) {
        if let Some(flag) = entered.get_mut(e.dst as usize) {
            *flag = true;
        }
    }
    let mut bytes = Vec::with_capacity(index.symbols.len() * RECORD);
    for (s, &entered) in index.symbols.iter().zip(&entered) {
        let mut flag = 0u16;
        for (present, bit) in [
            (s.layer.is_some(), flags::LAYER),
            (s.parent.is_some(), flags::PARENT),
            (s.intent_current, flags::INTENT_CURRENT),
            (s.implements.is_some(), flags::IMPLEMENTS),
            (s.signature.is_some(), flags::SIGNATURE),
            (s.intent.is_some(), flags::INTENT),
            (s.intent_source.is_some(), flags::INTENT_SOURCE),
            (s.doc.is_some(), flags::DOC),
            (entered, flags::ENTERED),
            (s.stub, flags::STUB),
        ] {
            if present {
                flag |= bit;
            }
        }
        bytes.push(kind_code(s.kind));
        bytes.push(role_code(s.role));
        bytes.extend_from_slice(&flag.to_le_bytes());
        let file = files.binary_search(&s.file.as_str()).unwrap_or(0) as u32;
        for value in [
            s.layer.unwrap_or(0),
            s.parent.unwrap_or(0),
            file,
            s.line_start,
            s.line_end,
            s.vector,
            0,
        ] {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
    }
    bytes
}

fn edges(index: &SearchIndex) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(index.edges.len() * EDGE);
    for e in &index.edges {
        for value in [e.src, e.dst, e.confidence.to_bits(), e.line] {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes.extend_from_slice(&[edge_code(e.kind), 0, 0, 0]);
    }
    bytes
}

/// Per symbol, the indices of the edges leaving it and entering it, in edge order: offsets
/// (`symbols + 1`), then the indices.
fn adjacency(index: &SearchIndex) -> (Vec<u8>, Vec<u8>) {
    let n = index.symbols.len();
    let csr = |end: fn(&super::IndexEdge) -> u32| {
        let mut offsets = vec![0u32; n + 1];
        for e in &index.edges {
            offsets[end(e) as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut list = vec![0u32; index.edges.len()];
        for (k, e) in index.edges.iter().enumerate() {
            let at = &mut next[end(e) as usize];
            list[*at as usize] = k as u32;
            *at += 1;
        }
        let mut bytes = u32s(&offsets);
        bytes.extend(u32s(&list));
        bytes
    };
    (csr(|e| e.src), csr(|e| e.dst))
}

fn postings(index: &SearchIndex) -> Result<(Vec<u8>, Vec<u8>), String> {
    let lists = &index.postings.lists;
    let mut offsets = Vec::with_capacity((lists.len() + 1) * 4);
    let mut entries = Vec::new();
    let mut at = 0u32;
    offsets.extend_from_slice(&at.to_le_bytes());
    for list in lists {
        at = at
            .checked_add(count(list.len(), "postings")?)
            .ok_or_else(|| "too many postings for the index".to_string())?;
        offsets.extend_from_slice(&at.to_le_bytes());
        for &(doc, tf) in list {
            entries.extend_from_slice(&doc.to_le_bytes());
            entries.extend_from_slice(&tf.to_le_bytes());
        }
    }
    Ok((offsets, entries))
}

fn text_column(
    index: &SearchIndex,
    files: &[&str],
    column: Column,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let values: Box<dyn Iterator<Item = &str>> = match column {
        Column::File => Box::new(files.iter().copied()),
        Column::Term => Box::new(index.postings.terms.iter().map(String::as_str)),
        _ => Box::new(index.symbols.iter().map(move |s| {
            let text = match column {
                Column::Id => Some(&s.id),
                Column::Name => Some(&s.name),
                Column::Implements => s.implements.as_ref(),
                Column::Signature => s.signature.as_ref(),
                Column::Intent => s.intent.as_ref(),
                Column::IntentSource => s.intent_source.as_ref(),
                Column::Doc => s.doc.as_ref(),
                _ => Some(&s.text_hash),
            };
            text.map_or("", String::as_str)
        })),
    };
    let mut offsets = 0u32.to_le_bytes().to_vec();
    let mut blob = Vec::new();
    for value in values {
        blob.extend_from_slice(value.as_bytes());
        let end = u32::try_from(blob.len())
            .map_err(|_| format!("the index's {} pass 4 GB", column.name()))?;
        offsets.extend_from_slice(&end.to_le_bytes());
    }
    Ok((offsets, blob))
}
