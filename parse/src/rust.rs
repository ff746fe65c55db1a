//! Rust: fn, struct, enum, union, trait (with its methods), impl methods (`Type::method`), mod,
//! `use` declarations, calls and macro calls, and the types the source states (fields, `let`
//! annotations, parameters, constructors, match arms): a call on a receiver binds through them.

use crate::util::{comment_first_line, end_line, header_before, start_line, text, CommentRun};
use crate::{module_facts, Grammar, MAX_DEPTH};
use tg_lang::rust::{crate_key, module_key, Rust};
use tg_lang::{
    Binding, Declares, FileFacts, Import, ModuleRef, RefKind, Reference, ScopeRule, Symbol, Target,
    TypeFact, TypeSlot, Value,
};
use tg_shared::hash::ContentHash;
use tg_shared::record::{EdgeKind, NodeKind};
use tree_sitter::Node;

impl Grammar for Rust {
    fn grammar(&self, _path: &str) -> tree_sitter::Language {
        tree_sitter_rust::LANGUAGE.into()
    }

    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts {
        Walker {
            source,
            module_key: module_key(path),
            crate_key: crate_key(path),
            facts: FileFacts::default(),
            arm_bindings: Vec::new(),
        }
        .run(path, tree.root_node())
    }
}

struct Task<'t> {
    node: Node<'t>,
    scope: u32,
    depth: usize,
    doc: Option<Node<'t>>,
    /// The type of the enclosing `impl` or `trait`.
    owner: Option<String>,
    /// Inside an item compiled for tests only.
    test_only: bool,
}

/// What a visited node hands to its children: their scope, owner type and test-only flag.
type Inherited = (u32, Option<String>, bool);

struct Walker<'s> {
    source: &'s str,
    module_key: String,
    crate_key: String,
    facts: FileFacts,
    /// Names match arms bind: (scope, name, first line, last line of the arm).
    arm_bindings: Vec<ArmBinding>,
}

/// A name a match arm binds, typed by that arm's variant alone.
struct ArmBinding {
    scope: u32,
    name: String,
    lines: (u32, u32),
}

impl ArmBinding {
    /// The name this arm's binding is typed under: each arm's `s` its own variable.
    fn unique(&self) -> String {
        format!("{}@{}", self.name, self.lines.0)
    }
}

