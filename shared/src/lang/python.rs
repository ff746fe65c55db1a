//! Python: classes, functions and methods (sync, async, decorated, nested, inside `if`/`try`),
//! imports (absolute, relative, aliased, star), calls and base classes.
//!
//! Scoping follows Python: a def's decorators, default values and annotations, and a class's
//! bases, are evaluated in the enclosing scope, so the calls in them belong to that scope.

use super::util::{end_line, first_doc_line, header_before, start_line, text};
use super::{
    Binding, FileFacts, Import, Language, ModuleRef, RefKind, Reference, ScopeRule, Symbol, Target,
    MAX_DEPTH,
};
use crate::hash::content_hash;
use crate::record::{EdgeKind, NodeKind};
use tree_sitter::{Node, TreeCursor};

pub struct Python;

impl Language for Python {
    fn id(&self) -> &'static str {
        "python"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["py", "pyi"]
    }

    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_python::LANGUAGE.into()
    }

    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts {
        Walker::new(path, source).run(tree.root_node())
    }

    fn module_keys(&self, path: &str) -> Vec<String> {
        let parts = module_parts(path);
        (0..parts.len()).map(|i| parts[i..].join(".")).collect()
    }

    fn key_separator(&self) -> &'static str {
        "."
    }

    fn is_builtin(&self, name: &str) -> bool {
        BUILTINS.binary_search(&name).is_ok()
    }

    fn is_common_member(&self, name: &str) -> bool {
        COMMON_MEMBERS.binary_search(&name).is_ok()
    }
}

/// `a/b/c.py` → `[a, b, c]`; a package's `__init__.py` is the package itself.
fn module_parts(path: &str) -> Vec<&str> {
    let stem = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".pyi"))
        .unwrap_or(path);
    let mut parts: Vec<&str> = stem.split('/').filter(|p| !p.is_empty()).collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    parts
}

struct Task<'t> {
    node: Node<'t>,
    scope: u32,
    depth: usize,
    /// The `decorated_definition` around a def or class: its text is part of the symbol's hash.
    decorated: Option<Node<'t>>,
}

struct Walker<'s> {
    path: &'s str,
    source: &'s str,
    facts: FileFacts,
    /// The dotted package a relative import starts from (`a.b` for `a/b/c.py` and `a/b/__init__.py`).
    package: Vec<&'s str>,
}

impl<'s> Walker<'s> {
    fn new(path: &'s str, source: &'s str) -> Self {
        let mut package = module_parts(path);
        let is_init = path.ends_with("/__init__.py")
            || path.ends_with("/__init__.pyi")
            || path == "__init__.py"
            || path == "__init__.pyi";
        if !is_init {
            package.pop();
        }
        Walker {
            path,
            source,
            facts: FileFacts::default(),
            package,
        }
    }

    fn run(mut self, root: Node) -> FileFacts {
        let doc = docstring(Some(root), self.source);
        self.facts = FileFacts::for_module(self.path, self.source, root, doc);
        let mut stack = vec![Task {
            node: root,
            scope: 0,
            depth: 0,
            decorated: None,
        }];
        let mut children = Vec::new();
        // One cursor for the whole walk: `node.walk()` per node allocates.
        let mut cursor = root.walk();
        while let Some(task) = stack.pop() {
            if task.depth > MAX_DEPTH {
                self.facts
                    .depth_limit_line
                    .get_or_insert(start_line(task.node));
                continue;
            }
            children.clear();
            self.visit(&task, &mut children, &mut cursor);
            // Reverse so the stack pops children in source order (ids count repeats in order).
            stack.extend(children.drain(..).rev());
        }
        self.facts
    }

