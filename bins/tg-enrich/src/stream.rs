//! The stream pass: stored intents onto the nodes, then the next batch (or the LLM round) for
//! the approved candidates still lacking a current intent.
//!
//! With an LLM provider the stream is spooled to a temporary file and replayed once the
//! answers are in, so the nodes leave this stage carrying them; otherwise it is one pass.

use crate::cli::{Cli, Enrich};
use crate::provider::{self, ProviderConfig};
use crate::STAGE;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use tg_shared::approval;
use tg_shared::artifacts;
use tg_shared::contract::{self, EnrichmentItem, NeedsEnrichment};
use tg_shared::exit;
use tg_shared::intents::{self, IntentStore, Lookup};
use tg_shared::ndjson::Item;
use tg_shared::patch::Opened;
use tg_shared::record::{Candidate, NodeKind, Record, Role, Status};
use tg_shared::stage::{self, Failure, Input, Output, Owned, Progress, StreamCheck};
use tg_shared::store::{self, Store, STORE_DIR};

/// Batch size when neither the flag nor the approval gives one.
pub use tg_shared::contract::DEFAULT_BATCH;
/// Callers and callees listed per batch entry, at most.
const NEIGHBOURS: usize = 10;
/// A batch's JSON stays under this many bytes (about 500 per symbol in a full batch of 200),
/// so that it fits an agent's context: neighbour lists are shortened to fit (their totals still
/// say how many there are), never the number of symbols.
pub const MAX_BATCH_BYTES: usize = 100_000;
/// Signatures and doc lines are cut at this many characters in a batch.
const TEXT_CHARS: usize = 240;
/// How a batch shrinks to fit [`MAX_BATCH_BYTES`], step by step: neighbours listed, characters
/// of signatures and doc lines, whether doc lines are kept (the agent reads the code anyway).
const SHRINK_STEPS: [(usize, usize, bool); 5] = [
    (NEIGHBOURS, TEXT_CHARS, true),
    (5, TEXT_CHARS, true),
    (2, 160, true),
    (0, 120, true),
    (0, 80, false),
];

/// What a batch entry, a prompt or a doc intent needs of a node.
#[derive(Debug, Clone)]
pub struct SymbolInfo {
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub layer: Option<String>,
    pub hash: String,
    pub role: Role,
}

/// Everything the pass learned.
#[derive(Default)]
pub struct Seen {
    pub symbols: Vec<SymbolInfo>,
    index: FxHashMap<String, usize>,
    /// Call edges as (caller, callee) ids; not gathered under `--enrich off`.
    calls: Vec<(String, String)>,
    candidates: Vec<Candidate>,
    layers_missing: bool,
    pub counts: Counts,
    /// Files of the stream, and the ones whose symbols it may not hold whole (skipped, or
    /// parsed with an error): intents there are never pruned.
    pub files: BTreeSet<String>,
    pub incomplete: BTreeSet<String>,
    /// Line number (1-based, in stream order) of each node line, to its symbol (kept only when
    /// the stream is spooled, for its replay).
    node_lines: FxHashMap<u64, usize>,
    /// The stream's fingerprint (its header's), and whether it is irregular (a node id
    /// repeats, or a node is not in its file's records): what the state kept for patches needs.
    pub stream: Option<String>,
    pub irregular: bool,
}

/// Whether a diagnostic's code says the stream may lack some of its file's symbols: the file
/// was skipped, or parsed with an error.
pub fn incomplete(code: &str) -> bool {
    tg_shared::record::SKIPPED_FILE_CODES.contains(&code)
        || matches!(code, "parse_failed" | "syntax_error")
}

#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    current: u64,
    stale: u64,
    moved: u64,
    doc: u64,
}

impl Counts {
    /// Adds (or, for a patch's removed node, takes out) one node's count.
    pub fn count(&mut self, one: &Counts, add: bool) {
        for (total, n) in [
            (&mut self.current, one.current),
            (&mut self.stale, one.stale),
            (&mut self.moved, one.moved),
            (&mut self.doc, one.doc),
        ] {
            *total = if add {
                *total + n
            } else {
                total.saturating_sub(n)
            };
        }
    }
}

