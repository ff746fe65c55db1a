//! Property tests (issue 9): the NDJSON reader/writer round trip and the layers config parser,
//! on generated inputs (the id scheme's are in parse/tests/ids.rs). `PROPTEST_CASES=N` raises the number of cases per
//! property (the default keeps the whole file to a few seconds in a debug build); a failure is
//! shrunk and its seed saved in `shared/tests/properties.proptest-regressions` (commit that file).
#![allow(clippy::unwrap_used)]

mod support;

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use std::io::BufReader;
use std::path::Path;
use support::{config, text};
use tg_shared::layers::{self, LayerConfig, NodeView};
use tg_shared::ndjson::{parse_line, RecordReader, RecordWriter};
use tg_shared::record::{
    Candidate, CandidateMetrics, Diagnostic, Edge, EdgeKind, FileRecord, Header, LayerRecord,
    Level, Node, NodeKind, PatchMarker, PatchOf, PatchSection, Record, Resolution, Role, Status,
    Summary,
};

// ---------------------------------------------------------------------------------------------
// Strategies: records
// ---------------------------------------------------------------------------------------------

/// Doubles as the stages write them (short decimals): the general round trip. Every finite
/// double is the business of `ndjson_any_finite_double_reads_back_exactly`.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.95),
        Just(0.3),
        Just(0.0),
        (-1_000_000_000i64..1_000_000_000).prop_map(|n| n as f64 / 1000.0),
        (0u32..1_000_000).prop_map(|n| f64::from(n) / 1e6),
    ]
}

/// Any finite double (JSON has no NaN or infinity; serde_json writes them as `null`).
fn any_finite() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

fn node_kind() -> impl Strategy<Value = NodeKind> {
    prop::sample::select(NodeKind::ALL.to_vec())
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<serde_json::Map<_, _>>())),
        ]
    })
}

/// Keys of a flattened map: anything but the fields beside it.
fn flat_key(taken: &'static [&'static str]) -> impl Strategy<Value = String> {
    text().prop_filter("a field of the record itself", move |k| {
        !taken.contains(&k.as_str())
    })
}

fn node() -> impl Strategy<Value = Node> {
    (
        (
            text(),
            node_kind(),
            text(),
            text(),
            any::<u32>(),
            any::<u32>(),
        ),
        (
            option::of(text()),
            option::of(text()),
            option::of(text()),
            text(),
        ),
        (
            option::of(text()),
            option::of(text()),
            option::of(text()),
            option::of(text()),
        ),
        (prop::sample::select(Role::ALL.to_vec()), option::of(text())),
    )
        .prop_map(
            |(
                (id, kind, name, file, line_start, line_end),
                (parent, signature, doc, hash),
                (layer, intent, intent_hash, intent_source),
                (role, implements),
            )| Node {
                id,
                kind,
                name,
                file,
                line_start,
                line_end,
                text_start: (line_start > 1 && line_start % 3 == 0).then(|| line_start - 1),
                parent,
                signature,
                doc,
                hash,
                role,
                implements,
                stub: line_end % 2 == 0,
                getter: line_start % 5 == 0,
                test_case: line_end % 7 == 0,
                layer,
                intent,
                intent_hash,
                intent_source,
            },
        )
}

fn edge() -> impl Strategy<Value = Edge> {
    (
        prop::sample::select(EdgeKind::ALL.to_vec()),
        text(),
        text(),
        any::<u32>(),
        any::<u32>(),
        option::of(prop::sample::select(vec![
            Resolution::Local,
            Resolution::SelfMethod,
            Resolution::Import,
            Resolution::Unique,
            Resolution::Ambiguous,
        ])),
        option::of(finite()),
        option::of(any::<bool>()),
        option::of(any::<bool>()),
    )
        .prop_map(
            |(kind, src, dst, line, count, resolution, confidence, cross_layer, violation)| Edge {
                kind,
                src,
                dst,
                line,
                count,
                resolution,
                confidence,
                cross_layer,
                violation,
            },
        )
}

