//! TypeScript's and JavaScript's rules (one module: they share modules, imports and
//! conventions, and import each other): extensions, the roles of paths, module keys from paths
//! (`src/a/index.ts` is `src/a`), how an import specifier names a module, workspace packages
//! from `package.json`. The walker is parse/src/ecmascript.rs.

use crate::role::{self, RoleDirs};
use crate::Language;
use tg_shared::record::Role;

/// TypeScript or JavaScript: the same rules, told apart by extension and grammar.
pub struct EcmaScript {
    id: &'static str,
    extensions: &'static [&'static str],
}

pub static TYPESCRIPT: EcmaScript = EcmaScript {
    id: "typescript",
    extensions: &["ts", "tsx", "mts", "cts"],
};

pub static JAVASCRIPT: EcmaScript = EcmaScript {
    id: "javascript",
    extensions: &["js", "jsx", "mjs", "cjs"],
};

/// Every extension of both, longest first where one ends another (`.d.ts` before `.ts`).
const STRIPPED: [&str; 11] = [
    ".d.mts", ".d.cts", ".d.ts", ".tsx", ".mts", ".cts", ".ts", ".jsx", ".mjs", ".cjs", ".js",
];

impl Language for EcmaScript {
    fn id(&self) -> &'static str {
        self.id
    }

    fn extensions(&self) -> &'static [&'static str] {
        self.extensions
    }

    /// Tests by directory (`__tests__`, `test`) or name (`x.test.ts`, `x.spec.js`); stories
    /// and docs as examples; build configuration (`vite.config.ts`) and scripts as tooling.
    fn role(&self, path: &str) -> Role {
        const DIRS: RoleDirs = RoleDirs {
            test: &[
                "test",
                "tests",
                "__tests__",
                "__mocks__",
                "__fixtures__",
                "spec",
                "e2e",
                "cypress",
            ],
            example: &[
                "examples", "example", "docs", "demo", "demos", "samples", "www",
            ],
            tooling: &["scripts", "tools", "bench", "benchmarks", "benchmark", "ci"],
        };
        if let Some(role) = role::by_directory(path, &DIRS) {
            return role;
        }
        let file = role::file_name(path);
        let parts: Vec<&str> = file.split('.').collect();
        let infix = |word: &str| parts.len() > 2 && parts[1..parts.len() - 1].contains(&word);
        if infix("test") || infix("spec") || infix("test-d") {
            Role::Test
        } else if infix("stories") {
            Role::Example
        } else if infix("config") || (!path.contains('/') && parts.len() > 2 && infix("setup")) {
            Role::Tooling
        } else {
            Role::Product
        }
    }

    /// The path without its extension; an `index` file is also its directory's module.
    fn module_keys(&self, path: &str, _is_package_dir: &dyn Fn(&str) -> bool) -> Vec<String> {
        let key = strip_extension(path);
        match key.rsplit_once('/') {
            Some((dir, "index")) => vec![dir.to_string(), key.to_string()],
            _ => vec![key.to_string()],
        }
    }

    fn key_separator(&self) -> &'static str {
        "/"
    }

    /// TypeScript and JavaScript import each other's modules.
    fn module_space(&self) -> &'static str {
        "ecmascript"
    }

    fn falls_back_by_name(&self) -> bool {
        false
    }

    fn is_builtin(&self, name: &str) -> bool {
        GLOBALS.binary_search(&name).is_ok()
    }

    /// A later function declaration of a name replaces an earlier one (overload signatures
    /// are not definitions).
    fn redefinition_replaces(&self) -> bool {
        true
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("constructor")
    }

    fn prefers_nearest_module(&self) -> bool {
        true
    }

    /// A workspace package: the directory above its `src/`, or `packages/<name>/` (and the
    /// like) in a monorepo, else the repository root.
    fn package(&self, path: &str) -> Option<String> {
        let parts: Vec<&str> = path.split('/').collect();
        let dirs = &parts[..parts.len() - 1];
        let end = dirs
            .iter()
            .position(|d| *d == "src")
            .or_else(|| (dirs.len() >= 2 && WORKSPACE_DIRS.contains(&dirs[0])).then_some(2))
            .unwrap_or(0);
        Some(dirs[..end].iter().map(|d| format!("{d}/")).collect())
    }

    fn manifest(&self, package: &str) -> Option<String> {
        Some(format!("{package}package.json"))
    }

    /// The `name` of a `package.json`, with its entry: `source`, else `src/index` (where a
    /// repository keeps what it builds from), else `main`/`module` unless they point into
    /// build output.
    fn package_names(&self, manifest: &str) -> Vec<(String, Option<String>)> {
        let Ok(json) = serde_json::from_str::<serde_json::Value>(manifest) else {
            return Vec::new();
        };
        let Some(name) = json.get("name").and_then(|n| n.as_str()) else {
            return Vec::new();
        };
        let field = |key: &str| json.get(key).and_then(|v| v.as_str()).map(str::to_string);
        let built = |p: &String| {
            let p = p.trim_start_matches("./");
            ["dist/", "build/", "lib/", "out/", "esm/", "cjs/"]
                .iter()
                .any(|d| p.starts_with(d))
        };
        let mut entries = vec![field("source"), Some("src/index.ts".to_string())];
        entries.push(field("module").filter(|p| !built(p)));
        entries.push(field("main").filter(|p| !built(p)));
        entries
            .into_iter()
            .flatten()
            .map(|entry| (name.to_string(), Some(entry)))
            .collect()
    }

    fn is_annotation_line(&self, line: &str) -> bool {
        line.starts_with('@')
    }

    /// A decorator registers with a framework (Angular, NestJS).
    fn annotation_registers(&self, line: &str) -> bool {
        line.starts_with('@')
    }

    fn is_private(&self, name: &str, definition: &str) -> bool {
        name.starts_with('#') || definition.starts_with("private ")
    }

    /// What a library exports.
    fn is_api(&self, definition: &str, _declared: bool, library: bool) -> bool {
        library && definition.starts_with("export")
    }

    fn is_library_root(&self, path: &str) -> bool {
        let key = strip_extension(path);
        key == "index" || key.ends_with("src/index")
    }

    fn prose_pattern(&self) -> &'static str {
        crate::c::C_LIKE_PROSE
    }

    fn config_files(&self) -> &'static [&'static str] {
        &["package.json"]
    }

    fn directory_module_stem(&self) -> Option<&'static str> {
        Some("index")
    }
}

