//! The NDJSON records every stage reads and writes (schema 1).
//!
//! One JSON object per line, tagged by `"type"` (snake_case), fields flattened beside the tag.
//! The first line of a stream is a [`Header`]; the last is a [`Summary`] from each stage that
//! touched the stream. Readers reject an unknown *major* schema version, ignore unknown fields and
//! pass unknown record types through unchanged (see [`crate::ndjson`]).
//!
//! ```text
//! {"type":"header","schema":"1.0","producer":"tg-extract 0.1.0","root":"."}
//! {"type":"file","path":"pkg/loader.py","lang":"python","hash":"9f2c…","bytes":1234,"lines":80}
//! {"type":"node","id":"pkg/loader.py::GraphLoader.load","kind":"method","name":"load","file":"pkg/loader.py","line_start":45,"line_end":90,"parent":"pkg/loader.py::GraphLoader","signature":"def load(self, path)","doc":"Load a graph.","hash":"1b7e…","role":"product"}
//! {"type":"edge","kind":"calls","src":"pkg/loader.py::GraphLoader.load","dst":"pkg/io.py::read_json","line":52,"count":1,"resolution":"import","confidence":0.95}
//! {"type":"diagnostic","level":"warning","file":"data/table.py","code":"too_large","message":"skipped: file larger than --max-file-size 33554432 bytes (40000000 bytes)"}
//! {"type":"summary","stage":"tg-extract","calls_unresolved":12,"diagnostics":1,"edges":5210,"edges_calls":2100,"edges_contains":3300,"edges_imports":400,"edges_includes":0,"edges_inherits":60,"files":119,"files_seen":120,"imports_external":35,"nodes":3400,"skipped":1}
//! ```
//!
//! Ids: a module is its repo-relative path (`pkg/loader.py`); a symbol is `path::Qualified.Name`
//! (`.` for Python, `::` for Rust, C types as `struct Name`); a repeated qualified name in one file
//! gets `#2`, `#3`… in source order ([`symbol_ids`]). No record carries a timestamp or an absolute path, so the same
//! input gives the same bytes.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Major.minor of the stream format. Readers reject another major.
pub const SCHEMA_VERSION: &str = "1.0";
/// The major part of [`SCHEMA_VERSION`].
pub const SCHEMA_MAJOR: u32 = 1;

/// A known record. Unknown `type`s are kept as raw lines by the reader, not parsed into this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Header(Header),
    File(FileRecord),
    Node(Node),
    Edge(Edge),
    Diagnostic(Diagnostic),
    Layer(LayerRecord),
    Candidate(Candidate),
    Status(Status),
    Summary(Summary),
    /// Opens a section of a patch stream ([`PatchSection`]).
    Patch(PatchMarker),
}

