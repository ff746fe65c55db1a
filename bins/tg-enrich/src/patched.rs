//! A patch applied to what tg-enrich kept of the last whole stream (each symbol's id and
//! source hash in stream order, the files, the intents' counts), in `cache/enrich.state`
//! with that stream's fingerprint, the intents' digest and the mode. The removed node lines
//! are written as the last run wrote them and counted out, the added ones written and counted
//! in; the plan's candidates and the diagnostics come whole in the tail.
//!
//! Only what a run without a batch does is done so: with an LLM provider (it answers during
//! the run) or approved candidates still waiting for an intent (their batch names neighbours
//! the state does not keep), the patch is refused and the whole stream goes through.

use crate::cli::{Cli, Enrich};
use crate::stream::{self, Counts, Seen, OWNED};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tg_shared::approval;
use tg_shared::artifacts;
use tg_shared::contract;
use tg_shared::exit;
use tg_shared::intents::{IntentStore, Lookup};
use tg_shared::ndjson::Item;
use tg_shared::patch::{KeptState, Patch, StateHead};
use tg_shared::record::{Candidate, Record};
use tg_shared::stage::{Failure, Output, Progress};
use tg_shared::store::Store;

/// Bumped when the layout or meaning of the state changes: an older state is then not applied.
const REVISION: u32 = 1;

/// What the state keeps of a symbol.
#[derive(Serialize, Deserialize, Clone)]
struct Symbol {
    file: String,
    id: String,
    hash: String,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    head: StateHead,
    symbols: Vec<Symbol>,
    files: BTreeSet<String>,
    counts: Counts,
}

/// What the lines were written with: the intents (as the pass read them) and the mode.
pub fn settings_key(intents_digest: &str, mode: Enrich) -> String {
    format!("{intents_digest}/{mode:?}")
}

fn kept(store: &Store) -> KeptState<'_> {
    KeptState {
        stage: crate::STAGE,
        path: store.enrich_state_path(),
        store,
    }
}

/// Keeps what `seen` holds as the state of its stream; none for a stream without a
/// fingerprint or an irregular one.
pub fn save(store: &Store, stream: &Option<String>, settings: &str, seen: &Seen) {
    let symbols = (seen.symbols.iter())
        .map(|s| Symbol {
            file: s.file.clone(),
            id: s.id.clone(),
            hash: s.hash.clone(),
        })
        .collect();
    let stream = stream.as_deref().filter(|_| !seen.irregular);
    write(store, stream, settings, symbols, &seen.files, &seen.counts);
}

fn write(
    store: &Store,
    stream: Option<&str>,
    settings: &str,
    symbols: Vec<Symbol>,
    files: &BTreeSet<String>,
    counts: &Counts,
) {
    let saved = stream.map(|stream| Saved {
        head: StateHead {
            revision: REVISION,
            stream: stream.to_string(),
            settings: settings.to_string(),
        },
        symbols,
        files: files.clone(),
        counts: counts.clone(),
    });
    kept(store).save(saved.as_ref());
}

fn no_base(why: &str) -> Failure {
    tg_shared::patch::no_base(crate::STAGE, why)
}

fn load(store: &Store, base: &str, settings: &str) -> Result<Saved, Failure> {
    let changed = "the intents (.tldrgraph/intents.ndjson) or the mode changed";
    kept(store).load(|s: &Saved| &s.head, (REVISION, base, settings), changed)
}

/// A patch section's records as this stage writes them, with the files and symbols it names
/// (by file) and the counts of its nodes.
struct Section {
    lines: Vec<String>,
    files: BTreeMap<String, Vec<Symbol>>,
    counts: Counts,
}

