//! Fuzz targets (issue 9): one pure function per target, called by the cargo-fuzz targets in
//! `fuzz_targets/` and by the stable-toolchain runner `tg-fuzz`. Each feeds the bytes to the
//! real entry point and checks cheap invariants; a violated invariant is a panic, like a crash.
//!
//! What the targets stand for:
//! - `ndjson`: every stage's stdin ([`RecordReader`]), a line at a time, with the bound on
//!   line length, and what a pass-through stage writes back.
//! - `layers_config`: `.tldrgraph/layers.config.yaml` ([`layers::parse`], both formats).
//! - `codec`: the binary caches. `search.bin`'s head is decoded from its first bytes without
//!   checking a checksum ([`tg_shared::search::IndexHead::read`]), so that decode sees raw damage;
//!   the sealed payloads (extraction cache, the in-memory search index) are decoded too, as after
//!   a seal that matched (a cache written by a buggy build).
//! - `index`: `search.bin` as the readers open it in place ([`IndexView`]), as the bytes of the
//!   file and again with every block checksum recomputed over them, so the section checks behind
//!   the checksums see the damage too.
//! - `python`, `c`, `rust`, `typescript`: the extractors, on the source as tg-extract decodes it (lossy
//!   UTF-8), through [`extract_file`] and the id scheme ([`FileFacts::symbol_ids`]).
#![forbid(unsafe_code)]

use std::io::BufReader;
use std::path::Path;
use tg_extract::cache::ExtractCache;
use tg_lang::{for_path, FileFacts};
use tg_parse::extract_file;
use tg_shared::codec;
use tg_shared::layers::{self, NodeView};
use tg_shared::ndjson::{parse_line, RecordReader, MAX_LINE_BYTES};
use tg_shared::record::NodeKind;
use tg_shared::search::blocks::BlockWriter;
use tg_shared::search::layout::{Column, Section};
use tg_shared::search::{IndexHead, IndexView, SearchIndex};

/// 1-based number of the last line of `bytes` (a final line without a newline counts).
fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// The NDJSON reader on any bytes. The first two bytes also pick the reader's buffer size and,
/// one time in four, a small line bound, so chunk boundaries and over-long lines are covered.
pub fn ndjson(data: &[u8]) {
    let capacity = 1 + usize::from(data.first().copied().unwrap_or(0) % 64);
    let max_line = match data.get(1) {
        Some(&b) if b % 4 == 0 => 1 + usize::from(b),
        _ => MAX_LINE_BYTES,
    };
    let last = line_count(data);
    let reader = RecordReader::with_max_line(BufReader::with_capacity(capacity, data), max_line);
    let mut previous = 0;
    for result in reader {
        let line = match &result {
            Ok(item) => item.line,
            Err(err) => {
                assert!(!err.message.is_empty(), "an empty error message");
                err.line
            }
        };
        assert!(
            line >= 1 && line <= last && line > previous,
            "line {line} after {previous}, of {last}"
        );
        previous = line;
        let Ok(item) = result else { continue };
        assert!(item.raw.len() <= max_line && !item.raw.contains('\n'));
        if let Some(record) = &item.record {
            // What a stage that owns the record writes back must read again, as the same type.
            let again = serde_json::to_string(record).expect("a record that was read writes");
            let back = parse_line(line, &again)
                .unwrap_or_else(|e| panic!("a record written does not read back: {e}: {again}"));
            let back = back.record.expect("a known record type stays known");
            assert_eq!(
                std::mem::discriminant(&back),
                std::mem::discriminant(record),
                "{again}"
            );
        }
    }
}

/// Lines as libyaml counts them (LF, CR, CRLF, NEL, LS, PS), each with its width in characters.
fn yaml_line_widths(text: &str) -> Vec<usize> {
    let mut widths = vec![0];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                widths.push(0);
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => widths.push(0),
            _ => *widths.last_mut().unwrap_or(&mut 0) += c.len_utf8(),
        }
    }
    widths
}

