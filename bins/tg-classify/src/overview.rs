//! What the agent reads to design layers: the `top_directories` of the `needs_layers` payload
//! and `.tldrgraph/symbols.md`.

use crate::classify::{NodeInfo, Tally};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use tg_shared::contract::DirectoryCount;
use tg_shared::layers::LayerConfig;
use tg_shared::record::{NodeKind, Role};

/// At most this many directories in `top_directories`.
const MAX_DIRECTORIES: usize = 16;
/// A directory holding more than this share of all symbols is split into its subdirectories.
const SPLIT_SHARE: f64 = 0.4;
/// Symbols listed per directory in symbols.md.
const SYMBOLS_PER_DIRECTORY: usize = 8;
/// Entry points listed in symbols.md.
const MAX_ENTRY_POINTS: usize = 20;

/// `a/b/c.py` → `a/b`; a file at the root → `.`.
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(dir, _)| dir)
}

/// `a/b` → [`.`, `a`, `a/b`].
fn ancestors(dir: &str) -> Vec<&str> {
    let mut out = vec!["."];
    if dir == "." {
        return out;
    }
    for (i, c) in dir.char_indices() {
        if c == '/' {
            out.push(&dir[..i]);
        }
    }
    out.push(dir);
    out
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    symbols: u64,
    /// Of `symbols`, product code.
    product: u64,
    files: u64,
}

/// Symbol and file counts per directory, recursive and direct, and each directory's children.
struct Tree {
    recursive: BTreeMap<String, Counts>,
    direct: BTreeMap<String, Counts>,
    children: BTreeMap<String, BTreeSet<String>>,
}

impl Tree {
    fn build(tally: &Tally) -> Self {
        let mut symbols_per_file: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for node in &tally.nodes {
            if node.kind != NodeKind::Module {
                let counts = symbols_per_file.entry(node.file.as_str()).or_default();
                counts.0 += 1;
                counts.1 += u64::from(node.role == Role::Product);
            }
        }
        let mut tree = Tree {
            recursive: BTreeMap::new(),
            direct: BTreeMap::new(),
            children: BTreeMap::new(),
        };
        let files: BTreeSet<&str> = tally
            .files
            .keys()
            .map(String::as_str)
            .chain(symbols_per_file.keys().copied())
            .collect();
        for file in files {
            let (symbols, product) = symbols_per_file.get(file).copied().unwrap_or((0, 0));
            let dir = dir_of(file);
            let direct = tree.direct.entry(dir.to_string()).or_default();
            direct.symbols += symbols;
            direct.product += product;
            direct.files += 1;
            let chain = ancestors(dir);
            for (i, ancestor) in chain.iter().enumerate() {
                let counts = tree.recursive.entry((*ancestor).to_string()).or_default();
                counts.symbols += symbols;
                counts.product += product;
                counts.files += 1;
                if let Some(child) = chain.get(i + 1) {
                    tree.children
                        .entry((*ancestor).to_string())
                        .or_default()
                        .insert((*child).to_string());
                }
            }
        }
        tree
    }
}

