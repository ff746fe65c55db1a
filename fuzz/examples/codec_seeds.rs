//! Writes the `codec` corpus: real cache values encoded as tg-extract and tg-embed write them
//! (the extraction cache of a few fixture files, a small search index, its head), sealed and
//! unsealed; and the `index` corpus beside it (`../index`): that index and an empty one as
//! search.bin files. Run it again when a cache layout changes:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --no-default-features --example codec_seeds -- fuzz/corpus/codec
//! ```
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tg_extract::cache::{stamp, CacheEntry, ExtractCache};
use tg_lang::for_path;
use tg_parse::extract_file;
use tg_shared::codec;
use tg_shared::record::{EdgeKind, NodeKind, Role};
use tg_shared::search::{
    Embedder, IndexEdge, IndexHead, IndexLayer, IndexSymbol, Postings, SearchIndex, INDEX_VERSION,
    NO_VECTOR,
};

fn main() -> Result<(), String> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: codec_seeds OUT_DIR")?,
    );
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let write = |name: &str, bytes: &[u8]| {
        assert!(bytes.len() < 20 << 10, "{name}: {} bytes", bytes.len());
        std::fs::write(out.join(name), bytes).map_err(|e| e.to_string())
    };

    let mut cache = ExtractCache::empty();
    for rel in ["python/pkg/util.py", "c/src/util.c", "rust/src/util.rs"] {
        let source = std::fs::read_to_string(fixtures.join(rel)).map_err(|e| e.to_string())?;
        let lang = for_path(rel).ok_or("no language")?;
        let facts = extract_file(lang, rel, &source)?;
        cache.entries.insert(
            rel.to_string(),
            CacheEntry {
                hash: tg_shared::hash::content_hash(source.as_bytes()),
                bytes: source.len() as u64,
                lines: source.lines().count() as u32,
                non_utf8_line: None,
                facts,
                words: tg_lang::words::FileWords::of(lang, &source),
            },
        );
    }
    write("extract-cache.bin", &codec::encode(&cache)?)?;
    let mut file = format!("{}\n", stamp()).into_bytes();
    file.extend(codec::encode_sealed(&cache)?);
    write("extract-cache-file.bin", &file)?;
    write(
        "extract-cache-empty.bin",
        &codec::encode(&ExtractCache::empty())?,
    )?;

    let head = IndexHead {
        version: INDEX_VERSION,
        fingerprint: "0123456789abcdef0123456789abcdef".into(),
        ready: true,
        symbols: 2,
        vectors: 1,
    };
    write("index-head.bin", &codec::encode(&head)?)?;
    let index = SearchIndex {
        head,
        embedder: Some(Embedder {
            id: "static:all-MiniLM-L6-v2:abc".into(),
            dim: 4,
        }),
        layers: vec![IndexLayer {
            id: "core".into(),
            name: "Core".into(),
            order: 1,
        }],
        symbols: vec![
            IndexSymbol {
                id: "a.py::f".into(),
                kind: NodeKind::Function,
                name: "f".into(),
                file: "a.py".into(),
                line_start: 1,
                line_end: 3,
                layer: Some(0),
                role: Role::Product,
                implements: None,
                stub: false,
                signature: Some("def f(x)".into()),
                intent: Some("Loads the graph.".into()),
                intent_source: Some("agent".into()),
                intent_current: true,
                doc: None,
                parent: None,
                text_hash: "ff".into(),
                vector: 0,
            },
            IndexSymbol {
                id: "a.py::C.m".into(),
                kind: NodeKind::Method,
                name: "m".into(),
                file: "a.py".into(),
                line_start: 5,
                line_end: 9,
                layer: None,
                role: Role::Test,
                implements: Some("Display".into()),
                // An `@overload` signature: the flag bit the index keeps.
                stub: true,
                signature: None,
                intent: None,
                intent_source: None,
                intent_current: false,
                doc: Some("Doc.".into()),
                parent: Some(0),
                text_hash: String::new(),
                vector: NO_VECTOR,
            },
        ],
        edges: vec![IndexEdge {
            src: 1,
            dst: 0,
            kind: EdgeKind::Calls,
            confidence: 0.95,
            line: 6,
        }],
        postings: Postings {
            terms: vec!["graph".into(), "load".into()],
            lists: vec![vec![(0, 1)], vec![(0, 2), (1, 1)]],
            lengths: vec![3, 1],
        },
        rows: 1,
        vectors_hash: "00".into(),
    };
    write("search-index.bin", &codec::encode(&index)?)?;
    write("search-index-sealed.bin", &codec::encode_sealed(&index)?)?;
    write(
        "search-index-default.bin",
        &codec::encode(&SearchIndex::default())?,
    )?;
    let index_dir = out.join("../index");
    std::fs::create_dir_all(&index_dir).map_err(|e| e.to_string())?;
    std::fs::write(index_dir.join("search.bin"), index.encode()?).map_err(|e| e.to_string())?;
    std::fs::write(
        index_dir.join("search-empty.bin"),
        SearchIndex::default().encode()?,
    )
    .map_err(|e| e.to_string())?;
    let nested: BTreeMap<String, Vec<Option<u64>>> =
        [("k".to_string(), vec![Some(u64::MAX), None])].into();
    write("sealed-map.bin", &codec::encode_sealed(&nested)?)?;
    write("empty.bin", b"")?;
    Ok(())
}