impl Record {
    /// The `type` tags this enum knows; anything else is passed through untouched.
    pub const KNOWN_TYPES: &'static [&'static str] = &[
        "header",
        "file",
        "node",
        "edge",
        "diagnostic",
        "layer",
        "candidate",
        "status",
        "summary",
        "patch",
    ];

    /// Parses one JSON object already known to carry `"type": tag` (a tag of [`Self::KNOWN_TYPES`]).
    ///
    /// Deserialising the enum itself makes serde buffer every field of the object in a generic
    /// tree before it knows the variant; on a stream of millions of records that buffering was the
    /// largest cost of every stage. Given the tag, the variant's struct is read straight from the
    /// text (the `type` key is an unknown field to it, ignored). `status` and `summary` flatten
    /// their other fields into a map, which would catch `type` too, so they take the enum's path.
    /// Edges in the form the stages write are read without serde ([`crate::edge_line`]).
    pub fn from_json_tagged(tag: &str, text: &str) -> serde_json::Result<Record> {
        Ok(match tag {
            "header" => Record::Header(serde_json::from_str(text)?),
            "file" => Record::File(serde_json::from_str(text)?),
            "node" => Record::Node(serde_json::from_str(text)?),
            "edge" => Record::Edge(match crate::edge_line::read(text) {
                Some(edge) => edge,
                None => serde_json::from_str(text)?,
            }),
            "diagnostic" => Record::Diagnostic(serde_json::from_str(text)?),
            "layer" => Record::Layer(serde_json::from_str(text)?),
            "candidate" => Record::Candidate(serde_json::from_str(text)?),
            _ => serde_json::from_str(text)?,
        })
    }

    /// The record's `type` tag.
    pub fn type_name(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::File(_) => "file",
            Record::Node(_) => "node",
            Record::Edge(_) => "edge",
            Record::Diagnostic(_) => "diagnostic",
            Record::Layer(_) => "layer",
            Record::Candidate(_) => "candidate",
            Record::Status(_) => "status",
            Record::Summary(_) => "summary",
            Record::Patch(_) => "patch",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema: String,
    pub producer: String,
    /// Always `.`: ids are relative to the repository root, which is not written (it is machine-specific).
    pub root: String,
    /// The identity of a whole stream: tg-extract's fingerprint of the inputs it was made from
    /// (a patch's `result` names the stream it leads to the same way). A stage that keeps state
    /// across runs keeps it for one stream, and applies a patch only to the stream its `base`
    /// names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Present when the stream is a patch (`tg-extract --patch`): what one run changed in the
    /// stream of the run before, not a whole stream. Stages that read whole streams refuse it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchOf>,
}

/// Which whole streams a patch leads from and to, by tg-extract's fingerprints of their inputs
/// (the stream `base` names is the one the previous run wrote).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchOf {
    pub base: String,
    pub result: String,
}

/// The sections of a patch stream, in order. Applied to the base stream, a patch drops each
/// `removed` line (file and node lines, then edges, as the base holds them), puts each `added`
/// line in its place (a file's lines where its removed ones were, or in path order; edges in
/// (src, kind, dst) order), and replaces everything after the edges with the `tail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchSection {
    Removed,
    Added,
    Tail,
}

/// `{"type":"patch","section":"removed"}`: the lines after it, up to the next marker, belong
/// to that section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchMarker {
    pub section: PatchSection,
}

impl Header {
    pub fn new(producer: &str) -> Self {
        Header {
            schema: SCHEMA_VERSION.to_string(),
            producer: producer.to_string(),
            root: ".".to_string(),
            fingerprint: None,
            patch: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: String,
    pub lang: String,
    /// blake3 of the file's bytes (hex, 32 chars).
    pub hash: String,
    pub bytes: u64,
    pub lines: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Module,
    Class,
    Function,
    Method,
    Struct,
    Union,
    Enum,
    Typedef,
    Macro,
    Trait,
    Impl,
    Mod,
}

impl NodeKind {
    pub const ALL: [NodeKind; 12] = [
        NodeKind::Module,
        NodeKind::Class,
        NodeKind::Function,
        NodeKind::Method,
        NodeKind::Struct,
        NodeKind::Union,
        NodeKind::Enum,
        NodeKind::Typedef,
        NodeKind::Macro,
        NodeKind::Trait,
        NodeKind::Impl,
        NodeKind::Mod,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Module => "module",
            NodeKind::Class => "class",
            NodeKind::Function => "function",
            NodeKind::Method => "method",
            NodeKind::Struct => "struct",
            NodeKind::Union => "union",
            NodeKind::Enum => "enum",
            NodeKind::Typedef => "typedef",
            NodeKind::Macro => "macro",
            NodeKind::Trait => "trait",
            NodeKind::Impl => "impl",
            NodeKind::Mod => "mod",
        }
    }

    /// Kinds a call can land on (a class or struct call is a construction).
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            NodeKind::Function | NodeKind::Method | NodeKind::Class | NodeKind::Macro
        )
    }
}

