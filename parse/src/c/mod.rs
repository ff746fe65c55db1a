//! C: function definitions, struct/union/enum definitions with bodies, typedefs, function-like
//! macros, `#include`s and calls.
//!
//! Without a preprocessor about half of real C files hold an ERROR node somewhere (macros), so
//! the walk descends through ERROR subtrees instead of giving up on them: a broken region costs
//! the definitions inside it, not the ones after it.

use crate::util::{
    comment_first_line, end_line, header_before, one_line, start_line, text, CommentRun,
};
use crate::{module_facts, Grammar, MAX_DEPTH};
use tg_lang::c::C;
use tg_lang::{
    Binding, Declares, FileFacts, Import, ModuleRef, RefKind, Reference, ScopeRule, Symbol, Target,
};
use tg_shared::hash::ContentHash;
use tg_shared::record::{EdgeKind, NodeKind};
use tree_sitter::Node;

mod recover;

impl Grammar for C {
    fn grammar(&self, _path: &str) -> tree_sitter::Language {
        tree_sitter_c::LANGUAGE.into()
    }

    fn extract(&self, path: &str, source: &str, tree: &tree_sitter::Tree) -> FileFacts {
        extract(path, source, tree.root_node())
    }

    fn prepare_source<'s>(&self, source: &'s str) -> std::borrow::Cow<'s, str> {
        blank_cplusplus_linkage(source)
    }
}

struct Task<'t> {
    node: Node<'t>,
    scope: u32,
    depth: usize,
    doc: Option<Node<'t>>,
}

fn extract(path: &str, source: &str, root: Node) -> FileFacts {
    let mut facts = module_facts(path, source, root, None);
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut aliases = Vec::new();
    let misread = walk(root, None, source, dir, &mut facts, &mut aliases);
    if root.has_error() || misread {
        recover::recover(root, source, dir, &mut facts);
    }
    add_shadowing_aliases(&mut facts, aliases, source);
    facts
}

/// `#define xmemcpy memcpy` in a file that also defines a function `xmemcpy` (for builds
/// without memcpy): which one a call reaches depends on the configuration, so the alias is
/// recorded as a macro beside the function and the resolver makes such calls ambiguous.
/// Other object-like macros are not symbols.
fn add_shadowing_aliases(facts: &mut FileFacts, aliases: Vec<Node>, source: &str) {
    for define in aliases {
        let Some(name) = define.child_by_field_name("name").map(|n| text(n, source)) else {
            continue;
        };
        let shadows = facts
            .symbols
            .iter()
            .any(|s| s.kind == NodeKind::Function && s.name == name);
        if shadows {
            let value = define
                .child_by_field_name("value")
                .map_or("", |v| text(v, source).trim());
            push_symbol(
                facts,
                NodeKind::Macro,
                name.to_string(),
                name.to_string(),
                define,
                format!("#define {name} {value}"),
                None,
                source,
            );
        }
    }
}

