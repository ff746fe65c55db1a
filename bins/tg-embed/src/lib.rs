//! tg-embed: embeddings for every symbol and the search index, so the graph
//! can be asked questions in every state once layers exist.

pub mod cli;
pub mod text;

use cli::{Cli, Embeddings};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::collections::HashMap;
use tg_shared::artifacts;
use tg_shared::contract::{self, NeedsEmbeddings};
use tg_shared::embed;
use tg_shared::embed::service::{self as embedder, Embedder, HttpEmbedder, Service};
use tg_shared::exit;
use tg_shared::hash::{content_hash, Hasher};
use tg_shared::lexical;
use tg_shared::record::{EdgeKind, NodeKind, Record};
use tg_shared::search::{
    self, Embedder as EmbedderInfo, IndexEdge, IndexHead, IndexLayer, IndexSymbol, Postings,
    SearchIndex, INDEX_VERSION, NO_VECTOR,
};
use tg_shared::stage::{self, Failure, Input, Output, Owned, Progress, StreamCheck};
use tg_shared::store::{self, Store};

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-embed";

/// A node as the index needs it, and the raw edges, from the stream.
#[derive(Default)]
struct Collected {
    symbols: Vec<IndexSymbol>,
    index: FxHashMap<String, u32>,
    parents: Vec<Option<String>>,
    layer_ids: Vec<Option<String>>,
    edges: Vec<(String, String, EdgeKind, f32, u32)>,
    layers: Vec<IndexLayer>,
    /// A `needs_layers` upstream: the agent is designing layers; nothing is indexed yet.
    layers_missing: bool,
}

/// What this stage appends: an earlier tg-embed's are replaced.
const OWNED: Owned = Owned {
    stage: STAGE,
    status: contract::NEEDS_EMBEDDINGS,
    types: &[],
    diagnostics: &[],
};

fn collect(input: &mut Input, output: &mut Output) -> Result<Option<Collected>, Failure> {
    let mut check = StreamCheck::default();
    let mut seen = Collected::default();
    while let Some(item) = input.next_item(&mut check) {
        let item = item?;
        if OWNED.owns(item.record.as_ref()) {
            continue;
        }
        output.line(&item.raw)?;
        if output.is_closed() {
            return Ok(None);
        }
        match item.record {
            Some(Record::Node(node)) => {
                if seen.index.contains_key(&node.id) {
                    continue;
                }
                let current = node.intent_is_current();
                seen.index
                    .insert(node.id.clone(), seen.symbols.len() as u32);
                seen.parents.push(node.parent.clone());
                seen.layer_ids.push(node.layer.clone());
                seen.symbols.push(IndexSymbol {
                    id: node.id,
                    kind: node.kind,
                    name: node.name,
                    file: node.file,
                    line_start: node.line_start,
                    line_end: node.line_end,
                    // Resolved to an index once the layer records are in.
                    layer: None,
                    role: node.role,
                    implements: node.implements,
                    signature: node.signature,
                    intent: node.intent,
                    intent_source: node.intent_source,
                    intent_current: current,
                    doc: node.doc.clone(),
                    parent: None,
                    text_hash: String::new(),
                    vector: NO_VECTOR,
                });
            }
            Some(Record::Edge(edge)) if edge.kind != EdgeKind::Contains => {
                seen.edges.push((
                    edge.src,
                    edge.dst,
                    edge.kind,
                    edge.confidence.unwrap_or(1.0) as f32,
                    edge.line,
                ));
            }
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                seen.layers_missing = true;
            }
            Some(Record::Layer(layer)) => seen.layers.push(IndexLayer {
                id: layer.id,
                name: layer.name,
                order: layer.order,
            }),
            _ => {}
        }
    }
    check.finish(&input.name)?;
    Ok(Some(seen))
}