fn record() -> impl Strategy<Value = Record> {
    let patch = option::of((text(), text()).prop_map(|(base, result)| PatchOf { base, result }));
    let fingerprint = option::of(text());
    let header = (text(), text(), text(), fingerprint, patch).prop_map(
        |(minor, producer, root, fingerprint, patch)| {
            Record::Header(Header {
                // The reader rejects another major version (a property of its own below).
                schema: format!("1.{minor}"),
                producer,
                root,
                fingerprint,
                patch,
            })
        },
    );
    let file = (text(), text(), text(), any::<u64>(), any::<u32>()).prop_map(
        |(path, lang, hash, bytes, lines)| {
            Record::File(FileRecord {
                path,
                lang,
                hash,
                bytes,
                lines,
            })
        },
    );
    let diagnostic = (
        prop::sample::select(vec![Level::Info, Level::Warning, Level::Error]),
        option::of(text()),
        option::of(any::<u32>()),
        text(),
        text(),
    )
        .prop_map(|(level, file, line, code, message)| {
            Record::Diagnostic(Diagnostic {
                level,
                file,
                line,
                code,
                message,
            })
        });
    let layer = (
        text(),
        text(),
        any::<i64>(),
        any::<u64>(),
        option::of(text()),
        option::of(vec(text(), 0..4)),
        any::<bool>(),
    )
        .prop_map(
            |(id, name, order, nodes, description, may_depend_on, default)| {
                Record::Layer(LayerRecord {
                    id,
                    name,
                    order,
                    nodes,
                    description,
                    may_depend_on,
                    default,
                })
            },
        );
    let candidate = (
        text(),
        any::<u32>(),
        finite(),
        vec(text(), 0..4),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            finite(),
            finite(),
        ),
    )
        .prop_map(|(id, rank, score, reasons, m)| {
            Record::Candidate(Candidate {
                id,
                rank,
                score,
                reasons,
                metrics: CandidateMetrics {
                    fan_in: m.0,
                    fan_out: m.1,
                    cross_layer_degree: m.2,
                    calling_layers: m.3,
                    betweenness: m.4,
                    pagerank: m.5,
                },
            })
        });
    let status = (
        text(),
        btree_map(flat_key(&["type", "status"]), json_value(), 0..5),
    )
        .prop_map(|(status, fields)| {
            Record::Status(Status {
                status,
                fields: fields.into_iter().collect(),
            })
        });
    let summary = (
        text(),
        btree_map(flat_key(&["type", "stage"]), json_value(), 0..5),
    )
        .prop_map(|(stage, counts)| Record::Summary(Summary { stage, counts }));
    prop_oneof![
        header,
        file,
        node().prop_map(Record::Node),
        edge().prop_map(Record::Edge),
        diagnostic,
        layer,
        candidate,
        status,
        summary,
        prop_oneof![
            Just(PatchSection::Removed),
            Just(PatchSection::Added),
            Just(PatchSection::Tail)
        ]
        .prop_map(|section| Record::Patch(PatchMarker { section })),
    ]
}

/// A line of a record type this build does not know, with blanks around it; the reader hands
/// it back byte for byte.
fn unknown_line() -> impl Strategy<Value = String> {
    (
        text().prop_filter("a known type", |t| {
            !Record::KNOWN_TYPES.contains(&t.as_str())
        }),
        btree_map(flat_key(&["type"]), json_value(), 0..4),
        "[ \t]{0,3}",
        "[ \t]{0,3}",
    )
        .prop_map(|(kind, fields, before, after)| {
            let mut map = serde_json::Map::new();
            map.insert("type".into(), kind.into());
            map.extend(fields);
            format!("{before}{}{after}", serde_json::Value::Object(map))
        })
}

#[derive(Debug, Clone)]
enum Line {
    Record(Box<Record>),
    Unknown(String),
    /// Blank lines (spaces, tabs, a CR) are skipped but counted.
    Blank(String),
}

fn stream_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        6 => record().prop_map(|r| Line::Record(Box::new(r))),
        2 => unknown_line().prop_map(Line::Unknown),
        1 => "[ \t]{0,3}\r?".prop_map(Line::Blank),
    ]
}

/// The 1-based number of the last line of `bytes` (a final line without newline counts).
fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Pieces of NDJSON-ish byte soup for the reader.
fn ndjson_soup() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => vec(any::<u8>(), 0..16),
        2 => record().prop_map(|r| serde_json::to_vec(&r).unwrap()),
        2 => prop::sample::select(vec![
            &b"\n"[..], b"\r\n", b"\r", b"{", b"}", b"[", b"\"type\":", b"\"node\"", b"\"header\"",
            b",", b":", b"\xff\xfe", b"\xc3", b"\0", b"{\"type\":\"header\",\"schema\":\"2.0\"}",
            b"{\"type\":\"summary\",\"stage\":\"a\",\"n\":1e999}", b"  \t", b"\"\\u0000\"",
            b"\"\\ud800\"", b"123456789012345678901234567890", b"-0", b"null", b"true",
        ])
        .prop_map(<[u8]>::to_vec),
    ];
    vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

