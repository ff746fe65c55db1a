//! Every file tldrgraph keeps in `.tldrgraph/`, named here and nowhere else, with the typed
//! readers and writers of those that more than one program reads: [`graph`] (graph.json),
//! [`state`] (state.json), [`plan`] (plan.json); the intents store is [`crate::intents`] and
//! the approval [`crate::approval`]. A name is relative to the store ([`crate::store::Store::path`]).

pub mod graph;
pub mod plan;
pub mod state;

/// The layers the agent designs (read by tg-classify, tg-plan, freshness).
pub const LAYERS_CONFIG: &str = "layers.config.yaml";
/// tg-classify's report: each layer, its paths, counts by role and what it matched.
pub const LAYERS_REPORT: &str = "layers.yaml";
/// tg-classify's overview of the repository's symbols, read by the agent before designing layers.
pub const SYMBOLS: &str = "symbols.md";
/// The whole graph as one JSON document (written by tg-status).
pub const GRAPH: &str = "graph.json";
/// The same document as zstd frames, written instead of [`GRAPH`] when the graph is larger
/// than [`graph::PLAIN_LIMIT`].
pub const GRAPH_COMPRESSED: &str = "graph.json.zst";
/// The last build's contract payload and the sources' hashes (written by tg-status).
pub const STATE: &str = "state.json";
/// The ranked bottleneck candidates behind `needs_confirmation` (written by tg-plan, shown by
/// `tldrgraph plan`).
pub const PLAN: &str = "plan.json";
/// What the user approved for enrichment, and declined (`tldrgraph init --yes`).
pub const APPROVAL: &str = "approval.json";
/// The intents written so far, one JSON object a line (tg-enrich).
pub const INTENTS: &str = "intents.ndjson";
/// The batch of `needs_enrichment`, also written here for agents whose tool output is cut.
pub const ENRICHMENT_REQUEST: &str = "enrichment_request.json";
/// An answer dropped as `enrichment_response.{json,yaml,ndjson}` is applied by the next
/// `tldrgraph init`, then renamed `enrichment_response.applied.<ext>`.
pub const ENRICHMENT_RESPONSE_STEM: &str = "enrichment_response";
/// The extensions an enrichment response may have.
pub const ENRICHMENT_RESPONSE_EXTENSIONS: [&str; 4] = ["json", "ndjson", "yaml", "yml"];
/// The search index tg-embed builds and tg-query reads.
pub const SEARCH_INDEX: &str = "search.bin";
/// The index's embedding vectors, row by row, quantised to 8 bits (see `search::quantize`).
pub const SEARCH_VECTORS: &str = "vectors.i8";
/// Where the vectors were kept as f32 before index version 6: removed when the index is
/// rebuilt.
pub const LEGACY_SEARCH_VECTORS: &str = "vectors.f32";
/// Content hashes of the index and vectors as tg-embed wrote them: a rerun that finds them
/// unchanged skips the work.
pub const SEARCH_SUMS: &str = "search.sum";
/// The picture of the graph `tldrgraph ui` writes: one self-contained HTML page.
pub const MAP: &str = "map.html";
/// The agent's guide, written by `tldrgraph init` and `tldrgraph contract`.
pub const AGENT_CONTRACT: &str = "AGENT_CONTRACT.md";
/// The enrichment mode last chosen with `init --enrich` (`off` or `auto`): an `init` without the
/// flag keeps it, so zero-token mode sticks until `--enrich auto` (a user's decision, like the
/// approval: committed, not ignored).
pub const ENRICH_MODE: &str = "enrich.mode";
/// The wrapper's key of its last successful `init` (arguments, stage binaries, artifact stamps).
pub const INIT_KEY: &str = "init.key";
/// What `tldrgraph install` wrote, so `uninstall` removes exactly that.
pub const INSTALL_MANIFEST: &str = "install.json";
/// The lock that serialises runs on one repository.
pub const LOCK: &str = "tldrgraph.lock";
/// What the stages keep between runs: tg-extract's [`EXTRACT_CACHE`], [`EXTRACT_CACHE_DELTA`],
/// [`EXTRACT_OUTPUT`], [`RESOLVE_STATS`], [`STAMPS`], [`WALK`] and [`WORDS`], and the other
/// stages' files named below.
pub const CACHE_DIR: &str = "cache";
/// The extraction cache, per file keyed by content hash (inside [`CACHE_DIR`]).
pub const EXTRACT_CACHE: &str = "extract.bin";
/// The entries of the files changed since [`EXTRACT_CACHE`] was written, over it (inside
/// [`CACHE_DIR`]).
pub const EXTRACT_CACHE_DELTA: &str = "extract.delta";
/// tg-extract's last output as zstd frames, reused when nothing changed (inside
/// [`CACHE_DIR`]).
pub const EXTRACT_OUTPUT: &str = "extract.out.zst";
/// Each file's resolution counters in tg-extract's last output, bound to its fingerprint: a
/// run that splices that output takes the unchanged files' counters from here (inside
/// [`CACHE_DIR`]).
pub const RESOLVE_STATS: &str = "resolve.stats";
/// Where the last output was kept uncompressed before: removed when the output is cached
/// again (inside [`CACHE_DIR`]), with its `.verified` stamp.
pub const LEGACY_EXTRACT_OUTPUT: &str = "extract.out";
/// Each source file's metadata stamp with the content hash found for it, so that unchanged
/// files are not read again (inside [`CACHE_DIR`]; `tg_shared::freshness::Verified`).
pub const STAMPS: &str = "stamps.bin";
/// The files and directory stamps of tg-extract's last full walk, so that a freshness check
/// need not walk again while no directory changed (inside [`CACHE_DIR`];
/// `tg_lang::walk_snapshot`).
pub const WALK: &str = "walk.bin";
/// The stamp vectors.i8 had when an answer last found it to hash to its index's
/// `vectors_hash`: while it holds, the scan does not hash the vectors again (inside
/// [`CACHE_DIR`]; `tg_shared::freshness::verified_before`).
pub const VECTORS_VERIFIED: &str = "vectors.i8.verified";
/// The stamp the embedding model's table had when an answer last hashed it to the index's
/// model id: while it holds, a query does not hash the 47 MB table again (inside
/// [`CACHE_DIR`]; `tg_shared::embed::service::for_index`).
pub const MODEL_VERIFIED: &str = "model.verified";
/// The key of each indexed symbol's lexical text, in the order of the index search.sum vouches
/// for: a rebuild takes the terms of an unchanged text from that index instead of
/// tokenising it again (inside [`CACHE_DIR`]; tg-embed).
pub const POSTINGS_KEYS: &str = "postings.keys";
/// tg-plan's last ranking (PageRank and betweenness) with the key of the dependency graph it
/// ranked: taken again for the same graph (inside [`CACHE_DIR`]).
pub const PLAN_METRICS: &str = "plan.metrics";
/// tg-classify's tallies of the last whole stream it read, with that stream's fingerprint and
/// the config's key: a patch of that stream is applied to them (inside [`CACHE_DIR`]).
pub const CLASSIFY_STATE: &str = "classify.state";
/// What tg-plan read of the last whole stream (its nodes, their intents' currency, the
/// dependency edges), with that stream's fingerprint: a patch of that stream is applied to it
/// (inside [`CACHE_DIR`]).
pub const PLAN_STATE: &str = "plan.state";
/// What tg-enrich kept of the last whole stream (each symbol's id and source hash, the
/// files, the intents' counts), with that stream's fingerprint, the intents' digest and the
/// mode: a patch of that stream is applied to it (inside [`CACHE_DIR`]).
pub const ENRICH_STATE: &str = "enrich.state";
/// The words the repository's code writes, summed over its files, for dead-code (inside
/// [`CACHE_DIR`]; `tg_lang::words::WordTable`).
pub const WORDS: &str = "words.bin";