/// A node line as this stage writes it, and what it counts: its stored intent (current, stale
/// or moved), or in zero-token mode the first sentence of its doc comment.
pub fn enrich_node(
    node: &tg_shared::record::Node,
    raw: &str,
    store: &IntentStore,
    enrich: Enrich,
) -> Result<(Option<String>, Counts), Failure> {
    let mut counts = Counts::default();
    let lookup = store.lookup(&node.id, &node.hash);
    match lookup {
        Lookup::Current(_) => counts.current += 1,
        Lookup::Stale(_) => counts.stale += 1,
        Lookup::Moved(_) => counts.moved += 1,
        Lookup::None => {}
    }
    let mut fields = fields_for(lookup, &node.hash);
    if fields.is_none() && enrich == Enrich::Off && documents_behaviour(node.kind) {
        fields = node
            .doc
            .as_deref()
            .and_then(intents::first_sentence)
            .map(|text| (text, None, intents::SOURCE_DOC));
        counts.doc += u64::from(fields.is_some());
    }
    let had = node.intent.is_some() || node.intent_source.is_some();
    let line = match fields.is_some() || had {
        true => Some(patch_node(raw, fields.as_ref())?),
        false => None,
    };
    Ok((line, counts))
}

/// Where the first pass writes: straight out, or a spool to replay.
enum Sink<'a> {
    Out(&'a mut Output),
    Spool(BufWriter<File>),
}

impl Sink<'_> {
    fn line(&mut self, text: &str) -> Result<(), Failure> {
        match self {
            Sink::Out(out) => out.line(text),
            Sink::Spool(spool) => spool
                .write_all(text.as_bytes())
                .and_then(|()| spool.write_all(b"\n"))
                .map_err(|e| Failure::new(exit::IO, format!("cannot spool the stream: {e}"))),
        }
    }

    fn closed(&self) -> bool {
        matches!(self, Sink::Out(out) if out.is_closed())
    }
}

