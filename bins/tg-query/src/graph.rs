//! The index as answers read it: symbols, layers, call adjacency, a scan of the vectors; and
//! finding a symbol by name.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tg_shared::artifacts;
use tg_shared::embed::service::Embedder;
use tg_shared::exit;
use tg_shared::freshness;
use tg_shared::record::EdgeKind;
use tg_shared::search::layout::{Column, Section};
use tg_shared::search::view::Symbol;
use tg_shared::search::{row_bytes, IndexView, Row};
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// Rows of vectors.i8 read at a time by a semantic scan.
const SCAN_ROWS: usize = 8192;

pub struct Graph {
    /// search.bin, read in place: each section at its first use.
    pub index: IndexView,
    vectors_path: PathBuf,
    /// Where the vectors' stamp is kept once they were found to be this index's.
    vectors_verified: PathBuf,
    model_verified: PathBuf,
    /// The query embedder, made on the first semantic search and kept (a long-lived reader,
    /// the MCP server, would otherwise load the model for every query).
    embedder: OnceLock<Embedder>,
}

/// What each answer reads of the index, loaded (and checked) before it starts; the rest is
/// read as it is met, and [`Graph::check`] refuses an answer made over damage.
/// A search scores every symbol a term names and matches every name; its terms, postings,
/// flows and hits are read a value at a time.
pub const FOR_SEARCH: &[Section] = &[
    Section::Records,
    Section::Lengths,
    Section::Offsets(Column::Name),
    Section::Blob(Column::Name),
];
pub const FOR_TRACE: &[Section] = &[
    Section::Records,
    Section::Offsets(Column::Id),
    Section::Blob(Column::Id),
    Section::Edges,
    Section::Out,
];
pub const FOR_DEAD_CODE: &[Section] = &[
    Section::Records,
    Section::Offsets(Column::Id),
    Section::Blob(Column::Id),
    Section::Offsets(Column::File),
    Section::Blob(Column::File),
    Section::Offsets(Column::Name),
    Section::Blob(Column::Name),
];
/// A server answers everything, so it reads (and checks) all of it but the large texts once.
pub const FOR_EVERYTHING: &[Section] = &[
    Section::Records,
    Section::Lengths,
    Section::PostingOffsets,
    Section::Offsets(Column::Term),
    Section::Blob(Column::Term),
    Section::Offsets(Column::Id),
    Section::Blob(Column::Id),
    Section::Offsets(Column::Name),
    Section::Blob(Column::Name),
    Section::Offsets(Column::File),
    Section::Blob(Column::File),
    Section::Edges,
    Section::Out,
    Section::In,
];

impl Graph {
    pub fn load(store: &Store) -> Result<Graph, Failure> {
        let path = store.path(artifacts::SEARCH_INDEX);
        if !path.exists() {
            return Err(Failure::new(
                exit::NO_INPUT,
                format!("{} does not exist: nothing is indexed yet", path.display()),
            )
            .with_hint("run `tldrgraph init --json` first"));
        }
        let index = IndexView::open(&path).map_err(damaged)?;
        Ok(Graph {
            index,
            vectors_path: store.path(artifacts::SEARCH_VECTORS),
            vectors_verified: store.vectors_verified_path(),
            model_verified: store.model_verified_path(),
            embedder: OnceLock::new(),
        })
    }

    /// Loads `sections` now, so that damage is reported before an answer is made.
    pub fn require(&self, sections: &[Section]) -> Result<(), Failure> {
        self.index.require(sections).map_err(damaged)
    }

