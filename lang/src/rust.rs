//! Rust's rules: `.rs`, the roles of paths, module keys and packages from the crate layout and
//! Cargo.toml, builtins and the std methods that give back or iterate their receiver. The walker
//! is parse/src/rust.rs.

use crate::role::{self, RoleDirs};
use crate::Language;
use tg_shared::record::Role;

pub struct Rust;

impl Language for Rust {
    fn id(&self) -> &'static str {
        "rust"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["rs"]
    }

    fn role(&self, path: &str) -> Role {
        const DIRS: RoleDirs = RoleDirs {
            test: &["tests", "fuzz"],
            example: &["examples"],
            tooling: &["benches", "xtask", "scripts", "ci"],
        };
        if let Some(role) = role::by_directory(path, &DIRS) {
            return role;
        }
        match role::file_name(path) {
            "tests.rs" => Role::Test,
            // Cargo's build script sits beside Cargo.toml; a `build.rs` under `src/` is a module
            // (a builder's, say).
            "build.rs" if !path.split('/').any(|dir| dir == "src") => Role::Tooling,
            _ => Role::Product,
        }
    }

    fn module_keys(&self, path: &str, _is_package_dir: &dyn Fn(&str) -> bool) -> Vec<String> {
        vec![module_key(path)]
    }

    fn key_separator(&self) -> &'static str {
        "::"
    }

    fn is_builtin(&self, name: &str) -> bool {
        BUILTINS.binary_search(&name).is_ok()
    }

    fn imports_reach_definitions(&self) -> bool {
        true
    }

    fn returns_receiver(&self, method: &str) -> bool {
        RECEIVER_METHODS.binary_search(&method).is_ok()
    }

    fn iterates_receiver(&self, method: &str) -> bool {
        matches!(method, "drain" | "into_iter" | "iter" | "iter_mut")
    }

    fn picks_element(&self, method: &str) -> bool {
        matches!(
            method,
            "pop"
                | "pop_front"
                | "pop_back"
                | "first"
                | "first_mut"
                | "last"
                | "last_mut"
                | "front"
                | "back"
                | "get"
                | "get_mut"
                | "remove"
                | "swap_remove"
        )
    }

    fn constructs_own_type(&self, function: &str) -> bool {
        matches!(function, "default" | "from")
    }

    fn is_entry_file(&self, path: &str) -> bool {
        path == "src/main.rs" || path.ends_with("/src/main.rs") || path.contains("src/bin/")
    }

    fn is_constructor_name(&self, name: &str) -> bool {
        matches!(name, "new" | "default")
    }

    fn is_annotation_line(&self, line: &str) -> bool {
        line.starts_with("#[")
    }

    /// Tests run by the harness; `#[no_mangle]` functions are called from C.
    fn annotation_registers(&self, line: &str) -> bool {
        line.starts_with("#[") && (line.contains("test") || line.contains("no_mangle"))
    }

    fn is_private(&self, _name: &str, definition: &str) -> bool {
        !definition.starts_with("pub")
    }

    /// `#[test]` marks a test; the rest of a test module is its helpers.
    fn marks_test_cases(&self) -> bool {
        true
    }

    /// `cargo test`'s name for a test function: its module path in the crate (`walk::tests::x`
    /// for `src/walk.rs::tests::x`), or `--test NAME x` for an integration test in
    /// `tests/NAME.rs`. A helper of the tests gets a name too (whether a function is a test is
    /// its `#[test]`, [`Language::marks_test_cases`]).
    fn test_runner_id(&self, file: &str, qualname: &str) -> Option<String> {
        let path = file.strip_suffix(".rs")?;
        // `#[test]` goes on free functions: a method (`Type::f`, `Type.f`) is no test.
        let owner = qualname
            .rsplit_once("::")
            .or_else(|| qualname.rsplit_once('.'))
            .map(|(o, _)| o);
        if owner
            .and_then(|o| o.rsplit("::").next())
            .is_some_and(|o| o.starts_with(char::is_uppercase))
        {
            return None;
        }
        let qualname = qualname.replace('.', "::");
        if let Some((_, test)) = path
            .rsplit_once("tests/")
            .filter(|(crate_dir, _)| !crate_dir.contains("src/"))
        {
            return Some(format!("--test {} {qualname}", test.replace('/', "::")));
        }
        let module = path.rsplit_once("src/").map_or(path, |(_, m)| m);
        let mut segments: Vec<&str> = module.split('/').collect();
        if matches!(segments.last(), Some(&("mod" | "lib" | "main"))) {
            segments.pop();
        }
        segments.push(&qualname);
        Some(segments.join("::"))
    }

    /// A `pub` item of a library.
    fn is_api(&self, definition: &str, _declared: bool, library: bool) -> bool {
        library && definition.starts_with("pub")
    }

    fn is_library_root(&self, path: &str) -> bool {
        path == "lib.rs" || path.ends_with("/lib.rs")
    }

    fn implements_interface(&self, parent_signature: &str) -> bool {
        parent_signature.contains(" for ")
    }

    fn prose_pattern(&self) -> &'static str {
        crate::c::C_LIKE_PROSE
    }

    fn config_files(&self) -> &'static [&'static str] {
        &["Cargo.toml"]
    }

    fn directory_module_stem(&self) -> Option<&'static str> {
        Some("mod")
    }

    /// A crate: `bins/x/crate` for everything under `bins/x/src/`. Files outside any `src/`
    /// (integration tests and their helpers, examples, benches) share a package per
    /// `tests/`, `examples/` or `benches/` directory (`bins/x/tests/`), else per directory:
    /// strictly each test file is a crate, but they share helper modules and call them.
    fn package(&self, path: &str) -> Option<String> {
        let key = crate_key(path);
        if !key.ends_with("#crate") {
            return Some(key);
        }
        let mut end = 0;
        for part in path.split('/') {
            end += part.len() + 1;
            if matches!(part, "tests" | "examples" | "benches") && end <= path.len() {
                return Some(path[..end].to_string());
            }
        }
        Some(
            path.rsplit_once('/')
                .map_or(String::new(), |(dir, _)| format!("{dir}/")),
        )
    }

    fn manifests(&self, package: &str) -> Vec<String> {
        let dir = package.strip_suffix("crate").unwrap_or(package);
        if dir.is_empty() || dir.ends_with('/') {
            vec![format!("{dir}Cargo.toml")]
        } else {
            Vec::new()
        }
    }

    fn package_names(&self, _path: &str, manifest: &str) -> Vec<(String, Option<String>)> {
        let (mut section, mut package, mut lib, mut lib_path) = ("", None, None, None);
        for line in manifest.lines() {
            let line = toml_line(line);
            if line.starts_with('[') {
                section = line;
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim().trim_matches(['"', '\'']);
            match (section, key.trim()) {
                ("[package]", "name") => package = Some(value),
                ("[lib]", "name") => lib = Some(value),
                ("[lib]", "path") => lib_path = Some(value.to_string()),
                _ => {}
            }
        }
        lib.or(package)
            .map(|name| vec![(name.replace('-', "_"), lib_path)])
            .unwrap_or_default()
    }

    /// `std`, `core` and `alloc` are outside; another crate of the workspace may be inside, so
    /// its names may still fall back to a unique repository symbol.
    fn unmatched_module_is_external(&self, key: &str) -> bool {
        ["std", "core", "alloc"]
            .iter()
            .any(|root| key == *root || key.starts_with(&format!("{root}::")))
    }
}