// ---------------------------------------------------------------------------------------------
// Properties: NDJSON
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    /// Records written by the writer read back equal, on the line they were written to; unknown
    /// types come back byte for byte; blank lines are skipped but counted. The reader's buffer
    /// size (how a line arrives in chunks) changes nothing.
    #[test]
    fn ndjson_writer_output_reads_back_identically(
        lines in vec(stream_line(), 0..12),
        capacity in 1usize..80,
    ) {
        let mut writer = RecordWriter::new(Vec::new());
        let mut expected = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let number = index as u64 + 1;
            match line {
                Line::Record(record) => {
                    writer.write(record).unwrap();
                    expected.push((number, Some(record.as_ref().clone()), None));
                }
                Line::Unknown(raw) => {
                    writer.write_raw(raw).unwrap();
                    expected.push((number, None, Some(raw.clone())));
                }
                Line::Blank(blank) => writer.write_raw(blank).unwrap(),
            }
        }
        let bytes = writer.into_inner();
        prop_assert_eq!(line_count(&bytes), lines.len() as u64);
        let reader = RecordReader::new(BufReader::with_capacity(capacity, &bytes[..]));
        let mut got = Vec::new();
        for item in reader {
            let item = item.map_err(|e| TestCaseError::fail(e.to_string()))?;
            match &item.record {
                // A known record's raw line is exactly what the writer produced for it.
                Some(record) => {
                    prop_assert_eq!(&item.raw, &serde_json::to_string(record).unwrap());
                    got.push((item.line, Some(record.clone()), None));
                }
                None => got.push((item.line, None, Some(item.raw.clone()))),
            }
        }
        prop_assert_eq!(got, expected);
    }

    /// Whatever the bytes, the reader never panics, every result names a line that exists,
    /// results come in line order, and what it accepted writes back to a line that reads as
    /// the same record.
    #[test]
    fn ndjson_reader_survives_any_bytes(
        bytes in ndjson_soup(),
        max_line in prop_oneof![Just(tg_shared::ndjson::MAX_LINE_BYTES), 1usize..64],
        capacity in 1usize..80,
    ) {
        let last = line_count(&bytes);
        let reader = RecordReader::with_max_line(BufReader::with_capacity(capacity, &bytes[..]), max_line);
        let mut previous = 0;
        for result in reader {
            let line = match &result {
                Ok(item) => item.line,
                Err(err) => {
                    prop_assert!(!err.message.is_empty());
                    let prefix = format!("line {}: ", err.line);
                    prop_assert!(err.to_string().starts_with(&prefix), "{}", err);
                    err.line
                }
            };
            prop_assert!(line >= 1 && line <= last, "line {} of {}", line, last);
            prop_assert!(line > previous, "line {} after {}", line, previous);
            previous = line;
            if let Ok(item) = result {
                prop_assert!(item.raw.len() <= max_line);
                prop_assert!(!item.raw.contains('\n'));
                if let Some(record) = item.record {
                    let again = serde_json::to_string(&record).unwrap();
                    let back = parse_line(line, &again)
                        .map_err(|e| TestCaseError::fail(format!("{e} in {again}")))?;
                    prop_assert_eq!(back.record, Some(record));
                }
            }
        }
    }

    /// One line of any text: an item or an error, both naming the line they were given.
    #[test]
    fn ndjson_parse_line_never_panics(line in 1u64.., text in text()) {
        match parse_line(line, &text) {
            Ok(item) => {
                prop_assert_eq!(item.line, line);
                prop_assert_eq!(item.raw, text);
            }
            Err(err) => prop_assert_eq!(err.line, line),
        }
    }

    /// A header of any other major version is refused on its own line.
    #[test]
    fn ndjson_other_major_schema_is_refused(major in 2u32.., minor in "[0-9]{1,3}", blank in 0usize..3) {
        let header = serde_json::json!({
            "type": "header",
            "schema": format!("{major}.{minor}"),
            "producer": "p",
            "root": ".",
        });
        let text = format!("{}{header}\n", "\n".repeat(blank));
        let results: Vec<_> = RecordReader::new(text.as_bytes()).collect();
        prop_assert_eq!(results.len(), 1);
        let err = results[0].as_ref().unwrap_err();
        prop_assert_eq!(err.line, blank as u64 + 1);
        let expected = format!("major version {major}");
        prop_assert!(err.message.contains(&expected), "{}", err.message);
    }
}

/// A score written by tg-plan must read back as the same double, or any tool that reads the
/// stream and writes it again changes the bytes (same input, same bytes). Fails
/// while serde_json is built without its `float_roundtrip` feature: its default parser can be
/// one ULP off (found by `ndjson_writer_output_reads_back_identically`, issue 9).
#[test]
fn ndjson_float_regression_pagerank_0_23265695946913206() {
    let value = 0.232_656_959_469_132_06_f64;
    let line = format!(
        "{{\"type\":\"edge\",\"kind\":\"calls\",\"src\":\"a\",\"dst\":\"b\",\"line\":1,\"confidence\":{value:?}}}"
    );
    let item = parse_line(1, &line).unwrap();
    let Some(Record::Edge(edge)) = item.record else {
        panic!("not an edge: {line}");
    };
    assert_eq!(
        edge.confidence.map(f64::to_bits),
        Some(value.to_bits()),
        "{line}"
    );
}

