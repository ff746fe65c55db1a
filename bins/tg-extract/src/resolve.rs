//! Cross-file resolution: turns every file's [`FileFacts`] into ids and edges.
//!
//! Language-neutral: it follows scopes, imports, module keys, class bases and the type facts
//! (annotations, constructor assignments, field types) as the facts describe them, and asks the
//! [`Language`] only about module keys and builtins. Resolution kinds, most certain first:
//! `local` (a definition visible in scope), `self` (a member of the enclosing class or impl, or
//! of its bases), `import` (through an import binding), `typed` (a method of a receiver whose
//! type the source states), `closure` (a function returning a function it defines), `unique`
//! (the only repository symbol of that name), `ambiguous` (one of a few, or one of several
//! definitions under `if`/`try`; an edge to each). A method called on a receiver of unknown
//! type gets no edge, however unique its name.

use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tg_lang::{
    Binding, Declares, FileFacts, Import, Language, ModuleRef, RefKind, ScopeRule, Target,
    TypeFact, TypeSlot, Value,
};
use tg_shared::record::{EdgeKind, NodeKind, Resolution, Role};

/// Bumped whenever the output made from the same facts changes (resolution's edges, or the
/// stream's header, which names the stream since revision 10): the no-op output cache (keyed
/// by it) must not replay what an older build wrote.
pub const RESOLVER_REVISION: u32 = 10;

/// At most this many candidates get an `ambiguous` edge each; more means we know nothing.
const MAX_AMBIGUOUS: usize = 3;
/// How far re-exports (`from .api import get` in `__init__.py`) and base classes are followed.
const MAX_HOPS: usize = 8;
/// How deep a receiver's type is worked out (`a.b.c().d.m()`), and so how far typing recurses.
const MAX_TYPE_DEPTH: usize = 8;

/// A symbol: (file index, symbol index in that file's facts).
pub type Sym = (u32, u32);

/// A file with its facts, as resolution needs it.
pub struct Unit<'a> {
    pub path: &'a str,
    pub lang: &'static dyn Language,
    pub facts: &'a FileFacts,
}

/// One resolved relation before aggregation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawEdge {
    pub kind: EdgeKind,
    pub src: Sym,
    pub dst: Sym,
    pub line: u32,
    pub resolution: Option<Resolution>,
}

/// Resolution counters for the summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResolveStats {
    pub calls_unresolved: u64,
    pub imports_external: u64,
}

impl ResolveStats {
    pub fn add(&mut self, other: ResolveStats) {
        self.calls_unresolved += other.calls_unresolved;
        self.imports_external += other.imports_external;
    }
}

#[derive(Debug, Clone)]
enum Lookup {
    Symbols(Vec<Sym>, Resolution),
    /// A module key prefix (Python `import a.b` binds `a`, which may not be a file itself).
    ModuleKey {
        lang: &'static str,
        key: String,
    },
    /// Bound to something outside the repository: never fall back to a same-named symbol.
    External,
    /// Bound by a parameter or assignment: a value we cannot see through by name alone.
    Opaque,
    /// A module-level variable of another file (`from .web import app`): typed through it.
    Variable {
        file: u32,
        name: String,
    },
    NotFound,
}

