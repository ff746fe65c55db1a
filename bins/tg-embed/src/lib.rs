//! tg-embed: embeddings for every symbol and the search index, so the graph
//! can be asked questions in every state once layers exist.

pub mod cli;
mod collect;
mod corpus;
pub mod postings;
pub mod text;
mod vectors;

use cli::{Cli, Embeddings};
use corpus::Corpus;
use serde_json::Value;
use tg_shared::artifacts;
use tg_shared::contract::{self, NeedsEmbeddings};
use tg_shared::embed;
use tg_shared::embed::service::{self as embedder, Embedder, HttpEmbedder, Service};
use tg_shared::exit;
use tg_shared::hash::{reader_hash, Hasher, HashingWriter};
use tg_shared::record::{NodeKind, Record};
use tg_shared::search::{IndexHead, SearchIndex, INDEX_VERSION, NO_VECTOR};
use tg_shared::stage::{self, Failure, Input, Output, Owned, Progress};
use tg_shared::store::{self, AtomicFile, Store};
use vectors::Vectors;

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-embed";

/// What this stage appends: an earlier tg-embed's are replaced.
const OWNED: Owned = Owned {
    stage: STAGE,
    status: contract::NEEDS_EMBEDDINGS,
    types: &[],
    diagnostics: &[],
};

/// Whether search.bin and vectors.i8 are the pair the last run wrote whole (not truncated,
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
        std::fs::File::open(store.path(name))
            .and_then(reader_hash)
            .ok()
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

/// The fingerprint of a build begins with the index format and the embedder; the input
/// stream's lines follow as they are read. The same fingerprint means the same index.
fn fingerprint_start(chosen: &Option<Result<Embedder, String>>) -> Hasher {
    let embedder_key = match chosen {
        None => "off".to_string(),
        Some(Ok(embedder)) => embedder.id(),
        Some(Err(reason)) => format!("unavailable: {reason}"),
    };
    let mut hasher = Hasher::new();
    hasher
        .update(&INDEX_VERSION.to_le_bytes())
        .update(embedder_key.as_bytes())
        .update(b"\n");
    hasher
}

