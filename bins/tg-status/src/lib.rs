//! tg-status: the contract state of a stream (and the graph as one JSON file), or of the last
//! build (from `.tldrgraph/`, with freshness).

pub mod cli;
pub mod fresh;

use cli::Cli;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use tg_shared::artifacts::{self, graph::GraphWriter, state::SavedState};
use tg_shared::contract::{self, Done};
use tg_shared::exit;
use tg_shared::freshness;
use tg_shared::record::{Record, Status};
use tg_shared::stage::{Failure, Input, Output, Progress, StreamCheck};
use tg_shared::store::{self, Store};

/// The stage name in its messages.
pub const STAGE: &str = "tg-status";

/// Diagnostic codes of files tg-extract saw and did not extract.
const SKIP_CODES: [&str; 3] = ["binary", "too_large", "unreadable"];

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let (_, store) = cli.stage.workspace()?;
    let streamed = if cli.from_artifacts || (cli.input.is_none() && std::io::stdin().is_terminal())
    {
        None
    } else {
        from_stream(cli, &store)?
    };
    let payload = match streamed {
        Some(payload) => payload,
        None => fresh::from_artifacts(store.root(), &store)?,
    };
    let mut out = Output::new(None);
    out.line(&payload.to_string())?;
    out.finish()
}

/// Reads the whole stream, writes graph.json and state.json, and returns the payload; `None`
/// when stdin was empty (`tg-status < /dev/null`, a harness without a terminal): then the
/// caller reports the last build instead.
fn from_stream(cli: &Cli, store: &Store) -> Result<Option<Value>, Failure> {
    let mut input = Input::open(cli.input.as_deref())?;
    let mut stream = StreamCheck::default();
    let first = input.next_item(&mut stream);
    if first.is_none() && cli.input.is_none() {
        return Ok(None);
    }
    let mut graph = GraphWriter::create(store)
        .map_err(|e| Failure::cant_write(&store.path(artifacts::GRAPH), &e))?;
    let mut blocking: Option<(usize, Status)> = None;
    let mut files = BTreeMap::new();
    let mut skipped = Vec::new();
    let (mut nodes, mut edges, mut layers) = (0u64, 0u64, 0u64);
    let mut embeddings_ready = false;
    // How tg-extract walked (its summary says), for the freshness checks to walk alike.
    let mut walk_exclude: Vec<String> = Vec::new();
    let mut no_ignore = false;
    // Plan candidates, and the nodes whose intent was written for their present source.
    let mut candidates: BTreeSet<String> = BTreeSet::new();
    let mut current: BTreeSet<String> = BTreeSet::new();
    let mut pending = first;
    while let Some(item) = pending.take().or_else(|| input.next_item(&mut stream)) {
        let item = item?;
        let written = match &item.record {
            Some(Record::Node(node)) => {
                nodes += 1;
                if node.intent_written_for_source() {
                    current.insert(node.id.clone());
                }
                graph.node(&item.raw)
            }
            Some(Record::Candidate(candidate)) => {
                candidates.insert(candidate.id.clone());
                Ok(())
            }
            Some(Record::Edge(_)) => {
                edges += 1;
                graph.edge(&item.raw)
            }
            Some(Record::Layer(_)) => {
                layers += 1;
                graph.layer(&item.raw)
            }
            Some(Record::File(file)) => {
                files.insert(file.path.clone(), file.hash.clone());
                graph.file(&item.raw)
            }
            Some(Record::Diagnostic(diagnostic)) => {
                if let Some(file) = &diagnostic.file {
                    if SKIP_CODES.contains(&diagnostic.code.as_str()) {
                        skipped.push(file.clone());
                    }
                }
                Ok(())
            }
            Some(Record::Status(status)) => {
                if let Some(rank) = contract::blocking_rank(&status.status) {
                    if blocking.as_ref().is_none_or(|(r, _)| rank < *r) {
                        blocking = Some((rank, status.clone()));
                    }
                }
                Ok(())
            }
            // A stage that embeds says so in its summary (`embeddings_ready`).
            Some(Record::Summary(summary)) => {
                if let Some(Value::Bool(ready)) = summary.counts.get("embeddings_ready") {
                    embeddings_ready = *ready;
                }
                if summary.stage == "tg-extract" {
                    if let Some(Value::Array(globs)) = summary.counts.get("exclude") {
                        walk_exclude = globs
                            .iter()
                            .filter_map(|g| g.as_str().map(str::to_string))
                            .collect();
                    }
                    no_ignore = summary.counts.get("no_ignore") == Some(&Value::Bool(true));
                }
                Ok(())
            }
            _ => Ok(()),
        };
        written.map_err(|e| Failure::cant_write(&store.path(artifacts::GRAPH), &e))?;
    }
    // A truncated stream commits nothing: the graph file is dropped uncommitted.
    stream.finish(&input.name)?;
    let payload = match blocking {
        Some((_, status)) => contract::payload(&status),
        None => contract::payload(&contract::status(
            contract::DONE,
            &Done {
                nodes_count: nodes,
                edges_count: edges,
                layers_count: layers,
                embeddings_ready,
                enriched: candidates.intersection(&current).count() as u64,
                declined: declined_count(store, &candidates, &current),
            },
        )),
    };
    skipped.sort();
    skipped.dedup();
    let skipped_stamps = skipped
        .iter()
        .filter_map(|f| store::stamp(&store.root().join(f)).map(|s| (f.clone(), s)))
        .collect();
    let state = SavedState {
        payload: payload.clone(),
        files,
        skipped,
        skipped_stamps,
        config_hash: freshness::config_hash(store),
        decisions_hash: freshness::decisions_hash(store),
        exclude: walk_exclude,
        no_ignore,
    };
    let state_json = state
        .to_bytes()
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise the state: {e}")))?;
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    graph
        .commit()
        .map_err(|e| Failure::cant_write(&store.path(artifacts::GRAPH), &e))?;
    SavedState::write(store, &state_json)
        .map_err(|e| Failure::cant_write(&store.path(artifacts::STATE), &e))?;
    Progress::new(STAGE, cli.stage.quiet).say(format_args!(
        "{} ({nodes} nodes, {edges} edges, {layers} layers)",
        payload["status"].as_str().unwrap_or("?")
    ));
    Ok(Some(payload))
}

/// Candidates the approval file declines that still lack a current intent.
fn declined_count(store: &Store, candidates: &BTreeSet<String>, current: &BTreeSet<String>) -> u64 {
    match tg_shared::approval::load(&store.path(artifacts::APPROVAL)) {
        tg_shared::approval::Loaded::Approved(_, declined) => declined
            .iter()
            .filter(|id| candidates.contains(*id) && !current.contains(*id))
            .count() as u64,
        _ => 0,
    }
}

/// `payload` with `extra` fields appended (used for freshness).
pub fn extend(payload: Value, extra: Map<String, Value>) -> Value {
    match payload {
        Value::Object(mut map) => {
            map.extend(extra);
            Value::Object(map)
        }
        other => other,
    }
}
