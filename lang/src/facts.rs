//! What one file contributes to the graph before cross-file resolution ([`FileFacts`]): the
//! language walkers (tg-parse) write them, the extraction cache keeps them, the resolver
//! (tg-extract) reads them.

use crate::{role, Language};
use serde::{Deserialize, Serialize};
use tg_shared::hash::ContentHash;
use tg_shared::record::{EdgeKind, NodeKind, Role};

/// Everything one file contributes to the graph before cross-file resolution. Cached per file
/// content hash, so it holds nothing that depends on other files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileFacts {
    /// Symbol 0 is the module (the file itself); parents always precede children.
    pub symbols: Vec<Symbol>,
    pub imports: Vec<Import>,
    pub refs: Vec<Reference>,
    /// Line of the first syntax error, if the parser had to recover.
    pub syntax_error_line: Option<u32>,
    /// Line where nesting exceeded [`MAX_DEPTH`]; deeper code was not examined.
    pub depth_limit_line: Option<u32>,
    /// Names bound in a scope by something other than a definition or import (parameters,
    /// assignments): they shadow outer definitions, so a call through them binds nothing.
    pub locals: Vec<(u32, String)>,
    /// What the source says about the types of variables and attributes (annotations,
    /// constructor assignments, struct fields): how a call on a receiver finds its method.
    pub types: Vec<TypeFact>,
    /// The file's first lines say a tool wrote it ([`role::generated_marker`]).
    pub generated: bool,
}

impl FileFacts {
    /// Gives back the spare capacity the lists grew while extracting: every file's facts are
    /// held until the whole repository is resolved (the kernel's are over a gigabyte).
    pub fn shrink_to_fit(&mut self) {
        self.symbols.shrink_to_fit();
        self.imports.shrink_to_fit();
        self.refs.shrink_to_fit();
        self.locals.shrink_to_fit();
        self.types.shrink_to_fit();
    }

    /// `name`, a variable of `scope`, holds `value` (evaluated in that scope).
    pub fn variable_type(&mut self, scope: u32, name: String, value: Value, declared: bool) {
        self.types.push(TypeFact {
            scope,
            slot: TypeSlot::Variable,
            name,
            eval_scope: scope,
            value,
            declared,
        });
    }

    /// A digest of the file's *interface*: every fact that resolving another file may read,
    /// and that decides the file's own records' ids and roles. Left out are what only the
    /// file's own records and edges carry: lines, texts' hashes, signatures, docs, and the
    /// references that are not base classes (calls and reads are resolved for their own file
    /// only). Equal digests before and after an edit mean every other file's edges are
    /// unchanged, so only the edited file needs resolving again (the usual edit: a body).
    /// The order of symbols stays in: it is the order of their ids and of same-named
    /// redefinitions.
    pub fn interface_digest(&self) -> Result<ContentHash, String> {
        let mut interface = FileFacts {
            symbols: self.symbols.clone(),
            imports: self.imports.clone(),
            refs: (self.refs.iter())
                .filter(|r| r.kind == RefKind::Inherit)
                .cloned()
                .collect(),
            syntax_error_line: None,
            depth_limit_line: None,
            locals: self.locals.clone(),
            types: self.types.clone(),
            generated: self.generated,
        };
        for symbol in &mut interface.symbols {
            (symbol.line_start, symbol.line_end, symbol.text_start) = (0, 0, None);
            (symbol.signature, symbol.doc) = (None, None);
            symbol.hash = ContentHash::default();
        }
        // A function's own variables are read from other files only where something they can
        // see is evaluated in its scope.
        let is_read = self.scopes_read_from_outside();
        interface.types.retain(|t| is_read(t.scope));
        interface.locals.retain(|(scope, _)| is_read(*scope));
        // The resolver keeps locals as a set: a second assignment of a name binds nothing new.
        interface.locals.sort_unstable();
        interface.locals.dedup();
        for import in &mut interface.imports {
            import.line = 0;
        }
        for reference in &mut interface.refs {
            reference.line = 0;
        }
        Ok(ContentHash::of(&tg_shared::codec::encode(&interface)?))
    }