    /// Whether every read since the index was opened succeeded: an answer made while one
    /// failed (damage under a value read one at a time) is refused, never given.
    pub fn check(&self) -> Result<(), Failure> {
        match self.index.failure() {
            Some(why) => Err(damaged(why.to_string())),
            None => Ok(()),
        }
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The embedder of the index's model, for query texts; why there is none. A failure is
    /// not kept, so a model installed later is found.
    pub fn embedder(&self) -> Result<&Embedder, String> {
        if let Some(embedder) = self.embedder.get() {
            return Ok(embedder);
        }
        let info = self
            .index
            .meta
            .embedder
            .as_ref()
            .ok_or_else(|| "the index has no embeddings".to_string())?;
        let made = tg_shared::embed::service::for_index(
            &info.id,
            Duration::from_secs(30),
            &self.model_verified,
        )?;
        Ok(self.embedder.get_or_init(|| made))
    }

    /// Calls `score(row, vector)` for every row of vectors.i8, read a slice at a time (the
    /// matrix is never held), hashing it as it goes; why there are no vectors, or why they are
    /// not this index's (a rebuild since, a run killed between the two writes, damage): then
    /// whatever was scored is not to be used. Vectors found to be this index's before and not
    /// rewritten since (their stamp, [`freshness::verified_before`]) are not hashed again: on
    /// the kernel the hash was the scan's longer half.
    pub fn scan_vectors(&self, mut score: impl FnMut(u32, Row<'_>) + Send) -> Result<(), String> {
        let meta = &self.index.meta;
        let info = meta
            .embedder
            .as_ref()
            .ok_or_else(|| "the index has no embeddings".to_string())?;
        let width = row_bytes(info.dim as usize);
        let name = artifacts::SEARCH_VECTORS;
        let cannot = |e: std::io::Error| format!("{}: {e}", self.vectors_path.display());
        let stamp = freshness::file_stamp(&self.vectors_path);
        let trusted = freshness::verified_before(&self.vectors_verified, stamp, &meta.vectors_hash);
        let mut file = std::fs::File::open(&self.vectors_path).map_err(cannot)?;
        let expected = u64::from(meta.rows).saturating_mul(width as u64);
        if file.metadata().map_err(cannot)?.len() != expected {
            return Err(format!("{name} does not match the index"));
        }
        // Three at once: a thread reads the next chunk while this one hashes the last (the
        // check) and scores it on the other core.
        let rows = meta.rows;
        let (full, take) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(2);
        // Scored chunks go back to the reader: a fresh buffer per chunk is a fresh mapping
        // from the allocator, paid for in page faults and zeroing on every chunk.
        let (spent, reuse) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        let mut hasher = tg_shared::hash::Hasher::new();
        std::thread::scope(|scope| -> Result<(), String> {
            // Owned here: if scoring fails, the reader's next send fails and it stops.
            let take = take;
            scope.spawn(move || {
                let mut row = 0u32;
                while row < rows {
                    let count = (rows - row).min(SCAN_ROWS as u32) as usize;
                    let mut bytes = reuse.try_recv().unwrap_or_default();
                    bytes.resize(count * width, 0);
                    let read = file.read_exact(&mut bytes).map(|()| bytes);
                    let failed = read.is_err();
                    if full.send(read).is_err() || failed {
                        return;
                    }
                    row += count as u32;
                }
            });
            let mut row = 0u32;
            while row < rows {
                let bytes = take
                    .recv()
                    .map_err(|_| format!("{}: cannot be read", self.vectors_path.display()))?
                    .map_err(cannot)?;
                rayon::join(
                    || {
                        if !trusted {
                            hasher.update(&bytes);
                        }
                    },
                    || {
                        for (k, one) in bytes.chunks_exact(width).enumerate() {
                            score(row + k as u32, Row::from_bytes(one));
                        }
                    },
                );
                row += (bytes.len() / width) as u32;
                // The reader may have stopped (its last chunk sent): the buffer is then dropped.
                let _ = spent.try_send(bytes);
            }
            Ok(())
        })?;
        if trusted {
            // Rewritten while it was read: what was scored may be neither matrix.
            if freshness::file_stamp(&self.vectors_path) != stamp {
                return Err(format!("{name} does not match the index"));
            }
        } else if hasher.finish() != meta.vectors_hash {
            return Err(format!("{name} does not match the index"));
        } else {
            freshness::remember_verified(&self.vectors_verified, stamp, &meta.vectors_hash);
        }
        Ok(())
    }

    pub fn symbol(&self, i: u32) -> Symbol<'_> {
        self.index.symbol(i)
    }

    pub fn layer_name(&self, i: u32) -> &str {
        self.symbol(i)
            .layer
            .and_then(|l| self.index.layers().get(l as usize))
            .map_or("-", |l| l.name.as_str())
    }

    /// The id of the symbol's layer (`-` when it has none).
    pub fn layer_id(&self, i: u32) -> &str {
        self.symbol(i)
            .layer
            .and_then(|l| self.index.layers().get(l as usize))
            .map_or("-", |l| l.id.as_str())
    }

    /// Position of the symbol's layer in the layers' order (unlayered last).
    pub fn layer_rank(&self, i: u32) -> u32 {
        self.symbol(i).layer.unwrap_or(u32::MAX)
    }

    /// Outgoing call edges: (edge index, callee).
    pub fn callees(&self, i: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.index
            .out_edges(i)
            .into_iter()
            .map(|e| (e, self.index.edge(e)))
            .filter(|(_, edge)| edge.kind == EdgeKind::Calls)
            .map(|(e, edge)| (e, edge.dst))
    }

    /// The symbol `name` names ([`crate::names`] has the forms accepted).
    pub fn resolve(&self, name: &str) -> Result<u32, crate::names::NameError> {
        crate::names::resolve(&self.index, name)
    }
}

fn damaged(why: String) -> Failure {
    Failure::new(exit::DATA, why).with_hint("run `tldrgraph init --json` to rebuild it")
}

/// `file:start-end`.
pub fn location(symbol: &Symbol<'_>) -> String {
    format!(
        "{}:{}-{}",
        symbol.file(),
        symbol.line_start,
        symbol.line_end
    )
}

/// Lines `a..=b` (1-based) of `root/file`, if readable.
pub fn source_lines(root: &Path, file: &str, a: u32, b: u32) -> Option<Vec<String>> {
    let text = std::fs::read(root.join(file)).ok()?;
    let text = String::from_utf8_lossy(&text);
    Some(
        text.lines()
            .skip(a.max(1) as usize - 1)
            .take((b + 1).saturating_sub(a.max(1)) as usize)
            .map(str::to_string)
            .collect(),
    )
}