/// What a symbol is for: only `product` code is the architecture an agent works on; the rest
/// exercises it (`test`), shows it (`example`), is made by a tool (`generated`) or builds and
/// maintains it (`tooling`). Decided by one rule per language (`tg_lang::Language::role`),
/// overridable by a layer's `role:` in layers.config.yaml.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    Product,
    Test,
    Example,
    Generated,
    Tooling,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Product,
        Role::Test,
        Role::Example,
        Role::Generated,
        Role::Tooling,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Product => "product",
            Role::Test => "test",
            Role::Example => "example",
            Role::Generated => "generated",
            Role::Tooling => "tooling",
        }
    }

    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// The first line of the text `hash` covers, where it begins above `line_start` (a Python
    /// definition's decorators): an edit there changes the symbol, not its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// blake3 of the symbol's own source text: an edit elsewhere in the file keeps it.
    pub hash: String,
    /// Read as `product` when absent (a stream from before roles).
    #[serde(default)]
    pub role: Role,
    /// A method of a trait implementation (Rust `impl Display for T`): the trait's name. Code
    /// outside the graph (the trait's users) calls it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implements: Option<String>,
    /// A signature without a body that no call reaches (`@typing.overload`): calls resolve to
    /// the implementation beside it, which is what a name means.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stub: bool,
    /// Runs when its name is read as an attribute (`@property`): an accessor, which the plan
    /// leaves out (its name says what it gives).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub getter: bool,
    /// A test its language's runner collects by an attribute (Rust `#[test]`): a function of
    /// test code without it is a helper, which no runner runs alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test_case: bool,
    /// Set by tg-classify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// Set by tg-enrich.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// The node `hash` the intent was written for; a mismatch means the intent is stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_hash: Option<String>,
    /// Who wrote the intent: `agent`, `llm` or `doc` (the first sentence of the doc comment, in
    /// zero-token mode; such an intent has no `intent_hash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_source: Option<String>,
}

impl Node {
    /// The intent was written (by the agent or an LLM) for the symbol's present source: its
    /// `intent_hash` is the node's `hash`. This is what "enriched" means.
    pub fn intent_written_for_source(&self) -> bool {
        self.intent.is_some() && self.intent_hash.as_deref() == Some(self.hash.as_str())
    }

    /// The intent describes the present source: one written for it, or the doc comment's first
    /// sentence (zero-token mode), which is read from the present source every run.
    pub fn intent_is_current(&self) -> bool {
        self.intent_written_for_source()
            || (self.intent.is_some() && self.intent_source.as_deref() == Some("doc"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Contains,
    Calls,
    Imports,
    Includes,
    Inherits,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 5] = [
        EdgeKind::Contains,
        EdgeKind::Calls,
        EdgeKind::Imports,
        EdgeKind::Includes,
        EdgeKind::Inherits,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Calls => "calls",
            EdgeKind::Imports => "imports",
            EdgeKind::Includes => "includes",
            EdgeKind::Inherits => "inherits",
        }
    }
}

/// How a reference target was found, from most to least certain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Same scope or file.
    Local,
    /// A method of the enclosing class (or its bases, or `super()`).
    #[serde(rename = "self")]
    SelfMethod,
    /// Followed through an import.
    Import,
    /// A method found through its receiver's stated type (annotation, constructor assignment,
    /// field type).
    Typed,
    /// A function returns a function it defines (decorator and handler factories).
    Closure,
    /// The only symbol of that name in the repository.
    Unique,
    /// One of several same-named symbols; an edge to each.
    Ambiguous,
}

