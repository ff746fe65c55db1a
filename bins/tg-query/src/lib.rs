//! tg-query: questions answered from the search index tg-embed builds. `tldrgraph query`,
//! `trace` and `dead-code` run it. It never writes an artifact.

pub mod cli;
pub mod deadcode;
pub mod graph;
pub mod names;
pub mod search;
pub mod trace;

use cli::{Cli, Command, DeadCodeArgs, SearchArgs, TraceArgs};
use graph::Graph;
use serde_json::{json, Value};
use tg_shared::exit;
use tg_shared::stage::{Failure, Output};

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let (_, store) = tg_shared::stage::workspace(cli.root.as_deref())?;
    let graph = Graph::load(&store)?;
    let text = match &cli.command {
        Command::Search(args) => search_command(&graph, args, cli.json)?,
        Command::Trace(args) => trace_command(&graph, args, cli.json)?,
        Command::DeadCode(args) => dead_code_command(&graph, store.root(), args, cli.json),
    };
    let text = with_freshness(text, &store, cli.json);
    let mut out = Output::new(None);
    out.line(text.trim_end())?;
    out.finish()
}

/// Every answer says whether the graph it came from is current: `fresh` (and, when stale,
/// `changes` with counts) in JSON, one line above the Markdown. A repository whose last build
/// left no state (a bare pipeline run) says nothing.
fn with_freshness(text: String, store: &tg_shared::store::Store, json: bool) -> String {
    let Ok(state) = tg_shared::artifacts::state::SavedState::read(store) else {
        return text;
    };
    let changes = tg_lang::walk::changes_since(store.root(), store, &state);
    if json {
        return match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut map)) => {
                map.extend(changes.to_fields());
                Value::Object(map).to_string()
            }
            _ => text,
        };
    }
    match changes.line() {
        Some(line) => format!("> Note: {line}.\n\n{text}"),
        None => text,
    }
}

/// The indices of the layers `ids` names; an unknown id is a usage error naming the nearest.
/// The layers `--layer`/`--exclude-layer` name, by id or by name (answers print the name, so
/// an agent may feed it back); an id wins over another layer's name.
fn layer_indices(graph: &Graph, ids: &[String]) -> Result<Vec<u32>, Failure> {
    let layers = &graph.index.layers;
    let known: Vec<&str> = layers.iter().map(|l| l.id.as_str()).collect();
    ids.iter()
        .map(|id| {
            known
                .iter()
                .position(|k| k == id)
                .or_else(|| layers.iter().position(|l| l.name == *id))
                .map(|p| p as u32)
                .ok_or_else(|| {
                    let nearest = tg_shared::suggest::nearest(id, &known)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    Failure::new(
                        exit::USAGE,
                        format!("no layer `{id}`; {nearest}layers: {}", known.join(", ")),
                    )
                })
        })
        .collect()
}

/// A Markdown table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A search's answer before it is printed.
struct Found {
    hits: Vec<search::Hit>,
    flows: Vec<Vec<search::FlowRow>>,
    /// Why the ranking is not what was asked (no vectors for a semantic search).
    note: Option<String>,
    /// The context pack and its size in tokens, with `--budget`.
    pack: Option<(String, usize)>,
}

fn search_command(graph: &Graph, args: &SearchArgs, json: bool) -> Result<String, Failure> {
    let filter = search::Filter {
        layers: layer_indices(graph, &args.layer)?,
        exclude_layers: layer_indices(graph, &args.exclude_layer)?,
        include_tests: args.include_tests,
    };
    let (mut hits, note) = search::rank(graph, &args.text, args.mode, &filter);
    hits.truncate(args.top_k);
    let flows: Vec<Vec<search::FlowRow>> =
        hits.iter().map(|h| search::flow(graph, h.symbol)).collect();
    let pack = args.budget.map(|b| search::pack(graph, &hits, &flows, b));
    if let Some(note) = &note {
        eprintln!("tg-query: {note}");
    }
    let found = Found {
        hits,
        flows,
        note,
        pack,
    };
    Ok(if json {
        search_json(graph, args, found)
    } else {
        search_markdown(graph, args, found)
    })
}