    /// Per symbol, whether resolving another file may read the variables of its scope: every
    /// scope but a function's, and a function's where a fact other files read (an attribute's
    /// `self.x = y`, a module or class variable) or a declared return is evaluated, or that
    /// holds a class (another file may reach the class, whose bases are looked up around it),
    /// with the functions around it (a name is looked up through the enclosing scopes). Other
    /// files' resolution never starts inside a function's body otherwise.
    fn scopes_read_from_outside(&self) -> impl Fn(u32) -> bool {
        let function_like = |kind: NodeKind| matches!(kind, NodeKind::Function | NodeKind::Method);
        let kind_of = |scope: u32| self.symbols.get(scope as usize).map(|s| s.kind);
        let mut read: Vec<bool> = (self.symbols.iter())
            .map(|s| !function_like(s.kind))
            .collect();
        let evaluated = (self.types.iter())
            .filter(|t| !kind_of(t.scope).is_some_and(function_like))
            .map(|t| t.eval_scope);
        let returns = (self.symbols.iter())
            .filter(|s| s.returns.is_some())
            .map(|s| s.parent.unwrap_or(0));
        let around_types = (self.symbols.iter())
            .filter(|s| !function_like(s.kind))
            .filter_map(|s| s.parent);
        let starts: Vec<u32> = evaluated.chain(returns).chain(around_types).collect();
        for scope in starts {
            // Parents precede their children, so a chain has at most one step per symbol.
            let mut current = Some(scope);
            for _ in 0..self.symbols.len() {
                let Some(s) = current else { break };
                let Some(flag) = read.get_mut(s as usize) else {
                    break;
                };
                *flag = true;
                current = self.symbols[s as usize].parent;
            }
        }
        move |scope: u32| read.get(scope as usize).copied().unwrap_or(true)
    }

