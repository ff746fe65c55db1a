//! TypeScript and JavaScript (one walker: the TypeScript grammar's tree is JavaScript's with
//! types): functions (declarations, `const f = () => ...`, `export default function`), classes,
//! methods (getters, setters, static, abstract, arrow-valued fields), interfaces (as `trait`),
//! type aliases (`typedef`), enums, namespaces (`mod`), the methods of an exported object
//! literal; ES module and CommonJS imports and re-exports; calls, `new`, `extends` and
//! `implements`; the types a receiver's methods are found by (annotations, parameter
//! properties, `new C()`).
//!
//! Overload signatures, `declare function` and interface members have no body and are not
//! definitions. Decorators belong to what they decorate. Anonymous callbacks are not symbols:
//! their calls belong to the enclosing definition.

use crate::util::{comment_first_line, end_line, header_before, one_line, start_line, text};
use crate::{module_facts, Grammar, MAX_DEPTH};
use tg_lang::ecmascript::{specifier_key, EcmaScript};
use tg_lang::{
    Binding, Declares, FileFacts, Import, Language, ModuleRef, RefKind, Reference, ScopeRule,
    Symbol, Target, TypeFact, TypeSlot, Value,
};
use tg_shared::hash::ContentHash;
use tg_shared::record::{EdgeKind, NodeKind};
use tree_sitter::Node;

impl Grammar for EcmaScript {
    fn grammar(&self, path: &str) -> tree_sitter::Language {
        if self.id() == "javascript" {
            tree_sitter_javascript::LANGUAGE.into()
        } else if path.ends_with(".tsx") {
            tree_sitter_typescript::LANGUAGE_TSX.into()
        } else {
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
        }
    }

    fn max_bracket_depth(&self) -> Option<usize> {
        Some(1024)
    }

    fn grammar_key(&self, path: &str) -> &'static str {
        if self.id() == "typescript" && path.ends_with(".tsx") {
            "tsx"
        } else {
            self.id()
        }
    }

    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts {
        let own_key = self
            .module_keys(path, &|_| false)
            .into_iter()
            .next()
            .unwrap_or_default();
        Walker {
            path,
            source,
            own_key,
            javascript: self.id() == "javascript",
            facts: FileFacts::default(),
        }
        .run(tree.root_node())
    }
}

/// How deep a receiver expression is followed (`a().b().c()...`).
const MAX_VALUE_DEPTH: usize = 32;

#[derive(Clone, Copy)]
struct Task<'t> {
    node: Node<'t>,
    scope: u32,
    depth: usize,
}

/// Where a definition's text starts and what belongs to it besides the declaration itself.
#[derive(Clone, Copy)]
struct Span<'t> {
    /// The node whose lines and text are the symbol's (an `export` statement, a one-variable
    /// `const` statement, the declaration itself).
    outer: Node<'t>,
    /// Decorators written before it as its siblings (a method's), first one.
    first_decorator: Option<Node<'t>>,
}

impl<'t> Span<'t> {
    /// Where a declaration's signature starts: at `export` when it is exported.
    fn head(&self, declaration: Node<'t>) -> Node<'t> {
        if self.outer.kind() == "export_statement" {
            self.outer
        } else {
            declaration
        }
    }
}

struct Walker<'s> {
    path: &'s str,
    source: &'s str,
    /// The key other files import this module by (for `export default name` bindings).
    own_key: String,
    /// JavaScript, whose JSDoc types the walk reads.
    javascript: bool,
    facts: FileFacts,
}

impl<'s> Walker<'s> {
    fn run(mut self, root: Node) -> FileFacts {
        self.facts = module_facts(self.path, self.source, root, None);
        let mut stack = vec![Task {
            node: root,
            scope: 0,
            depth: 0,
        }];
        let mut next = Vec::new();
        while let Some(task) = stack.pop() {
            if task.depth > MAX_DEPTH {
                self.facts
                    .depth_limit_line
                    .get_or_insert(start_line(task.node));
                continue;
            }
            next.clear();
            self.visit(task, &mut next);
            // Reverse so the stack pops children in source order (ids count repeats in order).
            stack.extend(next.drain(..).rev());
        }
        self.facts
    }

