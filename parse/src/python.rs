//! Python: classes, functions and methods (sync, async, decorated, nested, inside `if`/`try`),
//! imports (absolute, relative, aliased, star), calls and base classes.
//!
//! Scoping follows Python: a def's decorators, default values and annotations, and a class's
//! bases, are evaluated in the enclosing scope, so the calls in them belong to that scope.

use crate::util::{end_line, first_doc_line, header_before, start_line, text};
use crate::{module_facts, Grammar, MAX_DEPTH};
use tg_lang::python::{module_parts, Python};
use tg_lang::{
    Binding, Declares, FileFacts, Import, ModuleRef, RefKind, Reference, ScopeRule, Symbol, Target,
    TypeFact, TypeSlot, Value,
};
use tg_shared::hash::ContentHash;
use tg_shared::record::{EdgeKind, NodeKind};
use tree_sitter::{Node, TreeCursor};

impl Grammar for Python {
    fn grammar(&self, _path: &str) -> tree_sitter::Language {
        tree_sitter_python::LANGUAGE.into()
    }

    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts {
        Walker::new(path, source).run(tree.root_node())
    }
}

struct Task<'t> {
    node: Node<'t>,
    scope: u32,
    depth: usize,
    /// The `decorated_definition` around a def or class: its text is part of the symbol's hash.
    decorated: Option<Node<'t>>,
    /// Inside an `if`, `try` or `match` of the current scope.
    conditional: bool,
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
        self.facts = module_facts(self.path, self.source, root, doc);
        let mut stack = vec![Task {
            node: root,
            scope: 0,
            depth: 0,
            decorated: None,
            conditional: false,
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
        let conditional = task.conditional
            || matches!(
                node.kind(),
                "if_statement" | "try_statement" | "match_statement"
            );
        let child_task = |node: Node<'t>, scope: u32| Task {
            node,
            scope,
            depth: task.depth + 1,
            decorated: None,
            conditional,
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
                    let target = call_target(function, self.source);
                    self.reference(task.scope, node, RefKind::Call, target);
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
            "assignment" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind_locals(left, task.scope);
                    self.assignment_type(node, left, task.scope);
                }
            }
            "augmented_assignment" | "for_statement" | "for_in_clause" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind_locals(left, task.scope);
                    if node.kind() == "for_statement" {
                        self.loop_type(node, left, task.scope);
                    }
                }
            }
            "return_statement" => self.returned_closure(node, task.scope),
            "as_pattern" => {
                if let Some(alias) = node.child_by_field_name("alias") {
                    self.bind_locals(alias, task.scope);
                    self.with_target_type(node, alias, task.scope);
                }
            }
            "named_expression" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.bind_locals(name, task.scope);
                }
            }
            "future_import_statement" | "comment" => return,
            "attribute" if is_read(node) => {
                let target = call_target(node, self.source);
                self.reference(task.scope, node, RefKind::Read, target);
            }
            _ => {}
        }
        for child in node.named_children(cursor) {
            // Leaves (names, literals, operators) hold nothing to extract: a third of all nodes.
            if child.child_count() > 0 {
                next.push(child_task(child, task.scope));
            }
        }
    }

    /// A reference from `scope` at `at`'s line, when its target could be read.
    fn reference(&mut self, scope: u32, at: Node, kind: RefKind, target: Option<Target>) {
        if let Some(target) = target {
            self.facts.refs.push(Reference {
                scope,
                line: start_line(at),
                kind,
                target,
            });
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
        let decorators = decorator_names(task.decorated, source);
        let index = self.facts.symbols.len() as u32;
        self.facts.symbols.push(Symbol {
            kind,
            name: name.to_string(),
            qualname,
            parent: Some(task.scope),
            line_start: start_line(node),
            line_end: code_end_line(node),
            text_start: task
                .decorated
                .map(start_line)
                .filter(|&line| line < start_line(node)),
            signature: Some(header_before(node, body, source)),
            doc: docstring(body, source),
            hash: ContentHash::of(text(hashed, source).as_bytes()),
            scope: if is_class {
                ScopeRule::Opaque
            } else {
                ScopeRule::Transparent
            },
            owner_type: None,
            returns: return_value(node, kind, source),
            stub: decorators.iter().any(|d| is_overload(d)),
            conditional: task.conditional,
            test_only: false,
            fixture: decorators.iter().any(|d| is_fixture(d)),
            getter: !is_class && decorators.iter().any(|d| is_getter(d)),
            test_case: false,
            accessor: !is_class && decorators.iter().any(|d| is_accessor(d)),
            implements: None,
        });
        let depth = task.depth + 1;
        let outer = |node| Task {
            node,
            scope: task.scope,
            depth,
            decorated: None,
            conditional: task.conditional,
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
                let receives_self =
                    kind == NodeKind::Method && !decorators.iter().any(|d| d == "staticmethod");
                // pytest injects fixtures by parameter name into tests and other fixtures.
                let injected = name.starts_with("test") || decorators.iter().any(|d| is_fixture(d));
                self.parameter_types(parameters, index, task.scope, receives_self, injected);
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
                conditional: false,
            });
        }
    }

    /// Types stated by parameters: annotations (`x: T`, `x: Optional[T]`), and the class for
    /// the first parameter of a method (`self`, `cls`).
    fn parameter_types(
        &mut self,
        parameters: Node,
        scope: u32,
        outer: u32,
        receives_self: bool,
        injected: bool,
    ) {
        let source = self.source;
        let mut cursor = parameters.walk();
        for (position, param) in parameters.named_children(&mut cursor).enumerate() {
            // `*args: T` and `**kw: T` hold tuples and dicts of T, not a T.
            let splat = matches!(
                param.kind(),
                "list_splat_pattern" | "dictionary_splat_pattern"
            ) || param.named_child(0).is_some_and(|c| {
                matches!(c.kind(), "list_splat_pattern" | "dictionary_splat_pattern")
            });
            let Some(name) = parameter_name(param).map(|n| text(n, source).to_string()) else {
                continue;
            };
            if splat {
                continue;
            }
            let annotated = param.child_by_field_name("type");
            let value = if position == 0 && receives_self {
                Some(Value::SelfType)
            } else if annotated.is_none() && injected && param.kind() == "identifier" {
                Some(Value::Fixture(name.clone()))
            } else {
                annotated.and_then(|t| annotation_type(t, source))
            };
            if let Some(value) = value {
                self.facts.types.push(TypeFact {
                    scope,
                    slot: TypeSlot::Variable,
                    name,
                    eval_scope: outer,
                    value,
                    declared: true,
                });
            }
        }
    }

    /// `x = T()`, `x: T = ...`, `self.x = T()` in a method, `x: T` in a class body: what the
    /// assignment says about the type of the name or attribute. An assignment whose value
    /// cannot be followed is recorded too (as unknown), so that it spoils a guess from another
    /// assignment; `None` is skipped (`self.x = None` then `self.x = T()` is an instance of T).
    fn assignment_type(&mut self, node: Node, left: Node, scope: u32) {
        let source = self.source;
        let declared = node
            .child_by_field_name("type")
            .and_then(|t| annotation_type(t, source));
        let mut right = node.child_by_field_name("right");
        // `a = b = value`: each name gets the value.
        for _ in 0..MAX_VALUE_DEPTH {
            match right.filter(|r| r.kind() == "assignment") {
                Some(inner) => right = inner.child_by_field_name("right"),
                None => break,
            }
        }
        if declared.is_none() && right.is_some_and(|r| r.kind() == "none") {
            return;
        }
        let (declared, value) = match declared {
            Some(value) => (true, value),
            None => (
                false,
                right
                    .and_then(|r| value_of(r, source, 0))
                    .unwrap_or(Value::Type(Vec::new())),
            ),
        };
        let symbols = &self.facts.symbols;
        let scope_kind = symbols[scope as usize].kind;
        let (owner, slot, name) = match left.kind() {
            "identifier" if scope_kind == NodeKind::Class => {
                (scope, TypeSlot::Attribute, text(left, source))
            }
            "identifier" => (scope, TypeSlot::Variable, text(left, source)),
            "attribute" if scope_kind == NodeKind::Method => {
                let object = left.child_by_field_name("object");
                let attr = left.child_by_field_name("attribute");
                let (Some(object), Some(attr)) = (object, attr) else {
                    return;
                };
                let class = symbols[scope as usize].parent.unwrap_or(0);
                if object.kind() != "identifier" || text(object, source) != "self" {
                    return;
                }
                (class, TypeSlot::Attribute, text(attr, source))
            }
            _ => return,
        };
        self.facts.types.push(TypeFact {
            scope: owner,
            slot,
            name: name.to_string(),
            eval_scope: scope,
            value,
            declared,
        });
    }

    /// `for item in items`: `item` is an element of `items` (typed when `items` is declared as
    /// a collection: `items: list[T]`).
    fn loop_type(&mut self, node: Node, left: Node, scope: u32) {
        if left.kind() != "identifier" {
            return;
        }
        let value = node
            .child_by_field_name("right")
            .and_then(|r| value_of(r, self.source, 0))
            .map_or(Value::Type(Vec::new()), |iterable| {
                Value::ElementOf(Box::new(iterable))
            });
        self.facts
            .variable_type(scope, text(left, self.source).to_string(), value, false);
    }

    /// `with open_thing() as name`: `name` is what the context manager's `__enter__` gives
    /// (`__aenter__` under `async with`).
    fn with_target_type(&mut self, pattern: Node, alias: Node, scope: u32) {
        let source = self.source;
        if pattern.parent().is_none_or(|p| p.kind() != "with_item") {
            return;
        }
        let statement = pattern
            .parent()
            .and_then(|item| item.parent())
            .and_then(|clause| clause.parent())
            .filter(|s| s.kind() == "with_statement");
        let is_async = statement.is_some_and(|s| {
            let mut cursor = s.walk();
            let async_token = s.children(&mut cursor).any(|c| c.kind() == "async");
            async_token
        });
        let enter = if is_async { "__aenter__" } else { "__enter__" };
        let Some(name) = alias
            .named_child(0)
            .filter(|n| n.kind() == "identifier")
            .or_else(|| (alias.kind() == "identifier").then_some(alias))
        else {
            return;
        };
        let value = pattern
            .named_child(0)
            .and_then(|manager| value_of(manager, source, 0))
            .map(|manager| {
                Value::Call(Box::new(Target::Method {
                    receiver: Box::new(manager),
                    name: enter.into(),
                }))
            })
            .unwrap_or(Value::Type(Vec::new()));
        self.facts
            .variable_type(scope, text(name, source).to_string(), value, false);
    }

    /// `return inner` where `inner` is a function this one defines (a decorator factory);
    /// `return self` in a method without a return annotation (`__enter__`, fluent setters):
    /// it returns an instance of its class.
    fn returned_closure(&mut self, node: Node, scope: u32) {
        let symbol = &mut self.facts.symbols[scope as usize];
        if !matches!(symbol.kind, NodeKind::Function | NodeKind::Method) {
            return;
        }
        let Some(value) = node.named_child(0) else {
            return;
        };
        if symbol.kind == NodeKind::Method && text(value, self.source) == "self" {
            symbol.returns.get_or_insert(Value::SelfType);
            return;
        }
        // A fixture states what it injects by what it builds (`return Environment()`), seldom
        // by an annotation: the tests' parameters of its name are typed by it.
        if symbol.fixture && symbol.returns.is_none() && value.kind() == "call" {
            symbol.returns = value_of(value, self.source, 0);
            return;
        }
        if value.kind() == "identifier" {
            self.facts.refs.push(Reference {
                scope,
                line: start_line(node),
                kind: RefKind::ReturnsClosure,
                target: Target::Name(text(value, self.source).to_string()),
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
            if let Some(name) = parameter_name(param) {
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
                declares: Declares::Nothing,
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
                declares: Declares::Nothing,
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
                declares: Declares::Nothing,
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
    call_target_at(function, source, 0)
}

/// How deep a receiver expression is followed (`a().b().c()...`): real code stays far below;
/// hostile input (thousands of nested parentheses) must not overflow the stack.
const MAX_VALUE_DEPTH: usize = 32;

fn call_target_at(function: Node, source: &str, depth: usize) -> Option<Target> {
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
                _ => match value_of(function.child_by_field_name("object")?, source, depth + 1) {
                    Some(receiver) => Some(Target::Method {
                        receiver: Box::new(receiver),
                        name: attr_name.into(),
                    }),
                    None => Some(Target::Member(attr_name)),
                },
            }
        }
        _ => None,
    }
}

/// A def's declared return type; `def m(self: T) -> T` (a type variable standing for the
/// class) returns an instance of the class.
fn return_value(def: Node, kind: NodeKind, source: &str) -> Option<Value> {
    let returns = annotation_type(def.child_by_field_name("return_type")?, source)?;
    if kind == NodeKind::Method {
        let first = def
            .child_by_field_name("parameters")
            .and_then(|p| p.named_child(0))
            .filter(|p| p.kind() == "typed_parameter")
            .and_then(|p| p.child_by_field_name("type"))
            .and_then(|t| annotation_type(t, source));
        if first.as_ref() == Some(&returns) {
            return Some(Value::SelfType);
        }
    }
    Some(returns)
}

/// The name a parameter binds (`x`, `x=1`, `x: T`, `*args`, `**kw`).
fn parameter_name(param: Node) -> Option<Node> {
    match param.kind() {
        "identifier" => Some(param),
        "default_parameter" | "typed_default_parameter" => param.child_by_field_name("name"),
        "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
            let mut inner = param.walk();
            let first = param
                .named_children(&mut inner)
                .find(|c| c.kind() == "identifier");
            first
        }
        _ => None,
    }
}

