//! Python's rules: `.py`/`.pyi`, the roles of paths, module keys from the import roots, which
//! keys an importer sees, builtins. The walker is parse/src/python.rs.

use crate::role::{self, RoleDirs};
use crate::Language;
use regex::Regex;
use std::sync::OnceLock;
use tg_shared::record::Role;

pub struct Python;

impl Language for Python {
    fn id(&self) -> &'static str {
        "python"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["py", "pyi"]
    }

    fn role(&self, path: &str) -> Role {
        const DIRS: RoleDirs = RoleDirs {
            test: &["tests", "test", "testing"],
            example: &["docs_src", "examples", "example", "docs", "doc"],
            tooling: &["scripts", "tools", "benchmarks", "ci"],
        };
        if let Some(role) = role::by_directory(path, &DIRS) {
            return role;
        }
        let file = role::file_name(path);
        let stem = file.split('.').next().unwrap_or(file);
        if stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest" {
            Role::Test
        } else if !path.contains('/')
            && matches!(
                stem,
                "setup" | "noxfile" | "fabfile" | "pdm_build" | "hatch_build"
            )
        {
            Role::Tooling
        } else {
            Role::Product
        }
    }

    /// A module is named from an import root: the repository root, or a directory that is not
    /// itself a package (`src/`, `tests/`). `app/email/sender.py` inside the package `app` is
    /// `app.email.sender` only, so `import email` there stays the standard library's.
    fn module_keys(&self, path: &str, is_package_dir: &dyn Fn(&str) -> bool) -> Vec<String> {
        let parts = module_parts(path);
        let dirs: Vec<&str> = path.split('/').collect();
        (0..parts.len())
            .filter(|&i| i == 0 || !is_package_dir(&dirs[..i].join("/")))
            .map(|i| parts[i..].join("."))
            .collect()
    }

    fn key_visible_from(&self, key: &str, file: &str, importer: &str) -> bool {
        let depth = key.split('.').count();
        let start = module_parts(file).len().saturating_sub(depth);
        if start == 0 {
            return true;
        }
        // The directory the key starts in: the first `start` components of the path.
        let root_len = file
            .match_indices('/')
            .nth(start - 1)
            .map_or(file.len(), |(i, _)| i);
        let root = &file[..root_len];
        root == "src"
            || (importer.len() > root_len
                && importer.starts_with(root)
                && importer.as_bytes()[root_len] == b'/')
    }

    fn key_separator(&self) -> &'static str {
        "."
    }

    fn is_builtin(&self, name: &str) -> bool {
        BUILTINS.binary_search(&name).is_ok()
    }

    fn redefinition_replaces(&self) -> bool {
        true
    }

    fn call_operator(&self) -> Option<&'static str> {
        Some("__call__")
    }

    fn picks_element(&self, method: &str) -> bool {
        method == "pop"
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("__init__")
    }

    fn shares_fixtures(&self, path: &str) -> bool {
        path == "conftest.py" || path.ends_with("/conftest.py")
    }

    fn is_entry_file(&self, path: &str) -> bool {
        role::file_name(path) == "__main__.py"
    }

    fn is_protocol_method(&self, name: &str) -> bool {
        name.len() > 4 && name.starts_with("__") && name.ends_with("__")
    }

    fn is_constructor_name(&self, name: &str) -> bool {
        name == "__init__"
    }

    fn is_annotation_line(&self, line: &str) -> bool {
        line.starts_with('@')
    }

    /// Any decorator: frameworks register handlers, commands and fixtures with them.
    fn annotation_registers(&self, line: &str) -> bool {
        line.starts_with('@')
    }

    /// `_x` and `__x`; a dunder (`__init__`) is the protocol others call.
    fn is_private(&self, name: &str, _definition: &str) -> bool {
        name.starts_with('_') && !(name.len() > 4 && name.starts_with("__") && name.ends_with("__"))
    }

    /// pytest's node id (`tests/test_x.py::TestY::test_z`) for what pytest collects: `test*`
    /// functions, and `test*` methods of `Test*` classes.
    fn test_runner_id(&self, file: &str, qualname: &str) -> Option<String> {
        let parts: Vec<&str> = qualname.split('.').collect();
        let collected = match parts.as_slice() {
            [function] => function.starts_with("test"),
            [class, method] => class.starts_with("Test") && method.starts_with("test"),
            _ => false,
        };
        collected.then(|| format!("{file}::{}", parts.join("::")))
    }

    fn export_list(&self, text: &str) -> Vec<String> {
        static PATTERNS: OnceLock<Option<(Regex, Regex)>> = OnceLock::new();
        let patterns = PATTERNS.get_or_init(|| {
            let all = Regex::new(r"(?s)__all__\s*(?::[^=]*)?[+]?=\s*[\[(](.*?)[\])]").ok()?;
            let name = Regex::new(r#"["']([A-Za-z_][A-Za-z0-9_]*)["']"#).ok()?;
            Some((all, name))
        });
        let Some((all, name)) = patterns else {
            return Vec::new();
        };
        all.captures_iter(text)
            .filter_map(|list| list.get(1))
            .flat_map(|list| name.captures_iter(list.as_str()))
            .filter_map(|n| n.get(1).map(|m| m.as_str().to_string()))
            .collect()
    }

    fn prose_pattern(&self) -> &'static str {
        r#"(?s)""".*?"""|'''.*?'''|#[^\n]*"#
    }

    fn reflection_markers(&self) -> &'static [&'static str] {
        &["getattr(", "importlib", "__getattr__"]
    }

    fn config_files(&self) -> &'static [&'static str] {
        &[
            "pyproject.toml",
            "setup.cfg",
            "setup.py",
            "mkdocs.yml",
            "mkdocs.yaml",
        ]
    }

    fn directory_module_stem(&self) -> Option<&'static str> {
        Some("__init__")
    }

    fn marks_package_dir(&self, path: &str) -> bool {
        matches!(role::file_name(path), "__init__.py" | "__init__.pyi")
    }
}