/// Walks a (sub)tree into `facts`: definitions hang off the module, calls off their function.
/// Object-like macros that alias a name (`#define xmemcpy memcpy`) are collected in `aliases`.
/// Walks the tree from `root` (documented by `doc`), adding what it defines and calls to
/// `facts`; whether it passed a definition misread around an attribute call
/// ([`recover::misread_attribute`]), left for recovery to read again.
fn walk<'t>(
    root: Node<'t>,
    doc: Option<Node<'t>>,
    source: &str,
    dir: &str,
    facts: &mut FileFacts,
    aliases: &mut Vec<Node<'t>>,
) -> bool {
    let mut misread = false;
    let mut stack = vec![Task {
        node: root,
        scope: 0,
        depth: 0,
        doc,
    }];
    let mut children = Vec::new();
    // One cursor for the whole walk: `node.walk()` per node allocates.
    let mut cursor = root.walk();
    while let Some(task) = stack.pop() {
        if task.depth > MAX_DEPTH {
            facts.depth_limit_line.get_or_insert(start_line(task.node));
            continue;
        }
        let node = task.node;
        let mut scope = task.scope;
        match node.kind() {
            "function_definition" if recover::misread_attribute(node, source) => {
                misread = true;
                continue;
            }
            "function_definition" => {
                if let Some(function) = function_definition(facts, node, task.doc, source) {
                    scope = function;
                }
            }
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                tagged_type(facts, node, task.doc, source);
            }
            "type_definition" => {
                let declarators: Vec<Node> = node
                    .children_by_field_name("declarator", &mut cursor)
                    .collect();
                type_definitions(facts, node, &declarators, task.doc, source);
            }
            "preproc_function_def" => {
                function_macro(facts, node, task.doc, source);
                continue;
            }
            "preproc_def" => {
                if is_name_alias(node, source) {
                    aliases.push(node);
                }
                continue;
            }
            "preproc_include" => {
                include(facts, node, dir, source);
                continue;
            }
            "call_expression" => call(facts, node, task.scope, source),
            "comment" | "string_literal" | "char_literal" | "number_literal" => continue,
            _ => {}
        }
        let mut comments = CommentRun::new();
        for child in node.children(&mut cursor) {
            let is_comment = child.kind() == "comment";
            let doc = comments.step(child, is_comment, false);
            // Leaves (names, literals) hold nothing to extract.
            if child.is_named() && !is_comment && child.child_count() > 0 {
                children.push(Task {
                    node: child,
                    scope,
                    depth: task.depth + 1,
                    doc,
                });
            }
        }
        stack.extend(children.drain(..).rev());
    }
    misread
}

/// A function definition; its symbol is the scope of the calls inside.
fn function_definition(
    facts: &mut FileFacts,
    node: Node,
    doc: Option<Node>,
    source: &str,
) -> Option<u32> {
    let name = node
        .child_by_field_name("declarator")
        .and_then(|d| function_name(d, source))?;
    let body = node.child_by_field_name("body");
    Some(push_symbol(
        facts,
        NodeKind::Function,
        name.to_string(),
        name.to_string(),
        node,
        header_before(node, body, source),
        doc,
        source,
    ))
}

/// A struct, union or enum with a body (a bare `struct x` only names one).
fn tagged_type(facts: &mut FileFacts, node: Node, doc: Option<Node>, source: &str) {
    let body = node.child_by_field_name("body");
    let (Some(name), Some(_)) = (node.child_by_field_name("name"), body) else {
        return;
    };
    let (kind, tag) = match node.kind() {
        "struct_specifier" => (NodeKind::Struct, "struct"),
        "union_specifier" => (NodeKind::Union, "union"),
        _ => (NodeKind::Enum, "enum"),
    };
    let name = text(name, source);
    push_symbol(
        facts,
        kind,
        name.to_string(),
        format!("{tag} {name}"),
        node,
        header_before(node, body, source),
        doc,
        source,
    );
}

/// Each name a `typedef` declares.
fn type_definitions(
    facts: &mut FileFacts,
    node: Node,
    declarators: &[Node],
    doc: Option<Node>,
    source: &str,
) {
    for &declarator in declarators {
        let Some(name) = type_name(declarator, source) else {
            continue;
        };
        let signature = match node.child_by_field_name("type") {
            Some(ty) if ty.child_by_field_name("body").is_some() => format!(
                "typedef {} {{…}} {}",
                header_before(ty, ty.child_by_field_name("body"), source),
                one_line(text(declarator, source))
            ),
            _ => one_line(text(node, source).trim_end_matches(';')),
        };
        push_symbol(
            facts,
            NodeKind::Typedef,
            name.to_string(),
            name.to_string(),
            node,
            signature,
            doc,
            source,
        );
    }
}

