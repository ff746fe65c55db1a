//! Property tests of the id scheme (`path` for a module, `path::Qualified.Name`, `#k` for the
//! k-th repeat in source order: `tg_shared::record::symbol_ids`) on the facts each language's
//! walker extracts from generated and from arbitrary source. `PROPTEST_CASES=N` raises the number
//! of cases per property.
#![allow(clippy::unwrap_used)]

#[path = "../../shared/tests/support/mod.rs"]
mod support;

use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::BTreeMap;
use support::{config, text};
use tg_lang::{for_path, FileFacts};
use tg_parse::extract_file;
use tg_shared::record::NodeKind;

/// One generated definition: its source lines, and the (qualname, kind, first line offset,
/// last line offset) of each symbol it defines.
#[derive(Debug, Clone)]
struct Def {
    lines: Vec<String>,
    symbols: Vec<(String, NodeKind, usize, usize)>,
}

fn facts_of(path: &str, source: &str) -> FileFacts {
    extract_file(for_path(path).unwrap(), path, source).unwrap()
}

/// The ids the scheme gives `qualnames` in this order: a repeat gets `#2`, `#3`...
fn model_ids(path: &str, qualnames: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let mut ids = vec![path.to_string()];
    for q in qualnames {
        let count = seen.entry(q).or_insert(0);
        *count += 1;
        ids.push(if *count == 1 {
            format!("{path}::{q}")
        } else {
            format!("{path}::{q}#{count}")
        });
    }
    ids
}

/// Checks what the scheme promises of any file's ids, and returns them.
fn check_ids(path: &str, source: &str) -> Result<Vec<String>, TestCaseError> {
    let facts = facts_of(path, source);
    let ids = facts.symbol_ids(path);
    prop_assert_eq!(ids.len(), facts.symbols.len());
    prop_assert_eq!(&ids[0], path);
    let prefix = format!("{path}::");
    let mut unique = std::collections::BTreeSet::new();
    for (index, (id, symbol)) in ids.iter().zip(&facts.symbols).enumerate() {
        prop_assert!(unique.insert(id.clone()), "id {} twice", id);
        prop_assert!(!id.contains('\n') && !id.contains('\r'), "{:?}", id);
        if index > 0 {
            prop_assert!(id.starts_with(&prefix), "{}", id);
            prop_assert!(id[prefix.len()..].starts_with(&symbol.qualname), "{}", id);
            let parent = symbol.parent.unwrap() as usize;
            prop_assert!(parent < index, "parent {} of symbol {}", parent, index);
        }
        prop_assert!(symbol.line_start >= 1 && symbol.line_start <= symbol.line_end);
    }
    // Deterministic: the same input gives the same facts and ids.
    let again = facts_of(path, source);
    prop_assert_eq!(&again, &facts);
    prop_assert_eq!(&again.symbol_ids(path), &ids);
    Ok(ids)
}

const PY_NAMES: &[&str] = &["f", "g", "load", "Run", "_x", "ñu", "Store", "get"];

fn py_def() -> impl Strategy<Value = Def> {
    let name = || prop::sample::select(PY_NAMES);
    prop_oneof![
        (name(), any::<bool>()).prop_map(|(n, decorated)| {
            let mut lines = Vec::new();
            if decorated {
                lines.push("@decorator(1)".to_string());
            }
            let first = lines.len();
            lines.extend([format!("def {n}(a, b=2):"), "    return a".to_string()]);
            Def {
                symbols: vec![(n.to_string(), NodeKind::Function, first, first + 1)],
                lines,
            }
        }),
        (name(), vec(name(), 0..3)).prop_map(|(c, methods)| {
            let mut lines = vec![
                format!("class {c}(Base):"),
                "    \"\"\"Doc.\"\"\"".to_string(),
            ];
            let mut symbols = vec![(c.to_string(), NodeKind::Class, 0, 1 + 2 * methods.len())];
            for m in methods {
                symbols.push((
                    format!("{c}.{m}"),
                    NodeKind::Method,
                    lines.len(),
                    lines.len() + 1,
                ));
                lines.extend([
                    format!("    def {m}(self):"),
                    "        return self".to_string(),
                ]);
            }
            Def { lines, symbols }
        }),
        name().prop_map(|n| Def {
            lines: vec![
                "if COND:".into(),
                format!("    def {n}():"),
                "        pass".into()
            ],
            symbols: vec![(n.to_string(), NodeKind::Function, 1, 2)],
        }),
        (name(), name()).prop_map(|(outer, inner)| Def {
            lines: vec![
                format!("async def {outer}():"),
                format!("    def {inner}():"),
                "        pass".into(),
                format!("    return {inner}"),
            ],
            symbols: vec![
                (outer.to_string(), NodeKind::Function, 0, 3),
                (format!("{outer}.{inner}"), NodeKind::Function, 1, 2),
            ],
        }),
    ]
}