    /// When one version of a file is the other plus symbols appended after all of the other's
    /// (a function added at the end of the file, or removed from there), and the facts outside
    /// them keep the interface: the names and qualified names of those symbols and of the
    /// symbols they are nested in (a constructor or call operator appended to a class is
    /// reached through the class's name). Only files that mention one of them
    /// ([`FileFacts::mentions`]) can resolve differently. `None` for any other change of the
    /// interface, for an appended module (Rust `mod x;`), and when the rest of the file itself
    /// names one of them in what other files read (an import it shadows, a declared return,
    /// a base), which would reach files that never name it.
    pub fn appended_names(older: &FileFacts, newer: &FileFacts) -> Option<Vec<String>> {
        let (short, long) = match older.symbols.len().cmp(&newer.symbols.len()) {
            std::cmp::Ordering::Less => (older, newer),
            std::cmp::Ordering::Greater => (newer, older),
            std::cmp::Ordering::Equal => return None,
        };
        let kept = short.symbols.len() as u32;
        let appended = &long.symbols[kept as usize..];
        if appended.iter().any(|s| s.kind == NodeKind::Module) {
            return None;
        }
        // The longer version without what lives inside the appended symbols. A fact about an
        // older symbol (an attribute an appended method assigns) stays, and so differs.
        fn outside<T: Clone>(items: &[T], kept: u32, scope: impl Fn(&T) -> u32) -> Vec<T> {
            items.iter().filter(|i| scope(i) < kept).cloned().collect()
        }
        let trimmed = FileFacts {
            symbols: long.symbols[..kept as usize].to_vec(),
            imports: outside(&long.imports, kept, |i| i.scope),
            refs: outside(&long.refs, kept, |r| r.scope),
            locals: outside(&long.locals, kept, |(scope, _)| *scope),
            types: outside(&long.types, kept, |t| t.scope),
            syntax_error_line: long.syntax_error_line,
            depth_limit_line: long.depth_limit_line,
            generated: long.generated,
        };
        let same = match (trimmed.interface_digest(), short.interface_digest()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same {
            return None;
        }
        let mut names = std::collections::BTreeSet::new();
        for symbol in appended {
            let mut current = Some(symbol);
            while let Some(s) = current.filter(|s| s.kind != NodeKind::Module) {
                names.insert(s.name.clone());
                // C names a struct's type `struct foo` where the symbol's name is `foo`.
                names.insert(s.qualname.clone());
                current = s.parent.and_then(|p| long.symbols.get(p as usize));
            }
        }
        let named: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
        let exported = |facts: &FileFacts| facts.mentions(&named) == Mention::Exported;
        match exported(&trimmed) || exported(short) {
            true => None,
            false => Some(names.into_iter().collect()),
        }
    }

    /// How the file names one of `names`: in what other files' resolution reads of it (an
    /// import binding, a base, a type fact or a variable other files can reach, a declared
    /// return, an impl's type), in what only its own edges come from (calls and reads, its
    /// functions' own variables), or not at all.
    pub fn mentions(&self, names: &std::collections::HashSet<&str>) -> Mention {
        let named = |name: &str| names.contains(name);
        let is_read = self.scopes_read_from_outside();
        let exported = self.imports.iter().any(|i| match &i.binding {
            Binding::Member { name, member, .. } => named(name) || named(member),
            Binding::Module { name, .. } => named(name),
            Binding::None | Binding::Star { .. } => false,
        }) || (self.refs.iter())
            .any(|r| r.kind == RefKind::Inherit && target_mentions(&r.target, &named))
            || (self.types.iter())
                .any(|t| is_read(t.scope) && (named(&t.name) || value_mentions(&t.value, &named)))
            || self.symbols.iter().any(|s| {
                s.returns
                    .as_ref()
                    .is_some_and(|v| value_mentions(v, &named))
                    || [&s.owner_type, &s.implements]
                        .into_iter()
                        .any(|name| name.as_deref().is_some_and(named))
            });
        if exported {
            return Mention::Exported;
        }
        let own = (self.refs.iter()).any(|r| target_mentions(&r.target, &named))
            || (self.types.iter()).any(|t| named(&t.name) || value_mentions(&t.value, &named));
        match own {
            true => Mention::Own,
            false => Mention::None,
        }
    }

    /// The ids of the file's symbols, in order ([`tg_shared::record::symbol_ids`]).
    pub fn symbol_ids(&self, path: &str) -> Vec<String> {
        tg_shared::record::symbol_ids(
            path,
            self.symbols.iter().map(|s| (s.kind, s.qualname.as_str())),
        )
    }

    /// The role of symbol `i` of the file at `path`: generated files whole, then test-only
    /// symbols (Rust `#[cfg(test)]`) and files declared as test modules (`test_module`, from
    /// another file's `#[cfg(test)] mod x;`), then the language's path conventions.
    pub fn role(&self, lang: &dyn Language, path: &str, i: usize, test_module: bool) -> Role {
        if self.generated || role::generated_path(path) {
            Role::Generated
        } else if test_module || self.symbols[i].test_only {
            Role::Test
        } else {
            lang.role(path)
        }
    }
}

/// How a file names something ([`FileFacts::mentions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mention {
    None,
    /// Only where its own edges come from: resolving the file again is enough.
    Own,
    /// Where other files' resolution reads it: they may change without naming it themselves.
    Exported,
}

fn target_mentions(target: &Target, named: &dyn Fn(&str) -> bool) -> bool {
    match target {
        Target::Name(name)
        | Target::SelfMember(name)
        | Target::SuperMember(name)
        | Target::Member(name) => named(name),
        Target::Path(parts) => parts.iter().any(|p| named(p)),
        Target::Qualified(qualified) => qualified.1.iter().any(|p| named(p)),
        Target::Method { receiver, name } => named(name) || value_mentions(receiver, named),
    }
}