/// The intent fields a node line gets: (intent, intent_hash, intent_source).
type IntentFields = (String, Option<String>, &'static str);

fn fields_for(lookup: Lookup<'_>, node_hash: &str) -> Option<IntentFields> {
    let source = |stored: &intents::StoredIntent| {
        if stored.source == intents::SOURCE_LLM {
            intents::SOURCE_LLM
        } else {
            intents::SOURCE_AGENT
        }
    };
    match lookup {
        Lookup::Current(stored) | Lookup::Moved(stored) => Some((
            stored.intent.clone(),
            Some(node_hash.to_string()),
            source(stored),
        )),
        // The hash it was written for: a reader sees the mismatch and knows it is stale.
        Lookup::Stale(stored) => Some((
            stored.intent.clone(),
            Some(stored.hash.clone()),
            source(stored),
        )),
        Lookup::None => None,
    }
}

/// `raw` with the intent fields set (or removed), other fields kept in their order.
fn patch_node(raw: &str, fields: Option<&IntentFields>) -> Result<String, Failure> {
    let mut map: Map<String, Value> = serde_json::from_str(raw)
        .map_err(|e| Failure::new(exit::DATA, format!("a node line is not an object: {e}")))?;
    for key in ["intent", "intent_hash", "intent_source"] {
        map.remove(key);
    }
    if let Some((intent, hash, source)) = fields {
        map.insert("intent".into(), Value::String(intent.clone()));
        if let Some(hash) = hash {
            map.insert("intent_hash".into(), Value::String(hash.clone()));
        }
        map.insert("intent_source".into(), Value::String((*source).to_string()));
    }
    serde_json::to_string(&map)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise a node: {e}")))
}

/// Kinds whose doc comment says what they do (zero-token mode fills these).
fn documents_behaviour(kind: NodeKind) -> bool {
    !matches!(kind, NodeKind::Module | NodeKind::Impl | NodeKind::Mod)
}

/// Whether `record` is one an earlier tg-enrich in the same pipeline wrote (replaced by ours).
/// What this stage appends: an earlier tg-enrich's are replaced.
pub const OWNED: Owned = Owned {
    stage: STAGE,
    status: contract::NEEDS_ENRICHMENT,
    types: &[],
    diagnostics: &[],
};

fn first_pass(
    (input, header, mut check): (&mut Input, Item, StreamCheck),
    sink: &mut Sink<'_>,
    store: &IntentStore,
    enrich: Enrich,
) -> Result<Option<Seen>, Failure> {
    let mut seen = Seen::default();
    let mut written = 0u64;
    // Calls name a batch's or a prompt's neighbours, which `--enrich off` never writes; node
    // lines lead the replay of a spool. Held for every symbol otherwise (on the kernel, 1.9
    // million call pairs), they are not gathered when nothing will read them.
    let keep_calls = enrich != Enrich::Off;
    let keep_lines = matches!(sink, Sink::Spool(_));
    // The stream this stage writes depends on the intents and the mode as well as its input.
    let key = crate::patched::settings_key(store.digest(), enrich);
    let mut file: Option<String> = None;
    let mut next = Some(Ok(header));
    while let Some(item) = next.take().or_else(|| input.next_item(&mut check)) {
        let item = item?;
        if OWNED.owns(item.record.as_ref()) {
            continue;
        }
        written += 1;
        match &item.record {
            Some(Record::Node(node)) => {
                let (line, counts) = enrich_node(node, &item.raw, store, enrich)?;
                seen.counts.count(&counts, true);
                sink.line(line.as_deref().unwrap_or(&item.raw))?;
                let at = match seen.index.get(&node.id) {
                    Some(&at) => at,
                    None => seen.symbols.len(),
                };
                if keep_lines {
                    seen.node_lines.insert(written, at);
                }
                seen.irregular |=
                    at != seen.symbols.len() || file.as_deref() != Some(node.file.as_str());
                if at == seen.symbols.len() {
                    seen.index.insert(node.id.clone(), at);
                    seen.symbols.push(SymbolInfo {
                        id: node.id.clone(),
                        kind: node.kind,
                        name: node.name.clone(),
                        file: node.file.clone(),
                        line_start: node.line_start,
                        line_end: node.line_end,
                        signature: node.signature.clone(),
                        doc: node.doc.clone(),
                        layer: node.layer.clone(),
                        hash: node.hash.clone(),
                        role: node.role,
                    });
                }
            }
            other => {
                match other {
                    Some(Record::Edge(edge))
                        if keep_calls && edge.kind == tg_shared::record::EdgeKind::Calls =>
                    {
                        seen.calls.push((edge.src.clone(), edge.dst.clone()));
                    }
                    Some(Record::Candidate(candidate)) => seen.candidates.push(candidate.clone()),
                    Some(Record::File(record)) => {
                        seen.files.insert(record.path.clone());
                        file = Some(record.path.clone());
                    }
                    Some(Record::Header(_)) => {
                        sink.line(&tg_shared::patch::folded_header(&item.raw, &key))?;
                        continue;
                    }
                    Some(Record::Diagnostic(diagnostic)) if incomplete(&diagnostic.code) => {
                        if let Some(file) = &diagnostic.file {
                            seen.incomplete.insert(file.clone());
                        }
                    }
                    Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                        seen.layers_missing = true;
                    }
                    _ => {}
                }
                sink.line(&item.raw)?;
            }
        }
        if sink.closed() {
            return Ok(None);
        }
    }
    check.finish(&input.name)?;
    seen.candidates.sort_by_key(|c| c.rank);
    Ok(Some(seen))
}

/// The batch entries of `shown`, at the first of [`SHRINK_STEPS`] that keeps the batch under
/// [`MAX_BATCH_BYTES`] (or the last).
fn fit_batch(
    shown: &[&(&SymbolInfo, Option<String>)],
    callers: &BTreeMap<&str, Vec<&str>>,
    callees: &BTreeMap<&str, Vec<&str>>,
) -> Vec<EnrichmentItem> {
    let mut batch = Vec::new();
    for (limit, chars, doc) in SHRINK_STEPS {
        batch = shown
            .iter()
            .map(|(symbol, old)| {
                let mut item = batch_item(symbol, old.clone(), callers, callees, limit);
                item.signature = item.signature.as_deref().map(|s| cut(s, chars));
                item.doc = if doc {
                    item.doc.as_deref().map(|d| cut(d, chars))
                } else {
                    None
                };
                item
            })
            .collect();
        let bytes = serde_json::to_string(&batch).map_or(0, |text| text.len());
        if bytes <= MAX_BATCH_BYTES {
            break;
        }
    }
    batch
}

