//! What changed between two snapshots, symbol by symbol, and what that reaches: the callers
//! (transitively, with the confidence of each path), the tests, the signatures of API.

use super::snapshot::{Snapshot, Sym};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use tg_shared::record::{NodeKind, Role};

/// How far the tests are followed up from a change, beyond `--depth`: a test reaches the code it
/// checks through more calls than a reviewer reads.
const TEST_DEPTH: u32 = 8;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub depth: u32,
    pub min_confidence: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Impact {
    /// What the change is measured against (`HEAD~1 (1a2b3c4)`, `the index`, ...).
    pub base: String,
    pub summary: Summary,
    /// Symbols whose own source changed, were added, removed, or moved to another file.
    pub changed: Vec<Changed>,
    /// Who calls them, transitively up to the depth, nearest first.
    pub callers: Vec<Caller>,
    /// Test functions that reach a changed symbol (or changed themselves), with the name a
    /// test runner takes.
    pub tests: Vec<Test>,
    /// Public symbols whose signature changed.
    pub signatures: Vec<Signature>,
    /// Per layer: changed symbols and callers.
    pub layers: BTreeMap<String, LayerCount>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub changed: usize,
    pub added: usize,
    pub removed: usize,
    pub moved: usize,
    pub files: usize,
    pub callers: usize,
    pub tests: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LayerCount {
    pub changed: usize,
    pub callers: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Changed {
    pub id: String,
    /// `changed`, `added`, `removed` or `moved`.
    pub change: String,
    pub kind: String,
    pub layer: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Where a moved symbol was.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub from: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Caller {
    pub id: String,
    pub kind: String,
    pub layer: String,
    pub role: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    pub depth: u32,
    /// The product of the call edges' confidences along the surest path.
    pub confidence: f64,
    /// The changed symbol it reaches.
    pub reaches: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub via: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Test {
    pub id: String,
    /// What to give the test runner (a pytest node id, a `cargo test` filter); none when the
    /// language has no convention for it.
    pub runner: Option<String>,
    /// The changed symbol it reaches (itself, for a changed test).
    pub reaches: String,
    pub depth: u32,
    pub confidence: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Signature {
    pub id: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The symbol-level difference from `before` to `after` (in the files of `only`, when given),
/// and its reach in `after` (in `before`, for what was removed).
pub fn impact(
    base: String,
    before: &Snapshot,
    after: &Snapshot,
    only: Option<&BTreeSet<String>>,
    options: Options,
) -> Impact {
    let mut changed = changed_symbols(before, after);
    if let Some(files) = only {
        // A name ending in `/` is a directory: every file under it.
        let named = |file: &str| {
            files.contains(file)
                || files
                    .iter()
                    .any(|f| f.ends_with('/') && file.starts_with(f.as_str()))
        };
        changed.retain(|c| {
            named(&c.file)
                || c.from
                    .as_deref()
                    .is_some_and(|f| named(f.split("::").next().unwrap_or(f)))
        });
    }
    changed.sort_by(|a, b| (&a.file, a.line_start, &a.id).cmp(&(&b.file, b.line_start, &b.id)));
    let files: BTreeSet<&str> = changed.iter().map(|c| c.file.as_str()).collect();
    let reach = Reach::new(before, after, &changed);
    let callers = reach.callers(options);
    let tests = reach.tests(options);
    let signatures = signatures(before, after);
    let mut layers: BTreeMap<String, LayerCount> = BTreeMap::new();
    for c in &changed {
        layers.entry(c.layer.clone()).or_default().changed += 1;
    }
    for c in &callers {
        layers.entry(c.layer.clone()).or_default().callers += 1;
    }
    let count = |what: &str| changed.iter().filter(|c| c.change == what).count();
    let summary = Summary {
        changed: count("changed"),
        added: count("added"),
        removed: count("removed"),
        moved: count("moved"),
        files: files.len(),
        callers: callers.len(),
        tests: tests.len(),
    };
    Impact {
        base,
        summary,
        changed,
        callers,
        tests,
        signatures,
        layers,
    }
}

/// `path::Qualified.name` → `Qualified.name` (a module's id is its path: empty).
fn qualname(id: &str) -> &str {
    id.split_once("::").map_or("", |(_, q)| q)
}

fn changed_entry(node: Sym<'_>, change: &str, from: Option<String>) -> Changed {
    Changed {
        id: node.id().to_string(),
        change: change.into(),
        kind: node.kind().as_str().into(),
        layer: node.layer().unwrap_or("-").to_string(),
        file: node.file().to_string(),
        line_start: node.line_start(),
        line_end: node.line_end(),
        from,
    }
}

/// Changed, added, removed and moved symbols, each reported where the change is: a class or a
/// module whose text changed only because something inside it did is not listed.
fn changed_symbols(before: &Snapshot, after: &Snapshot) -> Vec<Changed> {
    let mut added: Vec<Sym> = Vec::new();
    let mut edited: Vec<Sym> = Vec::new();
    for node in after.symbols() {
        match before.get(node.id()) {
            None => added.push(node),
            Some(old) if old.hash() != node.hash() => edited.push(node),
            Some(_) => {}
        }
    }
    let mut removed: Vec<Sym> = before
        .symbols()
        .filter(|node| !after.contains(node.id()))
        .collect();
    // In id order: which of two alike symbols pairs as a move depends on it.
    for list in [&mut added, &mut edited, &mut removed] {
        list.sort_unstable_by_key(|node| node.id());
    }
    // A symbol that left one file for another with the same name and text moved.
    fn key<'s>(n: &Sym<'s>) -> (NodeKind, &'s str, u64) {
        (n.kind(), qualname(n.id()), n.hash())
    }
    let mut gone: HashMap<_, Vec<Sym>> = HashMap::new();
    for node in &removed {
        gone.entry(key(node)).or_default().push(*node);
    }
    let mut moved: Vec<(Sym, Sym)> = Vec::new();
    added.retain(|node| match gone.get_mut(&key(node)).and_then(Vec::pop) {
        Some(old) => {
            moved.push((old, *node));
            false
        }
        None => true,
    });
    let moved_from: BTreeSet<&str> = moved.iter().map(|(old, _)| old.id()).collect();
    removed.retain(|n| !moved_from.contains(n.id()));
    // Every ancestor of a change changed in text only because of it.
    let mut enclosing: BTreeSet<String> = BTreeSet::new();
    for node in added.iter().chain(&edited) {
        mark_ancestors(*node, after, &mut enclosing);
    }
    for node in &removed {
        mark_ancestors(*node, before, &mut enclosing);
    }
    for (old, new) in &moved {
        mark_ancestors(*old, before, &mut enclosing);
        mark_ancestors(*new, after, &mut enclosing);
    }
    let mut out: Vec<Changed> = Vec::new();
    // An enclosing symbol is listed when its own text (without what is defined inside it)
    // changed too: a class attribute beside an edited method.
    let own_change = |node: Sym| match (before.get(node.id()), after.own_text(node)) {
        (Some(old), Some(new)) => before.own_text(old).is_some_and(|old| old != new),
        _ => false,
    };
    out.extend(
        edited
            .iter()
            .filter(|n| !enclosing.contains(n.id()) || own_change(**n))
            .map(|n| changed_entry(*n, "changed", None)),
    );
    out.extend(added.iter().map(|n| changed_entry(*n, "added", None)));
    out.extend(removed.iter().map(|n| changed_entry(*n, "removed", None)));
    out.extend(
        moved
            .iter()
            .filter(|(_, new)| new.kind() != NodeKind::Module || !enclosing.contains(new.id()))
            .map(|(old, new)| changed_entry(*new, "moved", Some(old.id().to_string()))),
    );
    out
}

/// Marks every ancestor of `node` (its class, its module): their text changed only because
/// `node`'s did.
fn mark_ancestors(node: Sym, snapshot: &Snapshot, enclosing: &mut BTreeSet<String>) {
    let mut parent = node.parent();
    while let Some(p) = parent {
        if !enclosing.insert(p.to_string()) {
            break;
        }
        parent = snapshot.get(p).and_then(|n| n.parent());
    }
}

/// Walks callers up from the changed symbols.
struct Reach<'s> {
    before: &'s Snapshot,
    after: &'s Snapshot,
    /// The changed symbols, each with the snapshot its callers are read in.
    starts: Vec<(String, bool)>,
    changed: BTreeSet<String>,
}

/// One symbol reached: depth, confidence, the changed symbol, the symbol it was reached from.
type Found = (u32, f64, String, Option<String>);

impl<'s> Reach<'s> {
    fn new(before: &'s Snapshot, after: &'s Snapshot, changed: &[Changed]) -> Reach<'s> {
        Reach {
            before,
            after,
            starts: changed
                .iter()
                .map(|c| (c.id.clone(), c.change == "removed"))
                .collect(),
            changed: changed.iter().map(|c| c.id.clone()).collect(),
        }
    }

    /// Breadth first from every changed symbol at once, keeping for each symbol reached its
    /// shallowest depth and, at that depth, its surest path.
    fn walk(&self, depth: u32, min_confidence: f64) -> BTreeMap<String, Found> {
        let mut found: BTreeMap<String, Found> = BTreeMap::new();
        let mut queue: VecDeque<(String, u32, f64, String, bool)> = self
            .starts
            .iter()
            .map(|(id, removed)| (id.clone(), 0, 1.0, id.clone(), *removed))
            .collect();
        while let Some((at, d, confidence, origin, removed)) = queue.pop_front() {
            if d >= depth {
                continue;
            }
            let snapshot = if removed { self.before } else { self.after };
            for (caller, edge_confidence) in snapshot.callers(&at) {
                let through = confidence * edge_confidence;
                if through < min_confidence || self.changed.contains(caller) {
                    continue;
                }
                let via = (d > 0).then(|| at.clone());
                match found.get_mut(caller) {
                    Some(known) if known.0 == d + 1 && through > known.1 => {
                        *known = (d + 1, through, origin.clone(), via);
                    }
                    Some(_) => {}
                    None => {
                        found.insert(caller.to_string(), (d + 1, through, origin.clone(), via));
                        // A caller that was removed too is read on in the old graph.
                        let gone = removed && !self.after.contains(caller);
                        queue.push_back((caller.to_string(), d + 1, through, origin.clone(), gone));
                    }
                }
            }
        }
        found
    }

    fn node(&self, id: &str) -> Option<Sym<'s>> {
        self.after.get(id).or_else(|| self.before.get(id))
    }

    fn callers(&self, options: Options) -> Vec<Caller> {
        let mut callers: Vec<Caller> = self
            .walk(options.depth, options.min_confidence)
            .into_iter()
            .filter_map(|(id, (depth, confidence, reaches, via))| {
                let node = self.node(&id)?;
                Some(Caller {
                    kind: node.kind().as_str().into(),
                    layer: node.layer().unwrap_or("-").to_string(),
                    role: node.role().as_str().into(),
                    file: node.file().to_string(),
                    line_start: node.line_start(),
                    line_end: node.line_end(),
                    id,
                    depth,
                    confidence,
                    reaches,
                    via,
                })
            })
            .collect();
        callers.sort_by(|a, b| (a.depth, &a.layer, &a.id).cmp(&(b.depth, &b.layer, &b.id)));
        callers
    }

    fn tests(&self, options: Options) -> Vec<Test> {
        // `#k` marks a repeated definition in our ids; the runner knows the name alone (and
        // runs the definition that wins).
        let runner = |node: &Sym| {
            let name = qualname(node.id()).split('#').next().unwrap_or("");
            tg_lang::for_path(node.file()).and_then(|lang| lang.test_runner_id(node.file(), name))
        };
        // A test is what its language's runner would run (a helper of the tests is not):
        // where the language marks its tests (Rust `#[test]`), only a marked function.
        let is_test = |node: &Sym| {
            node.role() == Role::Test
                && matches!(node.kind(), NodeKind::Function | NodeKind::Method)
                && runner(node).is_some()
                && (node.test_case()
                    || tg_lang::for_path(node.file()).is_some_and(|lang| !lang.marks_test_cases()))
        };
        let runner = |node: &Sym| {
            tg_lang::for_path(node.file())
                .and_then(|lang| lang.test_runner_id(node.file(), qualname(node.id())))
        };
        let mut tests: Vec<Test> = Vec::new();
        // A test that changed runs too.
        for (id, _) in &self.starts {
            if let Some(node) = self.after.get(id).filter(is_test) {
                tests.push(Test {
                    id: id.clone(),
                    runner: runner(&node),
                    reaches: id.clone(),
                    depth: 0,
                    confidence: 1.0,
                });
            }
        }
        for (id, (depth, confidence, reaches, _)) in
            self.walk(options.depth.max(TEST_DEPTH), options.min_confidence)
        {
            let Some(node) = self.after.get(&id).filter(is_test) else {
                continue;
            };
            tests.push(Test {
                runner: runner(&node),
                id,
                reaches,
                depth,
                confidence,
            });
        }
        tests.sort_by(|a, b| a.id.cmp(&b.id));
        tests
    }
}

/// Product symbols present before and after whose signature changed, and that other code may
/// use (not private by the language's rule).
fn signatures(before: &Snapshot, after: &Snapshot) -> Vec<Signature> {
    let mut found: Vec<Signature> = after
        .symbols()
        .filter_map(|node| {
            let old = before.get(node.id())?;
            if old.signature() == node.signature()
                || same_signature(old.signature(), node.signature())
                || node.role() != Role::Product
                || node.kind() == NodeKind::Module
            {
                return None;
            }
            let definition = node.signature().unwrap_or("");
            let private = tg_lang::for_path(node.file())
                .is_some_and(|lang| lang.is_private(node.name(), definition));
            (!private).then(|| Signature {
                id: node.id().to_string(),
                before: old.signature().map(str::to_string),
                after: node.signature().map(str::to_string),
            })
        })
        .collect();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

/// Whether two signatures say the same, whatever their layout: spaces, line breaks and a
/// trailing comma before the closing parenthesis aside.
fn same_signature(a: Option<&str>, b: Option<&str>) -> bool {
    let plain = |s: Option<&str>| {
        s.map(|s| {
            s.chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                .replace(",)", ")")
        })
    };
    plain(a) == plain(b)
}
