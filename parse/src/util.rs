//! Small helpers the language modules share.

use tree_sitter::Node;

/// Longest signature kept; longer ones end in `…`.
const MAX_SIGNATURE_CHARS: usize = 240;

/// The source text of a node.
pub fn text<'s>(node: Node, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or("")
}

/// 1-based first line of a node.
pub fn start_line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// 1-based last line of a node (inclusive). A node ending at column 0 ends on the line before.
pub fn end_line(node: Node) -> u32 {
    let end = node.end_position();
    let start = node.start_position();
    if end.column == 0 && end.row > start.row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// Collapses runs of whitespace to one space and bounds the length: a one-line signature.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_SIGNATURE_CHARS + 4));
    let mut chars = 0;
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        for ch in word.chars() {
            if chars >= MAX_SIGNATURE_CHARS {
                out.push('…');
                return out;
            }
            out.push(ch);
            chars += 1;
        }
    }
    out
}

/// The source from a node's start up to (not including) `body`'s start, as one line.
pub fn header_before(node: Node, body: Option<Node>, source: &str) -> String {
    let end = body.map_or(node.end_byte(), |b| b.start_byte());
    let head = source.get(node.start_byte()..end).unwrap_or("");
    one_line(head.trim_end().trim_end_matches(['{', ':']).trim_end())
}

/// Line of the first syntax error (an ERROR or MISSING node), if any.
pub fn first_error_line(root: Node) -> Option<u32> {
    if !root.has_error() {
        return None;
    }
    let mut node = root;
    'descend: loop {
        if node.is_error() || node.is_missing() {
            return Some(start_line(node));
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() {
                node = child;
                continue 'descend;
            }
        }
        return Some(start_line(node));
    }
}

/// The first non-empty line of a doc text, trimmed.
pub fn first_doc_line(doc: &str) -> Option<String> {
    doc.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(one_line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_and_bounds() {
        assert_eq!(one_line("def f(a,\n      b)"), "def f(a, b)");
        let long = "x".repeat(500);
        let cut = one_line(&long);
        assert_eq!(cut.chars().count(), MAX_SIGNATURE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn first_doc_line_skips_blank_lines() {
        assert_eq!(
            first_doc_line("\n   Load it.\n more"),
            Some("Load it.".into())
        );
        assert_eq!(first_doc_line("  \n "), None);
    }
}

/// The first meaningful line of a C or Rust comment, without its comment markers.
pub fn comment_first_line(comment: &str) -> Option<String> {
    comment
        .lines()
        .map(|line| {
            let line = line.trim();
            let line = line
                .trim_start_matches('/')
                .trim_start_matches('*')
                .trim_start_matches('!');
            let line = line.trim_end_matches('/').trim_end_matches('*');
            line.trim()
        })
        .find(|line| !line.is_empty() && line.chars().any(char::is_alphanumeric))
        .map(one_line)
}

/// Tracks runs of comments among siblings, so an item can find the comment directly above it
/// (its first line, for a run of `//` or `///` lines). Lines between comments and the item break
/// the association; attributes (`#[derive]`) do not.
pub struct CommentRun<'t> {
    first: Option<Node<'t>>,
    last_line: u32,
}

impl<'t> CommentRun<'t> {
    pub fn new() -> Self {
        CommentRun {
            first: None,
            last_line: 0,
        }
    }

    /// Feeds the next sibling; returns the comment that documents it, if `child` is an item.
    pub fn step(
        &mut self,
        child: Node<'t>,
        is_doc_comment: bool,
        is_transparent: bool,
    ) -> Option<Node<'t>> {
        let start = start_line(child);
        if is_doc_comment {
            if self.first.is_none() || start > self.last_line + 1 {
                self.first = Some(child);
            }
            self.last_line = end_line(child);
            return None;
        }
        if is_transparent {
            if self.first.is_some() && start <= self.last_line + 1 {
                self.last_line = end_line(child);
            }
            return None;
        }
        let doc = self.first.take().filter(|_| start <= self.last_line + 1);
        self.last_line = 0;
        doc
    }
}

#[cfg(test)]
mod comment_tests {
    use super::*;

    #[test]
    fn comment_markers_are_stripped() {
        assert_eq!(
            comment_first_line("/* Open a store. */"),
            Some("Open a store.".into())
        );
        assert_eq!(
            comment_first_line("/***********\n * Lua state\n */"),
            Some("Lua state".into())
        );
        assert_eq!(
            comment_first_line("/// Opens it."),
            Some("Opens it.".into())
        );
        assert_eq!(comment_first_line("/* ---- */"), None);
    }
}
