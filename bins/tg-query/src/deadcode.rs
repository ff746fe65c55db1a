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

use crate::graph::{location, Graph};
use regex::Regex;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tg_lang::words::{identifiers, word_hash, FileEntry, FileWords, WordTable};
use tg_lang::Language;
use tg_shared::record::{NodeKind, Role};
use tg_shared::search::layout::Column;
use tg_shared::search::view::Symbol;
use tg_shared::store::Store;

/// How likely a finding is really dead, by what the symbol is: nothing outside its file (or
/// type) can name a private one; a public one may be API; a method may be reached through
/// dispatch the graph cannot see.
const CONFIDENCE_PRIVATE_FUNCTION: f64 = 0.9;
const CONFIDENCE_PRIVATE_METHOD: f64 = 0.8;
const CONFIDENCE_PUBLIC_FUNCTION: f64 = 0.7;
const CONFIDENCE_PUBLIC_METHOD: f64 = 0.5;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Finding {
    pub id: String,
    /// `dead`, or `unknown` when dispatch or reflection the graph cannot follow may reach it.
    pub status: &'static str,
    pub kind: &'static str,
    pub location: String,
    pub reason: String,
    pub confidence: f64,
}

/// The language of a file the graph holds (every one has one: the walk only reads sources).
fn language(file: &str) -> Option<&'static dyn Language> {
    tg_lang::for_path(file)
}

/// Identifiers and paths written in the configuration files the languages name (at the
/// repository's root): an entry point `pkg.cli:main`, a plugin `pkg.plugin:Hook`, a mkdocs hook
/// `docs/hooks.py`, a Cargo `[[bin]] path = "src/bin/x.rs"`. The functions they name, and every
/// function of a file they name, are called from outside the graph.
fn config_references(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut words, mut paths) = (BTreeSet::new(), BTreeSet::new());
    let extensions: BTreeSet<&str> = tg_lang::all_extensions().collect();
    let source_path = format!(
        r"[A-Za-z0-9_./-]+\.(?:{})\b",
        extensions.into_iter().collect::<Vec<_>>().join("|")
    );
    let Ok(path) = Regex::new(&source_path) else {
        return (words, paths);
    };
    let names: BTreeSet<&str> = tg_lang::REGISTRY
        .iter()
        .flat_map(|lang| lang.config_files().iter().copied())
        .collect();
    for name in names {
        let Ok(text) = std::fs::read_to_string(root.join(name)) else {
            continue;
        };
        words.extend(identifiers(&text).map(str::to_string));
        paths.extend(
            path.find_iter(&text)
                .map(|m| m.as_str().trim_start_matches("./").to_string()),
        );
    }
    (words, paths)
}

/// The repository's words ([`WordTable`]): the table tg-extract summed at the last build, or,
/// where there is none (a build by an older version, a deleted cache), the same table made
/// here by reading the graph's files in parallel.
fn word_table(graph: &Graph, root: &Path, files: &BTreeSet<&str>) -> WordTable {
    use rayon::prelude::*;
    if let Some(table) = WordTable::load(&Store::at_root(root).words_path()) {
        return table;
    }
    let read: Vec<(&str, FileWords)> = files
        .par_iter()
        .filter_map(|&file| {
            let lang = language(file)?;
            let bytes = std::fs::read(root.join(file)).ok()?;
            Some((file, FileWords::of(lang, &String::from_utf8_lossy(&bytes))))
        })
        .collect();
    let entries: Vec<FileEntry<'_>> = read.iter().map(|(f, w)| (*f, w)).collect();
    let names = (0..graph.len() as u32)
        .map(|i| graph.symbol(i))
        .filter(|symbol| matches!(symbol.kind, NodeKind::Function | NodeKind::Method))
        .map(|symbol| word_hash(&symbol.name()))
        .collect();
    WordTable::build(&entries, names)
}

