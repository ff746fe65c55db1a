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
pub const INDEX_VERSION: u32 = 5;
/// `vector` of a symbol with no embedding.
pub const NO_VECTOR: u32 = u32::MAX;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexLayer {
    pub id: String,
    pub name: String,
    pub order: i64,
}

/// (Its fields' order is also [`SymbolVector`]'s.)
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
    /// The head of the index at `path`, reading only its first bytes; `None` if there is none
    /// of this version.
    pub fn read(path: &Path) -> Option<IndexHead> {
        Self::read_any(path).filter(|head| head.version == INDEX_VERSION)
    }

    /// The head at `path` whatever its version; `None` if there is no file or it is no index.
    pub fn read_any(path: &Path) -> Option<IndexHead> {
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
        codec::decode(&buf[..filled]).ok()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SearchIndex {
    /// Must stay the first fields, in [`IndexHead`]'s order.
    pub head: IndexHead,
    pub embedder: Option<Embedder>,
    /// Rows in vectors.f32.
    pub rows: u32,
    /// Content hash of vectors.f32 as written with this index: a matrix that does not match
    /// (a run killed between the two writes) is not used.
    pub vectors_hash: String,
    /// Up to here the fields are [`IndexPrefix`]'s, in its order.
    pub layers: Vec<IndexLayer>,
    pub symbols: Vec<IndexSymbol>,
    pub edges: Vec<IndexEdge>,
    pub postings: Postings,
}

/// The leading fields of [`SearchIndex`]: what a rebuild needs of the previous index (which
/// row each text hash has), decoded without holding the symbols' other fields, the edges or the
/// postings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct IndexPrefix {
    pub head: IndexHead,
    pub embedder: Option<Embedder>,
    pub rows: u32,
    pub vectors_hash: String,
    layers: Discard<Vec<IndexLayer>>,
    pub symbols: Vec<SymbolVector>,
}

/// Of an [`IndexSymbol`], only its text hash and row: its other fields, in their order, are
/// decoded and dropped.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SymbolVector {
    id: Discard<String>,
    kind: Discard<NodeKind>,
    name: Discard<String>,
    file: Discard<String>,
    line_start: Discard<u32>,
    line_end: Discard<u32>,
    layer: Discard<Option<u32>>,
    role: Discard<Role>,
    implements: Discard<Option<String>>,
    signature: Discard<Option<String>>,
    intent: Discard<Option<String>>,
    intent_source: Discard<Option<String>>,
    intent_current: Discard<bool>,
    doc: Discard<Option<String>>,
    parent: Discard<Option<u32>>,
    pub text_hash: String,
    pub vector: u32,
}

/// A field read (a format without field names must read every one) and not kept.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Discard<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Discard<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|_| Discard(std::marker::PhantomData))
    }
}

impl SearchIndex {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        codec::encode_sealed(self)
    }

    /// Writes what [`SearchIndex::encode`] gives to `out` as it is encoded.
    pub fn encode_into(&self, out: &mut impl std::io::Write) -> Result<(), String> {
        codec::encode_sealed_into(self, out)
    }

    /// Reads the index; the error names the file.
    pub fn load(path: &Path) -> Result<SearchIndex, String> {
        let index: SearchIndex = load_sealed(path)?;
        check_version(path, index.head.version)?;
        Ok(index)
    }
}

impl IndexPrefix {
    /// Reads the leading fields of the index at `path` (its checksum is verified whole).
    pub fn load(path: &Path) -> Result<IndexPrefix, String> {
        let prefix: IndexPrefix = load_sealed(path)?;
        check_version(path, prefix.head.version)?;
        Ok(prefix)
    }
}

fn load_sealed<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    codec::decode_sealed_file(path).map_err(|e| {
        format!(
            "{}: damaged, or not a search index of this version ({e})",
            path.display()
        )
    })
}

fn check_version(path: &Path, version: u32) -> Result<(), String> {
    if version == INDEX_VERSION {
        return Ok(());
    }
    Err(format!(
        "{}: index version {version} (this build reads {INDEX_VERSION})",
        path.display()
    ))
}

/// Reads `rows × dim` little-endian floats, with the content hash of the file's bytes (to
/// compare with [`SearchIndex::vectors_hash`]); read in pieces, so only the matrix is held.
/// The error names the file.
pub fn load_vectors(path: &Path, rows: usize, dim: usize) -> Result<(Vec<f32>, String), String> {
    use std::io::Read;
    let named = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(named)?;
    let size = file.metadata().map_err(named)?.len();
    if size != (rows * dim * 4) as u64 {
        return Err(format!(
            "{}: {size} bytes, expected {rows} rows of {dim} floats",
            path.display()
        ));
    }
    let mut floats = Vec::with_capacity(rows * dim);
    let mut hasher = crate::hash::Hasher::new();
    let mut piece = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut piece).map_err(named)?;
        if n == 0 {
            break;
        }
        // Pieces are whole floats unless a read came short: keep the remainder for the next.
        let whole = n - n % 4;
        hasher.update(&piece[..n]);
        floats.extend(
            piece[..whole]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        if whole < n {
            let mut rest = [0u8; 4];
            rest[..n - whole].copy_from_slice(&piece[whole..n]);
            file.read_exact(&mut rest[n - whole..]).map_err(named)?;
            hasher.update(&rest[n - whole..]);
            floats.push(f32::from_le_bytes(rest));
        }
    }
    if floats.len() != rows * dim {
        return Err(format!("{}: changed while it was read", path.display()));
    }
    Ok((floats, hasher.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_of_an_index_gives_each_symbols_text_hash_and_row() {
        let symbol = |id: &str, hash: &str, row: u32| IndexSymbol {
            id: id.to_string(),
            kind: NodeKind::Function,
            name: "f".to_string(),
            file: "a.py".to_string(),
            line_start: 3,
            line_end: 9,
            layer: Some(1),
            role: Role::Product,
            implements: Some("Trait".to_string()),
            signature: Some("def f(x)".to_string()),
            intent: Some("Does f.".to_string()),
            intent_source: Some("agent".to_string()),
            intent_current: true,
            doc: Some("Doc.".to_string()),
            parent: Some(0),
            text_hash: hash.to_string(),
            vector: row,
        };
        let index = SearchIndex {
            head: IndexHead {
                version: INDEX_VERSION,
                fingerprint: "fp".to_string(),
                ready: true,
                symbols: 2,
                vectors: 1,
            },
            embedder: Some(Embedder {
                id: "static:x".to_string(),
                dim: 4,
            }),
            rows: 1,
            vectors_hash: "vh".to_string(),
            layers: vec![IndexLayer {
                id: "core".to_string(),
                name: "Core".to_string(),
                order: 1,
            }],
            symbols: vec![symbol("a.py::f", "h1", 0), symbol("a.py::g", "", NO_VECTOR)],
            edges: vec![],
            postings: Postings::default(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search.bin");
        std::fs::write(&path, index.encode().unwrap()).unwrap();
        let prefix = IndexPrefix::load(&path).unwrap();
        assert_eq!((prefix.rows, prefix.vectors_hash.as_str()), (1, "vh"));
        let got: Vec<(&str, u32)> = prefix
            .symbols
            .iter()
            .map(|s| (s.text_hash.as_str(), s.vector))
            .collect();
        assert_eq!(got, vec![("h1", 0), ("", NO_VECTOR)]);
        assert_eq!(SearchIndex::load(&path).unwrap(), index);
    }
}