fn section(items: &[Item], store: &IntentStore, mode: Enrich) -> Result<Section, Failure> {
    let mut section = Section {
        lines: Vec::with_capacity(items.len()),
        files: BTreeMap::new(),
        counts: Counts::default(),
    };
    let mut file: Option<String> = None;
    for item in items {
        let line = match &item.record {
            Some(Record::Node(node)) => {
                let (line, counts) = stream::enrich_node(node, &item.raw, store, mode)?;
                section.counts.count(&counts, true);
                let Some(path) = &file else {
                    return Err(no_base(&format!(
                        "line {}: a node before any file",
                        item.line
                    )));
                };
                section.files.entry(path.clone()).or_default().push(Symbol {
                    file: node.file.clone(),
                    id: node.id.clone(),
                    hash: node.hash.clone(),
                });
                line
            }
            Some(Record::File(record)) => {
                file = Some(record.path.clone());
                section.files.entry(record.path.clone()).or_default();
                None
            }
            _ => None,
        };
        section.lines.push(line.unwrap_or_else(|| item.raw.clone()));
    }
    Ok(section)
}

/// The symbols of `old` with each replaced file's swapped for the added ones (symbols are in
/// stream order, which sorts by file).
fn swap_symbols(
    old: Vec<Symbol>,
    removed: &BTreeMap<String, Vec<Symbol>>,
    added: &BTreeMap<String, Vec<Symbol>>,
) -> Result<Vec<Symbol>, Failure> {
    let paths: BTreeSet<&String> = removed.keys().chain(added.keys()).collect();
    let mut symbols = Vec::with_capacity(old.len());
    let mut rest = old.into_iter().peekable();
    for path in paths {
        while rest.peek().is_some_and(|s| s.file < *path) {
            symbols.extend(rest.next());
        }
        let mut gone = removed.get(path).into_iter().flatten();
        while rest.peek().is_some_and(|s| s.file == *path) {
            let (old, expected) = (rest.next(), gone.next());
            if old.as_ref().map(|s| &s.id) != expected.map(|s| &s.id) {
                return Err(no_base(&format!(
                    "the nodes it removes from {path} are not those the last stream holds"
                )));
            }
        }
        if gone.next().is_some() {
            return Err(no_base(&format!(
                "it removes nodes of {path} the last stream does not hold"
            )));
        }
        symbols.extend(added.get(path).into_iter().flatten().cloned());
    }
    symbols.extend(rest);
    Ok(symbols)
}

/// An added symbol whose id another symbol holds too means the patch does not fit (a whole
/// run keeps the first).
fn check_ids_once(
    symbols: &[Symbol],
    added: &BTreeMap<String, Vec<Symbol>>,
) -> Result<(), Failure> {
    let mut seen: rustc_hash::FxHashMap<&str, bool> = (added.values().flatten())
        .map(|s| (s.id.as_str(), false))
        .collect();
    for symbol in symbols {
        if let Some(found) = seen.get_mut(symbol.id.as_str()) {
            if *found {
                return Err(no_base(&format!("repeats the id {}", symbol.id)));
            }
            *found = true;
        }
    }
    Ok(())
}

/// What the tail says: the plan's candidates (by rank), whether the layers exist, the files
/// that may lack symbols; and its lines but an earlier tg-enrich's.
struct Tail {
    candidates: Vec<Candidate>,
    layers_missing: bool,
    incomplete: BTreeSet<String>,
    lines: Vec<String>,
}

fn tail(items: &[Item]) -> Tail {
    let mut tail = Tail {
        candidates: Vec::new(),
        layers_missing: false,
        incomplete: BTreeSet::new(),
        lines: Vec::new(),
    };
    for item in items {
        if OWNED.owns(item.record.as_ref()) {
            continue;
        }
        match &item.record {
            Some(Record::Candidate(candidate)) => tail.candidates.push(candidate.clone()),
            Some(Record::Diagnostic(diagnostic)) if stream::incomplete(&diagnostic.code) => {
                tail.incomplete.extend(diagnostic.file.clone());
            }
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                tail.layers_missing = true;
            }
            _ => {}
        }
        tail.lines.push(item.raw.clone());
    }
    tail.candidates.sort_by_key(|c| c.rank);
    tail
}