    fn visit<'t>(&mut self, task: Task<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let child = |node: Node<'t>, scope: u32| Task {
            node,
            scope,
            depth: task.depth + 1,
        };
        let span = Span {
            outer: node,
            first_decorator: None,
        };
        match node.kind() {
            "comment" => return,
            "import_statement" => return self.import(node, task.scope),
            "export_statement" => return self.export(task, next),
            "function_declaration" | "generator_function_declaration" => {
                return self.function(task, node, span, None, next);
            }
            "class_declaration" | "abstract_class_declaration" => {
                return self.class(task, node, span, None, next);
            }
            "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
                return self.type_declaration(task, node, span);
            }
            "internal_module" | "module" => return self.namespace(task, next),
            "lexical_declaration" | "variable_declaration" => {
                return self.variables(task, node, node, next);
            }
            "class_body" => return self.class_body(task, next),
            "call_expression" => self.call(node, task.scope),
            "new_expression" => {
                if let Some(target) = node
                    .child_by_field_name("constructor")
                    .and_then(|c| call_target(c, self.source, 0))
                {
                    self.reference(task.scope, node, RefKind::Call, target);
                }
            }
            "assignment_expression" => self.assignment(node, task.scope),
            "arrow_function" | "function_expression" | "function" | "generator_function" => {
                // A callback: its parameters shadow outer names inside it.
                if let Some(parameters) = node
                    .child_by_field_name("parameters")
                    .or_else(|| node.child_by_field_name("parameter"))
                {
                    self.parameters(parameters, task.scope, None);
                }
            }
            "catch_clause" => {
                if let Some(parameter) = node.child_by_field_name("parameter") {
                    self.bind_pattern(parameter, task.scope);
                }
            }
            "for_in_statement" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind_pattern(left, task.scope);
                }
            }
            "return_statement" => self.returned_closure(node, task.scope),
            _ => {}
        }
        let mut cursor = node.walk();
        for c in node.named_children(&mut cursor) {
            // Leaves (names, literals) hold nothing to extract.
            if c.child_count() > 0 {
                next.push(child(c, task.scope));
            }
        }
    }

    /// Adds a symbol; returns its index.
    #[allow(clippy::too_many_arguments)]
    fn symbol(
        &mut self,
        kind: NodeKind,
        name: &str,
        scope: u32,
        span: Span,
        head: Node,
        body: Option<Node>,
        returns: Option<Value>,
    ) -> u32 {
        // A computed member name (`[a\n.b]`) may span lines: ids are one line.
        let name = &one_line(name);
        let parent = &self.facts.symbols[scope as usize];
        let qualname = if parent.qualname.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", parent.qualname, name)
        };
        // An exported object's member (`api.get`) is named by its own part; a computed
        // name (`[Symbol.iterator]`) is whole.
        let name = match name.starts_with('[') {
            true => name.as_str(),
            false => name.rsplit('.').next().unwrap_or(name),
        };
        let start = span.first_decorator.unwrap_or(span.outer);
        let source = self.source;
        let hashed = source
            .get(start.start_byte()..span.outer.end_byte())
            .unwrap_or("");
        let index = self.facts.symbols.len() as u32;
        self.facts.symbols.push(Symbol {
            kind,
            name: name.to_string(),
            qualname,
            parent: Some(scope),
            line_start: start_line(start),
            line_end: end_line(span.outer),
            // line_start is already the first decorator's.
            text_start: None,
            signature: Some(header_before(head, body, source)),
            doc: jsdoc(start, source),
            hash: ContentHash::of(hashed.as_bytes()),
            scope: if kind == NodeKind::Class {
                ScopeRule::Opaque
            } else {
                ScopeRule::Transparent
            },
            owner_type: None,
            returns,
            stub: false,
            conditional: false,
            test_only: false,
            fixture: false,
            getter: false,
            test_case: false,
            accessor: false,
            implements: None,
        });
        index
    }

    fn reference(&mut self, scope: u32, at: Node, kind: RefKind, target: Target) {
        self.facts.refs.push(Reference {
            scope,
            line: start_line(at),
            kind,
            target,
        });
    }

    /// A function declaration, or a function expression a variable (`name`) holds.
    fn function<'t>(
        &mut self,
        task: Task<'t>,
        node: Node<'t>,
        span: Span<'t>,
        name: Option<&str>,
        next: &mut Vec<Task<'t>>,
    ) {
        let Some(body) = node.child_by_field_name("body") else {
            return; // an overload signature or `declare function`: not a definition
        };
        let name = definition_name(node, name, self.source);
        let kind = if self.facts.symbols[task.scope as usize].kind == NodeKind::Class {
            NodeKind::Method
        } else {
            NodeKind::Function
        };
        let returns = return_value(node, self.source);
        let head = if span.outer.kind() == "export_statement" || name_is_variable(node) {
            span.outer
        } else {
            node
        };
        let index = self.symbol(kind, &name, task.scope, span, head, Some(body), returns);
        self.body(task, node, span, index, next);
    }

    /// The parts of a definition the walk goes on into: decorators, parameters (bound, typed,
    /// default values), the body.
    fn body<'t>(
        &mut self,
        task: Task<'t>,
        node: Node<'t>,
        span: Span<'t>,
        index: u32,
        next: &mut Vec<Task<'t>>,
    ) {
        let depth = task.depth + 1;
        self.decorators(span, node, index, depth, next);
        let parameters = node
            .child_by_field_name("parameters")
            .or_else(|| node.child_by_field_name("parameter"));
        if let Some(parameters) = parameters {
            let constructor =
                (self.facts.symbols[index as usize].name == "constructor").then_some(task.scope);
            self.parameters(parameters, index, constructor);
            next.push(Task {
                node: parameters,
                scope: index,
                depth,
            });
        }
        if self.javascript {
            self.jsdoc_types(span, index);
        }
        if let Some(body) = node.child_by_field_name("body") {
            next.push(Task {
                node: body,
                scope: index,
                depth,
            });
        }
    }

    /// JavaScript states types in JSDoc (`@param {Command} cmd`, `@returns {Command}`), and
    /// the TypeScript checker reads them there: so does the walk. TypeScript files' JSDoc
    /// types are ignored, as the checker ignores them.
    fn jsdoc_types(&mut self, span: Span, index: u32) {
        let start = span.first_decorator.unwrap_or(span.outer);
        let Some(comment) = jsdoc_comment(start, self.source) else {
            return;
        };
        for (tag, type_text, name) in jsdoc_tags(text(comment, self.source)) {
            let Some(value) = jsdoc_type(type_text) else {
                continue;
            };
            match tag {
                "param" | "arg" | "argument" if !name.is_empty() => {
                    self.facts
                        .variable_type(index, name.to_string(), value, true);
                }
                "returns" | "return" => {
                    self.facts.symbols[index as usize]
                        .returns
                        .get_or_insert(value);
                }
                _ => {}
            }
        }
    }

    /// Decorators before `node` (as siblings from `span.first_decorator`, or inside an `export`
    /// statement or the class itself): their calls belong to the decorated symbol.
    fn decorators<'t>(
        &mut self,
        span: Span<'t>,
        node: Node<'t>,
        index: u32,
        depth: usize,
        next: &mut Vec<Task<'t>>,
    ) {
        let mut found = Vec::new();
        let mut sibling = span.first_decorator;
        while let Some(d) = sibling.filter(|d| d.start_byte() < node.start_byte()) {
            if d.kind() == "decorator" {
                found.push(d);
            }
            sibling = d.next_named_sibling();
        }
        let holders = if span.outer == node {
            vec![node]
        } else {
            vec![span.outer, node]
        };
        for holder in holders {
            let mut cursor = holder.walk();
            found.extend(
                holder
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() == "decorator"),
            );
        }
        for d in found {
            next.push(Task {
                node: d,
                scope: index,
                depth,
            });
        }
    }

    fn class<'t>(
        &mut self,
        task: Task<'t>,
        node: Node<'t>,
        span: Span<'t>,
        name: Option<&str>,
        next: &mut Vec<Task<'t>>,
    ) {
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let name = definition_name(node, name, self.source);
        let head = span.head(node);
        let index = self.symbol(
            NodeKind::Class,
            &name,
            task.scope,
            span,
            head,
            Some(body),
            None,
        );
        let depth = task.depth + 1;
        self.decorators(span, node, index, depth, next);
        let mut cursor = node.walk();
        let heritage: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "class_heritage")
            .collect();
        for clause in heritage.iter().flat_map(|h| named_children(*h)) {
            if matches!(clause.kind(), "extends_clause" | "implements_clause") {
                self.heritage(clause, index);
            } else if let Some(target) = reference_target(clause, self.source) {
                // JavaScript: `class A extends B` has the base right in the heritage.
                self.reference(index, clause, RefKind::Inherit, target);
            }
            next.push(Task {
                node: clause,
                scope: index,
                depth,
            });
        }
        next.push(Task {
            node: body,
            scope: index,
            depth,
        });
    }

    /// `extends B`, `implements I, J` (and an interface's `extends`): inheritance edges.
    fn heritage(&mut self, clause: Node, index: u32) {
        for base in named_children(clause) {
            let base = match base.kind() {
                "generic_type" => base.child_by_field_name("name").unwrap_or(base),
                _ => base,
            };
            if let Some(target) = reference_target(base, self.source) {
                self.reference(index, base, RefKind::Inherit, target);
            }
        }
    }

    /// The members of a class body: methods, accessors, fields, with the decorators before them.
    fn class_body<'t>(&mut self, task: Task<'t>, next: &mut Vec<Task<'t>>) {
        let class = task.scope;
        let mut first_decorator = None;
        for member in named_children(task.node) {
            if member.kind() == "decorator" {
                first_decorator.get_or_insert(member);
                continue;
            }
            let span = Span {
                outer: member,
                first_decorator: first_decorator.take(),
            };
            let member_task = Task {
                node: member,
                scope: class,
                depth: task.depth + 1,
            };
            match member.kind() {
                "method_definition" | "abstract_method_signature" => {
                    self.method(member_task, span, next)
                }
                "public_field_definition" | "field_definition" => {
                    self.field(member_task, span, next)
                }
                "comment" | "method_signature" | "index_signature" => {}
                _ => next.push(member_task),
            }
        }
    }

    fn method<'t>(&mut self, task: Task<'t>, span: Span<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let body = node.child_by_field_name("body");
        if body.is_none() && node.kind() != "abstract_method_signature" {
            return;
        }
        let Some(name) = node
            .child_by_field_name("name")
            .map(|n| member_name(n, self.source))
        else {
            return;
        };
        let index = self.symbol(
            NodeKind::Method,
            &name,
            task.scope,
            span,
            node,
            body,
            return_value(node, self.source),
        );
        self.body(task, node, span, index, next);
    }

    /// A class field: a method when it holds a function; otherwise a typed attribute, its
    /// initializer evaluated in the class.
    fn field<'t>(&mut self, task: Task<'t>, span: Span<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let name = node
            .child_by_field_name("name")
            .or_else(|| node.child_by_field_name("property"))
            .map(|n| member_name(n, self.source));
        let value = node.child_by_field_name("value").map(unwrap_expression);
        if let (Some(name), Some(value)) = (&name, value) {
            if is_function(value) {
                let index = self.symbol(
                    NodeKind::Method,
                    name,
                    task.scope,
                    span,
                    node,
                    value.child_by_field_name("body"),
                    return_value(value, self.source),
                );
                self.body(task, value, span, index, next);
                return;
            }
        }
        if let Some(name) = name {
            let declared = node
                .child_by_field_name("type")
                .and_then(|t| annotation_value(t, self.source));
            let assigned = value.and_then(|v| value_of(v, self.source, 0));
            if let Some((value, declared)) =
                declared.map(|v| (v, true)).or(assigned.map(|v| (v, false)))
            {
                self.attribute(task.scope, task.scope, name, value, declared);
            }
        }
        for c in named_children(node) {
            if c.child_count() > 0 {
                next.push(Task {
                    node: c,
                    scope: task.scope,
                    depth: task.depth + 1,
                });
            }
        }
    }

    fn attribute(
        &mut self,
        class: u32,
        eval_scope: u32,
        name: String,
        value: Value,
        declared: bool,
    ) {
        self.facts.types.push(TypeFact {
            scope: class,
            slot: TypeSlot::Attribute,
            name,
            eval_scope,
            value,
            declared,
        });
    }

    /// Interfaces, type aliases and enums: symbols without a body the walk enters (their
    /// members are signatures), with an interface's `extends` as inheritance.
    fn type_declaration(&mut self, task: Task, node: Node, span: Span) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let kind = match node.kind() {
            "interface_declaration" => NodeKind::Trait,
            "enum_declaration" => NodeKind::Enum,
            _ => NodeKind::Typedef,
        };
        let head = span.head(node);
        let body = node.child_by_field_name("body");
        let name = text(name, self.source).to_string();
        let index = self.symbol(kind, &name, task.scope, span, head, body, None);
        for clause in named_children(node).filter(|c| c.kind() == "extends_type_clause") {
            self.heritage(clause, index);
        }
    }

    /// `namespace N {}` (`mod`); `declare module "x" {}` and `declare global {}` are
    /// transparent.
    fn namespace<'t>(&mut self, task: Task<'t>, next: &mut Vec<Task<'t>>) {
        self.namespace_in(
            task,
            Span {
                outer: task.node,
                first_decorator: None,
            },
            next,
        );
    }

    fn namespace_in<'t>(&mut self, task: Task<'t>, span: Span<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let body = node.child_by_field_name("body");
        let name = node.child_by_field_name("name");
        let mut scope = task.scope;
        if let Some(name) = name.filter(|n| matches!(n.kind(), "identifier" | "nested_identifier"))
        {
            let head = span.head(node);
            // `namespace a.b {}` is `a` holding `b`.
            for part in text(name, self.source).split('.').map(str::trim) {
                scope = self.symbol(NodeKind::Mod, part, scope, span, head, body, None);
            }
        }
        if let Some(body) = body {
            next.push(Task {
                node: body,
                scope,
                depth: task.depth + 1,
            });
        }
    }

    /// `const a = ..., b = ...`: a function or class a variable holds is a definition; other
    /// variables are locals with what the source says of their type; `require` binds modules.
    fn variables<'t>(
        &mut self,
        task: Task<'t>,
        statement: Node<'t>,
        outer: Node<'t>,
        next: &mut Vec<Task<'t>>,
    ) {
        let declarators: Vec<Node> = named_children(statement)
            .filter(|c| c.kind() == "variable_declarator")
            .collect();
        let single = declarators.len() == 1;
        for declarator in declarators {
            let declarator_task = Task {
                node: declarator,
                scope: task.scope,
                depth: task.depth + 1,
            };
            let span = Span {
                outer: if single { outer } else { declarator },
                first_decorator: None,
            };
            let (Some(name), value) = (
                declarator.child_by_field_name("name"),
                declarator
                    .child_by_field_name("value")
                    .map(unwrap_expression),
            ) else {
                continue;
            };
            if name.kind() == "identifier" {
                let name_text = text(name, self.source).to_string();
                match value {
                    Some(value) if is_function(value) => {
                        self.function(declarator_task, value, span, Some(&name_text), next);
                        continue;
                    }
                    Some(value) if value.kind() == "class" => {
                        self.class(declarator_task, value, span, Some(&name_text), next);
                        continue;
                    }
                    Some(value)
                        if value.kind() == "object" && self.exported_at_top(task, outer) =>
                    {
                        self.object_methods(declarator_task, value, &name_text, next);
                        continue;
                    }
                    _ => {}
                }
            }
            if let Some(module) = value.and_then(|v| self.required_module(v)) {
                self.require(name, &module, task.scope, declarator);
            } else {
                self.bind_pattern(name, task.scope);
                self.variable_type(declarator, name, value, task.scope);
            }
            for c in named_children(declarator) {
                if c.child_count() > 0 {
                    next.push(Task {
                        node: c,
                        scope: task.scope,
                        depth: task.depth + 1,
                    });
                }
            }
        }
    }

    fn exported_at_top(&self, task: Task, outer: Node) -> bool {
        task.scope == 0 && outer.kind() == "export_statement"
    }

    /// `export const api = { get() {}, post: () => {} }`: each function member is a function
    /// `api.get`, under a symbol-less qualifier.
    fn object_methods<'t>(
        &mut self,
        task: Task<'t>,
        object: Node<'t>,
        name: &str,
        next: &mut Vec<Task<'t>>,
    ) {
        // The object itself is no symbol: its name qualifies the members' (`api.get`).
        for member in named_children(object) {
            let (key, function) = match member.kind() {
                "method_definition" => (member.child_by_field_name("name"), Some(member)),
                "pair" => (
                    member.child_by_field_name("key"),
                    member
                        .child_by_field_name("value")
                        .map(unwrap_expression)
                        .filter(|v| is_function(*v)),
                ),
                _ => (None, None),
            };
            let member_task = Task {
                node: member,
                scope: task.scope,
                depth: task.depth + 1,
            };
            match (key, function) {
                (Some(key), Some(function)) => {
                    let qualified = format!("{name}.{}", member_name(key, self.source));
                    let member_span = Span {
                        outer: member,
                        first_decorator: None,
                    };
                    self.function(member_task, function, member_span, Some(&qualified), next);
                }
                _ => next.push(member_task),
            }
        }
    }

    /// `const x: T = ...`, `const x = new C()`, `const x = make()`: what `x` holds.
    fn variable_type(&mut self, declarator: Node, name: Node, value: Option<Node>, scope: u32) {
        if name.kind() != "identifier" {
            return;
        }
        let declared = declarator
            .child_by_field_name("type")
            .and_then(|t| annotation_value(t, self.source));
        let assigned = value.and_then(|v| value_of(v, self.source, 0));
        if let Some((value, declared)) =
            declared.map(|v| (v, true)).or(assigned.map(|v| (v, false)))
        {
            let name = text(name, self.source).to_string();
            self.facts.variable_type(scope, name, value, declared);
        }
    }

    /// Parameters shadow outer names; typed ones say what they hold. A constructor's
    /// parameter properties (`constructor(private db: Db)`) are attributes of `class`.
    fn parameters(&mut self, parameters: Node, scope: u32, class: Option<u32>) {
        let params: Vec<Node> = if parameters.kind() == "formal_parameters" {
            named_children(parameters).collect()
        } else {
            vec![parameters]
        };
        for param in params {
            let (pattern, annotation) = match param.kind() {
                "required_parameter" | "optional_parameter" => (
                    param.child_by_field_name("pattern"),
                    param.child_by_field_name("type"),
                ),
                "assignment_pattern" => (param.child_by_field_name("left"), None),
                _ => (Some(param), None),
            };
            let Some(pattern) = pattern else { continue };
            self.bind_pattern(pattern, scope);
            if pattern.kind() != "identifier" {
                continue;
            }
            let Some(value) = annotation.and_then(|a| annotation_value(a, self.source)) else {
                continue;
            };
            let name = text(pattern, self.source).to_string();
            let is_property = named_children(param)
                .any(|c| matches!(c.kind(), "accessibility_modifier" | "override_modifier"))
                || text(param, self.source).starts_with("readonly ");
            if let (Some(class), true) = (class, is_property) {
                self.attribute(class, class, name.clone(), value.clone(), true);
            }
            self.facts.variable_type(scope, name, value, true);
        }
    }

    /// Names a pattern binds (`x`, `{a, b: c}`, `[d, ...e]`, `f = 1`).
    fn bind_pattern(&mut self, pattern: Node, scope: u32) {
        let mut stack = vec![pattern];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "identifier" | "shorthand_property_identifier_pattern" => self
                    .facts
                    .locals
                    .push((scope, text(node, self.source).to_string())),
                "object_pattern" | "array_pattern" | "rest_pattern" => {
                    stack.extend(named_children(node));
                }
                "pair_pattern" => stack.extend(node.child_by_field_name("value")),
                "assignment_pattern" | "object_assignment_pattern" => {
                    stack.extend(node.child_by_field_name("left"));
                }
                _ => {}
            }
        }
    }

    /// `this.x = value` in a method: an attribute of its class, evaluated in the method.
    fn assignment(&mut self, node: Node, scope: u32) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() != "member_expression" {
            return;
        }
        let (Some(object), Some(property)) = (
            left.child_by_field_name("object"),
            left.child_by_field_name("property"),
        ) else {
            return;
        };
        let method = &self.facts.symbols[scope as usize];
        let Some(class) = method
            .parent
            .filter(|_| method.kind == NodeKind::Method && object.kind() == "this")
        else {
            return;
        };
        if let Some(value) = value_of(unwrap_expression(right), self.source, 0) {
            let name = text(property, self.source).to_string();
            self.attribute(class, scope, name, value, false);
        }
    }

    fn call(&mut self, node: Node, scope: u32) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        if is_module_load(function, self.source) {
            // `import("./x")`, `require("./x")`: a module edge, not a call.
            if let Some(module) = self.required_module(node) {
                self.module_import(scope, node, &module, Binding::None);
            }
            return;
        }
        let target = if function.kind() == "super" {
            Some(Target::SuperMember("constructor".to_string()))
        } else {
            call_target(function, self.source, 0)
        };
        if let Some(target) = target {
            self.reference(scope, node, RefKind::Call, target);
        }
    }

    /// The module key of `require("x")` / `import("x")` with a literal argument.
    fn required_module(&self, call: Node) -> Option<String> {
        if call.kind() != "call_expression" {
            return None;
        }
        let function = call.child_by_field_name("function")?;
        if !is_module_load(function, self.source) {
            return None;
        }
        let argument = call.child_by_field_name("arguments")?.named_child(0)?;
        let specifier = string_value(argument, self.source)?;
        Some(specifier_key(self.path, specifier))
    }

    /// `const m = require("x")`, `const {a, b: c} = require("x")`.
    fn require(&mut self, name: Node, module: &str, scope: u32, at: Node) {
        match name.kind() {
            "identifier" => {
                let binding = Binding::Module {
                    name: text(name, self.source).to_string(),
                    module: module.to_string(),
                };
                self.module_import(scope, at, module, binding);
            }
            "object_pattern" => {
                for member in named_children(name) {
                    let (member_name, bound) = match member.kind() {
                        "shorthand_property_identifier_pattern" => (Some(member), Some(member)),
                        "pair_pattern" => (
                            member.child_by_field_name("key"),
                            member.child_by_field_name("value"),
                        ),
                        _ => (None, None),
                    };
                    let (Some(member_name), Some(bound)) = (member_name, bound) else {
                        continue;
                    };
                    let binding = Binding::Member {
                        name: text(bound, self.source).to_string(),
                        module: module.to_string(),
                        member: text(member_name, self.source).to_string(),
                    };
                    self.module_import(scope, at, module, binding);
                }
            }
            _ => self.module_import(scope, at, module, Binding::None),
        }
    }

    fn module_import(&mut self, scope: u32, at: Node, module: &str, binding: Binding) {
        self.facts.imports.push(Import {
            declares: Declares::Nothing,
            scope,
            line: start_line(at),
            edge: Some(EdgeKind::Imports),
            target: vec![ModuleRef::Key(module.to_string())],
            binding,
        });
    }

    /// `import d, { a as b } from "x"`, `import * as m from "x"`, `import "x"`,
    /// `import m = require("x")`.
    fn import(&mut self, node: Node, scope: u32) {
        let source = self.source;
        let Some(specifier) = node
            .child_by_field_name("source")
            .and_then(|s| string_value(s, source))
            .or_else(|| {
                named_children(node)
                    .find(|c| c.kind() == "import_require_clause")
                    .and_then(|c| c.child_by_field_name("source"))
                    .and_then(|s| string_value(s, source))
            })
        else {
            return;
        };
        let module = specifier_key(self.path, specifier);
        let mut bound = false;
        for clause in named_children(node) {
            match clause.kind() {
                "import_clause" => {
                    for part in named_children(clause) {
                        bound |= self.import_part(part, &module, scope, node);
                    }
                }
                "import_require_clause" => {
                    if let Some(name) = named_children(clause).find(|c| c.kind() == "identifier") {
                        let binding = Binding::Module {
                            name: text(name, source).to_string(),
                            module: module.clone(),
                        };
                        self.module_import(scope, node, &module, binding);
                        bound = true;
                    }
                }
                _ => {}
            }
        }
        if !bound {
            self.module_import(scope, node, &module, Binding::None);
        }
    }

    /// One part of an import clause; whether it bound a name.
    fn import_part(&mut self, part: Node, module: &str, scope: u32, at: Node) -> bool {
        let source = self.source;
        match part.kind() {
            "identifier" => {
                let binding = Binding::Member {
                    name: text(part, source).to_string(),
                    module: module.to_string(),
                    member: "default".to_string(),
                };
                self.module_import(scope, at, module, binding);
                true
            }
            "namespace_import" => {
                let Some(name) = named_children(part).find(|c| c.kind() == "identifier") else {
                    return false;
                };
                let binding = Binding::Module {
                    name: text(name, source).to_string(),
                    module: module.to_string(),
                };
                self.module_import(scope, at, module, binding);
                true
            }
            "named_imports" => {
                let mut any = false;
                for specifier in named_children(part).filter(|s| s.kind() == "import_specifier") {
                    let Some(name) = specifier.child_by_field_name("name") else {
                        continue;
                    };
                    let member = member_name(name, source);
                    let bound = specifier
                        .child_by_field_name("alias")
                        .map_or_else(|| member.clone(), |a| text(a, source).to_string());
                    let binding = Binding::Member {
                        name: bound,
                        module: module.to_string(),
                        member,
                    };
                    self.module_import(scope, at, module, binding);
                    any = true;
                }
                any
            }
            _ => false,
        }
    }

    /// `export <declaration>`, `export default ...`, `export { a as b }`, and re-exports
    /// (`export { a } from "x"`, `export * from "x"`, `export * as m from "x"`).
    fn export<'t>(&mut self, task: Task<'t>, next: &mut Vec<Task<'t>>) {
        let node = task.node;
        let source = self.source;
        let span = Span {
            outer: node,
            first_decorator: None,
        };
        if let Some(declaration) = node.child_by_field_name("declaration") {
            let is_default = (0..node.child_count())
                .filter_map(|i| node.child(i))
                .any(|c| c.kind() == "default");
            if let Some(name) = declaration
                .child_by_field_name("name")
                .filter(|_| is_default)
            {
                let name = text(name, source).to_string();
                self.own_alias(task.scope, node, "default".to_string(), name);
            }
            let inner = Task {
                node: declaration,
                scope: task.scope,
                depth: task.depth + 1,
            };
            match declaration.kind() {
                "function_declaration" | "generator_function_declaration" => {
                    self.function(inner, declaration, span, None, next)
                }
                "class_declaration" | "abstract_class_declaration" => {
                    self.class(inner, declaration, span, None, next)
                }
                "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
                    self.type_declaration(inner, declaration, span)
                }
                "lexical_declaration" | "variable_declaration" => {
                    self.variables(inner, declaration, node, next)
                }
                "internal_module" | "module" => self.namespace_in(inner, span, next),
                _ => next.push(inner),
            }
            return;
        }
        let specifier = node
            .child_by_field_name("source")
            .and_then(|s| string_value(s, source));
        if let Some(value) = node.child_by_field_name("value") {
            self.export_default(task, value, span, next);
            return;
        }
        let module = specifier.map(|s| specifier_key(self.path, s));
        let clause = named_children(node).find(|c| c.kind() == "export_clause");
        let namespace = named_children(node).find(|c| c.kind() == "namespace_export");
        match (&module, clause, namespace) {
            (Some(module), Some(clause), _) => {
                for (name, alias) in export_specifiers(clause, source) {
                    let binding = Binding::Member {
                        name: alias.unwrap_or_else(|| name.clone()),
                        module: module.clone(),
                        member: name,
                    };
                    self.module_import(task.scope, node, module, binding);
                }
            }
            (Some(module), None, Some(namespace)) => {
                let name = named_children(namespace)
                    .next()
                    .map(|n| member_name(n, source));
                let binding = match name {
                    Some(name) => Binding::Module {
                        name,
                        module: module.clone(),
                    },
                    None => Binding::None,
                };
                self.module_import(task.scope, node, module, binding);
            }
            (Some(module), None, None) => {
                let binding = Binding::Star {
                    module: module.clone(),
                };
                self.module_import(task.scope, node, module, binding);
            }
            (None, Some(clause), _) => {
                for (name, alias) in export_specifiers(clause, source) {
                    if let Some(alias) = alias.filter(|a| *a != name) {
                        self.own_alias(task.scope, node, alias, name);
                    }
                }
            }
            _ => {}
        }
    }

    /// `export default function () {}` (named `default`), `export default class X {}`,
    /// `export default x`: importers' `default` finds the definition.
    fn export_default<'t>(
        &mut self,
        task: Task<'t>,
        value: Node<'t>,
        span: Span<'t>,
        next: &mut Vec<Task<'t>>,
    ) {
        let value = unwrap_expression(value);
        let inner = Task {
            node: value,
            scope: task.scope,
            depth: task.depth + 1,
        };
        let named = value
            .child_by_field_name("name")
            .map(|n| text(n, self.source).to_string());
        if is_function(value) {
            self.function(inner, value, span, named.as_deref(), next);
        } else if value.kind() == "class" {
            self.class(inner, value, span, named.as_deref(), next);
        } else if value.kind() == "identifier" {
            let name = text(value, self.source).to_string();
            self.own_alias(task.scope, task.node, "default".to_string(), name);
            return;
        } else {
            next.push(inner);
            return;
        }
        if let Some(name) = named.filter(|n| n != "default") {
            self.own_alias(task.scope, task.node, "default".to_string(), name);
        }
    }

    /// This module exports `name` as `alias` (`export { a as b }`, `export default a`).
    fn own_alias(&mut self, scope: u32, at: Node, alias: String, name: String) {
        self.facts.imports.push(Import {
            declares: Declares::Nothing,
            scope,
            line: start_line(at),
            edge: None,
            target: Vec::new(),
            binding: Binding::Member {
                name: alias,
                module: self.own_key.clone(),
                member: name,
            },
        });
    }

    /// `return inner` where `inner` is a function this one defines (a factory).
    fn returned_closure(&mut self, node: Node, scope: u32) {
        let symbol = &self.facts.symbols[scope as usize];
        if !matches!(symbol.kind, NodeKind::Function | NodeKind::Method) {
            return;
        }
        if let Some(value) = node.named_child(0).filter(|v| v.kind() == "identifier") {
            let target = Target::Name(text(value, self.source).to_string());
            self.reference(scope, node, RefKind::ReturnsClosure, target);
        }
    }
}