/// A Cargo.toml line without its comment and surrounding blanks (a `#` inside quotes stays).
fn toml_line(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return line[..i].trim(),
            _ => {}
        }
    }
    line.trim()
}

/// The key of a crate's root module: `bins/x/src/lib.rs` → `bins/x/crate`. A file outside any
/// `src/` (an integration test, `build.rs`) is a crate of its own.
pub fn crate_key(path: &str) -> String {
    match path
        .rfind("src/")
        .filter(|&i| i == 0 || path[..i].ends_with('/'))
    {
        Some(i) => format!("{}crate", &path[..i]),
        None => format!("{path}#crate"),
    }
}

/// `bins/x/src/a/b.rs` and `bins/x/src/a/b/mod.rs` → `bins/x/crate::a::b`.
pub fn module_key(path: &str) -> String {
    let krate = crate_key(path);
    let Some(i) = path
        .rfind("src/")
        .filter(|&i| i == 0 || path[..i].ends_with('/'))
    else {
        return krate;
    };
    let inner = path[i + 4..].strip_suffix(".rs").unwrap_or(&path[i + 4..]);
    let mut parts: Vec<&str> = inner.split('/').collect();
    if matches!(parts.last(), Some(&"mod"))
        || matches!(parts.as_slice(), [single] if *single == "lib" || *single == "main")
    {
        parts.pop();
    }
    let mut key = krate;
    for part in parts {
        key.push_str("::");
        key.push_str(part);
    }
    key
}