/// Whether an approved candidate still lacks a current intent (then a batch is due, which
/// the whole stream makes).
fn any_pending(
    cli: &Cli,
    store_dir: &Store,
    tail: &Tail,
    symbols: &[Symbol],
    store: &IntentStore,
) -> bool {
    if cli.enrichment.mode() != Enrich::Auto || tail.layers_missing {
        return false;
    }
    let approval = approval::read(&store_dir.path(artifacts::APPROVAL)).unwrap_or(None);
    let approved: BTreeSet<&str> = (tail.candidates.iter())
        .filter(|c| approval.as_ref().is_some_and(|a| a.ids.contains(&c.id)))
        .map(|c| c.id.as_str())
        .collect();
    (symbols.iter())
        .filter(|s| approved.contains(s.id.as_str()))
        .any(|s| {
            !matches!(
                store.lookup(&s.id, &s.hash),
                Lookup::Current(_) | Lookup::Moved(_)
            )
        })
}

/// Applies `patch` to the state of its base and writes this stage's patch; `store` is the
/// intents as read before the pass, `provider` whether an LLM provider would answer.
pub fn run(
    cli: &Cli,
    store_dir: &Store,
    (store, provider): (&IntentStore, bool),
    patch: Patch,
    mut output: Output,
) -> Result<(), Failure> {
    let progress = Progress::new(crate::STAGE, cli.stage.quiet);
    if provider {
        return Err(no_base("an LLM provider answers during the run"));
    }
    let mode = cli.enrichment.mode();
    let settings = settings_key(store.digest(), mode);
    let saved = load(store_dir, &patch.of.base, &settings)?;
    let removed = section(&patch.removed, store, mode)?;
    let added = section(&patch.added, store, mode)?;
    let symbols = swap_symbols(saved.symbols, &removed.files, &added.files)?;
    check_ids_once(&symbols, &added.files)?;
    let mut files = saved.files;
    for path in removed.files.keys() {
        files.remove(path);
    }
    files.extend(added.files.keys().cloned());
    let mut counts = saved.counts;
    counts.count(&removed.counts, false);
    counts.count(&added.counts, true);
    let tail = tail(&patch.tail);
    if any_pending(cli, store_dir, &tail, &symbols, store) {
        return Err(no_base(
            "approved candidates wait for an intent: their batch needs the whole stream",
        ));
    }

    let head =
        [&removed.lines, &added.lines].map(|lines| lines.iter().map(String::as_str).collect());
    let header = tg_shared::patch::folded_header(&patch.header, &settings);
    tg_shared::patch::write_head(&mut output, &header, head)?;
    for line in &tail.lines {
        output.line(line)?;
    }
    if output.is_closed() {
        // The reader went away: nothing is committed, as for a whole stream.
        return Ok(());
    }
    let lock = store_dir
        .lock()
        .map_err(|e| Failure::cant_write(&store_dir.lock_path(), &e))?;
    let intents_path = store_dir.path(artifacts::INTENTS);
    let mut current =
        IntentStore::load(&intents_path).map_err(|message| Failure::new(exit::DATA, message))?;
    let mut summary: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    if !cli.no_prune && !tail.layers_missing {
        let live = || (symbols.iter()).map(|s| (s.id.clone(), s.hash.clone()));
        let (pruned, moved) = stream::reconcile_with(
            &mut current,
            live,
            (&files, &tail.incomplete),
            store_dir.root(),
        );
        summary.insert("pruned".into(), pruned.into());
        summary.insert("moved".into(), moved.into());
    }
    current
        .save(&intents_path)
        .map_err(|e| Failure::cant_write(&intents_path, &e))?;
    stream::no_request(store_dir)?;
    drop(lock);

    stream::finish(output, &progress, summary, &counts, (0, 0), false)?;
    write(
        store_dir,
        Some(&patch.of.result),
        &settings,
        symbols,
        &files,
        &counts,
    );
    Ok(())
}
