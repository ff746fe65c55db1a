//! Finding the symbol a name an agent typed means. Accepted: an id (`typer/main.py::Typer.command`),
//! its tail (`main.py::Typer.command`), a qualified name in either language's form
//! (`Typer.command`, `WalkBuilder::build`, `WalkBuilder.build`), a module path in front
//! (`typer.main.get_command`, `walk::WalkBuilder::build`), or a short name (`get_command`).
//!
//! A name is matched as a run of segments at the end of a symbol's full path (its file's path
//! without the extension, then its qualified name; `::`, `.` and `/` all separate). Among the
//! matches, a path as written wins over one through a package's re-export of a private module
//! (`httpx.get` for `httpx/_api.py::get`), then those whose qualified name is the whole name over
//! those that only end with it,
//! then product code over tests and examples, then an implementation over its `@overload`
//! signatures (`Environment.compile` is the `def` with a body, whichever `#k` it is), then a
//! first definition over a `#2`. A name may
//! end in `#k` (`Progress.open#3`, as ids print a repeated definition): then only the k-th
//! definition of the matches counts. What is left must be one symbol; otherwise the candidates are listed, and a name nothing matches gets the
//! nearest known names.

use std::borrow::Cow;
use tg_shared::record::{NodeKind, Role};
use tg_shared::search::layout::Column;
use tg_shared::search::IndexView;

/// The symbols names are resolved among: the index, or a list in tests.
pub trait Symbols {
    fn count(&self) -> usize;
    fn id(&self, i: u32) -> Cow<'_, str>;
    fn name(&self, i: u32) -> Cow<'_, str>;
    fn kind(&self, i: u32) -> NodeKind;
    fn role(&self, i: u32) -> Role;
    /// An `@overload` signature, which no call reaches.
    fn stub(&self, i: u32) -> bool;
    /// The symbols whose id contains `needle`, in order.
    fn ids_containing(&self, needle: &str) -> Vec<u32> {
        (0..self.count() as u32)
            .filter(|&i| self.id(i).contains(needle))
            .collect()
    }
}

impl Symbols for IndexView {
    /// One search over the ids' blob: on the kernel, a scan of every id took a fifth of a
    /// `trace`.
    fn ids_containing(&self, needle: &str) -> Vec<u32> {
        self.texts_containing(Column::Id, needle.as_bytes())
    }
    fn count(&self) -> usize {
        self.len()
    }
    fn id(&self, i: u32) -> Cow<'_, str> {
        self.symbol(i).id()
    }
    fn name(&self, i: u32) -> Cow<'_, str> {
        self.symbol(i).name()
    }
    fn kind(&self, i: u32) -> NodeKind {
        self.symbol(i).kind
    }
    fn role(&self, i: u32) -> Role {
        self.symbol(i).role
    }
    fn stub(&self, i: u32) -> bool {
        self.symbol(i).is_stub()
    }
}

/// Why a name does not pick one symbol.
#[derive(Debug, Clone, PartialEq)]
pub enum NameError {
    Unknown {
        name: String,
        nearest: Vec<String>,
    },
    Ambiguous {
        name: String,
        candidates: Vec<String>,
    },
}

/// At most this many candidates or suggestions are listed.
const LISTED: usize = 20;

