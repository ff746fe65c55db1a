//! `.tldrgraph/graph.json`: the whole graph as one JSON document, for tools that want it whole;
//! our own readers take it a record at a time ([`for_each_record`]).
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
use crate::ndjson::{read_line_bounded, BoundedLine, MAX_LINE_BYTES};
use crate::record::{Edge, FileRecord, LayerRecord, Node, Record, SCHEMA_VERSION};
use crate::stage::Failure;
use crate::store::{AtomicFile, Store};
use serde::Deserialize;
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Seek, Write};
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

/// Reads the last build's graph one record at a time, in the document's order (nodes, edges,
/// layers, files), holding one line: for a reader that needs a few facts of a graph too large
/// to hold whole (1.2 GB of JSON on the Linux kernel). Records of a type this build does not
/// know are skipped. A document not laid out as [`GraphWriter`] writes it (one record a line),
/// such as a graph.json someone reformatted, is read whole instead. Errors as [`Graph::read`].
pub fn for_each_record(
    store: &Store,
    mut visit: impl FnMut(Record) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let (path, reader) = super::open(store, name(store), "the graph")?;
    let mut document = Lines {
        input: io::BufReader::with_capacity(1 << 20, reader),
        path,
        line: Vec::new(),
        number: 0,
    };
    document.next()?;
    if !(document.line.starts_with(b"{\"schema\":") && document.line.ends_with(b",\"nodes\":[")) {
        return Graph::read(store)?.into_records().try_for_each(visit);
    }
    loop {
        if !document.next()? {
            return Err(document.malformed("the document ends before its last array is closed"));
        }
        match document.line.as_slice() {
            b"]}" => break,
            b"" => continue,
            part if part.starts_with(b"],\"") && part.ends_with(b"\":[") => continue,
            _ => {}
        }
        let record = document.line.strip_suffix(b",").unwrap_or(&document.line);
        let parsed = std::str::from_utf8(record)
            .map_err(|e| format!("not UTF-8 ({e})"))
            .and_then(|text| {
                crate::ndjson::parse_line(document.number as u64, text).map_err(|e| e.message)
            });
        match parsed {
            Ok(item) => {
                if let Some(record) = item.record {
                    visit(record)?;
                }
            }
            Err(message) => return Err(document.malformed(&message)),
        }
    }
    if document.next()? {
        return Err(document.malformed("text after the end of the document"));
    }
    Ok(())
}

/// graph.json read a line at a time, each line bounded as a stream's are.
struct Lines<R> {
    input: R,
    path: PathBuf,
    /// The last line read, without its newline.
    line: Vec<u8>,
    /// Its 1-based number.
    number: usize,
}

impl<R: BufRead> Lines<R> {
    /// Reads the next line: `Ok(false)` at the end of the document.
    fn next(&mut self) -> Result<bool, Failure> {
        let read = read_line_bounded(&mut self.input, &mut self.line, MAX_LINE_BYTES)
            .map_err(|e| super::unreadable(&self.path, &e))?;
        self.number += 1;
        match read {
            BoundedLine::End => Ok(false),
            BoundedLine::Line => Ok(true),
            BoundedLine::TooLong => Err(self.malformed("a line longer than any record")),
        }
    }

    fn malformed(&self, problem: &str) -> Failure {
        super::malformed(&self.path, self.number, &problem)
    }
}

