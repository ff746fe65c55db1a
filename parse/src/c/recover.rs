//! Recovering the definitions a syntax error swallowed.
//!
//! Without a preprocessor, tree-sitter meets macros it cannot parse (`LZ4_FORCE_INLINE int
//! f(...)`, `IMPLEMENT_ASN1_FUNCTIONS(T)` on a line of its own) and its error recovery can fold
//! the functions that follow into one ERROR subtree. Here each such region is parsed again from
//! the lines where a top-level definition may start, skipping a leading ALL-CAPS macro word, until
//! the definitions inside come out clean. Reparses cover only the region, a window of it at a
//! time (tree-sitter's included ranges keep the original byte and line positions), and are
//! bounded per file.

use super::{function_name, walk};
use crate::util::{end_line, start_line};
use std::collections::HashSet;
use tg_lang::FileFacts;
use tg_shared::record::NodeKind;
use tree_sitter::{Node, Parser, Point, Range};

/// Reparses allowed per file, and the bytes they may cover in all (as a multiple of the file's
/// size): recovery must never cost more than a couple of parses of the file.
const MAX_REPARSES: usize = 48;
const MAX_REPARSED_FILE_SIZES: usize = 2;
/// What one reparse covers from its candidate line: a region can be a whole file (a broken
/// `#ifndef` around everything), and reparsing to its end from every broken spot would spend
/// the budget on the first few. A definition longer than the window is retried whole.
const WINDOW: usize = 16 * 1024;

pub(super) fn recover(root: Node, source: &str, dir: &str, facts: &mut FileFacts) {
    let mut regions = Vec::new();
    error_regions(root, source, &mut regions, 0);
    if regions.is_empty() {
        return;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .is_err()
    {
        return;
    }
    let mut known: HashSet<(String, u32)> = facts
        .symbols
        .iter()
        .filter(|s| s.kind == NodeKind::Function)
        .map(|s| (s.name.clone(), s.line_end))
        .collect();
    let mut budget = MAX_REPARSES;
    let mut byte_budget = source.len().saturating_mul(MAX_REPARSED_FILE_SIZES);
    for (start, end) in regions {
        let mut from = start;
        let mut window = WINDOW;
        // Set when the item at a candidate ran past the region: reparse it to the file's end.
        let mut whole_rest = false;
        while budget > 0 {
            let Some(candidate) = next_candidate(source, from, end) else {
                break;
            };
            let stop = if whole_rest {
                source.len()
            } else if end - candidate > window {
                line_end(source, candidate + window).min(end)
            } else {
                end
            };
            let Some(left) = byte_budget.checked_sub(stop - candidate) else {
                return;
            };
            byte_budget = left;
            budget -= 1;
            let ranges = included_ranges(source, candidate, stop);
            if parser.set_included_ranges(&ranges).is_err() {
                break;
            }
            let Some(tree) = parser.parse(source, None) else {
                break;
            };
            if stop < source.len() && !whole_rest && cuts_an_item(source, candidate, stop) {
                // The window (or the region, which ends where the error's loose pieces do) cut
                // the first item in two: the same candidate again, to the region's end, then to
                // the file's.
                if stop < end {
                    window = end - candidate;
                } else {
                    whole_rest = true;
                }
                continue;
            }
            window = WINDOW;
            whole_rest = false;
            // Accept the clean definitions, in order, up to the first broken top-level node.
            let mut resume = None;
            let mut cursor = tree.root_node().walk();
            for child in tree.root_node().children(&mut cursor) {
                if child.start_byte() < candidate {
                    continue;
                }
                // A definition whose header parsed cleanly counts even if its body did not
                // (conditional code inside bodies is read as its first branch only).
                let clean_header = child.kind() == "function_definition" && header_is_clean(child);
                if child.has_error() && !clean_header {
                    break;
                }
                resume = Some(child.end_byte());
                if child.kind() != "function_definition" {
                    continue;
                }
                let name = child
                    .child_by_field_name("declarator")
                    .and_then(|d| function_name(d, source));
                if let Some(name) = name {
                    // Keyed by the last line: a reparse without a macro line before the
                    // definition starts it a line later, and must not add it twice.
                    if known.insert((name.to_string(), end_line(child))) {
                        // The ordinary walker: the definition and the calls in its body,
                        // with the comment the original tree holds right above it.
                        let doc = comment_above(root, child, source);
                        walk(child, doc, source, dir, facts, &mut Vec::new());
                    }
                }
            }
            // Go on after what parsed cleanly, or at least past this candidate's line.
            from = match resume {
                Some(end_byte) if end_byte > candidate => end_byte,
                _ => line_end(source, candidate),
            };
        }
    }
}

/// The comment of the original tree that ends on the line above `definition` (of a reparse,
/// which starts at the definition's own line and so holds no comment before it).
fn comment_above<'t>(root: Node<'t>, definition: Node, source: &str) -> Option<Node<'t>> {
    let line = line_start(source, definition.start_byte());
    let before = source[..line].trim_end();
    if before.is_empty() {
        return None;
    }
    let last = before.len() - 1;
    let comment = root.descendant_for_byte_range(last, last + 1)?;
    (comment.kind() == "comment" && end_line(comment) + 1 == start_line(definition))
        .then_some(comment)
}

