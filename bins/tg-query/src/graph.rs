//! The loaded index: symbols, layers, call adjacency, vectors; and finding a symbol by name.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tg_shared::artifacts;
use tg_shared::embed::service::Embedder;
use tg_shared::exit;
use tg_shared::record::EdgeKind;
use tg_shared::search::{self, IndexSymbol, Matrix, Row, SearchIndex, NO_VECTOR};
use tg_shared::stage::Failure;
use tg_shared::store::Store;

pub struct Graph {
    pub index: SearchIndex,
    /// The rows of vectors.i8, read at the first semantic search (trace, dead-code and
    /// lexical search never need them), or why there are none.
    vectors: OnceLock<Result<Matrix, String>>,
    vectors_path: PathBuf,
    /// Per symbol: indices into `index.edges` of its outgoing and incoming dependency edges.
    pub out: Vec<Vec<u32>>,
    pub inn: Vec<Vec<u32>>,
    /// The query embedder, made on the first semantic search and kept (a long-lived reader,
    /// the MCP server, would otherwise load the model for every query).
    embedder: OnceLock<Embedder>,
}

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
        let index = SearchIndex::load(&path).map_err(|e| {
            Failure::new(exit::DATA, e).with_hint("run `tldrgraph init --json` to rebuild it")
        })?;
        let n = index.symbols.len();
        check_references(&index).map_err(|why| {
            Failure::new(
                exit::DATA,
                format!("{}: damaged index: {why}", path.display()),
            )
            .with_hint("run `tldrgraph init --json` to rebuild it")
        })?;
        let (mut out, mut inn) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for (i, edge) in index.edges.iter().enumerate() {
            out[edge.src as usize].push(i as u32);
            inn[edge.dst as usize].push(i as u32);
        }
        Ok(Graph {
            index,
            vectors: OnceLock::new(),
            vectors_path: store.path(artifacts::SEARCH_VECTORS),
            out,
            inn,
            embedder: OnceLock::new(),
        })
    }

    /// The index's vectors, read once; why there are none (no embeddings, or a file that is
    /// not the one written with this index: a rebuild since, or damage).
    pub fn vectors(&self) -> Result<&Matrix, &str> {
        self.vectors
            .get_or_init(|| {
                let info = self
                    .index
                    .embedder
                    .as_ref()
                    .ok_or_else(|| "the index has no embeddings".to_string())?;
                let (matrix, hash) = search::load_vectors(
                    &self.vectors_path,
                    self.index.rows as usize,
                    info.dim as usize,
                )?;
                if hash != self.index.vectors_hash {
                    return Err(format!(
                        "{} does not match the index",
                        artifacts::SEARCH_VECTORS
                    ));
                }
                Ok(matrix)
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The embedder of the index's model, for query texts; why there is none. A failure is
    /// not kept, so a model installed later is found.
    pub fn embedder(&self) -> Result<&Embedder, String> {
        if let Some(embedder) = self.embedder.get() {
            return Ok(embedder);
        }
        let info = self
            .index
            .embedder
            .as_ref()
            .ok_or_else(|| "the index has no embeddings".to_string())?;
        let made = tg_shared::embed::service::for_index(&info.id, Duration::from_secs(30))?;
        Ok(self.embedder.get_or_init(|| made))
    }

    pub fn symbol(&self, i: u32) -> &IndexSymbol {
        &self.index.symbols[i as usize]
    }

    pub fn vector(&self, i: u32) -> Option<Row<'_>> {
        let row = self.symbol(i).vector;
        if row == NO_VECTOR {
            return None;
        }
        self.vectors().ok()?.row(row as usize)
    }

    pub fn layer_name(&self, i: u32) -> &str {
        self.symbol(i)
            .layer
            .map_or("-", |l| self.index.layers[l as usize].name.as_str())
    }

    /// Position of the symbol's layer in the layers' order (unlayered last).
    pub fn layer_rank(&self, i: u32) -> u32 {
        self.symbol(i).layer.unwrap_or(u32::MAX)
    }

    /// Outgoing call edges: (edge index, callee).
    pub fn callees(&self, i: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.out[i as usize]
            .iter()
            .map(|&e| (e, self.index.edges[e as usize].dst))
            .filter(|&(e, _)| self.index.edges[e as usize].kind == EdgeKind::Calls)
    }

    /// The symbol `name` names ([`crate::names`] has the forms accepted).
    pub fn resolve(&self, name: &str) -> Result<u32, crate::names::NameError> {
        crate::names::resolve(&self.index.symbols, name)
    }
}

/// Every index the file holds points inside it (a damaged or foreign file must not panic us).
fn check_references(index: &SearchIndex) -> Result<(), String> {
    let n = index.symbols.len();
    if let Some(e) = index
        .edges
        .iter()
        .find(|e| e.src as usize >= n || e.dst as usize >= n)
    {
        return Err(format!("an edge {} -> {} past {n} symbols", e.src, e.dst));
    }
    for s in &index.symbols {
        let layer_ok = s.layer.is_none_or(|l| (l as usize) < index.layers.len());
        let parent_ok = s.parent.is_none_or(|p| (p as usize) < n);
        let vector_ok = s.vector == NO_VECTOR || s.vector < index.rows;
        if !(layer_ok && parent_ok && vector_ok) {
            return Err(format!("symbol {} points outside the index", s.id));
        }
    }
    if index.postings.lengths.len() != n
        || index
            .postings
            .lists
            .iter()
            .flatten()
            .any(|&(doc, _)| doc as usize >= n)
        || index.postings.lists.len() != index.postings.terms.len()
    {
        return Err("the postings do not match the symbols".into());
    }
    Ok(())
}

/// `file:start-end`.
pub fn location(symbol: &IndexSymbol) -> String {
    format!("{}:{}-{}", symbol.file, symbol.line_start, symbol.line_end)
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