/// The layers config parser on any text (invalid UTF-8 is decoded lossily: the loader refuses
/// it before parsing, so only the parser's own behaviour is of interest).
pub fn layers_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match layers::parse(Path::new("layers.config.yaml"), &text) {
        Ok(config) => {
            assert!(!config.layers.is_empty() && config.default < config.layers.len());
            for pair in config.layers.windows(2) {
                assert!((pair[0].order, &pair[0].id) < (pair[1].order, &pair[1].id));
            }
            for (file, name) in [("src/a.py", "f"), ("a/tests/t.rs", "A::run"), ("", "")] {
                let id = format!("{file}::{name}");
                for kind in NodeKind::ALL {
                    let view = NodeView {
                        id: &id,
                        kind,
                        name,
                        file,
                    };
                    let layer = &config.layers[config.classify(&view)];
                    let _ = layer.forbids(&config.layers[config.default].id);
                }
            }
        }
        Err(err) => {
            // Inside the text by either line model (libyaml's line breaks, or `\n` only as
            // the locator counts), with a byte or a character column: the column unit is a
            // known finding of its own (issue 9, shared/tests/properties.rs
            // `config_regression_located_columns_count_characters`).
            let libyaml = yaml_line_widths(&text);
            let plain: Vec<usize> = text.split('\n').map(str::len).collect();
            let inside = |widths: &[usize]| {
                err.line >= 1
                    && err.column >= 1
                    && err.line <= widths.len()
                    && err.column <= widths[err.line - 1] + 1
            };
            // Known (issue 9, shared/tests/properties.rs
            // `config_regression_error_at_end_without_newline_is_inside_the_text`): an error at
            // the end of a text without a final newline is put at column 1 of the line after.
            let at_end = err.column == 1 && err.line == libyaml.len() + 1;
            assert!(
                inside(&libyaml) || inside(&plain) || at_end,
                "{}:{} outside a text of {} lines: {err}",
                err.line,
                err.column,
                plain.len()
            );
            assert!(!err.message.is_empty() && !err.hint.is_empty(), "{err:?}");
            let _ = err.to_string();
        }
    }
}

/// The cache codec: raw bytes as the search index head (read without its seal), as the sealed
/// payloads, and through the seal itself.
pub fn codec(data: &[u8]) {
    stable::<IndexHead>(data);
    stable::<SearchIndex>(data);
    stable::<ExtractCache>(data);
    // The seal refuses anything it did not write; once sealed, the bytes decode as before.
    let _ = codec::decode_sealed::<ExtractCache>(data);
    if let Ok(sealed) = codec::encode_sealed(&data.to_vec()) {
        assert_eq!(
            codec::decode_sealed::<Vec<u8>>(&sealed).ok(),
            Some(data.to_vec())
        );
    }
}

/// search.bin read in place: opening it, loading every section and reading every value answers
/// or refuses, on the bytes as they are and resealed; and a view whose sections all loaded reads
/// nothing that fails afterwards (the load-time checks cover every later read).
pub fn index(data: &[u8]) {
    read_index(data);
    read_index(&reseal(data));
}

/// `data` with its block checksums, trailer hash and footer written afresh over the same
/// content and section directory (as far as the footer can be found; else all of it is content).
fn reseal(data: &[u8]) -> Vec<u8> {
    const FOOTER: usize = 56;
    let le = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize;
    let mut content = data;
    let mut own: &[u8] = &[];
    if let Some(at) = data.len().checked_sub(FOOTER) {
        if &data[at + 48..] == b"TGBLKS01" {
            content = &data[..at];
            if let Some(tail) = data.get(le(&data[at..at + 8]).min(at)..at) {
                content = &data[..at - tail.len()];
                if tail.len() >= 8 {
                    let own_len = le(&tail[..8]).min(tail.len() - 8);
                    own = &tail[8..8 + own_len];
                }
            }
        }
    }
    let mut writer = BlockWriter::new(Vec::new());
    std::io::Write::write_all(&mut writer, content).expect("a write to memory");
    writer.finish(own).expect("a write to memory")
}