impl<'s> Walker<'s> {
    fn run(mut self, path: &str, root: Node) -> FileFacts {
        self.facts = module_facts(path, self.source, root, None);
        let mut stack = vec![Task {
            node: root,
            scope: 0,
            depth: 0,
            doc: None,
            owner: None,
            test_only: false,
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
            let Some((scope, owner, test_only)) = self.visit(&task) else {
                continue;
            };
            let mut comments = CommentRun::new();
            for child in task.node.children(&mut cursor) {
                let kind = child.kind();
                let is_comment = kind == "line_comment" || kind == "block_comment";
                let is_doc = is_comment && is_outer_doc(text(child, self.source));
                let doc = comments.step(
                    child,
                    is_doc,
                    kind == "attribute_item" || (is_comment && !is_doc),
                );
                // Leaves (names, literals) hold nothing to extract.
                if child.is_named() && !is_comment && child.child_count() > 0 {
                    children.push(Task {
                        node: child,
                        scope,
                        depth: task.depth + 1,
                        doc,
                        owner: owner.clone(),
                        test_only,
                    });
                }
            }
            stack.extend(children.drain(..).rev());
        }
        self.bind_arms();
        self.facts
    }

    /// `match x { A(ref s) => s.f(), B(ref s) => s.f() }`: each arm's `s` has its own type.
    /// The arms' facts are typed under a name of their own, and the calls inside each arm's
    /// lines renamed to it. Arms sharing a line (a one-line match) keep the common name, whose
    /// types add up.
    fn bind_arms(&mut self) {
        let bindings = std::mem::take(&mut self.arm_bindings);
        let overlaps = |a: &ArmBinding| {
            bindings.iter().any(|b| {
                !std::ptr::eq(a, b)
                    && a.scope == b.scope
                    && a.name == b.name
                    && a.lines.0 <= b.lines.1
                    && b.lines.0 <= a.lines.1
            })
        };
        for binding in bindings.iter().filter(|b| !overlaps(b)) {
            let unique = binding.unique();
            let (first, last) = binding.lines;
            for fact in &mut self.facts.types {
                if fact.scope == binding.scope
                    && fact.name == binding.name
                    && matches!(&fact.value, Value::Attr(_, field) if field.starts_with(ARM_FIELD_MARK) && field.ends_with(&format!("@{first}")))
                {
                    fact.name = unique.clone();
                    if let Value::Attr(_, field) = &mut fact.value {
                        *field = field
                            .trim_start_matches(ARM_FIELD_MARK)
                            .rsplit_once('@')
                            .map_or(field.clone(), |(f, _)| f.to_string());
                    }
                }
            }
            for reference in &mut self.facts.refs {
                if reference.scope == binding.scope && (first..=last).contains(&reference.line) {
                    rename_receiver(&mut reference.target, &binding.name, &unique);
                }
            }
        }
        // Facts of arms that kept the common name lose their marks.
        for fact in &mut self.facts.types {
            if let Value::Attr(_, field) = &mut fact.value {
                if let Some(rest) = field.strip_prefix(ARM_FIELD_MARK) {
                    *field = rest
                        .rsplit_once('@')
                        .map_or(rest.to_string(), |(f, _)| f.to_string());
                }
            }
        }
    }

    /// Handles one node; returns the scope and owner for its children, or `None` to skip them.
    fn visit(&mut self, task: &Task) -> Option<Inherited> {
        let node = task.node;
        let source = self.source;
        let item_kind = match node.kind() {
            "function_item" | "function_signature_item" => Some(if task.owner.is_some() {
                NodeKind::Method
            } else {
                NodeKind::Function
            }),
            "struct_item" => Some(NodeKind::Struct),
            "enum_item" => Some(NodeKind::Enum),
            "union_item" => Some(NodeKind::Union),
            "trait_item" => Some(NodeKind::Trait),
            "mod_item" => Some(NodeKind::Mod),
            _ => None,
        };
        if let Some(kind) = item_kind {
            return self.item(task, kind);
        }
        match node.kind() {
            "impl_item" => {
                // Items of the body become `Type::item`; the type and trait children hold no
                // definitions, so visiting them with the owner is harmless.
                let owner = node
                    .child_by_field_name("type")
                    .and_then(|t| type_base_name(t, source));
                let test_only = task.test_only
                    || attributes_before(node, source)
                        .iter()
                        .any(|a| is_test_attribute(a));
                return Some((task.scope, owner, test_only));
            }
            "use_declaration" => {
                if let Some(argument) = node.child_by_field_name("argument") {
                    self.use_tree(argument, Vec::new(), task.scope, start_line(node));
                }
                return None;
            }
            "let_declaration" | "let_condition" => self.let_type(node, task.scope),
            "for_expression" => self.loop_type(node, task.scope),
            "match_expression" => self.match_arm_types(node, task.scope),
            "token_tree" => self.macro_calls(node, task.scope),
            "call_expression" => {
                if let Some(function) = node.child_by_field_name("function") {
                    if let Some(target) = self.call_target(function, task.scope) {
                        self.facts.refs.push(Reference {
                            scope: task.scope,
                            line: start_line(node),
                            kind: RefKind::Call,
                            target,
                        });
                    }
                }
            }
            "line_comment"
            | "block_comment"
            | "string_literal"
            | "raw_string_literal"
            | "attribute_item"
            | "inner_attribute_item" => return None,
            _ => {}
        }
        Some((task.scope, task.owner.clone(), task.test_only))
    }

    /// An item that defines a symbol (fn, struct, enum, union, trait, inline mod), with the
    /// types its fields, variants or parameters state; `mod x;` is an import of the file
    /// module instead.
    fn item(&mut self, task: &Task, kind: NodeKind) -> Option<Inherited> {
        let node = task.node;
        let source = self.source;
        let name = text(node.child_by_field_name("name")?, source).to_string();
        let attributes = attributes_before(node, source);
        let test_only = task.test_only
            || (kind == NodeKind::Mod && name == "tests")
            || attributes.iter().any(|a| is_test_attribute(a));
        if kind == NodeKind::Mod && node.child_by_field_name("body").is_none() {
            self.file_module(node, name, test_only);
            return None;
        }
        // `#[cfg(unix)] fn f()` beside `#[cfg(windows)] fn f()`: which one exists depends
        // on the build. `cfg(test)` is the test flag instead.
        let conditional = attributes
            .iter()
            .any(|a| a.starts_with("cfg(") && !is_test_attribute(a));
        let parent = &self.facts.symbols[task.scope as usize];
        let mut qualname = parent.qualname.clone();
        if parent.kind != NodeKind::Trait {
            if let Some(owner) = task.owner.as_deref() {
                push_path(&mut qualname, owner);
            }
        }
        push_path(&mut qualname, &name);
        let body = node.child_by_field_name("body");
        let index = self.facts.symbols.len() as u32;
        let is_method = kind == NodeKind::Method;
        self.facts.symbols.push(Symbol {
            kind,
            name: name.clone(),
            qualname,
            parent: Some(task.scope),
            line_start: start_line(node),
            line_end: end_line(node),
            // Attributes are not part of the hashed text.
            text_start: None,
            signature: Some(
                header_before(node, body, source)
                    .trim_end_matches(';')
                    .to_string(),
            ),
            doc: task.doc.and_then(|c| comment_first_line(text(c, source))),
            hash: ContentHash::of(text(node, source).as_bytes()),
            scope: ScopeRule::Transparent,
            owner_type: task.owner.clone().filter(|_| is_method),
            returns: node
                .child_by_field_name("return_type")
                .and_then(|t| type_value(t, source)),
            stub: false,
            conditional,
            test_only,
            fixture: false,
            getter: false,
            test_case: matches!(kind, NodeKind::Function | NodeKind::Method)
                && attributes.iter().any(|a| is_test_case_attribute(a)),
            accessor: false,
            implements: is_method.then(|| implemented_trait(node, source)).flatten(),
        });
        match kind {
            NodeKind::Struct | NodeKind::Union => self.field_types(body, index, task.scope),
            NodeKind::Enum => self.variant_types(body, index, task.scope),
            NodeKind::Function | NodeKind::Method => {
                if let Some(parameters) = node.child_by_field_name("parameters") {
                    let bounds = generic_bounds(node, source);
                    self.parameter_types(parameters, index, &bounds);
                }
            }
            _ => {}
        }
        let owner = match kind {
            NodeKind::Trait => Some(name),
            NodeKind::Function | NodeKind::Method | NodeKind::Mod => None,
            _ => return None,
        };
        Some((index, owner, test_only))
    }

    /// `mod x;` declares a file module: an edge, not a node. Under `#[cfg(test)]` (or named
    /// `tests`, as an inline module is) the file is compiled for tests only.
    fn file_module(&mut self, node: Node, name: String, test_only: bool) {
        self.facts.imports.push(Import {
            declares: if test_only {
                Declares::TestSubmodule
            } else {
                Declares::Submodule
            },
            scope: 0,
            line: start_line(node),
            edge: Some(EdgeKind::Imports),
            target: vec![ModuleRef::Key(format!("{}::{name}", self.module_key))],
            binding: Binding::Module {
                module: format!("{}::{name}", self.module_key),
                name,
            },
        });
    }

    /// Calls written inside a macro's arguments (`assert!(self.check())`, `vec![T::new()]`,
    /// `write!(f, "{}", x.name())`): tree-sitter keeps them as tokens, so they are read off
    /// the token sequence: a name, path or `receiver.` chain followed by a `(...)` group.
    fn macro_calls(&mut self, tree: Node, scope: u32) {
        let source = self.source;
        let mut cursor = tree.walk();
        let tokens: Vec<Node> = tree.children(&mut cursor).collect();
        for (i, token) in tokens.iter().enumerate() {
            let opens_call = token.kind() == "token_tree"
                && token.child(0).is_some_and(|open| open.kind() == "(");
            if !opens_call || i == 0 || tokens[i - 1].kind() != "identifier" {
                continue;
            }
            let mut parts = vec![text(tokens[i - 1], source).to_string()];
            let mut j = i - 1;
            let mut separator = None;
            // `Pin::new(&mut self.codec).poll_next(cx)`: the receiver a std pointer wraps.
            let mut wrapped = None;
            while j >= 2 {
                let sep = tokens[j - 1].kind();
                let head = tokens[j - 2];
                if !matches!(sep, "." | "::") || separator.is_some_and(|s| s != sep) {
                    break;
                }
                if !matches!(head.kind(), "identifier" | "self" | "crate" | "super") {
                    wrapped = (sep == "." && parts.len() == 1)
                        .then(|| wrapped_receiver_tokens(&tokens, j - 2, source))
                        .flatten();
                    if wrapped.is_some() {
                        separator = Some(sep);
                    } else {
                        // `f(x).m()`, `a[0].m()`: a receiver we cannot state.
                        parts.clear();
                    }
                    break;
                }
                separator = Some(sep);
                parts.push(text(head, source).to_string());
                j -= 2;
            }
            // A chain continued from a call or an index (`x().m()`) is not followed.
            let continued = j >= 1 && matches!(tokens[j - 1].kind(), "." | "::");
            if parts.is_empty() || (continued && wrapped.is_none()) {
                continue;
            }
            parts.reverse();
            let target = match separator {
                None => Some(Target::Name(parts.remove(0))),
                Some("::") => self.path_target(parts, scope),
                Some(_) if wrapped.is_some() => wrapped.take().map(|receiver| Target::Method {
                    receiver: Box::new(receiver),
                    name: parts.remove(0).into(),
                }),
                Some(_) => {
                    let name = parts.pop().unwrap_or_default();
                    let mut value = match parts[0].as_str() {
                        "self" => Value::SelfType,
                        head => Value::Name(head.to_string()),
                    };
                    if parts.len() == 1 && value == Value::SelfType {
                        Some(Target::SelfMember(name))
                    } else {
                        for attr in &parts[1..] {
                            value = Value::Attr(Box::new(value), attr.clone());
                        }
                        Some(Target::Method {
                            receiver: Box::new(value),
                            name: name.into(),
                        })
                    }
                }
            };
            if let Some(target) = target {
                self.facts.refs.push(Reference {
                    scope,
                    line: start_line(tokens[i - 1]),
                    kind: RefKind::Call,
                    target,
                });
            }
        }
    }

    fn call_target(&self, function: Node, scope: u32) -> Option<Target> {
        self.call_target_at(function, scope, 0)
    }

    fn call_target_at(&self, function: Node, scope: u32, depth: usize) -> Option<Target> {
        let source = self.source;
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        match function.kind() {
            "identifier" => Some(Target::Name(text(function, source).to_string())),
            "generic_function" => {
                self.call_target_at(function.child_by_field_name("function")?, scope, depth + 1)
            }
            "field_expression" => {
                let field = text(function.child_by_field_name("field")?, source).to_string();
                let value = function.child_by_field_name("value")?;
                if value.kind() == "self" {
                    Some(Target::SelfMember(field))
                } else {
                    match self.value_of(value, scope, depth + 1) {
                        Some(receiver) => Some(Target::Method {
                            receiver: Box::new(receiver),
                            name: field.into(),
                        }),
                        None => Some(Target::Member(field)),
                    }
                }
            }
            "scoped_identifier" => {
                let segments = path_segments(function, source)?;
                self.path_target(segments, scope)
            }
            _ => None,
        }
    }

    /// An expression as a [`Value`] the resolver can type: `x`, `self`, `a.b`, `T::new(..)`,
    /// `T { .. }`, through `&`, `?`, `.await` and parentheses.
    fn value_of(&self, node: Node, scope: u32, depth: usize) -> Option<Value> {
        let source = self.source;
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        let inner = |node: Option<Node>| self.value_of(node?, scope, depth + 1);
        match node.kind() {
            "identifier" => Some(Value::Name(text(node, source).to_string())),
            "self" => Some(Value::SelfType),
            "field_expression" => {
                let object = inner(node.child_by_field_name("value"))?;
                let field = text(node.child_by_field_name("field")?, source).to_string();
                Some(Value::Attr(Box::new(object), field))
            }
            "call_expression" => {
                let function = node.child_by_field_name("function")?;
                if let Some(argument) = wrapped_argument(node, function, source) {
                    return inner(Some(argument));
                }
                match self.call_target_at(function, scope, depth + 1)? {
                    Target::Member(_) => None,
                    target => Some(Value::Call(Box::new(target))),
                }
            }
            "struct_expression" => {
                let name = node.child_by_field_name("name")?;
                let segments = path_segments(name, source)?;
                Some(if segments == ["Self"] {
                    Value::SelfType
                } else {
                    Value::Type(segments)
                })
            }
            "reference_expression" => inner(node.child_by_field_name("value")),
            // `*self`, `*x`: the value behind the reference.
            "unary_expression" if text(node, source).starts_with('*') => inner(node.named_child(0)),
            "try_expression" | "parenthesized_expression" | "await_expression" => {
                inner(node.named_child(0))
            }
            // `match x.lock() { Ok(g) => g, Err(_) => return }`: the unwrapped scrutinee.
            "match_expression" => inner(unwrapped_scrutinee(node, source)),
            _ => None,
        }
    }

    /// `field: T` of a struct, and the positional fields of a tuple struct (`struct W(T)`,
    /// named `0`, `1`, ...): the type of `self.field`.
    fn field_types(&mut self, body: Option<Node>, owner: u32, scope: u32) {
        let Some(body) = body else { return };
        let mut fields: Vec<(String, Node)> = Vec::new();
        let mut cursor = body.walk();
        if body.kind() == "ordered_field_declaration_list" {
            let types = body.children_by_field_name("type", &mut cursor);
            fields.extend(types.enumerate().map(|(i, ty)| (i.to_string(), ty)));
        } else {
            for field in body.named_children(&mut cursor) {
                let name = field.child_by_field_name("name");
                let ty = field.child_by_field_name("type");
                if let (Some(name), Some(ty)) = (name, ty) {
                    fields.push((text(name, self.source).to_string(), ty));
                }
            }
        }
        self.attribute_types(fields, owner, scope);
    }

    /// Each `(name, type)` as a declared attribute of the struct, union or enum `owner`.
    fn attribute_types(&mut self, fields: Vec<(String, Node)>, owner: u32, scope: u32) {
        for (name, ty) in fields {
            if let Some(value) = type_value(ty, self.source) {
                self.facts.types.push(TypeFact {
                    scope: owner,
                    slot: TypeSlot::Attribute,
                    name,
                    eval_scope: scope,
                    value,
                    declared: true,
                });
            }
        }
    }

    /// The data of each enum variant, as attributes named `Variant::0` (tuple variants) and
    /// `Variant::field` (struct variants): what a `match` arm's pattern binds.
    fn variant_types(&mut self, body: Option<Node>, owner: u32, scope: u32) {
        let Some(body) = body else { return };
        let source = self.source;
        let mut fields: Vec<(String, Node)> = Vec::new();
        let mut cursor = body.walk();
        for variant in body.named_children(&mut cursor) {
            let (Some(name), Some(data)) = (
                variant.child_by_field_name("name"),
                variant.child_by_field_name("body"),
            ) else {
                continue;
            };
            let name = text(name, source);
            let mut inner = data.walk();
            if data.kind() == "ordered_field_declaration_list" {
                let types = data.children_by_field_name("type", &mut inner);
                fields.extend(
                    types
                        .enumerate()
                        .map(|(i, ty)| (format!("{name}::{i}"), ty)),
                );
            } else {
                for field in data.named_children(&mut inner) {
                    if let (Some(f), Some(ty)) = (
                        field.child_by_field_name("name"),
                        field.child_by_field_name("type"),
                    ) {
                        fields.push((format!("{name}::{}", text(f, source)), ty));
                    }
                }
            }
        }
        self.attribute_types(fields, owner, scope);
    }

    /// `match value { Variant(x) => .. }`: `x` holds the variant's data (`Variant::0` of the
    /// value's enum).
    fn match_arm_types(&mut self, node: Node, scope: u32) {
        let source = self.source;
        let Some(scrutinee) = node
            .child_by_field_name("value")
            .and_then(|v| self.value_of(v, scope, 0))
        else {
            return;
        };
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let mut cursor = body.walk();
        let arms: Vec<Node> = body
            .named_children(&mut cursor)
            .filter(|arm| arm.kind() == "match_arm")
            .collect();
        for arm in arms {
            let pattern = arm
                .child_by_field_name("pattern")
                .and_then(|p| p.named_child(0));
            let Some(pattern) = pattern.filter(|p| p.kind() == "tuple_struct_pattern") else {
                continue;
            };
            let Some(variant) = pattern
                .child_by_field_name("type")
                .and_then(|t| path_segments(t, source))
                .and_then(|segments| segments.last().cloned())
            else {
                continue;
            };
            let mut inner = pattern.walk();
            let bound: Vec<Node> = pattern.named_children(&mut inner).skip(1).collect();
            for (i, binding) in bound.into_iter().enumerate() {
                let Some(name) = binding_identifier(binding) else {
                    continue;
                };
                let lines = (start_line(arm), end_line(arm));
                self.arm_bindings.push(ArmBinding {
                    scope,
                    name: text(name, source).to_string(),
                    lines,
                });
                self.facts.types.push(TypeFact {
                    scope,
                    slot: TypeSlot::Variable,
                    name: text(name, source).to_string(),
                    eval_scope: scope,
                    // Marked with its arm until `bind_arms` gives it the arm's own name.
                    value: Value::Attr(
                        Box::new(scrutinee.clone()),
                        format!("{ARM_FIELD_MARK}{variant}::{i}@{}", lines.0),
                    ),
                    // Each arm binds its own `x`; as declarations, the arms' types add up
                    // instead of one arm's outside type spoiling the others.
                    declared: true,
                });
            }
        }
    }

    /// `x: &T` parameters and `self`.
    /// `bounds` names the trait of each generic parameter (`T: Trait` types `x: &T` as Trait).
    fn parameter_types(&mut self, parameters: Node, function: u32, bounds: &[(String, String)]) {
        let source = self.source;
        let mut cursor = parameters.walk();
        for param in parameters.named_children(&mut cursor) {
            let (name, value) = match param.kind() {
                "self_parameter" => ("self".to_string(), Some(Value::SelfType)),
                "parameter" => {
                    let pattern = param.child_by_field_name("pattern");
                    let Some(pattern) = pattern.filter(|p| p.kind() == "identifier") else {
                        continue;
                    };
                    let value = param
                        .child_by_field_name("type")
                        .and_then(|t| type_value(t, source))
                        .map(|value| match value {
                            Value::Type(path) => match (path.as_slice(), bounds) {
                                ([generic], bounds) => bounds
                                    .iter()
                                    .find(|(name, _)| name == generic)
                                    .map_or(Value::Type(path.clone()), |(_, bound)| {
                                        Value::Type(vec![bound.clone()])
                                    }),
                                _ => Value::Type(path),
                            },
                            other => other,
                        });
                    (text(pattern, source).to_string(), value)
                }
                _ => continue,
            };
            if let Some(value) = value {
                self.facts.variable_type(function, name, value, true);
            }
        }
    }

    /// `let x: T = ..` / `let x = T::new(..)` / `let x = T { .. }`.
    /// Also `if let Some(x) = value` / `let Ok(x) = value`: `Option` and `Result` are seen
    /// through, so `x` has the value's type.
    fn let_type(&mut self, node: Node, scope: u32) {
        let source = self.source;
        // A closure bound by name is what a call of that name calls (`let config = |c| ...;
        // config(c)`), never a same-named function elsewhere. Only closures: a local is local
        // to the whole scope here, and `let agent = agent();` still calls the function.
        let closure = node
            .child_by_field_name("value")
            .is_some_and(|v| v.kind() == "closure_expression");
        if let Some(name) = node
            .child_by_field_name("pattern")
            .filter(|p| closure && p.kind() == "identifier")
        {
            self.facts
                .locals
                .push((scope, text(name, source).to_string()));
        }
        let Some(pattern) = node
            .child_by_field_name("pattern")
            .and_then(|p| bound_identifier(p, source))
        else {
            return;
        };
        let declared = node
            .child_by_field_name("type")
            .and_then(|t| type_value(t, source));
        let (declared, value) = match declared {
            Some(value) => (true, value),
            None => (
                false,
                node.child_by_field_name("value")
                    .and_then(|v| self.value_of(v, scope, 0))
                    .unwrap_or(Value::Type(Vec::new())),
            ),
        };
        self.facts
            .variable_type(scope, text(pattern, source).to_string(), value, declared);
    }

    /// `for x in &self.items` / `for x in items.iter()`: `x` is an element of the iterable.
    fn loop_type(&mut self, node: Node, scope: u32) {
        let source = self.source;
        let Some(pattern) = node
            .child_by_field_name("pattern")
            .and_then(|p| bound_identifier(p, source))
        else {
            return;
        };
        let value = node
            .child_by_field_name("value")
            .and_then(|v| self.value_of(v, scope, 0))
            .map_or(Value::Type(Vec::new()), |iterable| {
                Value::ElementOf(Box::new(iterable))
            });
        self.facts
            .variable_type(scope, text(pattern, source).to_string(), value, false);
    }

    /// Turns `crate::a::f`, `self::f`, `super::f`, `Self::f` and `a::b::f` into targets.
    fn path_target(&self, segments: Vec<String>, scope: u32) -> Option<Target> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" => Some(Target::Qualified(Box::new((
                self.crate_key.clone(),
                rest.to_vec(),
            )))),
            "self" => Some(Target::Qualified(Box::new((
                self.module_key_at(scope),
                rest.to_vec(),
            )))),
            "super" => Some(Target::Qualified(Box::new((
                parent_key(&self.module_key_at(scope)),
                rest.to_vec(),
            )))),
            "Self" if rest.len() == 1 => Some(Target::SelfMember(rest[0].clone())),
            _ => Some(Target::Path(segments)),
        }
    }

    /// Flattens `use a::{b, c::d as e, f::*}` into one import per leaf. Iterative, with the
    /// nesting bounded by [`MAX_DEPTH`]: a use list nested thousands deep (hostile input) must
    /// not overflow the stack.
    fn use_tree(&mut self, node: Node, prefix: Vec<String>, scope: u32, line: u32) {
        let source = self.source;
        let mut pending = vec![(node, prefix, 0usize)];
        while let Some((node, prefix, depth)) = pending.pop() {
            if depth > MAX_DEPTH {
                self.facts.depth_limit_line.get_or_insert(start_line(node));
                continue;
            }
            match node.kind() {
                "scoped_use_list" => {
                    let mut prefix = prefix;
                    if let Some(path) = node.child_by_field_name("path") {
                        prefix.extend(path_segments(path, source).unwrap_or_default());
                    }
                    if let Some(list) = node.child_by_field_name("list") {
                        pending.push((list, prefix, depth + 1));
                    }
                }
                "use_list" => {
                    let mut cursor = node.walk();
                    let children: Vec<Node> = node.named_children(&mut cursor).collect();
                    // Reversed, so leaves come out in source order.
                    for child in children.into_iter().rev() {
                        pending.push((child, prefix.clone(), depth + 1));
                    }
                }
                "use_as_clause" => {
                    let (Some(path), Some(alias)) = (
                        node.child_by_field_name("path"),
                        node.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    let mut full = prefix;
                    full.extend(path_segments(path, source).unwrap_or_default());
                    self.use_leaf(full, Some(text(alias, source).to_string()), scope, line);
                }
                "use_wildcard" => {
                    let mut full = prefix;
                    if let Some(path) = node.named_child(0) {
                        full.extend(path_segments(path, source).unwrap_or_default());
                    }
                    if let Some(module) = self.absolute_key(&full, scope) {
                        self.facts.imports.push(Import {
                            declares: Declares::Nothing,
                            scope,
                            line,
                            edge: Some(EdgeKind::Imports),
                            target: vec![ModuleRef::Key(module.clone())],
                            binding: Binding::Star { module },
                        });
                    }
                }
                "identifier" | "scoped_identifier" | "self" | "crate" | "super" => {
                    let mut full = prefix;
                    full.extend(path_segments(node, source).unwrap_or_default());
                    self.use_leaf(full, None, scope, line);
                }
                _ => {}
            }
        }
    }

    fn use_leaf(&mut self, mut path: Vec<String>, alias: Option<String>, scope: u32, line: u32) {
        // `use a::b::{self}` names `a::b` itself.
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let Some(member) = path.pop() else { return };
        let Some(module) = self.absolute_key(&path, scope) else {
            return;
        };
        let name = alias.unwrap_or_else(|| member.clone());
        self.facts.imports.push(Import {
            declares: Declares::Nothing,
            scope,
            line,
            edge: Some(EdgeKind::Imports),
            target: vec![
                ModuleRef::Key(format!("{module}::{member}")),
                ModuleRef::Key(module.clone()),
            ],
            binding: Binding::Member {
                name,
                module,
                member,
            },
        });
    }

    /// Whether the module around `scope` declares a child module `name` (`mod name;` or an
    /// inline `mod name { ... }` seen so far).
    fn declares_module(&self, name: &str, scope: u32) -> bool {
        let here = self.module_key_at(scope);
        let child = format!("{here}::{name}");
        self.facts.imports.iter().any(
            |import| matches!(&import.binding, Binding::Module { module, .. } if *module == child),
        ) || self.facts.symbols.iter().any(|symbol| {
            symbol.kind == NodeKind::Mod
                && symbol.name == name
                && symbol.parent.is_some_and(|p| self.module_key_at(p) == here)
        })
    }

    /// The key of the module `scope` sits in: the file's, plus the inline `mod`s around it
    /// (`use super::*` inside `mod tests` names the file's module, not its parent).
    fn module_key_at(&self, scope: u32) -> String {
        let mut mods = Vec::new();
        let mut current = Some(scope);
        while let Some(index) = current {
            let Some(symbol) = self.facts.symbols.get(index as usize) else {
                break;
            };
            if symbol.kind == NodeKind::Mod {
                mods.push(symbol.name.as_str());
            }
            current = symbol.parent;
        }
        let mut key = self.module_key.clone();
        for name in mods.iter().rev() {
            push_path(&mut key, name);
        }
        key
    }

    /// The module key a `use` path starts from: `crate`, `self` and `super` are ours; anything
    /// else (`std::fs`, `serde`) is named as written.
    fn absolute_key(&self, path: &[String], scope: u32) -> Option<String> {
        let (first, rest) = path.split_first()?;
        let mut key = match first.as_str() {
            "crate" => self.crate_key.clone(),
            "self" => self.module_key_at(scope),
            "super" => parent_key(&self.module_key_at(scope)),
            // A child module of this one (`mod inner;` then `pub use inner::Engine;`), else a
            // crate named as written.
            other if self.declares_module(other, scope) => {
                let mut key = self.module_key_at(scope);
                push_path(&mut key, other);
                key
            }
            other => other.to_string(),
        };
        for part in rest {
            match part.as_str() {
                "super" => key = parent_key(&key),
                _ => push_path(&mut key, part),
            }
        }
        Some(key)
    }
}