/// `text` cut to `chars` characters, marked with `…` when cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The batch entry of `symbol`, with up to `limit` of its neighbours in the call graph.
fn batch_item(
    symbol: &SymbolInfo,
    current_intent: Option<String>,
    callers: &BTreeMap<&str, Vec<&str>>,
    callees: &BTreeMap<&str, Vec<&str>>,
    limit: usize,
) -> EnrichmentItem {
    let first = |map: &BTreeMap<&str, Vec<&str>>| -> Vec<String> {
        map.get(symbol.id.as_str())
            .map(|set| set.iter().take(limit).map(|s| s.to_string()).collect())
            .unwrap_or_default()
    };
    let total_if_cut =
        |set: Option<&Vec<&str>>| set.map(Vec::len).filter(|&n| n > limit).map(|n| n as u64);
    EnrichmentItem {
        id: symbol.id.clone(),
        kind: symbol.kind.as_str().to_string(),
        file: symbol.file.clone(),
        line_start: symbol.line_start,
        line_end: symbol.line_end,
        current_intent,
        name: symbol.name.clone(),
        layer: symbol.layer.clone(),
        signature: symbol.signature.clone(),
        doc: symbol.doc.clone(),
        callers: first(callers),
        callees: first(callees),
        callers_total: total_if_cut(callers.get(symbol.id.as_str())),
        callees_total: total_if_cut(callees.get(symbol.id.as_str())),
    }
}

/// Callers and callees of the symbols in `wanted`.
type Neighbours<'a> = (
    BTreeMap<&'a str, Vec<&'a str>>,
    BTreeMap<&'a str, Vec<&'a str>>,
);

/// Callers and callees of the symbols in `wanted`, sorted. The neighbours an agent reads to say
/// what a symbol is for are the product's: product code first, then examples and tooling; never
/// a module (top-level code) nor a test.
fn neighbours<'a>(seen: &'a Seen, wanted: &BTreeSet<&str>) -> Neighbours<'a> {
    let mut callers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut callees: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (src, dst) in &seen.calls {
        if src == dst {
            continue;
        }
        if wanted.contains(dst.as_str()) && neighbour_rank(seen, src).is_some() {
            callers
                .entry(dst.as_str())
                .or_default()
                .insert(src.as_str());
        }
        if wanted.contains(src.as_str()) && neighbour_rank(seen, dst).is_some() {
            callees
                .entry(src.as_str())
                .or_default()
                .insert(dst.as_str());
        }
    }
    let product_first = |map: BTreeMap<&'a str, BTreeSet<&'a str>>| {
        map.into_iter()
            .map(|(id, set)| {
                let mut list: Vec<&str> = set.into_iter().collect();
                list.sort_by_key(|neighbour| (neighbour_rank(seen, neighbour), *neighbour));
                (id, list)
            })
            .collect()
    };
    (product_first(callers), product_first(callees))
}

/// Where a neighbour is listed: product code 0, other code 1; `None` for a module or a test.
fn neighbour_rank(seen: &Seen, id: &str) -> Option<u8> {
    let Some(&at) = seen.index.get(id) else {
        return Some(1);
    };
    let symbol = &seen.symbols[at];
    match (symbol.kind, symbol.role) {
        (NodeKind::Module, _) | (_, Role::Test) => None,
        (_, Role::Product) => Some(0),
        _ => Some(1),
    }
}

/// The approved candidates lacking a current intent, by rank, with their previous intent.
fn pending<'a>(
    seen: &'a Seen,
    store: &IntentStore,
    approved: &BTreeSet<String>,
) -> Vec<(&'a SymbolInfo, Option<String>)> {
    seen.candidates
        .iter()
        .filter(|c| approved.contains(&c.id))
        .filter_map(|c| seen.index.get(&c.id).map(|&i| &seen.symbols[i]))
        .filter_map(|symbol| match store.lookup(&symbol.id, &symbol.hash) {
            Lookup::Current(_) | Lookup::Moved(_) => None,
            Lookup::Stale(old) => Some((symbol, Some(old.intent.clone()))),
            Lookup::None => Some((symbol, None)),
        })
        .collect()
}

