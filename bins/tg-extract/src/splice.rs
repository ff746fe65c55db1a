//! One run's output made from the previous run's, when only files whose interface did not
//! change were edited (the usual edit: a function's body).
//!
//! Then no other file's edges changed ([`tg_lang::FileFacts::interface_digest`]), so only the
//! edited files are resolved again, and the stream is the previous one with the edited files'
//! records put in place of their old ones: their `file` and `node` lines, and the edges leaving
//! their old symbols, with their new edges merged in at their places in the (src, kind, dst)
//! order. The diagnostics and the summary are written again. On the kernel this replaces
//! resolving 55,000 files and serialising 4.8 million records with one file's resolution and
//! a copy. The output is byte-identical to a full run's (a test compares both after real edits).
//!
//! The previous output is trusted only as the stream of exactly the previous inputs: its
//! fingerprint must be the one the current inputs give with each edited file's older content
//! hash put back ([`previous_fingerprint`]).

use crate::extract::{Extracted, Probe};
use crate::graph::{EdgeKey, Graph};
use crate::resolve::ResolveStats;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::io::{self, Write};
use std::path::Path;
use tg_lang::Mention;
use tg_shared::codec;
use tg_shared::record::{Edge, EdgeKind, Record};

/// Each resolved file's resolution counters, in the order of the stream's files, with the
/// fingerprint of the output they were counted for: a spliced run takes the unchanged files'
/// counters from here, since the summary totals them.
#[derive(serde::Serialize, serde::Deserialize)]
struct StatsFile {
    fingerprint: String,
    per_file: Vec<ResolveStats>,
}

/// The per-file counters kept for the output of `fingerprint`, if these are they.
pub fn load_stats(path: &Path, fingerprint: &str) -> Option<Vec<ResolveStats>> {
    let file: StatsFile = codec::decode_sealed_file(path).ok()?;
    (file.fingerprint == fingerprint).then_some(file.per_file)
}