fn push_path(qualname: &mut String, name: &str) {
    if !qualname.is_empty() {
        qualname.push_str("::");
    }
    qualname.push_str(name);
}

fn parent_key(key: &str) -> String {
    match key.rsplit_once("::") {
        Some((parent, _)) => parent.to_string(),
        None => key.to_string(),
    }
}

/// `a::b::c` as segments (generic arguments dropped).
fn path_segments(node: Node, source: &str) -> Option<Vec<String>> {
    let mut segments = Vec::new();
    let mut cur = node;
    for _ in 0..64 {
        match cur.kind() {
            "scoped_identifier" | "scoped_type_identifier" => {
                segments.push(text(cur.child_by_field_name("name")?, source).to_string());
                match cur.child_by_field_name("path") {
                    Some(path) => cur = path,
                    None => break,
                }
            }
            "generic_type" => cur = cur.child_by_field_name("type")?,
            _ => {
                segments.push(text(cur, source).to_string());
                break;
            }
        }
    }
    segments.reverse();
    Some(segments)
}

/// How deep a receiver expression is followed (`a.b().c()...`): hostile input must not
/// overflow the stack.
const MAX_VALUE_DEPTH: usize = 32;

/// Collections of one element type: a loop over one binds that type.
const COLLECTIONS: &[&str] = &[
    "BTreeSet",
    "BinaryHeap",
    "HashSet",
    "IndexSet",
    "LinkedList",
    "SmallVec",
    "Vec",
    "VecDeque",
];