impl Resolution {
    /// The confidence published with an edge of this resolution.
    pub fn confidence(self) -> f64 {
        match self {
            Resolution::Local => 1.0,
            Resolution::SelfMethod => 0.95,
            Resolution::Import => 0.95,
            Resolution::Typed => 0.9,
            Resolution::Closure => 1.0,
            Resolution::Unique => 0.6,
            Resolution::Ambiguous => 0.3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub src: String,
    pub dst: String,
    /// First line (in `src`'s file) where the relation appears.
    pub line: u32,
    /// How many sites in `src` make this relation (calls made twice count 2).
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Set by tg-classify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_layer: Option<bool>,
    /// Set by tg-classify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violation: Option<bool>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// Ids of every symbol of one file, given each symbol's kind and qualified name in source
/// order: `path` for the module, `path::qualname`, and `#k` for the k-th repeat of a qualified
/// name.
pub fn symbol_ids<'q>(
    path: &str,
    symbols: impl IntoIterator<Item = (NodeKind, &'q str)>,
) -> Vec<String> {
    let mut seen: FxHashMap<&str, u32> = FxHashMap::default();
    symbols
        .into_iter()
        .map(|(kind, qualname)| {
            if kind == NodeKind::Module {
                return path.to_string();
            }
            let count = seen.entry(qualname).or_insert(0);
            *count += 1;
            if *count == 1 {
                format!("{path}::{qualname}")
            } else {
                format!("{path}::{qualname}#{count}")
            }
        })
        .collect()
}

/// Diagnostic codes of files tg-extract saw and did not extract (no file record follows): too
/// large, binary, unreadable, or generated and large (`machine_written`). Their size and time
/// stand in for a content hash when freshness is judged.
pub const SKIPPED_FILE_CODES: [&str; 4] = ["binary", "too_large", "unreadable", "machine_written"];

/// The diagnostic code of an extraction that found no source file (tg-extract writes it, with
/// the walk's reason as its message; tg-classify tells the agent what to do about it).
pub const NO_SOURCES: &str = "no_sources";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub level: Level,
    /// Repo-relative path of the file concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// A stable machine-readable reason, e.g. `binary`, `too_large`, `syntax_error`.
    pub code: String,
    pub message: String,
}

/// One architectural layer, written by tg-classify after the nodes it counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerRecord {
    pub id: String,
    pub name: String,
    pub order: i64,
    /// Nodes classified into this layer.
    pub nodes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may_depend_on: Option<Vec<String>>,
    /// The catch-all layer (`default_layer`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
}

/// An architectural bottleneck symbol worth an intent, written by tg-plan: its rank (1 is the
/// first), its score, why it was chosen, and the graph metrics behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub id: String,
    pub rank: u32,
    pub score: f64,
    pub reasons: Vec<String>,
    pub metrics: CandidateMetrics,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateMetrics {
    /// Distinct symbols and modules depending on it (calls, imports, inherits).
    pub fan_in: u32,
    /// Distinct symbols and modules it depends on.
    pub fan_out: u32,
    /// Distinct neighbours (either direction) in another layer.
    pub cross_layer_degree: u32,
    /// Layers other than its own that depend on it.
    pub calling_layers: u32,
    /// Betweenness centrality, normalised to [0, 1] by the largest in the graph.
    pub betweenness: f64,
    /// PageRank, normalised to [0, 1] by the largest in the graph.
    pub pagerank: f64,
}

/// A contract state (`needs_layers`, ..., `done`) with its payload fields flattened beside it;
/// [`crate::contract`] builds and ranks them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub status: String,
    #[serde(flatten)]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub stage: String,
    /// Counts by name, flattened beside `stage` and sorted (BTreeMap) so the bytes are stable.
    #[serde(flatten)]
    pub counts: BTreeMap<String, serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_round_trips_with_snake_case_tags_and_no_empty_fields() {
        let node = Node {
            id: "a.py::f".into(),
            kind: NodeKind::Function,
            name: "f".into(),
            file: "a.py".into(),
            line_start: 1,
            line_end: 2,
            text_start: None,
            parent: Some("a.py".into()),
            signature: Some("def f()".into()),
            doc: None,
            hash: "00".into(),
            role: Role::Product,
            implements: None,
            stub: false,
            getter: false,
            test_case: false,
            layer: None,
            intent: None,
            intent_hash: None,
            intent_source: None,
        };
        let line = serde_json::to_string(&Record::Node(node.clone())).unwrap();
        assert_eq!(
            line,
            r#"{"type":"node","id":"a.py::f","kind":"function","name":"f","file":"a.py","line_start":1,"line_end":2,"parent":"a.py","signature":"def f()","hash":"00","role":"product"}"#
        );
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, Record::Node(node));
    }

    #[test]
    fn an_intent_is_written_for_the_source_or_read_from_its_doc() {
        let node: Node = serde_json::from_str(
            r#"{"id":"a.py::f","kind":"function","name":"f","file":"a.py","line_start":1,"line_end":2,"hash":"h1","intent":"Does f.","intent_hash":"h1","intent_source":"agent"}"#,
        )
        .unwrap();
        assert!(node.intent_written_for_source() && node.intent_is_current());
        let stale = Node {
            hash: "h2".into(),
            ..node.clone()
        };
        assert!(!stale.intent_written_for_source() && !stale.intent_is_current());
        let doc = Node {
            intent_hash: None,
            intent_source: Some("doc".into()),
            ..node.clone()
        };
        assert!(!doc.intent_written_for_source() && doc.intent_is_current());
        let none = Node {
            intent: None,
            ..node
        };
        assert!(!none.intent_is_current());
    }

    /// The module's wire example is real: each line reads as the record its `type` names, and
    /// writing that record again gives the same fields and values.
    #[test]
    fn the_wire_example_in_this_module_is_what_the_types_write() {
        let source = include_str!("record.rs");
        let lines: Vec<&str> = source
            .lines()
            .filter_map(|l| l.strip_prefix("//! {"))
            .collect();
        assert_eq!(
            lines.len(),
            6,
            "the example has one line per record type shown"
        );
        for rest in lines {
            let line = format!("{{{rest}");
            let written: serde_json::Value = serde_json::from_str(&line).unwrap();
            let record: Record =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let again = serde_json::to_value(&record).unwrap();
            assert_eq!(again, written, "{line}");
        }
    }

    /// The direct read by tag gives what the enum's own read gives, for every record type the
    /// wire example shows and for the two whose fields are flattened into a map.
    #[test]
    fn a_record_read_by_its_tag_is_the_record_the_enum_reads() {
        let source = include_str!("record.rs");
        let mut lines: Vec<String> = source
            .lines()
            .filter_map(|l| l.strip_prefix("//! {"))
            .map(|rest| format!("{{{rest}"))
            .collect();
        lines.push(r#"{"type":"layer","id":"core","name":"Core","order":1,"nodes":4,"may_depend_on":["util"],"default":true}"#.to_string());
        lines.push(r#"{"type":"candidate","id":"a.py::f","rank":1,"score":0.5,"reasons":["fan_in"],"metrics":{"fan_in":3,"fan_out":1,"cross_layer_degree":0,"calling_layers":0,"betweenness":0.25,"pagerank":1.0}}"#.to_string());
        lines.push(r#"{"type":"status","status":"done","nodes":3}"#.to_string());
        lines.push(r#"{"type":"summary","stage":"tg-plan","candidates":2}"#.to_string());
        lines.push(r#"{"type":"patch","section":"added"}"#.to_string());
        let mut tags = std::collections::BTreeSet::new();
        for line in &lines {
            let by_enum: Record = serde_json::from_str(line).unwrap();
            let tag = by_enum.type_name();
            tags.insert(tag);
            let by_tag = Record::from_json_tagged(tag, line).unwrap();
            assert_eq!(by_tag, by_enum, "{line}");
            assert_eq!(
                serde_json::to_string(&by_tag).unwrap(),
                serde_json::to_string(&by_enum).unwrap()
            );
        }
        assert_eq!(tags.len(), Record::KNOWN_TYPES.len(), "{tags:?}");
    }

    #[test]
    fn resolution_self_is_spelled_self() {
        assert_eq!(
            serde_json::to_string(&Resolution::SelfMethod).unwrap(),
            "\"self\""
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let line = r#"{"type":"file","path":"a.c","lang":"c","hash":"x","bytes":3,"lines":1,"future":true}"#;
        let rec: Record = serde_json::from_str(line).unwrap();
        assert!(matches!(rec, Record::File(f) if f.path == "a.c"));
    }
}
