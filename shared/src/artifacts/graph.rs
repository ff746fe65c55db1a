//! `.tldrgraph/graph.json`: the whole graph as one JSON document, for tools that want it whole.
//!
//! Written as the stream goes by, never held in memory: nodes go straight into the file, edges,
//! layers and files into spool files appended at the end. The records are the stream's own lines,
//! in stream order, so the same stream gives the same bytes.
//!
//! ```json
//! {"schema":"1.0","nodes":[{"type":"node",...},...],"edges":[...],"layers":[...],"files":[...]}
//! ```

use crate::record::{Edge, FileRecord, LayerRecord, Node, SCHEMA_VERSION};
use crate::stage::Failure;
use crate::store::{AtomicFile, Store};
use serde::Deserialize;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

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
    /// Reads `.tldrgraph/graph.json`: missing is [`exit::NO_INPUT`], malformed [`exit::DATA`]
    /// naming the line; both say how to get a good one.
    pub fn read(store: &Store) -> Result<Graph, Failure> {
        super::read_json(store, super::GRAPH, "the graph")
    }
}

/// A JSON array being written, element by element.
struct Array<W: Write> {
    out: W,
    empty: bool,
}

impl<W: Write> Array<W> {
    fn push(&mut self, raw: &str) -> io::Result<()> {
        if !self.empty {
            self.out.write_all(b",\n")?;
        }
        self.empty = false;
        self.out.write_all(raw.as_bytes())
    }
}

fn spool() -> io::Result<Array<BufWriter<File>>> {
    Ok(Array {
        out: BufWriter::new(tempfile::tempfile()?),
        empty: true,
    })
}

/// Writes graph.json from the stream's own lines (tg-status).
pub struct GraphWriter {
    nodes: Array<AtomicFile>,
    edges: Array<BufWriter<File>>,
    layers: Array<BufWriter<File>>,
    files: Array<BufWriter<File>>,
}

impl GraphWriter {
    pub fn create(store: &Store) -> io::Result<Self> {
        let mut file = AtomicFile::create(&store.path(super::GRAPH))?;
        writeln!(file, "{{\"schema\":\"{SCHEMA_VERSION}\",\"nodes\":[")?;
        Ok(GraphWriter {
            nodes: Array {
                out: file,
                empty: true,
            },
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

    /// Puts the file in place (only if its content changed).
    pub fn commit(self) -> io::Result<bool> {
        let mut out = self.nodes.out;
        for (name, spool) in [
            ("edges", self.edges),
            ("layers", self.layers),
            ("files", self.files),
        ] {
            write!(out, "\n],\"{name}\":[\n")?;
            let mut file = spool.out.into_inner().map_err(|e| e.into_error())?;
            file.rewind()?;
            io::copy(&mut file, &mut out)?;
        }
        out.write_all(b"\n]}\n")?;
        out.commit_if_changed()
    }
}