proptest! {
    #![proptest_config(config(256))]

    /// Every finite double in a record's float fields reads back bit for bit (but the sign of
    /// zero, which JSON keeps too).
    #[test]
    fn ndjson_any_finite_double_reads_back_exactly(
        confidence in any_finite(),
        score in any_finite(),
        count in any_finite(),
    ) {
        let mut writer = RecordWriter::new(Vec::new());
        let edge = Record::Edge(Edge {
            kind: EdgeKind::Calls,
            src: "a".into(),
            dst: "b".into(),
            line: 1,
            count: 1,
            resolution: None,
            confidence: Some(confidence),
            cross_layer: None,
            violation: None,
        });
        let candidate = Record::Candidate(Candidate {
            id: "a".into(),
            rank: 1,
            score,
            reasons: Vec::new(),
            metrics: CandidateMetrics {
                fan_in: 0,
                fan_out: 0,
                cross_layer_degree: 0,
                calling_layers: 0,
                betweenness: score,
                pagerank: confidence,
            },
        });
        let summary = Record::Summary(Summary {
            stage: "s".into(),
            counts: [("x".to_string(), serde_json::Value::from(count))].into(),
        });
        for record in [&edge, &candidate, &summary] {
            writer.write(record).unwrap();
        }
        let bytes = writer.into_inner();
        let back: Vec<Record> = RecordReader::new(&bytes[..])
            .map(|item| item.unwrap().record.unwrap())
            .collect();
        prop_assert_eq!(back, vec![edge, candidate, summary]);
    }
}

// ---------------------------------------------------------------------------------------------
// Config parser
// ---------------------------------------------------------------------------------------------

const FILE: &str = ".tldrgraph/layers.config.yaml";

/// Lines as libyaml counts them: LF, CR, CRLF, NEL, LS and PS all end one.
fn yaml_lines(text: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(String::new());
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => lines.push(String::new()),
            _ => lines.last_mut().unwrap().push(c),
        }
    }
    lines
}

/// An error's position lies in the text: an existing line, a column at most one past its end.
fn check_position(text: &str, err: &layers::ConfigError) -> Result<(), TestCaseError> {
    let lines = yaml_lines(text);
    prop_assert!(
        err.line >= 1 && err.line <= lines.len(),
        "line {} of {}: {}",
        err.line,
        lines.len(),
        err
    );
    let width = lines[err.line - 1]
        .chars()
        .count()
        .max(lines[err.line - 1].len());
    prop_assert!(
        err.column >= 1 && err.column <= width + 1,
        "column {} of a line of {}: {}",
        err.column,
        width,
        err
    );
    let prefix = format!("{FILE}:{}:{}: ", err.line, err.column);
    prop_assert!(err.to_string().starts_with(&prefix), "{}", err);
    prop_assert!(!err.message.is_empty() && !err.hint.is_empty());
    Ok(())
}

/// A parsed config's own invariants.
fn check_config(config: &LayerConfig) -> Result<(), TestCaseError> {
    prop_assert!(!config.layers.is_empty());
    prop_assert!(config.default < config.layers.len());
    for pair in config.layers.windows(2) {
        prop_assert!((pair[0].order, &pair[0].id) < (pair[1].order, &pair[1].id));
    }
    for (file, name) in [("a.py", "f"), ("src/x/y.rs", "Store"), ("", "")] {
        let id = format!("{file}::{name}");
        for kind in NodeKind::ALL {
            let view = NodeView {
                id: &id,
                kind,
                name,
                file,
            };
            prop_assert!(config.classify(&view) < config.layers.len());
        }
    }
    Ok(())
}

/// A syntax error at the very end of a config whose last line has no newline: libyaml puts the
/// end of the stream on a line of its own, one past the last (found by
/// `config_parse_never_panics_and_errors_point_into_the_text`, issue 9).
#[test]
fn config_regression_error_at_end_without_newline_is_inside_the_text() {
    let mut outside = Vec::new();
    for text in [
        "default_layer: :\u{a1}\n0",
        "version: 1\nlayers: [",
        "a:\n  - b\n c",
        "x: 1\ny",
        "layers: \"abc",
        "version: 1\nlayers: [\n",
    ] {
        let err = layers::parse(Path::new(FILE), text).unwrap_err();
        let lines = text.split('\n').count();
        if err.line > lines {
            outside.push(format!("{text:?}: {err} (the text has {lines} lines)"));
        }
    }
    assert!(outside.is_empty(), "{outside:#?}");
}

