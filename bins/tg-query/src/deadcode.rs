//! Functions and methods of the product nothing in the graph calls, imports or references, minus
//! the entry points a caller outside the graph reaches: `main`, dunder methods, decorated
//! (framework-registered) functions, `__all__` exports, C functions with external linkage that a
//! header declares, Rust `pub` items of a library, methods of trait impls, provided trait
//! methods, `#[test]`s, and names or files the repository's configuration refers to
//! (`pyproject.toml` entry points and plugins, `setup.cfg`, `mkdocs.yml` hooks, `Cargo.toml`
//! targets). Tests, examples and tooling are not the product: never listed.
//!
//! Each finding has a `status`: `dead` where the graph can tell, `unknown` where it cannot (a
//! public method that dispatch through an untyped receiver or a base class may reach, a module
//! that looks names up at run time with `getattr` or `importlib`), with the reason.
//!
//! A name that occurs anywhere in the repository besides its definition is left out too: the
//! graph cannot see calls through untyped values, callbacks or `getattr`, and a finding must be
//! worth acting on.
//!
//! Confidence says how likely the finding is really dead: a private function or private method
//! is the surest; a public one may be API used from outside; a method may be reached through
//! dynamic dispatch the resolver cannot see.

use crate::graph::{location, source_lines, Graph};
use regex::Regex;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use tg_shared::record::{NodeKind, Role};
use tg_shared::search::IndexSymbol;

/// How likely a finding is really dead, by what the symbol is: nothing outside its file (or
/// type) can name a private one; a public one may be API; a method may be reached through
/// dispatch the graph cannot see.
const CONFIDENCE_PRIVATE_FUNCTION: f64 = 0.9;
const CONFIDENCE_PRIVATE_METHOD: f64 = 0.8;
const CONFIDENCE_PUBLIC_FUNCTION: f64 = 0.7;
const CONFIDENCE_PUBLIC_METHOD: f64 = 0.5;

#[derive(Debug, Serialize)]
pub struct Finding {
    pub id: String,
    /// `dead`, or `unknown` when dispatch or reflection the graph cannot follow may reach it.
    pub status: &'static str,
    pub kind: &'static str,
    pub location: String,
    pub reason: String,
    pub confidence: f64,
}

fn language(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("py" | "pyi") => "python",
        Some("c" | "h") => "c",
        Some("rs") => "rust",
        _ => "other",
    }
}