/// Whether `[candidate, stop)` ends inside a brace it opened: the item there was cut in two.
/// Braces in comments, strings and character literals are not counted.
fn cuts_an_item(source: &str, candidate: usize, stop: usize) -> bool {
    let bytes = &source.as_bytes()[candidate..stop];
    let (mut depth, mut i) = (0i64, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |j| j + 2);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = find(bytes, i, b"\n").unwrap_or(bytes.len());
                continue;
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth > 0
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Everything of a function definition but its body parsed without error (so its first line
/// is its own, not a macro's before it).
fn header_is_clean(definition: Node) -> bool {
    let Some(body) = definition.child_by_field_name("body") else {
        return false;
    };
    let mut cursor = definition.walk();
    let clean = definition
        .children(&mut cursor)
        .all(|c| c.id() == body.id() || !(c.has_error() || c.is_error() || c.is_missing()));
    clean
}

/// Byte ranges of top-level stretches that hold errors: an erroneous node and the loose pieces
/// after it (a `function_declarator`, a bare `compound_statement`), until the next clean
/// definition. Preprocessor blocks are looked into.
/// Conditionals nested deeper than this are taken whole instead of looked into: real code stays
/// far below it, and 9,000 nested `#if`s (found by fuzzing) overflowed the stack.
const MAX_CONDITIONAL_NESTING: usize = 256;

fn error_regions(parent: Node, source: &str, out: &mut Vec<(usize, usize)>, depth: usize) {
    let mut open: Option<(usize, usize)> = None;
    let mut after_broken_conditional: Option<usize> = None;
    let mut cursor = parent.walk();
    for child in parent.children(&mut cursor) {
        let kind = child.kind();
        let container = matches!(
            kind,
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef"
        );
        if container && child.has_error() {
            if let Some(region) = open.take() {
                out.push(region);
            }
            if depth < MAX_CONDITIONAL_NESTING {
                error_regions(child, source, out, depth + 1);
            }
            // The whole conditional too: tree-sitter may have folded the definition that follows
            // its alternative headers into the last branch.
            out.push((child.start_byte(), child.end_byte()));
            // A broken conditional may hold the alternative headers of the definition after it
            // (`#if A int f(x) #elif B int g(x) #endif { ... }`): reparse the two together.
            after_broken_conditional = Some(child.start_byte());
            continue;
        }
        if let Some(conditional_start) = after_broken_conditional.take() {
            if kind == "function_definition" || kind == "compound_statement" {
                out.push((conditional_start, child.end_byte()));
                continue;
            }
        }
        // A definition misread around an attribute call is as broken as one with an error.
        let broken = child.has_error() || misread_attribute(child, source);
        // Comments and plain declarations neither open nor close a region: a broken function's
        // `int c;` or `/* note */` can surface at the top level.
        if !broken && matches!(kind, "comment" | "declaration") {
            if let Some(region) = open.as_mut() {
                region.1 = child.end_byte();
            }
            continue;
        }
        let clean_item = !broken
            && (container
                || matches!(
                    kind,
                    "function_definition"
                        | "type_definition"
                        | "preproc_include"
                        | "preproc_def"
                        | "preproc_function_def"
                        | "preproc_call"
                ));
        match (&mut open, clean_item) {
            // The region runs up to the next clean item: a definition the error cut short may
            // end after the broken node that swallowed its start.
            (Some(_), true) => {
                if let Some((start, _)) = open.take() {
                    out.push((start, child.start_byte()));
                }
            }
            (Some(region), false) => region.1 = child.end_byte(),
            (None, false) if broken => open = Some((child.start_byte(), child.end_byte())),
            _ => {}
        }
    }
    if let Some((start, _)) = open {
        out.push((start, parent.end_byte()));
    }
}

/// The start of the next line in `[from, end)` where a top-level definition may begin: column 0,
/// an identifier character, and a previous line that ends a statement, a block or a comment.
fn next_candidate(source: &str, from: usize, end: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut pos = line_start(source, from);
    if pos < from {
        pos = line_end(source, from);
    }
    while pos < end {
        let first = bytes[pos];
        if (first.is_ascii_alphabetic() || first == b'_') && previous_line_ends_item(source, pos) {
            let line = &source[pos..line_end(source, pos).min(source.len())];
            let is_label = line.trim_end().ends_with(':') && !line.contains('(');
            if !is_label {
                return Some(pos);
            }
        }
        pos = line_end(source, pos);
    }
    None
}

fn previous_line_ends_item(source: &str, pos: usize) -> bool {
    let before = source[..pos].trim_end();
    if before.is_empty() {
        return true;
    }
    let last_line = before.rsplit('\n').next().unwrap_or(before).trim();
    // A K&R-style return-type line (`static int`, `LZ4_FORCE_INLINE const char *`) also
    // precedes a definition's name line.
    let return_type_line = last_line
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b' ' || b == b'\t' || b == b'*');
    last_line.starts_with('#')
        || [";", "}", ")", "*/"]
            .iter()
            .any(|end| last_line.ends_with(end))
        || last_line.starts_with("//")
        || return_type_line
}

/// Start of the line holding `pos`.
fn line_start(source: &str, pos: usize) -> usize {
    source[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// Start of the line after the one holding `pos`.
fn line_end(source: &str, pos: usize) -> usize {
    source[pos..]
        .find('\n')
        .map_or(source.len(), |i| pos + i + 1)
}

/// `[start, end)` as included ranges for a reparse, minus:
/// - ALL-CAPS macro words in front of a declaration's name (`XXH_PUBLIC_API XXH_errorcode
///   f(...)`, `int ZEXPORT inflate(...)`);
/// - conditional directives and every branch after the first (`#elif`, `#else`), so a header
///   written once per configuration reads as its first configuration (as ctags does).
fn included_ranges(source: &str, start: usize, end: usize) -> Vec<Range> {
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let mut keep = |from: usize, to: usize| {
        if to > from {
            match kept.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => kept.push((from, to)),
            }
        }
    };
    // One entry per open conditional: whether we are past its first branch.
    let mut conditionals: Vec<bool> = Vec::new();
    let mut pos = start;
    while pos < end {
        let next = line_end(source, pos).min(end);
        let line = &source[pos..next];
        let directive = line.trim_start().strip_prefix('#').map(str::trim_start);
        match directive {
            Some(d) if d.starts_with("if") => conditionals.push(false),
            Some(d) if d.starts_with("elif") || d.starts_with("else") => {
                match conditionals.last_mut() {
                    Some(past_first) => *past_first = true,
                    // The `#if` opened before the reparse began: we were in its first branch.
                    None => conditionals.push(true),
                }
            }
            Some(d) if d.starts_with("endif") => {
                conditionals.pop();
            }
            _ if conditionals.iter().any(|&past_first| past_first) => {}
            _ => {
                let mut from = pos;
                let following = &source[next..line_end(source, next.min(source.len()))];
                let head = head_line(line, following);
                let mut skipped = macro_words(&head);
                skipped.extend(attribute_calls(&head));
                skipped.sort_unstable();
                for (word_start, word_len) in skipped {
                    keep(from, pos + word_start);
                    from = pos + word_start + word_len;
                }
                keep(from, next);
            }
        }
        pos = next;
    }
    let mut points = Points::new(source);
    kept.into_iter()
        .map(|(a, b)| Range {
            start_byte: a,
            end_byte: b,
            start_point: points.at(a),
            end_point: points.at(b),
        })
        .collect()
}

/// The line as [`macro_words`] should read it: a definition whose name starts the next line
/// (`LZ4_FORCE_INLINE int` / `LZ4_decompress_generic(...)`) has its whole head on this one, so
/// the next line's `(` is put at its end.
fn head_line(line: &str, following: &str) -> String {
    let starts_top_level = line
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let name_then_paren = following
        .split('(')
        .next()
        .filter(|_| following.contains('('))
        .is_some_and(|name| {
            let name = name.trim();
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    let mut head = line.trim_end_matches(['\n', '\r']).to_string();
    if starts_top_level && !head.contains('(') && name_then_paren {
        head.push_str(" (");
    }
    head
}

/// Offsets and lengths of the ALL-CAPS words and the words behind two underscores, before the
/// line's first `(`, that are followed by a space and another identifier: macros decorating a
/// declaration. Lines without `(` have none.
fn macro_words(line: &str) -> Vec<(usize, usize)> {
    let Some(paren) = line.find('(') else {
        return Vec::new();
    };
    let head = &line[..paren];
    let bytes = head.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if !is_ident(bytes[i]) || (i > 0 && is_ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let len = bytes[i..].iter().take_while(|&&b| is_ident(b)).count();
        let word = &head[i..i + len];
        let all_caps = word.len() >= 2
            && word.as_bytes()[0].is_ascii_uppercase()
            && word
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        let rest = &head[i + len..];
        let after = rest.trim_start_matches([' ', '\t']);
        let followed_by_name = after.len() < rest.len()
            && after
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        // The kernel's attribute words are lower case behind two underscores
        // (`static __always_inline __alloc_size(1) void *kmalloc(...)`).
        let attribute_word = word.len() > 2 && word.starts_with("__");
        if (all_caps || attribute_word) && followed_by_name {
            words.push((i, len));
        }
        i += len;
    }
    words
}

/// Whether `node` is a function definition tree-sitter read with an attribute call as its
/// declarator (`static inline __alloc_size(1) void *kzalloc(...) {` as a function
/// `__alloc_size` whose old-style parameters are the real head): no definition of its own, and
/// a region to read again without the attribute.
pub(super) fn misread_attribute(node: Node, source: &str) -> bool {
    if node.kind() != "function_definition" {
        return false;
    }
    let Some(name) = node
        .child_by_field_name("declarator")
        .and_then(|d| function_name(d, source))
    else {
        return false;
    };
    if !name.starts_with("__") {
        return false;
    }
    // The name is a slice of `source` (`function_name` reads it from the tree): its offset.
    let Some(at) = (name.as_ptr() as usize)
        .checked_sub(source.as_ptr() as usize)
        .filter(|&at| at + name.len() <= source.len())
    else {
        return false;
    };
    let line = line_start(source, at);
    let text = &source[line..line_end(source, at).min(source.len())];
    attribute_calls(text.trim_end_matches(['\n', '\r']))
        .iter()
        .any(|&(start, _)| line + start == at)
}

/// Offsets and lengths of the attribute macros written as calls in a declaration's head, as
/// the Linux kernel writes them (`static inline __alloc_size(1) void *kzalloc(size_t size, ...)`,
/// `__printf(2, 3) int dev_err_probe(...)`): a word starting `__`, its parenthesised arguments,
/// then more of the head (a name, and the declarator's own `(` further on). Only on a line that
/// starts at the top level, so a call in a body (`\t__set_bit(nr, p);`) is never one.
fn attribute_calls(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    if !bytes
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
    {
        return Vec::new();
    }
    let mut calls = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Bytes: `i` steps through multi-byte characters too, where `line[i..]` would panic.
        if !bytes[i..].starts_with(b"__") || (i > 0 && is_ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let len = bytes[i..].iter().take_while(|&&b| is_ident(b)).count();
        let open = i + len;
        if bytes.get(open) != Some(&b'(') {
            i = open;
            continue;
        }
        let Some(close) = matching_paren(bytes, open) else {
            break;
        };
        let rest = &line[close + 1..];
        let after = rest.trim_start_matches([' ', '\t']);
        let continues = after.len() < rest.len()
            && after
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && after.contains('(');
        if continues {
            calls.push((i, close + 1 - i));
        }
        i = close + 1;
    }
    calls
}

/// The offset of the `)` closing the `(` at `open`, on the same line.
fn matching_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Rows and columns of byte offsets asked in increasing order: the newlines are counted from
/// the offset asked before, not from the file's start each time (a reparse of a macro-heavy
/// region has a range per macro word, and counting from the start was 3.5% of the time
/// extracting the kernel's core).
struct Points<'s> {
    source: &'s str,
    pos: usize,
    row: usize,
}

impl<'s> Points<'s> {
    fn new(source: &'s str) -> Self {
        Points {
            source,
            pos: 0,
            row: 0,
        }
    }

    fn at(&mut self, pos: usize) -> Point {
        if pos < self.pos {
            // Asked out of order: count again from the start.
            (self.pos, self.row) = (0, 0);
        }
        let between = &self.source.as_bytes()[self.pos..pos];
        self.row += between.iter().filter(|&&b| b == b'\n').count();
        self.pos = pos;
        let column = pos - line_start(self.source, pos);
        Point {
            row: self.row,
            column,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets asked in order, out of order and at the ends give the rows and columns of a
    /// count from the file's start.
    #[test]
    fn points_are_those_counted_from_the_start() {
        let source = "ab\ncd\n\nefg\n";
        let from_start = |pos: usize| {
            let row = source[..pos].matches('\n').count();
            let column = pos - source[..pos].rfind('\n').map_or(0, |n| n + 1);
            Point { row, column }
        };
        let mut points = Points::new(source);
        for pos in [0, 1, 3, 6, 7, 10, 11, 2, 8, 8, source.len()] {
            assert_eq!(points.at(pos), from_start(pos), "at {pos}");
        }
    }

    #[test]
    fn macro_words_are_recognised() {
        assert_eq!(
            macro_words("XXH_PUBLIC_API XXH_errorcode f(int)"),
            vec![(0, 14)]
        );
        assert_eq!(
            macro_words("int ZEXPORT inflate(strm, flush)"),
            vec![(4, 7)]
        );
        assert_eq!(macro_words("LZ4_FORCE_INLINE int"), vec![]);
        // A head whose name starts the next line is read with it.
        let head = head_line(
            "LZ4_FORCE_INLINE const BYTE*\n",
            "LZ4_getPosition(const BYTE* p,\n",
        );
        assert_eq!(macro_words(&head), vec![(0, 16)]);
        assert_eq!(
            macro_words(&head_line(
                "LZ4_FORCE_INLINE int\n",
                "LZ4_decompress_generic(\n"
            )),
            vec![(0, 16)]
        );
        // Not inside a body, nor before a line that is not a declarator.
        assert_eq!(head_line("    U32 const h\n", "f(x);\n"), "    U32 const h");
        assert_eq!(head_line("MACRO int\n", "x = 1;\n"), "MACRO int");
        assert_eq!(macro_words("STACK_OF(X) *f(void)"), vec![]);
        assert_eq!(macro_words("static int f(void)"), vec![]);
        assert_eq!(
            macro_words("static __always_inline void *kmalloc(size_t size)"),
            vec![(7, 15)]
        );
    }

    /// The Linux kernel's allocators (include/linux/slab.h): an attribute macro written as a
    /// call before the return type broke each definition, and the ones after it.
    #[test]
    fn definitions_behind_attribute_calls_are_recovered() {
        let source = "/**\n * kzalloc - allocate memory. The memory is set to zero.\n */\n\
                      static inline __alloc_size(1) void *kzalloc(size_t size, gfp_t flags)\n{\n\treturn kmalloc(size, flags | __GFP_ZERO);\n}\n\n\
                      static inline __alloc_size(1, 2) void *kcalloc(size_t n, size_t size, gfp_t flags)\n{\n\treturn kmalloc_array(n, size, flags | __GFP_ZERO);\n}\n\n\
                      static inline int plain(int x)\n{\n\treturn x;\n}\n\n\
                      static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)\n{\n\treturn __kmalloc(size, flags);\n}\n";
        let lang = tg_lang::for_path("include/linux/slab.h").expect("C");
        let facts = crate::extract_file(lang, "include/linux/slab.h", source).expect("parses");
        let mut functions: Vec<(&str, u32, u32)> = facts
            .symbols
            .iter()
            .filter(|s| s.kind == NodeKind::Function)
            .map(|s| (s.name.as_str(), s.line_start, s.line_end))
            .collect();
        functions.sort_unstable();
        assert_eq!(
            functions,
            [
                ("kcalloc", 9, 12),
                ("kmalloc", 19, 22),
                ("kzalloc", 4, 7),
                ("plain", 14, 17)
            ]
        );
        let doc = |name: &str| {
            facts
                .symbols
                .iter()
                .find(|s| s.name == name)
                .and_then(|s| s.doc.clone())
        };
        assert_eq!(
            doc("kzalloc").as_deref(),
            Some("kzalloc - allocate memory. The memory is set to zero.")
        );
        assert_eq!(doc("kcalloc"), None);
    }

    #[test]
    fn attribute_macros_written_as_calls_are_recognised() {
        let head = "static inline __alloc_size(1) void *kzalloc(size_t size, gfp_t flags)";
        assert_eq!(attribute_calls(head), vec![(14, 15)]);
        assert_eq!(&head[14..29], "__alloc_size(1)");
        assert_eq!(
            attribute_calls("__printf(2, 3) int dev_err_probe(const struct device *dev)"),
            vec![(0, 14)]
        );
        // Nested parentheses, and two of them.
        assert_eq!(
            attribute_calls("static __x(f(1)) __y(2) int g(void)"),
            vec![(7, 9), (17, 6)]
        );
        // Not a call that ends a statement, nor one in a body, nor without a declarator after.
        assert_eq!(attribute_calls("__set_bit(nr, addr);"), vec![]);
        assert_eq!(attribute_calls("\t__set_bit(nr, addr) foo(x);"), vec![]);
        assert_eq!(
            attribute_calls("int x = __builtin_expect(a, 0) && b;"),
            vec![]
        );
        assert_eq!(attribute_calls("static int __init start(void)"), vec![]);
        assert_eq!(attribute_calls("__cold void f"), vec![]);
        // Never a panic inside a multi-byte character (found by the ids property test).
        assert_eq!(attribute_calls("a¡__x(1) int f(void)"), vec![(3, 6)]);
        assert_eq!(attribute_calls("a¡"), vec![]);
    }
}
