//! C's rules: `.c`/`.h`, the roles of paths, and module keys as path suffixes (`#include "x.h"`
//! names a file by suffix, the nearest one first). The walker is parse/src/c/.

use crate::role::{self, RoleDirs};
use crate::Language;
use tg_shared::record::Role;

pub struct C;

impl Language for C {
    fn id(&self) -> &'static str {
        "c"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["c", "h"]
    }

    fn role(&self, path: &str) -> Role {
        const DIRS: RoleDirs = RoleDirs {
            test: &["test", "tests", "testing", "unittest", "fuzz", "ossfuzz"],
            example: &["examples", "example", "samples", "demo"],
            tooling: &[
                "contrib",
                "scripts",
                "tools",
                "build",
                "cmake",
                "ci",
                "bench",
                "benchmarks",
            ],
        };
        if let Some(role) = role::by_directory(path, &DIRS) {
            return role;
        }
        let file = role::file_name(path);
        let stem = file.split('.').next().unwrap_or(file);
        if stem.starts_with("test_") || stem.ends_with("_test") || stem.ends_with("_unittest") {
            Role::Test
        } else {
            Role::Product
        }
    }

    /// Every `/`-suffix of the path: `#include "x.h"` and `<lib/x.h>` name files by suffix.
    fn module_keys(&self, path: &str, _is_package_dir: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut keys = vec![path.to_string()];
        keys.extend(
            path.match_indices('/')
                .map(|(i, _)| path[i + 1..].to_string()),
        );
        keys
    }

    fn key_separator(&self) -> &'static str {
        "/"
    }

    fn prefers_nearest_module(&self) -> bool {
        true
    }

    fn is_private(&self, _name: &str, definition: &str) -> bool {
        definition.contains("static")
    }

    /// A function with external linkage that a header declares.
    fn is_api(&self, definition: &str, declared: bool, _library: bool) -> bool {
        declared && !definition.contains("static")
    }

    fn is_interface_file(&self, path: &str) -> bool {
        path.ends_with(".h")
    }

    fn prose_pattern(&self) -> &'static str {
        C_LIKE_PROSE
    }

    fn reflection_markers(&self) -> &'static [&'static str] {
        &["dlsym("]
    }
}

/// Block and line comments, as C, Rust and the languages that took their syntax write them.
pub const C_LIKE_PROSE: &str = r"(?s)/\*.*?\*/|//[^\n]*";