/// The first pass over the stream: straight to the output, or (when an LLM provider will
/// answer, so its intents can go on the nodes) into a spool file replayed afterwards.
/// `None` when the reader went away.
fn read_stream(
    cli: &Cli,
    read: (&mut Input, Item, StreamCheck),
    store: &IntentStore,
    spooling: bool,
    output: &mut Output,
) -> Result<Option<(Seen, Option<std::fs::File>)>, Failure> {
    if !spooling {
        let seen = first_pass(read, &mut Sink::Out(output), store, cli.enrichment.mode())?;
        return Ok(seen.map(|seen| (seen, None)));
    }
    let file = tempfile::tempfile()
        .map_err(|e| Failure::new(exit::IO, format!("cannot create a spool file: {e}")))?;
    let mut sink = Sink::Spool(BufWriter::new(file));
    let seen = first_pass(read, &mut sink, store, cli.enrichment.mode())?;
    let mut spool = None;
    if let Sink::Spool(writer) = sink {
        spool = Some(
            writer
                .into_inner()
                .map_err(|e| Failure::new(exit::IO, format!("cannot spool: {e}")))?,
        );
    }
    Ok(seen.map(|seen| (seen, spool)))
}

/// Prunes the intents of symbols that are gone and re-keys those that moved (only from a
/// whole stream); `(pruned, moved)`.
fn reconcile(seen: &Seen, store: &mut IntentStore, root: &std::path::Path) -> (u64, u64) {
    let live = || (seen.symbols.iter()).map(|s| (s.id.clone(), s.hash.clone()));
    reconcile_with(store, live, (&seen.files, &seen.incomplete), root)
}

/// [`reconcile`] with the stream's symbols as (id, hash) pairs, its files and its incomplete
/// files. An empty store has nothing to prune or move: the symbols are not gathered then.
pub fn reconcile_with<I: Iterator<Item = (String, String)>>(
    store: &mut IntentStore,
    live: impl FnOnce() -> I,
    (files, incomplete): (&BTreeSet<String>, &BTreeSet<String>),
    root: &std::path::Path,
) -> (u64, u64) {
    if store.entries().next().is_none() {
        return (0, 0);
    }
    let live: HashMap<String, String> = live().collect();
    let keep = |entry: &intents::StoredIntent| {
        let file = entry.id.split("::").next().unwrap_or(&entry.id);
        incomplete.contains(file) || (!files.contains(file) && root.join(file).exists())
    };
    store.reconcile(&live, keep)
}

/// Removes the request file: nothing waits for an intent.
pub fn no_request(store_dir: &Store) -> Result<(), Failure> {
    let request_path = store_dir.path(artifacts::ENRICHMENT_REQUEST);
    match std::fs::remove_file(&request_path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Failure::cant_write(&request_path, &e)),
    }
}

/// The `needs_enrichment` status for the symbols `still` waiting (its next batch also written
/// to the request file), or `None` (and the request file removed) when nothing waits.
fn request_next_batch(
    cli: &Cli,
    store_dir: &Store,
    seen: &Seen,
    still: &[&(&SymbolInfo, Option<String>)],
    (batch_size, failed): (u64, &[String]),
) -> Result<Option<Status>, Failure> {
    let request_path = store_dir.path(artifacts::ENRICHMENT_REQUEST);
    if still.is_empty() || cli.enrichment.mode() == Enrich::Off {
        return no_request(store_dir).map(|()| None);
    }
    let shown: Vec<&(&SymbolInfo, Option<String>)> = still
        .iter()
        .take(usize::try_from(batch_size).unwrap_or(usize::MAX))
        .copied()
        .collect();
    let wanted: BTreeSet<&str> = shown.iter().map(|(s, _)| s.id.as_str()).collect();
    let (callers, callees) = neighbours(seen, &wanted);
    let batch = fit_batch(&shown, &callers, &callees);
    let payload = NeedsEnrichment {
        batch_size,
        pending: still.len() as u64,
        remaining_after_batch: (still.len() - batch.len()) as u64,
        request_file: format!("{STORE_DIR}/{}", artifacts::ENRICHMENT_REQUEST),
        apply_command: format!(
            "tldrgraph enrich --apply {STORE_DIR}/{}.json",
            artifacts::ENRICHMENT_RESPONSE_STEM
        ),
        next_action: contract::enrichment_action(batch.len()),
        failed: failed.to_vec(),
        batch,
    };
    let status = contract::status(contract::NEEDS_ENRICHMENT, &payload);
    let text = serde_json::to_string_pretty(&contract::payload(&status))
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise: {e}")))?
        + "\n";
    store::write_if_changed(&request_path, text.as_bytes())
        .map_err(|e| Failure::cant_write(&request_path, &e))?;
    Ok(Some(status))
}