/// Whether search.bin and vectors.f32 are the pair the last run wrote whole (not truncated,
/// edited or left half-written by a killed run).
fn artifacts_intact(store: &Store) -> bool {
    let Ok(sums) = std::fs::read_to_string(store.path(artifacts::SEARCH_SUMS)) else {
        return false;
    };
    let mut parts = sums.split_whitespace();
    let (Some(index), Some(vectors)) = (parts.next(), parts.next()) else {
        return false;
    };
    let hash_of = |name: &str| {
        std::fs::read(store.path(name))
            .ok()
            .map(|b| content_hash(&b))
    };
    hash_of(artifacts::SEARCH_INDEX).as_deref() == Some(index)
        && hash_of(artifacts::SEARCH_VECTORS).as_deref() == Some(vectors)
}

/// This stage's summary: the same bytes whether the index was rebuilt or found current.
fn summary(head: &IndexHead) -> Record {
    stage::summary(
        STAGE,
        [
            ("embeddings_ready", Value::from(head.ready)),
            ("symbols", head.symbols.into()),
            ("vectors", head.vectors.into()),
        ],
    )
}

/// The whole input stream, with the name messages give it.
fn read_input(cli: &Cli) -> Result<(String, Vec<u8>), Failure> {
    match &cli.stream.input {
        Some(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::open(path)
                .map_err(|e| Failure::new(exit::NO_INPUT, format!("cannot open {name}: {e}")))?;
            let bytes = tg_shared::ndjson::read_whole_stream(file)
                .map_err(|e| Failure::new(exit::DATA, format!("{name}: {e}")))?;
            Ok((name, bytes))
        }
        None => {
            let bytes = tg_shared::ndjson::read_whole_stream(std::io::stdin().lock())
                .map_err(|e| Failure::new(exit::DATA, format!("stdin: {e}")))?;
            Ok(("stdin".to_string(), bytes))
        }
    }
}

/// The input unchanged since the index was built: pass it through (without an earlier
/// tg-embed's records) and close with the recorded summary. `false` when the stream does not
/// look whole (then the full pass reports what is wrong).
fn pass_unchanged(bytes: &[u8], head: &IndexHead, output: &mut Output) -> Result<bool, Failure> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(false);
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let whole = lines
        .first()
        .is_some_and(|l| l.starts_with("{\"type\":\"header\""))
        && lines
            .last()
            .is_some_and(|l| l.starts_with("{\"type\":\"summary\""));
    if !whole {
        return Ok(false);
    }
    for line in lines {
        if !OWNED.owns_line(line) {
            output.line(line)?;
        }
        if output.is_closed() {
            return Ok(true);
        }
    }
    output.record(&summary(head))?;
    Ok(true)
}

/// The embedder the flags and environment ask for; `Err(reason)` when it cannot be had here
/// (the stage then reports `needs_embeddings`), a Failure for a bad setting.
fn choose(cli: &Cli) -> Result<Option<Result<Embedder, String>>, Failure> {
    let mode = match cli.embedder.embeddings {
        Some(mode) => mode,
        None => match std::env::var(embedder::ENV_MODE).ok().as_deref() {
            None | Some("") | Some("auto") => Embeddings::Auto,
            Some("off") => Embeddings::Off,
            Some("openai") => Embeddings::Openai,
            Some("ollama") => Embeddings::Ollama,
            Some(other) => {
                return Err(Failure::new(
                    exit::USAGE,
                    format!(
                        "{}={other}: not off, auto, openai or ollama",
                        embedder::ENV_MODE
                    ),
                ))
            }
        },
    };
    let timeout = cli.http.timeout();
    let batch = usize::try_from(cli.http_batch).unwrap_or(64);
    let http = |service| {
        HttpEmbedder::from_env(service, timeout, cli.http.retries, batch)
            .map(Embedder::Http)
            .map_err(|e| Failure::new(exit::USAGE, e))
    };
    Ok(match mode {
        Embeddings::Off => None,
        Embeddings::Auto => {
            let path = embed::model_path();
            Some(
                Embedder::static_at(path)
                    .map_err(|e| format!("the embedding model is not installed ({e})")),
            )
        }
        Embeddings::Openai => Some(Ok(http(Service::Openai)?)),
        Embeddings::Ollama => Some(Ok(http(Service::Ollama)?)),
    })
}