/// Positions the config parser finds itself (an unknown layer, a duplicate id, a bad glob or
/// kind) count columns in bytes, where YAML syntax errors (libyaml) count characters: after a
/// wide character on the same line the two disagree (found by the `layers_config` fuzz target,
/// issue 9). Columns count characters here, as in libyaml's errors and editors.
#[test]
fn config_regression_located_columns_count_characters() {
    let line =
        r#"  - {"id": "core", "name": "Storage—SQL “core”", "order": 1, "may_depend_on": [cöre]}"#;
    let text = format!("version: 1\ndefault_layer: core\nlayers:\n{line}\n");
    let err = layers::parse(Path::new(FILE), &text).unwrap_err();
    assert_eq!(
        err.message,
        "`may_depend_on` names layer `cöre`, which is not defined"
    );
    let column = line[..line.find("[cöre]").unwrap() + 1].chars().count() + 1;
    assert_eq!((err.line, err.column), (4, column), "{err}");
}

/// YAML-ish token soup, and a valid config with damage done to it.
fn yaml_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => prop::sample::select(vec![
            "version: 1\n", "version: 2\n", "default_layer: ", "layers:\n", "  - id: ", "    name: ",
            "    order: ", "    paths: ", "    symbols: ", "    kinds: ", "    may_depend_on: ",
            "    description: ", "plan:\n", "  coverage: ", "  max_share: ", "  min_lines: ",
            "utility_id: ", "rules:", "  - path_regex: ", "label_contains: ", "type_in: ",
            "exclude_file: ", "[", "]", "{", "}", "\"", "'", "!", "*", "**", "- ", ":", "\n",
            "  ", "\t", "# c\n", "&a ", "*a", "<<: ", "~", "null", "1e999", "-1", "0x10",
            "9223372036854775808", "\r", "\r\n", "\u{2028}", "\u{85}", "\u{feff}", "function",
            "clas", "api", "core", "src/**", "!**/tests/**", "[abc", "{a,b}", "(", "^(", "\\",
            "é", "“x”: ", "---\n", "...\n", "? ", "|\n", ">\n", "%YAML 1.2\n", "!!str ", "\0",
        ]).prop_map(str::to_string),
        1 => text(),
    ];
    prop_oneof![
        vec(token, 0..40).prop_map(|t| t.concat()),
        (
            valid_config(),
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            text()
        )
            .prop_map(|(model_cfg, a, b, insert)| {
                let text = model_cfg.render();
                let chars: Vec<char> = text.chars().collect();
                let (mut from, mut to) = (a.index(chars.len() + 1), b.index(chars.len() + 1));
                if from > to {
                    std::mem::swap(&mut from, &mut to);
                }
                to = to.min(from + 8);
                let mut out: String = chars[..from].iter().collect();
                out.push_str(&insert);
                out.extend(&chars[to..]);
                out
            }),
    ]
}

