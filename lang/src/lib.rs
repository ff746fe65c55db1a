//! The languages tldrgraph reads, without their grammars: what a file's extension, path and
//! module name mean in each language ([`Language`]), the registry that finds a file's language,
//! the walk that finds the source files, and the facts a language's walker extracts from a file
//! ([`facts`]). Parsing lives in tg-parse, so a reader that only asks which files are sources
//! (tg-status) links no grammar. A new language is a module here, its walker in tg-parse, and a
//! line in each registry.

pub mod c;
pub mod ecmascript;
pub mod facts;
pub mod python;
pub mod role;
pub mod rust;
pub mod walk;
pub mod walk_snapshot;
pub mod words;

pub use facts::{
    Binding, Declares, FileFacts, Import, Mention, ModuleRef, RefKind, Reference, ScopeRule,
    Symbol, Target, TypeFact, TypeSlot, Value,
};
use tg_shared::record::Role;

/// One supported language.
pub trait Language: Sync + Send {
    /// The `lang` field of file records.
    fn id(&self) -> &'static str;
    /// File name extensions, without the dot.
    fn extensions(&self) -> &'static [&'static str];
    /// What the file at `path` (repo-relative) is for, by this language's conventions for
    /// tests, examples and tooling ([`role`] holds the shared walk). Generated files and
    /// test-only symbols are told apart by the extractor, which sees their contents.
    fn role(&self, path: &str) -> Role;
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
    /// The space module keys live in: languages that import each other's modules share one
    /// (TypeScript and JavaScript).
    fn module_space(&self) -> &'static str {
        self.id()
    }
    /// Separator between a module key and the names inside it (`.` or `::`).
    fn key_separator(&self) -> &'static str;
    /// A name the language provides without a definition in the repository (`len`, `print`).
    fn is_builtin(&self, _name: &str) -> bool {
        false
    }
    /// Whether a name the scopes and imports do not bind may still name a repository
    /// definition of that name (C's one global space, Python's star imports from outside).
    /// Where every name is declared or imported (TypeScript), an unbound name is a global of
    /// the runtime, never guessed.
    fn falls_back_by_name(&self) -> bool {
        true
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
    /// Whether importing a name depends on the file that defines it rather than on a module
    /// that re-exports it: a Rust `use crate::Reason` only names the item `pub use
    /// crate::frame::Reason` re-exports, while Python's `from pkg import get` runs `pkg`'s
    /// `__init__.py`, which is what it depends on.
    fn imports_reach_definitions(&self) -> bool {
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
    /// The repo-relative manifests declaring `package` and the names it is imported by
    /// (Rust: `Cargo.toml`; TypeScript: `package.json`, and `tsconfig.json` for path aliases).
    fn manifests(&self, _package: &str) -> Vec<String> {
        Vec::new()
    }
    /// The names code uses for modules of the repository, read from a manifest's text (Rust:
    /// the `[lib]` name, else the `[package]` name with `-` as `_`; TypeScript: a
    /// package.json `name` and `exports`, a tsconfig's `paths` and `baseUrl`), each with the
    /// path it names relative to the manifest's directory, when the manifest sets one (`[lib]
    /// path`, `"source"`). `manifest` is the manifest's repo-relative path.
    fn package_names(&self, _manifest: &str, _text: &str) -> Vec<(String, Option<String>)> {
        Vec::new()
    }
    /// Other manifests whose names apply too, relative to the manifest's directory (a
    /// tsconfig's `extends`).
    fn manifest_includes(&self, _manifest: &str, _text: &str) -> Vec<String> {
        Vec::new()
    }

    // What a caller outside the graph may reach, by the language's conventions (dead code,
    // the overview's entry points, which symbols are worth an intent).

    /// Whether the file is a program's entry (Python `__main__.py`, Rust `src/main.rs`).
    fn is_entry_file(&self, _path: &str) -> bool {
        false
    }
    /// Whether a function of this name starts a program.
    fn is_entry_function(&self, name: &str) -> bool {
        name == "main"
    }
    /// Whether the language itself calls methods of this name (Python's `__dunder__` methods).
    fn is_protocol_method(&self, _name: &str) -> bool {
        false
    }
    /// Whether a function of this name builds an instance of its type (`__init__`, `new`):
    /// one that calls nothing only stores its arguments.
    fn is_constructor_name(&self, _name: &str) -> bool {
        false
    }
    /// Whether a line written above a definition belongs to it (a decorator, an attribute).
    fn is_annotation_line(&self, _line: &str) -> bool {
        false
    }
    /// Whether an annotation hands the definition to a caller outside the graph (a
    /// framework's decorator, `#[test]`, `#[no_mangle]`).
    fn annotation_registers(&self, _line: &str) -> bool {
        false
    }
    /// Whether a definition, by its name and its first line, is private to its file or type.
    fn is_private(&self, _name: &str, _definition: &str) -> bool {
        false
    }
    /// How this language's test runner names the test `qualname` (a function or method of a
    /// test file, `.`/`::`-separated) defined in `file`: what to pass it to run that test alone
    /// (a pytest node id, a `cargo test` filter); `None` when it is no test the runner collects.
    fn test_runner_id(&self, _file: &str, _qualname: &str) -> Option<String> {
        None
    }
    /// Whether a test is marked as one where it is defined (Rust `#[test]`, which the node's
    /// `test_case` records), so that an unmarked function of test code is a helper; Python's
    /// runner goes by names instead ([`Language::test_runner_id`]).
    fn marks_test_cases(&self) -> bool {
        false
    }
    /// Whether a definition is API others build against: `declared`
    /// tells whether an interface file of the repository ([`Language::is_interface_file`])
    /// names it, `library` whether the repository holds a library of this language
    /// ([`Language::is_library_root`]).
    fn is_api(&self, _definition: &str, _declared: bool, _library: bool) -> bool {
        false
    }
    /// Whether a file declares the API other code compiles against (a C header).
    fn is_interface_file(&self, _path: &str) -> bool {
        false
    }
    /// Whether a file is the root of a library (Rust `lib.rs`).
    fn is_library_root(&self, _path: &str) -> bool {
        false
    }
    /// Whether a method's parent, by its signature, implements an interface that callers
    /// reach it through (Rust `impl Trait for Type`).
    fn implements_interface(&self, _parent_signature: &str) -> bool {
        false
    }
    /// The names a module's text lists as its exports (Python `__all__`).
    fn export_list(&self, _text: &str) -> Vec<String> {
        Vec::new()
    }
    /// A regular expression matching the language's comments and docstrings: prose, which
    /// calls nothing.
    fn prose_pattern(&self) -> &'static str;
    /// Text that shows a file looks names up at run time (`getattr(`, `dlsym(`).
    fn reflection_markers(&self) -> &'static [&'static str] {
        &[]
    }
    /// Configuration files at the repository root that name code a tool calls
    /// (`pyproject.toml` entry points, `Cargo.toml` targets).
    fn config_files(&self) -> &'static [&'static str] {
        &[]
    }
    /// The file stem that stands for its directory's module (`__init__`, `mod`), left out of
    /// the names a user writes for a symbol.
    fn directory_module_stem(&self) -> Option<&'static str> {
        None
    }
    /// Whether a file makes its directory a package (Python's `__init__.py`).
    fn marks_package_dir(&self, _path: &str) -> bool {
        false
    }
}

