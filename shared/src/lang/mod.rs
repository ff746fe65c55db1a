//! The language registry: one module per language turns a file's source into [`FileFacts`]
//! (its symbols, imports and unresolved references), and answers the few language questions the
//! resolver asks (module keys, builtins). The walker and the resolver only see this trait, so a
//! new language is a new module plus a line in [`REGISTRY`].

mod c;
mod python;
pub mod role;
mod rust;
mod util;

use crate::record::{EdgeKind, NodeKind};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;

/// Everything one file contributes to the graph before cross-file resolution. Cached per file
/// content hash, so it holds nothing that depends on other files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileFacts {
    /// Symbol 0 is the module (the file itself); parents always precede children.
    pub symbols: Vec<Symbol>,
    pub imports: Vec<Import>,
    pub refs: Vec<Reference>,
    /// Line of the first syntax error, if the parser had to recover.
    pub syntax_error_line: Option<u32>,
    /// Line where nesting exceeded [`MAX_DEPTH`]; deeper code was not examined.
    pub depth_limit_line: Option<u32>,
    /// Names bound in a scope by something other than a definition or import (parameters,
    /// assignments): they shadow outer definitions, so a call through them binds nothing.
    pub locals: Vec<(u32, String)>,
    /// What the source says about the types of variables and attributes (annotations,
    /// constructor assignments, struct fields): how a call on a receiver finds its method.
    pub types: Vec<TypeFact>,
    /// The file's first lines say a tool wrote it ([`role::generated_marker`]).
    pub generated: bool,
}

impl FileFacts {
    /// `name`, a variable of `scope`, holds `value` (evaluated in that scope).
    pub(crate) fn variable_type(&mut self, scope: u32, name: String, value: Value, declared: bool) {
        self.types.push(TypeFact {
            scope,
            slot: TypeSlot::Variable,
            name,
            eval_scope: scope,
            value,
            declared,
        });
    }

    /// The role of symbol `i` of the file at `path`: generated files whole, then test-only
    /// symbols (Rust `#[cfg(test)]`), then the language's path conventions.
    pub fn role(&self, lang: &dyn Language, path: &str, i: usize) -> crate::record::Role {
        use crate::record::Role;
        if self.generated || role::generated_path(path) {
            Role::Generated
        } else if self.symbols[i].test_only {
            Role::Test
        } else {
            lang.role(path)
        }
    }
}

/// A value as the source writes it, for working out which class it is an instance of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// A variable or parameter, through the scopes.
    Name(String),
    /// The enclosing class or impl's type (`self`, `cls`, `Self`).
    SelfType,
    /// What calling the target gives: an instance of a class, or the callee's declared return.
    Call(Box<Target>),
    /// An attribute or field of a value, by its declared type in the value's class.
    Attr(Box<Value>, String),
    /// A type named in an annotation (`T`, `pkg.T`; wrappers such as `Optional[T]` or
    /// `Box<T>` already removed), resolved in the scope it stands in.
    Type(Vec<String>),
    /// A collection whose elements are the inner value (`list[T]`, `Sequence[T]`, `Vec<T>`,
    /// `&[T]`): not an instance itself, but what a loop over it binds.
    Elements(Box<Value>),
    /// One element of the iterable value (`for x in self.items`).
    ElementOf(Box<Value>),
    /// What a test framework injects for a parameter of this name (a pytest fixture of the
    /// same name, in the test's file or a `conftest.py` above it): its declared return type.
    Fixture(String),
}

/// Which name a [`TypeFact`] types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypeSlot {
    /// A variable or parameter of the scope symbol.
    Variable,
    /// An attribute (field) of the scope symbol, a class or struct.
    Attribute,
}

/// `name` (a variable of `scope`, or an attribute of the class `scope`) holds `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeFact {
    pub scope: u32,
    pub slot: TypeSlot,
    pub name: String,
    /// The symbol in whose scope `value` is evaluated (the method of `self.x = T()`).
    pub eval_scope: u32,
    pub value: Value,
    /// A declaration (annotation, field type) rather than an assignment: declarations win.
    pub declared: bool,
}

/// Bumped whenever extraction changes what it produces, so caches written by an older build are
/// not trusted.
pub const EXTRACTOR_REVISION: u32 = 13;

/// Nesting depth (syntax tree levels) beyond which extraction stops descending. Real code stays
/// far below it; generated or hostile files may not.
pub const MAX_DEPTH: usize = 1500;