/// Vectors of the previous index, by text hash, if it was made by the same embedder.
fn previous_vectors(store: &Store, embedder_id: &str) -> HashMap<String, Vec<f32>> {
    let path = store.path(artifacts::SEARCH_INDEX);
    let old = match SearchIndex::load(&path) {
        Ok(old) => old,
        Err(_) if !path.exists() => return HashMap::new(),
        Err(err) => {
            eprintln!("tg-embed: warning: {err}; rebuilding the index");
            return HashMap::new();
        }
    };
    let Some(info) = old.embedder.as_ref().filter(|e| e.id == embedder_id) else {
        return HashMap::new();
    };
    let dim = info.dim as usize;
    let vectors = match search::load_vectors(
        &store.path(artifacts::SEARCH_VECTORS),
        old.rows as usize,
        dim,
    ) {
        Ok(vectors) => vectors,
        Err(err) => {
            eprintln!("tg-embed: warning: {err}; embedding again");
            return HashMap::new();
        }
    };
    if content_hash(&search::vectors_to_bytes(&vectors)) != old.vectors_hash {
        // The matrix is not the one this index was written with (a run killed in between).
        eprintln!(
            "tg-embed: warning: {} does not match {}; embedding again",
            artifacts::SEARCH_VECTORS,
            artifacts::SEARCH_INDEX
        );
        return HashMap::new();
    }
    old.symbols
        .iter()
        .filter(|s| s.vector != NO_VECTOR)
        .filter_map(|s| {
            let row = s.vector as usize;
            // A row past the matrix (a damaged file) is simply not reused.
            let vector = vectors.get(row * dim..(row + 1) * dim)?;
            Some((s.text_hash.clone(), vector.to_vec()))
        })
        .collect()
}

fn postings(texts: &[String]) -> Postings {
    // Terms per document in parallel; merged in document order, so the lists come out sorted.
    let per_doc: Vec<(u32, Vec<(String, u16)>)> = texts
        .par_iter()
        .map(|text| {
            let terms = lexical::terms(text);
            let mut counts: FxHashMap<String, u16> = FxHashMap::default();
            for term in &terms {
                let count = counts.entry(term.clone()).or_default();
                *count = count.saturating_add(1);
            }
            (terms.len() as u32, counts.into_iter().collect())
        })
        .collect();
    let mut by_term: FxHashMap<String, Vec<(u32, u16)>> = FxHashMap::default();
    let mut lengths = Vec::with_capacity(texts.len());
    for (doc, (length, counts)) in per_doc.into_iter().enumerate() {
        lengths.push(length);
        for (term, tf) in counts {
            by_term.entry(term).or_default().push((doc as u32, tf));
        }
    }
    let mut sorted: Vec<(String, Vec<(u32, u16)>)> = by_term.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let (terms, lists) = sorted.into_iter().unzip();
    Postings {
        terms,
        lists,
        lengths,
    }
}

/// The fingerprint of a build: the index format, the embedder and the input stream's bytes.
/// The same fingerprint means the same index.
fn fingerprint(chosen: &Option<Result<Embedder, String>>, bytes: &[u8]) -> String {
    let embedder_key = match chosen {
        None => "off".to_string(),
        Some(Ok(embedder)) => embedder.id(),
        Some(Err(reason)) => format!("unavailable: {reason}"),
    };
    let mut hasher = Hasher::new();
    hasher
        .update(&INDEX_VERSION.to_le_bytes())
        .update(embedder_key.as_bytes())
        .update(b"\n")
        .update(bytes);
    hasher.finish()
}

