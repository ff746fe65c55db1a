//! `.tldrgraph/search.bin` and `.tldrgraph/vectors.i8`: what tg-embed builds and tg-query
//! reads. The first ([`layout`], read in place by [`IndexView`]) holds the symbols with their
//! intents, layers, call edges, BM25 postings and, per symbol, the hash of the text it was
//! embedded from and its row in the second: `rows` rows of [`row_bytes`] each, a little-endian f32 scale then
//! `dim` signed bytes (see [`quantize`]), a quarter of the f32 matrix's size. A rerun embeds
//! only texts whose hash is new, and copies the rows of the others.

pub mod blocks;
pub mod layout;
pub mod view;

use crate::codec;
use crate::record::{EdgeKind, NodeKind, Role};
use serde::{Deserialize, Serialize};
use std::path::Path;
pub use view::IndexView;

/// Bumped when the layout or the embedded text changes: an older index is rebuilt whole.
pub const INDEX_VERSION: u32 = 9;
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
    /// An `@overload` signature: never what a name or a search means.
    pub stub: bool,
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

impl IndexSymbol {
    /// A product function with only its id, in the file its id names, on line 1, with no
    /// vector: what a caller fills in from (`IndexSymbol { kind, ..IndexSymbol::with_id(id) }`).
    pub fn with_id(id: &str) -> IndexSymbol {
        IndexSymbol {
            id: id.to_string(),
            kind: NodeKind::Function,
            name: String::new(),
            file: id.split("::").next().unwrap_or(id).to_string(),
            line_start: 1,
            line_end: 1,
            layer: None,
            role: Role::Product,
            implements: None,
            stub: false,
            signature: None,
            intent: None,
            intent_source: None,
            intent_current: false,
            doc: None,
            parent: None,
            text_hash: String::new(),
            vector: NO_VECTOR,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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

    /// The head at `path` whatever its version (an index older than the in-place layout
    /// began with its head); `None` if there is no file or it is no index.
    pub fn read_any(path: &Path) -> Option<IndexHead> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).ok()?;
        let mut start = vec![0u8; 4096];
        let mut filled = 0;
        while filled < start.len() {
            match file.read(&mut start[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(_) => return None,
            }
        }
        let start = &start[..filled];
        if !start.starts_with(layout::MAGIC) {
            return codec::decode(start).ok();
        }
        // The meta's first field is the head, and bincode reads a prefix.
        codec::decode(start.get(layout::HEADER..)?).ok()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SearchIndex {
    pub head: IndexHead,
    pub embedder: Option<Embedder>,
    /// Rows in vectors.i8.
    pub rows: u32,
    /// Content hash of vectors.i8 as written with this index: a matrix that does not match
    /// (a run killed between the two writes) is not used.
    pub vectors_hash: String,
    pub layers: Vec<IndexLayer>,
    pub symbols: Vec<IndexSymbol>,
    pub edges: Vec<IndexEdge>,
    pub postings: Postings,
}

impl SearchIndex {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        layout::write(self, &mut bytes)?;
        Ok(bytes)
    }

    /// Writes what [`SearchIndex::encode`] gives to `out`, a section at a time.
    pub fn encode_into(&self, out: &mut impl std::io::Write) -> Result<(), String> {
        layout::write(self, out)
    }

    /// Reads the whole index into memory (readers use [`IndexView`], which reads in place);
    /// the error names the file.
    pub fn load(path: &Path) -> Result<SearchIndex, String> {
        let view = IndexView::open(path)?;
        let index = view.to_index();
        match view.failure() {
            Some(why) => Err(why.to_string()),
            None => Ok(index),
        }
    }
}

pub(crate) fn check_version(path: &Path, version: u32) -> Result<(), String> {
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

/// One row: `scale × values` approximates the vector.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub scale: f32,
    pub values: &'a [u8],
}

impl<'a> Row<'a> {
    /// A row as vectors.i8 stores it ([`row_bytes`] long).
    pub fn from_bytes(bytes: &'a [u8]) -> Row<'a> {
        let (scale, values) = bytes.split_at(4.min(bytes.len()));
        let mut le = [0u8; 4];
        le[..scale.len()].copy_from_slice(scale);
        Row {
            scale: f32::from_le_bytes(le),
            values,
        }
    }

    /// The dot product with `query` (the cosine, for unit vectors). Summed in [`LANES`]
    /// independent partial sums, added in a fixed order: the compiler turns the lanes into
    /// vector instructions (a query scans every row: a million on the kernel), and the result
    /// is the same on every run.
    pub fn dot(&self, query: &[f32]) -> f32 {
        const LANES: usize = 16;
        let n = self.values.len().min(query.len());
        let (values, query) = (&self.values[..n], &query[..n]);
        let mut lanes = [0f32; LANES];
        let (mut v, mut q) = (values.chunks_exact(LANES), query.chunks_exact(LANES));
        for (v, q) in (&mut v).zip(&mut q) {
            for k in 0..LANES {
                lanes[k] += f32::from(v[k] as i8) * q[k];
            }
        }
        let tail: f32 = (v.remainder().iter().zip(q.remainder()))
            .map(|(&x, y)| f32::from(x as i8) * y)
            .sum();
        (lanes.iter().sum::<f32>() + tail) * self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of symbols with these ids and nothing else, written to `dir`.
    fn index_of_ids(dir: &std::path::Path, ids: &[&str]) -> IndexView {
        let index = SearchIndex {
            head: IndexHead {
                version: INDEX_VERSION,
                fingerprint: "fp".to_string(),
                ready: true,
                symbols: ids.len() as u64,
                vectors: 0,
            },
            embedder: None,
            rows: 0,
            vectors_hash: String::new(),
            layers: Vec::new(),
            symbols: ids
                .iter()
                .map(|id| IndexSymbol {
                    name: "f".to_string(),
                    file: "a.py".to_string(),
                    ..IndexSymbol::with_id(id)
                })
                .collect(),
            edges: Vec::new(),
            postings: Postings::default(),
        };
        let path = dir.join("search.bin");
        std::fs::write(&path, index.encode().unwrap()).unwrap();
        IndexView::open(&path).unwrap()
    }

    #[test]
    fn texts_containing_finds_what_a_scan_of_each_value_finds() {
        let ids = [
            "a.py::f",
            "a.py::ff",
            "",
            "b.py::xf",
            "",
            "c.py",
            "f",
            "a.py::f#2",
        ];
        let dir = tempfile::tempdir().unwrap();
        let view = index_of_ids(dir.path(), &ids);
        let scan = |needle: &str| -> Vec<u32> {
            (0..ids.len() as u32)
                .filter(|&k| !needle.is_empty() && ids[k as usize].contains(needle))
                .collect()
        };
        for needle in [
            "f", "a.py::f", "::ff", "py", "c.py", "#2", "fa.py", "pyf", "xf", "nothing", "",
        ] {
            assert_eq!(
                view.texts_containing(layout::Column::Id, needle.as_bytes()),
                scan(needle),
                "{needle:?}"
            );
        }
        // A needle across two neighbouring values matches neither.
        assert!(view
            .texts_containing(layout::Column::Id, b"ffb.py")
            .is_empty());
        assert_eq!(view.failure(), None);
    }

    #[test]
    fn an_index_reads_back_in_place_and_whole() {
        let symbol = |id: &str, hash: &str, row: u32| IndexSymbol {
            id: id.to_string(),
            kind: NodeKind::Function,
            name: "f".to_string(),
            file: "a.py".to_string(),
            line_start: 3,
            line_end: 9,
            layer: Some(0),
            role: Role::Product,
            implements: Some("Trait".to_string()),
            stub: true,
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
            // g calls f and itself: f is entered by another symbol, g only by itself.
            edges: vec![
                IndexEdge {
                    src: 1,
                    dst: 0,
                    kind: EdgeKind::Calls,
                    confidence: 0.75,
                    line: 4,
                },
                IndexEdge {
                    src: 1,
                    dst: 1,
                    kind: EdgeKind::Calls,
                    confidence: 0.9,
                    line: 5,
                },
            ],
            postings: Postings {
                terms: vec!["fetch".to_string(), "get".to_string()],
                lists: vec![vec![(0, 1), (1, 1)], vec![(1, 2)]],
                lengths: vec![1, 3],
            },
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search.bin");
        std::fs::write(&path, index.encode().unwrap()).unwrap();
        let view = IndexView::open(&path).unwrap();
        view.require(&[layout::Section::Records]).unwrap();
        assert_eq!((view.meta.rows, view.meta.vectors_hash.as_str()), (1, "vh"));
        let got: Vec<(String, u32)> = (0..2)
            .map(|i| {
                (
                    view.symbol(i).text_hash().into_owned(),
                    view.symbol(i).vector,
                )
            })
            .collect();
        assert_eq!(got, vec![("h1".to_string(), 0), (String::new(), NO_VECTOR)]);
        assert_eq!(view.symbol(0).doc().as_deref(), Some("Doc."));
        assert_eq!(view.symbol(1).parent, Some(0));
        assert_eq!(view.postings("get"), vec![(1, 2)]);
        assert_eq!(view.postings("fetch"), vec![(0, 1), (1, 1)]);
        assert!(view.postings("nothing").is_empty());
        assert_eq!(view.out_edges(1), vec![0, 1]);
        assert_eq!(view.in_edges(0), vec![0]);
        assert!(view.symbol(0).is_entered());
        assert!(!view.symbol(1).is_entered());
        assert_eq!(view.failure(), None);
        assert_eq!(IndexHead::read(&path), Some(index.head.clone()));
        assert_eq!(SearchIndex::load(&path).unwrap(), index);
    }

    #[test]
    fn a_quantised_row_keeps_the_dot_product_to_within_its_rounding() {
        let vector = [0.5f32, -0.25, 0.125, 0.0, -0.75, 0.3];
        let query = [0.1f32, 0.7, -0.2, 0.4, 0.3, -0.5];
        let row = quantize(&vector);
        assert_eq!(row.len(), row_bytes(vector.len()));
        let zero = quantize(&[0.0; 6]);
        let exact: f32 = vector.iter().zip(&query).map(|(a, b)| a * b).sum();
        let got = Row::from_bytes(&row).dot(&query);
        // Each component is off by at most half a step of 0.75/127.
        let bound = 0.5 * 0.75 / 127.0 * query.iter().map(|x| x.abs()).sum::<f32>();
        assert!((got - exact).abs() <= bound, "{got} vs {exact}");
        assert_eq!(
            Row::from_bytes(&row).values[4] as i8,
            -127,
            "the largest is full scale"
        );
        assert_eq!(
            Row::from_bytes(&zero).dot(&query),
            0.0,
            "a zero vector stays zero"
        );
    }
}
