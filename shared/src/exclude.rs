//! The `exclude` globs (the config's `exclude:` and `--exclude`): one way to compile them, so
//! the config check, the walk and the freshness check agree on what they leave out.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// Compiles `globs`; a glob matches the path itself and everything below it.
pub fn compile(globs: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let glob = glob.trim_end_matches('/');
        let mut patterns = vec![glob.to_string(), format!("{glob}/**")];
        if !glob.contains('/') {
            // A bare `*.min.js` or `vendor` matches at any depth, like .gitignore.
            patterns.push(format!("**/{glob}"));
            patterns.push(format!("**/{glob}/**"));
        }
        for pattern in patterns {
            let compiled = Glob::new(&pattern).map_err(|e| format!("--exclude {glob:?}: {e}"))?;
            builder.add(compiled);
        }
    }
    builder.build().map_err(|e| e.to_string())
}