/// Puts the layer and parent indexes on the symbols, and gives the edges between indexed
/// symbols, sorted.
fn link(seen: &mut Collected) -> Vec<IndexEdge> {
    // Layers in their order; symbols point at them by index.
    seen.layers
        .sort_by(|a, b| a.order.cmp(&b.order).then(a.id.cmp(&b.id)));
    let layer_index: HashMap<String, u32> = seen
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| (l.id.clone(), i as u32))
        .collect();
    for ((symbol, parent), layer) in seen
        .symbols
        .iter_mut()
        .zip(&seen.parents)
        .zip(&seen.layer_ids)
    {
        symbol.layer = layer.as_ref().and_then(|l| layer_index.get(l)).copied();
        symbol.parent = parent.as_ref().and_then(|p| seen.index.get(p)).copied();
    }
    let mut edges: Vec<IndexEdge> = seen
        .edges
        .iter()
        .filter_map(|(src, dst, kind, confidence, line)| {
            Some(IndexEdge {
                src: *seen.index.get(src)?,
                dst: *seen.index.get(dst)?,
                kind: *kind,
                confidence: *confidence,
                line: *line,
            })
        })
        .collect();
    edges.sort_by_key(|e| (e.src, e.dst, e.kind));
    edges
}

/// Each symbol's text to embed and its text for the lexical index, with the names it calls
/// and is called by.
fn texts(seen: &Collected, edges: &[IndexEdge]) -> (Vec<String>, Vec<String>) {
    let mut calls: Vec<Vec<&str>> = vec![Vec::new(); seen.symbols.len()];
    let mut called_by: Vec<Vec<&str>> = vec![Vec::new(); seen.symbols.len()];
    for edge in edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls && e.src != e.dst)
    {
        calls[edge.src as usize].push(seen.symbols[edge.dst as usize].name.as_str());
        called_by[edge.dst as usize].push(seen.symbols[edge.src as usize].name.as_str());
    }
    seen.symbols
        .par_iter()
        .enumerate()
        .map(|(i, symbol)| {
            let facts = text::Facts {
                id: &symbol.id,
                kind: symbol.kind,
                name: &symbol.name,
                file: &symbol.file,
                layer: symbol.layer.map(|l| seen.layers[l as usize].name.as_str()),
                signature: symbol.signature.as_deref(),
                about: symbol.intent.as_deref().or(symbol.doc.as_deref()),
                calls: &calls[i],
                called_by: &called_by[i],
            };
            (text::embedding_text(&facts), text::lexical_text(&facts))
        })
        .unzip()
}

/// Texts given to the embedder at a time: large enough for its own batching, small enough that
/// progress moves every second or so on two cores.
const EMBED_CHUNK: usize = 2048;

/// The vectors of a build, and what went wrong making them.
#[derive(Default)]
struct Vectors {
    /// Row-major, `rows` rows of the embedder's dimension.
    matrix: Vec<f32>,
    rows: u32,
    /// Texts embedded this run, and vectors reused from the previous index.
    embedded: u64,
    reused: u64,
    info: Option<EmbedderInfo>,
    /// Why some or all vectors are missing.
    problem: Option<String>,
}