/// Smart pointers and wrappers whose methods a call reaches through (`Box<T>`, `&T`, `T?`).
const TRANSPARENT_WRAPPERS: &[&str] = &[
    "Arc", "Box", "Cell", "Cow", "Mutex", "Option", "Pin", "Rc", "RefCell", "Result", "RwLock",
    "Weak",
];

/// The std pointers whose constructor gives its argument's methods (`Pin::new(&mut x).poll()`,
/// `Box::new(x)`, `Arc::new(x)`); `Cell` and `Cow` are left out, as common names of a crate's
/// own types.
const POINTER_CONSTRUCTORS: &[&str] = &["Arc", "Box", "Mutex", "Pin", "Rc", "RefCell", "RwLock"];

/// `Pin::new`, `Box::pin`, `Arc::new`: a std pointer's constructor ([`POINTER_CONSTRUCTORS`]).
fn constructs_pointer(pointer: &str, constructor: &str) -> bool {
    matches!(constructor, "new" | "pin") && POINTER_CONSTRUCTORS.contains(&pointer)
}

/// In a macro's tokens, the value a std pointer built just before `tokens[group]` wraps:
/// `Pin::new(&mut self.codec)` gives `self.codec` ([`POINTER_CONSTRUCTORS`]).
fn wrapped_receiver_tokens(tokens: &[Node], group: usize, source: &str) -> Option<Value> {
    if group < 3 || tokens[group].kind() != "token_tree" {
        return None;
    }
    let (pointer, separator, constructor) =
        (tokens[group - 3], tokens[group - 2], tokens[group - 1]);
    if separator.kind() != "::"
        || !constructs_pointer(text(pointer, source), text(constructor, source))
    {
        return None;
    }
    let mut cursor = tokens[group].walk();
    let chain: Vec<Node> = tokens[group]
        .children(&mut cursor)
        .filter(|t| !matches!(t.kind(), "(" | ")" | "&" | "mut" | "mutable_specifier"))
        .collect();
    let (head, rest) = chain.split_first()?;
    let mut value = match head.kind() {
        "self" => Value::SelfType,
        "identifier" => Value::Name(text(*head, source).to_string()),
        _ => return None,
    };
    for pair in rest.chunks(2) {
        match pair {
            [dot, field] if dot.kind() == "." && field.kind() == "identifier" => {
                value = Value::Attr(Box::new(value), text(*field, source).to_string());
            }
            _ => return None,
        }
    }
    Some(value)
}