/// `import(...)` or `require(...)`: loads a module.
fn is_module_load(function: Node, source: &str) -> bool {
    function.kind() == "import" || text(function, source) == "require"
}

fn named_children(node: Node) -> impl Iterator<Item = Node> {
    (0..node.named_child_count() as u32).filter_map(move |i| node.named_child(i))
}

/// A declaration's name: the one given (a variable's), its own, or `default` for an anonymous
/// `export default`.
fn definition_name(node: Node, given: Option<&str>, source: &str) -> String {
    match given {
        Some(name) => name.to_string(),
        None => node
            .child_by_field_name("name")
            .map_or("default", |n| text(n, source))
            .to_string(),
    }
}

/// Whether a function expression is the value of a variable (its head is the declarator).
fn name_is_variable(node: Node) -> bool {
    !matches!(
        node.kind(),
        "function_declaration" | "generator_function_declaration" | "method_definition"
    )
}

fn is_function(node: Node) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// An expression without the parentheses, `as`, `satisfies` and `!` around it.
fn unwrap_expression(node: Node) -> Node {
    let mut node = node;
    for _ in 0..MAX_VALUE_DEPTH {
        match node.kind() {
            "parenthesized_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression" => match node.named_child(0) {
                Some(inner) => node = inner,
                None => break,
            },
            _ => break,
        }
    }
    node
}