/// The name's segments: file extensions dropped, split on `::`, `.` and `/`.
fn name_segments(name: &str) -> Vec<String> {
    // A name written from its file (`codec/mod.rs::Codec::buffer`) is split as ids are, so a
    // directory's module file (`mod.rs`, `__init__.py`) names the directory, as in the ids.
    if let Some((path, _)) = name.split_once("::") {
        if tg_lang::for_path(path).is_some() {
            return symbol_segments(name).0;
        }
    }
    let mut text = name.to_string();
    for ext in [".pyi::", ".py::", ".rs::", ".c::", ".h::"] {
        text = text.replace(ext, "::");
    }
    text.split("::")
        .flat_map(|part| part.split(['.', '/']))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A symbol's full path as segments (from its id), and how many of them are its qualified name.
pub(crate) fn symbol_segments(id: &str) -> (Vec<String>, usize) {
    let (path, qualname) = id.split_once("::").unwrap_or((id, ""));
    let stem = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    let directory_module = tg_lang::for_path(path).and_then(|lang| lang.directory_module_stem());
    let mut segments: Vec<String> = stem
        .split('/')
        .filter(|s| !s.is_empty() && Some(*s) != directory_module)
        .map(str::to_string)
        .collect();
    let qualified: Vec<String> = if qualname.is_empty() {
        Vec::new()
    } else {
        let bare = qualname.split('#').next().unwrap_or(qualname);
        bare.split("::")
            .flat_map(|part| part.split('.'))
            .map(str::to_string)
            .collect()
    };
    let q = qualified.len();
    segments.extend(qualified);
    (segments, q)
}

/// `Progress.open#3` → (`Progress.open`, Some(3)); a name without a `#k` suffix as it is.
fn split_repeat(name: &str) -> (&str, Option<u32>) {
    match name.rsplit_once('#') {
        Some((base, k)) if !base.is_empty() => match k.parse::<u32>() {
            Ok(k) if k >= 1 => (base, Some(k)),
            _ => (name, None),
        },
        _ => (name, None),
    }
}

/// Which definition of its qualified name a symbol is (`#k` in its id, else the first).
fn repeat_of(id: &str) -> u32 {
    id.rsplit_once('#')
        .and_then(|(_, k)| k.parse().ok())
        .unwrap_or(1)
}

/// The symbol `name` means, by the rules of the module comment.
pub fn resolve<S: Symbols + ?Sized>(symbols: &S, name: &str) -> Result<u32, NameError> {
    let exact = symbols.ids_containing(name);
    if let Some(&i) = exact.iter().find(|&&i| symbols.id(i) == name) {
        return Ok(i);
    }
    let (base, repeat) = split_repeat(name);
    let wanted = name_segments(base);
    if wanted.is_empty() {
        return Err(NameError::Unknown {
            name: name.to_string(),
            nearest: Vec::new(),
        });
    }
    // (as written, whole qualified name, product, not a stub, first definition): higher is
    // better.
    let mut best: Option<(bool, bool, bool, bool, bool)> = None;
    let mut found: Vec<u32> = Vec::new();
    let Some(last) = wanted.last() else {
        return Err(NameError::Unknown {
            name: name.to_string(),
            nearest: Vec::new(),
        });
    };
    // Its last segment is in its id: most symbols are never looked at.
    for i in symbols.ids_containing(last) {
        let id = symbols.id(i);
        let (segments, qualified) = symbol_segments(&id);
        // The name as written in the tree, or as a package re-exports it: `httpx.get` for
        // `httpx/_api.py::get` (private modules, `_x`, left out), which ranks after.
        let direct = segments.ends_with(&wanted);
        let public: Vec<String> = {
            let path = segments.len() - qualified;
            segments[..path]
                .iter()
                .filter(|s| !s.starts_with('_'))
                .chain(&segments[path..])
                .cloned()
                .collect()
        };
        let reexported = public.len() < segments.len() && public.ends_with(&wanted);
        if !(direct || reexported) || repeat.is_some_and(|k| repeat_of(&id) != k) {
            continue;
        }
        // A bare short name never means a module: modules are named by path.
        if symbols.kind(i) == NodeKind::Module && wanted.len() == 1 {
            continue;
        }
        let key = (
            direct,
            qualified > 0 && wanted.len() >= qualified,
            symbols.role(i) == Role::Product,
            !symbols.stub(i),
            !id.contains('#'),
        );
        match best {
            Some(b) if key < b => {}
            Some(b) if key == b => found.push(i),
            _ => {
                best = Some(key);
                found = vec![i];
            }
        }
    }
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(NameError::Unknown {
            name: name.to_string(),
            nearest: nearest_names(symbols, &wanted),
        }),
        _ => Err(NameError::Ambiguous {
            name: name.to_string(),
            candidates: found.iter().map(|&i| symbols.id(i).into_owned()).collect(),
        }),
    }
}