/// Moves the matrix into place, then writes the index and the checksums that vouch for the
/// pair, under the store's lock; gives the index's hash. A file whose bytes did not change
/// keeps its mtime.
fn write_index(store: &Store, index: &SearchIndex, matrix: AtomicFile) -> Result<String, Failure> {
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    // Vectors first: an index never points into a matrix older than itself, and a run killed
    // in between leaves a matrix the old index's hash does not match (so it is not reused).
    let vectors_path = store.path(artifacts::SEARCH_VECTORS);
    matrix
        .commit_if_changed()
        .map_err(|e| Failure::cant_write(&vectors_path, &e))?;
    let index_path = store.path(artifacts::SEARCH_INDEX);
    let cant_write = |e: std::io::Error| Failure::cant_write(&index_path, &e);
    let mut encoded = HashingWriter::new(AtomicFile::create(&index_path).map_err(cant_write)?);
    index
        .encode_into(&mut encoded)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot encode the index: {e}")))?;
    let (file, index_hash) = encoded.finish();
    file.commit_if_changed().map_err(cant_write)?;
    // The checksums last: they vouch for the pair only once both are written.
    let sums = format!("{index_hash} {}\n", index.vectors_hash);
    let sums_path = store.path(artifacts::SEARCH_SUMS);
    store::write_if_changed(&sums_path, sums.as_bytes())
        .map_err(|e| Failure::cant_write(&sums_path, &e))?;
    // An older version's f32 matrix is nobody's now.
    let _ = std::fs::remove_file(store.path(artifacts::LEGACY_SEARCH_VECTORS));
    Ok(index_hash)
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
    let mut fingerprint = fingerprint_start(&chosen);
    let mut input = Input::open(cli.stream.input.as_deref())?.metered(&progress);
    let mut output = Output::new(cli.stream.output.as_deref());
    let Some(mut seen) = collect::collect(&mut input, &mut output, &OWNED, &mut fingerprint)?
    else {
        return Ok(());
    };
    let fingerprint = fingerprint.finish();
    if seen.layers_missing {
        // The first `init` stays an extraction: the index is built once layers exist.
        output.record(&summary(&IndexHead::default()))?;
        output.finish()?;
        progress.say("waiting for layers; nothing indexed yet");
        return Ok(());
    }
    // Only a complete build is reused whole: an incomplete one (endpoint down) tries again.
    if let Some(head) = unchanged_build(&store, &fingerprint, &chosen) {
        output.record(&summary(&head))?;
        output.finish()?;
        progress.say(format_args!(
            "{} symbols indexed; nothing changed since the last build",
            head.symbols
        ));
        return Ok(());
    }
    progress.phase("read stream");
    let edges = seen.link();
    let corpus = Corpus::new(&seen.symbols, &seen.layers, &edges);
    let previous = postings::Previous::open(&store);
    let built = postings::build(&corpus, previous.as_ref());
    drop(previous);
    progress.phase("build postings");

    // Embeddings: reuse vectors whose text is unchanged, embed the rest.
    let embeddable: Vec<usize> = (0..seen.symbols.len())
        .filter(|&i| seen.symbols[i].kind != NodeKind::Module)
        .collect();
    let mut matrix = vectors::create_matrix(&store)?;
    let vectors = match chosen {
        None => Vectors::default(),
        Some(Err(reason)) => Vectors {
            problem: Some(reason),
            ..Vectors::default()
        },
        Some(Ok(embedder)) => vectors::embed_symbols(
            embedder,
            &store,
            &corpus,
            &embeddable,
            &mut matrix,
            &progress,
        )?,
    };
    drop(corpus);
    progress.phase("embed");
    for (&i, (hash, row)) in embeddable.iter().zip(&vectors.assigned) {
        if *row != NO_VECTOR {
            seen.symbols[i].text_hash = hash.clone();
            seen.symbols[i].vector = *row;
        }
    }
    let (matrix, vectors_hash) = matrix.finish();
    let index = SearchIndex {
        head: IndexHead {
            version: INDEX_VERSION,
            fingerprint,
            ready: vectors.info.is_some() && vectors.problem.is_none(),
            symbols: embeddable.len() as u64,
            vectors: u64::from(vectors.rows),
        },
        embedder: vectors.info.clone(),
        rows: vectors.rows,
        vectors_hash,
        layers: seen.layers,
        symbols: seen.symbols,
        edges,
        postings: built.postings,
    };
    let index_hash = write_index(&store, &index, matrix)?;
    if let Err(err) = postings::save_keys(&store, &index_hash, &built.keys) {
        progress.say(format_args!(
            "warning: cannot write {}: {err}; the next build tokenises every text",
            store.postings_keys_path().display()
        ));
    }
    progress.phase("write");
    finish(output, &index.head, &vectors, model_missing)?;
    match &vectors.problem {
        Some(reason) => progress.say(format_args!("lexical index only: {reason}")),
        None => progress.say(format_args!(
            "{} symbols indexed; {} texts embedded, {} reused; {} lexical texts tokenised",
            index.head.symbols, vectors.embedded, vectors.reused, built.tokenised
        )),
    }
    Ok(())
}

/// The head of the index on disk when it was built whole from this same input and embedder.
fn unchanged_build(
    store: &Store,
    fingerprint: &str,
    chosen: &Option<Result<Embedder, String>>,
) -> Option<IndexHead> {
    if matches!(chosen, Some(Err(_))) {
        return None;
    }
    let head = IndexHead::read(&store.path(artifacts::SEARCH_INDEX))?;
    (head.fingerprint == fingerprint && (head.ready || chosen.is_none()) && artifacts_intact(store))
        .then_some(head)
}

/// Closes the stream: `needs_embeddings` when vectors are missing, then the summary.
fn finish(
    mut output: Output,
    head: &IndexHead,
    vectors: &Vectors,
    model_missing: bool,
) -> Result<(), Failure> {
    if let Some(reason) = &vectors.problem {
        output.record(&needs_embeddings(
            reason,
            model_missing,
            head.symbols,
            vectors.rows,
        ))?;
    }
    output.record(&summary(head))?;
    output.finish()
}