/// `a/b/c.py` → `[a, b, c]`; a package's `__init__.py` is the package itself.
pub fn module_parts(path: &str) -> Vec<&str> {
    let stem = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".pyi"))
        .unwrap_or(path);
    let mut parts: Vec<&str> = stem.split('/').filter(|p| !p.is_empty()).collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    parts
}

#[rustfmt::skip]
/// Python's builtins (sorted for binary search): calls to these never bind to a repository
/// symbol unless the repository shadows them in scope.
const BUILTINS: &[&str] = &[
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BlockingIOError",
    "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError",
    "ConnectionResetError", "DeprecationWarning", "EOFError", "EnvironmentError",
    "Exception", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError",
    "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
    "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError",
    "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration",
    "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError",
    "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError",
    "Warning", "ZeroDivisionError", "__import__", "abs", "aiter", "all", "anext", "any",
    "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir",
    "divmod", "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset",
    "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
    "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
    "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property",
    "quit", "range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted",
    "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
];

#[cfg(test)]
mod tests {

    #[test]
    fn pytest_node_ids_for_what_pytest_collects() {
        let python = super::Python;
        let id = |q: &str| python.test_runner_id("tests/test_api.py", q);
        assert_eq!(
            id("test_get").as_deref(),
            Some("tests/test_api.py::test_get")
        );
        assert_eq!(
            id("TestSession.test_send").as_deref(),
            Some("tests/test_api.py::TestSession::test_send")
        );
        assert_eq!(id("helper"), None);
        assert_eq!(id("Helper.test_x"), None);
    }

    #[test]
    fn a_dunder_is_public_and_a_mangled_name_private() {
        let python = super::Python;
        assert!(!python.is_private("__init__", "def __init__(self):"));
        assert!(python.is_private("__secret", "def __secret(self):"));
        assert!(python.is_private("_helper", "def _helper():"));
        assert!(!python.is_private("get", "def get(url):"));
    }

    use super::*;

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn module_keys_start_at_import_roots() {
        let py = Python;
        let none = |_: &str| false;
        assert_eq!(
            py.module_keys("src/pkg/mod.py", &none),
            vec!["src.pkg.mod", "pkg.mod", "mod"]
        );
        assert_eq!(py.module_keys("pkg/__init__.py", &none), vec!["pkg"]);
        let packages = |dir: &str| dir == "src/pkg" || dir == "src/pkg/email";
        assert_eq!(
            py.module_keys("src/pkg/email/sender.py", &packages),
            vec!["src.pkg.email.sender", "pkg.email.sender"]
        );
    }

    #[test]
    fn keys_below_the_root_are_seen_from_their_own_tree_or_src() {
        let py = Python;
        // `from enum import Enum` in typer/main.py is the standard library's, not a docs folder.
        assert!(!py.key_visible_from("enum", "docs_src/types/enum/__init__.py", "typer/main.py"));
        assert!(py.key_visible_from(
            "enum",
            "docs_src/types/enum/__init__.py",
            "docs_src/types/a.py"
        ));
        assert!(py.key_visible_from(
            "docs_src.types.enum",
            "docs_src/types/enum/__init__.py",
            "x.py"
        ));
        assert!(py.key_visible_from("pkg.mod", "src/pkg/mod.py", "tests/test_mod.py"));
        assert!(py.key_visible_from("helpers", "tests/helpers.py", "tests/unit/test_a.py"));
        assert!(!py.key_visible_from("gc", "test/dtracedata/gc.py", "test/test_gc.py"));
    }
}