pub fn save_stats(path: &Path, fingerprint: &str, per_file: &[ResolveStats]) -> Result<(), String> {
    let file = StatsFile {
        fingerprint: fingerprint.to_string(),
        per_file: per_file.to_vec(),
    };
    let bytes = codec::encode_sealed(&file)?;
    tg_shared::store::write_atomic(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Which files (by their index in `extracted`) the run resolves alone and splices, if it may:
/// every file parsed this run replaced an older version of itself with the same interface, or
/// one that differs only by symbols appended at its end. Files that name one of those in their
/// calls or their functions' own variables are resolved too; a file that names one where other
/// files' resolution reads it (an import, a base, a declared return, a type others reach)
/// could change files that never name it, so then nothing is spliced. No file may be added,
/// removed or skipped, and at least one must have been replaced.
pub fn files_to_resolve(extracted: &[Extracted]) -> Option<Vec<bool>> {
    let mut appended: HashSet<&str> = HashSet::new();
    let mut any = false;
    for item in extracted {
        match (&item.outcome, &item.replaced) {
            (_, Some(replaced)) if replaced.same_interface => any = true,
            (_, Some(replaced)) => {
                appended.extend(replaced.appended.as_ref()?.iter().map(String::as_str));
                any = true;
            }
            (crate::extract::Outcome::Ready { from_cache, .. }, None) if !from_cache => {
                return None
            }
            _ => {}
        }
    }
    if !any {
        return None;
    }
    let mention = |item: &Extracted| match &item.outcome {
        _ if appended.is_empty() => Mention::None,
        crate::extract::Outcome::Ready { entry, .. } => entry.facts.mentions(&appended),
        crate::extract::Outcome::Skipped => Mention::None,
    };
    let mentions: Vec<Mention> = extracted.par_iter().map(mention).collect();
    // One edited file's own mentions were checked against the rest of it (`appended_names`):
    // its appended symbols may name themselves. With more edited files, each is checked whole.
    let edited = extracted.iter().filter(|i| i.replaced.is_some()).count();
    let exported = (extracted.iter().zip(&mentions))
        .any(|(item, m)| (item.replaced.is_none() || edited > 1) && *m == Mention::Exported);
    if exported {
        return None;
    }
    Some(
        (extracted.iter().zip(&mentions))
            .map(|(item, m)| item.replaced.is_some() || *m == Mention::Own)
            .collect(),
    )
}

/// The probes the previous run saw, if it differed from this one only in the replaced files:
/// this run's, with each replaced file's older content hash put back.
pub fn previous_probes(extracted: &[Extracted], probes: &[Probe]) -> Vec<Probe> {
    extracted
        .iter()
        .zip(probes)
        .map(|(item, probe)| match &item.replaced {
            Some(replaced) => Probe::Text {
                hash: replaced.hash.clone(),
            },
            None => probe.clone(),
        })
        .collect()
}

/// The counters of each file after this run: the resolved files' own, the others' kept.
pub fn merged_stats(graph: &Graph, kept: &[ResolveStats]) -> Vec<ResolveStats> {
    (graph.file_stats.iter().zip(&graph.resolved).zip(kept))
        .map(|((&fresh, &resolved), &old)| if resolved { fresh } else { old })
        .collect()
}

/// What a spliced stream holds beyond the graph's own counts: every edge by kind.
pub struct Spliced {
    pub edges_by_kind: BTreeMap<EdgeKind, u64>,
    pub changes: Option<Changes>,
}

/// The stream sections, in order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    Header,
    Files,
    Edges,
    /// Diagnostics and the summary: written again by the caller.
    Tail,
}

/// A sink for the previous stream's bytes that writes the new stream to `out`: fed the old
/// stream in any pieces, it splits lines and replaces the resolved files' records.
pub struct Splicer<'g, W: Write> {
    graph: &'g Graph<'g>,
    /// The old ids of the resolved files' symbols: the edges leaving them are dropped.
    old_sources: HashSet<&'g str>,
    /// The resolved files' paths, which begin each of their ids.
    replaced: Vec<&'g [u8]>,
    new_edges: std::iter::Peekable<std::vec::IntoIter<(EdgeKey, Vec<u8>)>>,
    out: W,
    /// This run's header line, written in place of the previous stream's (which names the
    /// previous stream).
    header: Vec<u8>,
    section: Section,
    /// Files of the old stream seen so far, and whether the current one's lines are dropped.
    files_seen: usize,
    dropping: bool,
    partial: Vec<u8>,
    edges_by_kind: BTreeMap<EdgeKind, u64>,
    /// The lines dropped and put in, kept for a patch ([`Splicer::keeping_changes`]).
    changes: Option<Changes>,
}

/// What a splice changed, as a patch holds it: the old lines it dropped and the new lines it
/// wrote in their place, each in stream order.
#[derive(Default)]
pub struct Changes {
    pub removed: Vec<u8>,
    pub added_files: Vec<u8>,
    pub added_edges: Vec<u8>,
}

fn mismatch(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the previous output does not match its inputs: {what}"),
    )
}

impl<'g, W: Write> Splicer<'g, W> {
    pub fn new(
        graph: &'g Graph<'g>,
        extracted: &'g [Extracted],
        header: Vec<u8>,
        out: W,
    ) -> io::Result<Self> {
        let replaced_files: HashSet<&str> = (extracted.iter())
            .filter(|item| item.replaced.is_some())
            .map(|item| item.rel.as_str())
            .collect();
        // A replaced file's edges leave from its old symbols; a file resolved again because it
        // mentions an appended name is unchanged, so its symbols are its old ones.
        let mut old_sources: HashSet<&str> = (extracted.iter())
            .filter_map(|item| item.replaced.as_ref())
            .flat_map(|replaced| replaced.ids.iter().map(String::as_str))
            .collect();
        let mut replaced = Vec::new();
        for (f, file) in graph.files().iter().enumerate() {
            if !graph.resolved[f] {
                continue;
            }
            replaced.push(file.path.as_bytes());
            if !replaced_files.contains(file.path.as_str()) {
                old_sources.extend(graph.file_ids(f));
            }
        }
        Ok(Splicer {
            graph,
            old_sources,
            replaced,
            new_edges: graph.resolved_edges()?.into_iter().peekable(),
            out,
            header,
            section: Section::Header,
            files_seen: 0,
            dropping: false,
            partial: Vec::new(),
            edges_by_kind: BTreeMap::new(),
            changes: None,
        })
    }

