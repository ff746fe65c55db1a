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
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use tg_lang::Language;
use tg_shared::record::{NodeKind, Role};
use tg_shared::search::view::Symbol;

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

/// What one read of the repository's indexed files tells: how often each identifier occurs in
/// their code (not the comments or docstrings), which files look names up at run time (the
/// language's reflection markers: `getattr(`, `dlsym(`), and the names each module lists as
/// its exports (Python `__all__`), and the words of its interface files (a C header: what they
/// declare is API). A name written more than once (its definition and a use) may
/// be called in a way the graph does not record: through an attribute of an untyped value, as
/// a callback, by `getattr`, returned from a decorator.
#[derive(Default)]
struct Scan {
    /// Occurrences of each wanted word, by its slot (empty while none was seen).
    counts: Vec<u32>,
    reflective: BTreeSet<String>,
    exports: HashMap<String, BTreeSet<String>>,
    declared: BTreeSet<String>,
}

impl Scan {
    /// Adds what another part of the files told.
    fn merge(mut self, mut other: Scan) -> Scan {
        if self.counts.len() < other.counts.len() {
            std::mem::swap(&mut self.counts, &mut other.counts);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
        self.reflective.extend(other.reflective);
        self.exports.extend(other.exports);
        self.declared.extend(other.declared);
        self
    }

    /// Counts the `wanted` words of `text` (a file of `lang`, prose already blanked).
    fn count_words(&mut self, code: &str, wanted: &Wanted) {
        for word in identifiers(code) {
            if let Some(&slot) = wanted.get(word) {
                if self.counts.is_empty() {
                    self.counts = vec![0; wanted.len()];
                }
                self.counts[slot as usize] += 1;
            }
        }
    }
}

/// The words whose occurrences are counted (the candidates' names), each with its slot in
/// [`Scan::counts`].
type Wanted = FxHashMap<String, u32>;

/// The identifiers of `text` (`[A-Za-z_][A-Za-z0-9_]*`, leftmost and longest, as that regex
/// finds them), by a scan of its bytes: a regex searched forwards and back for each of the
/// hundreds of millions of words in a large tree was most of dead-code's time.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !(bytes[at].is_ascii_alphabetic() || bytes[at] == b'_') {
            at += 1;
        }
        if at == bytes.len() {
            return None;
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        // Both ends sit next to ASCII bytes (or the text's ends): character boundaries.
        Some(&text[start..at])
    })
}

/// Reads the files in parallel, each into a scan of its own part, merged at the end (counts
/// and sets: the result does not depend on the order). Only the `wanted` words (the names of
/// the candidates) are counted and kept: a large tree has millions of others.
fn scan_code(root: &Path, files: &BTreeSet<&str>, wanted: &Wanted) -> Scan {
    use rayon::prelude::*;
    // Prose does not call anything: comments and docstrings are left out of the count, with
    // each language's own syntax (a C `#define` and a Python `//` are code).
    let prose: HashMap<&str, Option<Regex>> = tg_lang::REGISTRY
        .iter()
        .map(|lang| (lang.id(), Regex::new(lang.prose_pattern()).ok()))
        .collect();
    let files: Vec<&str> = files.iter().copied().collect();
    files
        .par_iter()
        .fold(Scan::default, |mut scan, file| {
            scan_file(&mut scan, root, file, &prose, wanted);
            scan
        })
        .reduce(Scan::default, Scan::merge)
}

fn scan_file(
    scan: &mut Scan,
    root: &Path,
    file: &str,
    prose: &HashMap<&str, Option<Regex>>,
    wanted: &Wanted,
) {
    let Some(lang) = language(file) else { return };
    let Ok(bytes) = std::fs::read(root.join(file)) else {
        return;
    };
    // Checked whole first: the lossy reading is slower on the valid text nearly all files are.
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(&bytes),
    };
    if lang.reflection_markers().iter().any(|m| text.contains(m)) {
        scan.reflective.insert(file.to_string());
    }
    if lang.is_interface_file(file) {
        let words = identifiers(&text)
            .filter(|w| wanted.contains_key(*w))
            .map(str::to_string);
        scan.declared.extend(words);
    }
    let exports: BTreeSet<String> = lang.export_list(&text).into_iter().collect();
    if !exports.is_empty() {
        scan.exports.insert(file.to_string(), exports);
    }
    match prose.get(lang.id()).and_then(Option::as_ref) {
        Some(prose) => scan.count_words(&prose.replace_all(&text, " "), wanted),
        None => scan.count_words(&text, wanted),
    }
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
    /// Export lists (Python `__all__`), by file.
    exports: HashMap<String, BTreeSet<String>>,
    /// Names the interface files (C headers) declare.
    declared: BTreeSet<String>,
    /// How often each word occurs in the code, and the files that look names up at run time.
    words: FxHashMap<String, u32>,
    reflective: BTreeSet<String>,
    /// Names and paths the repository's configuration files refer to.
    config_words: BTreeSet<String>,
    config_paths: BTreeSet<String>,
    /// The languages the repository holds a library of (a Rust `lib.rs`), whose public items
    /// are its API.
    libraries: BTreeSet<&'static str>,
}