fn read_index(bytes: &[u8]) {
    let path = std::env::temp_dir().join(format!(
        "tg-fuzz-index-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, bytes).expect("the scratch file is written");
    let Ok(view) = IndexView::open(&path) else {
        return;
    };
    let whole = view.require(&Section::all()).is_ok();
    // Counts are the header's claims until the sections loaded: read a bounded number.
    let symbols = view.len().min(2048) as u32;
    for i in (0..symbols).chain([symbols, u32::MAX]) {
        let s = view.symbol(i);
        let _ = (s.id(), s.name(), s.file(), s.implements(), s.signature());
        let _ = (s.intent(), s.intent_source(), s.doc(), s.text_hash());
        let _ = (view.out_edges(i), view.in_edges(i), view.length(i));
    }
    let edges = view.edge_count().min(2048) as u32;
    for e in (0..edges).chain([edges, u32::MAX]) {
        let _ = view.edge(e);
    }
    let _ = view.total_length();
    let terms = view.text_count(Column::Term).min(2048) as u32;
    for t in 0..=terms {
        let _ = view.postings(&view.text(Column::Term, t));
    }
    let _ = view.postings("");
    if whole {
        assert_eq!(
            view.failure(),
            None,
            "a read failed after every section loaded"
        );
    }
    let _ = view.to_index();
}

/// Whatever decodes as `T` encodes, and decodes again to the same encoding (compared as bytes:
/// a decoded float may be NaN).
fn stable<T: serde::Serialize + serde::de::DeserializeOwned>(data: &[u8]) {
    if let Ok(value) = codec::decode::<T>(data) {
        let bytes = codec::encode(&value).expect("a decoded value encodes");
        let again = codec::decode::<T>(&bytes).expect("an encoded value decodes");
        assert!(
            codec::encode(&again).ok() == Some(bytes),
            "encoding is not stable"
        );
    }
}

/// Extracts `data` as the file at `path`, twice, and checks the facts and ids.
fn extract(path: &str, data: &[u8]) {
    // tg-extract decodes a file that is not UTF-8 lossily and extracts it anyway.
    let source = String::from_utf8_lossy(data);
    let lang = for_path(path).expect("a language for the path");
    let facts = match extract_file(lang, path, &source) {
        Ok(facts) => facts,
        // Refused before parsing, as tg-extract reports it (a `parse_failed` diagnostic).
        Err(err) if err.starts_with(tg_parse::TOO_DEEPLY_NESTED) => return,
        Err(err) => panic!("the parser gives no tree: {err}"),
    };
    check_facts(path, &source, &facts);
    let again = extract_file(lang, path, &source).expect("the parser gives a tree");
    assert!(again == facts, "extraction is not deterministic");
}

fn check_facts(path: &str, source: &str, facts: &FileFacts) {
    let last = u32::try_from(source.matches('\n').count() + 1).unwrap_or(u32::MAX);
    let symbols = &facts.symbols;
    assert!(!symbols.is_empty(), "no module symbol");
    let module = &symbols[0];
    assert!(module.kind == NodeKind::Module && module.parent.is_none());
    assert!(module.qualname.is_empty());
    let count = symbols.len() as u32;
    for (index, symbol) in symbols.iter().enumerate() {
        assert!(
            symbol.line_start >= 1
                && symbol.line_start <= symbol.line_end
                && symbol.line_end <= last,
            "symbol {} `{}` at lines {}..{} of {last}",
            index,
            symbol.qualname,
            symbol.line_start,
            symbol.line_end
        );
        for text in [&symbol.signature, &symbol.doc].into_iter().flatten() {
            assert!(
                !text.contains('\n'),
                "a multi-line signature or doc: {text:?}"
            );
        }
        if index > 0 {
            let parent = symbol.parent.expect("a symbol without a parent") as usize;
            assert!(parent < index, "parent {parent} after symbol {index}");
            assert!(symbol.kind != NodeKind::Module, "a second module symbol");
            let outer = &symbols[parent];
            assert!(
                outer.line_start <= symbol.line_start && symbol.line_end <= outer.line_end,
                "`{}` (lines {}..{}) outside its parent `{}` (lines {}..{})",
                symbol.qualname,
                symbol.line_start,
                symbol.line_end,
                outer.qualname,
                outer.line_start,
                outer.line_end
            );
        }
    }
    for line in facts.refs.iter().map(|r| (r.scope, r.line)) {
        assert!(
            line.0 < count && line.1 >= 1 && line.1 <= last,
            "reference {line:?}"
        );
    }
    for line in facts.imports.iter().map(|i| (i.scope, i.line)) {
        assert!(
            line.0 < count && line.1 >= 1 && line.1 <= last,
            "import {line:?}"
        );
    }
    assert!(facts.locals.iter().all(|(scope, _)| *scope < count));
    for line in [facts.syntax_error_line, facts.depth_limit_line]
        .into_iter()
        .flatten()
    {
        assert!(line >= 1 && line <= last, "error line {line} of {last}");
    }
    // The id scheme: the module is its path, symbols `path::qualname[#k]`, all distinct.
    let ids = facts.symbol_ids(path);
    assert_eq!(ids.len(), symbols.len());
    assert_eq!(ids[0], path);
    let prefix = format!("{path}::");
    let mut seen = std::collections::HashSet::new();
    for (id, symbol) in ids.iter().zip(symbols).skip(1) {
        assert!(id.starts_with(&prefix), "{id}");
        assert!(id[prefix.len()..].starts_with(&symbol.qualname), "{id}");
        assert!(!id.contains(['\n', '\r']), "{id:?}");
    }
    for id in &ids {
        assert!(seen.insert(id.as_str()), "id {id} twice");
    }
}

pub fn python(data: &[u8]) {
    extract("pkg/mod.py", data);
}

pub fn c(data: &[u8]) {
    extract("src/file.c", data);
}

pub fn rust(data: &[u8]) {
    extract("src/lib.rs", data);
}

/// TypeScript (the TSX grammar, which also reads JSX) and, on the same bytes, JavaScript.
pub fn typescript(data: &[u8]) {
    extract("src/app.tsx", data);
    extract("src/app.js", data);
}

/// What the mutator knows of a target's input language.
pub struct Grammar {
    /// Tokens inserted whole.
    pub tokens: &'static [&'static str],
    /// Byte strings inserted whole (not UTF-8).
    pub raw: &'static [&'static [u8]],
    /// Brackets nested `k` deep: `open` k times, then `close` k times.
    pub pairs: &'static [(&'static str, &'static str)],
    /// Lines repeated `k` times, the i-th indented by i levels (Python blocks).
    pub ladders: &'static [&'static str],
}

