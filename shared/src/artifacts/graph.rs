//! `.tldrgraph/graph.json`: the whole graph as one JSON document, for tools that want it whole.
//!
//! Written as the stream goes by, never held in memory: nodes, edges, layers and files go into
//! spool files joined at the end. The records are the stream's own lines, in stream order, so
//! the same stream gives the same bytes. A graph over [`PLAIN_LIMIT`] is written as
//! `graph.json.zst` instead (the same document as zstd frames, `zstd -dc` reads it), and only
//! one of the two is ever left.
//!
//! ```json
//! {"schema":"1.0","nodes":[{"type":"node",...},...],"edges":[...],"layers":[...],"files":[...]}
//! ```

use crate::frames::FrameWriter;
use crate::record::{Edge, FileRecord, LayerRecord, Node, SCHEMA_VERSION};
use crate::stage::Failure;
use crate::store::{AtomicFile, Store};
use serde::Deserialize;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::PathBuf;

/// graph.json read back whole, typed: what a reader of the last build's graph gets.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Graph {
    pub schema: String,
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    #[serde(default)]
    pub layers: Vec<LayerRecord>,
    #[serde(default)]
    pub files: Vec<FileRecord>,
}

impl Graph {
    /// Reads `.tldrgraph/graph.json`, or `graph.json.zst` when the graph was written
    /// compressed: missing is [`exit::NO_INPUT`], malformed [`exit::DATA`] naming the line;
    /// both say how to get a good one.
    pub fn read(store: &Store) -> Result<Graph, Failure> {
        super::read_json(store, name(store), "the graph")
    }
}

/// The name of the last build's graph file: graph.json.zst when the graph was written
/// compressed, else graph.json (which may not exist yet).
fn name(store: &Store) -> &'static str {
    if store.path(super::GRAPH_COMPRESSED).is_file() {
        super::GRAPH_COMPRESSED
    } else {
        super::GRAPH
    }
}

/// The last build's graph file, when there is one.
pub fn path(store: &Store) -> Option<PathBuf> {
    Some(store.path(name(store))).filter(|path| path.is_file())
}

/// A JSON array being written, element by element.
struct Array<W: Write> {
    out: W,
    empty: bool,
    bytes: u64,
}

impl<W: Write> Array<W> {
    fn push(&mut self, raw: &str) -> io::Result<()> {
        if !self.empty {
            self.out.write_all(b",\n")?;
            self.bytes += 2;
        }
        self.empty = false;
        self.bytes += raw.len() as u64;
        self.out.write_all(raw.as_bytes())
    }
}

fn spool() -> io::Result<Array<BufWriter<File>>> {
    Ok(Array {
        out: BufWriter::new(tempfile::tempfile()?),
        empty: true,
        bytes: 0,
    })
}

/// Above this many bytes the graph is written as graph.json.zst instead of graph.json: a
/// kernel-sized graph is 1.2 GB of JSON, 110 MB compressed, and nobody reads it by eye.
pub const PLAIN_LIMIT: u64 = 256 << 20;

/// Writes graph.json from the stream's own lines (tg-status): each part spooled to a
/// temporary file as the stream goes by, then joined at [`GraphWriter::commit`], plain or
/// compressed by the total size.
pub struct GraphWriter {
    path: PathBuf,
    compressed_path: PathBuf,
    plain_limit: u64,
    nodes: Array<BufWriter<File>>,
    edges: Array<BufWriter<File>>,
    layers: Array<BufWriter<File>>,
    files: Array<BufWriter<File>>,
}

impl GraphWriter {
    /// A writer whose graph is compressed when it would pass `plain_limit` bytes.
    pub fn create(store: &Store, plain_limit: u64) -> io::Result<Self> {
        Ok(GraphWriter {
            path: store.path(super::GRAPH),
            compressed_path: store.path(super::GRAPH_COMPRESSED),
            plain_limit,
            nodes: spool()?,
            edges: spool()?,
            layers: spool()?,
            files: spool()?,
        })
    }

    pub fn node(&mut self, raw: &str) -> io::Result<()> {
        self.nodes.push(raw)
    }

    pub fn edge(&mut self, raw: &str) -> io::Result<()> {
        self.edges.push(raw)
    }

    pub fn layer(&mut self, raw: &str) -> io::Result<()> {
        self.layers.push(raw)
    }

    pub fn file(&mut self, raw: &str) -> io::Result<()> {
        self.files.push(raw)
    }

    /// Puts the graph in place (only if its content changed), as graph.json or, above the
    /// limit, graph.json.zst, and removes the other form; whether anything changed.
    pub fn commit(self) -> io::Result<bool> {
        let parts = [
            ("nodes", self.nodes),
            ("edges", self.edges),
            ("layers", self.layers),
            ("files", self.files),
        ];
        let total: u64 = parts.iter().map(|(_, part)| part.bytes).sum();
        let changed;
        let other = if total > self.plain_limit {
            let mut out = FrameWriter::new(AtomicFile::create(&self.compressed_path)?);
            join(parts, &mut out)?;
            changed = out.finish()?.commit_if_changed()?;
            &self.path
        } else {
            let mut out = AtomicFile::create(&self.path)?;
            join(parts, &mut out)?;
            changed = out.commit_if_changed()?;
            &self.compressed_path
        };
        match std::fs::remove_file(other) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(changed),
            Err(err) => Err(err),
        }
    }
}

/// The document: the parts' spools, each an array under its name.
fn join(parts: [(&str, Array<BufWriter<File>>); 4], out: &mut dyn Write) -> io::Result<()> {
    write!(out, "{{\"schema\":\"{SCHEMA_VERSION}\"")?;
    for (name, part) in parts {
        writeln!(out, ",\"{name}\":[")?;
        let mut file = part.out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        io::copy(&mut file, out)?;
        out.write_all(b"\n]")?;
    }
    out.write_all(b"}\n")
}
