//! `.tldrgraph/search.bin` and `.tldrgraph/vectors.f32`: what tg-embed builds and tg-query
//! reads. The first (bincode, behind [`crate::codec`]) holds the symbols with their intents,
//! layers, call edges, BM25 postings and, per symbol, the hash of the text it was embedded from
//! and its row in the second: a flat little-endian f32 matrix (`rows × dim`), mmap-friendly and
//! read in one go. A rerun embeds only texts whose hash is new.

use crate::codec;
use crate::record::{EdgeKind, NodeKind, Role};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bumped when the layout or the embedded text changes: an older index is rebuilt whole.
pub const INDEX_VERSION: u32 = 4;
/// `vector` of a symbol with no embedding.
pub const NO_VECTOR: u32 = u32::MAX;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexLayer {
    pub id: String,
    pub name: String,
    pub order: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexSymbol {
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Index into [`SearchIndex::layers`].
    pub layer: Option<u32>,
    pub role: Role,
    /// The trait a method implements (Rust `impl Trait for T`).
    pub implements: Option<String>,
    pub signature: Option<String>,
    pub intent: Option<String>,
    /// `agent`, `llm` or `doc`.
    pub intent_source: Option<String>,
    /// Whether `intent` was written for the present source (false for a stale one).
    pub intent_current: bool,
    pub doc: Option<String>,
    /// Index of the enclosing symbol.
    pub parent: Option<u32>,
    /// Hash of the text embedded for it.
    pub text_hash: String,
    /// Row in vectors.f32, or [`NO_VECTOR`].
    pub vector: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEdge {
    pub src: u32,
    pub dst: u32,
    pub kind: EdgeKind,
    /// From the edge's resolution; 1.0 when it has none.
    pub confidence: f32,
    pub line: u32,
}

/// How the vectors were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embedder {
    /// `static:all-MiniLM-L6-v2:<hash>`, or `http:<base url>:<model>`.
    pub id: String,
    pub dim: u32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Postings {
    /// Sorted terms.
    pub terms: Vec<String>,
    /// Per term: (symbol, term frequency), by symbol.
    pub lists: Vec<Vec<(u32, u16)>>,
    /// Terms per symbol.
    pub lengths: Vec<u32>,
}

/// The first fields of [`SearchIndex`], readable without decoding the rest: a rerun whose input
/// has this fingerprint has nothing to do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IndexHead {
    pub version: u32,
    /// Hash of the index version, the embedder and the input stream.
    pub fingerprint: String,
    /// What the building run's summary said: embeddings ready, symbols, vectors.
    pub ready: bool,
    pub symbols: u64,
    pub vectors: u64,
}

impl IndexHead {
    /// The head of the index at `path`, reading only its first bytes; `None` if there is none.
    pub fn read(path: &Path) -> Option<IndexHead> {
        use std::io::Read;
        let mut buf = vec![0u8; 4096];
        let mut file = std::fs::File::open(path).ok()?;
        let mut filled = 0;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(_) => return None,
            }
        }
        let head: IndexHead = codec::decode(&buf[..filled]).ok()?;
        (head.version == INDEX_VERSION).then_some(head)
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SearchIndex {
    /// Must stay the first fields, in [`IndexHead`]'s order.
    pub head: IndexHead,
    pub embedder: Option<Embedder>,
    pub layers: Vec<IndexLayer>,
    pub symbols: Vec<IndexSymbol>,
    pub edges: Vec<IndexEdge>,
    pub postings: Postings,
    /// Rows in vectors.f32.
    pub rows: u32,
    /// Content hash of vectors.f32 as written with this index: a matrix that does not match
    /// (a run killed between the two writes) is not used.
    pub vectors_hash: String,
}

impl SearchIndex {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        codec::encode_sealed(self)
    }

    /// Reads the index; the error names the file.
    pub fn load(path: &Path) -> Result<SearchIndex, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let index: SearchIndex = codec::decode_sealed(&bytes).map_err(|e| {
            format!(
                "{}: damaged, or not a search index of this version ({e})",
                path.display()
            )
        })?;
        if index.head.version != INDEX_VERSION {
            return Err(format!(
                "{}: index version {} (this build reads {INDEX_VERSION})",
                path.display(),
                index.head.version
            ));
        }
        Ok(index)
    }
}

/// The matrix as bytes (little-endian f32).
pub fn vectors_to_bytes(vectors: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vectors.len() * 4);
    for v in vectors {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Reads `rows × dim` floats; the error names the file.
pub fn load_vectors(path: &Path, rows: usize, dim: usize) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() != rows * dim * 4 {
        return Err(format!(
            "{}: {} bytes, expected {rows} rows of {dim} floats",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