/// Directories whose children are the packages of a monorepo.
const WORKSPACE_DIRS: [&str; 5] = ["packages", "apps", "libs", "modules", "plugins"];

/// `src/a.d.ts` → `src/a`; a path without a known extension stays as it is.
pub fn strip_extension(path: &str) -> &str {
    STRIPPED
        .iter()
        .find_map(|ext| path.strip_suffix(ext))
        .unwrap_or(path)
}

/// The module key an import specifier names from the file `importer`: a relative specifier
/// (`./a`, `../b/index.js`) as a repository path without extension (`.js` written for a `.ts`
/// source is the same module), a bare one (`react`, `@scope/pkg/sub`) as written.
pub fn specifier_key(importer: &str, specifier: &str) -> String {
    if !(specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == "..")
    {
        return specifier.to_string();
    }
    let mut parts: Vec<&str> = importer.split('/').collect();
    parts.pop();
    for part in specifier.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return format!("<beyond the root>/{specifier}");
                }
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    let key = strip_extension(&joined);
    key.strip_suffix("/index").unwrap_or(key).to_string()
}

#[rustfmt::skip]
/// Globals every JavaScript runtime provides (sorted for binary search).
const GLOBALS: &[&str] = &[
    "Array", "ArrayBuffer", "BigInt", "Boolean", "DataView", "Date", "Error", "EvalError",
    "Function", "Intl", "JSON", "Map", "Math", "Number", "Object", "Promise", "Proxy",
    "RangeError", "ReferenceError", "Reflect", "RegExp", "Set", "String", "Symbol",
    "SyntaxError", "TypeError", "URIError", "URL", "WeakMap", "WeakRef", "WeakSet",
    "clearInterval", "clearTimeout", "console", "decodeURI", "decodeURIComponent",
    "encodeURI", "encodeURIComponent", "fetch", "globalThis", "isFinite", "isNaN",
    "parseFloat", "parseInt", "queueMicrotask", "require", "setInterval", "setTimeout",
    "structuredClone",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_are_sorted() {
        assert!(GLOBALS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn keys_and_specifiers_meet() {
        let none = |_: &str| false;
        assert_eq!(
            TYPESCRIPT.module_keys("src/a/index.ts", &none),
            vec!["src/a", "src/a/index"]
        );
        assert_eq!(TYPESCRIPT.module_keys("src/b.d.ts", &none), vec!["src/b"]);
        assert_eq!(JAVASCRIPT.module_keys("index.js", &none), vec!["index"]);
        assert_eq!(specifier_key("src/a/x.ts", "./y"), "src/a/y");
        assert_eq!(specifier_key("src/a/x.ts", "./y.js"), "src/a/y");
        assert_eq!(specifier_key("src/a/x.ts", "../b"), "src/b");
        assert_eq!(specifier_key("src/a/x.ts", ".."), "src");
        assert_eq!(specifier_key("src/a/x.ts", "./sub/index"), "src/a/sub");
        assert_eq!(specifier_key("x.ts", "../y"), "<beyond the root>/../y");
        assert_eq!(
            specifier_key("src/x.ts", "@scope/pkg/sub"),
            "@scope/pkg/sub"
        );
    }

    #[test]
    fn packages_from_paths_and_manifests() {
        assert_eq!(
            TYPESCRIPT.package("packages/core/src/a.ts").as_deref(),
            Some("packages/core/")
        );
        assert_eq!(
            TYPESCRIPT.package("packages/core/index.ts").as_deref(),
            Some("packages/core/")
        );
        assert_eq!(JAVASCRIPT.package("lib/command.js").as_deref(), Some(""));
        let names = TYPESCRIPT.package_names(r#"{"name":"@x/core","main":"build/index.js"}"#);
        assert_eq!(
            names,
            vec![("@x/core".to_string(), Some("src/index.ts".to_string()))]
        );
    }

    #[test]
    fn roles_by_convention() {
        for (path, want) in [
            ("src/query.ts", Role::Product),
            ("src/__tests__/query.test.tsx", Role::Test),
            ("src/query.spec.ts", Role::Test),
            ("vite.config.ts", Role::Tooling),
            ("src/Button.stories.tsx", Role::Example),
            ("lib/command.js", Role::Product),
        ] {
            assert_eq!(TYPESCRIPT.role(path), want, "{path}");
        }
    }
}