/// A Rust block `header … }` named `owner` (a symbol itself when `owner_kind` is given) with
/// one line per member, each a symbol `owner::member` of `member_kind`.
fn braced(
    header: String,
    owner: &str,
    owner_kind: Option<NodeKind>,
    members: &[&str],
    member_kind: NodeKind,
    line: impl Fn(&str) -> String,
) -> Def {
    let mut lines = vec![header];
    let mut symbols: Vec<_> = owner_kind
        .map(|kind| (owner.to_string(), kind, 0, members.len() + 1))
        .into_iter()
        .collect();
    for member in members {
        symbols.push((
            format!("{owner}::{member}"),
            member_kind,
            lines.len(),
            lines.len(),
        ));
        lines.push(line(member));
    }
    lines.push("}".into());
    Def { lines, symbols }
}

const RS_NAMES: &[&str] = &["new", "run", "f", "open", "x_1", "ñu", "Store"];

fn rust_def() -> impl Strategy<Value = Def> {
    let name = || prop::sample::select(RS_NAMES);
    let ty = || prop::sample::select(&["Store", "Engine", "T"][..]);
    prop_oneof![
        name().prop_map(|n| Def {
            lines: vec![
                format!("pub fn {n}(a: u32) -> u32 {{"),
                "    a".into(),
                "}".into()
            ],
            symbols: vec![(n.to_string(), NodeKind::Function, 0, 2)],
        }),
        ty().prop_map(|t| Def {
            lines: vec![format!("struct {t} {{"), "    x: u32,".into(), "}".into()],
            symbols: vec![(t.to_string(), NodeKind::Struct, 0, 2)],
        }),
        (ty(), vec(name(), 0..3)).prop_map(|(t, methods)| {
            braced(
                format!("impl {t} {{"),
                t,
                None,
                &methods,
                NodeKind::Method,
                |m| format!("    fn {m}(&self) {{}}"),
            )
        }),
        (name(), vec(name(), 0..3)).prop_map(|(m, fns)| {
            braced(
                format!("mod {m} {{"),
                m,
                Some(NodeKind::Mod),
                &fns,
                NodeKind::Function,
                |f| format!("    fn {f}() {{}}"),
            )
        }),
        (ty(), vec(name(), 0..3)).prop_map(|(t, methods)| {
            braced(
                format!("trait {t} {{"),
                t,
                Some(NodeKind::Trait),
                &methods,
                NodeKind::Method,
                |m| format!("    fn {m}(&self);"),
            )
        }),
    ]
}

const TS_NAMES: &[&str] = &["run", "f", "get", "x_1", "ñu", "$el", "Store", "default"];

/// TypeScript qualifies members with `.`, where the shared `braced` model writes Rust's `::`.
fn dotted(mut def: Def) -> Def {
    for symbol in &mut def.symbols {
        symbol.0 = symbol.0.replace("::", ".");
    }
    def
}