/// The directories holding the most symbols, most first, at a depth that splits the
/// repository usefully: starting from the root, a directory holding more than 40% of all
/// symbols (or any directory while fewer than 4 are listed) is replaced by its subdirectories
/// plus its own files (`recursive: false`), as long as the list stays within 16 entries.
/// Product code is what layers are designed for, so its symbols are what is weighed: a
/// package outnumbered twenty to one by tests and docs examples is still split first, and a
/// directory of tests alone is not split while product code is listed.
pub fn top_directories(tally: &Tally) -> Vec<DirectoryCount> {
    let tree = Tree::build(tally);
    let Some(root) = tree.recursive.get(".").copied() else {
        return Vec::new();
    };
    // Weigh product symbols when there are any (a repository of examples alone weighs all).
    let weight = |c: &Counts| {
        if root.product > 0 {
            c.product
        } else {
            c.symbols
        }
    };
    let total = weight(&root).max(1) as f64;
    let mut entries: Vec<DirectoryCount> = vec![DirectoryCount {
        path: ".".to_string(),
        symbols: root.symbols,
        product: root.product,
        files: root.files,
        recursive: true,
    }];
    // Directories too wide to split within the budget once the list is long enough.
    let mut wide: BTreeSet<String> = BTreeSet::new();
    loop {
        let candidate = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.recursive && tree.children.contains_key(&e.path) && !wide.contains(&e.path)
            })
            .max_by(|(_, a), (_, b)| {
                (weight_of(a, root.product), a.symbols)
                    .cmp(&(weight_of(b, root.product), b.symbols))
                    .then(b.path.cmp(&a.path))
            })
            .map(|(i, _)| i);
        let Some(index) = candidate else { break };
        let entry = &entries[index];
        let share = weight_of(entry, root.product) as f64 / total;
        if share <= SPLIT_SHARE && entries.len() >= 4 {
            break;
        }
        let path = entry.path.clone();
        let direct = tree.direct.get(&path).copied();
        let mut children: Vec<(&String, Counts)> = tree.children[&path]
            .iter()
            .map(|child| (child, tree.recursive[child]))
            .collect();
        let room = MAX_DIRECTORIES - (entries.len() - 1) - usize::from(direct.is_some());
        if children.len() > room && entries.len() >= 4 {
            wide.insert(path);
            continue;
        }
        entries.remove(index);
        if let Some(direct) = direct {
            entries.push(DirectoryCount {
                path: path.clone(),
                symbols: direct.symbols,
                product: direct.product,
                files: direct.files,
                recursive: false,
            });
        }
        // A very wide directory (30 packages, say) keeps its largest children and lists the
        // rest together as `dir/*`, rather than not being split at all.
        let mut rest: Option<Counts> = None;
        if children.len() > room {
            children.sort_by(|a, b| b.1.symbols.cmp(&a.1.symbols).then(a.0.cmp(b.0)));
            let mut lumped = Counts::default();
            for (_, counts) in children.drain(room.saturating_sub(1)..) {
                lumped.symbols += counts.symbols;
                lumped.product += counts.product;
                lumped.files += counts.files;
            }
            rest = Some(lumped);
        }
        for (child, counts) in children {
            entries.push(DirectoryCount {
                path: child.clone(),
                symbols: counts.symbols,
                product: counts.product,
                files: counts.files,
                recursive: true,
            });
        }
        if let Some(lumped) = rest {
            entries.push(DirectoryCount {
                path: lumped_path(&path),
                symbols: lumped.symbols,
                product: lumped.product,
                files: lumped.files,
                recursive: true,
            });
        }
    }
    entries.sort_by(|a, b| b.symbols.cmp(&a.symbols).then(a.path.cmp(&b.path)));
    entries
}

/// What an entry weighs when choosing which to split: its product symbols, or all of them in a
/// repository without product code.
fn weight_of(entry: &DirectoryCount, root_product: u64) -> u64 {
    if root_product > 0 {
        entry.product
    } else {
        entry.symbols
    }
}

/// The entry listing the subdirectories of `dir` that did not fit on their own.
fn lumped_path(dir: &str) -> String {
    if dir == "." {
        "*".to_string()
    } else {
        format!("{dir}/*")
    }
}

/// Whether directory `dir` is `ancestor` or lies below it.
fn is_under(dir: &str, ancestor: &str) -> bool {
    ancestor == "."
        || dir == ancestor
        || dir
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The entry of `entries` that holds `file`: its own directory's files, else the deepest
/// recursive entry above it, else a lumped `dir/*` entry.
fn entry_of(entries: &[DirectoryCount], file: &str) -> Option<usize> {
    let dir = dir_of(file);
    let lumped = |e: &DirectoryCount| e.path == "*" || e.path.ends_with("/*");
    entries
        .iter()
        .position(|e| !e.recursive && e.path == dir)
        .or_else(|| {
            entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.recursive && !lumped(e) && is_under(dir, &e.path))
                .max_by_key(|(_, e)| e.path.len())
                .map(|(i, _)| i)
        })
        .or_else(|| {
            entries.iter().position(|e| {
                let parent = e.path.strip_suffix("/*").unwrap_or(".");
                lumped(e) && dir != parent && is_under(dir, parent)
            })
        })
}