/// Embeds `todo` (with their hashes) into `made`, a chunk at a time, saying how far it is; stops
/// at the first failure, which goes into `out`.
fn embed_in_chunks<'h>(
    embedder: &Embedder,
    (todo, todo_hashes): (&[String], &[&'h String]),
    made: &mut HashMap<&'h String, Vec<f32>>,
    out: &mut Vectors,
    progress: &Progress,
) {
    progress.metered(("embedding", "texts"), todo.len() as u64, |done| {
        for (texts, hashes) in todo
            .chunks(EMBED_CHUNK)
            .zip(todo_hashes.chunks(EMBED_CHUNK))
        {
            match embedder.embed(texts) {
                Ok(fresh) => {
                    out.embedded += fresh.len() as u64;
                    made.extend(hashes.iter().copied().zip(fresh));
                    done.fetch_add(texts.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
                Err(reason) => {
                    out.problem = Some(reason);
                    break;
                }
            }
        }
    });
}

/// Embeds the texts of the `embeddable` symbols, reusing the previous index's vectors whose
/// text is unchanged, and gives each symbol its row and text hash.
fn embed_symbols(
    embedder: Embedder,
    store: &Store,
    symbols: &mut [IndexSymbol],
    (texts, embeddable): (&[String], &[usize]),
    progress: &Progress,
) -> Vectors {
    let mut out = Vectors::default();
    let id = embedder.id();
    let old = previous_vectors(store, &id);
    progress.phase("read previous vectors");
    let hashes: Vec<String> = embeddable
        .iter()
        .map(|&i| {
            let mut h = Hasher::new();
            h.update(id.as_bytes())
                .update(b"\n")
                .update(texts[i].as_bytes());
            h.finish()
        })
        .collect();
    let mut todo: Vec<String> = Vec::new();
    let mut todo_hashes: Vec<&String> = Vec::new();
    let mut queued: std::collections::HashSet<&String> = std::collections::HashSet::new();
    for (k, &i) in embeddable.iter().enumerate() {
        if !old.contains_key(&hashes[k]) && queued.insert(&hashes[k]) {
            todo.push(texts[i].clone());
            todo_hashes.push(&hashes[k]);
        }
    }
    // In chunks, so a long run says how far it is; on failure the vectors already made are
    // kept (and the rest asked for next run).
    let mut made: HashMap<&String, Vec<f32>> = HashMap::new();
    let embedder = if todo.is_empty() {
        Ok(embedder)
    } else {
        embedder.loaded()
    };
    match embedder {
        Ok(embedder) => embed_in_chunks(
            &embedder,
            (&todo, &todo_hashes),
            &mut made,
            &mut out,
            progress,
        ),
        Err(reason) => out.problem = Some(reason),
    }
    // The length every row must have: the first vector in symbol order.
    let dim = (0..embeddable.len())
        .find_map(|k| made.get(&hashes[k]).or_else(|| old.get(&hashes[k])))
        .map_or(0, Vec::len);
    for (k, &i) in embeddable.iter().enumerate() {
        let vector = match (made.get(&hashes[k]), old.get(&hashes[k])) {
            (Some(v), _) => v,
            (None, Some(v)) => {
                out.reused += 1;
                v
            }
            (None, None) => continue,
        };
        if vector.len() != dim {
            out.problem.get_or_insert_with(|| {
                format!(
                    "the embedder returned vectors of {} and {dim} dimensions",
                    vector.len()
                )
            });
            continue;
        }
        let symbol = &mut symbols[i];
        symbol.text_hash = hashes[k].clone();
        symbol.vector = out.rows;
        out.matrix.extend_from_slice(vector);
        out.rows += 1;
    }
    if out.rows > 0 || out.problem.is_none() {
        out.info = Some(EmbedderInfo {
            id,
            dim: dim as u32,
        });
    }
    out
}

/// Writes the index, its vectors and their checksums, under the store's lock.
fn write_index(store: &Store, encoded: &[u8], vector_bytes: &[u8]) -> Result<(), Failure> {
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    // Vectors first: an index never points into a matrix older than itself, and a run killed
    // in between leaves a matrix the old index's hash does not match (so it is not reused).
    let sums = format!("{} {}\n", content_hash(encoded), content_hash(vector_bytes));
    // The checksums last: they vouch for the pair only once both are written.
    for (name, bytes) in [
        (artifacts::SEARCH_VECTORS, vector_bytes),
        (artifacts::SEARCH_INDEX, encoded),
        (artifacts::SEARCH_SUMS, sums.as_bytes()),
    ] {
        let path = store.path(name);
        store::write_if_changed(&path, bytes).map_err(|e| Failure::cant_write(&path, &e))?;
    }
    Ok(())
}

/// The `needs_embeddings` status for a build whose vectors are missing for `reason`.
fn needs_embeddings(reason: &str, model_missing: bool, symbols: u64, rows: u32) -> Record {
    let next_action = if model_missing {
        "Install the embedding model with `make model` (from the tldrgraph checkout), or run `tldrgraph init --json --embeddings off` for lexical search only"
    } else {
        "Check the embeddings endpoint, then run `tldrgraph init --json` again; or `--embeddings off` for lexical search only"
    };
    let payload = NeedsEmbeddings {
        symbols_count: symbols,
        embedded_count: u64::from(rows),
        missing_count: symbols.saturating_sub(u64::from(rows)),
        reason: reason.to_string(),
        next_action: next_action.to_string(),
    };
    Record::Status(contract::status(contract::NEEDS_EMBEDDINGS, &payload))
}

pub fn run(cli: &Cli) -> Result<(), Failure> {
    cli.http.apply();
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let (_, store) = cli.stage.workspace()?;
    let chosen = choose(cli)?;
    // The default model could not be had: installing it is the way on.
    let model_missing = matches!(chosen, Some(Err(_)));
    let (name, bytes) = read_input(cli)?;
    let fingerprint = fingerprint(&chosen, &bytes);
    let mut output = Output::new(cli.stream.output.as_deref());
    // Only a complete build is reused whole: an incomplete one (endpoint down) tries again.
    if !model_missing {
        if let Some(head) = IndexHead::read(&store.path(artifacts::SEARCH_INDEX)) {
            if head.fingerprint == fingerprint
                && (head.ready || chosen.is_none())
                && artifacts_intact(&store)
                && pass_unchanged(&bytes, &head, &mut output)?
            {
                output.finish()?;
                progress.say(format_args!(
                    "{} symbols indexed; nothing changed since the last build",
                    head.symbols
                ));
                return Ok(());
            }
        }
    }
    let mut input = Input {
        name,
        reader: tg_shared::ndjson::RecordReader::new(Box::new(std::io::Cursor::new(bytes))),
    };
    let Some(mut seen) = collect(&mut input, &mut output)? else {
        return Ok(());
    };
    if seen.layers_missing {
        // The first `init` stays an extraction: the index is built once layers exist.
        output.record(&summary(&IndexHead::default()))?;
        output.finish()?;
        progress.say("waiting for layers; nothing indexed yet");
        return Ok(());
    }
    progress.phase("read stream");
    let edges = link(&mut seen);
    let (embed_texts, lexical_texts) = texts(&seen, &edges);
    progress.phase("build texts");
    let postings = postings(&lexical_texts);
    progress.phase("build postings");

    // Embeddings: reuse vectors whose text is unchanged, embed the rest.
    let embeddable: Vec<usize> = (0..seen.symbols.len())
        .filter(|&i| seen.symbols[i].kind != NodeKind::Module)
        .collect();
    let vectors = match chosen {
        None => Vectors::default(),
        Some(Err(reason)) => Vectors {
            problem: Some(reason),
            ..Vectors::default()
        },
        Some(Ok(embedder)) => embed_symbols(
            embedder,
            &store,
            &mut seen.symbols,
            (&embed_texts, &embeddable),
            &progress,
        ),
    };
    progress.phase("embed");
    let vector_bytes = search::vectors_to_bytes(&vectors.matrix);
    let index = SearchIndex {
        head: IndexHead {
            version: INDEX_VERSION,
            fingerprint,
            ready: vectors.info.is_some() && vectors.problem.is_none(),
            symbols: embeddable.len() as u64,
            vectors: u64::from(vectors.rows),
        },
        embedder: vectors.info,
        layers: seen.layers,
        symbols: seen.symbols,
        edges,
        postings,
        rows: vectors.rows,
        vectors_hash: content_hash(&vector_bytes),
    };
    let encoded = index
        .encode()
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot encode the index: {e}")))?;
    write_index(&store, &encoded, &vector_bytes)?;
    progress.phase("write");

    if let Some(reason) = &vectors.problem {
        let symbols = embeddable.len() as u64;
        output.record(&needs_embeddings(
            reason,
            model_missing,
            symbols,
            vectors.rows,
        ))?;
    }
    output.record(&summary(&index.head))?;
    output.finish()?;
    match &vectors.problem {
        Some(reason) => progress.say(format_args!("lexical index only: {reason}")),
        None => progress.say(format_args!(
            "{} symbols indexed; {} texts embedded, {} reused",
            index.head.symbols, vectors.embedded, vectors.reused
        )),
    }
    Ok(())
}