fn ts_def() -> impl Strategy<Value = Def> {
    let name = || prop::sample::select(&TS_NAMES[..TS_NAMES.len() - 1]);
    let ty = || prop::sample::select(&["Store", "Engine", "T"][..]);
    prop_oneof![
        name().prop_map(|n| Def {
            lines: vec![
                format!("export function {n}(a: number): number {{"),
                "  return a;".into(),
                "}".into()
            ],
            symbols: vec![(n.to_string(), NodeKind::Function, 0, 2)],
        }),
        name().prop_map(|n| Def {
            lines: vec![format!("const {n} = (a: string) =>"), "  a.length;".into()],
            symbols: vec![(n.to_string(), NodeKind::Function, 0, 1)],
        }),
        (ty(), vec(name(), 0..3)).prop_map(|(t, methods)| {
            dotted(braced(
                format!("export class {t} {{"),
                t,
                Some(NodeKind::Class),
                &methods,
                NodeKind::Method,
                |m| format!("  {m}(): void {{}}"),
            ))
        }),
        (ty(), vec(name(), 0..3)).prop_map(|(t, fns)| {
            dotted(braced(
                format!("namespace {t} {{"),
                t,
                Some(NodeKind::Mod),
                &fns,
                NodeKind::Function,
                |f| format!("  export function {f}() {{}}"),
            ))
        }),
        ty().prop_map(|t| Def {
            lines: vec![
                format!("interface {t} {{"),
                "  run(): void;".into(),
                "}".into()
            ],
            symbols: vec![(t.to_string(), NodeKind::Trait, 0, 2)],
        }),
        ty().prop_map(|t| Def {
            lines: vec![format!("type {t} = string | number;")],
            symbols: vec![(t.to_string(), NodeKind::Typedef, 0, 0)],
        }),
    ]
}

const C_NAMES: &[&str] = &["f", "g", "lua_open", "x_", "x", "Node", "T"];

fn c_def() -> impl Strategy<Value = Def> {
    let name = || prop::sample::select(C_NAMES);
    prop_oneof![
        name().prop_map(|n| Def {
            lines: vec![
                format!("static int {n}(int a) {{"),
                "    return a;".into(),
                "}".into()
            ],
            symbols: vec![(n.to_string(), NodeKind::Function, 0, 2)],
        }),
        (
            prop::sample::select(&["struct", "union", "enum"][..]),
            name()
        )
            .prop_map(|(tag, n)| {
                let field = if tag == "enum" {
                    "    A_VALUE"
                } else {
                    "    int a;"
                };
                let kind = match tag {
                    "struct" => NodeKind::Struct,
                    "union" => NodeKind::Union,
                    _ => NodeKind::Enum,
                };
                Def {
                    lines: vec![format!("{tag} {n} {{"), field.into(), "};".into()],
                    symbols: vec![(format!("{tag} {n}"), kind, 0, 2)],
                }
            }),
        name().prop_map(|n| Def {
            lines: vec![format!("typedef unsigned long {n};")],
            symbols: vec![(n.to_string(), NodeKind::Typedef, 0, 0)],
        }),
        name().prop_map(|n| Def {
            lines: vec![format!("#define {n}(x) ((x) + 1)")],
            symbols: vec![(n.to_string(), NodeKind::Macro, 0, 0)],
        }),
    ]
}

/// Joins definitions into a source, with the model's (qualname, kind, line_start, line_end).
fn assemble(defs: &[Def]) -> (String, Vec<(String, NodeKind, u32, u32)>) {
    let mut lines: Vec<String> = Vec::new();
    let mut symbols = Vec::new();
    for def in defs {
        let base = lines.len() as u32 + 1;
        for (q, kind, first, last) in &def.symbols {
            symbols.push((q.clone(), *kind, base + *first as u32, base + *last as u32));
        }
        lines.extend(def.lines.iter().cloned());
    }
    (lines.join("\n") + "\n", symbols)
}

/// Repo-relative paths with `/`, of the given extension.
fn source_path(ext: &'static str) -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,6}(/[a-zA-Z0-9_é.-]{1,6}){0,3}".prop_map(move |p| format!("{p}.{ext}"))
}

