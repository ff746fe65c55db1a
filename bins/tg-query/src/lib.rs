//! tg-query: questions answered from the search index tg-embed builds. `tldrgraph query`,
//! `trace` and `dead-code` run it. It never writes an artifact.

pub mod answer;
pub mod cli;
pub mod deadcode;
pub mod graph;
pub mod names;
pub mod render;
pub mod search;
pub mod trace;

use cli::{Cli, Command};
use graph::Graph;
use serde_json::Value;
use tg_shared::exit;
use tg_shared::freshness::{Changes, Verified};
use tg_shared::stage::{Failure, Output};

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let (_, store) = tg_shared::stage::workspace(cli.root.as_deref())?;
    // Whether the sources moved since the build is a walk of the tree, as long as many answers
    // (0.35 s on the kernel): it runs beside the answer.
    std::thread::scope(|scope| {
        let changes = scope.spawn(|| changes_since_build(&store));
        let text = answer_text(cli, &store)?;
        let changes = changes.join().unwrap_or(None);
        let text = with_freshness(text, changes, cli.json);
        let mut out = Output::new(None);
        out.line(text.trim_end())?;
        out.finish()
    })
}

/// The answer to the command, as it is printed (before the freshness note).
fn answer_text(cli: &Cli, store: &tg_shared::store::Store) -> Result<String, Failure> {
    let graph = Graph::load(store)?;
    graph.require(match &cli.command {
        Command::Search(_) => graph::FOR_SEARCH,
        Command::Trace(_) => graph::FOR_TRACE,
        Command::DeadCode(_) => graph::FOR_DEAD_CODE,
    })?;
    let json = cli.json;
    let text = match &cli.command {
        Command::Search(args) => {
            let answer = answer::search(&graph, args).map_err(|e| Failure::new(exit::USAGE, e))?;
            if let Some(note) = &answer.note {
                eprintln!("tg-query: {note}");
            }
            if json {
                to_json(&answer)?
            } else {
                render::search(&answer)
            }
        }
        Command::Trace(args) => match answer::trace(&graph, &args.from, &args.to) {
            Ok(result) if json => to_json(&result)?,
            Ok(result) => render::trace(&result),
            Err(err) => {
                // A name not found in a damaged index is the damage's error.
                graph.check()?;
                if json {
                    // The candidates on stdout too, where a client reading JSON looks.
                    let mut out = Output::new(None);
                    out.line(&err.to_json().to_string())?;
                    out.finish()?;
                }
                return Err(Failure::new(exit::USAGE, err.message()).with_hint(err.hint()));
            }
        },
        Command::DeadCode(args) => {
            let answer = answer::dead_code(&graph, store.root(), args.min_confidence);
            if json {
                to_json(&answer)?
            } else {
                render::dead_code(&answer)
            }
        }
    };
    // Damage under a value read on the way refuses the answer made with it.
    graph.check()?;
    Ok(text)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, Failure> {
    serde_json::to_string(value)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise: {e}")))
}

/// Every answer says whether the graph it came from is current: `fresh` (and, when stale,
/// `changes` with counts) in JSON, one line above the Markdown. A repository whose last build
/// left no state (a bare pipeline run) says nothing.
/// What changed in the sources since the last build; `None` when there is no record of one.
fn changes_since_build(store: &tg_shared::store::Store) -> Option<Changes> {
    let state = tg_shared::artifacts::state::SavedState::read(store).ok()?;
    Some(tg_lang::walk::changes_since(
        store.root(),
        store,
        &state,
        &mut Verified::load(store),
    ))
}

fn with_freshness(text: String, changes: Option<Changes>, json: bool) -> String {
    let Some(changes) = changes else {
        return text;
    };
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

/// The indices of the layers `--layer`/`--exclude-layer` name, by id or by name (answers print the name, so
/// an agent may feed it back); an id wins over another layer's name. An unknown one is an
/// error naming the nearest.
pub(crate) fn layer_indices(graph: &Graph, ids: &[String]) -> Result<Vec<u32>, String> {
    let layers = graph.index.layers();
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
                    format!("no layer `{id}`; {nearest}layers: {}", known.join(", "))
                })
        })
        .collect()
}
