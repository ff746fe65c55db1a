//! `.tldrgraph/search.bin` and `.tldrgraph/vectors.i8`: what tg-embed builds and tg-query
//! reads. The first (bincode, behind [`crate::codec`]) holds the symbols with their intents,
//! layers, call edges, BM25 postings and, per symbol, the hash of the text it was embedded from
//! and its row in the second: `rows` rows of [`row_bytes`] each, a little-endian f32 scale then
//! `dim` signed bytes (see [`quantize`]), a quarter of the f32 matrix's size. A rerun embeds
//! only texts whose hash is new, and copies the rows of the others.

use crate::codec;
use crate::record::{EdgeKind, NodeKind, Role};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bumped when the layout or the embedded text changes: an older index is rebuilt whole.
pub const INDEX_VERSION: u32 = 6;
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
    /// Row in vectors.i8, or [`NO_VECTOR`].
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
    /// Rows in vectors.i8.
    pub rows: u32,
    /// Content hash of vectors.i8 as written with this index: a matrix that does not match
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

/// The bytes of one row of vectors.i8 for vectors of `dim` dimensions.
pub fn row_bytes(dim: usize) -> usize {
    4 + dim
}

/// A vector as its row: `scale` (f32, little-endian), then each component as the signed byte
/// nearest `component / scale`, with `scale` the largest magnitude over 127. Cosine ranking
/// keeps its order to within the rounding (measured on the retrieval benchmark, BENCHMARKS.md).
pub fn quantize(vector: &[f32]) -> Vec<u8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if largest > 0.0 { largest / 127.0 } else { 0.0 };
    let mut row = Vec::with_capacity(row_bytes(vector.len()));
    row.extend_from_slice(&scale.to_le_bytes());
    row.extend(vector.iter().map(|x| {
        let q = if scale > 0.0 {
            (x / scale).round()
        } else {
            0.0
        };
        q.clamp(-127.0, 127.0) as i8 as u8
    }));
    row
}

/// vectors.i8 in memory: rows of [`row_bytes`].
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    bytes: Vec<u8>,
    dim: usize,
}

/// One row: `scale × values` approximates the vector.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub scale: f32,
    pub values: &'a [u8],
}

impl Row<'_> {
    /// The dot product with `query` (the cosine, for unit vectors).
    pub fn dot(&self, query: &[f32]) -> f32 {
        let sum: f32 = self
            .values
            .iter()
            .zip(query)
            .map(|(&q, x)| f32::from(q as i8) * x)
            .sum();
        sum * self.scale
    }
}

impl Matrix {
    pub fn row(&self, row: usize) -> Option<Row<'_>> {
        let width = row_bytes(self.dim);
        let bytes = self.bytes.get(row * width..(row + 1) * width)?;
        let (scale, values) = bytes.split_at(4);
        Some(Row {
            scale: f32::from_le_bytes([scale[0], scale[1], scale[2], scale[3]]),
            values,
        })
    }
}

/// Reads the `rows` rows of vectors.i8 for `dim` dimensions, with the content hash of its bytes
/// (to compare with [`SearchIndex::vectors_hash`]). The error names the file.
pub fn load_vectors(path: &Path, rows: usize, dim: usize) -> Result<(Matrix, String), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() != rows * row_bytes(dim) {
        return Err(format!(
            "{}: {} bytes, expected {rows} rows of {dim} dimensions",
            path.display(),
            bytes.len()
        ));
    }
    let hash = crate::hash::content_hash(&bytes);
    Ok((Matrix { bytes, dim }, hash))
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

    #[test]
    fn a_quantised_row_keeps_the_dot_product_to_within_its_rounding() {
        let vector = [0.5f32, -0.25, 0.125, 0.0, -0.75, 0.3];
        let query = [0.1f32, 0.7, -0.2, 0.4, 0.3, -0.5];
        let row = quantize(&vector);
        assert_eq!(row.len(), row_bytes(vector.len()));
        let matrix = Matrix {
            bytes: [row.clone(), quantize(&[0.0; 6])].concat(),
            dim: 6,
        };
        let exact: f32 = vector.iter().zip(&query).map(|(a, b)| a * b).sum();
        let got = matrix.row(0).unwrap().dot(&query);
        // Each component is off by at most half a step of 0.75/127.
        let bound = 0.5 * 0.75 / 127.0 * query.iter().map(|x| x.abs()).sum::<f32>();
        assert!((got - exact).abs() <= bound, "{got} vs {exact}");
        assert_eq!(
            matrix.row(0).unwrap().values[4] as i8,
            -127,
            "the largest is full scale"
        );
        assert_eq!(
            matrix.row(1).unwrap().dot(&query),
            0.0,
            "a zero vector stays zero"
        );
        assert!(matrix.row(2).is_none());
    }
}