pub struct Resolver<'a> {
    units: &'a [Unit<'a>],
    by_path: HashMap<&'a str, u32>,
    /// lang → module key → files registering it.
    by_key: HashMap<&'static str, HashMap<String, Vec<u32>>>,
    /// (file, scope, name) → definitions in that scope.
    children: HashMap<(u32, u32, &'a str), Vec<u32>>,
    /// (file, scope, name) → import indices binding that name there.
    bindings: HashMap<(u32, u32, &'a str), Vec<u32>>,
    /// (file, scope) → star imports.
    stars: HashMap<(u32, u32), Vec<u32>>,
    locals: HashSet<(u32, u32, &'a str)>,
    /// (lang, name) → top-level callables (the bare-name fallback).
    top_level: HashMap<(&'static str, &'a str), Vec<Sym>>,
    /// (lang, owner type, name) → methods defined outside their type (Rust impls, traits).
    owned: HashMap<(&'static str, &'a str, &'a str), Vec<Sym>>,
    /// (lang, type name) → class-like symbols, for `Type::method` when `Type` was not resolved.
    types: HashMap<(&'static str, &'a str), Vec<Sym>>,
    /// (file, class) → indices of its `Inherit` references.
    base_refs: HashMap<Sym, Vec<u32>>,
    /// Each file's most specific module key (where its submodules hang).
    primary_key: Vec<Option<String>>,
    /// Each file's package (`Language::package`): name fallbacks stay inside it.
    package: Vec<Option<String>>,
    /// (lang, name) of other packages, by the names code uses for them (`tg_shared`).
    aliases: HashSet<(&'static str, String)>,
    /// (file, scope, name) → type facts of that variable.
    var_types: HashMap<(u32, u32, &'a str), Vec<u32>>,
    /// (file, class, name) → type facts of that attribute.
    attr_types: HashMap<(u32, u32, &'a str), Vec<u32>>,
    /// (lang, name) → test fixtures of that name.
    fixtures: HashMap<(&'static str, &'a str), Vec<Sym>>,
    /// The names of getters (`@property`): a member read of any other name is not looked up.
    getter_names: HashSet<&'a str>,
    /// Each file's included modules (C `#include`), in the order of its includes: a name not
    /// found in the file is looked up in them, so each is resolved once, not once per call.
    included: Vec<Vec<u32>>,
    /// Per file: another file declares it a test module (Rust `#[cfg(test)] mod x;`).
    test_modules: Vec<bool>,
    /// Per file: its role (the module's), which decides what a name fallback may reach.
    file_roles: Vec<Role>,
}

/// Another package of the repository as code names it: `(language, name, its root module key)`,
/// e.g. `("rust", "tg_shared", "shared/crate")`.
pub type PackageAlias = (&'static str, String, String);

fn is_type_like(kind: NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Class | NodeKind::Struct | NodeKind::Enum | NodeKind::Union | NodeKind::Trait
    )
}

impl<'a> Resolver<'a> {
    pub fn new(units: &'a [Unit<'a>]) -> Self {
        Self::with_aliases(units, &[])
    }

    /// A resolver that also follows paths through other packages of the repository.
    pub fn with_aliases(units: &'a [Unit<'a>], aliases: &[PackageAlias]) -> Self {
        let mut r = Resolver {
            units,
            by_path: HashMap::default(),
            by_key: HashMap::default(),
            children: HashMap::default(),
            bindings: HashMap::default(),
            stars: HashMap::default(),
            locals: HashSet::default(),
            top_level: HashMap::default(),
            owned: HashMap::default(),
            types: HashMap::default(),
            base_refs: HashMap::default(),
            primary_key: Vec::with_capacity(units.len()),
            package: units.iter().map(|u| u.lang.package(u.path)).collect(),
            aliases: HashSet::default(),
            var_types: HashMap::default(),
            attr_types: HashMap::default(),
            fixtures: HashMap::default(),
            getter_names: HashSet::default(),
            included: Vec::new(),
            test_modules: Vec::new(),
            file_roles: Vec::new(),
        };
        let package_dirs: HashSet<&str> = units
            .iter()
            .filter(|u| u.lang.marks_package_dir(u.path))
            .map(|u| u.path.rsplit_once('/').map_or("", |(dir, _)| dir))
            .collect();
        let is_package_dir = |dir: &str| package_dirs.contains(dir);
        for (f, unit) in units.iter().enumerate() {
            let f = f as u32;
            r.by_path.insert(unit.path, f);
            let keys = r.by_key.entry(unit.lang.module_space()).or_default();
            let module_keys = unit.lang.module_keys(unit.path, &is_package_dir);
            r.primary_key.push(module_keys.first().cloned());
            for key in module_keys {
                keys.entry(key).or_default().push(f);
            }
            r.index_symbols(f, unit);
            r.index_scopes(f, unit);
        }
        r.add_aliases(aliases);
        r.included = (0..units.len() as u32)
            .into_par_iter()
            .map(|f| r.resolve_includes(f))
            .collect();
        r.test_modules = r.find_test_modules();
        r.file_roles = units
            .iter()
            .zip(&r.test_modules)
            .map(|(u, &test)| u.facts.role(u.lang, u.path, 0, test))
            .collect();
        r
    }

    /// Whether each file is compiled for tests only because a module declares it so (Rust
    /// `#[cfg(test)] mod x;`), or because a test module declares it as its submodule.
    fn find_test_modules(&self) -> Vec<bool> {
        let mut test = vec![false; self.units.len()];
        let mut pending = Vec::new();
        let declare = |g: u32, test: &mut Vec<bool>, pending: &mut Vec<u32>| {
            if !std::mem::replace(&mut test[g as usize], true) {
                pending.push(g);
            }
        };
        for f in 0..self.units.len() as u32 {
            for g in self.declared_modules(f, |d| d == Declares::TestSubmodule) {
                declare(g, &mut test, &mut pending);
            }
        }
        while let Some(f) = pending.pop() {
            for g in self.declared_modules(f, |d| d != Declares::Nothing) {
                declare(g, &mut test, &mut pending);
            }
        }
        test
    }

    /// The files that file `f` declares as its submodules, of the kinds `wanted` accepts.
    fn declared_modules(&self, f: u32, wanted: impl Fn(Declares) -> bool) -> Vec<u32> {
        let unit = &self.units[f as usize];
        unit.facts
            .imports
            .iter()
            .filter(|import| wanted(import.declares))
            .filter_map(|import| {
                import
                    .target
                    .iter()
                    .find_map(|t| self.module_ref(unit, f, t))
            })
            .collect()
    }

    /// The file an import depends on: the first module it names that exists, or where the
    /// language says so ([`Language::imports_reach_definitions`]) the file defining the name
    /// it imports from a module that re-exports it (`use crate::Reason` reaches `frame/reason.rs`
    /// through `pub use crate::frame::Reason` in `lib.rs`).
    fn import_target(&self, unit: &Unit, f: u32, import: &Import) -> Option<u32> {
        let (index, module) = import
            .target
            .iter()
            .enumerate()
            .find_map(|(i, t)| Some((i, self.module_ref(unit, f, t)?)))?;
        let Binding::Member { member, .. } = &import.binding else {
            return Some(module);
        };
        // The first target names the member itself as a module (`use crate::frame`).
        if index == 0 || !unit.lang.imports_reach_definitions() {
            return Some(module);
        }
        let defined = match self.member_of_module(module, member, 0) {
            Lookup::Symbols(syms, _) => syms
                .first()
                .map(|s| s.0)
                .filter(|&g| syms.iter().all(|s| s.0 == g)),
            Lookup::ModuleKey { lang, key } => self.module_by_key(lang, &key, f),
            _ => None,
        };
        Some(defined.unwrap_or(module))
    }

    /// Whether each file is a test module another declares (see [`Self::find_test_modules`]).
    pub fn test_modules(&self) -> &[bool] {
        &self.test_modules
    }

    /// Compiled for tests only: the symbol says so, or its file is a test module.
    fn is_test_only(&self, (f, i): Sym) -> bool {
        self.test_modules[f as usize] || self.symbol((f, i)).test_only
    }

    /// The modules file `f` includes, in order: for each include, its first target that
    /// resolves to a file of the repository.
    fn resolve_includes(&self, f: u32) -> Vec<u32> {
        let unit = &self.units[f as usize];
        unit.facts
            .imports
            .iter()
            .filter(|import| import.edge == Some(EdgeKind::Includes))
            .filter_map(|import| {
                import
                    .target
                    .iter()
                    .find_map(|t| self.module_ref(unit, f, t))
            })
            .collect()
    }

    /// Indexes the symbols of file `f`: children by name, top-level callables, methods by owner
    /// type, fixtures and types by name.
    fn index_symbols(&mut self, f: u32, unit: &'a Unit<'a>) {
        let lang = unit.lang.module_space();
        let symbols = &unit.facts.symbols;
        for (i, sym) in symbols.iter().enumerate() {
            let i = i as u32;
            let Some(parent) = sym.parent else { continue };
            self.children
                .entry((f, parent, sym.name.as_str()))
                .or_default()
                .push(i);
            let parent_kind = symbols.get(parent as usize).map(|p| p.kind);
            if sym.kind.is_callable()
                && sym.kind != NodeKind::Method
                && matches!(parent_kind, Some(NodeKind::Module | NodeKind::Mod))
            {
                self.top_level
                    .entry((lang, sym.name.as_str()))
                    .or_default()
                    .push((f, i));
            }
            if let Some(owner) = sym.owner_type.as_deref() {
                self.owned
                    .entry((lang, owner, sym.name.as_str()))
                    .or_default()
                    .push((f, i));
            }
            if sym.getter {
                self.getter_names.insert(sym.name.as_str());
            }
            if sym.fixture {
                self.fixtures
                    .entry((lang, sym.name.as_str()))
                    .or_default()
                    .push((f, i));
            }
            if is_type_like(sym.kind) {
                self.types
                    .entry((lang, sym.name.as_str()))
                    .or_default()
                    .push((f, i));
            }
        }
    }

    /// Indexes what the scopes of file `f` bind: base-class references, imported names and
    /// star imports, locals, and the types of variables and attributes.
    fn index_scopes(&mut self, f: u32, unit: &'a Unit<'a>) {
        for (i, reference) in unit.facts.refs.iter().enumerate() {
            if reference.kind == RefKind::Inherit {
                self.base_refs
                    .entry((f, reference.scope))
                    .or_default()
                    .push(i as u32);
            }
        }
        for (i, import) in unit.facts.imports.iter().enumerate() {
            let i = i as u32;
            match &import.binding {
                Binding::None => {}
                Binding::Module { name, .. } | Binding::Member { name, .. } => {
                    self.bindings
                        .entry((f, import.scope, name.as_str()))
                        .or_default()
                        .push(i);
                }
                Binding::Star { .. } => self.stars.entry((f, import.scope)).or_default().push(i),
            }
        }
        for (scope, name) in &unit.facts.locals {
            self.locals.insert((f, *scope, name.as_str()));
        }
        for (i, fact) in unit.facts.types.iter().enumerate() {
            let map = match fact.slot {
                TypeSlot::Variable => &mut self.var_types,
                TypeSlot::Attribute => &mut self.attr_types,
            };
            map.entry((f, fact.scope, fact.name.as_str()))
                .or_default()
                .push(i as u32);
        }
    }

    /// Registers `tg_shared::stage` beside `shared/crate::stage`, and so on for every module of
    /// each aliased package.
    fn add_aliases(&mut self, aliases: &[PackageAlias]) {
        for (lang, name, root) in aliases {
            let Some(keys) = self.by_key.get_mut(lang) else {
                continue;
            };
            let sep = self
                .units
                .iter()
                .find(|u| u.lang.module_space() == *lang)
                .map_or("::", |u| u.lang.key_separator());
            let prefix = format!("{root}{sep}");
            let mut added: Vec<(String, Vec<u32>)> = Vec::new();
            for (key, files) in keys.iter() {
                if key == root && !name.is_empty() {
                    added.push((name.clone(), files.clone()));
                } else if let Some(rest) = key.strip_prefix(&prefix) {
                    // The empty name is a base directory (a tsconfig's `baseUrl`).
                    let alias = match name.is_empty() {
                        true => rest.to_string(),
                        false => format!("{name}{sep}{rest}"),
                    };
                    added.push((alias, files.clone()));
                }
            }
            if added.is_empty() {
                continue;
            }
            for (key, files) in added {
                keys.entry(key).or_default().extend(files);
            }
            self.aliases.insert((*lang, name.clone()));
        }
    }

    /// Methods found by their owner type's name: those in file `f` win (an impl beside its
    /// type); otherwise those of `f`'s package (an inherent impl lives in its type's crate).
    fn prefer_file(&self, candidates: &[Sym], f: u32) -> Vec<Sym> {
        let local: Vec<Sym> = candidates.iter().copied().filter(|s| s.0 == f).collect();
        if !local.is_empty() {
            return local;
        }
        let own = &self.package[f as usize];
        candidates
            .iter()
            .copied()
            .filter(|s| &self.package[s.0 as usize] == own)
            .collect()
    }

    /// The candidates of a name fallback that share `f`'s package, as `unique` or `ambiguous`;
    /// of a few, those `f` cannot reach by a name alone ([`Self::reachable_by_name`]) are
    /// dropped. Too many stay too many: dropping them only removes wrong edges, it never makes
    /// a name that meant nothing resolve.
    fn pick(&self, f: u32, candidates: &[Sym]) -> (Vec<Sym>, Resolution) {
        let own = &self.package[f as usize];
        let mut found: Vec<Sym> = candidates
            .iter()
            .copied()
            .filter(|s| &self.package[s.0 as usize] == own)
            .collect();
        if found.len() <= MAX_AMBIGUOUS {
            found.retain(|s| self.reachable_by_name(f, s.0));
        }
        pick_fallback(found)
    }

    /// Product code never reaches examples or tooling by a name alone: they are programs built
    /// apart from it. On the Linux kernel, product calls of functions whose real definitions
    /// were not extracted (`dev_err`, and `kzalloc` before extractor revision 29) fell back to
    /// the copies under `tools/`, `scripts/` and `samples/`: 175,057 edges, each wrong. Tests,
    /// examples and tooling may call anything.
    fn reachable_by_name(&self, from: u32, to: u32) -> bool {
        self.file_roles[from as usize] != Role::Product
            || !matches!(self.file_roles[to as usize], Role::Example | Role::Tooling)
    }

    /// Every file's edges (each has its source in that file) with its resolution counters, in
    /// file order, each handed to `finish` as soon as it is resolved (files resolve in
    /// parallel): the caller shrinks a file's edges before the next are made, so the
    /// unaggregated edges of the whole repository are never held at once (the kernel's are a
    /// few hundred megabytes). A file `wanted` refuses is not resolved: it gets no edges.
    pub fn edges_by_file<T: Send>(
        &self,
        wanted: impl Fn(u32) -> bool + Sync,
        finish: impl Fn(Vec<RawEdge>) -> T + Sync,
    ) -> Vec<(T, ResolveStats)> {
        (0..self.units.len() as u32)
            .into_par_iter()
            .map(|f| {
                let mut stats = ResolveStats::default();
                let raw = match wanted(f) {
                    true => self.file_edges(f, &mut stats),
                    false => Vec::new(),
                };
                (finish(raw), stats)
            })
            .collect()
    }

    fn file_edges(&self, f: u32, stats: &mut ResolveStats) -> Vec<RawEdge> {
        let mut out = Vec::new();
        let unit = &self.units[f as usize];
        {
            for (i, sym) in unit.facts.symbols.iter().enumerate() {
                if let Some(parent) = sym.parent {
                    out.push(RawEdge {
                        kind: EdgeKind::Contains,
                        src: (f, parent),
                        dst: (f, i as u32),
                        line: sym.line_start,
                        resolution: None,
                    });
                }
            }
            for import in &unit.facts.imports {
                let Some(kind) = import.edge else { continue };
                match self.import_target(unit, f, import) {
                    Some(target) if target != f => out.push(RawEdge {
                        kind,
                        src: (f, 0),
                        dst: (target, 0),
                        line: import.line,
                        resolution: Some(Resolution::Import),
                    }),
                    Some(_) => {}
                    None => stats.imports_external += 1,
                }
            }
            for reference in &unit.facts.refs {
                let (targets, resolution) = match reference.kind {
                    RefKind::Call => self.resolve_call(f, reference.scope, &reference.target),
                    RefKind::Inherit => self.resolve_base(f, reference.scope, &reference.target),
                    RefKind::ReturnsClosure => self.returned_closure(f, reference),
                    RefKind::Read => self.resolve_read(f, reference.scope, &reference.target),
                };
                if targets.is_empty() && reference.kind == RefKind::Call {
                    stats.calls_unresolved += 1;
                }
                let kind = match reference.kind {
                    RefKind::Call | RefKind::ReturnsClosure | RefKind::Read => EdgeKind::Calls,
                    RefKind::Inherit => EdgeKind::Inherits,
                };
                for dst in self.with_constructors(targets, reference.kind) {
                    out.push(RawEdge {
                        kind,
                        src: (f, reference.scope),
                        dst,
                        line: reference.line,
                        resolution: Some(resolution),
                    });
                }
            }
        }
        out
    }

    /// A member read reaches what a call of it would, but only a getter's body runs: the read
    /// of anything else is no edge. A name no getter has is not looked up at all.
    fn resolve_read(&self, f: u32, scope: u32, target: &Target) -> (Vec<Sym>, Resolution) {
        let name = match target {
            Target::SelfMember(name) | Target::SuperMember(name) => name.as_str(),
            Target::Method { name, .. } => name,
            Target::Path(chain) => chain.last().map_or("", String::as_str),
            _ => "",
        };
        if !self.getter_names.contains(name) {
            return (Vec::new(), Resolution::Unique);
        }
        let (mut targets, resolution) = self.resolve_call(f, scope, target);
        targets.retain(|&t| self.symbol(t).getter);
        (targets, resolution)
    }

    /// A call of a class also calls the class's own constructor (`__init__`), when it defines
    /// one: the class stays the first target, the constructor follows it.
    fn with_constructors(&self, targets: Vec<Sym>, kind: RefKind) -> Vec<Sym> {
        if kind != RefKind::Call {
            return targets;
        }
        let mut out = Vec::with_capacity(targets.len());
        for target in targets {
            out.push(target);
            let sym = self.symbol(target);
            let constructor = self.lang_of(target.0).constructor();
            if let (true, Some(name)) = (sym.kind == NodeKind::Class, constructor) {
                if let Some(defs) = self.children.get(&(target.0, target.1, name)) {
                    let defs = defs.iter().map(|&d| (target.0, d)).collect();
                    // The implementation, never its `@overload` stubs.
                    out.extend(self.narrow_definitions(defs, Resolution::Local).0);
                }
            }
        }
        out
    }

    fn symbol(&self, (f, i): Sym) -> &'a tg_lang::Symbol {
        &self.units[f as usize].facts.symbols[i as usize]
    }

    fn lang_of(&self, f: u32) -> &'static dyn Language {
        self.units[f as usize].lang
    }

    /// The file a module reference names, preferring the candidate nearest the importer.
    fn module_ref(&self, unit: &Unit, importer: u32, target: &ModuleRef) -> Option<u32> {
        match target {
            ModuleRef::Path(path) => self.by_path.get(path.as_str()).copied().filter(|&f| {
                self.units[f as usize].lang.module_space() == unit.lang.module_space()
            }),
            ModuleRef::Key(key) => self.module_by_key(unit.lang.module_space(), key, importer),
        }
    }

    fn module_by_key(&self, lang: &'static str, key: &str, importer: u32) -> Option<u32> {
        let from = self.units[importer as usize].path;
        let language = self.units[importer as usize].lang;
        let nearest = language.prefers_nearest_module();
        self.by_key
            .get(lang)?
            .get(key)?
            .iter()
            .copied()
            .filter(|&c| language.key_visible_from(key, self.units[c as usize].path, from))
            .min_by_key(|&c| {
                let path = self.units[c as usize].path;
                let depth = path.matches('/').count();
                let distance = usize::MAX - common_dir_prefix(from, path);
                let (first, second) = if nearest {
                    (distance, depth)
                } else {
                    (depth, distance)
                };
                (first, second, path.len(), path)
            })
    }

    fn resolve_call(&self, f: u32, scope: u32, target: &Target) -> (Vec<Sym>, Resolution) {
        self.resolve_call_at(f, scope, target, 0)
    }

    /// A call's targets; `depth` counts the receivers being typed around it.
    fn resolve_call_at(
        &self,
        f: u32,
        scope: u32,
        target: &Target,
        depth: usize,
    ) -> (Vec<Sym>, Resolution) {
        let (found, resolution) = self.call_candidates(f, scope, target, depth);
        // Code outside tests never calls what is compiled for tests only.
        let from_test = self.is_test_only((f, scope));
        let found: Vec<Sym> = found
            .into_iter()
            .filter(|&s| self.symbol(s).kind.is_callable() && (from_test || !self.is_test_only(s)))
            .collect();
        self.narrow_definitions(found, resolution)
    }

    fn call_candidates(
        &self,
        f: u32,
        scope: u32,
        target: &Target,
        depth: usize,
    ) -> (Vec<Sym>, Resolution) {
        let lang = self.lang_of(f);
        let nothing = (Vec::new(), Resolution::Local);
        match target {
            Target::Name(name) => match self.lookup_name(f, scope, name) {
                Lookup::Symbols(syms, resolution) => (syms, resolution),
                Lookup::NotFound if !lang.is_builtin(name) => self.fallback_top_level(f, name),
                // `ib = attrib` then `ib()`: the alias's target.
                Lookup::Opaque => match self.variable_facts(f, scope, name) {
                    Some(facts) => self.alias_target(f, &facts, depth),
                    None => nothing,
                },
                Lookup::Variable { file, name } => self.module_alias(file, &name, depth),
                _ => nothing,
            },
            Target::Path(parts) => match self.lookup_path(f, scope, parts) {
                Lookup::Symbols(syms, resolution) => (syms, resolution),
                // `attr.ib()` with `ib = attrib` in the package.
                Lookup::Variable { file, name }
                    if !self.module_alias(file, &name, depth).0.is_empty() =>
                {
                    self.module_alias(file, &name, depth)
                }
                Lookup::NotFound | Lookup::Opaque | Lookup::Variable { .. } => {
                    // A variable's attribute (`client.post()`, `self.router.get()`): typed.
                    let typed = self.typed_path(f, scope, parts, depth);
                    if !typed.0.is_empty() {
                        return typed;
                    }
                    match self.lookup_name(f, scope, &parts[0]) {
                        Lookup::NotFound => self.fallback_path(f, parts),
                        _ => nothing,
                    }
                }
                _ => nothing,
            },
            Target::Qualified(path) => {
                let (module, rest) = &**path;
                match self.lookup_in_key(f, lang.module_space(), module, rest) {
                    Lookup::Symbols(syms, resolution) => (syms, resolution),
                    // `self::f()` of a name we cannot see: a re-export, maybe. A longer path
                    // (`self::Token::exact`) leads into what it names, or nowhere.
                    Lookup::NotFound if rest.len() == 1 => self.fallback_top_level(f, &rest[0]),
                    _ => nothing,
                }
            }
            Target::SelfMember(name) => self.resolve_self_member(f, scope, name),
            Target::SuperMember(name) => match self.enclosing_class(f, scope) {
                Some(class) => {
                    let mut seen = HashSet::default();
                    let found: Vec<Sym> = self
                        .bases_of(class)
                        .into_iter()
                        .flat_map(|base| self.class_member(base, name, &mut seen, 0))
                        .collect();
                    (found, Resolution::SelfMethod)
                }
                None => (Vec::new(), Resolution::SelfMethod),
            },
            Target::Method { receiver, name } => {
                let classes = self.value_types(f, scope, receiver, depth + 1);
                (self.members_of_classes(&classes, name), Resolution::Typed)
            }
            // A receiver of unknown type: a unique method name says nothing about it.
            Target::Member(_) => nothing,
        }
    }

    /// A module-level variable of `file` used as a callable: the alias's target.
    fn module_alias(&self, file: u32, name: &str, depth: usize) -> (Vec<Sym>, Resolution) {
        match self.var_types.get(&(file, 0, name)) {
            Some(facts) => (
                self.alias_target(file, &facts.clone(), depth).0,
                Resolution::Import,
            ),
            None => (Vec::new(), Resolution::Import),
        }
    }

    /// What a variable bound only by aliases (`ib = attr = attrib`, `get = client.get`) calls:
    /// the definitions its assignments name, when they all name the same ones.
    fn alias_target(&self, f: u32, facts: &[u32], depth: usize) -> (Vec<Sym>, Resolution) {
        let nothing = (Vec::new(), Resolution::Local);
        if depth > MAX_TYPE_DEPTH {
            return nothing;
        }
        let all = &self.units[f as usize].facts.types;
        let mut found: Option<(Vec<Sym>, Resolution)> = None;
        for &i in facts {
            let fact = &all[i as usize];
            // Only module and class names: a function's local may also hold its parameter's
            // value (`callback = callback or default`), which no fact records.
            let owner = self.symbol((f, fact.scope)).kind;
            if !matches!(owner, NodeKind::Module | NodeKind::Class) {
                return nothing;
            }
            let target = match (&fact.value, fact.declared) {
                (Value::Name(name), false) => Target::Name(name.clone()),
                (value @ Value::Attr(..), false) => match dotted_path(value) {
                    Some(parts) => Target::Path(parts),
                    None => return nothing,
                },
                _ => return nothing,
            };
            let (syms, resolution) = self.call_candidates(f, fact.eval_scope, &target, depth + 1);
            if syms.is_empty() || found.as_ref().is_some_and(|(s, _)| *s != syms) {
                return nothing;
            }
            found = Some((syms, resolution));
        }
        found.unwrap_or(nothing)
    }

    /// `a.b.m` where `a` is a variable: the type of `a.b`, then its member `m`.
    fn typed_path(
        &self,
        f: u32,
        scope: u32,
        parts: &[String],
        depth: usize,
    ) -> (Vec<Sym>, Resolution) {
        let Some((method, receiver)) = parts.split_last() else {
            return (Vec::new(), Resolution::Typed);
        };
        let Some((head, attrs)) = receiver.split_first() else {
            return (Vec::new(), Resolution::Typed);
        };
        let mut value = Value::Name(head.clone());
        for attr in attrs {
            value = Value::Attr(Box::new(value), attr.clone());
        }
        let classes = self.value_types(f, scope, &value, depth + 1);
        (self.members_of_classes(&classes, method), Resolution::Typed)
    }

    fn members_of_classes(&self, classes: &[Sym], name: &str) -> Vec<Sym> {
        let mut found: Vec<Sym> = classes
            .iter()
            .flat_map(|&c| self.class_member(c, name, &mut HashSet::default(), 0))
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Several definitions of one name in one scope: `@overload` stubs are never called; of
    /// plain Python redefinitions the last one runs; where one is conditional (`if`/`try`), or
    /// the language cannot redefine (C `#ifdef` and Rust `#[cfg]` variants), which one runs
    /// depends on the configuration, so each gets an `ambiguous` edge. So does a function-like
    /// C macro standing beside a function of the same name.
    fn narrow_definitions(
        &self,
        found: Vec<Sym>,
        resolution: Resolution,
    ) -> (Vec<Sym>, Resolution) {
        let mut found: Vec<Sym> = found
            .into_iter()
            .filter(|&s| !self.symbol(s).stub && !self.symbol(s).accessor)
            .collect();
        let mut ambiguous = self.macro_shadows_function(&mut found);
        if let [only] = found[..] {
            // `try: from json import dumps` / `except ImportError: def dumps()`: either runs.
            let sym = self.symbol(only);
            let imported_too = sym
                .parent
                .is_some_and(|p| self.bindings.contains_key(&(only.0, p, sym.name.as_str())));
            ambiguous |= sym.conditional && imported_too;
        }
        if found.len() < 2 {
            let resolution = if ambiguous {
                Resolution::Ambiguous
            } else {
                resolution
            };
            return (found, resolution);
        }
        type Key<'k> = (u32, Option<u32>, Option<&'k str>, &'k str);
        let mut groups: Vec<(Key, Vec<Sym>)> = Vec::new();
        for s in found {
            let sym = self.symbol(s);
            let key = (
                s.0,
                sym.parent,
                sym.owner_type.as_deref(),
                sym.name.as_str(),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(s),
                None => groups.push((key, vec![s])),
            }
        }
        let mut out = Vec::new();
        for (_, mut members) in groups {
            if members.len() > 1 {
                let replaces = self.lang_of(members[0].0).redefinition_replaces();
                if !replaces || members.iter().any(|&s| self.symbol(s).conditional) {
                    ambiguous = true;
                } else {
                    members.sort_unstable_by_key(|&s| self.symbol(s).line_start);
                    members.drain(..members.len() - 1);
                }
            }
            out.extend(members);
        }
        if ambiguous {
            (out, Resolution::Ambiguous)
        } else {
            (out, resolution)
        }
    }

    /// A call that found a function-like macro also may reach a same-named function defined
    /// beside it (`#define xmemcpy memcpy` next to an `xmemcpy` for builds without memcpy):
    /// adds them and says whether there were any. A same-named function in another file is a
    /// different thing the macro hides (a file's private `reset(p)` helper macro).
    fn macro_shadows_function(&self, found: &mut Vec<Sym>) -> bool {
        let Some(&first_macro) = found
            .iter()
            .find(|&&s| self.symbol(s).kind == NodeKind::Macro)
        else {
            return false;
        };
        let sym = self.symbol(first_macro);
        let lang = self.lang_of(first_macro.0).module_space();
        let mut shadowed = false;
        for &candidate in self
            .top_level
            .get(&(lang, sym.name.as_str()))
            .map_or(&[][..], Vec::as_slice)
        {
            let other = self.symbol(candidate);
            if other.kind != NodeKind::Macro
                && candidate.0 == first_macro.0
                && !found.contains(&candidate)
            {
                found.push(candidate);
                shadowed = true;
            }
        }
        shadowed
            || found
                .iter()
                .any(|&s| self.symbol(s).kind != NodeKind::Macro)
    }

    /// `return inner` where `inner` is a function the returning one defines.
    fn returned_closure(&self, f: u32, reference: &tg_lang::Reference) -> (Vec<Sym>, Resolution) {
        let Target::Name(name) = &reference.target else {
            return (Vec::new(), Resolution::Closure);
        };
        let found = self
            .children
            .get(&(f, reference.scope, name.as_str()))
            .map(|defs| {
                defs.iter()
                    .map(|&d| (f, d))
                    .filter(|&s| {
                        matches!(self.symbol(s).kind, NodeKind::Function | NodeKind::Method)
                    })
                    .collect()
            })
            .unwrap_or_default();
        (found, Resolution::Closure)
    }

    /// The classes (class-like symbols) whose instance `value` is, as the source states it;
    /// empty when it does not say, or says several things that disagree.
    fn value_types(&self, f: u32, scope: u32, value: &Value, depth: usize) -> Vec<Sym> {
        if depth > MAX_TYPE_DEPTH {
            return Vec::new();
        }
        let mut found = match value {
            Value::Name(name) => match self.variable_facts(f, scope, name) {
                Some(facts) => self.facts_types(f, &facts, depth),
                None => match self.lookup_name(f, scope, name) {
                    Lookup::Symbols(syms, _) => syms
                        .into_iter()
                        .filter(|&s| is_type_like(self.symbol(s).kind))
                        .collect(),
                    Lookup::Variable { file, name } => {
                        match self.var_types.get(&(file, 0, name.as_str())) {
                            Some(facts) => self.facts_types(file, &facts.clone(), depth),
                            None => Vec::new(),
                        }
                    }
                    _ => Vec::new(),
                },
            },
            Value::SelfType => self.self_type(f, scope),
            Value::Call(target) => {
                let (callees, _) = self.resolve_call_at(f, scope, target, depth + 1);
                match (&**target, callees.is_empty()) {
                    // `x.unwrap()`, `x.clone()`: a library method giving back the receiver.
                    (Target::Method { receiver, name }, true)
                        if self.lang_of(f).returns_receiver(name) =>
                    {
                        self.value_types(f, scope, receiver, depth + 1)
                    }
                    // `T::default()` derived: an instance of T.
                    (Target::Path(parts), true)
                        if parts.len() >= 2
                            && self.lang_of(f).constructs_own_type(&parts[parts.len() - 1]) =>
                    {
                        self.named_type(f, scope, &parts[..parts.len() - 1])
                    }
                    // `stack.pop()`, `v.first()`: one element of a typed collection.
                    (Target::Method { receiver, name }, true)
                        if self.lang_of(f).picks_element(name) =>
                    {
                        self.element_types(f, scope, receiver, depth + 1)
                    }
                    // Calling an instance (`factory(app)`): what its `__call__` returns.
                    (target, true) => self.instance_call(f, scope, target, depth),
                    _ => callees
                        .into_iter()
                        .flat_map(|callee| match self.receiver_of(target) {
                            // `-> Self` on a base-class method called on a subclass instance:
                            // the receiver's class, not the one defining the method.
                            Some(receiver) if self.returns_self(callee) => {
                                self.value_types(f, scope, &receiver, depth + 1)
                            }
                            _ => self.call_result(callee, depth),
                        })
                        .collect(),
                }
            }
            Value::Attr(object, attr) => self
                .value_types(f, scope, object, depth + 1)
                .into_iter()
                .flat_map(|class| self.attribute_types(class, attr, depth))
                .collect(),
            Value::Type(path) => self.named_type(f, scope, path),
            // A collection is not an instance; one of its elements is.
            Value::Elements(_) => Vec::new(),
            Value::ElementOf(iterable) => self.element_types(f, scope, iterable, depth + 1),
            Value::Fixture(name) => self
                .fixture(f, name)
                .map(|fixture| self.call_result(fixture, depth))
                .unwrap_or_default(),
        };
        found.sort_unstable();
        found.dedup();
        if found.len() > MAX_AMBIGUOUS {
            found.clear();
        }
        found
    }

    /// The classes of the elements of an iterable value: a variable or attribute declared as a
    /// collection (`items: list[T]`, `strats: Vec<T>`), through `.iter()` and the like.
    fn element_types(&self, f: u32, scope: u32, iterable: &Value, depth: usize) -> Vec<Sym> {
        if depth > MAX_TYPE_DEPTH {
            return Vec::new();
        }
        let facts: Vec<(u32, u32)> = match iterable {
            Value::Name(name) => match self.variable_facts(f, scope, name) {
                Some(facts) => facts.into_iter().map(|i| (f, i)).collect(),
                None => Vec::new(),
            },
            Value::Attr(object, attr) => self
                .value_types(f, scope, object, depth + 1)
                .into_iter()
                .flat_map(|class| self.attribute_facts(class, attr))
                .collect(),
            Value::Call(target) => match &**target {
                Target::Method { receiver, name } if self.lang_of(f).iterates_receiver(name) => {
                    return self.element_types(f, scope, receiver, depth + 1);
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        for (file, i) in facts {
            let fact = &self.units[file as usize].facts.types[i as usize];
            match &fact.value {
                Value::Elements(element) => {
                    out.extend(self.value_types(file, fact.eval_scope, element, depth + 1))
                }
                // One assignment we cannot read as a collection: the elements are unknown.
                _ => return Vec::new(),
            }
        }
        out
    }

    /// The facts typing attribute `attr` of `class` (its own, else its nearest base's).
    fn attribute_facts(&self, class: Sym, attr: &str) -> Vec<(u32, u32)> {
        let mut seen = HashSet::default();
        let mut pending = vec![class];
        while let Some(c) = pending.pop() {
            if !seen.insert(c) || seen.len() > MAX_HOPS {
                continue;
            }
            if let Some(facts) = self.attr_types.get(&(c.0, c.1, attr)) {
                return facts.iter().map(|&i| (c.0, i)).collect();
            }
            pending.extend(self.bases_of(c));
        }
        Vec::new()
    }

    /// The type facts of the variable `name` as seen from `scope`, through Python's (and
    /// Rust's) scoping; `None` when the name is a definition, an import, or a variable whose
    /// type nothing states.
    fn variable_facts(&self, f: u32, scope: u32, name: &str) -> Option<Vec<u32>> {
        let symbols = &self.units[f as usize].facts.symbols;
        let mut current = Some(scope);
        let mut innermost = true;
        while let Some(s) = current {
            let sym = &symbols[s as usize];
            if innermost || sym.scope == ScopeRule::Transparent {
                if self.children.contains_key(&(f, s, name))
                    || self.bindings.contains_key(&(f, s, name))
                {
                    return None;
                }
                if let Some(facts) = self.var_types.get(&(f, s, name)) {
                    return Some(facts.clone());
                }
                if self.locals.contains(&(f, s, name)) {
                    return None;
                }
            }
            innermost = false;
            current = sym.parent;
        }
        None
    }

    /// The types a set of facts about one name states: declarations win; among assignments,
    /// one that cannot be followed makes the whole name unknown.
    fn facts_types(&self, f: u32, facts: &[u32], depth: usize) -> Vec<Sym> {
        let all = &self.units[f as usize].facts.types;
        let facts: Vec<&TypeFact> = facts.iter().map(|&i| &all[i as usize]).collect();
        let declared: Vec<&TypeFact> = facts.iter().copied().filter(|t| t.declared).collect();
        let chosen = if declared.is_empty() { facts } else { declared };
        let mut out = Vec::new();
        for fact in chosen {
            // `u = u.with_query(...)`: says nothing new about `u`, and following it would loop.
            if fact.slot == TypeSlot::Variable && root_name(&fact.value) == Some(&fact.name) {
                continue;
            }
            let types = self.value_types(f, fact.eval_scope, &fact.value, depth + 1);
            if types.is_empty() && !fact.declared {
                return Vec::new();
            }
            out.extend(types);
        }
        out
    }

    /// What calling a value gives when the value is an instance of a class with a call
    /// operator (`factory(app)` with `factory: Factory` and `Factory.__call__ -> Client`).
    fn instance_call(&self, f: u32, scope: u32, target: &Target, depth: usize) -> Vec<Sym> {
        let Some(operator) = self.lang_of(f).call_operator() else {
            return Vec::new();
        };
        let value = match target {
            Target::Name(name) => Value::Name(name.clone()),
            Target::Path(parts) => {
                let mut value = Value::Name(parts[0].clone());
                for part in &parts[1..] {
                    value = Value::Attr(Box::new(value), part.clone());
                }
                value
            }
            _ => return Vec::new(),
        };
        self.value_types(f, scope, &value, depth + 1)
            .into_iter()
            .filter(|&class| self.symbol(class).kind == NodeKind::Class)
            .flat_map(|class| self.class_member(class, operator, &mut HashSet::default(), 0))
            .flat_map(|method| self.call_result(method, depth))
            .collect()
    }

    /// The fixture a test parameter named `name` receives: one in the test's own file, else
    /// the one in the nearest fixture-sharing file (`conftest.py`) of an enclosing directory.
    fn fixture(&self, f: u32, name: &str) -> Option<Sym> {
        let lang = self.lang_of(f);
        let candidates = self.fixtures.get(&(lang.module_space(), name))?;
        if let Some(&own) = candidates.iter().find(|s| s.0 == f) {
            return Some(own);
        }
        let path = self.units[f as usize].path;
        candidates
            .iter()
            .copied()
            .filter(|s| {
                let shared = self.units[s.0 as usize].path;
                let dir = shared.rsplit_once('/').map_or("", |(d, _)| d);
                lang.shares_fixtures(shared)
                    && (dir.is_empty() || path.starts_with(&format!("{dir}/")))
            })
            .max_by_key(|s| self.units[s.0 as usize].path.len())
    }

    /// The receiver of a method call target, as a value (`x.y` of `x.y.m()`).
    fn receiver_of(&self, target: &Target) -> Option<Value> {
        match target {
            Target::Method { receiver, .. } => Some((**receiver).clone()),
            Target::Path(parts) if parts.len() >= 2 => {
                let mut value = Value::Name(parts[0].clone());
                for part in &parts[1..parts.len() - 1] {
                    value = Value::Attr(Box::new(value), part.clone());
                }
                Some(value)
            }
            _ => None,
        }
    }

    fn returns_self(&self, callee: Sym) -> bool {
        let sym = self.symbol(callee);
        sym.kind == NodeKind::Method
            && matches!(&sym.returns, Some(Value::SelfType))
                | matches!(&sym.returns, Some(Value::Type(p)) if p == &["Self"])
    }

    /// What calling `callee` gives: an instance of a class, or its declared return type.
    fn call_result(&self, callee: Sym, depth: usize) -> Vec<Sym> {
        let sym = self.symbol(callee);
        if is_type_like(sym.kind) {
            return vec![callee];
        }
        let Some(returns) = &sym.returns else {
            return Vec::new();
        };
        let returns_self = matches!(returns, Value::SelfType)
            || matches!(returns, Value::Type(p) if p == &["Self"]);
        if returns_self {
            return self.owner_of(callee);
        }
        let scope = sym.parent.unwrap_or(0);
        self.value_types(callee.0, scope, returns, depth + 1)
    }

    /// The class or type a method belongs to.
    fn owner_of(&self, (f, i): Sym) -> Vec<Sym> {
        let sym = self.symbol((f, i));
        if let Some(owner) = sym.owner_type.as_deref() {
            return self.types_named(f, owner);
        }
        match sym.parent {
            Some(p) if is_type_like(self.symbol((f, p)).kind) => vec![(f, p)],
            _ => Vec::new(),
        }
    }

    /// Type-like symbols of this name for `f`: in `f` itself, else in its package.
    fn types_named(&self, f: u32, name: &str) -> Vec<Sym> {
        if !self.lang_of(f).falls_back_by_name() {
            return Vec::new();
        }
        let lang = self.lang_of(f).module_space();
        self.types
            .get(&(lang, name))
            .map(|t| self.prefer_file(t, f))
            .unwrap_or_default()
    }

    /// The class of `self` in `scope`: the enclosing class, or the enclosing impl's type.
    fn self_type(&self, f: u32, scope: u32) -> Vec<Sym> {
        if let Some(class) = self.enclosing_class(f, scope) {
            return vec![class];
        }
        let symbols = &self.units[f as usize].facts.symbols;
        let mut current = Some(scope);
        while let Some(s) = current {
            if let Some(owner) = symbols[s as usize].owner_type.as_deref() {
                return self.types_named(f, owner);
            }
            current = symbols[s as usize].parent;
        }
        Vec::new()
    }

    /// The type of attribute `attr` of an instance of `class`: its declared or assigned type
    /// (in the class or its bases), a nested class, or what a property-like method returns.
    fn attribute_types(&self, class: Sym, attr: &str, depth: usize) -> Vec<Sym> {
        let facts = self.attribute_facts(class, attr);
        if let Some(&(file, _)) = facts.first() {
            let indices: Vec<u32> = facts.iter().map(|&(_, i)| i).collect();
            return self.facts_types(file, &indices, depth);
        }
        let members = self.class_member(class, attr, &mut HashSet::default(), 0);
        members
            .into_iter()
            .flat_map(|m| {
                if is_type_like(self.symbol(m).kind) {
                    vec![m]
                } else {
                    self.call_result(m, depth)
                }
            })
            .collect()
    }

    /// A type named in an annotation, in `scope`.
    fn named_type(&self, f: u32, scope: u32, path: &[String]) -> Vec<Sym> {
        if path.is_empty() {
            return Vec::new();
        }
        if path == ["Self"] {
            return self.self_type(f, scope);
        }
        let found = match self.lookup_path_or_name(f, scope, path) {
            Lookup::Symbols(syms, _) => syms,
            Lookup::NotFound if path.len() == 1 => {
                // Rust: a type of the crate in scope through a glob or the prelude of a module.
                let candidates = self.types_named(f, &path[0]);
                if candidates.len() == 1 {
                    candidates
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        };
        found
            .into_iter()
            .filter(|&s| is_type_like(self.symbol(s).kind))
            .collect()
    }

    fn lookup_path_or_name(&self, f: u32, scope: u32, path: &[String]) -> Lookup {
        match path {
            [name] => self.lookup_name(f, scope, name),
            _ => self.lookup_path(f, scope, path),
        }
    }

    fn resolve_base(&self, f: u32, class_scope: u32, target: &Target) -> (Vec<Sym>, Resolution) {
        // Bases are evaluated in the scope around the class.
        let scope = self.symbol((f, class_scope)).parent.unwrap_or(0);
        let found = match target {
            Target::Name(name) => self.lookup_name(f, scope, name),
            Target::Path(parts) => self.lookup_path(f, scope, parts),
            _ => Lookup::NotFound,
        };
        let lang = self.lang_of(f).module_space();
        let (syms, resolution) = match found {
            Lookup::Symbols(syms, resolution) => (syms, resolution),
            Lookup::NotFound if self.lang_of(f).falls_back_by_name() => {
                let name = match target {
                    Target::Name(name) => Some(name.as_str()),
                    Target::Path(parts) => parts.last().map(String::as_str),
                    _ => None,
                };
                match name.and_then(|n| self.types.get(&(lang, n))) {
                    Some(candidates) => self.pick(f, candidates),
                    None => (Vec::new(), Resolution::Unique),
                }
            }
            _ => (Vec::new(), Resolution::Local),
        };
        let syms = syms
            .into_iter()
            .filter(|&s| is_type_like(self.symbol(s).kind) && s != (f, class_scope))
            .collect();
        (syms, resolution)
    }

    /// A bare name, through the scopes as the language's facts describe them.
    fn lookup_name(&self, f: u32, scope: u32, name: &str) -> Lookup {
        let symbols = &self.units[f as usize].facts.symbols;
        let mut current = Some(scope);
        let mut innermost = true;
        while let Some(s) = current {
            let sym = &symbols[s as usize];
            if innermost || sym.scope == ScopeRule::Transparent {
                if let Some(defs) = self.children.get(&(f, s, name)) {
                    return Lookup::Symbols(
                        defs.iter().map(|&d| (f, d)).collect(),
                        Resolution::Local,
                    );
                }
                if let Some(imports) = self.bindings.get(&(f, s, name)) {
                    // The last import of a name wins, as at run time.
                    if let Some(&last) = imports.last() {
                        return self.resolve_binding(f, last, 0);
                    }
                }
                if self.locals.contains(&(f, s, name)) {
                    return Lookup::Opaque;
                }
            }
            innermost = false;
            current = sym.parent;
        }
        if let Some(stars) = self.stars.get(&(f, 0)) {
            for &star in stars {
                if let Binding::Star { module } =
                    &self.units[f as usize].facts.imports[star as usize].binding
                {
                    if let Some(m) = self.module_by_key(self.lang_of(f).module_space(), module, f) {
                        if let Lookup::Symbols(syms, _) = self.member_of_module(m, name, 0) {
                            return Lookup::Symbols(syms, Resolution::Import);
                        }
                    }
                }
            }
        }
        // C: definitions in the headers this file includes.
        for &m in &self.included[f as usize] {
            if let Some(defs) = self.children.get(&(m, 0, name)) {
                return Lookup::Symbols(defs.iter().map(|&d| (m, d)).collect(), Resolution::Import);
            }
        }
        // Another package of the repository, named in a path (`tg_shared::stage::f()`).
        let lang = self.lang_of(f).module_space();
        if self.aliases.contains(&(lang, name.to_string())) {
            return Lookup::ModuleKey {
                lang,
                key: name.to_string(),
            };
        }
        Lookup::NotFound
    }

    fn resolve_binding(&self, f: u32, import: u32, hops: usize) -> Lookup {
        let unit = &self.units[f as usize];
        let lang = unit.lang;
        match &unit.facts.imports[import as usize].binding {
            Binding::Module { module, .. } => Lookup::ModuleKey {
                lang: lang.module_space(),
                key: module.clone(),
            },
            Binding::Member { module, member, .. } => {
                match self.module_by_key(lang.module_space(), module, f) {
                    Some(m) => match self.member_of_module(m, member, hops) {
                        Lookup::Symbols(syms, _) => Lookup::Symbols(syms, Resolution::Import),
                        other => other,
                    },
                    None => {
                        let sub = format!("{module}{}{member}", lang.key_separator());
                        if self.module_by_key(lang.module_space(), &sub, f).is_some() {
                            Lookup::ModuleKey {
                                lang: lang.module_space(),
                                key: sub,
                            }
                        } else if lang.unmatched_module_is_external(module) {
                            Lookup::External
                        } else {
                            Lookup::NotFound
                        }
                    }
                }
            }
            _ => Lookup::NotFound,
        }
    }

    /// A name at the top level of module `m`: a definition, a submodule, or a re-export.
    fn member_of_module(&self, m: u32, name: &str, hops: usize) -> Lookup {
        if let Some(defs) = self.children.get(&(m, 0, name)) {
            return Lookup::Symbols(defs.iter().map(|&d| (m, d)).collect(), Resolution::Import);
        }
        if self.var_types.contains_key(&(m, 0, name)) {
            return Lookup::Variable {
                file: m,
                name: name.to_string(),
            };
        }
        let unit = &self.units[m as usize];
        let lang = unit.lang.module_space();
        if let Some(key) = &self.primary_key[m as usize] {
            let sub = format!("{key}{}{name}", unit.lang.key_separator());
            if self.module_by_key(lang, &sub, m).is_some() {
                return Lookup::ModuleKey { lang, key: sub };
            }
        }
        if hops < MAX_HOPS {
            if let Some(imports) = self.bindings.get(&(m, 0, name)) {
                if let Some(&last) = imports.last() {
                    return self.resolve_binding(m, last, hops + 1);
                }
            }
            if let Some(stars) = self.stars.get(&(m, 0)) {
                for &star in stars {
                    if let Binding::Star { module } = &unit.facts.imports[star as usize].binding {
                        if let Some(next) = self.module_by_key(lang, module, m) {
                            if next != m {
                                if let found @ Lookup::Symbols(..) =
                                    self.member_of_module(next, name, hops + 1)
                                {
                                    return found;
                                }
                            }
                        }
                    }
                }
            }
        }
        Lookup::NotFound
    }

    /// `a.b.c` rooted at a name in scope.
    fn lookup_path(&self, f: u32, scope: u32, parts: &[String]) -> Lookup {
        let Some((head, rest)) = parts.split_first() else {
            return Lookup::NotFound;
        };
        match self.lookup_name(f, scope, head) {
            Lookup::ModuleKey { lang, key, .. } => self.lookup_in_key(f, lang, &key, rest),
            Lookup::Symbols(syms, resolution) => self.members_of_symbols(syms, rest, resolution),
            other => other,
        }
    }

    /// `rest` inside the module named by `key`, taking the longest prefix of `rest` that still
    /// names a module (`import a` then `a.b.c.f()` may land in module `a.b.c`).
    fn lookup_in_key(&self, f: u32, lang: &'static str, key: &str, rest: &[String]) -> Lookup {
        let language = self.lang_of(f);
        let sep = language.key_separator();
        for split in (0..=rest.len()).rev() {
            let mut candidate = key.to_string();
            for part in &rest[..split] {
                candidate.push_str(sep);
                candidate.push_str(part);
            }
            let Some(m) = self.module_by_key(lang, &candidate, f) else {
                continue;
            };
            let remaining = &rest[split..];
            let Some((first, more)) = remaining.split_first() else {
                return Lookup::ModuleKey {
                    lang,
                    key: candidate,
                };
            };
            return match self.member_of_module(m, first, 0) {
                Lookup::Symbols(syms, _) => self.members_of_symbols(syms, more, Resolution::Import),
                Lookup::ModuleKey { key, .. } => self.lookup_in_key(f, lang, &key, more),
                Lookup::Variable { file, name } if !more.is_empty() => {
                    let mut path = vec![name];
                    path.extend(more.iter().cloned());
                    match self.typed_path(file, 0, &path, 0) {
                        (found, resolution) if !found.is_empty() => {
                            Lookup::Symbols(found, resolution)
                        }
                        _ => Lookup::NotFound,
                    }
                }
                other => other,
            };
        }
        if language.unmatched_module_is_external(key) {
            Lookup::External
        } else {
            Lookup::NotFound
        }
    }

    fn members_of_symbols(
        &self,
        syms: Vec<Sym>,
        rest: &[String],
        resolution: Resolution,
    ) -> Lookup {
        let mut current = syms;
        for part in rest {
            let mut next = Vec::new();
            for &sym in &current {
                let mut seen = HashSet::default();
                next.extend(self.class_member(sym, part, &mut seen, 0));
            }
            if next.is_empty() {
                return Lookup::NotFound;
            }
            next.sort_unstable();
            next.dedup();
            current = next;
        }
        Lookup::Symbols(current, resolution)
    }

    /// Member `name` of a class-like symbol: its own body, methods defined for it elsewhere
    /// (impls), then its bases in order.
    fn class_member(
        &self,
        class: Sym,
        name: &str,
        seen: &mut HashSet<Sym>,
        depth: usize,
    ) -> Vec<Sym> {
        if depth > MAX_HOPS || !seen.insert(class) {
            return Vec::new();
        }
        let (f, i) = class;
        if let Some(defs) = self.children.get(&(f, i, name)) {
            return defs.iter().map(|&d| (f, d)).collect();
        }
        let sym = self.symbol(class);
        let lang = self.lang_of(f).module_space();
        if let Some(owned) = self.owned.get(&(lang, sym.name.as_str(), name)) {
            return self.prefer_file(owned, f);
        }
        for base in self.bases_of(class) {
            let found = self.class_member(base, name, seen, depth + 1);
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// The resolved bases of a class (its `inherits` references).
    fn bases_of(&self, (f, i): Sym) -> Vec<Sym> {
        let Some(refs) = self.base_refs.get(&(f, i)) else {
            return Vec::new();
        };
        let facts = self.units[f as usize].facts;
        refs.iter()
            .flat_map(|&r| self.resolve_base(f, i, &facts.refs[r as usize].target).0)
            .collect()
    }

    fn enclosing_class(&self, f: u32, scope: u32) -> Option<Sym> {
        let symbols = &self.units[f as usize].facts.symbols;
        let mut current = Some(scope);
        while let Some(s) = current {
            let sym = &symbols[s as usize];
            if sym.kind == NodeKind::Class {
                return Some((f, s));
            }
            current = sym.parent;
        }
        None
    }

    /// `self.m()`: a member of the enclosing class (or its bases) or impl's type; a method the
    /// class does not define (an outside base's) binds nothing.
    fn resolve_self_member(&self, f: u32, scope: u32, name: &str) -> (Vec<Sym>, Resolution) {
        let callable = |syms: Vec<Sym>| -> Vec<Sym> {
            syms.into_iter()
                .filter(|&s| self.symbol(s).kind.is_callable())
                .collect()
        };
        if let Some(class) = self.enclosing_class(f, scope) {
            let found = callable(self.class_member(class, name, &mut HashSet::default(), 0));
            return (found, Resolution::SelfMethod);
        } else {
            let symbols = &self.units[f as usize].facts.symbols;
            let mut current = Some(scope);
            while let Some(s) = current {
                let sym = &symbols[s as usize];
                if let Some(owner) = sym.owner_type.as_deref() {
                    let lang = self.lang_of(f).module_space();
                    if let Some(owned) = self.owned.get(&(lang, owner, name)) {
                        return (callable(self.prefer_file(owned, f)), Resolution::SelfMethod);
                    }
                    break;
                }
                current = sym.parent;
            }
        }
        (Vec::new(), Resolution::SelfMethod)
    }

    fn fallback_top_level(&self, f: u32, name: &str) -> (Vec<Sym>, Resolution) {
        let lang = self.lang_of(f);
        if !lang.falls_back_by_name() {
            return (Vec::new(), Resolution::Unique);
        }
        match self.top_level.get(&(lang.module_space(), name)) {
            Some(candidates) => self.pick(f, candidates),
            None => (Vec::new(), Resolution::Unique),
        }
    }

    /// `Type::method()` where `Type` was not resolved in scope: methods owned by a type of that
    /// name, in the caller's package; otherwise nothing (a receiver of unknown type).
    fn fallback_path(&self, f: u32, parts: &[String]) -> (Vec<Sym>, Resolution) {
        let lang = self.lang_of(f);
        if !lang.falls_back_by_name() {
            return (Vec::new(), Resolution::Unique);
        }
        // Only `Type::method`: a longer path (`std::io::Error::from`) names its way.
        if let [owner, method] = parts {
            if let Some(owned) =
                self.owned
                    .get(&(lang.module_space(), owner.as_str(), method.as_str()))
            {
                return self.pick(f, owned);
            }
            if let Some(types) = self.types.get(&(lang.module_space(), owner.as_str())) {
                let found: Vec<Sym> = types
                    .iter()
                    .flat_map(|&t| self.class_member(t, method, &mut HashSet::default(), 0))
                    .collect();
                if !found.is_empty() {
                    return self.pick(f, &found);
                }
            }
        }
        (Vec::new(), Resolution::Unique)
    }
}

/// `a.b.c` as a path of names, if the value is only names and attributes.
fn dotted_path(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Name(name) => Some(vec![name.clone()]),
        Value::Attr(inner, attr) => {
            let mut parts = dotted_path(inner)?;
            parts.push(attr.clone());
            Some(parts)
        }
        _ => None,
    }
}

/// The variable a value starts from (`u` in `u.a.m()`).
fn root_name(value: &Value) -> Option<&String> {
    match value {
        Value::Name(name) => Some(name),
        Value::Attr(inner, _) => root_name(inner),
        Value::Call(target) => match &**target {
            Target::Method { receiver, .. } => root_name(receiver),
            Target::Path(parts) => parts.first(),
            _ => None,
        },
        _ => None,
    }
}

fn pick_fallback(candidates: Vec<Sym>) -> (Vec<Sym>, Resolution) {
    match candidates.len() {
        1 => (candidates, Resolution::Unique),
        n if n <= MAX_AMBIGUOUS => (candidates, Resolution::Ambiguous),
        _ => (Vec::new(), Resolution::Ambiguous),
    }
}

/// Number of leading directory components two paths share.
fn common_dir_prefix(a: &str, b: &str) -> usize {
    let a_dirs = a.rsplit_once('/').map_or("", |(d, _)| d);
    let b_dirs = b.rsplit_once('/').map_or("", |(d, _)| d);
    a_dirs
        .split('/')
        .zip(b_dirs.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tg_lang::FileFacts;

    /// `kind src -> dst (resolution)` for every non-`contains` edge of a small repository.
    fn relations(files: &[(&str, &str)]) -> Vec<String> {
        relations_with(files, &[])
    }

    /// The `calls` lines of relations.
    fn only_calls(found: Vec<String>) -> Vec<String> {
        found
            .into_iter()
            .filter(|r| r.starts_with("calls "))
            .collect()
    }

    fn relations_with(files: &[(&str, &str)], aliases: &[PackageAlias]) -> Vec<String> {
        let facts: Vec<(String, &'static dyn Language, FileFacts)> = files
            .iter()
            .map(|(path, source)| {
                let lang = tg_lang::for_path(path).expect("known language");
                let facts = tg_parse::extract_file(lang, path, source).expect("parses");
                (path.to_string(), lang, facts)
            })
            .collect();
        let units: Vec<Unit> = facts
            .iter()
            .map(|(path, lang, facts)| Unit {
                path,
                lang: *lang,
                facts,
            })
            .collect();
        let ids: Vec<Vec<String>> = units.iter().map(|u| u.facts.symbol_ids(u.path)).collect();
        let edges: Vec<Vec<RawEdge>> = Resolver::with_aliases(&units, aliases)
            .edges_by_file(|_| true, |edges| edges)
            .into_iter()
            .map(|(edges, _)| edges)
            .collect();
        let mut out: Vec<String> = edges
            .iter()
            .flatten()
            .filter(|e| e.kind != EdgeKind::Contains)
            .map(|e| {
                let id = |(f, i): Sym| ids[f as usize][i as usize].clone();
                let resolution = e.resolution.map(|r| format!("{r:?}")).unwrap_or_default();
                format!(
                    "{} {} -> {} ({resolution})",
                    e.kind.as_str(),
                    id(e.src),
                    id(e.dst)
                )
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn product_code_never_reaches_tooling_or_examples_by_a_name_alone() {
        let found = relations(&[
            (
                "drivers/net/nic.c",
                "int nic_probe(void)\n{\n\tkzalloc(8);\n\treturn krealloc(8);\n}\n",
            ),
            (
                "mm/slab_common.c",
                "int krealloc(int n)\n{\n\treturn n;\n}\n",
            ),
            (
                "tools/virtio/linux/kernel.h",
                "static inline int kzalloc(int n)\n{\n\treturn n;\n}\n\
                 static inline int krealloc(int n)\n{\n\treturn n;\n}\n",
            ),
            (
                "tools/virtio/ring.c",
                "int ring_setup(void)\n{\n\treturn kzalloc(4);\n}\n",
            ),
        ]);
        assert_eq!(
            only_calls(found),
            [
                "calls drivers/net/nic.c::nic_probe -> mm/slab_common.c::krealloc (Unique)",
                "calls tools/virtio/ring.c::ring_setup -> tools/virtio/linux/kernel.h::kzalloc (Unique)",
            ]
        );
    }

    #[test]
    fn a_rust_binding_declared_mut_or_ref_mut_in_a_pattern_is_typed() {
        let found = relations(&[(
            "src/lib.rs",
            "pub struct Data<T> { p: T }\nimpl<T> Data<T> { pub fn encode(&mut self) {} }\n\
             pub enum Frame<T = u8> { Data(Data<T>) }\n\
             pub fn arm<B>(item: Frame<B>) { match item { Frame::Data(mut v) => v.encode() } }\n\
             pub fn by_ref<B>(item: &mut Frame<B>) {\n    match item { Frame::Data(ref mut v) => v.encode() }\n}\n\
             pub fn opt(item: Option<Data<u8>>) { if let Some(mut v) = item { v.encode(); } }\n",
        )]);
        let calls = only_calls(found);
        assert_eq!(
            calls,
            [
                "calls src/lib.rs::arm -> src/lib.rs::Data::encode (Typed)",
                "calls src/lib.rs::by_ref -> src/lib.rs::Data::encode (Typed)",
                "calls src/lib.rs::opt -> src/lib.rs::Data::encode (Typed)",
            ]
        );
    }

    #[test]
    fn a_rust_pointer_s_methods_reach_what_it_points_at() {
        let found = relations(&[(
            "src/lib.rs",
            "use std::pin::Pin;\nuse std::rc::Weak;\n\
             pub struct Codec;\nimpl Codec { pub fn poll_next(&mut self) {} }\n\
             pub struct Conn { codec: Codec }\n\
             impl Conn {\n    pub fn poll(&mut self) { Pin::new(&mut self.codec).poll_next(); }\n\
             pub fn boxed(&self) { let mut b = Box::new(Codec); b.poll_next(); }\n}\n\
             pub fn weak(w: Weak<Codec>) { w.upgrade().unwrap().poll_next(); }\n\
             pub fn pinned(c: Pin<&mut Codec>) { c.poll_next(); }\n",
        )]);
        let calls = only_calls(found);
        assert_eq!(
            calls,
            [
                "calls src/lib.rs::Conn::boxed -> src/lib.rs::Codec::poll_next (Typed)",
                "calls src/lib.rs::Conn::poll -> src/lib.rs::Codec::poll_next (Typed)",
                "calls src/lib.rs::pinned -> src/lib.rs::Codec::poll_next (Typed)",
                "calls src/lib.rs::weak -> src/lib.rs::Codec::poll_next (Typed)",
            ]
        );
    }

    #[test]
    fn a_rust_use_of_a_re_exported_name_depends_on_the_file_defining_it() {
        let found = relations(&[
            (
                "src/lib.rs",
                "mod frame;\nmod proto;\npub use crate::frame::Reason;\n",
            ),
            (
                "src/frame/mod.rs",
                "mod reason;\npub use self::reason::Reason;\n",
            ),
            ("src/frame/reason.rs", "pub struct Reason;\n"),
            (
                "src/proto.rs",
                "use crate::Reason;\nuse crate::frame;\nuse crate::frame::reason;\n",
            ),
        ]);
        let imports: Vec<&String> = found
            .iter()
            .filter(|r| r.starts_with("imports src/proto.rs"))
            .collect();
        // Through two re-exports to the definition; a module imported is that module.
        assert_eq!(
            imports,
            [
                "imports src/proto.rs -> src/frame/mod.rs (Import)",
                "imports src/proto.rs -> src/frame/reason.rs (Import)",
            ]
        );
    }

    #[test]
    fn a_pointer_built_inside_a_macro_s_arguments_reaches_what_it_wraps() {
        let found = relations(&[(
            "src/lib.rs",
            "use std::pin::Pin;\nmacro_rules! ready { ($e:expr) => { $e } }\n\
             pub struct Codec;\nimpl Codec { pub fn poll_next(&mut self) -> u8 { 0 } }\n\
             pub struct Conn { codec: Codec }\nimpl Conn {\n\
                 pub fn poll(&mut self) -> u8 { ready!(Pin::new(&mut self.codec).poll_next()) }\n}\n\
             pub fn free(c: &mut Codec) -> u8 { ready!(Box::pin(c).poll_next()) }\n",
        )]);
        let calls = only_calls(found);
        assert_eq!(
            calls,
            [
                "calls src/lib.rs::Conn::poll -> src/lib.rs::Codec::poll_next (Typed)",
                "calls src/lib.rs::free -> src/lib.rs::Codec::poll_next (Typed)",
            ]
        );
    }

    #[test]
    fn a_rust_match_that_unwraps_gives_the_wrapped_value() {
        let found = relations(&[(
            "src/lib.rs",
            "use std::sync::Mutex;\npub struct Inner;\nimpl Inner { pub fn transition(&mut self) {} }\n\
             pub struct S { inner: Mutex<Inner> }\nimpl S {\n    pub fn drop_ref(&self) {\n\
                     let mut me = match self.inner.lock() { Ok(inner) => inner, Err(_) => return };\n\
                     me.transition();\n    }\n}\n\
             pub fn opt(o: Option<Inner>) {\n    let mut x = match o { Some(x) => { x } None => { return; } };\n    x.transition();\n}\n\
             pub fn other(o: Option<Inner>) {\n    let y = match o { Some(x) => 1, None => 2 };\n    y.transition();\n}\n",
        )]);
        let calls = only_calls(found);
        // Not `other`: its match gives numbers.
        assert_eq!(
            calls,
            [
                "calls src/lib.rs::S::drop_ref -> src/lib.rs::Inner::transition (Typed)",
                "calls src/lib.rs::opt -> src/lib.rs::Inner::transition (Typed)",
            ]
        );
    }

    #[test]
    fn a_rust_let_binding_shadows_same_named_functions_elsewhere() {
        let found = relations(&[
            (
                "src/pool.rs",
                "fn isolation() {\n    let config = |c: u32| c + 1;\n    config(1);\n    let agent = agent();\n}\n",
            ),
            ("src/timeouts.rs", "pub fn config() {}\npub fn agent() {}\n"),
        ]);
        let calls = only_calls(found);
        // The closure, not `timeouts::config`; `let agent = agent()` calls the function.
        assert_eq!(
            calls,
            ["calls src/pool.rs::isolation -> src/timeouts.rs::agent (Unique)"]
        );
    }

    #[test]
    fn a_fixture_types_the_parameters_of_its_name_by_what_it_returns() {
        let found = relations(&[
            ("pkg/env.py", "class Environment:\n    def from_string(self, s):\n        return s\n"),
            (
                "tests/conftest.py",
                "import pytest\nfrom pkg.env import Environment\n\n@pytest.fixture\ndef env():\n    return Environment()\n\n@pytest.fixture\ndef name():\n    return make_name()\n",
            ),
            (
                "tests/test_env.py",
                "def test_render(env, name):\n    env.from_string('x')\n    name.upper()\n",
            ),
        ]);
        let calls: Vec<&String> = found
            .iter()
            .filter(|r| r.starts_with("calls tests/test_env.py"))
            .collect();
        assert_eq!(
            calls,
            // `name` returns what an unknown function gives: no type, no edge.
            ["calls tests/test_env.py::test_render -> pkg/env.py::Environment.from_string (Typed)"]
        );
    }

    #[test]
    fn reading_a_property_calls_its_getter_and_nothing_else_read_is_an_edge() {
        let models = "import functools\n\nclass Base:\n    @property\n    def name(self):\n        return self._compute()\n\n    @name.setter\n    def name(self, value):\n        self._name = value\n\n    def _compute(self):\n        return 'x'\n\n    @functools.cached_property\n    def size(self):\n        return 1\n\n\nclass Child(Base):\n    def describe(self):\n        n = self.name\n        self.name = 'y'\n        del self.name\n        self.count = self.size\n        return n\n\n    def written(self):\n        self.name, self.other = 1, 2\n        for self.name in []:\n            pass\n\n    def plain(self):\n        return self.other\n\n\ndef typed(b: Base):\n    return b.name\n\n\ndef untyped(b):\n    return b.name\n\n\ndef augmented(b: Base):\n    b.size += 1\n";
        let found = relations(&[("pkg/models.py", models)]);
        let calls = only_calls(found);
        assert_eq!(
            calls,
            [
                "calls pkg/models.py::Base.name -> pkg/models.py::Base._compute (SelfMethod)",
                "calls pkg/models.py::Child.describe -> pkg/models.py::Base.name (SelfMethod)",
                "calls pkg/models.py::Child.describe -> pkg/models.py::Base.size (SelfMethod)",
                "calls pkg/models.py::augmented -> pkg/models.py::Base.size (Typed)",
                "calls pkg/models.py::typed -> pkg/models.py::Base.name (Typed)",
            ]
        );
    }

    #[test]
    fn parameters_and_assignments_shadow_repository_functions() {
        let found = relations(&[
            (
                "a.py",
                "def run(handler):\n    handler()\n    callback = make()\n    callback()\n",
            ),
            (
                "b.py",
                "def handler():\n    pass\n\ndef callback():\n    pass\n",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn outside_imports_never_fall_back_to_same_named_repository_symbols() {
        let found = relations(&[
            ("a.py", "from os.path import join\nimport json as j\n\ndef f():\n    join()\n    j.dumps()\n"),
            ("b.py", "def join():\n    pass\n\ndef dumps():\n    pass\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn unknown_names_fall_back_to_unique_then_ambiguous_then_nothing() {
        let found = relations(&[
            ("a.py", "def f():\n    solo()\n    pair()\n    many()\n"),
            (
                "b.py",
                "def solo(): pass\ndef pair(): pass\ndef many(): pass\n",
            ),
            ("c.py", "def pair(): pass\ndef many(): pass\n"),
            ("d.py", "def many(): pass\n"),
            ("e.py", "def many(): pass\n"),
        ]);
        assert_eq!(
            found,
            vec![
                "calls a.py::f -> b.py::pair (Ambiguous)",
                "calls a.py::f -> b.py::solo (Unique)",
                "calls a.py::f -> c.py::pair (Ambiguous)",
            ]
        );
    }

    #[test]
    fn reexports_and_star_imports_are_followed() {
        let found = relations(&[
            ("pkg/__init__.py", "from .impl import work\n"),
            ("pkg/impl.py", "def work():\n    pass\n"),
            (
                "pkg/star.py",
                "from .impl import *\n\ndef g():\n    work()\n",
            ),
            (
                "main.py",
                "import pkg\nfrom pkg import work\n\ndef f():\n    work()\n    pkg.work()\n",
            ),
        ]);
        assert!(
            found.contains(&"calls main.py::f -> pkg/impl.py::work (Import)".to_string()),
            "{found:?}"
        );
        assert!(
            found.contains(&"calls pkg/star.py::g -> pkg/impl.py::work (Import)".to_string()),
            "{found:?}"
        );
        assert!(
            !found
                .iter()
                .any(|r| r.contains("Unique") || r.contains("Ambiguous")),
            "{found:?}"
        );
    }

    #[test]
    fn inherited_methods_resolve_through_bases_in_other_modules() {
        let found = relations(&[
            ("base.py", "class Base:\n    def hook(self):\n        pass\n"),
            (
                "child.py",
                "from base import Base\n\nclass Child(Base):\n    def run(self):\n        self.hook()\n        super().hook()\n",
            ),
        ]);
        assert_eq!(
            found,
            vec![
                "calls child.py::Child.run -> base.py::Base.hook (SelfMethod)",
                "imports child.py -> base.py (Import)",
                "inherits child.py::Child -> base.py::Base (Import)",
            ]
        );
    }

    #[test]
    fn c_static_functions_bind_to_their_own_file() {
        let found = relations(&[
            (
                "a.c",
                "static int helper(void) { return 1; }\nint a(void) { return helper(); }\n",
            ),
            (
                "b.c",
                "static int helper(void) { return 2; }\nint b(void) { return helper(); }\n",
            ),
        ]);
        assert_eq!(
            found,
            vec![
                "calls a.c::a -> a.c::helper (Local)",
                "calls b.c::b -> b.c::helper (Local)"
            ]
        );
    }

    #[test]
    fn rust_fallbacks_stay_in_their_crate_and_other_crates_resolve_by_name() {
        let files = [
            (
                "core/src/lib.rs",
                "pub mod stage;\npub struct Builder;\nimpl Builder {\n    pub fn build(&self) {}\n}\n",
            ),
            (
                "core/src/stage.rs",
                "pub struct Failure;\nimpl Failure {\n    pub fn new() -> Self { Failure }\n}\npub fn workspace() {}\n",
            ),
            (
                "app/src/main.rs",
                "use core_lib::stage::Failure;\nstruct Failure2;\nimpl Failure2 {\n    fn new() {}\n}\nfn main() {\n    let b = make();\n    b.build();\n    Failure::new();\n    core_lib::stage::workspace();\n}\nfn make() {}\n",
            ),
            (
                "app/tests/cli.rs",
                "struct Project;\nimpl Project {\n    fn build(&self) {}\n}\n#[test]\nfn t() {}\n",
            ),
        ];
        let aliases = [("rust", "core_lib".to_string(), "core/crate".to_string())];
        let found = relations_with(&files, &aliases);
        let calls = only_calls(found.clone());
        assert_eq!(
            calls,
            [
                "calls app/src/main.rs::main -> app/src/main.rs::make (Local)",
                "calls app/src/main.rs::main -> core/src/stage.rs::Failure::new (Import)",
                "calls app/src/main.rs::main -> core/src/stage.rs::workspace (Import)",
            ],
            "no `b.build()` guess into another crate (core's Builder, the test crate's Project): {found:?}"
        );
        // Without the alias, nothing in `core_lib` resolves and no guess crosses crates.
        let unaliased = relations_with(&files, &[]);
        assert!(
            unaliased
                .iter()
                .filter(|r| r.contains(" app/src/"))
                .all(|r| !r.contains(" -> core/") && !r.contains(" -> app/tests/")),
            "{unaliased:?}"
        );
    }
}