    fn visit<'t>(
        &mut self,
        task: &Task<'t>,
        next: &mut Vec<Task<'t>>,
        cursor: &mut TreeCursor<'t>,
    ) {
        let node = task.node;
        let child_task = |node: Node<'t>, scope: u32| Task {
            node,
            scope,
            depth: task.depth + 1,
            decorated: None,
        };
        match node.kind() {
            "decorated_definition" => {
                for child in node.named_children(cursor) {
                    if child.kind() == "decorator" {
                        next.push(child_task(child, task.scope));
                    }
                }
                if let Some(def) = node.child_by_field_name("definition") {
                    next.push(Task {
                        decorated: Some(node),
                        ..child_task(def, task.scope)
                    });
                }
                return;
            }
            "function_definition" | "class_definition" => {
                self.definition(task, next);
                return;
            }
            "call" => {
                if let Some(function) = node.child_by_field_name("function") {
                    if let Some(target) = call_target(function, self.source) {
                        self.facts.refs.push(Reference {
                            scope: task.scope,
                            line: start_line(node),
                            kind: RefKind::Call,
                            target,
                        });
                    }
                }
            }
            "import_statement" => {
                self.import(node, task.scope);
                return;
            }
            "import_from_statement" => {
                self.import_from(node, task.scope);
                return;
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind_locals(left, task.scope);
                }
            }
            "as_pattern" => {
                if let Some(alias) = node.child_by_field_name("alias") {
                    self.bind_locals(alias, task.scope);
                }
            }
            "named_expression" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.bind_locals(name, task.scope);
                }
            }
            "future_import_statement" | "comment" => return,
            _ => {}
        }
        for child in node.named_children(cursor) {
            // Leaves (names, literals, operators) hold nothing to extract: a third of all nodes.
            if child.child_count() > 0 {
                next.push(child_task(child, task.scope));
            }
        }
    }

    fn definition<'t>(&mut self, task: &Task<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let source = self.source;
        let is_class = node.kind() == "class_definition";
        let Some(name) = node.child_by_field_name("name").map(|n| text(n, source)) else {
            return;
        };
        let body = node.child_by_field_name("body");
        let parent = &self.facts.symbols[task.scope as usize];
        let kind = if is_class {
            NodeKind::Class
        } else if parent.kind == NodeKind::Class {
            NodeKind::Method
        } else {
            NodeKind::Function
        };
        let qualname = if parent.qualname.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", parent.qualname, name)
        };
        let hashed = task.decorated.unwrap_or(node);
        let index = self.facts.symbols.len() as u32;
        self.facts.symbols.push(Symbol {
            kind,
            name: name.to_string(),
            qualname,
            parent: Some(task.scope),
            line_start: start_line(node),
            line_end: code_end_line(node),
            signature: Some(header_before(node, body, source)),
            doc: docstring(body, source),
            hash: content_hash(text(hashed, source).as_bytes()),
            scope: if is_class {
                ScopeRule::Opaque
            } else {
                ScopeRule::Transparent
            },
            owner_type: None,
        });
        let depth = task.depth + 1;
        let outer = |node| Task {
            node,
            scope: task.scope,
            depth,
            decorated: None,
        };
        if is_class {
            if let Some(bases) = node.child_by_field_name("superclasses") {
                let mut cursor = bases.walk();
                for base in bases.named_children(&mut cursor) {
                    if let Some(target) = reference_target(base, source) {
                        self.facts.refs.push(Reference {
                            scope: index,
                            line: start_line(base),
                            kind: RefKind::Inherit,
                            target,
                        });
                    }
                }
                next.push(outer(bases));
            }
        } else {
            if let Some(parameters) = node.child_by_field_name("parameters") {
                self.bind_parameters(parameters, index);
            }
            for field in ["parameters", "return_type"] {
                if let Some(child) = node.child_by_field_name(field) {
                    next.push(outer(child));
                }
            }
        }
        if let Some(body) = body {
            next.push(Task {
                node: body,
                scope: index,
                depth,
                decorated: None,
            });
        }
    }

    /// Identifiers bound by an assignment target (`x`, `a, b`, `(a, [b, *c])`), not `a.x` or `a[i]`.
    fn bind_locals(&mut self, target: Node, scope: u32) {
        let mut stack = vec![target];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "identifier" => self
                    .facts
                    .locals
                    .push((scope, text(node, self.source).to_string())),
                "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "list_splat_pattern"
                | "expression_list"
                | "tuple"
                | "list"
                | "as_pattern_target"
                | "parenthesized_expression" => {
                    let mut cursor = node.walk();
                    stack.extend(node.named_children(&mut cursor));
                }
                _ => {}
            }
        }
    }

    fn bind_parameters(&mut self, parameters: Node, scope: u32) {
        let mut cursor = parameters.walk();
        for param in parameters.named_children(&mut cursor) {
            let name = match param.kind() {
                "identifier" => Some(param),
                "default_parameter" | "typed_default_parameter" => {
                    param.child_by_field_name("name")
                }
                "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                    let mut inner = param.walk();
                    let first = param
                        .named_children(&mut inner)
                        .find(|c| c.kind() == "identifier");
                    first
                }
                _ => None,
            };
            if let Some(name) = name {
                self.facts
                    .locals
                    .push((scope, text(name, self.source).to_string()));
            }
        }
    }

    /// `import a.b.c` binds `a`; `import a.b as m` binds `m`. Both point an edge at `a.b(.c)`.
    fn import(&mut self, node: Node, scope: u32) {
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (dotted, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ),
                _ => (Some(name), None),
            };
            let Some(dotted) = dotted.map(|d| text(d, self.source)) else {
                continue;
            };
            let dotted = squash(dotted);
            let binding = match alias {
                Some(alias) => Binding::Module {
                    name: text(alias, self.source).to_string(),
                    module: dotted.clone(),
                },
                None => {
                    let head = dotted.split('.').next().unwrap_or(&dotted).to_string();
                    Binding::Module {
                        name: head.clone(),
                        module: head,
                    }
                }
            };
            self.facts.imports.push(Import {
                scope,
                line: start_line(node),
                edge: Some(EdgeKind::Imports),
                target: vec![ModuleRef::Key(dotted)],
                binding,
            });
        }
    }

    /// `from m import x as y`: the edge goes to the submodule `m.x` if there is one, else to `m`.
    fn import_from(&mut self, node: Node, scope: u32) {
        let source = self.source;
        let Some(module_node) = node.child_by_field_name("module_name") else {
            return;
        };
        let module = if module_node.kind() == "relative_import" {
            self.relative_module(module_node)
        } else {
            squash(text(module_node, source))
        };
        let line = start_line(node);
        let mut cursor = node.walk();
        let mut any_name = false;
        for name in node.children_by_field_name("name", &mut cursor) {
            any_name = true;
            let (member, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ),
                _ => (Some(name), None),
            };
            let Some(member) = member.map(|m| squash(text(m, source))) else {
                continue;
            };
            let bound = alias.map_or_else(|| member.clone(), |a| text(a, source).to_string());
            self.facts.imports.push(Import {
                scope,
                line,
                edge: Some(EdgeKind::Imports),
                target: vec![
                    ModuleRef::Key(join_key(&module, &member)),
                    ModuleRef::Key(module.clone()),
                ],
                binding: Binding::Member {
                    name: bound,
                    module: module.clone(),
                    member,
                },
            });
        }
        let mut cursor = node.walk();
        let star = node
            .named_children(&mut cursor)
            .any(|c| c.kind() == "wildcard_import");
        if star || !any_name {
            self.facts.imports.push(Import {
                scope,
                line,
                edge: Some(EdgeKind::Imports),
                target: vec![ModuleRef::Key(module.clone())],
                binding: if star {
                    Binding::Star { module }
                } else {
                    Binding::None
                },
            });
        }
    }

    /// `from ..x import y` in `a/b/c.py` names `a.x`. Too many dots name nothing we can find.
    fn relative_module(&self, node: Node) -> String {
        let mut dots = 0;
        let mut rest = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "import_prefix" => dots = text(child, self.source).matches('.').count(),
                "dotted_name" => rest = Some(squash(text(child, self.source))),
                _ => {}
            }
        }
        let up = dots.saturating_sub(1);
        if up > self.package.len() {
            return format!("<beyond the root>{}", rest.unwrap_or_default());
        }
        let base = self.package[..self.package.len() - up].join(".");
        match rest {
            Some(rest) => join_key(&base, &rest),
            None => base,
        }
    }
}