/// Whether scopes nested inside a symbol see the names it defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScopeRule {
    /// Modules and functions: nested functions see their names.
    Transparent,
    /// Python class bodies: their names are invisible to the methods inside.
    Opaque,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symbol {
    pub kind: NodeKind,
    pub name: String,
    /// The qualified name that follows `path::` in the id (empty for the module), without `#k`.
    pub qualname: String,
    pub parent: Option<u32>,
    pub line_start: u32,
    pub line_end: u32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub hash: String,
    pub scope: ScopeRule,
    /// For methods defined outside their type's body (Rust `impl T`): the type's name.
    pub owner_type: Option<String>,
    /// The declared return type (`-> T`), evaluated in the parent's scope.
    pub returns: Option<Value>,
    /// A signature without a body that calls never reach (`@typing.overload`).
    pub stub: bool,
    /// Defined under a condition (`if`, `try`/`except`, `#[cfg(...)]`), so another same-named
    /// definition may be the one that runs.
    pub conditional: bool,
    /// Compiled for tests only (Rust `#[cfg(test)]`, `#[test]`, `mod tests`): code outside
    /// tests never calls it.
    pub test_only: bool,
    /// A test fixture (`@pytest.fixture`): injected by name into the tests' parameters.
    pub fixture: bool,
    /// A method of a trait implementation (Rust `impl Display for T`): the trait's name.
    pub implements: Option<String>,
}

impl FileFacts {
    /// Facts that start with the module symbol (symbol 0) of the file at `path`, and the line of
    /// the tree's first syntax error.
    pub(crate) fn for_module(
        path: &str,
        source: &str,
        root: tree_sitter::Node,
        doc: Option<String>,
    ) -> Self {
        let module = Symbol {
            kind: NodeKind::Module,
            name: path.rsplit('/').next().unwrap_or(path).to_string(),
            qualname: String::new(),
            parent: None,
            line_start: 1,
            line_end: util::end_line(root).max(1),
            signature: None,
            doc,
            hash: crate::hash::content_hash(source.as_bytes()),
            scope: ScopeRule::Transparent,
            owner_type: None,
            returns: None,
            stub: false,
            conditional: false,
            test_only: false,
            fixture: false,
            implements: None,
        };
        FileFacts {
            symbols: vec![module],
            syntax_error_line: util::first_error_line(root),
            ..FileFacts::default()
        }
    }
}

/// A module another module names: tried in order, the first that exists wins.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ModuleRef {
    /// A language module key (Python `pkg.mod`, Rust `<crate>crate::a`, C path suffix `x.h`).
    Key(String),
    /// An exact repo-relative path.
    Path(String),
}