/// A target: its name, its function and its grammar.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    pub grammar: Grammar,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "ndjson",
        run: ndjson,
        grammar: Grammar {
            tokens: &[
                "{\"type\":\"node\",",
                "{\"type\":\"header\",\"schema\":\"1.0\",\"producer\":\"p\",\"root\":\".\"}\n",
                "{\"type\":\"summary\",\"stage\":\"s\",\"n\":1}\n",
                "{\"type\":\"status\",\"status\":\"done\",\"x\":[1,{\"a\":null}]}\n",
                "{\"type\":\"future\"}\n",
                "\"type\":",
                "\"header\"",
                "\"file\"",
                "\"node\"",
                "\"edge\"",
                "\"diagnostic\"",
                "\"layer\"",
                "\"candidate\"",
                "\"status\"",
                "\"summary\"",
                "\"schema\":\"2.0\"",
                "\"kind\":\"function\"",
                "\"kind\":\"calls\"",
                "\"resolution\":\"self\"",
                "\"confidence\":0.95",
                "\"line_start\":",
                "\"count\":",
                "\"metrics\":{",
                "\"stage\":",
                "\"id\":\"a.py::f\"",
                ":",
                ",",
                "null",
                "true",
                "-0",
                "1e999",
                "0.23265695946913206",
                "18446744073709551616",
                "4294967296",
                "\"\\u0000\"",
                "\"\\ud800\"",
                "\"\\\"\"",
                "\n",
                "\r\n",
                "\r",
                " ",
            ],
            raw: &[],
            pairs: &[("[", "]"), ("{\"a\":", "}"), ("\"", "\"")],
            ladders: &[],
        },
    },
    Target {
        name: "layers_config",
        run: layers_config,
        grammar: Grammar {
            tokens: &[
                "version: 1\n",
                "default_layer: ",
                "layers:\n",
                "  - id: ",
                "    name: ",
                "    order: ",
                "    paths: ",
                "    symbols: ",
                "    kinds: ",
                "    may_depend_on: ",
                "    description: ",
                "plan:\n",
                "  coverage: ",
                "  max_share: ",
                "  min_lines: ",
                "  include_tests: ",
                "utility_id: ",
                "    rules:\n",
                "      - path_regex: ",
                "label_contains: ",
                "label_ends_with: ",
                "type_in: ",
                "exclude_file: ",
                "\"src/**\"",
                "\"!**/tests/**\"",
                "[abc",
                "{a,b}",
                "^(src",
                "[function, class]",
                "&a ",
                "*a",
                "<<: ",
                "~",
                "null",
                "1e999",
                "-1",
                "0x10",
                "9223372036854775808",
                "---\n",
                "...\n",
                "? ",
                "|\n",
                ">-\n",
                "!!str ",
                "%YAML 1.2\n",
                "\"\\u2028\"",
                "\u{2028}",
                "\u{85}",
                "\u{feff}",
                "“x”: ",
                "# comment\n",
                "\t",
                "\r\n",
                "\n",
                "- ",
                ": ",
                ", ",
            ],
            raw: &[],
            pairs: &[("[", "]"), ("{", "}"), ("- ", ""), ("a: ", "")],
            ladders: &["- a:", "b:"],
        },
    },
    Target {
        name: "codec",
        run: codec,
        grammar: Grammar {
            tokens: &["TGSEAL01", "tg-extract 0.1.0 rev 9\n", "python", "a.py::f"],
            raw: &[
                b"\x00",
                b"\x01",
                b"\x7f",
                b"\xfa",
                b"\xfb\xff\xff",
                b"\xfc\xff\xff\xff\xff",
                b"\xfd\xff\xff\xff\xff\xff\xff\xff\x7f",
                b"\xfd\x00\x00\x00\x00\x01\x00\x00\x00",
                b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
                b"\xff",
            ],
            pairs: &[],
            ladders: &[],
        },
    },
    Target {
        name: "index",
        run: index,
        grammar: Grammar {
            tokens: &["TGIX", "TGBLKS01", "tg-embed", "static"],
            raw: &[
                b"\x00\x00\x00\x00",
                b"\xff\xff\xff\xff",
                b"\xff\xff\xff\x7f",
                b"\x07\x00\x00\x00",
                b"\x01\x00\x00\x00",
                b"\x00\x00\x01\x00",
            ],
            pairs: &[],
            ladders: &[],
        },
    },
    Target {
        name: "python",
        run: python,
        grammar: Grammar {
            tokens: &[
                "def ",
                "class ",
                "async def f():\n",
                "lambda x: ",
                "@decorator\n",
                "@app.route(\"/\")\n",
                "import a.b as c\n",
                "from . import x\n",
                "from ..pkg import *\n",
                "return ",
                "yield ",
                "super().m()",
                "self.m()",
                "cls.m()",
                "a.b.c()",
                "f()",
                "if x:\n",
                "else:\n",
                "try:\n",
                "except E as e:\n",
                "with a as b:\n",
                "for a, (b, *c) in d:\n",
                "match x:\n    case [a, b]:\n",
                "\"\"\"",
                "'''",
                "f\"{x!r:>{w}}\"",
                "b'\\xff'",
                "#",
                "\\\n",
                "(",
                ")",
                "[",
                "]",
                ":",
                ",",
                "=",
                ":=",
                "->",
                "*",
                "**",
                "\n",
                "    ",
                "\t",
                "\r\n",
                "\u{0}",
                "\u{feff}",
                "ñ",
            ],
            raw: &[],
            pairs: &[
                ("(", ")"),
                ("[", "]"),
                ("{", "}"),
                ("f(", ")"),
                ("not ", ""),
            ],
            ladders: &["def f():", "class C:", "if x:", "async def g():"],
        },
    },
    Target {
        name: "c",
        run: c,
        grammar: Grammar {
            tokens: &[
                "#include \"a.h\"\n",
                "#include <b.h>\n",
                "#include \"../up.h\"\n",
                "#define M(x) ((x) + 1)\n",
                "#define N 1\n",
                "#if A\n",
                "#ifdef B\n",
                "#elif C\n",
                "#else\n",
                "#endif\n",
                "struct S ",
                "union U ",
                "enum E ",
                "typedef ",
                "static ",
                "int ",
                "void ",
                "f(void)",
                "(*fp)(int)",
                "int main(int argc, char **argv) ",
                "return ",
                "g();",
                "__attribute__((unused)) ",
                "[4]",
                "...",
                "/*",
                "*/",
                "//",
                "\\\n",
                "{",
                "}",
                "(",
                ")",
                ";",
                "*",
                ",",
                "\"",
                "'",
                "\n",
                "\r\n",
                "\u{0}",
            ],
            raw: &[],
            pairs: &[("{", "}"), ("(", ")"), ("#if A\n", "#endif\n"), ("[", "]")],
            ladders: &[],
        },
    },
    Target {
        name: "rust",
        run: rust,
        grammar: Grammar {
            tokens: &[
                "fn ",
                "pub fn f(&self) -> Self ",
                "impl ",
                "impl<T: Clone> Store<T> ",
                "impl Trait for Type ",
                "trait ",
                "mod ",
                "mod m;\n",
                "struct ",
                "enum ",
                "union ",
                "use ",
                "use a::{b, c::d as e, f::*};\n",
                "use crate::x;\n",
                "use super::super::y;\n",
                "self::f()",
                "Self::new()",
                "crate::a::b()",
                "self.m()",
                "x.m::<T>()",
                "macro_rules! m { () => {} }\n",
                "#[cfg(test)]\n",
                "#![allow(x)]\n",
                "/// doc\n",
                "//! inner\n",
                "/*",
                "*/",
                "r#\"",
                "\"#",
                "r#type",
                "'a",
                "where T: ",
                "dyn ",
                "::",
                "{",
                "}",
                "<",
                ">",
                "(",
                ")",
                ";",
                "=>",
                "\n",
                "\r\n",
                "\u{0}",
            ],
            raw: &[],
            pairs: &[
                ("{", "}"),
                ("(", ")"),
                ("use a::{", "};"),
                ("mod m {", "}"),
                ("/*", "*/"),
                ("<", ">"),
            ],
            ladders: &[],
        },
    },
    Target {
        name: "typescript",
        run: typescript,
        grammar: Grammar {
            tokens: &[
                "function f(a: T): U ",
                "export ",
                "export default ",
                "export * from './x';\n",
                "export { a as b } from '../y';\n",
                "import d, { a as b } from './x';\n",
                "import * as m from '@s/p';\n",
                "const { a, b: c } = require('./z');\n",
                "import('./w')",
                "class C extends B implements I ",
                "abstract class ",
                "constructor(private readonly x: X) ",
                "get v() ",
                "set v(x) ",
                "static ",
                "#p = () => 1;\n",
                "@dec() ",
                "interface I ",
                "type T = A | null;\n",
                "enum E ",
                "namespace N.M ",
                "declare module 'x' ",
                "const f = async (a) => ",
                "this.a.m()",
                "super.m()",
                "new C()",
                "/** doc\n * @param {T} a\n */\n",
                "<div>{x}</div>",
                "`${",
                "}`",
                "/*",
                "*/",
                "//",
                "{",
                "}",
                "(",
                ")",
                "<",
                ">",
                ";",
                ",",
                "'",
                "\"",
                "\n",
                "\r\n",
                "\u{0}",
            ],
            raw: &[],
            pairs: &[
                ("{", "}"),
                ("(", ")"),
                ("[", "]"),
                ("<T>(", ")"),
                ("`${", "}`"),
            ],
            ladders: &[],
        },
    },
];

/// The target of this name.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
