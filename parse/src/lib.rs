//! Parsing: each language's tree-sitter grammar and the walker that turns a parsed file into
//! [`FileFacts`] (its symbols, imports, references and type facts). The languages' other rules
//! are in tg-lang; a grammar here answers for the language of the same id there.

mod c;
mod ecmascript;
mod python;
mod rust;
mod util;

use std::cell::RefCell;
use std::collections::HashMap;
use tg_lang::{FileFacts, Language, ScopeRule, Symbol};
use tg_shared::record::NodeKind;

/// Bumped whenever extraction changes what it produces, so caches written by an older build are
/// not trusted.
pub const EXTRACTOR_REVISION: u32 = 30;

/// Nesting depth (syntax tree levels) beyond which extraction stops descending. Real code stays
/// far below it; generated or hostile files may not.
pub const MAX_DEPTH: usize = 1500;

/// A language's grammar and walker.
pub trait Grammar: Language {
    /// The grammar for the file at `path` (TypeScript's `.tsx` files take the TSX grammar).
    fn grammar(&self, path: &str) -> tree_sitter::Language;
    /// Which of the language's grammars `path` takes, as a key for the parser cache.
    fn grammar_key(&self, _path: &str) -> &'static str {
        self.id()
    }
    /// Walks a parsed tree into facts. `path` is repo-relative with `/`.
    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts;
    /// How deep brackets may nest in a file the grammar is given: the TypeScript grammar's
    /// parser recurses once per level while merging its stack, and ~8 000 levels overflow
    /// any thread's stack (found by fuzzing). `None`: the parser takes any depth.
    fn max_bracket_depth(&self) -> Option<usize> {
        None
    }
    /// The source as the grammar should see it: the same bytes and lines, with constructs the
    /// grammar cannot parse without a preprocessor blanked out (C's `extern "C" {` wrappers).
    fn prepare_source<'s>(&self, source: &'s str) -> std::borrow::Cow<'s, str> {
        std::borrow::Cow::Borrowed(source)
    }
}

/// Every grammar, one for each language of [`tg_lang::REGISTRY`].
static GRAMMARS: &[&dyn Grammar] = &[
    &tg_lang::python::Python,
    &tg_lang::c::C,
    &tg_lang::rust::Rust,
    &tg_lang::ecmascript::TYPESCRIPT,
    &tg_lang::ecmascript::JAVASCRIPT,
];

/// The grammar of `lang`.
pub fn grammar_for(lang: &dyn Language) -> Option<&'static dyn Grammar> {
    GRAMMARS
        .iter()
        .copied()
        .find(|grammar| grammar.id() == lang.id())
}

thread_local! {
    static PARSERS: RefCell<HashMap<&'static str, tree_sitter::Parser>> = RefCell::new(HashMap::new());
}

/// Parses `source` with the language's grammar (one parser per thread and language) and
/// extracts its facts. The tree is dropped before returning: trees cost ~20x their source.
pub fn extract_file(lang: &dyn Language, path: &str, source: &str) -> Result<FileFacts, String> {
    let lang = grammar_for(lang).ok_or_else(|| format!("no grammar for {}", lang.id()))?;
    if let Some(limit) = lang.max_bracket_depth() {
        if let Some(line) = bracket_depth_exceeded(source, limit) {
            return Err(format!("{TOO_DEEPLY_NESTED} {limit} at line {line}"));
        }
    }
    let source: &str = &lang.prepare_source(source);
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(lang.grammar_key(path)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = tree_sitter::Parser::new();
                parser
                    .set_language(&lang.grammar(path))
                    .map_err(|e| format!("grammar for {} does not load: {e}", lang.id()))?;
                e.insert(parser)
            }
        };
        parser
            .parse(source, None)
            .ok_or_else(|| "the parser gave up".to_string())
    })?;
    let mut facts = lang.extract(path, source, &tree);
    clamp_lines(&mut facts, source);
    facts.generated = tg_lang::role::generated_marker(source);
    Ok(facts)
}

/// How an error of [`extract_file`] for a file nested too deeply starts.
pub const TOO_DEEPLY_NESTED: &str = "brackets nested deeper than";

/// The line where `(`, `[` and `{` first nest deeper than `limit`, counting every bracket
/// (in strings and comments too: an over-count only skips a file no person wrote).
fn bracket_depth_exceeded(source: &str, limit: usize) -> Option<u32> {
    let (mut depth, mut line) = (0usize, 1u32);
    for byte in source.bytes() {
        match byte {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(line);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
    }
    None
}

/// Keeps every symbol's lines inside the file. Error recovery can leave a node ending past the
/// last line (an unterminated string before a final line continuation, found by fuzzing), and
/// a line range that points beyond the file would mislead every reader of the graph.
fn clamp_lines(facts: &mut FileFacts, source: &str) {
    let newlines = source.bytes().filter(|&b| b == b'\n').count();
    let last = (newlines + usize::from(!source.ends_with('\n'))).max(1) as u32;
    for symbol in &mut facts.symbols {
        symbol.line_end = symbol.line_end.min(last);
        symbol.line_start = symbol.line_start.min(last);
    }
}

/// Facts that start with the module symbol (symbol 0) of the file at `path`, and the line of
/// the tree's first syntax error.
pub(crate) fn module_facts(
    path: &str,
    source: &str,
    root: tree_sitter::Node,
    doc: Option<String>,
) -> FileFacts {
    let module = Symbol {
        kind: NodeKind::Module,
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        qualname: String::new(),
        parent: None,
        line_start: 1,
        line_end: util::end_line(root).max(1),
        text_start: None,
        signature: None,
        doc,
        hash: tg_shared::hash::ContentHash::of(source.as_bytes()),
        scope: ScopeRule::Transparent,
        owner_type: None,
        returns: None,
        stub: false,
        conditional: false,
        test_only: false,
        fixture: false,
        getter: false,
        test_case: false,
        accessor: false,
        implements: None,
    };
    FileFacts {
        symbols: vec![module],
        syntax_error_line: util::first_error_line(root),
        ..FileFacts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_lines_stay_inside_the_file() {
        // An unterminated docstring, then a line continuation at the end: found by fuzzing.
        let python = tg_lang::for_path("t.py").expect("python");
        let facts = extract_file(python, "t.py", "def f():\n    \"\"\"x\n\\\n").expect("parses");
        for symbol in &facts.symbols {
            assert!(
                symbol.line_start <= symbol.line_end && symbol.line_end <= 3,
                "{symbol:?}"
            );
        }
    }

    #[test]
    fn typescript_nested_past_the_parser_is_refused_with_its_line() {
        let ts = tg_lang::for_path("a.ts").expect("typescript");
        let deep = format!("const a = 1;\nf{}{};\n", "(".repeat(5000), ")".repeat(5000));
        let err = extract_file(ts, "a.ts", &deep).expect_err("too deep");
        assert_eq!(err, format!("{TOO_DEEPLY_NESTED} 1024 at line 2"));
        let fine = format!("f{}{};\n", "(".repeat(1000), ")".repeat(1000));
        assert!(extract_file(ts, "a.ts", &fine).is_ok());
    }

    #[test]
    fn every_language_has_a_grammar() {
        for lang in tg_lang::REGISTRY {
            assert!(grammar_for(*lang).is_some(), "{}", lang.id());
        }
    }
}