    /// Keeps the lines the splice drops and writes, for a patch.
    pub fn keeping_changes(mut self) -> Self {
        self.changes = Some(Changes::default());
        self
    }

    fn removed(&mut self, line: &[u8]) {
        if let Some(changes) = &mut self.changes {
            changes.removed.extend_from_slice(line);
        }
    }

    /// Ends the old stream's edges; returns the sink and the edge counts. Diagnostics and the
    /// summary are the caller's to write.
    pub fn finish(mut self) -> io::Result<(W, Spliced)> {
        if !self.partial.is_empty() {
            return Err(mismatch("its last line has no newline".into()));
        }
        if self.section != Section::Tail {
            self.end_edges()?;
        }
        Ok((
            self.out,
            Spliced {
                edges_by_kind: self.edges_by_kind,
                changes: self.changes,
            },
        ))
    }

    fn line(&mut self, line: &[u8]) -> io::Result<()> {
        if self.section == Section::Header {
            self.section = Section::Files;
            return self.out.write_all(&self.header);
        }
        if self.section == Section::Files {
            if line.starts_with(b"{\"type\":\"file\"") {
                return self.file_line(line);
            }
            if line.starts_with(b"{\"type\":\"node\"") {
                if self.dropping {
                    self.removed(line);
                    return Ok(());
                }
                return self.out.write_all(line);
            }
            if self.files_seen != self.graph.files().len() {
                return Err(mismatch(format!(
                    "it holds {} files, this run {}",
                    self.files_seen,
                    self.graph.files().len()
                )));
            }
            self.section = Section::Edges;
        }
        if self.section == Section::Edges {
            if line.starts_with(b"{\"type\":\"edge\"") {
                return self.edge_line(line);
            }
            self.end_edges()?;
        }
        Ok(())
    }

    /// A `file` line opens the next file's records: the old ones are copied, unless the file
    /// was resolved again, whose new records are written instead.
    fn file_line(&mut self, line: &[u8]) -> io::Result<()> {
        let f = self.files_seen;
        let Some(file) = self.graph.files().get(f) else {
            return Err(mismatch("it holds more files than this run".into()));
        };
        let path = serde_json::to_string(&file.path).map_err(io::Error::other)?;
        let expected = format!("{{\"type\":\"file\",\"path\":{path},");
        if !line.starts_with(expected.as_bytes()) {
            return Err(mismatch(format!("its file {f} is not {}", file.path)));
        }
        self.files_seen += 1;
        self.dropping = self.graph.resolved[f];
        if !self.dropping {
            return self.out.write_all(line);
        }
        self.removed(line);
        let new_lines = self.graph.file_lines(f)?;
        if let Some(changes) = &mut self.changes {
            changes.added_files.extend_from_slice(&new_lines);
        }
        self.out.write_all(&new_lines)
    }

    fn edge_line(&mut self, line: &[u8]) -> io::Result<()> {
        // Most edges are copied on their kind and source alone, read from the raw line.
        if let Some((kind, src)) = raw_kind_and_src(line) {
            let maybe_old = self.replaced.iter().any(|path| src.starts_with(path));
            if !maybe_old
                || !self
                    .old_sources
                    .contains(std::str::from_utf8(src).unwrap_or(""))
            {
                return self.copy_edge_by_source(line, kind, src);
            }
            self.removed(line);
            return Ok(());
        }
        self.edge_line_parsed(line)
    }

    /// Copies an old edge whose source is `src`, after the new edges whose sources sort
    /// before it; one of the same source needs the whole key compared.
    fn copy_edge_by_source(&mut self, line: &[u8], kind: EdgeKind, src: &[u8]) -> io::Result<()> {
        while let Some((next, _)) = self.new_edges.peek() {
            match next.src.as_bytes().cmp(src) {
                std::cmp::Ordering::Less => self.write_next_new_edge()?,
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => return self.edge_line_parsed(line),
            }
        }
        *self.edges_by_kind.entry(kind).or_insert(0) += 1;
        self.out.write_all(line)
    }