/// Names listed in `__all__` of each Python module, read from its source.
fn python_exports(root: &Path, files: &BTreeSet<&str>) -> HashMap<String, BTreeSet<String>> {
    let all = Regex::new(r"(?s)__all__\s*(?::[^=]*)?[+]?=\s*[\[(](.*?)[\])]").ok();
    let name = Regex::new(r#"["']([A-Za-z_][A-Za-z0-9_]*)["']"#).ok();
    let mut out = HashMap::new();
    let (Some(all), Some(name)) = (all, name) else {
        return out;
    };
    for file in files.iter().filter(|f| language(f) == "python") {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let names: BTreeSet<String> = all
            .captures_iter(&text)
            .flat_map(|c| {
                name.captures_iter(c.get(1).map_or("", |m| m.as_str()))
                    .filter_map(|n| n.get(1).map(|m| m.as_str().to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        if !names.is_empty() {
            out.insert((*file).to_string(), names);
        }
    }
    out
}

/// Configuration files that name the code a tool or framework calls.
const CONFIG_FILES: [&str; 6] = [
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "mkdocs.yml",
    "mkdocs.yaml",
    "Cargo.toml",
];

/// Identifiers and paths written in the repository's configuration files (at its root): an
/// entry point `pkg.cli:main`, a plugin `pkg.plugin:Hook`, a mkdocs hook `docs/hooks.py`, a
/// Cargo `[[bin]] path = "src/bin/x.rs"`. The functions they name, and every function of a file
/// they name, are called from outside the graph.
fn config_references(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut words, mut paths) = (BTreeSet::new(), BTreeSet::new());
    let (Ok(word), Ok(path)) = (
        Regex::new(r"[A-Za-z_][A-Za-z0-9_]*"),
        Regex::new(r"[A-Za-z0-9_./-]+\.(?:py|rs|c)"),
    ) else {
        return (words, paths);
    };
    for name in CONFIG_FILES {
        let Ok(text) = std::fs::read_to_string(root.join(name)) else {
            continue;
        };
        words.extend(word.find_iter(&text).map(|m| m.as_str().to_string()));
        paths.extend(
            path.find_iter(&text)
                .map(|m| m.as_str().trim_start_matches("./").to_string()),
        );
    }
    (words, paths)
}

/// Whether a file's text looks names up at run time (`getattr`, `importlib`, `__getattr__`,
/// `dlsym`): a function in it may be called by a name the graph never sees.
fn is_reflective(text: &str) -> bool {
    text.contains("getattr(")
        || text.contains("importlib")
        || text.contains("__getattr__")
        || text.contains("dlsym(")
}

/// Words appearing in the repository's C headers (what a header declares is API).
fn header_words(root: &Path, files: &BTreeSet<&str>) -> BTreeSet<String> {
    let word = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").ok();
    let mut out = BTreeSet::new();
    let Some(word) = word else { return out };
    for file in files.iter().filter(|f| f.ends_with(".h")) {
        if let Ok(text) = std::fs::read_to_string(root.join(file)) {
            out.extend(word.find_iter(&text).map(|m| m.as_str().to_string()));
        }
    }
    out
}

/// What one read of the repository's indexed files tells: how often each identifier occurs in
/// their code (not the comments or docstrings), and which files look names up at run time
/// ([`is_reflective`]). A name written more than once (its definition and a use) may be called
/// in a way the graph does not record: through an attribute of an untyped value, as a callback,
/// by `getattr`, returned from a decorator.
fn scan_code(root: &Path, files: &BTreeSet<&str>) -> (HashMap<String, u32>, BTreeSet<String>) {
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut reflective = BTreeSet::new();
    let Ok(word) = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*") else {
        return (counts, reflective);
    };
    // Prose does not call anything: comments and docstrings are left out of the count, with
    // each language's own syntax (a C `#define` and a Python `//` are code).
    let python = Regex::new(r#"(?s)""".*?"""|'''.*?'''|#[^\n]*"#).ok();
    let c_like = Regex::new(r"(?s)/\*.*?\*/|//[^\n]*").ok();
    for file in files {
        if let Ok(bytes) = std::fs::read(root.join(file)) {
            let text = String::from_utf8_lossy(&bytes);
            if is_reflective(&text) {
                reflective.insert((*file).to_string());
            }
            let prose = match language(file) {
                "python" => python.as_ref(),
                "c" | "rust" => c_like.as_ref(),
                _ => None,
            };
            let code = match prose {
                Some(prose) => prose.replace_all(&text, " ").into_owned(),
                None => text.into_owned(),
            };
            for m in word.find_iter(&code) {
                *counts.entry(m.as_str().to_string()).or_default() += 1;
            }
        }
    }
    (counts, reflective)
}

/// The definition line and the lines above it that belong to it: decorators (a call spread
/// over several lines included) and attributes.
fn preamble(root: &Path, file: &str, line: u32) -> Vec<String> {
    let from = line.saturating_sub(15).max(1);
    let Some(lines) = source_lines(root, file, from, line) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut iter = lines.into_iter().rev();
    if let Some(first) = iter.next() {
        out.push(first.trim().to_string());
    }
    // Going up: `@x(` ... `)` spans count as one decorator; anything else ends the preamble.
    let mut open = 0i32;
    for l in iter {
        let t = l.trim().to_string();
        let closes = t.matches(')').count() as i32 - t.matches('(').count() as i32;
        if t.starts_with('@') || t.starts_with("#[") {
            open = (open - (t.matches('(').count() as i32 - t.matches(')').count() as i32)).max(0);
            out.push(t);
        } else if open > 0 || closes > 0 || t.ends_with(',') {
            open += closes;
            out.push(t);
        } else {
            break;
        }
    }
    out
}

/// What the repository says about its names beyond the graph, read once.
struct Evidence {
    /// Python `__all__` lists, by file.
    exports: HashMap<String, BTreeSet<String>>,
    /// Names C headers declare.
    headers: BTreeSet<String>,
    /// How often each word occurs in the code, and the files that look names up at run time.
    words: HashMap<String, u32>,
    reflective: BTreeSet<String>,
    /// Names and paths the repository's configuration files refer to.
    config_words: BTreeSet<String>,
    config_paths: BTreeSet<String>,
    /// The repository is (or holds) a Rust library, whose `pub` items are its API.
    rust_library: bool,
}

impl Evidence {
    fn read(graph: &Graph, root: &Path) -> Self {
        let files: BTreeSet<&str> = graph
            .index
            .symbols
            .iter()
            .map(|s| s.file.as_str())
            .collect();
        let (words, reflective) = scan_code(root, &files);
        let (config_words, config_paths) = config_references(root);
        Evidence {
            exports: python_exports(root, &files),
            headers: header_words(root, &files),
            words,
            reflective,
            config_words,
            config_paths,
            rust_library: root.join("src/lib.rs").exists()
                || files
                    .iter()
                    .any(|f| f.ends_with("/lib.rs") || *f == "lib.rs"),
        }
    }

    /// Whether something outside the graph may call `symbol`: an entry point, a test, an
    /// export, a name used elsewhere, API of a library, a trait method.
    fn reached_from_outside(&self, graph: &Graph, symbol: &IndexSymbol, lines: &[String]) -> bool {
        let name = symbol.name.as_str();
        let lang = language(&symbol.file);
        let parent = symbol.parent.map(|p| graph.symbol(p));
        let decorated = lines.iter().any(|l| l.starts_with('@'));
        let attributes: Vec<&String> = lines.iter().filter(|l| l.starts_with("#[")).collect();
        let definition = lines.first().map_or("", String::as_str);
        name == "main"
            || symbol.role != Role::Product
            || self.words.get(name).copied().unwrap_or(0) > 1
            || symbol.file.ends_with("__main__.py")
            || self.config_words.contains(name)
            || self.config_paths.contains(&symbol.file)
            || symbol.implements.is_some()
            || parent.is_some_and(|p| p.kind == NodeKind::Trait)
            || name.starts_with("test")
            || (name.starts_with("__") && name.ends_with("__"))
            || decorated
            || attributes
                .iter()
                .any(|a| a.contains("test") || a.contains("no_mangle"))
            || self
                .exports
                .get(&symbol.file)
                .is_some_and(|names| names.contains(name))
            || (lang == "c" && !definition.contains("static") && self.headers.contains(name))
            || (lang == "rust" && self.rust_library && definition.starts_with("pub"))
            || (lang == "rust"
                && parent.is_some_and(|p| {
                    p.kind == NodeKind::Impl
                        && p.signature.as_deref().is_some_and(|s| s.contains(" for "))
                }))
    }
}

/// How sure a finding is, and why, by what the symbol is.
fn verdict(kind: NodeKind, private: bool) -> (f64, &'static str) {
    match (kind, private) {
        (NodeKind::Method, true) => (
            CONFIDENCE_PRIVATE_METHOD,
            "private method: nothing in the graph calls it and its name is used nowhere else in the code",
        ),
        (NodeKind::Method, false) => (
            CONFIDENCE_PUBLIC_METHOD,
            "method: nothing in the graph calls it and its name is used nowhere else; dispatch the graph cannot see may still reach it",
        ),
        (_, true) => (
            CONFIDENCE_PRIVATE_FUNCTION,
            "private: no call, import or reference, and its name is used nowhere else",
        ),
        (_, false) => (
            CONFIDENCE_PUBLIC_FUNCTION,
            "public: no call, import or reference in the repository, and its name is used nowhere else; code outside may use it",
        ),
    }
}

pub fn find(graph: &Graph, root: &Path) -> Vec<Finding> {
    let evidence = Evidence::read(graph, root);
    let mut findings = Vec::new();
    for (i, symbol) in graph.index.symbols.iter().enumerate() {
        if !matches!(symbol.kind, NodeKind::Function | NodeKind::Method) {
            continue;
        }
        let referenced = graph.inn[i]
            .iter()
            .any(|&e| graph.index.edges[e as usize].src != i as u32);
        if referenced {
            continue;
        }
        let lines = preamble(root, &symbol.file, symbol.line_start);
        if evidence.reached_from_outside(graph, symbol, &lines) {
            continue;
        }
        let lang = language(&symbol.file);
        let definition = lines.first().map_or("", String::as_str);
        let private = symbol.name.starts_with('_')
            || (lang == "c" && definition.contains("static"))
            || (lang == "rust" && !definition.starts_with("pub"));
        // Dispatch the resolver cannot follow: a public method (an untyped receiver, a base
        // class's call) or any function of a file that looks names up at run time.
        let dynamic = if evidence.reflective.contains(&symbol.file) {
            Some("its file looks names up at run time (getattr, importlib): a call by name may reach it")
        } else if symbol.kind == NodeKind::Method && !private {
            Some("a public method: a call through a receiver of unknown type or a base class may reach it")
        } else {
            None
        };
        let (confidence, why) = verdict(symbol.kind, private);
        findings.push(Finding {
            id: symbol.id.clone(),
            status: if dynamic.is_some() { "unknown" } else { "dead" },
            kind: symbol.kind.as_str(),
            location: location(symbol),
            reason: match dynamic {
                Some(dynamic) => format!("{why}; unknown: {dynamic}"),
                None => why.to_string(),
            },
            confidence,
        });
    }
    findings.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.id.cmp(&b.id)));
    findings
}