fn is_entry_point(node: &NodeInfo) -> bool {
    let Some(lang) = tg_lang::for_path(&node.file) else {
        return false;
    };
    let name = node.id.rsplit("::").next().unwrap_or(&node.id);
    match node.kind {
        NodeKind::Module => lang.is_entry_file(&node.file),
        NodeKind::Function => lang.is_entry_function(name),
        _ => false,
    }
}

fn kind_summary(counts: &BTreeMap<NodeKind, u64>) -> String {
    let mut sorted: Vec<(&NodeKind, &u64)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted
        .iter()
        .map(|(kind, n)| format!("{n} {}", kind.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn location(entry: &DirectoryCount) -> String {
    match (entry.path.as_str(), entry.recursive) {
        (".", true) => "(whole repository)".to_string(),
        (".", false) => "(files at the root)".to_string(),
        (path, true) => format!("{path}/"),
        (path, false) => format!("{path}/* (files directly in it)"),
    }
}

/// `.tldrgraph/symbols.md`: a compact overview to design layers from.
pub fn symbols_markdown(
    tally: &Tally,
    entries: &[DirectoryCount],
    config: Option<&LayerConfig>,
) -> String {
    let mut kinds: BTreeMap<NodeKind, u64> = BTreeMap::new();
    let mut roles: BTreeMap<Role, u64> = BTreeMap::new();
    let mut per_entry: Vec<Vec<&NodeInfo>> = vec![Vec::new(); entries.len()];
    let mut entry_kinds: Vec<BTreeMap<NodeKind, u64>> = vec![BTreeMap::new(); entries.len()];
    for node in tally.nodes.iter().filter(|n| n.kind != NodeKind::Module) {
        *kinds.entry(node.kind).or_default() += 1;
        *roles.entry(node.role).or_default() += 1;
        if let Some(i) = entry_of(entries, &node.file) {
            per_entry[i].push(node);
            *entry_kinds[i].entry(node.kind).or_default() += 1;
        }
    }
    let mut md = String::new();
    heading(&mut md, tally, (&kinds, &roles), config);
    directories(&mut md, entries, &entry_kinds);
    entry_points(&mut md, tally);
    connected_symbols(&mut md, entries, &mut per_entry, config);
    md
}

/// The title, what the file is, the totals, and the configured layers.
fn heading(
    md: &mut String,
    tally: &Tally,
    (kinds, roles): (&BTreeMap<NodeKind, u64>, &BTreeMap<Role, u64>),
    config: Option<&LayerConfig>,
) {
    let symbols: u64 = kinds.values().sum();
    let _ = writeln!(md, "# Symbols of this repository\n");
    let _ = writeln!(
        md,
        "Written by tg-classify to help design `.tldrgraph/layers.config.yaml` (the schema is in \
         `.tldrgraph/AGENT_CONTRACT.md`). Regenerated on every run; do not edit.\n"
    );
    let _ = writeln!(
        md,
        "{} files, {symbols} symbols ({}); by role: {}.\n",
        tally.files.len(),
        kind_summary(kinds),
        roles
            .iter()
            .map(|(role, n)| format!("{} {n}", role.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(config) = config {
        let counts = tally.layer_counts(config.layers.len());
        let _ = writeln!(md, "Current layers (from the config):\n");
        for (layer, count) in config.layers.iter().zip(counts) {
            let _ = writeln!(md, "- `{}` {}: {count} nodes", layer.id, layer.name);
        }
        md.push('\n');
    }
}

/// The directory table.
fn directories(
    md: &mut String,
    entries: &[DirectoryCount],
    entry_kinds: &[BTreeMap<NodeKind, u64>],
) {
    let _ = writeln!(md, "## Directories\n");
    let _ = writeln!(
        md,
        "| directory | files | symbols | of them product | kinds |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|");
    for (entry, kinds) in entries.iter().zip(entry_kinds) {
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} |",
            cell(&location(entry)),
            entry.files,
            entry.symbols,
            entry.product,
            kind_summary(kinds)
        );
    }
}

/// The entry points, product code's before those of examples and tests.
fn entry_points(md: &mut String, tally: &Tally) {
    let mut entry_points: Vec<&NodeInfo> =
        tally.nodes.iter().filter(|n| is_entry_point(n)).collect();
    entry_points.sort_by(|a, b| (a.role, &a.id).cmp(&(b.role, &b.id)));
    if entry_points.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n## Entry points\n");
    for node in entry_points.iter().take(MAX_ENTRY_POINTS) {
        let _ = writeln!(
            md,
            "- `{}` ({}, {}, line {})",
            node.id,
            node.role.as_str(),
            node.kind.as_str(),
            node.line_start
        );
    }
    if entry_points.len() > MAX_ENTRY_POINTS {
        let _ = writeln!(md, "- … and {} more", entry_points.len() - MAX_ENTRY_POINTS);
    }
}

/// Per directory, its most connected symbols (calls, imports, includes, inheritance in and
/// out), with their layer when there is a config.
fn connected_symbols(
    md: &mut String,
    entries: &[DirectoryCount],
    per_entry: &mut [Vec<&NodeInfo>],
    config: Option<&LayerConfig>,
) {
    let _ = writeln!(
        md,
        "\n## Most connected symbols per directory\n\n`in`/`out` count calls, imports, \
         includes and inheritance (not containment).\n"
    );
    for (entry, nodes) in entries.iter().zip(per_entry.iter_mut()) {
        if nodes.is_empty() {
            continue;
        }
        nodes.sort_by(|a, b| {
            (b.fan_in + b.fan_out)
                .cmp(&(a.fan_in + a.fan_out))
                .then(a.id.cmp(&b.id))
        });
        let _ = writeln!(
            md,
            "### `{}`: {} files, {} symbols\n",
            cell(&location(entry)),
            entry.files,
            entry.symbols
        );
        let with_layer = config.is_some();
        let _ = writeln!(
            md,
            "| symbol | kind | in | out |{} first doc line |",
            if with_layer { " layer |" } else { "" }
        );
        let _ = writeln!(
            md,
            "|---|---|---|---|{}---|",
            if with_layer { "---|" } else { "" }
        );
        for node in nodes.iter().take(SYMBOLS_PER_DIRECTORY) {
            let layer = match config {
                Some(config) => format!(" {} |", config.layers[node.layer].id),
                None => String::new(),
            };
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} |{layer} {} |",
                cell(&node.id),
                node.kind.as_str(),
                node.fan_in,
                node.fan_out,
                cell(node.doc.as_deref().unwrap_or(""))
            );
        }
        md.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(files: &[(&str, usize)]) -> Tally {
        let roles: Vec<(&str, usize, Role)> =
            files.iter().map(|(f, n)| (*f, *n, Role::Product)).collect();
        tally_with_roles(&roles)
    }

    fn tally_with_roles(files: &[(&str, usize, Role)]) -> Tally {
        let mut tally = Tally::new(1);
        for (file, symbols, role) in files {
            tally.files.insert((*file).to_string(), 10);
            for i in 0..*symbols {
                tally.nodes.push(NodeInfo {
                    id: format!("{file}::f{i}"),
                    kind: NodeKind::Function,
                    file: (*file).to_string(),
                    line_start: 1,
                    doc: None,
                    layer: 0,
                    role: *role,
                    fan_in: 0,
                    fan_out: 0,
                });
            }
        }
        tally
    }

    #[test]
    fn the_product_package_is_split_even_when_tests_and_examples_outnumber_it() {
        // Shaped like typer's tree: docs examples and tests twenty to one against the package.
        let mut files = vec![
            ("pkg/core/a.py", 20, Role::Product),
            ("pkg/cli/b.py", 15, Role::Product),
            ("pkg/main.py", 10, Role::Product),
        ];
        let examples: Vec<String> = (0..14).map(|i| format!("docs_src/t{i:02}/x.py")).collect();
        let tests: Vec<String> = (0..14)
            .map(|i| format!("tests/t{i:02}/test_x.py"))
            .collect();
        for path in &examples {
            files.push((path.as_str(), 40, Role::Example));
        }
        for path in &tests {
            files.push((path.as_str(), 30, Role::Test));
        }
        let entries = top_directories(&tally_with_roles(&files));
        let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
        for product in ["pkg/core", "pkg/cli", "pkg"] {
            assert!(paths.contains(&product), "{product} in {paths:?}");
        }
        // Still most symbols first, and the product share told.
        assert_eq!(paths[0], "docs_src");
        let core = entries.iter().find(|e| e.path == "pkg/core").expect("core");
        assert_eq!((core.symbols, core.product), (20, 20));
    }

    #[test]
    fn a_single_top_directory_is_split_until_it_divides_the_repository() {
        let tally = tally(&[
            ("src/pkg/api/a.py", 10),
            ("src/pkg/api/b.py", 10),
            ("src/pkg/core/c.py", 30),
            ("src/pkg/util.py", 5),
            ("setup.py", 1),
        ]);
        let dirs: Vec<(String, u64, bool)> = top_directories(&tally)
            .into_iter()
            .map(|d| (d.path, d.symbols, d.recursive))
            .collect();
        assert_eq!(
            dirs,
            vec![
                ("src/pkg/core".to_string(), 30, true),
                ("src/pkg/api".to_string(), 20, true),
                ("src/pkg".to_string(), 5, false),
                (".".to_string(), 1, false),
            ]
        );
    }

    #[test]
    fn a_very_wide_directory_keeps_its_largest_children_and_lumps_the_rest() {
        let files: Vec<(String, usize)> = (0..30)
            .map(|i| (format!("packages/p{i:02}/lib.py"), 30 - i))
            .collect();
        let refs: Vec<(&str, usize)> = files.iter().map(|(f, n)| (f.as_str(), *n)).collect();
        let tally = tally(&refs);
        let entries = top_directories(&tally);
        assert_eq!(entries.len(), MAX_DIRECTORIES);
        assert_eq!(
            entries[0].path, "packages/*",
            "most symbols first, lumped or not"
        );
        assert_eq!(entries[1].path, "packages/p00");
        assert_eq!(entries[1].symbols, 30);
        let rest = entries
            .iter()
            .find(|e| e.path == "packages/*")
            .expect("lumped");
        // p15..p29 hold 15 + 14 + ... + 1 symbols.
        assert_eq!(rest.symbols, (1..=15).sum::<u64>());
        assert_eq!(rest.files, 15);
        let last = "packages/p29/lib.py";
        assert_eq!(
            entry_of(&entries, last).map(|i| entries[i].path.as_str()),
            Some("packages/*")
        );
        let first = "packages/p00/lib.py";
        assert_eq!(
            entry_of(&entries, first).map(|i| entries[i].path.as_str()),
            Some("packages/p00")
        );
    }

    #[test]
    fn entries_are_disjoint_and_each_file_has_one() {
        let tally = tally(&[("a/x.py", 3), ("a/b/y.py", 2), ("z.py", 1)]);
        let entries = top_directories(&tally);
        for file in ["a/x.py", "a/b/y.py", "z.py"] {
            assert!(entry_of(&entries, file).is_some(), "{file} in {entries:?}");
        }
        let total: u64 = entries.iter().map(|e| e.symbols).sum();
        assert_eq!(total, 6);
    }
}