    fn edge_line_parsed(&mut self, line: &[u8]) -> io::Result<()> {
        let Some(key) = edge_key(line) else {
            return Err(mismatch(format!(
                "cannot read the edge {}",
                String::from_utf8_lossy(line).trim_end()
            )));
        };
        if self.old_sources.contains(key.src.as_str()) {
            self.removed(line);
            return Ok(());
        }
        while let Some((next, _)) = self.new_edges.peek() {
            if (next.src.as_str(), next.kind, next.dst.as_str())
                >= (key.src.as_str(), key.kind, key.dst.as_str())
            {
                break;
            }
            self.write_next_new_edge()?;
        }
        *self.edges_by_kind.entry(key.kind).or_insert(0) += 1;
        self.out.write_all(line)
    }

    fn write_next_new_edge(&mut self) -> io::Result<()> {
        if let Some((key, line)) = self.new_edges.next() {
            *self.edges_by_kind.entry(key.kind).or_insert(0) += 1;
            if let Some(changes) = &mut self.changes {
                changes.added_edges.extend_from_slice(&line);
            }
            self.out.write_all(&line)?;
        }
        Ok(())
    }

    fn end_edges(&mut self) -> io::Result<()> {
        while self.new_edges.peek().is_some() {
            self.write_next_new_edge()?;
        }
        self.section = Section::Tail;
        Ok(())
    }
}

/// Hands `line` each whole line of `buf` (with its newline), the first completing `partial`,
/// and keeps an unfinished last line in `partial`: for sinks fed a stream in any pieces.
fn split_lines(
    partial: &mut Vec<u8>,
    buf: &[u8],
    mut line: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<usize> {
    let mut rest = buf;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let (whole, after) = rest.split_at(end + 1);
        if partial.is_empty() {
            line(whole)?;
        } else {
            let mut joined = std::mem::take(partial);
            joined.extend_from_slice(whole);
            line(&joined)?;
        }
        rest = after;
    }
    partial.extend_from_slice(rest);
    Ok(buf.len())
}

impl<W: Write> Write for Splicer<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut partial = std::mem::take(&mut self.partial);
        let written = split_lines(&mut partial, buf, |line| self.line(line));
        self.partial = partial;
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The kind and source of an edge line in the canonical form, as raw bytes: a source without
/// escapes, whose bytes then order as its text does. `None` for any other line.
fn raw_kind_and_src(line: &[u8]) -> Option<(EdgeKind, &[u8])> {
    let rest = line.strip_prefix(b"{\"type\":\"edge\",\"kind\":\"")?;
    let (kind, rest) = rest.split_at(memchr::memchr(b'"', rest)?);
    let rest = rest.strip_prefix(b"\",\"src\":\"")?;
    let src = &rest[..memchr::memchr(b'"', rest)?];
    if memchr::memchr(b'\\', src).is_some() {
        return None;
    }
    let kind = EdgeKind::ALL
        .into_iter()
        .find(|k| k.as_str().as_bytes() == kind)?;
    Some((kind, src))
}