/// What an import makes visible in its scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Binding {
    /// Nothing (a C `#include`, a Python `import a.b` whose name is bound separately).
    None,
    /// `name` refers to the module (`import a.b as m`, or the head of `import a.b`).
    Module { name: String, module: String },
    /// `name` refers to `member` of `module` (`from m import x as name`).
    Member {
        name: String,
        module: String,
        member: String,
    },
    /// Every top-level name of `module` (`from m import *`, Rust `use m::*`).
    Star { module: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// Symbol whose scope the binding lives in (0: module level).
    pub scope: u32,
    pub line: u32,
    /// `imports` or `includes`; `None` when the statement only binds names (no module edge).
    pub edge: Option<EdgeKind>,
    /// The module the edge points at.
    pub target: Vec<ModuleRef>,
    pub binding: Binding,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefKind {
    Call,
    Inherit,
    /// A function returns a function it defines (`return decorator`): a `calls` edge with
    /// resolution `closure`, so a trace passes through decorator and handler factories.
    ReturnsClosure,
}

/// How the source names the target of a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// A bare name, looked up through the scopes (`f()`).
    Name(String),
    /// A dotted or `::` chain rooted at a name (`mod.f()`, `Type::new()`, `a.b.C`).
    Path(Vec<String>),
    /// A chain rooted at a module key the language computed (Rust `crate::a::f`).
    Qualified { module: String, rest: Vec<String> },
    /// A member of the enclosing class or impl (`self.m()`, `Self::m()`, `cls.m()`).
    SelfMember(String),
    /// A member of the enclosing class's bases (`super().m()`).
    SuperMember(String),
    /// A method of a receiver value (`Client(app).post()`, `x.m()` in Rust): bound through the
    /// receiver's type when the source states it, never by the method's name alone.
    Method { receiver: Box<Value>, name: String },
    /// A member of a receiver whose type cannot be stated (`f()[0].m()`): never bound.
    Member(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The symbol making the reference (the edge's source).
    pub scope: u32,
    pub line: u32,
    pub kind: RefKind,
    pub target: Target,
}

/// One supported language.
pub trait Language: Sync + Send {
    /// The `lang` field of file records.
    fn id(&self) -> &'static str;
    /// File name extensions, without the dot.
    fn extensions(&self) -> &'static [&'static str];
    fn grammar(&self) -> tree_sitter::Language;
    /// Walks a parsed tree into facts. `path` is repo-relative with `/`.
    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts;
    /// What the file at `path` (repo-relative) is for, by this language's conventions for
    /// tests, examples and tooling ([`role`] holds the shared walk). Generated files and
    /// test-only symbols are told apart by the extractor, which sees their contents.
    fn role(&self, path: &str) -> crate::record::Role;
    /// The source as the grammar should see it: the same bytes and lines, with constructs the
    /// grammar cannot parse without a preprocessor blanked out (C's `extern "C" {` wrappers).
    fn prepare_source<'s>(&self, source: &'s str) -> std::borrow::Cow<'s, str> {
        std::borrow::Cow::Borrowed(source)
    }
    /// The keys other files use to name this file's module, most specific first.
    /// `is_package_dir` tells whether a repo-relative directory is a package of the language
    /// (Python: holds an `__init__.py`), for languages whose names start at import roots.
    fn module_keys(&self, path: &str, is_package_dir: &dyn Fn(&str) -> bool) -> Vec<String>;
    /// Whether `importer` can name the module in `file` by `key`: a key that starts below the
    /// repository root names the file only for importers where that directory is on the
    /// import path (Python: `src/`, or the importer's own directory tree, as for scripts and
    /// tests run from there).
    fn key_visible_from(&self, _key: &str, _file: &str, _importer: &str) -> bool {
        true
    }
    /// Separator between a module key and the names inside it (`.` or `::`).
    fn key_separator(&self) -> &'static str;
    /// A name the language provides without a definition in the repository (`len`, `print`).
    fn is_builtin(&self, _name: &str) -> bool {
        false
    }
    /// Whether a later definition of a name in the same scope replaces an earlier one as the
    /// code runs (Python). Where it cannot (C, Rust), two definitions are build variants
    /// (`#ifdef`, `#[cfg]`) and a call may reach either.
    fn redefinition_replaces(&self) -> bool {
        false
    }
    /// A library method that gives back its receiver's value (Rust `unwrap`, `clone`): a call
    /// on its result reaches the receiver type's methods (`Glob::new(p).unwrap().matcher()`).
    fn returns_receiver(&self, _method: &str) -> bool {
        false
    }
    /// A library method that iterates over its receiver's elements (Rust `iter`, `drain`).
    fn iterates_receiver(&self, _method: &str) -> bool {
        false
    }
    /// A library method of a collection that gives one of its elements (Rust `v.pop()`,
    /// `v.first()`, `v.get(i)`; Python `items.pop()`), so that calls on the result bind through
    /// the collection's element type.
    fn picks_element(&self, _method: &str) -> bool {
        false
    }
    /// A trait function that makes an instance of the type it is called on, derived or
    /// implemented outside the repository's view (Rust `T::default()`, `T::from(x)`).
    fn constructs_own_type(&self, _function: &str) -> bool {
        false
    }
    /// The method that calling a class runs on the new instance (Python `__init__`): a call of
    /// the class also gets an edge to it, so traces pass through constructors.
    fn constructor(&self) -> Option<&'static str> {
        None
    }
    /// The method that calling an instance runs (Python `__call__`).
    fn call_operator(&self) -> Option<&'static str> {
        None
    }
    /// Whether a file may declare fixtures for the tests of its directory tree (`conftest.py`).
    fn shares_fixtures(&self, _path: &str) -> bool {
        false
    }
    /// When several files answer to one module key: `true` picks the one nearest the importer
    /// (C's `#include "x.h"`), `false` the one nearest the root (Python's absolute imports).
    fn prefers_nearest_module(&self) -> bool {
        false
    }
    /// Whether a module key that matched no repository file is outside the repository (its
    /// names then never fall back to same-named repository symbols).
    fn unmatched_module_is_external(&self, _key: &str) -> bool {
        true
    }
    /// The package (compilation unit) a file belongs to. Name-based fallbacks (`unique`,
    /// `ambiguous`) never cross a package boundary: a Rust binary cannot call into another
    /// binary's functions. `None` for languages without packages (one shared space).
    fn package(&self, _path: &str) -> Option<String> {
        None
    }
    /// The repo-relative manifest declaring `package`, if it can be depended upon.
    fn manifest(&self, _package: &str) -> Option<String> {
        None
    }
    /// The names other packages use for this one, read from its manifest's text (Rust: the
    /// `[lib]` name, else the `[package]` name with `-` as `_`), each with the path of its root
    /// file relative to the manifest when the manifest sets one (`[lib] path`).
    fn package_names(&self, _manifest: &str) -> Vec<(String, Option<String>)> {
        Vec::new()
    }
}