/// The last line of code of a compound statement: comments after the last statement belong to
/// the block in tree-sitter's tree, but not to the definition (nor to Python's `end_lineno`).
fn code_end_line(node: Node) -> u32 {
    let mut current = node;
    for _ in 0..MAX_DEPTH {
        let compound = matches!(
            current.kind(),
            "function_definition"
                | "class_definition"
                | "decorated_definition"
                | "block"
                | "if_statement"
                | "elif_clause"
                | "else_clause"
                | "for_statement"
                | "while_statement"
                | "try_statement"
                | "except_clause"
                | "except_group_clause"
                | "finally_clause"
                | "with_statement"
                | "match_statement"
                | "case_clause"
        );
        if !compound {
            break;
        }
        let mut last = None;
        for i in (0..current.named_child_count()).rev() {
            if let Some(child) = current.named_child(i as u32) {
                if child.kind() != "comment" {
                    last = Some(child);
                    break;
                }
            }
        }
        match last {
            Some(child) => current = child,
            None => break,
        }
    }
    end_line(current).max(start_line(node))
}

fn join_key(module: &str, member: &str) -> String {
    if module.is_empty() {
        member.to_string()
    } else {
        format!("{module}.{member}")
    }
}

/// A dotted name written with spaces or line continuations (`a . b`) as `a.b`.
fn squash(dotted: &str) -> String {
    dotted
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\\')
        .collect()
}