/// A member's or an exported name: identifiers as written (`#p` keeps its `#`), strings
/// (`export { x as "a-b" }`) without quotes.
fn member_name(node: Node, source: &str) -> String {
    match node.kind() {
        "string" => string_value(node, source).unwrap_or("").to_string(),
        _ => text(node, source).to_string(),
    }
}

/// The names and aliases of an `export { a, b as c }` clause.
fn export_specifiers(clause: Node, source: &str) -> Vec<(String, Option<String>)> {
    named_children(clause)
        .filter(|s| s.kind() == "export_specifier")
        .filter_map(|s| {
            let name = member_name(s.child_by_field_name("name")?, source);
            let alias = s
                .child_by_field_name("alias")
                .map(|a| member_name(a, source));
            Some((name, alias))
        })
        .collect()
}

/// The text of a string literal without its quotes (no escapes or substitutions in it).
fn string_value<'s>(node: Node, source: &'s str) -> Option<&'s str> {
    if node.kind() != "string" {
        return None;
    }
    let raw = text(node, source);
    let inner = raw.get(1..raw.len().saturating_sub(1))?;
    (!inner.contains('\\')).then_some(inner)
}

/// The first line of the JSDoc block (`/** ... */`) directly above a definition.
fn jsdoc(start: Node, source: &str) -> Option<String> {
    comment_first_line(text(jsdoc_comment(start, source)?, source))
}