fn search_json(graph: &Graph, args: &SearchArgs, found: Found) -> String {
    let results: Vec<Value> = found
        .hits
        .iter()
        .zip(&found.flows)
        .enumerate()
        .map(|(rank, (hit, flow))| {
            let symbol = graph.symbol(hit.symbol);
            let (intent, source) = search::about(graph, hit.symbol);
            json!({
                "rank": rank + 1,
                "id": symbol.id,
                "kind": symbol.kind.as_str(),
                "layer": graph.layer_name(hit.symbol),
                "file": symbol.file,
                "line_start": symbol.line_start,
                "line_end": symbol.line_end,
                "signature": symbol.signature,
                "intent": intent,
                "intent_source": source,
                "score": hit.score,
                "lexical_rank": hit.lexical_rank,
                "semantic_rank": hit.semantic_rank,
                "flow": flow,
            })
        })
        .collect();
    let mut out = json!({
        "query": args.text,
        "mode": format!("{:?}", args.mode).to_lowercase(),
        "results": results,
    });
    if let Some(note) = found.note {
        out["note"] = Value::String(note);
    }
    if let Some((text, tokens)) = found.pack {
        out["context"] = json!({"budget": args.budget, "tokens": tokens, "text": text, "tokens_are": "characters / 4"});
    }
    out.to_string()
}

fn search_markdown(graph: &Graph, args: &SearchArgs, found: Found) -> String {
    let mut text = String::new();
    if found.hits.is_empty() {
        text.push_str(&format!("No symbol matches \"{}\".\n", args.text));
    }
    for (rank, (hit, flow)) in found.hits.iter().zip(&found.flows).enumerate() {
        let symbol = graph.symbol(hit.symbol);
        let ranks = [
            ("lexical", hit.lexical_rank),
            ("semantic", hit.semantic_rank),
        ]
        .iter()
        .filter_map(|(name, r)| r.map(|r| format!("{name} #{r}")))
        .collect::<Vec<_>>()
        .join(", ");
        text.push_str(&format!(
            "## {}. {} ({}; {})\n\n| Layer | Symbol | Intent | File:lines |\n|---|---|---|---|\n",
            rank + 1,
            symbol.id,
            symbol.kind.as_str(),
            if ranks.is_empty() {
                "-".to_string()
            } else {
                ranks
            }
        ));
        flow_rows(&mut text, flow);
        text.push('\n');
    }
    if let Some((pack, tokens)) = found.pack {
        text.push_str(&format!(
            "## Context pack ({tokens} of {} tokens, 4 characters per token)\n\n```\n{pack}```\n",
            args.budget.unwrap_or(0)
        ));
    }
    text
}

/// A hit's execution flow as table rows: the hit, then what it calls (`via` the caller when
/// deeper than one call).
fn flow_rows(text: &mut String, flow: &[search::FlowRow]) {
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

fn trace_command(graph: &Graph, args: &TraceArgs, json: bool) -> Result<String, Failure> {
    let ends = graph
        .resolve(&args.from)
        .and_then(|from| Ok((from, graph.resolve(&args.to)?)));
    let (from, to) = match ends {
        Ok(ends) => ends,
        Err(err) => {
            if json {
                // The candidates on stdout too, where a client reading JSON looks.
                let mut out = Output::new(None);
                out.line(&err.to_json().to_string())?;
                out.finish()?;
            }
            return Err(Failure::new(exit::USAGE, err.message()).with_hint(err.hint()));
        }
    };
    let result = trace::trace(graph, from, to);
    if json {
        return serde_json::to_string(&result)
            .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise: {e}")));
    }
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
        return Ok(text);
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
    Ok(text)
}

fn dead_code_command(
    graph: &Graph,
    root: &std::path::Path,
    args: &DeadCodeArgs,
    json: bool,
) -> String {
    let findings: Vec<deadcode::Finding> = deadcode::find(graph, root)
        .into_iter()
        .filter(|f| f.confidence >= args.min_confidence)
        .collect();
    if json {
        return json!({"count": findings.len(), "findings": findings}).to_string();
    }
    let mut text = format!(
        "{} functions and methods with no inbound call, import or reference\n\n| Confidence | Symbol | File:lines | Reason |\n|---|---|---|---|\n",
        findings.len()
    );
    for f in &findings {
        text.push_str(&format!(
            "| {:.1} | {} | {} | {} |\n",
            f.confidence, f.id, f.location, f.reason
        ));
    }
    text
}