pub fn run(cli: &Cli, store_dir: &Store) -> Result<(), Failure> {
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let intents_path = store_dir.path(artifacts::INTENTS);
    let store =
        IntentStore::load(&intents_path).map_err(|message| Failure::new(exit::DATA, message))?;
    let provider = match cli.enrichment.mode() {
        Enrich::Off => None,
        Enrich::Auto => ProviderConfig::resolve(cli)?,
    };
    let mut output = Output::new(cli.stream.output.as_deref());
    let mut input = Input::open(cli.stream.input.as_deref())?.metered(&progress);
    let (header, check, stream) = match tg_shared::patch::open(&mut input)? {
        Opened::Patch(patch) => {
            let pass = (&store, provider.is_some());
            return crate::patched::run(cli, store_dir, pass, patch, output);
        }
        Opened::Whole {
            header,
            check,
            stream,
        } => (*header, check, stream),
    };
    let read = (&mut input, header, check);
    let Some((mut seen, spool_file)) =
        read_stream(cli, read, &store, provider.is_some(), &mut output)?
    else {
        // The reader went away: nothing more to say, nothing committed.
        return Ok(());
    };
    seen.stream = stream;
    let pass_digest = store.digest().to_string();

    let approval = approval::read(&store_dir.path(artifacts::APPROVAL)).unwrap_or(None);
    let batch_size = cli
        .enrichment
        .batch
        .or(approval.as_ref().map(|a| a.batch))
        .unwrap_or(DEFAULT_BATCH)
        .max(1);
    let approved: BTreeSet<String> = match (&approval, cli.enrichment.mode(), seen.layers_missing) {
        (Some(approval), Enrich::Auto, false) => approval.ids.iter().cloned().collect(),
        _ => BTreeSet::new(),
    };
    let mut waiting = pending(&seen, &store, &approved);
    if let Some(limit) = cli.enrichment.limit {
        waiting.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }

    let _lock = store_dir
        .lock()
        .map_err(|e| Failure::cant_write(&store_dir.lock_path(), &e))?;
    // Read again under the lock: an `enrich --apply` may have landed during the pass.
    let mut store =
        IntentStore::load(&intents_path).map_err(|message| Failure::new(exit::DATA, message))?;
    let mut counts: BTreeMap<String, Value> = BTreeMap::new();
    let mut failed: Vec<String> = Vec::new();
    let mut answered: HashMap<String, String> = HashMap::new();
    if let Some(config) = &provider {
        let around = seen_names(&seen);
        let jobs: Vec<provider::Job> = waiting
            .iter()
            .map(|(symbol, _)| provider::Job::new(symbol, store_dir.root(), &around))
            .collect();
        let report = provider::enrich(config, jobs, &mut store, &intents_path, cli.stage.quiet)?;
        for (id, intent) in report.stored {
            answered.insert(id, intent);
        }
        failed = report.failed;
        counts.insert("requests".into(), report.requests.into());
        counts.insert("llm_intents".into(), (answered.len() as u64).into());
    }
    let still: Vec<&(&SymbolInfo, Option<String>)> = waiting
        .iter()
        .filter(|(symbol, _)| !answered.contains_key(&symbol.id))
        .collect();
    if !cli.no_prune && !seen.layers_missing {
        let (pruned, moved) = reconcile(&seen, &mut store, store_dir.root());
        counts.insert("pruned".into(), pruned.into());
        counts.insert("moved".into(), moved.into());
    }
    store
        .save(&intents_path)
        .map_err(|e| Failure::cant_write(&intents_path, &e))?;
    let status = request_next_batch(cli, store_dir, &seen, &still, (batch_size, &failed))?;
    drop(_lock);

    if let Some(file) = spool_file {
        replay(file, &mut output, &answered, &seen)?;
    }
    let needs = status.is_some();
    if let Some(status) = status {
        output.record(&Record::Status(status))?;
    }
    let pending = (still.len() as u64, failed.len() as u64);
    finish(output, &progress, counts, &seen.counts, pending, needs)?;
    let settings = crate::patched::settings_key(&pass_digest, cli.enrichment.mode());
    crate::patched::save(store_dir, &seen.stream, &settings, &seen);
    Ok(())
}