#[derive(Debug, Clone)]
enum PathPattern {
    /// `dir`, `dir/` or `dir/**`: the directory and what is below it.
    Under(&'static str, u8),
    /// `**/seg/**`: any directory of that name.
    AnyDepth(&'static str),
}

impl PathPattern {
    fn glob(&self) -> String {
        match self {
            PathPattern::Under(dir, 0) => dir.to_string(),
            PathPattern::Under(dir, 1) => format!("{dir}/"),
            PathPattern::Under(dir, _) => format!("{dir}/**"),
            PathPattern::AnyDepth(seg) => format!("**/{seg}/**"),
        }
    }

    fn matches(&self, file: &str) -> bool {
        match self {
            PathPattern::Under(dir, _) => file == *dir || file.starts_with(&format!("{dir}/")),
            PathPattern::AnyDepth(seg) => {
                let parts: Vec<&str> = file.split('/').collect();
                parts[..parts.len() - 1].contains(seg)
            }
        }
    }
}

#[derive(Debug, Clone)]
enum SymbolPattern {
    Exact(&'static str),
    Prefix(&'static str),
    Suffix(&'static str),
}

impl SymbolPattern {
    fn glob(&self) -> String {
        match self {
            SymbolPattern::Exact(s) => s.to_string(),
            SymbolPattern::Prefix(s) => format!("{s}*"),
            SymbolPattern::Suffix(s) => format!("*{s}"),
        }
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            SymbolPattern::Exact(s) => name == *s,
            SymbolPattern::Prefix(s) => name.starts_with(s),
            SymbolPattern::Suffix(s) => name.ends_with(s),
        }
    }
}

const DIRS: &[&str] = &[
    "src",
    "src/app",
    "src/app/api",
    "lib",
    "tests",
    "src/tests",
    "api",
];
const SEGMENTS: &[&str] = &["tests", "api", "app", "vendor"];
const NAMES: &[&str] = &[
    "get",
    "get_user",
    "UserHandler",
    "Handler",
    "run",
    "Store",
    "open",
    "x",
];
const FILES: &[&str] = &[
    "src/a.py",
    "src/app/b.py",
    "src/app/api/c.py",
    "src/app/api/tests/t.py",
    "lib/d.rs",
    "tests/e.py",
    "src/tests/f.c",
    "api/g.py",
    "vendor/api/h.py",
    "top.py",
    "srcx/i.py",
];

#[derive(Debug, Clone)]
struct GenLayer {
    id: String,
    name: String,
    order: i64,
    description: Option<String>,
    /// `(negated, pattern)`.
    paths: Option<Vec<(bool, PathPattern)>>,
    symbols: Option<Vec<SymbolPattern>>,
    kinds: Option<Vec<NodeKind>>,
    may_depend_on: Option<Vec<String>>,
    /// How lists are written: flow (`[a, b]`), block (`- a` lines) or a lone scalar.
    style: u8,
}

#[derive(Debug, Clone)]
struct GenConfig {
    layers: Vec<GenLayer>,
    default: usize,
}

/// A double-quoted YAML scalar (JSON escapes are YAML escapes).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

impl GenLayer {
    fn matches(&self, file: &str, name: &str, qualname: &str, kind: NodeKind) -> bool {
        if self.paths.is_none() && self.symbols.is_none() && self.kinds.is_none() {
            return false;
        }
        if let Some(paths) = &self.paths {
            let positive: Vec<&PathPattern> = paths
                .iter()
                .filter(|(neg, _)| !neg)
                .map(|(_, p)| p)
                .collect();
            if !positive.is_empty() && !positive.iter().any(|p| p.matches(file)) {
                return false;
            }
            if paths.iter().any(|(neg, p)| *neg && p.matches(file)) {
                return false;
            }
        }
        if let Some(symbols) = &self.symbols {
            if !symbols
                .iter()
                .any(|s| s.matches(name) || s.matches(qualname))
            {
                return false;
            }
        }
        if let Some(kinds) = &self.kinds {
            if !kinds.contains(&kind) {
                return false;
            }
        }
        true
    }

    /// Lines of this layer's YAML, each `(key, rendered line)`.
    fn render(&self, out: &mut Vec<String>) {
        out.push(format!("  - id: {}", self.id));
        out.push(format!("    name: {}", quoted(&self.name)));
        out.push(format!("    order: {}", self.order));
        if let Some(description) = &self.description {
            out.push(format!("    description: {}", quoted(description)));
        }
        let list = |out: &mut Vec<String>, key: &str, items: Vec<String>| match self.style {
            0 => out.push(format!("    {key}: [{}]", items.join(", "))),
            1 if items.len() == 1 => out.push(format!("    {key}: {}", items[0])),
            _ if items.is_empty() => out.push(format!("    {key}: []")),
            _ => {
                out.push(format!("    {key}:"));
                for item in items {
                    out.push(format!("      - {item}"));
                }
            }
        };
        if let Some(paths) = &self.paths {
            let items = paths
                .iter()
                .map(|(neg, p)| quoted(&format!("{}{}", if *neg { "!" } else { "" }, p.glob())))
                .collect();
            list(out, "paths", items);
        }
        if let Some(symbols) = &self.symbols {
            list(
                out,
                "symbols",
                symbols.iter().map(|s| quoted(&s.glob())).collect(),
            );
        }
        if let Some(kinds) = &self.kinds {
            list(
                out,
                "kinds",
                kinds.iter().map(|k| k.as_str().to_string()).collect(),
            );
        }
        if let Some(deps) = &self.may_depend_on {
            list(out, "may_depend_on", deps.clone());
        }
    }
}

impl GenConfig {
    fn lines(&self) -> Vec<String> {
        let mut out = vec![
            "version: 1".to_string(),
            format!("default_layer: {}", self.layers[self.default].id),
            "layers:".to_string(),
        ];
        for layer in &self.layers {
            layer.render(&mut out);
        }
        out
    }

    fn render(&self) -> String {
        let mut text = self.lines().join("\n");
        text.push('\n');
        text
    }

    /// The layer the model says a node belongs to.
    fn expected(&self, file: &str, name: &str, qualname: &str, kind: NodeKind) -> String {
        let mut sorted: Vec<&GenLayer> = self.layers.iter().collect();
        sorted.sort_by(|a, b| (a.order, &a.id).cmp(&(b.order, &b.id)));
        sorted
            .iter()
            .find(|l| l.matches(file, name, qualname, kind))
            .map_or_else(|| self.layers[self.default].id.clone(), |l| l.id.clone())
    }
}

/// YAML-printable text for names and descriptions (no control characters, no BOM).
fn printable() -> impl Strategy<Value = String> {
    "[ -~\u{a0}-\u{d7ff}\u{e000}-\u{fdcf}]{0,16}"
}

fn gen_layer() -> impl Strategy<Value = GenLayer> {
    let path = (
        any::<bool>(),
        prop_oneof![
            3 => (prop::sample::select(DIRS), 0u8..3).prop_map(|(d, s)| PathPattern::Under(d, s)),
            1 => prop::sample::select(SEGMENTS).prop_map(PathPattern::AnyDepth),
        ],
    );
    let symbol = prop_oneof![
        prop::sample::select(NAMES).prop_map(SymbolPattern::Exact),
        prop::sample::select(&["get", "User", "Sto", "r"][..]).prop_map(SymbolPattern::Prefix),
        prop::sample::select(&["Handler", "_user", "n", "et"][..]).prop_map(SymbolPattern::Suffix),
    ];
    (
        "[a-z][a-z0-9_]{0,5}",
        printable(),
        option::of(printable()),
        option::of(vec(path, 0..3)),
        option::of(vec(symbol, 0..3)),
        option::of(vec(node_kind(), 0..3)),
        0u8..3,
    )
        .prop_map(
            |(id, name, description, paths, symbols, kinds, style)| GenLayer {
                id,
                name,
                order: 0,
                description,
                paths,
                symbols,
                kinds,
                may_depend_on: None,
                style,
            },
        )
}

fn valid_config() -> impl Strategy<Value = GenConfig> {
    vec(gen_layer(), 1..6)
        .prop_flat_map(|layers| {
            let n = layers.len();
            (
                Just(layers),
                prop::collection::btree_set(-1000i64..1000, n..=n),
                0..n,
                vec(option::of(vec(0..n, 0..3)), n..=n),
            )
        })
        .prop_flat_map(|(mut layers, orders, default, deps)| {
            let orders: Vec<i64> = orders.into_iter().collect();
            for (index, layer) in layers.iter_mut().enumerate() {
                // Unique ids: the generated stem plus the layer's index.
                layer.id = format!("{}{index}", layer.id);
            }
            let ids: Vec<String> = layers.iter().map(|l| l.id.clone()).collect();
            for (index, layer) in layers.iter_mut().enumerate() {
                layer.may_depend_on = deps[index]
                    .as_ref()
                    .map(|d| d.iter().map(|&i| ids[i].clone()).collect());
            }
            (Just(layers), Just(orders).prop_shuffle(), Just(default))
        })
        .prop_map(|(mut layers, orders, default)| {
            for (layer, order) in layers.iter_mut().zip(orders) {
                layer.order = order;
            }
            GenConfig { layers, default }
        })
}

/// Where `needle` starts in `line` (1-based, in characters) on the 1-based line `number`.
fn position_of(lines: &[String], number: usize, needle: &str) -> (usize, usize) {
    let at = lines[number - 1].find(needle).unwrap();
    (number, lines[number - 1][..at].chars().count() + 1)
}

/// The 1-based number of the first line (from `from`) that starts, after blanks, with `prefix`.
fn line_starting(lines: &[String], from: usize, prefix: &str) -> usize {
    from + 1
        + lines[from..]
            .iter()
            .position(|l| l.trim_start().starts_with(prefix))
            .unwrap()
}

/// The line (0-based index) where layer `k`'s block starts.
fn layer_line(lines: &[String], k: usize) -> usize {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("  - id: "))
        .nth(k)
        .unwrap()
        .0
}

proptest! {
    #![proptest_config(config(256))]

    /// Any text: a config or an error whose line:col lies inside the text, never a panic.
    #[test]
    fn config_parse_never_panics_and_errors_point_into_the_text(text in yaml_soup()) {
        match layers::parse(Path::new(FILE), &text) {
            Ok(config) => check_config(&config)?,
            Err(err) => check_position(&text, &err)?,
        }
    }

    /// A generated valid config parses to its layers, sorted by order, and classifies nodes as
    /// the model of its rules says.
    #[test]
    fn config_valid_configs_classify_as_modelled(
        model_cfg in valid_config(),
        nodes in vec((prop::sample::select(FILES), prop::sample::select(NAMES),
                      prop::option::of(prop::sample::select(NAMES)), node_kind()), 1..24),
    ) {
        let text = model_cfg.render();
        let config = layers::parse(Path::new(FILE), &text)
            .map_err(|e| TestCaseError::fail(format!("{e} ({})\n{text}", e.hint)))?;
        check_config(&config)?;
        prop_assert_eq!(config.format, layers::Format::Native);
        let mut sorted = model_cfg.layers.clone();
        sorted.sort_by(|a, b| (a.order, &a.id).cmp(&(b.order, &b.id)));
        let got: Vec<(&str, &str, i64)> = config.layers.iter()
            .map(|l| (l.id.as_str(), l.name.as_str(), l.order)).collect();
        let want: Vec<(&str, &str, i64)> = sorted.iter()
            .map(|l| (l.id.as_str(), l.name.as_str(), l.order)).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(&config.layers[config.default].id, &model_cfg.layers[model_cfg.default].id);
        for (layer, model) in config.layers.iter().zip(&sorted) {
            prop_assert_eq!(&layer.description, &model.description);
            prop_assert_eq!(&layer.may_depend_on, &model.may_depend_on);
            for other in &model_cfg.layers {
                let forbidden = other.id != model.id
                    && model.may_depend_on.as_ref().is_some_and(|d| !d.contains(&other.id));
                prop_assert_eq!(layer.forbids(&other.id), forbidden);
            }
        }
        for (file, name, owner, kind) in nodes {
            let qualname = match owner {
                Some(owner) => format!("{owner}.{name}"),
                None => name.to_string(),
            };
            let id = format!("{file}::{qualname}");
            let view = NodeView { id: &id, kind, name, file };
            let got = &config.layers[config.classify(&view)].id;
            let want = model_cfg.expected(file, name, &qualname, kind);
            prop_assert_eq!(got, &want, "node {} ({:?}) in\n{}", id, kind, text);
        }
    }

    /// Each kind of mistake in a valid config is reported at the line and column of the
    /// offending key or value.
    #[test]
    fn config_errors_point_at_the_mistake(
        model_cfg in valid_config().prop_filter("two layers", |g| g.layers.len() >= 2),
        which in 0usize..7,
        k in any::<prop::sample::Index>(),
    ) {
        let mut model_cfg = model_cfg;
        let n = model_cfg.layers.len();
        let k = k.index(n - 1) + 1; // never layer 0
        // The mistake's text and what the message says.
        let (needle, message): (String, String) = match which {
            0 => {
                let id = model_cfg.layers[0].id.clone();
                model_cfg.layers[k].id = id.clone();
                (format!("id: {id}"), format!("layer id `{id}` is used twice"))
            }
            1 => {
                model_cfg.layers[k].may_depend_on.get_or_insert_with(Vec::new).push("zz_missing".into());
                ("zz_missing".into(),
                 "`may_depend_on` names layer `zz_missing`, which is not defined".into())
            }
            2 => {
                model_cfg.layers[k].kinds = Some(vec![NodeKind::Class]);
                model_cfg.layers[k].style = 0;
                ("[class".into(), "`functon` is not a node kind".into())
            }
            3 => ("    name: ".into(), "unknown key `nmae`; did you mean `name`?".into()),
            4 => {
                model_cfg.layers[k].paths = Some(vec![(false, PathPattern::Under("src", 2))]);
                model_cfg.layers[k].style = 0;
                ("\"src/**\"".into(), "invalid glob \"src/[**\" in `paths`: unclosed character class; missing ']'".into())
            }
            5 => ("version: 1".into(), "unsupported config version 2".into()),
            _ => {
                let default = model_cfg.layers[model_cfg.default].id.clone();
                (format!("default_layer: {default}"),
                 "`default_layer` names layer `nowhere`, which is not defined".into())
            }
        };
        let mut lines = model_cfg.lines();
        let start = layer_line(&lines, k);
        let (line, column) = match which {
            0 => {
                let p = position_of(&lines, start + 1, &needle);
                (p.0, p.1 + 4)
            }
            1 => {
                let at = line_starting(&lines, start, "may_depend_on:");
                // Block style puts the items on the lines below.
                let at = (at..=lines.len()).find(|&i| lines[i - 1].contains("zz_missing")).unwrap();
                position_of(&lines, at, "zz_missing")
            }
            2 => {
                let at = line_starting(&lines, start, "kinds:");
                lines[at - 1] = lines[at - 1].replace("[class", "[functon");
                position_of(&lines, at, "functon")
            }
            3 => {
                let at = start + 2;
                lines[at - 1] = lines[at - 1].replace("name:", "nmae:");
                position_of(&lines, at, "nmae")
            }
            4 => {
                let at = line_starting(&lines, start, "paths:");
                lines[at - 1] = lines[at - 1].replace("\"src/**\"", "\"src/[**\"");
                position_of(&lines, at, "src/[**")
            }
            5 => {
                lines[0] = "version: 2".into();
                (1, 10)
            }
            _ => {
                lines[1] = "default_layer: nowhere".into();
                (2, 16)
            }
        };
        let text = lines.join("\n") + "\n";
        let err = match layers::parse(Path::new(FILE), &text) {
            Ok(_) => return Err(TestCaseError::fail(format!("accepted:\n{text}"))),
            Err(err) => err,
        };
        check_position(&text, &err)?;
        prop_assert_eq!(&err.message, &message, "\n{}", text);
        prop_assert_eq!((err.line, err.column), (line, column), "{}\n{}", err, text);
    }
}