fn value_mentions(value: &Value, named: &dyn Fn(&str) -> bool) -> bool {
    match value {
        Value::Name(name) | Value::Fixture(name) => named(name),
        Value::SelfType => false,
        Value::Call(target) => target_mentions(target, named),
        Value::Attr(inner, attr) => named(attr) || value_mentions(inner, named),
        Value::Type(parts) => parts.iter().any(|p| named(p)),
        Value::Elements(inner) | Value::ElementOf(inner) => value_mentions(inner, named),
    }
}

/// A value as the source writes it, for working out which class it is an instance of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// A variable or parameter, through the scopes.
    Name(String),
    /// The enclosing class or impl's type (`self`, `cls`, `Self`).
    SelfType,
    /// What calling the target gives: an instance of a class, or the callee's declared return.
    Call(Box<Target>),
    /// An attribute or field of a value, by its declared type in the value's class.
    Attr(Box<Value>, String),
    /// A type named in an annotation (`T`, `pkg.T`; wrappers such as `Optional[T]` or
    /// `Box<T>` already removed), resolved in the scope it stands in.
    Type(Vec<String>),
    /// A collection whose elements are the inner value (`list[T]`, `Sequence[T]`, `Vec<T>`,
    /// `&[T]`): not an instance itself, but what a loop over it binds.
    Elements(Box<Value>),
    /// One element of the iterable value (`for x in self.items`).
    ElementOf(Box<Value>),
    /// What a test framework injects for a parameter of this name (a pytest fixture of the
    /// same name, in the test's file or a `conftest.py` above it): its declared return type.
    Fixture(String),
}

/// Which name a [`TypeFact`] types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypeSlot {
    /// A variable or parameter of the scope symbol.
    Variable,
    /// An attribute (field) of the scope symbol, a class or struct.
    Attribute,
}

/// `name` (a variable of `scope`, or an attribute of the class `scope`) holds `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeFact {
    pub scope: u32,
    pub slot: TypeSlot,
    pub name: String,
    /// The symbol in whose scope `value` is evaluated (the method of `self.x = T()`).
    pub eval_scope: u32,
    pub value: Value,
    /// A declaration (annotation, field type) rather than an assignment: declarations win.
    pub declared: bool,
}

/// Whether scopes nested inside a symbol see the names it defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScopeRule {
    /// Modules and functions: nested functions see their names.
    Transparent,
    /// Python class bodies: their names are invisible to the methods inside.
    Opaque,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symbol {
    pub kind: NodeKind,
    pub name: String,
    /// The qualified name that follows `path::` in the id (empty for the module), without `#k`.
    pub qualname: String,
    pub parent: Option<u32>,
    pub line_start: u32,
    pub line_end: u32,
    /// The first line of the text `hash` covers, where it begins above `line_start` (Python's
    /// decorators, which are not part of the definition's lines but are part of its text).
    pub text_start: Option<u32>,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub hash: ContentHash,
    pub scope: ScopeRule,
    /// For methods defined outside their type's body (Rust `impl T`): the type's name.
    pub owner_type: Option<String>,
    /// The declared return type (`-> T`), evaluated in the parent's scope.
    pub returns: Option<Value>,
    /// A signature without a body that calls never reach (`@typing.overload`).
    pub stub: bool,
    /// Defined under a condition (`if`, `try`/`except`, `#[cfg(...)]`), so another same-named
    /// definition may be the one that runs.
    pub conditional: bool,
    /// Compiled for tests only (Rust `#[cfg(test)]`, `#[test]`, `mod tests`): code outside
    /// tests never calls it.
    pub test_only: bool,
    /// A test fixture (`@pytest.fixture`): injected by name into the tests' parameters.
    pub fixture: bool,
    /// Runs when read as an attribute (`@property`, `@functools.cached_property`): a read of it
    /// is a call.
    pub getter: bool,
    /// A test its language's runner collects by an attribute (Rust `#[test]`,
    /// `#[tokio::test]`), as opposed to a helper of the tests.
    pub test_case: bool,
    /// A property's setter or deleter (`@x.setter`): it runs on assignment or `del`, so neither
    /// a call nor a read of the name reaches it, and it does not replace the getter before it.
    pub accessor: bool,
    /// A method of a trait implementation (Rust `impl Display for T`): the trait's name.
    pub implements: Option<String>,
}