impl Evidence {
    fn read(graph: &Graph, root: &Path, wanted: &Wanted) -> Self {
        // Every symbol's file is in the index's file table.
        let files: BTreeSet<String> = (0..graph.len() as u32)
            .map(|i| graph.symbol(i).file().into_owned())
            .collect();
        let files: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let scan = scan_code(root, &files, wanted);
        let (config_words, config_paths) = config_references(root);
        let libraries = files
            .iter()
            .filter_map(|f| language(f).filter(|lang| lang.is_library_root(f)))
            .map(|lang| lang.id())
            .collect();
        Evidence {
            exports: scan.exports,
            declared: scan.declared,
            words: wanted
                .iter()
                .filter_map(|(word, &slot)| {
                    let count = scan.counts.get(slot as usize).copied().unwrap_or(0);
                    (count > 0).then(|| (word.clone(), count))
                })
                .collect(),
            reflective: scan.reflective,
            config_words,
            config_paths,
            libraries,
        }
    }

    /// Whether something outside the graph may call `symbol`: an entry point, a test, an
    /// export, a name used elsewhere, API of a library, a trait method.
    fn reached_from_outside(
        &self,
        graph: &Graph,
        lang: &dyn Language,
        symbol: &Symbol<'_>,
        lines: &[String],
    ) -> bool {
        let name = symbol.name();
        let name = name.as_ref();
        let file = symbol.file();
        let parent = symbol.parent.map(|p| graph.symbol(p));
        let definition = lines.first().map_or("", String::as_str);
        lang.is_entry_function(name)
            || symbol.role != Role::Product
            || self.words.get(name).copied().unwrap_or(0) > 1
            || self.config_words.contains(name)
            || self.config_paths.contains(file.as_ref())
            || symbol.implements().is_some()
            || parent.is_some_and(|p| p.kind == NodeKind::Trait)
            || name.starts_with("test")
            || lang.is_protocol_method(name)
            || lines.iter().skip(1).any(|l| lang.annotation_registers(l))
            || self
                .exports
                .get(file.as_ref())
                .is_some_and(|names| names.contains(name))
            || lang.is_api(
                definition,
                self.declared.contains(name),
                self.libraries.contains(lang.id()),
            )
            || parent.is_some_and(|p| {
                p.kind == NodeKind::Impl
                    && p.signature().is_some_and(|s| lang.implements_interface(&s))
            })
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
            let text = std::fs::read(root.join(&file))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
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
    // Functions and methods nothing else in the graph reaches; the rest of the evidence is
    // read for them only.
    let candidates: Vec<u32> = (0..graph.len() as u32)
        .filter(|&i| matches!(graph.symbol(i).kind, NodeKind::Function | NodeKind::Method))
        .filter(|&i| {
            !graph
                .index
                .in_edges(i)
                .into_iter()
                .any(|e| graph.index.edge(e).src != i)
        })
        .collect();
    let names: BTreeSet<String> = candidates
        .iter()
        .map(|&i| graph.symbol(i).name().into_owned())
        .collect();
    let wanted: Wanted = names.into_iter().zip(0..).collect();
    let evidence = Evidence::read(graph, root, &wanted);
    let preambles = preambles(graph, root, &candidates);
    let mut findings = Vec::new();
    for (i, lines) in candidates.into_iter().zip(preambles) {
        let symbol = graph.symbol(i);
        let file = symbol.file();
        let Some(lang) = language(&file) else {
            continue;
        };
        if evidence.reached_from_outside(graph, lang, &symbol, &lines) {
            continue;
        }
        let definition = lines.first().map_or("", String::as_str);
        let private = is_private(lang, &symbol.name(), definition);
        // Dispatch the resolver cannot follow: a public method (an untyped receiver, a base
        // class's call) or any function of a file that looks names up at run time.
        let dynamic = if evidence.reflective.contains(file.as_ref()) {
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
    use super::identifiers;

    /// The byte scan finds what the regex it replaced finds, on text meant to trip it:
    /// digits before and inside words, underscores alone, non-ASCII letters beside words.
    #[test]
    fn identifiers_are_what_the_word_regex_finds() {
        let word = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
        let texts = [
            "",
            "int main(void) { return 0; }",
            "1abc 2_x __init__ a1b2 9 _ __",
            "caf\u{e9}_bar na\u{ef}ve \u{3bb}x \u{1f600}emoji_1",
            "x->y.z::w /* c */ // d\n#define FOO(a,b) a##b",
            "tail_word",
        ];
        for text in texts {
            let expected: Vec<&str> = word.find_iter(text).map(|m| m.as_str()).collect();
            let found: Vec<&str> = identifiers(text).collect();
            assert_eq!(found, expected, "{text:?}");
        }
    }
}