/// The argument of a std pointer's constructor (`Pin::new(x)`, `Box::pin(x)`,
/// [`POINTER_CONSTRUCTORS`]), whose methods the pointer's value reaches.
fn wrapped_argument<'t>(call: Node<'t>, function: Node, source: &str) -> Option<Node<'t>> {
    if function.kind() != "scoped_identifier" {
        return None;
    }
    let segments = path_segments(function, source)?;
    let [.., pointer, constructor] = segments.as_slice() else {
        return None;
    };
    if !constructs_pointer(pointer, constructor) {
        return None;
    }
    let arguments = call.child_by_field_name("arguments")?;
    if arguments.named_child_count() != 1 {
        return None;
    }
    arguments.named_child(0)
}

/// The type a field, parameter or return type names, as a [`Value`]: `T`, `a::T`, `Self`,
/// through references and [`TRANSPARENT_WRAPPERS`]; other generics by their base type.
fn type_value(node: Node, source: &str) -> Option<Value> {
    let mut node = node;
    for _ in 0..16 {
        match node.kind() {
            "reference_type" | "pointer_type" => node = node.child_by_field_name("type")?,
            "generic_type" => {
                let base = node.child_by_field_name("type")?;
                let name = path_segments(base, source)?;
                let last = name.last().map_or("", String::as_str);
                let args = node.child_by_field_name("type_arguments");
                if COLLECTIONS.contains(&last) {
                    let element = type_value(args?.named_child(0)?, source)?;
                    return Some(Value::Elements(Box::new(element)));
                }
                if !TRANSPARENT_WRAPPERS.contains(&last) {
                    return Some(Value::Type(name));
                }
                node = args?.named_child(0)?;
            }
            "array_type" => {
                let element = type_value(node.child_by_field_name("element")?, source)?;
                return Some(Value::Elements(Box::new(element)));
            }
            // `impl Trait`, `dyn Trait`: a call reaches the trait's method.
            "abstract_type" | "dynamic_type" => node = node.child_by_field_name("trait")?,
            "type_identifier" if text(node, source) == "Self" => return Some(Value::SelfType),
            "type_identifier" | "scoped_type_identifier" => {
                return Some(Value::Type(path_segments(node, source)?))
            }
            _ => return None,
        }
    }
    None
}