/// The extracted symbols and ids are those of the model, and appending definitions keeps
/// every earlier id (a repeat is numbered by what comes before it).
fn check_model(path: &str, defs: &[Def], more: &[Def]) -> Result<(), TestCaseError> {
    let (source, model) = assemble(defs);
    let ids = check_ids(path, &source)?;
    let facts = facts_of(path, &source);
    let got: Vec<(String, NodeKind, u32, u32)> = facts.symbols[1..]
        .iter()
        .map(|s| (s.qualname.clone(), s.kind, s.line_start, s.line_end))
        .collect();
    prop_assert_eq!(&got, &model, "\n{}", source);
    let qualnames: Vec<String> = model.iter().map(|m| m.0.clone()).collect();
    prop_assert_eq!(&ids, &model_ids(path, &qualnames));
    let all: Vec<Def> = defs.iter().chain(more).cloned().collect();
    let (longer, _) = assemble(&all);
    let longer_ids = check_ids(path, &longer)?;
    prop_assert_eq!(&longer_ids[..ids.len()], &ids[..]);
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn ids_python_follow_the_scheme(
        path in source_path("py"),
        defs in vec(py_def(), 0..8),
        more in vec(py_def(), 0..3),
    ) {
        check_model(&path, &defs, &more)?;
    }

    #[test]
    fn ids_rust_follow_the_scheme(
        path in source_path("rs"),
        defs in vec(rust_def(), 0..8),
        more in vec(rust_def(), 0..3),
    ) {
        check_model(&path, &defs, &more)?;
    }

    #[test]
    fn ids_typescript_follow_the_scheme(
        path in source_path("ts"),
        defs in vec(ts_def(), 0..8),
        more in vec(ts_def(), 0..3),
    ) {
        check_model(&path, &defs, &more)?;
    }

    #[test]
    fn ids_c_follow_the_scheme(
        path in source_path("c"),
        defs in vec(c_def(), 0..8),
        more in vec(c_def(), 0..3),
    ) {
        check_model(&path, &defs, &more)?;
    }

    /// Two files never share an id, whatever their content (ids start with their own path).
    #[test]
    fn ids_of_different_files_are_distinct(
        a in source_path("py"),
        b in source_path("py"),
        defs in vec(py_def(), 1..5),
    ) {
        prop_assume!(a != b);
        let (source, _) = assemble(&defs);
        let ids_a = check_ids(&a, &source)?;
        let ids_b = check_ids(&b, &source)?;
        for id in &ids_a {
            prop_assert!(!ids_b.contains(id), "{} in both", id);
        }
    }

    /// Arbitrary (mostly broken) source in each language still gives distinct, prefixed,
    /// deterministic ids whose symbols lie inside the file.
    #[test]
    fn ids_of_arbitrary_source_are_distinct_and_stable(
        ext in prop::sample::select(&["py", "rs", "c", "h", "ts", "tsx", "js"][..]),
        tokens in vec(prop_oneof![
            3 => prop::sample::select(&[
                "def ", "class ", "fn ", "impl ", "mod ", "trait ", "struct ", "enum ", "union ",
                "typedef ", "#define ", "#include \"a.h\"\n", "if x:", "async ", "pub ", "f", "g",
                "T", "(", ")", "{", "}", "[", "]", ":", ";", ",", "=", "->", "::", ".", "@d\n",
                "\n", "    ", "\t", "\"\"\"", "'", "\"", "#", "//", "/*", "*/", "\\\n", "\r\n",
                "#if A\n", "#else\n", "#endif\n", "use a::{b, c};\n", "int ", "return ",
                "function ", "export ", "default ", "const ", "=>", "interface ", "namespace ",
                "import { a } from './b';\n", "`", "${", "<div>", "</div>", "new ", "this.",
            ][..]).prop_map(str::to_string),
            1 => text(),
        ], 0..60),
    ) {
        let source = tokens.concat();
        let path = format!("src/file.{ext}");
        check_ids(&path, &source)?;
        let facts = facts_of(&path, &source);
        let last = source.matches('\n').count() as u32 + 1;
        for symbol in &facts.symbols {
            prop_assert!(symbol.line_end <= last, "{:?} past line {}", symbol, last);
        }
    }
}