/// A function-like macro (`#define MAX(a, b) ...`).
fn function_macro(facts: &mut FileFacts, node: Node, doc: Option<Node>, source: &str) {
    let Some(name) = node.child_by_field_name("name") else {
        return;
    };
    let name = text(name, source);
    let params = node
        .child_by_field_name("parameters")
        .map_or("", |p| text(p, source));
    push_symbol(
        facts,
        NodeKind::Macro,
        name.to_string(),
        name.to_string(),
        node,
        one_line(&format!("#define {name}{params}")),
        doc,
        source,
    );
}

/// An object-like macro whose value is one name (`#define xmemcpy memcpy`).
fn is_name_alias(node: Node, source: &str) -> bool {
    node.child_by_field_name("value")
        .map(|v| text(v, source).trim())
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// An `#include`: a quoted one is tried beside the including file first, then by suffix.
fn include(facts: &mut FileFacts, node: Node, dir: &str, source: &str) {
    let Some(include) = node.child_by_field_name("path") else {
        return;
    };
    let raw = text(include, source);
    let name = raw.trim_matches(|c| c == '"' || c == '<' || c == '>');
    let mut target = Vec::new();
    if include.kind() == "string_literal" {
        if let Some(local) = tg_lang::normalize_join(dir, name) {
            target.push(ModuleRef::Path(local));
        }
    }
    target.push(ModuleRef::Key(name.trim_start_matches("./").to_string()));
    facts.imports.push(Import {
        declares: Declares::Nothing,
        scope: 0,
        line: start_line(node),
        edge: Some(EdgeKind::Includes),
        target,
        binding: Binding::None,
    });
}

/// A call of a function by name (calls through pointers and members bind nothing).
fn call(facts: &mut FileFacts, node: Node, scope: u32, source: &str) {
    let Some(function) = node.child_by_field_name("function") else {
        return;
    };
    if function.kind() == "identifier" {
        facts.refs.push(Reference {
            scope,
            line: start_line(node),
            kind: RefKind::Call,
            target: Target::Name(text(function, source).to_string()),
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn push_symbol(
    facts: &mut FileFacts,
    kind: NodeKind,
    name: String,
    qualname: String,
    node: Node,
    signature: String,
    doc: Option<Node>,
    source: &str,
) -> u32 {
    let index = facts.symbols.len() as u32;
    facts.symbols.push(Symbol {
        kind,
        name,
        qualname,
        // C names live in one file-wide namespace: every symbol hangs off the module.
        parent: Some(0),
        line_start: start_line(node),
        line_end: end_line(node),
        text_start: None,
        signature: Some(signature),
        doc: doc.and_then(|c| comment_first_line(text(c, source))),
        hash: ContentHash::of(text(node, source).as_bytes()),
        scope: ScopeRule::Transparent,
        owner_type: None,
        returns: None,
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

/// The name a function definition declares: the identifier inside the first
/// `function_declarator` of the declarator chain (`*f(int)`, `(f)(void)`, `f(a, b) int a;`).
/// `#ifdef __cplusplus` / `extern "C" {` / `#endif` ... `#ifdef __cplusplus` / `}` / `#endif`:
/// the braces of the linkage block sit in two conditional blocks, and the grammar, which sees
/// both branches, opens a block that never closes and can lose the definitions after it. The
/// brace lines inside conditionals on `__cplusplus` are blanked (spaces, so bytes and lines stay
/// where they were); for C they do not exist anyway.
fn blank_cplusplus_linkage(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains("__cplusplus") {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    // Nesting of #if blocks, and the depth of the innermost one conditional on __cplusplus.
    let (mut depth, mut cplusplus_at): (usize, Option<usize>) = (0, None);
    let mut changed = false;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim();
        let directive = trimmed
            .strip_prefix('#')
            .map(|rest| rest.trim_start())
            .unwrap_or("");
        let word = directive
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("");
        match word {
            "if" | "ifdef" | "ifndef" if trimmed.starts_with('#') => {
                depth += 1;
                if directive.contains("__cplusplus") && cplusplus_at.is_none() {
                    cplusplus_at = Some(depth);
                }
            }
            "endif" if trimmed.starts_with('#') => {
                if cplusplus_at == Some(depth) {
                    cplusplus_at = None;
                }
                depth = depth.saturating_sub(1);
            }
            "else" | "elif" if trimmed.starts_with('#') && cplusplus_at == Some(depth) => {
                // The other branch is C's: kept as written.
                cplusplus_at = None;
            }
            _ => {}
        }
        let linkage =
            trimmed == "}" || (trimmed.starts_with("extern \"C") && trimmed.ends_with('{'));
        if cplusplus_at.is_some() && linkage {
            out.extend(line.chars().map(|c| if c == '\n' { c } else { ' ' }));
            changed = true;
        } else {
            out.push_str(line);
        }
    }
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(source)
    }
}

pub(super) fn function_name<'s>(declarator: Node, source: &'s str) -> Option<&'s str> {
    let mut node = declarator;
    let mut seen_function = false;
    for _ in 0..64 {
        match node.kind() {
            "identifier" => return seen_function.then(|| text(node, source)),
            // `BZ_API(name)(int x)`, `PRIV(name)(...)`: a function declarator right inside
            // another is no C declaration (a function cannot return a function), so it is a
            // macro wrapping the name, which is its one argument.
            "function_declarator" if seen_function => return macro_wrapped_name(node, source),
            "function_declarator" => {
                seen_function = true;
                node = node.child_by_field_name("declarator")?;
            }
            "pointer_declarator" | "attributed_declarator" => {
                node = node.child_by_field_name("declarator")?;
            }
            "parenthesized_declarator" => node = node.named_child(0)?,
            _ => return None,
        }
    }
    None
}

/// `name` in `MACRO(name)`, read as a function declarator with one unnamed parameter.
fn macro_wrapped_name<'s>(declarator: Node, source: &'s str) -> Option<&'s str> {
    let parameters = declarator.child_by_field_name("parameters")?;
    if parameters.named_child_count() != 1 {
        return None;
    }
    let parameter = parameters.named_child(0)?;
    let name = match parameter.kind() {
        "parameter_declaration" if parameter.child_by_field_name("declarator").is_none() => {
            parameter.child_by_field_name("type")?
        }
        "identifier" => parameter,
        _ => return None,
    };
    matches!(name.kind(), "type_identifier" | "identifier").then(|| text(name, source))
}

/// The type name a typedef declarator introduces (`T`, `*T`, `(*T)(int)`, `T[4]`).
fn type_name<'s>(declarator: Node, source: &'s str) -> Option<&'s str> {
    let mut node = declarator;
    for _ in 0..64 {
        match node.kind() {
            "type_identifier" | "primitive_type" => return Some(text(node, source)),
            "parenthesized_declarator" => node = node.named_child(0)?,
            _ => node = node.child_by_field_name("declarator")?,
        }
    }
    None
}

#[cfg(test)]
mod linkage_tests {
    use super::blank_cplusplus_linkage;

    #[test]
    fn cplusplus_linkage_braces_are_blanked_in_place() {
        let source = "#if defined (__cplusplus)\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\nint g(void) {\n}\n";
        let prepared = blank_cplusplus_linkage(source);
        assert_eq!(prepared.len(), source.len());
        assert_eq!(prepared.lines().count(), source.lines().count());
        assert!(!prepared.contains("extern"), "{prepared}");
        // g's own closing brace is outside the conditionals and stays.
        assert!(prepared.ends_with("int g(void) {\n}\n"), "{prepared}");
        assert_eq!(prepared.lines().nth(5), Some(" "));
        // A file without the idiom is passed through untouched.
        let plain = "int main(void) { return 0; }\n";
        assert!(matches!(
            blank_cplusplus_linkage(plain),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