/// `Store`, `Store<T>`, `crate::a::Store`, `&mut Store` → `Store`.
fn type_base_name(node: Node, source: &str) -> Option<String> {
    match node.kind() {
        "type_identifier" | "primitive_type" => Some(text(node, source).to_string()),
        "generic_type" => type_base_name(node.child_by_field_name("type")?, source),
        "scoped_type_identifier" => {
            Some(text(node.child_by_field_name("name")?, source).to_string())
        }
        "reference_type" | "pointer_type" => {
            type_base_name(node.child_by_field_name("type")?, source)
        }
        // `impl Index for [u8]`, `for (A, B)`: the type as written, so its methods stay methods.
        _ => Some(text(node, source).split_whitespace().collect::<String>()),
    }
}

/// The first trait bound of each generic parameter of a function, from `<T: Trait>` and
/// `where T: Trait`: a call on a `T` resolves to the trait's method.
fn generic_bounds(function: Node, source: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut constrained = Vec::new();
    if let Some(list) = function.child_by_field_name("type_parameters") {
        let mut cursor = list.walk();
        constrained.extend(list.named_children(&mut cursor));
    }
    let mut cursor = function.walk();
    for child in function.named_children(&mut cursor) {
        if child.kind() == "where_clause" {
            let mut inner = child.walk();
            constrained.extend(child.named_children(&mut inner));
        }
    }
    for item in constrained {
        // `T: Trait` in `<...>` (`name`, or `left` in older grammars) and in `where` (`left`).
        let name = item
            .child_by_field_name("left")
            .or_else(|| item.child_by_field_name("name"));
        let bound = item
            .child_by_field_name("bounds")
            .and_then(|b| b.named_child(0))
            .and_then(|b| path_segments(b, source));
        if let (Some(name), Some(bound)) = (name, bound) {
            if let Some(last) = bound.last() {
                out.push((text(name, source).to_string(), last.clone()));
            }
        }
    }
    out
}

