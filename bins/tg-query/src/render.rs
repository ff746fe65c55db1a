//! The answers of [`crate::answer`] as Markdown, for a person reading a terminal.

use crate::answer::{DeadCodeAnswer, SearchAnswer};
use crate::search::FlowRow;
use crate::trace::Trace;

/// A Markdown table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn search(answer: &SearchAnswer) -> String {
    let mut text = String::new();
    if answer.results.is_empty() {
        text.push_str(&format!("No symbol matches \"{}\".\n", answer.query));
    }
    for result in &answer.results {
        let ranks = [
            ("lexical", result.lexical_rank),
            ("semantic", result.semantic_rank),
        ]
        .iter()
        .filter_map(|(name, r)| r.map(|r| format!("{name} #{r}")))
        .collect::<Vec<_>>()
        .join(", ");
        text.push_str(&format!(
            "## {}. {} ({}; {})\n\n| Layer | Symbol | Intent | File:lines |\n|---|---|---|---|\n",
            result.rank,
            result.id,
            result.kind,
            if ranks.is_empty() {
                "-".to_string()
            } else {
                ranks
            }
        ));
        flow_rows(&mut text, &result.flow);
        text.push('\n');
    }
    if let Some(pack) = &answer.context {
        text.push_str(&format!(
            "## Context pack ({} of {} tokens, 4 characters per token)\n\n```\n{}```\n",
            pack.tokens, pack.budget, pack.text
        ));
    }
    text
}

/// A hit's execution flow as table rows: the hit, then what it calls (`via` the caller when
/// deeper than one call).
fn flow_rows(text: &mut String, flow: &[FlowRow]) {
    for row in flow {
        let short = |id: &str| id.split_once("::").map_or(id, |(_, q)| q).to_string();
        let name = match (&row.via, row.depth) {
            (_, 0) => short(&row.id),
            (Some(via), depth) if depth > 1 => {
                format!("→ {} (via {})", short(&row.id), short(via))
            }
            _ => format!("→ {}", short(&row.id)),
        };
        text.push_str(&format!(
            "| {} | {} | {} | {}:{}-{} |\n",
            cell(&row.layer),
            cell(&name),
            cell(row.intent.as_deref().unwrap_or("")),
            row.file,
            row.line_start,
            row.line_end
        ));
    }
}

pub fn trace(result: &Trace) -> String {
    if !result.found {
        let mut text = format!(
            "No call path from {} to {}.\n{} reaches {} symbols through its calls",
            result.from, result.to, result.from, result.reachable
        );
        if result.reaches.is_empty() {
            text.push_str(".\n");
        } else {
            text.push_str(&format!(", nearest first: {}\n", result.reaches.join(", ")));
        }
        return text;
    }
    let mut text = format!(
        "Call path from {} to {} ({} calls):\n\n| # | Symbol | Layer | File:lines | Called at line | Confidence |\n|---|---|---|---|---|---|\n",
        result.from,
        result.to,
        result.path.len() - 1
    );
    for (n, step) in result.path.iter().enumerate() {
        text.push_str(&format!(
            "| {n} | {} | {} | {} | {} | {} |\n",
            step.id,
            step.layer,
            step.location,
            step.call_line.map_or("-".into(), |l| l.to_string()),
            step.confidence.map_or("-".into(), |c| format!("{c:.2}"))
        ));
    }
    text
}

pub fn dead_code(answer: &DeadCodeAnswer) -> String {
    let mut text = format!(
        "{} functions and methods with no inbound call, import or reference\n\n| Confidence | Symbol | File:lines | Reason |\n|---|---|---|---|\n",
        answer.count
    );
    for f in &answer.findings {
        text.push_str(&format!(
            "| {:.1} | {} | {} | {} |\n",
            f.confidence, f.id, f.location, f.reason
        ));
    }
    text
}