/// An expression as a [`Value`] the resolver can type: names, attribute chains, calls
/// (`T(...)`, `make()`, `a.b.c(...)`), through parentheses and `await`.
fn value_of(node: Node, source: &str, depth: usize) -> Option<Value> {
    if depth > MAX_VALUE_DEPTH {
        return None;
    }
    match node.kind() {
        "identifier" => Some(Value::Name(text(node, source).to_string())),
        "attribute" => {
            let object = value_of(node.child_by_field_name("object")?, source, depth + 1)?;
            let attr = text(node.child_by_field_name("attribute")?, source).to_string();
            Some(Value::Attr(Box::new(object), attr))
        }
        "call" => {
            let function = node.child_by_field_name("function")?;
            match call_target_at(function, source, depth + 1)? {
                Target::Member(_) | Target::SuperMember(_) => None,
                target => Some(Value::Call(Box::new(target))),
            }
        }
        "parenthesized_expression" | "await" => value_of(node.named_child(0)?, source, depth + 1),
        _ => None,
    }
}

/// Annotations of collections whose loop binds their one element type (`list[T]`).
const COLLECTIONS: &[&str] = &[
    "AbstractSet",
    "Collection",
    "Deque",
    "FrozenSet",
    "Iterable",
    "Iterator",
    "List",
    "MutableSequence",
    "MutableSet",
    "Sequence",
    "Set",
    "deque",
    "frozenset",
    "list",
    "set",
];