/// The JSDoc block (`/** ... */`) directly above a definition.
fn jsdoc_comment<'t>(start: Node<'t>, source: &str) -> Option<Node<'t>> {
    let comment = start.prev_sibling().filter(|c| c.kind() == "comment")?;
    (text(comment, source).starts_with("/**") && end_line(comment) + 1 >= start_line(start))
        .then_some(comment)
}

/// `@tag {type} name` lines of a JSDoc block: (tag, type, name; `""` when none).
fn jsdoc_tags(comment: &str) -> Vec<(&str, &str, &str)> {
    let mut tags = Vec::new();
    for part in comment.split('@').skip(1) {
        let tag = part
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("");
        let rest = part[tag.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('{') else {
            continue;
        };
        let Some(close) = rest.find('}') else {
            continue;
        };
        let name = rest[close + 1..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches('[')
            .split(['=', ']'])
            .next()
            .unwrap_or("");
        tags.push((tag, rest[..close].trim(), name));
    }
    tags
}

/// The class a JSDoc type names: `T`, `ns.T`, `T[]` and `Array<T>` (its elements), `?T`,
/// `T|undefined`, `Promise<T>`.
fn jsdoc_type(type_text: &str) -> Option<Value> {
    let mut kept = type_text
        .trim_start_matches(['?', '!'])
        .split('|')
        .map(str::trim)
        .filter(|t| !matches!(*t, "null" | "undefined" | "void"));
    let only = kept.next()?;
    if kept.next().is_some() {
        return None;
    }
    let is_name = |t: &str| {
        !t.is_empty()
            && t.split('.').all(|p| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && p.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            })
    };
    let path = |t: &str| Value::Type(t.split('.').map(str::to_string).collect());
    if let Some(element) = only.strip_suffix("[]") {
        return is_name(element).then(|| Value::Elements(Box::new(path(element))));
    }
    if let Some((outer, inner)) = only.strip_suffix('>').and_then(|t| t.split_once('<')) {
        return match outer.trim_end_matches('.') {
            "Array" | "Set" | "Iterable" if is_name(inner) => {
                Some(Value::Elements(Box::new(path(inner))))
            }
            "Promise" if is_name(inner) => Some(path(inner)),
            _ => None,
        };
    }
    is_name(only).then(|| path(only))
}

/// A function's declared return type (`: T`, `: Promise<T>`, `: this`).
fn return_value(node: Node, source: &str) -> Option<Value> {
    annotation_value(node.child_by_field_name("return_type")?, source)
}

/// The class a type annotation names: `T`, `ns.T`, `T<A>`, `T | undefined`, `Promise<T>`
/// (what `await` gives), `this`; a collection (`T[]`, `Array<T>`, `Set<T>`) as its elements.
fn annotation_value(node: Node, source: &str) -> Option<Value> {
    let mut node = node;
    for _ in 0..MAX_VALUE_DEPTH {
        match node.kind() {
            "type_annotation" | "parenthesized_type" | "readonly_type" => {
                node = node.named_child(0)?;
            }
            "type_identifier" => return Some(Value::Type(vec![text(node, source).to_string()])),
            "nested_type_identifier" => {
                let path: Vec<String> = text(node, source)
                    .split('.')
                    .map(|p| p.trim().to_string())
                    .collect();
                return Some(Value::Type(path));
            }
            "this_type" => return Some(Value::SelfType),
            "array_type" => {
                let inner = annotation_value(node.named_child(0)?, source)?;
                return Some(Value::Elements(Box::new(inner)));
            }
            "generic_type" => {
                let name = node.child_by_field_name("name")?;
                let first_argument = node
                    .child_by_field_name("type_arguments")
                    .and_then(|a| a.named_child(0));
                return match text(name, source) {
                    "Promise" | "PromiseLike" => annotation_value(first_argument?, source),
                    "Array" | "ReadonlyArray" | "Set" | "ReadonlySet" | "Iterable"
                    | "IterableIterator" => {
                        let inner = annotation_value(first_argument?, source)?;
                        Some(Value::Elements(Box::new(inner)))
                    }
                    _ => annotation_value(name, source),
                };
            }
            "union_type" => {
                let mut kept = named_children(node).filter(|t| !is_nothing(*t, source));
                let only = kept.next()?;
                if kept.next().is_some() {
                    return None;
                }
                node = only;
            }
            _ => return None,
        }
    }
    None
}

/// `null`, `undefined` or `void` in a union.
fn is_nothing(node: Node, source: &str) -> bool {
    matches!(text(node, source), "null" | "undefined" | "void")
}

/// How the source names what a call calls: `f()`, `a.b.f()`, `this.m()`, `super.m()`,
/// `this.a.m()` and `x().m()` through the receiver's value; `obj[k]()` names nothing.
fn call_target(function: Node, source: &str, depth: usize) -> Option<Target> {
    if depth > MAX_VALUE_DEPTH {
        return None;
    }
    let function = unwrap_expression(function);
    match function.kind() {
        "identifier" => Some(Target::Name(text(function, source).to_string())),
        "member_expression" => {
            let property = function.child_by_field_name("property")?;
            let name = text(property, source).to_string();
            let object = unwrap_expression(function.child_by_field_name("object")?);
            match object.kind() {
                "this" => Some(Target::SelfMember(name)),
                "super" => Some(Target::SuperMember(name)),
                _ => {
                    if let Some(mut path) = name_path(object, source) {
                        path.push(name);
                        return Some(Target::Path(path));
                    }
                    match value_of(object, source, depth + 1) {
                        Some(receiver) => Some(Target::Method {
                            receiver: Box::new(receiver),
                            name: name.into(),
                        }),
                        None => Some(Target::Member(name)),
                    }
                }
            }
        }
        _ => None,
    }
}

/// `a.b.c` as names, when the expression is only identifiers and properties.
fn name_path(node: Node, source: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut node = node;
    for _ in 0..MAX_VALUE_DEPTH {
        match node.kind() {
            "identifier" => {
                parts.push(text(node, source).to_string());
                parts.reverse();
                return Some(parts);
            }
            "member_expression" => {
                parts.push(text(node.child_by_field_name("property")?, source).to_string());
                node = unwrap_expression(node.child_by_field_name("object")?);
            }
            _ => return None,
        }
    }
    None
}

/// An expression as a [`Value`] the resolver can type: names, `this`, properties, calls,
/// `new C()`, through `await` and parentheses.
fn value_of(node: Node, source: &str, depth: usize) -> Option<Value> {
    if depth > MAX_VALUE_DEPTH {
        return None;
    }
    let node = unwrap_expression(node);
    match node.kind() {
        "identifier" => Some(Value::Name(text(node, source).to_string())),
        "this" => Some(Value::SelfType),
        "member_expression" => {
            let object = value_of(node.child_by_field_name("object")?, source, depth + 1)?;
            let property = text(node.child_by_field_name("property")?, source).to_string();
            Some(Value::Attr(Box::new(object), property))
        }
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            match call_target(function, source, depth + 1)? {
                Target::Member(_) | Target::SuperMember(_) => None,
                target => Some(Value::Call(Box::new(target))),
            }
        }
        "new_expression" => {
            let constructor = node.child_by_field_name("constructor")?;
            let target = call_target(constructor, source, depth + 1)?;
            Some(Value::Call(Box::new(target)))
        }
        "await_expression" => value_of(node.named_child(0)?, source, depth + 1),
        _ => None,
    }
}

/// A base class or interface as the source names it (`B`, `ns.B`).
fn reference_target(node: Node, source: &str) -> Option<Target> {
    match node.kind() {
        "identifier" | "type_identifier" => Some(Target::Name(text(node, source).to_string())),
        "member_expression" | "nested_type_identifier" => {
            let path: Vec<String> = text(node, source)
                .split('.')
                .map(|p| p.trim().to_string())
                .collect();
            Some(Target::Path(path))
        }
        _ => None,
    }
}