/// Reads the JSON artifact `name` (through zstd when it ends in `.zst`), `what` the messages
/// call it: missing is [`crate::exit::NO_INPUT`], malformed or damaged [`crate::exit::DATA`]
/// naming the line; both say how to get a good one.
fn read_json<T: serde::de::DeserializeOwned>(
    store: &crate::store::Store,
    name: &str,
    what: &str,
) -> Result<T, crate::stage::Failure> {
    use std::io::Read;
    let (path, mut reader) = open(store, name, what)?;
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(&path, &e))?;
    serde_json::from_slice(&bytes).map_err(|e| malformed(&path, e.line(), &e))
}

/// Opens the artifact `name` for reading, through zstd when it ends in `.zst`: missing is
/// [`crate::exit::NO_INPUT`], saying that `init` writes `what`.
fn open(
    store: &crate::store::Store,
    name: &str,
    what: &str,
) -> Result<(std::path::PathBuf, Box<dyn std::io::Read>), crate::stage::Failure> {
    use crate::{exit, stage::Failure};
    let path = store.path(name);
    let file = std::fs::File::open(&path).map_err(|e| {
        Failure::new(
            exit::NO_INPUT,
            format!("cannot read {}: {e}", path.display()),
        )
        .with_hint(format!(
            "run `tldrgraph init --json` first: it writes {what}"
        ))
    })?;
    let reader: Box<dyn std::io::Read> = if name.ends_with(".zst") {
        crate::frames::reader(file).map_err(|e| unreadable(&path, &e))?
    } else {
        Box::new(file)
    };
    Ok((path, reader))
}

/// An artifact that could not be read on: damaged ([`crate::exit::DATA`]) or unreadable.
fn unreadable(path: &std::path::Path, e: &std::io::Error) -> crate::stage::Failure {
    use crate::exit;
    let code = match e.kind() {
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof => exit::DATA,
        _ => exit::NO_INPUT,
    };
    crate::stage::Failure::new(code, format!("cannot read {}: {e}", path.display()))
        .with_hint("run `tldrgraph init --json` again to rewrite it")
}

/// An artifact whose line `line` is not what its writer writes.
fn malformed(
    path: &std::path::Path,
    line: usize,
    problem: &dyn std::fmt::Display,
) -> crate::stage::Failure {
    crate::stage::Failure::new(
        crate::exit::DATA,
        format!("{}: line {line}: {problem}", path.display()),
    )
    .with_hint("run `tldrgraph init --json` again to rewrite it")
}