static PYTHON: python::Python = python::Python;
static C: c::C = c::C;
static RUST: rust::Rust = rust::Rust;

/// Every supported language.
pub static REGISTRY: &[&dyn Language] = &[&PYTHON, &C, &RUST];

/// The language of a file, by extension.
pub fn for_path(path: &str) -> Option<&'static dyn Language> {
    let ext = path.rsplit_once('.')?.1;
    REGISTRY
        .iter()
        .copied()
        .find(|lang| lang.extensions().contains(&ext))
}

/// The language with this id.
pub fn by_id(id: &str) -> Option<&'static dyn Language> {
    REGISTRY.iter().copied().find(|lang| lang.id() == id)
}

thread_local! {
    static PARSERS: RefCell<HashMap<&'static str, tree_sitter::Parser>> = RefCell::new(HashMap::new());
}

/// Parses `source` with the language's grammar (one parser per thread and language) and
/// extracts its facts. The tree is dropped before returning: trees cost ~20x their source.
pub fn extract_file(lang: &dyn Language, path: &str, source: &str) -> Result<FileFacts, String> {
    let source: &str = &lang.prepare_source(source);
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(lang.id()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = tree_sitter::Parser::new();
                parser
                    .set_language(&lang.grammar())
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
    facts.generated = role::generated_marker(source);
    Ok(facts)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_lines_stay_inside_the_file() {
        // An unterminated docstring, then a line continuation at the end: found by fuzzing.
        let python = for_path("t.py").expect("python");
        let facts = extract_file(python, "t.py", "def f():\n    \"\"\"x\n\\\n").expect("parses");
        for symbol in &facts.symbols {
            assert!(
                symbol.line_start <= symbol.line_end && symbol.line_end <= 3,
                "{symbol:?}"
            );
        }
    }

    #[test]
    fn each_language_knows_its_tests_examples_and_tooling_by_path() {
        use crate::record::Role::*;
        let cases = [
            ("typer/main.py", Product),
            ("tests/test_main.py", Test),
            ("pkg/test_util.py", Test),
            ("pkg/util_test.py", Test),
            ("conftest.py", Test),
            ("docs_src/first/tutorial001.py", Example),
            ("examples/app.py", Example),
            ("docs/conf.py", Example),
            ("scripts/release.py", Tooling),
            ("setup.py", Tooling),
            ("src/lib.rs", Product),
            ("src/walk/tests.rs", Test),
            ("tests/walk.rs", Test),
            ("benches/walk.rs", Tooling),
            ("examples/walk.rs", Example),
            ("build.rs", Tooling),
            ("lib/lz4.c", Product),
            ("programs/lz4cli.c", Product),
            ("tests/fuzzer.c", Test),
            ("ossfuzz/decompress_fuzzer.c", Test),
            ("examples/simple_buffer.c", Example),
            ("contrib/gen_manual/gen_manual.c", Tooling),
            ("src/util_unittest.c", Test),
        ];
        for (path, role) in cases {
            let lang = for_path(path).expect("a language");
            assert_eq!(lang.role(path), role, "{path}");
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(for_path("a/b.py").map(|l| l.id()), Some("python"));
        assert_eq!(for_path("a/b.pyi").map(|l| l.id()), Some("python"));
        assert_eq!(for_path("x.h").map(|l| l.id()), Some("c"));
        assert_eq!(for_path("src/lib.rs").map(|l| l.id()), Some("rust"));
        assert!(for_path("README").is_none());
        assert!(for_path("a.js").is_none());
    }
}
