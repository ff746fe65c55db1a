//! A language is one module: no code outside `lang/` and `parse/` names a language or one of
//! its file extensions. Adding a language then touches its module, its registry line, its
//! grammar and its tests, not the stages. Tests and comments may name them (fixtures are
//! files of some language); code before a file's `#[cfg(test)]` may not.

use std::path::{Path, PathBuf};

/// The code a stage or the core runs: every `.rs` file under these directories, but their
/// `tests/` directories and `tests.rs` modules.
const CHECKED: [&str; 2] = ["bins", "shared/src"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The string literals of a file's code: up to its `#[cfg(test)]`, comment lines left out, and
/// the paths of files compiled in (`include_str!`: the map page's own script is a file of ours,
/// not a rule about the repository's sources).
fn literals(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut out = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with("//") || line.contains("include_str!(") {
            continue;
        }
        let mut parts = line.split('"');
        parts.next();
        while let Some(literal) = parts.next() {
            out.push((number + 1, literal.to_string()));
            parts.next();
        }
    }
    out
}

/// Whether a literal names a language: its id, an extension (`"py"`, `".py"`, `"x/a.py"`), or
/// a file only that language gives meaning to.
fn names_a_language(literal: &str) -> Option<String> {
    for lang in tg_lang::REGISTRY {
        if literal == lang.id() {
            return Some(format!("the language id `{}`", lang.id()));
        }
        for ext in lang.extensions() {
            let dotted = format!(".{ext}");
            if literal == *ext
                || literal.ends_with(&dotted)
                || literal.contains(&format!("{dotted}/"))
            {
                return Some(format!("the extension `{ext}`"));
            }
        }
    }
    [
        "__init__",
        "__main__",
        "conftest",
        "Cargo.toml",
        "pyproject",
    ]
    .into_iter()
    .find(|word| literal.contains(word))
    .map(|word| format!("`{word}`"))
}

#[test]
fn no_stage_names_a_language() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in CHECKED {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 50,
        "the walk found the sources: {}",
        files.len()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable source");
        for (line, literal) in literals(&text) {
            if let Some(what) = names_a_language(&literal) {
                found.push(format!(
                    "{}:{line}: {what} in \"{literal}\"",
                    file.display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "per-language rules belong behind tg_lang::Language:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_what_it_looks_for() {
    assert!(names_a_language("py").is_some());
    assert!(names_a_language("/__init__.py").is_some());
    assert!(names_a_language("src/main.rs").is_some());
    assert!(names_a_language("rust").is_some());
    assert!(names_a_language("module").is_none());
    let code = "let a = \"x.py\";\n// \"y.rs\"\n#[cfg(test)]\nlet b = \"z.c\";\n";
    assert_eq!(literals(code), vec![(1, "x.py".to_string())]);
}
