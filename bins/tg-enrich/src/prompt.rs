//! The prompt sent to an LLM endpoint for one symbol, and the cleaning of its answer.

use crate::stream::SymbolInfo;
use std::path::Path;

/// Bytes of a symbol's own source carried in a prompt; a longer body is cut (and says so).
pub const SOURCE_LIMIT: usize = 6000;
/// Characters kept of an answer.
const INTENT_LIMIT: usize = 300;

pub const SYSTEM: &str = "You summarise source code for an architectural map. Reply with exactly one line: \
what the given symbol is for (its intent, not how it works), at most 25 words, no preamble, no quotes.";

/// The symbol's own source lines, at most [`SOURCE_LIMIT`] bytes; `None` when the file cannot
/// be read (the prompt then carries the signature alone).
pub fn source_of(root: &Path, symbol: &SymbolInfo) -> Option<String> {
    let bytes = std::fs::read(root.join(&symbol.file)).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let start = symbol.line_start.max(1) as usize - 1;
    let count = (symbol.line_end as usize + 1).saturating_sub(symbol.line_start.max(1) as usize);
    let mut body = String::new();
    for line in text.lines().skip(start).take(count) {
        if body.len() + line.len() + 1 > SOURCE_LIMIT {
            body.push_str("… (cut: the body is longer)\n");
            break;
        }
        body.push_str(line);
        body.push('\n');
    }
    Some(body)
}

/// The user message for `symbol`.
pub fn user_message(
    symbol: &SymbolInfo,
    source: Option<&str>,
    callers: &[String],
    callees: &[String],
) -> String {
    let mut text = format!(
        "Symbol: {} ({}) in {} lines {}-{}\n",
        symbol.id,
        symbol.kind.as_str(),
        symbol.file,
        symbol.line_start,
        symbol.line_end
    );
    if let Some(layer) = &symbol.layer {
        text.push_str(&format!("Architectural layer: {layer}\n"));
    }
    if let Some(signature) = &symbol.signature {
        text.push_str(&format!("Signature: {signature}\n"));
    }
    if !callers.is_empty() {
        text.push_str(&format!("Called by: {}\n", callers.join(", ")));
    }
    if !callees.is_empty() {
        text.push_str(&format!("Calls: {}\n", callees.join(", ")));
    }
    match source {
        Some(source) => text.push_str(&format!("Source:\n```\n{source}```\n")),
        None => text.push_str("(source unavailable)\n"),
    }
    text.push_str("One line: what is this symbol for?");
    text
}

/// One clean line from a completion: the first non-empty line, without quotes, a label or
/// extra spaces; `None` when nothing is left.
pub fn clean_answer(answer: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut line = line.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '*'));
    for label in ["Intent:", "intent:", "Summary:"] {
        if let Some(rest) = line.strip_prefix(label) {
            line = rest.trim();
        }
    }
    let flat = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return None;
    }
    Some(flat.chars().take(INTENT_LIMIT).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tg_shared::record::NodeKind;

    fn symbol(file: &str, start: u32, end: u32) -> SymbolInfo {
        SymbolInfo {
            id: format!("{file}::f"),
            kind: NodeKind::Function,
            name: "f".into(),
            file: file.into(),
            line_start: start,
            line_end: end,
            signature: Some("def f(x)".into()),
            doc: None,
            layer: Some("core".into()),
            hash: "h".into(),
            role: tg_shared::record::Role::Product,
        }
    }

    #[test]
    fn the_prompt_carries_the_symbols_own_lines_and_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.py"),
            "import os\ndef f(x):\n    return g(x)\n\nz = 1\n",
        )
        .unwrap();
        let s = symbol("a.py", 2, 3);
        let source = source_of(dir.path(), &s).unwrap();
        assert_eq!(source, "def f(x):\n    return g(x)\n");
        let text = user_message(&s, Some(&source), &["main".into()], &["g".into()]);
        assert!(text.contains("Architectural layer: core\n"), "{text}");
        assert!(text.contains("Called by: main\nCalls: g\n"), "{text}");
        assert!(!text.contains("import os"), "{text}");
        assert_eq!(source_of(dir.path(), &symbol("missing.py", 1, 2)), None);
    }

    #[test]
    fn a_long_body_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let body = "x = 1\n".repeat(5000);
        std::fs::write(dir.path().join("a.py"), &body).unwrap();
        let source = source_of(dir.path(), &symbol("a.py", 1, 5000)).unwrap();
        assert!(source.len() <= SOURCE_LIMIT + 64, "{}", source.len());
        assert!(source.ends_with("longer)\n"));
    }

    #[test]
    fn answers_are_cleaned_to_one_line() {
        assert_eq!(
            clean_answer("\n  \"Intent: Loads   the graph.\"\nMore text").as_deref(),
            Some("Loads the graph.")
        );
        assert_eq!(clean_answer(" \n \"\" "), None);
    }
}