/// A module another module names: tried in order, the first that exists wins.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ModuleRef {
    /// A language module key (Python `pkg.mod`, Rust `<crate>crate::a`, C path suffix `x.h`).
    Key(String),
    /// An exact repo-relative path.
    Path(String),
}

/// What an import makes visible in its scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Binding {
    /// Nothing (a C `#include`, a Python `import a.b` whose name is bound separately).
    None,
    /// `name` refers to the module (`import a.b as m`, or the head of `import a.b`).
    Module { name: String, module: String },
    /// `name` refers to `member` of `module` (`from m import x as name`).
    Member {
        name: String,
        module: String,
        member: String,
    },
    /// Every top-level name of `module` (`from m import *`, Rust `use m::*`).
    Star { module: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// Symbol whose scope the binding lives in (0: module level).
    pub scope: u32,
    pub line: u32,
    /// `imports` or `includes`; `None` when the statement only binds names (no module edge).
    pub edge: Option<EdgeKind>,
    /// The module the edge points at.
    pub target: Vec<ModuleRef>,
    pub binding: Binding,
    /// Whether the statement makes the module's file part of this one (Rust `mod x;`).
    pub declares: Declares,
}

/// What an import statement says of the file it names, beyond binding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Declares {
    /// Only an import: the module is a file of its own standing.
    Nothing,
    /// Rust `mod x;`: the file is a submodule, compiled whenever this file is.
    Submodule,
    /// Rust `#[cfg(test)] mod x;` (or `mod tests;`): a submodule compiled for tests only, so
    /// the file is test code wherever it lies.
    TestSubmodule,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefKind {
    Call,
    Inherit,
    /// A function returns a function it defines (`return decorator`): a `calls` edge with
    /// resolution `closure`, so a trace passes through decorator and handler factories.
    ReturnsClosure,
    /// A member read without a call (`self.name`, `client.name`): a `calls` edge only where it
    /// reaches a getter ([`Symbol::getter`]), whose body the read runs. Anything else read is
    /// data, not an edge, and not counted as unresolved.
    Read,
}

/// How the source names the target of a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// A bare name, looked up through the scopes (`f()`).
    Name(String),
    /// A dotted or `::` chain rooted at a name (`mod.f()`, `Type::new()`, `a.b.C`).
    Path(Vec<String>),
    /// A chain rooted at a module key the language computed (Rust `crate::a::f`): the key,
    /// then the names after it. Boxed, as the method's name is: the widest variant sets the
    /// size of every reference (a kernel has millions).
    Qualified(Box<(String, Vec<String>)>),
    /// A member of the enclosing class or impl (`self.m()`, `Self::m()`, `cls.m()`).
    SelfMember(String),
    /// A member of the enclosing class's bases (`super().m()`).
    SuperMember(String),
    /// A method of a receiver value (`Client(app).post()`, `x.m()` in Rust): bound through the
    /// receiver's type when the source states it, never by the method's name alone.
    Method {
        receiver: Box<Value>,
        name: Box<str>,
    },
    /// A member of a receiver whose type cannot be stated (`f()[0].m()`): never bound.
    Member(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The symbol making the reference (the edge's source).
    pub scope: u32,
    pub line: u32,
    pub kind: RefKind,
    pub target: Target,
}