/// Writes the summary (`counts` with the intents' counts and the pending ones) and ends the
/// stream.
pub fn finish(
    mut output: Output,
    progress: &Progress,
    mut counts: BTreeMap<String, Value>,
    intents: &Counts,
    (pending, failed): (u64, u64),
    needs: bool,
) -> Result<(), Failure> {
    counts.insert("intents_current".into(), intents.current.into());
    counts.insert("intents_stale".into(), intents.stale.into());
    counts.insert("intents_moved".into(), intents.moved.into());
    counts.insert("doc_intents".into(), intents.doc.into());
    counts.insert("pending".into(), pending.into());
    counts.insert("failed".into(), failed.into());
    output.record(&stage::summary(STAGE, counts))?;
    output.finish()?;
    progress.say(format_args!(
        "{} current, {} stale intents; {} approved symbols pending{}",
        intents.current + intents.moved,
        intents.stale,
        pending,
        if needs { " (needs_enrichment)" } else { "" }
    ));
    Ok(())
}

/// Names of the symbols, by id (for prompts).
fn seen_names(seen: &Seen) -> provider::Neighbourhood {
    let wanted: BTreeSet<&str> = seen.candidates.iter().map(|c| c.id.as_str()).collect();
    let (callers, callees) = neighbours(seen, &wanted);
    let name = |id: &str| {
        seen.index
            .get(id)
            .map_or_else(|| id.to_string(), |&i| seen.symbols[i].name.clone())
    };
    let mut out = provider::Neighbourhood::default();
    for (id, set) in callers {
        out.callers.insert(
            id.to_string(),
            set.iter().take(NEIGHBOURS).map(|s| name(s)).collect(),
        );
    }
    for (id, set) in callees {
        out.callees.insert(
            id.to_string(),
            set.iter().take(NEIGHBOURS).map(|s| name(s)).collect(),
        );
    }
    out
}