/// The class an annotation names: `T`, `pkg.T`, `"T"`, `Optional[T]`, `T | None`,
/// `Annotated[T, ...]`, `Type[T]`; a collection of one element type (`list[T]`,
/// `Sequence[T]`) as [`Value::Elements`]. Unions of two classes name none.
fn annotation_type(node: Node, source: &str) -> Option<Value> {
    let mut node = node;
    for _ in 0..8 {
        match node.kind() {
            "type" | "parenthesized_expression" => node = node.named_child(0)?,
            "identifier" => return Some(Value::Type(vec![text(node, source).to_string()])),
            "attribute" => {
                let parts: Vec<String> = squash(text(node, source))
                    .split('.')
                    .map(str::to_string)
                    .collect();
                return parts
                    .iter()
                    .all(|p| is_identifier(p))
                    .then_some(Value::Type(parts));
            }
            "string" => {
                let inner = text(node, source).trim_matches(|c| c == '"' || c == '\'');
                let parts: Vec<String> = inner.trim().split('.').map(str::to_string).collect();
                return parts
                    .iter()
                    .all(|p| is_identifier(p))
                    .then_some(Value::Type(parts));
            }
            "binary_operator" => {
                // `T | None`
                let left = node.child_by_field_name("left")?;
                let right = node.child_by_field_name("right")?;
                node = match (is_none(left, source), is_none(right, source)) {
                    (false, true) => left,
                    (true, false) => right,
                    _ => return None,
                };
            }
            "generic_type" | "subscript" => {
                let (head, args) = generic_parts(node, source)?;
                let wrapper = head.rsplit('.').next().unwrap_or(&head);
                let args: Vec<Node> = args.into_iter().filter(|a| !is_none(*a, source)).collect();
                match wrapper {
                    "Optional" | "Type" | "type" | "Final" | "ClassVar" if args.len() == 1 => {
                        node = args[0]
                    }
                    "Annotated" if !args.is_empty() => node = args[0],
                    "Union" if args.len() == 1 => node = args[0],
                    collection if COLLECTIONS.contains(&collection) && args.len() == 1 => {
                        let element = annotation_type(args[0], source)?;
                        return Some(Value::Elements(Box::new(element)));
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    None
}

/// `Optional[T]` as its head (`Optional`) and argument nodes, in either tree shape the
/// grammar produces (a `generic_type` in annotations, a `subscript` in expressions).
fn generic_parts<'t>(node: Node<'t>, source: &str) -> Option<(String, Vec<Node<'t>>)> {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    let (head, rest) = children.split_first()?;
    let mut args = Vec::new();
    for child in rest {
        if child.kind() == "type_parameter" {
            let mut inner = child.walk();
            args.extend(child.named_children(&mut inner));
        } else {
            args.push(*child);
        }
    }
    Some((squash(text(*head, source)), args))
}

fn is_none(node: Node, source: &str) -> bool {
    let node = if node.kind() == "type" {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    };
    node.kind() == "none" || text(node, source) == "None"
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// The dotted names of a definition's decorators, without `@` and call arguments
/// (`@app.get("/")` is `app.get`).
fn decorator_names(decorated: Option<Node>, source: &str) -> Vec<String> {
    let Some(decorated) = decorated else {
        return Vec::new();
    };
    let mut cursor = decorated.walk();
    let mut names = Vec::new();
    for child in decorated.named_children(&mut cursor) {
        if child.kind() != "decorator" {
            continue;
        }
        let Some(mut expr) = child.named_child(0) else {
            continue;
        };
        if expr.kind() == "call" {
            match expr.child_by_field_name("function") {
                Some(function) => expr = function,
                None => continue,
            }
        }
        names.push(squash(text(expr, source)));
    }
    names
}

/// `@pytest.fixture`, `@fixture` (called or not).
fn is_fixture(decorator: &str) -> bool {
    decorator == "fixture" || decorator.ends_with(".fixture")
}

/// Whether the attribute `node` is read as a value: not the function of a call (the call is the
/// reference), not a target that is only written (`self.x = ...`, `for self.x in ...`, `del`).
/// `self.x += 1` reads it first.
fn is_read(node: Node) -> bool {
    let mut child = node;
    while let Some(parent) = child.parent() {
        let is = |field: &str| parent.child_by_field_name(field) == Some(child);
        match parent.kind() {
            "call" => return !is("function"),
            "assignment" | "for_statement" | "for_in_clause" => return !is("left"),
            "delete_statement" => return false,
            // A target inside a tuple or list of targets: the enclosing statement decides.
            "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" => {
                child = parent;
            }
            _ => return true,
        }
    }
    true
}

/// `@property`, `@functools.cached_property`, `@abc.abstractproperty` and the like: a method a
/// read of the attribute runs.
fn is_getter(decorator: &str) -> bool {
    let last = decorator.rsplit('.').next().unwrap_or(decorator);
    matches!(last, "property" | "cached_property" | "abstractproperty")
}

/// `@name.setter`, `@name.deleter`.
fn is_accessor(decorator: &str) -> bool {
    decorator.ends_with(".setter") || decorator.ends_with(".deleter")
}

/// `@overload`, `@typing.overload`, `@t.overload`.
fn is_overload(decorator: &str) -> bool {
    decorator == "overload" || decorator.ends_with(".overload")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_imports_resolve_against_the_package() {
        let walker = Walker::new("a/b/c.py", "");
        assert_eq!(walker.package, vec!["a", "b"]);
        let init = Walker::new("a/b/__init__.py", "");
        assert_eq!(init.package, vec!["a", "b"]);
    }
}