/// The definition line (1-based `line` of the file's `lines`) and the lines above it that
/// belong to it: decorators (a call spread over several lines included) and attributes.
fn preamble(lines: &[&str], lang: &dyn Language, line: u32) -> Vec<String> {
    let from = line.saturating_sub(15).max(1) as usize;
    let upto = (line as usize).min(lines.len());
    let lines = lines.get(from - 1..upto).unwrap_or(&[]);
    let mut out: Vec<String> = Vec::new();
    let mut iter = lines.iter().rev();
    if let Some(first) = iter.next() {
        out.push(first.trim().to_string());
    }
    // Going up: `@x(` ... `)` spans count as one decorator; anything else ends the preamble.
    let mut open = 0i32;
    for l in iter {
        let t = l.trim().to_string();
        let closes = t.matches(')').count() as i32 - t.matches('(').count() as i32;
        if lang.is_annotation_line(&t) {
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
    /// The words its code writes, its reflective files and its export lists.
    words: WordTable,
    /// Names and paths the repository's configuration files refer to.
    config_words: BTreeSet<String>,
    config_paths: BTreeSet<String>,
    /// The languages the repository holds a library of (a Rust `lib.rs`), whose public items
    /// are its API.
    libraries: BTreeSet<&'static str>,
}

impl Evidence {
    fn read(graph: &Graph, root: &Path) -> Self {
        // The index's file table: every symbol's file.
        let files: BTreeSet<String> = (0..graph.index.text_count(Column::File) as u32)
            .map(|k| graph.index.text(Column::File, k).into_owned())
            .collect();
        let files: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let (config_words, config_paths) = config_references(root);
        let libraries = files
            .iter()
            .filter_map(|f| language(f).filter(|lang| lang.is_library_root(f)))
            .map(|lang| lang.id())
            .collect();
        let words = word_table(graph, root, &files);
        Evidence {
            words,
            config_words,
            config_paths,
            libraries,
        }
    }

    /// Whether something outside the graph may call `symbol`, by what the graph and the
    /// words tell: an entry point, a test, an export, a name used elsewhere, a trait method.
    /// Asked first: it reads no file, and leaves few candidates on a large tree.
    fn reached_by_name(&self, graph: &Graph, lang: &dyn Language, symbol: &Symbol<'_>) -> bool {
        let name = symbol.name();
        let name = name.as_ref();
        let file = symbol.file();
        let parent = symbol.parent.map(|p| graph.symbol(p));
        lang.is_entry_function(name)
            || symbol.role != Role::Product
            || self.words.is_repeated(name)
            || self.config_words.contains(name)
            || self.config_paths.contains(file.as_ref())
            || symbol.implements().is_some()
            || parent.is_some_and(|p| p.kind == NodeKind::Trait)
            || name.starts_with("test")
            || lang.is_protocol_method(name)
            || self.words.exports(file.as_ref(), name)
            || parent.is_some_and(|p| {
                p.kind == NodeKind::Impl
                    && p.signature().is_some_and(|s| lang.implements_interface(&s))
            })
    }

    /// Whether the lines that define `symbol` (its [`preamble`]) say a caller outside the
    /// graph reaches it: a decorator that registers it, a definition that is API.
    fn reached_by_definition(&self, lang: &dyn Language, name: &str, lines: &[String]) -> bool {
        let definition = lines.first().map_or("", String::as_str);
        lines.iter().skip(1).any(|l| lang.annotation_registers(l))
            || lang.is_api(
                definition,
                self.words.is_declared(name),
                self.libraries.contains(lang.id()),
            )
    }
}

/// A leading underscore marks a private name in every language read; the language adds its
/// own marks (`static`, no `pub`).
fn is_private(lang: &dyn Language, name: &str, definition: &str) -> bool {
    name.starts_with('_') || lang.is_private(name, definition)
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

/// Each candidate's [`preamble`], in the candidates' order: the files are read in parallel,
/// each once however many candidates it holds.
/// The offset just past line `line` (1-based) of `bytes`, or its length when it has fewer. A
/// newline byte is never inside a UTF-8 sequence, so the cut is a character boundary.
fn end_of_line(bytes: &[u8], line: u32) -> usize {
    let Some(nth) = (line as usize).checked_sub(1) else {
        return 0;
    };
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(nth)
        .map_or(bytes.len(), |(at, _)| at + 1)
}

fn preambles(graph: &Graph, root: &Path, candidates: &[u32]) -> Vec<Vec<String>> {
    use rayon::prelude::*;
    let mut by_file: BTreeMap<String, Vec<(usize, u32)>> = BTreeMap::new();
    for (k, &i) in candidates.iter().enumerate() {
        let symbol = graph.symbol(i);
        by_file
            .entry(symbol.file().into_owned())
            .or_default()
            .push((k, symbol.line_start));
    }
    let found: Vec<(usize, Vec<String>)> = by_file
        .into_par_iter()
        .flat_map_iter(|(file, wanted)| {
            // Only the lines up to the last definition asked for are decoded and split.
            let last = wanted.iter().map(|&(_, line)| line).max().unwrap_or(0);
            let text = std::fs::read(root.join(&file))
                .map(|b| String::from_utf8_lossy(&b[..end_of_line(&b, last)]).into_owned())
                .ok();
            let lines: Vec<&str> = text.as_deref().map_or(Vec::new(), |t| t.lines().collect());
            let lang = language(&file);
            wanted
                .into_iter()
                .map(|(k, line)| {
                    let preamble = lang.map_or(Vec::new(), |lang| preamble(&lines, lang, line));
                    (k, preamble)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut out = vec![Vec::new(); candidates.len()];
    for (k, lines) in found {
        out[k] = lines;
    }
    out
}

pub fn find(graph: &Graph, root: &Path) -> Vec<Finding> {
    let evidence = Evidence::read(graph, root);
    // Functions and methods nothing else in the graph reaches, and whose names say nothing
    // outside it does; only their files are read, for the lines that define them.
    use rayon::prelude::*;
    let candidates: Vec<u32> = (0..graph.len() as u32)
        .into_par_iter()
        .filter(|&i| {
            let symbol = graph.symbol(i);
            // An `@overload` signature is never called, by design: not dead code.
            matches!(symbol.kind, NodeKind::Function | NodeKind::Method)
                && !symbol.is_stub()
                && !symbol.is_entered()
                && language(&symbol.file())
                    .is_some_and(|lang| !evidence.reached_by_name(graph, lang, &symbol))
        })
        .collect();
    let preambles = preambles(graph, root, &candidates);
    let mut findings = Vec::new();
    for (i, lines) in candidates.into_iter().zip(preambles) {
        let symbol = graph.symbol(i);
        let file = symbol.file();
        let Some(lang) = language(&file) else {
            continue;
        };
        if evidence.reached_by_definition(lang, &symbol.name(), &lines) {
            continue;
        }
        let definition = lines.first().map_or("", String::as_str);
        let private = is_private(lang, &symbol.name(), definition);
        // Dispatch the resolver cannot follow: a public method (an untyped receiver, a base
        // class's call) or any function of a file that looks names up at run time.
        let dynamic = if evidence.words.is_reflective(file.as_ref()) {
            Some("its file looks names up at run time (getattr, importlib): a call by name may reach it")
        } else if symbol.kind == NodeKind::Method && !private {
            Some("a public method: a call through a receiver of unknown type or a base class may reach it")
        } else {
            None
        };
        let (confidence, why) = verdict(symbol.kind, private);
        findings.push(Finding {
            id: symbol.id().into_owned(),
            status: if dynamic.is_some() { "unknown" } else { "dead" },
            kind: symbol.kind.as_str(),
            location: location(&symbol),
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

#[cfg(test)]
mod tests {
    use super::end_of_line;

    /// The prefix through a line, for lines inside, at and past the end, and none.
    #[test]
    fn end_of_line_cuts_just_past_the_line() {
        let text = "a\nbc\n\nd";
        let cut = |line: u32| &text[..end_of_line(text.as_bytes(), line)];
        assert_eq!(cut(0), "");
        assert_eq!(cut(1), "a\n");
        assert_eq!(cut(2), "a\nbc\n");
        assert_eq!(cut(3), "a\nbc\n\n");
        assert_eq!(cut(4), text);
        assert_eq!(cut(9), text);
    }
}