/// The scrutinee of a `match` that unwraps it: an arm `Some(v) => v` or `Ok(v) => v` gives
/// the scrutinee's wrapped value (the other arms return, panic or give a default).
fn unwrapped_scrutinee<'t>(node: Node<'t>, source: &str) -> Option<Node<'t>> {
    let body = node.child_by_field_name("body")?;
    let mut cursor = body.walk();
    let unwraps = body
        .named_children(&mut cursor)
        .filter(|arm| arm.kind() == "match_arm")
        .any(|arm| {
            let pattern = arm
                .child_by_field_name("pattern")
                .and_then(|p| p.named_child(0))
                .filter(|p| p.kind() == "tuple_struct_pattern");
            let bound = pattern.and_then(|p| bound_identifier(p, source));
            let value = arm.child_by_field_name("value").map(|v| match v.kind() {
                // `Ok(v) => { v }`
                "block" if v.named_child_count() == 1 => v.named_child(0).unwrap_or(v),
                _ => v,
            });
            matches!((bound, value), (Some(b), Some(v))
                if v.kind() == "identifier" && text(v, source) == text(b, source))
        });
    if unwraps {
        node.child_by_field_name("value")
    } else {
        None
    }
}

/// The variable a `let` pattern binds: `x`, `mut x`, `ref x`, `Some(x)`, `Ok(x)`.
fn bound_identifier<'t>(pattern: Node<'t>, source: &str) -> Option<Node<'t>> {
    match pattern.kind() {
        "identifier" | "mut_pattern" | "ref_pattern" => binding_identifier(pattern),
        "tuple_struct_pattern" => {
            let head = pattern.child_by_field_name("type")?;
            if !matches!(text(head, source), "Some" | "Ok") || pattern.named_child_count() != 2 {
                return None;
            }
            binding_identifier(pattern.named_child(1)?)
        }
        _ => None,
    }
}

