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

    fn manifests(&self, package: &str) -> Vec<String> {
        vec![
            format!("{package}package.json"),
            format!("{package}tsconfig.json"),
        ]
    }

    fn package_names(&self, manifest: &str, text: &str) -> Vec<(String, Option<String>)> {
        let Some(json) = jsonc(text) else {
            return Vec::new();
        };
        if role::file_name(manifest) == "package.json" {
            package_json_names(&json)
        } else {
            tsconfig_names(&json)
        }
    }

    /// A tsconfig's `extends`, when it names a file of the repository.
    fn manifest_includes(&self, manifest: &str, text: &str) -> Vec<String> {
        if role::file_name(manifest) == "package.json" {
            return Vec::new();
        }
        let Some(json) = jsonc(text) else {
            return Vec::new();
        };
        let extends = match json.get("extends") {
            Some(serde_json::Value::String(one)) => vec![one.clone()],
            Some(serde_json::Value::Array(many)) => many
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        extends
            .into_iter()
            .filter(|e| e.starts_with("./") || e.starts_with("../"))
            .map(|e| {
                if e.ends_with(".json") {
                    e
                } else {
                    format!("{e}.json")
                }
            })
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
    let dir = importer.rsplit_once('/').map_or("", |(dir, _)| dir);
    let Some(joined) = crate::normalize_join(dir, specifier) else {
        return format!("<beyond the root>/{specifier}");
    };
    let key = strip_extension(&joined);
    key.strip_suffix("/index").unwrap_or(key).to_string()
}

/// Whether a path a manifest names is build output, not the source the repository holds.
fn is_built(path: &str) -> bool {
    let path = path.trim_start_matches("./");
    ["dist/", "build/", "lib/", "out/", "esm/", "cjs/"]
        .iter()
        .any(|d| path.starts_with(d))
        || path.ends_with(".d.ts")
}

/// A package.json's `name`, with its entries: `source`, `src/index.ts` (where a repository
/// keeps what it builds from), `main`/`module` when they are not build output, and each
/// subpath of `exports` that points at a source (`"./utils": "./src/utils.ts"`).
fn package_json_names(json: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let Some(name) = json.get("name").and_then(|n| n.as_str()) else {
        return Vec::new();
    };
    let field = |key: &str| json.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let mut names: Vec<(String, Option<String>)> = [
        field("source"),
        Some("src/index.ts".to_string()),
        field("module").filter(|p| !is_built(p)),
        field("main").filter(|p| !is_built(p)),
    ]
    .into_iter()
    .flatten()
    .map(|entry| (name.to_string(), Some(entry)))
    .collect();
    let subpaths: Vec<(String, &serde_json::Value)> = match json.get("exports") {
        Some(serde_json::Value::Object(map)) if map.keys().all(|k| k.starts_with('.')) => {
            map.iter().map(|(k, v)| (k.clone(), v)).collect()
        }
        Some(other) => vec![(".".to_string(), other)],
        None => Vec::new(),
    };
    for (subpath, target) in subpaths {
        let Some(target) = export_target(target, 0) else {
            continue;
        };
        let sub = subpath.trim_start_matches('.').trim_end_matches("/*");
        let target = match target.split_once("/*") {
            Some((dir, _)) => dir.to_string(),
            None => target,
        };
        names.push((format!("{name}{sub}"), Some(target)));
    }
    names
}

/// The source file an `exports` entry points at: a string, or the first condition
/// (`source`, `import`, `default`, ...) that is not build output.
fn export_target(target: &serde_json::Value, depth: usize) -> Option<String> {
    match target {
        serde_json::Value::String(path) => (!is_built(path)).then(|| path.clone()),
        serde_json::Value::Object(conditions) if depth < 4 => conditions
            .values()
            .find_map(|value| export_target(value, depth + 1)),
        _ => None,
    }
}

/// A tsconfig's path aliases: each `paths` pattern (`"@app/*": ["src/app/*"]`) as a name for
/// the directory or file it maps to, and `baseUrl` itself as the empty name (a bare
/// specifier is then looked up from it). Paths are relative to `baseUrl`.
fn tsconfig_names(json: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let options = json.get("compilerOptions");
    let base = options
        .and_then(|o| o.get("baseUrl"))
        .and_then(|b| b.as_str())
        .map(|b| b.trim_start_matches("./").trim_end_matches('/'));
    let join = |path: &str| {
        let path = path.trim_start_matches("./");
        match base {
            Some(base) if !base.is_empty() && base != "." => format!("{base}/{path}"),
            _ => path.to_string(),
        }
    };
    let mut names = Vec::new();
    if let Some(base) = base.filter(|b| !b.is_empty() && *b != ".") {
        names.push((String::new(), Some(base.to_string())));
    }
    let paths = options
        .and_then(|o| o.get("paths"))
        .and_then(|p| p.as_object());
    for (pattern, targets) in paths.into_iter().flatten() {
        let Some(first) = targets
            .as_array()
            .and_then(|t| t.iter().find_map(|v| v.as_str()))
        else {
            continue;
        };
        let name = pattern.trim_end_matches("/*").trim_end_matches('*');
        let target = first.trim_end_matches("/*").trim_end_matches('*');
        if !name.is_empty() && !target.is_empty() {
            names.push((name.to_string(), Some(join(target))));
        }
    }
    names
}

/// JSON with the comments and trailing commas tsconfig files allow.
fn jsonc(text: &str) -> Option<serde_json::Value> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for skipped in chars.by_ref() {
                    if last == '*' && skipped == '/' {
                        break;
                    }
                    last = skipped;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: `,` before `}` or `]` (outside strings, which the pass above kept).
    let mut cleaned = String::with_capacity(out.len());
    let mut in_string = false;
    let mut escaped = false;
    let bytes: Vec<char> = out.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        if in_string {
            cleaned.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = bytes[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    serde_json::from_str(&cleaned).ok()
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
        let names = TYPESCRIPT.package_names(
            "packages/core/package.json",
            r#"{"name":"@x/core","main":"build/index.js","exports":{".":{"types":"./dist/i.d.ts","import":"./dist/i.js"},"./utils":{"source":"./src/utils.ts"}}}"#,
        );
        let want = |name: &str, file: &str| (name.to_string(), Some(file.to_string()));
        assert_eq!(
            names,
            vec![
                want("@x/core", "src/index.ts"),
                want("@x/core/utils", "./src/utils.ts")
            ]
        );
        let tsconfig = r#"{
            // comments and trailing commas, as tsc allows; "a // b" is a string
            "extends": "../../tsconfig.base",
            "compilerOptions": { "baseUrl": "./src", "paths": { "@lib/*": ["lib/*",], "~": ["index.ts"] }, /* x */ },
            "include": ["a // b"],
        }"#;
        assert_eq!(
            TYPESCRIPT.package_names("packages/app/tsconfig.json", tsconfig),
            vec![
                want("", "src"),
                want("@lib", "src/lib"),
                want("~", "src/index.ts")
            ]
        );
        assert_eq!(
            TYPESCRIPT.manifest_includes("packages/app/tsconfig.json", tsconfig),
            vec!["../../tsconfig.base.json".to_string()]
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