impl Graph {
    /// The graph's records in the document's order.
    fn into_records(self) -> impl Iterator<Item = Record> {
        let nodes = self.nodes.into_iter().map(Record::Node);
        let edges = self.edges.into_iter().map(Record::Edge);
        let layers = self.layers.into_iter().map(Record::Layer);
        nodes
            .chain(edges)
            .chain(layers)
            .chain(self.files.into_iter().map(Record::File))
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
            // The frames an edit left as they were are copied from the last graph, not
            // compressed again (a gigabyte on the kernel).
            let previous = std::fs::read(&self.compressed_path).unwrap_or_default();
            let mut out =
                FrameWriter::reusing(AtomicFile::create(&self.compressed_path)?, &previous);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit;

    const NODE_A: &str = r#"{"type":"node","id":"a.py::f","kind":"function","name":"f","file":"a.py","line_start":1,"line_end":2,"hash":"00"}"#;
    const NODE_B: &str = r#"{"type":"node","id":"b.py::g","kind":"function","name":"g","file":"b.py","line_start":3,"line_end":4,"hash":"11"}"#;
    const EDGE: &str =
        r#"{"type":"edge","kind":"calls","src":"a.py::f","dst":"b.py::g","line":2,"count":1}"#;
    const FILE: &str =
        r#"{"type":"file","path":"a.py","lang":"python","hash":"22","bytes":9,"lines":2}"#;

    /// A store whose graph the writer wrote from `nodes` and `edges` (compressed when
    /// `plain_limit` is 0), and the store's temporary root.
    fn written(nodes: &[&str], edges: &[&str], plain_limit: u64) -> (tempfile::TempDir, Store) {
        let root = tempfile::tempdir().unwrap();
        let store = Store::at_root(root.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        let mut writer = GraphWriter::create(&store, plain_limit).unwrap();
        for node in nodes {
            writer.node(node).unwrap();
        }
        for edge in edges {
            writer.edge(edge).unwrap();
        }
        writer.file(FILE).unwrap();
        writer.commit().unwrap();
        (root, store)
    }

    fn ids(store: &Store) -> Result<Vec<String>, Failure> {
        let mut seen = Vec::new();
        for_each_record(store, |record| {
            seen.push(match record {
                Record::Node(node) => node.id,
                Record::Edge(edge) => format!("{}->{}", edge.src, edge.dst),
                Record::File(file) => format!("file {}", file.path),
                other => other.type_name().to_string(),
            });
            Ok(())
        })?;
        Ok(seen)
    }

    #[test]
    fn records_stream_in_document_order_plain_or_compressed() {
        let expected = ["a.py::f", "b.py::g", "a.py::f->b.py::g", "file a.py"];
        for limit in [u64::MAX, 0] {
            let (_root, store) = written(&[NODE_A, NODE_B], &[EDGE], limit);
            assert_eq!(ids(&store).unwrap(), expected, "plain limit {limit}");
            // The same records as the whole document, read at once.
            let whole = Graph::read(&store).unwrap();
            assert_eq!(whole.nodes.len(), 2);
            assert_eq!(whole.edges.len(), 1);
        }
        let (_root, store) = written(&[], &[], u64::MAX);
        assert_eq!(ids(&store).unwrap(), ["file a.py"], "empty arrays");
    }

    #[test]
    fn a_reformatted_document_is_read_whole() {
        let (_root, store) = written(&[NODE_A, NODE_B], &[EDGE], u64::MAX);
        let path = store.path(crate::artifacts::GRAPH);
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        assert_eq!(
            ids(&store).unwrap(),
            ["a.py::f", "b.py::g", "a.py::f->b.py::g", "file a.py"]
        );
    }

    #[test]
    fn a_damaged_or_cut_document_is_bad_data_naming_the_line() {
        let (_root, store) = written(&[NODE_A, NODE_B], &[EDGE], u64::MAX);
        let path = store.path(crate::artifacts::GRAPH);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace(r#""line_start":3"#, r#""line_start":"x""#),
        )
        .unwrap();
        let failure = ids(&store).unwrap_err();
        assert_eq!(failure.code, exit::DATA);
        assert!(
            failure.message.contains("graph.json: line 3:"),
            "{}",
            failure.message
        );
        let cut = &text[..text.find("],\"edges\"").unwrap()];
        std::fs::write(&path, cut).unwrap();
        let failure = ids(&store).unwrap_err();
        assert_eq!(failure.code, exit::DATA);
        assert!(
            failure.message.contains("ends before"),
            "{}",
            failure.message
        );
        std::fs::write(&path, format!("{text}{{}}\n")).unwrap();
        assert!(ids(&store).unwrap_err().message.contains("after the end"));
    }

    #[test]
    fn no_graph_is_no_input() {
        let root = tempfile::tempdir().unwrap();
        let failure = ids(&Store::at_root(root.path())).unwrap_err();
        assert_eq!(failure.code, exit::NO_INPUT);
    }
}