static PYTHON: python::Python = python::Python;
static C: c::C = c::C;
static RUST: rust::Rust = rust::Rust;

/// Every supported language.
pub static REGISTRY: &[&dyn Language] = &[
    &PYTHON,
    &C,
    &RUST,
    &ecmascript::TYPESCRIPT,
    &ecmascript::JAVASCRIPT,
];

/// The language of a file, by extension.
pub fn for_path(path: &str) -> Option<&'static dyn Language> {
    let ext = path.rsplit_once('.')?.1;
    REGISTRY
        .iter()
        .copied()
        .find(|lang| lang.extensions().contains(&ext))
}

/// Every extension of every language, without the dot.
pub fn all_extensions() -> impl Iterator<Item = &'static str> {
    REGISTRY
        .iter()
        .flat_map(|lang| lang.extensions().iter().copied())
}

/// `dir` and a relative path joined and normalised (`src/a` + `../b/x.h` is `src/b/x.h`):
/// include paths, import specifiers, manifests that extend others. `None` when it climbs above
/// the root.
pub fn normalize_join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// The language with this id.
pub fn by_id(id: &str) -> Option<&'static dyn Language> {
    REGISTRY.iter().copied().find(|lang| lang.id() == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_knows_its_tests_examples_and_tooling_by_path() {
        use tg_shared::record::Role::*;
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
    fn relative_paths_join_and_normalise() {
        assert_eq!(
            normalize_join("src/a", "../b/x.h"),
            Some("src/b/x.h".into())
        );
        assert_eq!(normalize_join("", "x.h"), Some("x.h".into()));
        assert_eq!(normalize_join("", "../x.h"), None);
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(for_path("a/b.py").map(|l| l.id()), Some("python"));
        assert_eq!(for_path("a/b.pyi").map(|l| l.id()), Some("python"));
        assert_eq!(for_path("x.h").map(|l| l.id()), Some("c"));
        assert_eq!(for_path("src/lib.rs").map(|l| l.id()), Some("rust"));
        assert!(for_path("README").is_none());
        assert_eq!(for_path("a.js").map(|l| l.id()), Some("javascript"));
        assert_eq!(for_path("a/b.tsx").map(|l| l.id()), Some("typescript"));
        assert!(for_path("a.json").is_none());
    }
}