#[rustfmt::skip]
/// Methods of std wrappers (`Option`, `Result`, `Rc`, `RefCell`, `Mutex`, `Weak`) and `Clone`
/// that give back the wrapped value, or a reference or guard to it (sorted).
const RECEIVER_METHODS: &[&str] = &[
    "as_deref", "as_deref_mut", "as_mut", "as_ref", "borrow", "borrow_mut", "clone", "expect",
    "into_inner", "lock", "to_owned", "unwrap", "unwrap_or_default", "unwrap_or_else", "upgrade",
];

#[rustfmt::skip]
/// Prelude items and std constructors that are called like functions (sorted).
const BUILTINS: &[&str] = &[
    "Box", "Err", "None", "Ok", "Some", "String", "Vec", "drop", "panic", "std",
];

#[cfg(test)]
mod tests {
    use crate::Language;
    use tg_shared::record::Role;

    #[test]
    fn a_build_script_is_tooling_and_a_build_module_is_not() {
        let rust = super::Rust;
        assert_eq!(rust.role("build.rs"), Role::Tooling);
        assert_eq!(rust.role("crates/x/build.rs"), Role::Tooling);
        assert_eq!(rust.role("src/body/build.rs"), Role::Product);
        assert_eq!(rust.role("crates/x/src/build.rs"), Role::Product);
    }

    #[test]
    fn cargo_test_names_follow_the_module_path() {
        let rust = super::Rust;
        let id = |file: &str, q: &str| rust.test_runner_id(file, q);
        assert_eq!(
            id("src/walk.rs", "tests::finds_files").as_deref(),
            Some("walk::tests::finds_files")
        );
        assert_eq!(
            id("crates/x/src/lib.rs", "tests::a").as_deref(),
            Some("tests::a")
        );
        assert_eq!(
            id("src/calib/mod.rs", "tests::b").as_deref(),
            Some("calib::tests::b")
        );
        assert_eq!(
            id("tests/cli.rs", "runs").as_deref(),
            Some("--test cli runs")
        );
        assert_eq!(id("src/a.py", "x"), None);
        assert_eq!(id("tests/mcp.rs", "Raw::next"), None);
    }

    use super::*;

    #[test]
    fn tables_are_sorted() {
        assert!(RECEIVER_METHODS.windows(2).all(|w| w[0] < w[1]));
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn packages_are_crates_named_by_their_manifests() {
        let rust = Rust;
        assert_eq!(
            rust.package("bins/x/src/a/b.rs").as_deref(),
            Some("bins/x/crate")
        );
        assert_eq!(
            rust.package("bins/x/tests/cli.rs").as_deref(),
            Some("bins/x/tests/")
        );
        assert_eq!(rust.manifests("bins/x/crate"), ["bins/x/Cargo.toml"]);
        assert_eq!(rust.manifests("crate"), ["Cargo.toml"]);
        let manifest = "[package]\nname = \"tg-shared\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"no\"\n";
        assert_eq!(
            rust.package_names("Cargo.toml", manifest),
            [("tg_shared".to_string(), None)]
        );
        let renamed = "[package]\nname = 'tg-x'   # the x crate\n[lib]\nname = \"x_lib\"\npath = \"lib.rs\"\n";
        assert_eq!(
            rust.package_names("Cargo.toml", renamed),
            [("x_lib".to_string(), Some("lib.rs".to_string()))]
        );
        assert_eq!(rust.package("tests/make.rs").as_deref(), Some("tests/"));
        assert_eq!(
            rust.package("tests/common/mod.rs").as_deref(),
            Some("tests/")
        );
        assert_eq!(rust.manifests("tests/"), ["tests/Cargo.toml"]);
        assert_eq!(rust.package("build.rs").as_deref(), Some(""));
        assert!(rust
            .package_names("Cargo.toml", "[workspace]\nmembers = []\n")
            .is_empty());
    }

    #[test]
    fn module_keys_follow_the_crate_layout() {
        assert_eq!(module_key("bins/x/src/lib.rs"), "bins/x/crate");
        assert_eq!(module_key("src/main.rs"), "crate");
        assert_eq!(module_key("shared/src/lang/mod.rs"), "shared/crate::lang");
        assert_eq!(
            module_key("shared/src/lang/python.rs"),
            "shared/crate::lang::python"
        );
        assert_eq!(
            module_key("bins/x/tests/cli.rs"),
            "bins/x/tests/cli.rs#crate"
        );
    }
}