/// The identifier a binding names: `x`, `mut x`, `ref x`, `ref mut x`. A `mut x` holds its
/// `mutable_specifier` before the pattern, so the pattern is its last named child.
fn binding_identifier(pattern: Node) -> Option<Node> {
    match pattern.kind() {
        "identifier" => Some(pattern),
        "mut_pattern" | "ref_pattern" => {
            let last = pattern.named_child_count().checked_sub(1)?;
            binding_identifier(pattern.named_child(last as _)?)
        }
        _ => None,
    }
}

/// The attributes written before an item (`cfg(unix)`, `test`, `derive(Debug)`), without
/// `#[` and `]`, across comments between them.
fn attributes_before(node: Node, source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = node.prev_sibling();
    while let Some(sibling) = current {
        match sibling.kind() {
            "attribute_item" => {
                let inner = text(sibling, source)
                    .trim_start_matches("#[")
                    .trim_end_matches(']');
                out.push(inner.split_whitespace().collect());
            }
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        current = sibling.prev_sibling();
    }
    out
}

/// Marks a match arm's variant field in a fact until [`Walker::bind_arms`] settles its name.
const ARM_FIELD_MARK: &str = "\u{1}arm:";

/// Renames the variable at the root of a call's receiver (`s.f()`, `s.x.f()`, `s.g().f()`).
fn rename_receiver(target: &mut Target, from: &str, to: &str) {
    if let Target::Method { receiver, .. } = target {
        rename_value(receiver, from, to);
    }
}

fn rename_value(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::Name(name) if name == from => *name = to.to_string(),
        Value::Attr(object, _) => rename_value(object, from, to),
        Value::Call(target) => rename_receiver(target, from, to),
        Value::ElementOf(inner) | Value::Elements(inner) => rename_value(inner, from, to),
        _ => {}
    }
}

/// The trait of the `impl Trait for T` block a method is written in.
fn implemented_trait(method: Node, source: &str) -> Option<String> {
    let block = method.parent()?.parent()?;
    if block.kind() != "impl_item" {
        return None;
    }
    type_base_name(block.child_by_field_name("trait")?, source)
}

/// An attribute that makes a function a test the runner collects: `#[test]`, a test macro of
/// a crate (`#[tokio::test]`, `#[test_log::test(...)]`), `#[rstest]`, `#[test_case(...)]`.
fn is_test_case_attribute(attribute: &str) -> bool {
    let path = attribute.split('(').next().unwrap_or(attribute).trim();
    let last = path.rsplit("::").next().unwrap_or(path);
    matches!(
        last,
        "test" | "rstest" | "test_case" | "quickcheck" | "wasm_bindgen_test"
    )
}

/// `#[test]`, `#[tokio::test]`, and a `cfg` that holds only in test builds: `cfg(test)`, or
/// `cfg(all(test, ...))` (`cfg(any(test, ...))` holds elsewhere too).
fn is_test_attribute(attribute: &str) -> bool {
    if attribute == "test" || attribute.ends_with("::test") {
        return true;
    }
    let Some(predicate) = attribute
        .strip_prefix("cfg(")
        .and_then(|p| p.strip_suffix(')'))
    else {
        return false;
    };
    let predicate = predicate.trim();
    predicate == "test"
        || predicate
            .strip_prefix("all(")
            .and_then(|p| p.strip_suffix(')'))
            .is_some_and(|args| top_level_args(args).any(|arg| arg.trim() == "test"))
}

/// The comma-separated arguments of a `cfg` combinator, commas inside nested parentheses or
/// strings left alone.
fn top_level_args(args: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut quoted = false;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in args.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    parts.into_iter()
}

fn is_outer_doc(comment: &str) -> bool {
    (comment.starts_with("///") && !comment.starts_with("////"))
        || (comment.starts_with("/**") && !comment.starts_with("/***"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_attributes_of_test_builds_mark_test_code() {
        for attribute in [
            "test",
            "tokio::test",
            "cfg(test)",
            "cfg(all(test,feature=\"_test\"))",
            "cfg(all(feature=\"a,b\",test))",
        ] {
            assert!(is_test_attribute(attribute), "{attribute}");
        }
        for attribute in [
            "cfg(any(test,feature=\"_test\"))",
            "cfg(not(test))",
            "cfg(all(not(test),unix))",
            "cfg(feature=\"test\")",
            "derive(Debug)",
        ] {
            assert!(!is_test_attribute(attribute), "{attribute}");
        }
    }

    #[test]
    fn super_inside_an_inline_mod_names_the_files_module() {
        let source = "pub fn helper() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use self::inner::x;\n    mod inner {\n        use super::super::helper;\n    }\n}\n";
        let facts = crate::extract_file(&Rust, "shared/src/store.rs", source).expect("parses");
        let modules: Vec<String> = facts
            .imports
            .iter()
            .map(|import| match &import.binding {
                Binding::Star { module } => format!("* {module}"),
                Binding::Member { module, member, .. } => format!("{module} {member}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            modules,
            [
                "* shared/crate::store",
                "shared/crate::store::tests::inner x",
                "shared/crate::store helper",
            ]
        );
    }

    #[test]
    fn a_use_of_a_child_module_is_relative_to_this_module() {
        let source = "mod inner;\npub use inner::Engine;\nuse serde::Serialize;\n";
        let facts = crate::extract_file(&Rust, "core/src/lib.rs", source).expect("parses");
        let modules: Vec<String> = facts
            .imports
            .iter()
            .filter_map(|import| match &import.binding {
                Binding::Member { module, member, .. } => Some(format!("{module} {member}")),
                _ => None,
            })
            .collect();
        assert_eq!(modules, ["core/crate::inner Engine", "serde Serialize"]);
    }
}