/// Ids of the symbols whose last segment is nearest to the name's (a typo), else whose last
/// segment contains it.
fn nearest_names<S: Symbols + ?Sized>(symbols: &S, wanted: &[String]) -> Vec<String> {
    let Some(last) = wanted.last() else {
        return Vec::new();
    };
    let all = 0..symbols.count() as u32;
    let names: Vec<Cow<'_, str>> = all.clone().map(|i| symbols.name(i)).collect();
    let name_refs: Vec<&str> = names.iter().map(|n| n.as_ref()).collect();
    let target = match tg_shared::suggest::nearest(last, &name_refs) {
        Some(n) => n,
        None => {
            let lower = last.to_lowercase();
            let mut out: Vec<String> = all
                .filter(|&i| {
                    symbols.kind(i) != NodeKind::Module
                        && names[i as usize].to_lowercase().contains(&lower)
                })
                .map(|i| symbols.id(i).into_owned())
                .collect();
            out.sort();
            out.truncate(LISTED);
            return out;
        }
    };
    // Those whose qualifiers match more of what was typed first (`Client.sned` lists
    // `Client.send` before `AsyncClient.send`), then by id.
    let qualifiers = &wanted[..wanted.len() - 1];
    let mut out: Vec<(usize, String)> = all
        .filter(|&i| names[i as usize] == target)
        .map(|i| {
            let id = symbols.id(i);
            let (segments, _) = symbol_segments(&id);
            let before = &segments[..segments.len().saturating_sub(1)];
            let matching = qualifiers
                .iter()
                .rev()
                .zip(before.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            (usize::MAX - matching, id.into_owned())
        })
        .collect();
    out.sort();
    out.truncate(LISTED);
    out.into_iter().map(|(_, id)| id).collect()
}

impl NameError {
    pub fn message(&self) -> String {
        match self {
            NameError::Unknown { name, nearest } if nearest.is_empty() => {
                format!("no symbol named `{name}`")
            }
            NameError::Unknown { name, nearest } => {
                format!(
                    "no symbol named `{name}`; did you mean {}?",
                    nearest.join(", ")
                )
            }
            NameError::Ambiguous { name, candidates } => format!(
                "`{name}` is ambiguous: {} symbols match: {}{}",
                candidates.len(),
                candidates[..candidates.len().min(LISTED)].join(", "),
                if candidates.len() > LISTED {
                    ", ..."
                } else {
                    ""
                }
            ),
        }
    }

    pub fn hint(&self) -> &'static str {
        match self {
            NameError::Unknown { .. } => "use an id (path::Qualified.name), a qualified name (Type.method, Type::method, module.function) or a unique short name; `tldrgraph query` finds ids",
            NameError::Ambiguous { .. } => "give the id (path::Qualified.name) of the one you mean, or more of its path",
        }
    }

    /// The error as a JSON object, for `--json`: what a client can act on without parsing prose.
    pub fn to_json(&self) -> serde_json::Value {
        let (kind, name, list) = match self {
            NameError::Unknown { name, nearest } => ("unknown_symbol", name, nearest),
            NameError::Ambiguous { name, candidates } => ("ambiguous_symbol", name, candidates),
        };
        serde_json::json!({
            "error": kind,
            "name": name,
            "message": self.message(),
            "hint": self.hint(),
            "candidates": list,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tg_shared::search::IndexSymbol;

    impl Symbols for [IndexSymbol] {
        fn count(&self) -> usize {
            self.len()
        }
        fn id(&self, i: u32) -> Cow<'_, str> {
            Cow::Borrowed(&self[i as usize].id)
        }
        fn name(&self, i: u32) -> Cow<'_, str> {
            Cow::Borrowed(&self[i as usize].name)
        }
        fn kind(&self, i: u32) -> NodeKind {
            self[i as usize].kind
        }
        fn role(&self, i: u32) -> Role {
            self[i as usize].role
        }
        fn stub(&self, i: u32) -> bool {
            self[i as usize].stub
        }
    }

    fn symbol(id: &str, kind: NodeKind, role: Role) -> IndexSymbol {
        let name = id
            .rsplit(['.', ':', '/'])
            .next()
            .unwrap_or(id)
            .split('#')
            .next()
            .unwrap_or(id)
            .to_string();
        IndexSymbol {
            kind,
            name,
            line_end: 2,
            role,
            vector: 0,
            ..IndexSymbol::with_id(id)
        }
    }

    fn fixture() -> Vec<IndexSymbol> {
        use NodeKind::*;
        vec![
            symbol("typer/main.py", Module, Role::Product),
            symbol("typer/main.py::get_command", Function, Role::Product),
            symbol("typer/main.py::Typer.command", Method, Role::Product),
            symbol(
                "typer/cli.py::TyperCLIGroup.get_command",
                Method,
                Role::Product,
            ),
            symbol("tests/test_main.py::get_command", Function, Role::Test),
            symbol("src/walk.rs::WalkBuilder::build", Method, Role::Product),
            symbol("src/dir.rs::IgnoreBuilder::build", Method, Role::Product),
            symbol("pkg/a.py::C.value", Method, Role::Product),
            symbol("pkg/a.py::C.value#2", Method, Role::Product),
            symbol("pkg/b.py::run", Function, Role::Product),
            symbol("pkg/c.py::run", Function, Role::Product),
            symbol("httpx/_api.py::get", Function, Role::Product),
            symbol("httpx/_client.py::Client.get", Method, Role::Product),
            symbol("src/codec/mod.rs::Codec::buffer", Method, Role::Product),
            symbol("pkg/__init__.py::setup", Function, Role::Product),
            // Two `@overload` signatures, then the implementation.
            IndexSymbol {
                stub: true,
                ..symbol(
                    "jinja2/environment.py::Environment.compile",
                    Method,
                    Role::Product,
                )
            },
            IndexSymbol {
                stub: true,
                ..symbol(
                    "jinja2/environment.py::Environment.compile#2",
                    Method,
                    Role::Product,
                )
            },
            symbol(
                "jinja2/environment.py::Environment.compile#3",
                Method,
                Role::Product,
            ),
        ]
    }

    fn id(symbols: &[IndexSymbol], name: &str) -> Result<String, NameError> {
        resolve(symbols, name).map(|i| symbols[i as usize].id.clone())
    }

    #[test]
    fn the_forms_an_agent_types_find_the_symbol() {
        let s = fixture();
        let want = |name: &str, expected: &str| {
            assert_eq!(id(&s, name).as_deref(), Ok(expected), "{name}")
        };
        want(
            "typer/main.py::Typer.command",
            "typer/main.py::Typer.command",
        );
        want("main.py::Typer.command", "typer/main.py::Typer.command");
        want("Typer.command", "typer/main.py::Typer.command");
        want("Typer::command", "typer/main.py::Typer.command");
        want("typer.main.Typer.command", "typer/main.py::Typer.command");
        want("WalkBuilder::build", "src/walk.rs::WalkBuilder::build");
        want("WalkBuilder.build", "src/walk.rs::WalkBuilder::build");
        want(
            "walk::WalkBuilder::build",
            "src/walk.rs::WalkBuilder::build",
        );
        // A function named exactly so beats a method that only ends with the name, and
        // product code beats a test helper of the same name.
        want("get_command", "typer/main.py::get_command");
        want("main.get_command", "typer/main.py::get_command");
        want(
            "TyperCLIGroup.get_command",
            "typer/cli.py::TyperCLIGroup.get_command",
        );
        // A property's getter over its setter.
        want("C.value", "pkg/a.py::C.value");
        // What a package re-exports from its private modules.
        want("httpx.get", "httpx/_api.py::get");
        want("httpx.Client.get", "httpx/_client.py::Client.get");
        // A repeated definition by its `#k`, as ids print it.
        want("C.value#2", "pkg/a.py::C.value#2");
        want("a.py::C.value#2", "pkg/a.py::C.value#2");
        want("C.value#1", "pkg/a.py::C.value");
        // A directory's module file, written as a path, names what its ids name.
        want(
            "codec/mod.rs::Codec::buffer",
            "src/codec/mod.rs::Codec::buffer",
        );
        want("mod.rs::Codec::buffer", "src/codec/mod.rs::Codec::buffer");
        want("pkg/__init__.py::setup", "pkg/__init__.py::setup");
        want("__init__.py::setup", "pkg/__init__.py::setup");
        assert!(id(&s, "C.value#3").is_err());
        // An overloaded method's name means its implementation, not its first signature; a
        // signature is still found by its id or its `#k`.
        let implementation = "jinja2/environment.py::Environment.compile#3";
        want("Environment.compile", implementation);
        want("compile", implementation);
        want("jinja2.environment.Environment.compile", implementation);
        want(
            "Environment.compile#1",
            "jinja2/environment.py::Environment.compile",
        );
        want(
            "jinja2/environment.py::Environment.compile",
            "jinja2/environment.py::Environment.compile",
        );
    }

    #[test]
    fn an_ambiguous_name_lists_its_candidates_and_a_typo_its_nearest() {
        let s = fixture();
        match id(&s, "run") {
            Err(NameError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates, vec!["pkg/b.py::run", "pkg/c.py::run"])
            }
            other => panic!("{other:?}"),
        }
        match id(&s, "build") {
            Err(NameError::Ambiguous { candidates, .. }) => assert_eq!(candidates.len(), 2),
            other => panic!("{other:?}"),
        }
        match id(&s, "TyperCLIGroup.get_comand") {
            Err(NameError::Unknown { nearest, .. }) => {
                assert_eq!(nearest[0], "typer/cli.py::TyperCLIGroup.get_command")
            }
            other => panic!("{other:?}"),
        }
        match id(&s, "get_comand") {
            Err(NameError::Unknown { nearest, .. }) => assert_eq!(
                nearest,
                vec![
                    "tests/test_main.py::get_command",
                    "typer/cli.py::TyperCLIGroup.get_command",
                    "typer/main.py::get_command"
                ]
            ),
            other => panic!("{other:?}"),
        }
        let json = resolve(&s[..], "run").unwrap_err().to_json();
        assert_eq!(json["error"], "ambiguous_symbol");
        assert_eq!(json["candidates"][1], "pkg/c.py::run");
    }
}