/// The edge on a line, read as every stage reads one (the canonical form without serde,
/// anything else with it): only what the raw-source path cannot decide comes here.
fn edge_key(line: &[u8]) -> Option<Edge> {
    let text = std::str::from_utf8(line).ok()?;
    match Record::from_json_tagged("edge", text.trim_end()).ok()? {
        Record::Edge(edge) => Some(edge),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(path: &str, source: &str) -> tg_shared::hash::ContentHash {
        let lang = tg_lang::for_path(path).expect("known language");
        let facts = tg_parse::extract_file(lang, path, source).expect("parses");
        facts.interface_digest().expect("encodes")
    }

    /// What another file's resolution reads changes the digest; what only the file's own
    /// edges and lines carry does not.
    #[test]
    fn an_interface_ignores_bodies_and_lines_but_not_names_imports_or_bases() {
        let base = "import os\n\nclass A(B):\n    def m(self):\n        return f()\n\ndef f():\n    x = 1\n    return x\n";
        let digest = interface("a.py", base);
        let same = [
            "import os\n\n\n# moved down\nclass A(B):\n    def m(self):\n        return f()\n\ndef f():\n    x = 1\n    return x\n",
            "import os\n\nclass A(B):\n    def m(self):\n        g()\n        return f()\n\ndef f():\n    x = 1\n    return x\n",
            "import os\n\nclass A(B):\n    def m(self):\n        \"\"\"Now documented.\"\"\"\n        return f()\n\ndef f():\n    x = 1\n    return x\n",
        ];
        for source in same {
            assert_eq!(interface("a.py", source), digest, "{source}");
        }
        let different = [
            base.replace("import os", "import sys"),
            base.replace("class A(B)", "class A(C)"),
            base.replace("def f():", "def f2():"),
            format!("{base}\ndef g():\n    pass\n"),
        ];
        for source in different {
            assert_ne!(interface("a.py", &source), digest, "{source}");
        }
        // A function's own variables are its own business, unless an attribute other files
        // read is evaluated in its scope (`self.x = y`).
        let local = base.replace("    x = 1\n", "    y = A()\n    x = y\n");
        assert_eq!(interface("a.py", &local), digest, "a local and its type");
        let init = "class B:\n    def __init__(self):\n        y = A()\n        self.x = y\n";
        let other_type = init.replace("y = A()", "y = C()");
        assert_ne!(interface("b.py", init), interface("b.py", &other_type));
        let fn_local = "fn f() {\n    let s = Store::open();\n    s.get();\n}\n";
        let other_local = fn_local.replace("Store::open()", "Cache::open()");
        assert_eq!(
            interface("src/a.rs", fn_local),
            interface("src/a.rs", &other_local)
        );
    }

    use tg_lang::Mention;

    fn facts(path: &str, source: &str) -> tg_lang::FileFacts {
        let lang = tg_lang::for_path(path).expect("known language");
        tg_parse::extract_file(lang, path, source).expect("parses")
    }

    /// Symbols added after all others (or taken from the end) name what changed; any other
    /// change of the interface names nothing, and neither does an appended module.
    #[test]
    fn appended_symbols_are_named_and_other_interface_changes_are_not() {
        let base = "import os\n\nclass A:\n    def m(self):\n        return f()\n\ndef f():\n    return 1\n";
        let old = facts("a.py", base);
        let appended = format!("{base}\ndef g(x):\n    y = os.path\n    return h(y)\n");
        let names = tg_lang::FileFacts::appended_names(&old, &facts("a.py", &appended));
        assert_eq!(names, Some(vec!["g".to_string()]));
        let taken_back = tg_lang::FileFacts::appended_names(&facts("a.py", &appended), &old);
        assert_eq!(taken_back, names, "removed from the end");
        let method = format!("{base}    def later(self):\n        pass\n");
        let method = method.replace(
            "def f():\n    return 1\n    def later",
            "def f():\n    return 1\n\n\nclass B:\n    def later",
        );
        assert_eq!(
            tg_lang::FileFacts::appended_names(&old, &facts("a.py", &method)),
            Some(vec!["B".into(), "B.later".into(), "later".into()])
        );
        let not_appended = [
            base.replace("class A:", "def e():\n    pass\n\nclass A:"),
            format!("{base}\nimport sys\n"),
            format!("{base}\nX = 1\n"),
        ];
        for source in not_appended {
            let names = tg_lang::FileFacts::appended_names(&old, &facts("a.py", &source));
            assert_eq!(names, None, "{source}");
        }
        let rust = facts("src/lib.rs", "pub fn a() {}\n");
        let with_mod = facts("src/lib.rs", "pub fn a() {}\nmod tests;\n");
        assert_eq!(tg_lang::FileFacts::appended_names(&rust, &with_mod), None);
    }

    #[test]
    fn a_file_mentions_names_where_others_read_them_or_for_its_own_edges() {
        let names = |list: &[&'static str]| list.iter().copied().collect::<HashSet<&str>>();
        let source = "from m import helper as h\n\ndef f(c: Client):\n    x = Maker()\n    return c.send(x.build())\n\nclass K(Base):\n    pass\n";
        let file = facts("a.py", source);
        for name in ["helper", "h", "Base"] {
            assert_eq!(file.mentions(&names(&[name])), Mention::Exported, "{name}");
        }
        for name in ["Client", "Maker", "send", "build"] {
            assert_eq!(file.mentions(&names(&[name])), Mention::Own, "{name}");
        }
        assert_eq!(file.mentions(&names(&["absent", "f"])), Mention::None);
        let returns = facts("b.py", "def make() -> Thing:\n    return g()\n");
        assert_eq!(returns.mentions(&names(&["Thing"])), Mention::Exported);
        let rust = facts("src/a.rs", "impl Store {\n    fn get(&self) {}\n}\n");
        assert_eq!(
            rust.mentions(&names(&["Store"])),
            Mention::Exported,
            "an impl's type"
        );
        let c = facts("a.c", "int g(void) { return helper(); }\n");
        assert_eq!(c.mentions(&names(&["helper"])), Mention::Own);
    }

    /// The cases a review found: each would change a file that names nothing appended, so
    /// none is spliced that way.
    #[test]
    fn appends_that_reach_files_naming_nothing_appended_are_not_spliced() {
        let appended = |before: &str, after: &str| {
            tg_lang::FileFacts::appended_names(&facts("b.py", before), &facts("b.py", after))
        };
        // A method assigning an attribute of the class it is appended to.
        let service = "class Service:\n    def __init__(self):\n        self.client = Client()\n";
        let reset = format!("{service}\n    def reset(self):\n        self.client = factory()\n");
        assert_eq!(appended(service, &reset), None);
        // A definition that shadows an import of the same file, a declared return, a base.
        let imported = "from c import helper\n";
        assert_eq!(
            appended(imported, &format!("{imported}\ndef helper():\n    pass\n")),
            None
        );
        let make = "from c import Thing\n\ndef make() -> Thing:\n    pass\n";
        assert_eq!(
            appended(make, &format!("{make}\nclass Thing:\n    pass\n")),
            None
        );
        let child = "from c import Base\n\nclass Child(Base):\n    pass\n";
        assert_eq!(
            appended(child, &format!("{child}\nclass Base:\n    pass\n")),
            None
        );
        // A constructor appended to a class is reached through the class's name.
        let foo = "class Foo:\n    x = 1\n";
        let names = appended(
            foo,
            &format!("{foo}\n    def __init__(self):\n        pass\n"),
        );
        assert!(names.is_some_and(|n| n.contains(&"Foo".to_string())));
        // A class nested in a function: its base is looked up in the function's scope.
        let nested = "from base import Base\n\ndef make():\n    class Child(Base):\n        pass\n    return Child\n";
        let shadowed = nested.replace("def make():\n", "def make():\n    Base = pick()\n");
        assert_ne!(interface("b.py", nested), interface("b.py", &shadowed));
    }

    #[test]
    fn an_edge_key_is_read_from_the_canonical_form_and_through_escapes() {
        let plain =
            br#"{"type":"edge","kind":"calls","src":"a.py::f","dst":"b.py::g","line":3,"count":1}
"#;
        let key = edge_key(plain).expect("canonical edge");
        assert_eq!(
            (key.src.as_str(), key.kind, key.dst.as_str()),
            ("a.py::f", EdgeKind::Calls, "b.py::g")
        );
        let escaped =
            br#"{"type":"edge","kind":"imports","src":"a\"b.py","dst":"c.py","line":1,"count":1}
"#;
        let key = edge_key(escaped).expect("escaped edge");
        assert_eq!(
            (key.src.as_str(), key.kind, key.dst.as_str()),
            ("a\"b.py", EdgeKind::Imports, "c.py")
        );
        assert!(edge_key(b"{\"type\":\"edge\",\"kind\":\"nope\"}\n").is_none());
    }
}