/// Writes the spooled stream out, with the intents that arrived during the run on their nodes.
fn replay(
    mut file: File,
    output: &mut Output,
    answered: &HashMap<String, String>,
    seen: &Seen,
) -> Result<(), Failure> {
    file.rewind()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the spool: {e}")))?;
    let reader = BufReader::new(file);
    for (index, line) in reader.lines().enumerate() {
        let line =
            line.map_err(|e| Failure::new(exit::IO, format!("cannot read the spool: {e}")))?;
        let symbol = seen
            .node_lines
            .get(&(index as u64 + 1))
            .map(|&i| &seen.symbols[i]);
        let patched = match symbol.and_then(|s| answered.get(&s.id).map(|a| (s, a))) {
            Some((symbol, intent)) => Some(patch_node(
                &line,
                Some(&(
                    intent.clone(),
                    Some(symbol.hash.clone()),
                    intents::SOURCE_LLM,
                )),
            )?),
            None => None,
        };
        output.line(patched.as_deref().unwrap_or(&line))?;
        if output.is_closed() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(id: &str, kind: NodeKind, role: Role) -> SymbolInfo {
        SymbolInfo {
            id: id.into(),
            kind,
            name: id.rsplit("::").next().unwrap_or(id).into(),
            file: id.split("::").next().unwrap_or(id).into(),
            line_start: 1,
            line_end: 2,
            signature: None,
            doc: None,
            layer: None,
            hash: "h".into(),
            role,
        }
    }

    #[test]
    fn a_cut_neighbour_list_says_how_many_there_are() {
        let symbol = symbol("a.py::hub", NodeKind::Function, Role::Product);
        let names: Vec<String> = (0..12).map(|i| format!("a.py::caller{i:02}")).collect();
        let mut callers = BTreeMap::new();
        callers.insert("a.py::hub", names.iter().map(String::as_str).collect());
        let mut callees = BTreeMap::new();
        callees.insert("a.py::hub", ["a.py::leaf"].into_iter().collect());
        let item = batch_item(&symbol, None, &callers, &callees, NEIGHBOURS);
        assert_eq!(item.callers.len(), NEIGHBOURS);
        assert_eq!(item.callers[0], "a.py::caller00");
        assert_eq!(item.callers_total, Some(12));
        assert_eq!((item.callees.len(), item.callees_total), (1, None));
    }

    #[test]
    fn callers_are_the_products_first_and_never_a_module_or_a_test() {
        let mut seen = Seen::default();
        for (id, kind, role) in [
            ("pkg/a.py::hub", NodeKind::Function, Role::Product),
            ("pkg/z.py::user", NodeKind::Function, Role::Product),
            ("docs_src/e.py::example", NodeKind::Function, Role::Example),
            ("tests/test_a.py::test_hub", NodeKind::Function, Role::Test),
            ("pkg/b.py", NodeKind::Module, Role::Product),
        ] {
            seen.index.insert(id.to_string(), seen.symbols.len());
            seen.symbols.push(symbol(id, kind, role));
        }
        for caller in [
            "docs_src/e.py::example",
            "pkg/b.py",
            "pkg/z.py::user",
            "tests/test_a.py::test_hub",
        ] {
            seen.calls
                .push((caller.to_string(), "pkg/a.py::hub".to_string()));
        }
        let wanted: BTreeSet<&str> = ["pkg/a.py::hub"].into_iter().collect();
        let (callers, _) = neighbours(&seen, &wanted);
        assert_eq!(
            callers["pkg/a.py::hub"],
            vec!["pkg/z.py::user", "docs_src/e.py::example"]
        );
    }

    #[test]
    fn a_full_batch_fits_its_byte_cap_by_shortening_neighbour_lists() {
        let symbols: Vec<SymbolInfo> = (0..200)
            .map(|i| SymbolInfo {
                id: format!("src/some/deep/package/module_{i:03}.py::SomeClass.some_method"),
                kind: NodeKind::Method,
                name: "some_method".into(),
                file: format!("src/some/deep/package/module_{i:03}.py"),
                line_start: 1,
                line_end: 40,
                signature: Some(format!(
                    "def some_method(self, {})",
                    "argument, ".repeat(40)
                )),
                doc: Some("Does a thing. ".repeat(30)),
                layer: Some("core".into()),
                hash: "h".into(),
                role: Role::Product,
            })
            .collect();
        let neighbours: Vec<String> = (0..12)
            .map(|i| format!("src/some/deep/package/caller_{i:02}.py::Caller.calls_it"))
            .collect();
        let mut callers = BTreeMap::new();
        for symbol in &symbols {
            callers.insert(
                symbol.id.as_str(),
                neighbours.iter().map(String::as_str).collect::<Vec<_>>(),
            );
        }
        let pairs: Vec<(&SymbolInfo, Option<String>)> = symbols.iter().map(|s| (s, None)).collect();
        let shown: Vec<&(&SymbolInfo, Option<String>)> = pairs.iter().collect();
        let batch = fit_batch(&shown, &callers, &BTreeMap::new());
        assert_eq!(batch.len(), 200, "every symbol stays in the batch");
        let bytes = serde_json::to_string(&batch).expect("json").len();
        assert!(bytes <= MAX_BATCH_BYTES, "{bytes} bytes");
        assert!(batch[0].callers.len() < NEIGHBOURS);
        assert_eq!(batch[0].callers_total, Some(12));
        let signature = batch[0].signature.as_deref().unwrap_or("");
        assert!(
            signature.ends_with('…') && signature.chars().count() < TEXT_CHARS,
            "{signature}"
        );
        // A small batch keeps everything.
        let few = fit_batch(&shown[..3], &callers, &BTreeMap::new());
        assert_eq!(
            (few[0].callers.len(), few[0].callers_total),
            (NEIGHBOURS, Some(12))
        );
        assert_eq!(
            few[0].signature.as_deref().map(|s| s.chars().count()),
            Some(TEXT_CHARS + 1)
        );
        assert!(few[0].doc.is_some());
    }
}
