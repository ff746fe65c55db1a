//! tg-status: the contract state of a stream (and the graph as one JSON file), or of the last
//! build (from `.tldrgraph/`, with freshness).

pub mod cli;
pub mod fresh;

use cli::Cli;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use tg_shared::artifacts::graph::{GraphWriter, PLAIN_LIMIT};
use tg_shared::artifacts::{self, state::SavedState};
use tg_shared::contract::{self, Done};
use tg_shared::exit;
use tg_shared::freshness;
use tg_shared::ndjson::Item;
use tg_shared::record::{Record, Status, Summary, SKIPPED_FILE_CODES};
use tg_shared::stage::{Failure, Input, Output, Progress, StreamCheck};
use tg_shared::store::{self, Store};

/// The stage name in its messages.
pub const STAGE: &str = "tg-status";

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

/// What the state is made of, gathered from the stream.
#[derive(Default)]
struct Seen {
    /// The first blocking status in pipeline order, by its rank.
    blocking: Option<(usize, Status)>,
    /// Source files and their content hashes.
    files: BTreeMap<String, String>,
    /// Files tg-extract saw and did not extract.
    skipped: Vec<String>,
    nodes: u64,
    edges: u64,
    layers: u64,
    embeddings_ready: bool,
    /// How tg-extract walked (its summary says), for the freshness checks to walk alike.
    walk_exclude: Vec<String>,
    no_ignore: bool,
    /// Plan candidates, and the nodes whose intent was written for their present source.
    candidates: BTreeSet<String>,
    current: BTreeSet<String>,
}

impl Seen {
    /// Takes in one record, writing it to graph.json when it belongs there.
    fn observe(&mut self, item: &Item, graph: &mut GraphWriter) -> std::io::Result<()> {
        match &item.record {
            Some(Record::Node(node)) => {
                self.nodes += 1;
                if node.intent_written_for_source() {
                    self.current.insert(node.id.clone());
                }
                graph.node(&item.raw)
            }
            Some(Record::Candidate(candidate)) => {
                self.candidates.insert(candidate.id.clone());
                Ok(())
            }
            Some(Record::Edge(_)) => {
                self.edges += 1;
                graph.edge(&item.raw)
            }
            Some(Record::Layer(_)) => {
                self.layers += 1;
                graph.layer(&item.raw)
            }
            Some(Record::File(file)) => {
                self.files.insert(file.path.clone(), file.hash.clone());
                graph.file(&item.raw)
            }
            Some(Record::Diagnostic(diagnostic)) => {
                if let Some(file) = &diagnostic.file {
                    if SKIPPED_FILE_CODES.contains(&diagnostic.code.as_str()) {
                        self.skipped.push(file.clone());
                    }
                }
                Ok(())
            }
            Some(Record::Status(status)) => {
                if let Some(rank) = contract::blocking_rank(&status.status) {
                    if self.blocking.as_ref().is_none_or(|(r, _)| rank < *r) {
                        self.blocking = Some((rank, status.clone()));
                    }
                }
                Ok(())
            }
            Some(Record::Summary(summary)) => {
                self.summary(summary);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A stage that embeds says so in its summary (`embeddings_ready`); tg-extract's says how
    /// it walked.
    fn summary(&mut self, summary: &Summary) {
        if let Some(Value::Bool(ready)) = summary.counts.get("embeddings_ready") {
            self.embeddings_ready = *ready;
        }
        if summary.stage == "tg-extract" {
            if let Some(Value::Array(globs)) = summary.counts.get("exclude") {
                self.walk_exclude = globs
                    .iter()
                    .filter_map(|g| g.as_str().map(str::to_string))
                    .collect();
            }
            self.no_ignore = summary.counts.get("no_ignore") == Some(&Value::Bool(true));
        }
    }

    /// The contract payload: the first blocking status, else `done` with counts.
    fn payload(&self, store: &Store) -> Value {
        match &self.blocking {
            Some((_, status)) => contract::payload(status),
            None => contract::payload(&contract::status(
                contract::DONE,
                &Done {
                    nodes_count: self.nodes,
                    edges_count: self.edges,
                    layers_count: self.layers,
                    embeddings_ready: self.embeddings_ready,
                    enriched: self.candidates.intersection(&self.current).count() as u64,
                    declined: declined_count(store, &self.candidates, &self.current),
                },
            )),
        }
    }

    /// What state.json keeps: the payload and what the freshness checks compare against.
    fn into_state(mut self, payload: Value, store: &Store) -> SavedState {
        self.skipped.sort();
        self.skipped.dedup();
        let skipped_stamps = self
            .skipped
            .iter()
            .filter_map(|f| store::stamp(&store.root().join(f)).map(|s| (f.clone(), s)))
            .collect();
        SavedState {
            payload,
            files: self.files,
            skipped: self.skipped,
            skipped_stamps,
            config_hash: freshness::config_hash(store),
            decisions_hash: freshness::decisions_hash(store),
            exclude: self.walk_exclude,
            no_ignore: self.no_ignore,
        }
    }
}

/// Reads the whole stream, writes graph.json and state.json, and returns the payload; `None`
/// when stdin was empty (`tg-status < /dev/null`, a harness without a terminal): then the
/// caller reports the last build instead.
fn from_stream(cli: &Cli, store: &Store) -> Result<Option<Value>, Failure> {
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let plain_limit = plain_graph_limit()?;
    let mut input = Input::open(cli.input.as_deref())?.metered(&progress);
    let mut stream = StreamCheck::default();
    let first = input.next_item(&mut stream);
    if first.is_none() && cli.input.is_none() {
        return Ok(None);
    }
    let graph_failure = |e: std::io::Error| Failure::cant_write(&store.path(artifacts::GRAPH), &e);
    let mut graph = GraphWriter::create(store, plain_limit).map_err(graph_failure)?;
    let mut seen = Seen::default();
    let mut pending = first;
    while let Some(item) = pending.take().or_else(|| input.next_item(&mut stream)) {
        seen.observe(&item?, &mut graph).map_err(graph_failure)?;
    }
    // A truncated stream commits nothing: the graph file is dropped uncommitted.
    stream.finish(&input.name)?;
    let payload = seen.payload(store);
    let (nodes, edges, layers) = (seen.nodes, seen.edges, seen.layers);
    let state_json = seen
        .into_state(payload.clone(), store)
        .to_bytes()
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise the state: {e}")))?;
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    graph.commit().map_err(graph_failure)?;
    SavedState::write(store, &state_json)
        .map_err(|e| Failure::cant_write(&store.path(artifacts::STATE), &e))?;
    progress.say(format_args!(
        "{} ({nodes} nodes, {edges} edges, {layers} layers)",
        payload["status"].as_str().unwrap_or("?")
    ));
    Ok(Some(payload))
}

/// The size above which the graph is written as graph.json.zst: `TLDRGRAPH_PLAIN_GRAPH_LIMIT`
/// (bytes) when set, else [`PLAIN_LIMIT`].
fn plain_graph_limit() -> Result<u64, Failure> {
    const VARIABLE: &str = "TLDRGRAPH_PLAIN_GRAPH_LIMIT";
    match std::env::var(VARIABLE) {
        Err(std::env::VarError::NotPresent) => Ok(PLAIN_LIMIT),
        Ok(value) if value.trim().parse::<u64>().is_ok() => Ok(value.trim().parse().unwrap_or(0)),
        _ => Err(Failure::new(
            exit::USAGE,
            format!("{VARIABLE} must be a number of bytes"),
        )),
    }
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
