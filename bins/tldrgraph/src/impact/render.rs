//! `tldrgraph impact` for people: a summary, then per layer a table of what changed and of
//! who calls it, the tests to run, and the API whose signature changed.

use super::diff::{Impact, Options};
use crate::mcp::budget::Cut;
use std::collections::BTreeMap;

/// A Markdown table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(found: &Impact, options: Options, cut: &[Cut]) -> String {
    let s = &found.summary;
    let mut out = format!(
        "# Impact of the changes since {}\n\n{} symbols changed, {} added, {} removed, {} moved, in {} files; {} callers up to {} calls away (confidence ≥ {}); {} tests reach them.\n",
        found.base, s.changed, s.added, s.removed, s.moved, s.files, s.callers, options.depth, options.min_confidence, s.tests
    );
    for c in cut {
        out.push_str(&format!(
            "\n> Cut to the budget: {} shows {} of {}.\n",
            c.path, c.shown, c.total
        ));
    }
    let mut layers: BTreeMap<&str, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for c in &found.changed {
        let from = c
            .from
            .as_deref()
            .map(|f| format!(" (from {f})"))
            .unwrap_or_default();
        layers.entry(&c.layer).or_default().0.push(format!(
            "| {} | {}{} | {} | {}:{}-{} |\n",
            c.change,
            cell(&c.id),
            cell(&from),
            c.kind,
            c.file,
            c.line_start,
            c.line_end
        ));
    }
    for c in &found.callers {
        let via = c
            .via
            .as_deref()
            .map(|v| format!(" via {v}"))
            .unwrap_or_default();
        layers.entry(&c.layer).or_default().1.push(format!(
            "| {} | {} | {:.2} | {}{} | {} | {}:{}-{} |\n",
            cell(&c.id),
            c.depth,
            c.confidence,
            cell(&c.reaches),
            cell(&via),
            c.role,
            c.file,
            c.line_start,
            c.line_end
        ));
    }
    for (layer, (changed, callers)) in &layers {
        out.push_str(&format!("\n## Layer {layer}\n"));
        if !changed.is_empty() {
            out.push_str("\n| Change | Symbol | Kind | File:lines |\n|---|---|---|---|\n");
            changed.iter().for_each(|row| out.push_str(row));
        }
        if !callers.is_empty() {
            out.push_str("\n| Caller | Depth | Confidence | Reaches | Role | File:lines |\n|---|---|---|---|---|---|\n");
            callers.iter().for_each(|row| out.push_str(row));
        }
    }
    let runners: Vec<&str> = found
        .tests
        .iter()
        .filter_map(|t| t.runner.as_deref())
        .collect();
    if !found.tests.is_empty() {
        out.push_str(&format!(
            "\n## Tests that reach the change ({})\n\n",
            found.tests.len()
        ));
        for t in &found.tests {
            out.push_str(&format!(
                "- {} (reaches {}, {} calls away)\n",
                t.id, t.reaches, t.depth
            ));
        }
        if !runners.is_empty() {
            out.push_str(&format!(
                "\nTo run them:\n\n```\n{}\n```\n",
                runners.join("\n")
            ));
        }
    }
    if !found.signatures.is_empty() {
        out.push_str(
            "\n## Public signatures that changed\n\n| Symbol | Before | After |\n|---|---|---|\n",
        );
        for sig in &found.signatures {
            out.push_str(&format!(
                "| {} | `{}` | `{}` |\n",
                cell(&sig.id),
                cell(sig.before.as_deref().unwrap_or("-")),
                cell(sig.after.as_deref().unwrap_or("-"))
            ));
        }
    }
    out
}