/// The target of a call: `f()`, `a.b.f()`, `self.m()`, `super().m()`, or `<expr>.m()`.
fn call_target(function: Node, source: &str) -> Option<Target> {
    match function.kind() {
        "identifier" => Some(Target::Name(text(function, source).to_string())),
        "attribute" => {
            let attr = function.child_by_field_name("attribute")?;
            let attr_name = text(attr, source).to_string();
            let mut chain = vec![attr_name.clone()];
            let mut object = function.child_by_field_name("object")?;
            while object.kind() == "attribute" {
                chain.push(text(object.child_by_field_name("attribute")?, source).to_string());
                object = object.child_by_field_name("object")?;
            }
            match object.kind() {
                "identifier" => {
                    let head = text(object, source);
                    if chain.len() == 1 && (head == "self" || head == "cls") {
                        return Some(Target::SelfMember(attr_name));
                    }
                    chain.push(head.to_string());
                    chain.reverse();
                    Some(Target::Path(chain))
                }
                "call" if chain.len() == 1 && is_super_call(object, source) => {
                    Some(Target::SuperMember(attr_name))
                }
                _ => Some(Target::Member(attr_name)),
            }
        }
        _ => None,
    }
}

fn is_super_call(call: Node, source: &str) -> bool {
    call.child_by_field_name("function")
        .is_some_and(|f| f.kind() == "identifier" && text(f, source) == "super")
}

/// A base class written as a name or a dotted path; anything else (calls, keywords) is not one.
fn reference_target(node: Node, source: &str) -> Option<Target> {
    match node.kind() {
        "identifier" => Some(Target::Name(text(node, source).to_string())),
        "attribute" => {
            let mut chain = Vec::new();
            let mut cur = node;
            while cur.kind() == "attribute" {
                chain.push(text(cur.child_by_field_name("attribute")?, source).to_string());
                cur = cur.child_by_field_name("object")?;
            }
            if cur.kind() != "identifier" {
                return None;
            }
            chain.push(text(cur, source).to_string());
            chain.reverse();
            Some(Target::Path(chain))
        }
        _ => None,
    }
}

/// The first line of the docstring of a module or def body.
fn docstring(body: Option<Node>, source: &str) -> Option<String> {
    let body = body?;
    let mut cursor = body.walk();
    let first = body
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" {
        return None;
    }
    let mut content = String::new();
    let mut cursor = string.walk();
    for part in string.named_children(&mut cursor) {
        if part.kind() == "string_content" {
            content.push_str(text(part, source));
        }
    }
    first_doc_line(&content)
}

#[rustfmt::skip]
/// Python's builtins (sorted for binary search): calls to these never bind to a repository
/// symbol unless the repository shadows them in scope.
const BUILTINS: &[&str] = &[
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BlockingIOError",
    "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError",
    "ConnectionResetError", "DeprecationWarning", "EOFError", "EnvironmentError",
    "Exception", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError",
    "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
    "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError",
    "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration",
    "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError",
    "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError",
    "Warning", "ZeroDivisionError", "__import__", "abs", "aiter", "all", "anext", "any",
    "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir",
    "divmod", "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset",
    "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
    "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
    "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property",
    "quit", "range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted",
    "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
];

#[rustfmt::skip]
/// Methods of builtin types and common library objects (sorted).
const COMMON_MEMBERS: &[&str] = &[
    "__enter__", "__exit__", "__init__", "add", "append", "clear", "close", "copy", "count",
    "decode", "discard", "encode", "endswith", "extend", "find", "flush", "format", "get",
    "group", "index", "insert", "items", "join", "keys", "lower", "lstrip", "match", "pop",
    "popitem", "read", "readline", "readlines", "remove", "replace", "reverse", "rstrip",
    "seek", "send", "setdefault", "sort", "split", "splitlines", "startswith", "strip",
    "tell", "update", "upper", "values", "write", "writelines",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
        assert!(COMMON_MEMBERS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn module_keys_cover_every_suffix_and_packages() {
        let py = Python;
        assert_eq!(
            py.module_keys("src/pkg/mod.py"),
            vec!["src.pkg.mod", "pkg.mod", "mod"]
        );
        assert_eq!(py.module_keys("pkg/__init__.py"), vec!["pkg"]);
    }

    #[test]
    fn relative_imports_resolve_against_the_package() {
        let walker = Walker::new("a/b/c.py", "");
        assert_eq!(walker.package, vec!["a", "b"]);
        let init = Walker::new("a/b/__init__.py", "");
        assert_eq!(init.package, vec!["a", "b"]);
    }
}
