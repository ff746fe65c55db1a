//! tg-extract: walk a repository, parse each source file with tree-sitter (in parallel, with a
//! per-file cache), resolve references across files and write the graph as NDJSON.
//!
//! Stream order: `header`; per file (sorted by path) its `file` record and its `node`s in
//! source order; `edge`s sorted by (src, kind, dst); `diagnostic`s sorted by file and line; the
//! closing `summary`.

pub mod cache;
pub mod cli;
pub mod extract;
pub mod graph;
pub mod patch;
pub mod resolve;
pub mod shard;
pub mod splice;

/// The stage name in its summary and messages.
pub const STAGE: &str = "tg-extract";

use cache::{CacheView, EntryView, ExtractCache};
use cli::Cli;
use extract::Outcome;
use resolve::ResolveStats;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tg_lang::walk;
use tg_lang::walk_snapshot::{self, WalkSnapshot};
use tg_lang::words::{word_hash, FileEntry, FileWords, WordTable};
use tg_shared::exit;
use tg_shared::freshness::Verified;
use tg_shared::ndjson::RecordWriter;
use tg_shared::record::{EdgeKind, Header, NodeKind, Record};
use tg_shared::stage::{self, Failure, Progress};
use tg_shared::store::{self, Store};

/// The outcome of writing the stream: `Ok(true)` when the reader closed the pipe, which is a
/// success (`tg-extract . | head`), not an error.
fn reader_went_away(result: io::Result<()>) -> Result<bool, Failure> {
    match result {
        Ok(()) => Ok(false),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(true),
        Err(err) => Err(Failure::new(
            exit::IO,
            format!("cannot write the output: {err}"),
        )),
    }
}

/// Writes to the stream and to the output cache at once.
struct Tee<'a> {
    a: &'a mut dyn Write,
    b: &'a mut dyn Write,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.a.write_all(buf)?;
        self.b.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.a.flush()?;
        self.b.flush()
    }
}

fn canonical(path: &Path, what: &str) -> Result<PathBuf, Failure> {
    std::fs::canonicalize(path).map_err(|e| {
        Failure::new(
            exit::NO_INPUT,
            format!(
                "{what} {} does not exist or cannot be opened: {e}",
                path.display()
            ),
        )
    })
}

/// Where to extract: the working directory, the repository root, the walk's start paths (all
/// under the root), and whether the walk covers the whole repository.
struct Scope {
    cwd: PathBuf,
    root: PathBuf,
    starts: Vec<PathBuf>,
    full_walk: bool,
}

fn scope(cli: &Cli) -> Result<Scope, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the current directory: {e}")))?;
    let root = tg_shared::store::find_root(&cwd, cli.stage.root.as_deref())
        .map_err(|e| Failure::new(exit::NO_INPUT, e))?;
    let mut starts = Vec::new();
    for path in &cli.paths {
        let abs = canonical(&cwd.join(path), "path")?;
        if !abs.starts_with(&root) {
            return Err(Failure::new(
                exit::USAGE,
                format!(
                    "path {} is outside the repository root {} (pass --root to choose another root)",
                    path.display(),
                    root.display()
                ),
            ));
        }
        starts.push(abs);
    }
    let full_walk = starts.is_empty() || starts.contains(&root);
    if starts.is_empty() {
        starts.push(root.clone());
    }
    Ok(Scope {
        cwd,
        root,
        starts,
        full_walk,
    })
}

/// The config's `exclude:` globs, then the command line's.
fn exclude_globs(cli: &Cli, store: &Store) -> Vec<String> {
    let mut exclude = tg_shared::layers::repo_excludes(store);
    exclude.extend(cli.selection.exclude.iter().cloned());
    exclude
}

/// The source files: a full walk under the lock starts from the last full walk's snapshot
/// when no directory or ignore file moved since ([`WalkSnapshot`]), and otherwise walks and
/// keeps a new snapshot (or drops the last one when this walk's cannot be trusted). The
/// snapshot is a cache: failing to write it only slows the next run.
fn walk_or_snapshot(
    cli: &Cli,
    scope: &Scope,
    store: &Store,
    locked: bool,
) -> Result<walk::WalkResult, Failure> {
    if !(locked && scope.full_walk) {
        return walk_sources(cli, scope, store);
    }
    let key = walk_snapshot::key(&exclude_globs(cli, store), cli.selection.no_ignore);
    if let Some(walked) = WalkSnapshot::walk_if_unchanged(store, &scope.root, &key) {
        return Ok(walked);
    }
    let began = tg_shared::freshness::now_nanos();
    let walked = walk_sources(cli, scope, store)?;
    let snapshot = WalkSnapshot::take(&scope.root, key, &walked, began);
    let _ = WalkSnapshot::save(store, snapshot.as_ref());
    Ok(walked)
}

/// The source files to extract, with a `no_sources` diagnostic (and why) when there are none.
fn walk_sources(cli: &Cli, scope: &Scope, store: &Store) -> Result<walk::WalkResult, Failure> {
    let exclude = exclude_globs(cli, store);
    let excludes =
        tg_shared::exclude::compile(&exclude).map_err(|e| Failure::new(exit::USAGE, e))?;
    let options = walk::WalkOptions::new(excludes, cli.selection.no_ignore);
    let mut walked = walk::walk(&scope.root, &scope.starts, &options);
    if walked.files.is_empty() {
        // Nothing to extract: say why, rather than a silent empty graph.
        walked.diagnostics.push(tg_shared::record::Diagnostic {
            level: tg_shared::record::Level::Warning,
            file: None,
            line: None,
            code: tg_shared::record::NO_SOURCES.to_string(),
            message: walk::why_empty(&scope.root, &scope.starts, &options),
        });
    }
    Ok(walked)
}

/// What the output depends on besides the files: the tool, the resolver, the size limit and
/// the package names (from manifests such as Cargo.toml), which change resolution.
fn settings(cli: &Cli, aliases: &[resolve::PackageAlias]) -> String {
    let mut settings = format!(
        "{}\nresolver={}\nmax_file_size={}\n",
        cache::stamp(),
        resolve::RESOLVER_REVISION,
        cli.max_file_size
    );
    for (lang, name, package) in aliases {
        settings.push_str(&format!("alias={lang}:{name}={package}\n"));
    }
    settings
}

/// Writes the previous run's output again when nothing it depends on changed (the same
/// `fingerprint`); `Ok(true)` when it did (or the reader went away).
fn reuse_previous_output(
    cli: &Cli,
    scope: &Scope,
    (output_cache, fingerprint): (&Path, &str),
    files_seen: u64,
    progress: &Progress,
) -> Result<bool, Failure> {
    let previous = match cache::open_output(output_cache, fingerprint) {
        Ok(previous) => previous,
        Err(note) => {
            progress.say(format_args!("warning: {note}; extracting again"));
            None
        }
    };
    let Some(previous) = previous else {
        return Ok(false);
    };
    if cli.patch {
        // Nothing changed: a patch with nothing removed or added, and the same tail.
        let tail = patch::tail_of_frames(previous.frames())
            .map_err(|e| Failure::new(exit::IO, format!("{}: {e}", output_cache.display())))?;
        let mut bytes = Vec::new();
        let ends = (fingerprint, fingerprint);
        let nothing = splice::Changes::default();
        patch::write(&mut bytes, stream_header(), ends, &nothing, &tail).map_err(Failure::write)?;
        let produce = |out: &mut dyn Write| out.write_all(&bytes);
        write_stream(cli, scope, &produce, &mut None)?;
        progress.say(format_args!(
            "{files_seen} files (0 parsed, {files_seen} unchanged): an empty patch in {:.2}s",
            progress.elapsed()
        ));
        return Ok(true);
    }
    match &cli.output {
        // Streamed through a temporary file, which replaces the output only if it differs.
        Some(path) => {
            let path = scope.cwd.join(path);
            let written = cache::written_path(output_cache);
            let wrote = previous
                .write_to_file(&path, &written)
                .map_err(|e| Failure::cant_write(&path, &e))?;
            if !wrote {
                progress.say(format_args!(
                    "{} already holds this stream, untouched since it was written",
                    path.display()
                ));
            }
        }
        None => {
            let mut out = io::stdout().lock();
            if reader_went_away(previous.write_to(&mut out).and_then(|_| out.flush()))? {
                return Ok(true);
            }
        }
    }
    progress.say(format_args!(
        "{files_seen} files (0 parsed, {files_seen} unchanged): reused the previous output in {:.2}s",
        progress.elapsed()
    ));
    Ok(true)
}

/// How many files this run parsed, took from the cache and skipped.
fn outcome_counts(extracted: &[extract::Extracted]) -> (u64, u64, u64) {
    let (mut parsed, mut cached, mut skipped) = (0u64, 0u64, 0u64);
    for item in extracted {
        match &item.outcome {
            Outcome::Ready {
                from_cache: true, ..
            } => cached += 1,
            Outcome::Ready { .. } => parsed += 1,
            Outcome::Skipped => skipped += 1,
        }
    }
    (parsed, cached, skipped)
}

/// The cache's entries after this run, each with its words (`words[k]` belongs to
/// `extracted[k]`): a partial walk keeps the entries of files it did not visit; a full walk
/// drops the entries of files that are gone.
fn current_entries<'a>(
    cache: &'a ExtractCache,
    extracted: &'a [extract::Extracted],
    words: &'a [FileWords],
    full_walk: bool,
) -> BTreeMap<&'a str, EntryView<'a>> {
    let mut entries: BTreeMap<&str, EntryView<'a>> = BTreeMap::new();
    if !full_walk {
        for (path, entry) in &cache.entries {
            let words = &entry.words;
            entries.insert(path, EntryView { entry, words });
        }
    }
    for (item, words) in extracted.iter().zip(words) {
        if let Outcome::Ready { entry, .. } = &item.outcome {
            entries.insert(&item.rel, EntryView { entry, words });
        }
    }
    entries
}

/// What the run changed in the cache: the entries it had loaded (with their [`cache::Origin`])
/// and the files it parsed.
struct CacheChanges<'a> {
    origin: cache::Origin,
    loaded: Vec<String>,
    extracted: &'a [extract::Extracted],
}

impl CacheChanges<'_> {
    /// The files whose entries this run made or dropped, given the entries after it.
    fn changed<'e>(&'e self, entries: &BTreeMap<&str, EntryView<'_>>) -> Vec<&'e str> {
        let parsed = (self.extracted.iter())
            .filter(|item| {
                matches!(
                    item.outcome,
                    Outcome::Ready {
                        from_cache: false,
                        ..
                    }
                )
            })
            .map(|item| item.rel.as_str());
        let dropped = (self.loaded.iter())
            .map(String::as_str)
            .filter(|path| !entries.contains_key(path));
        parsed.chain(dropped).collect()
    }
}

/// Writes the extraction cache ([`current_entries`]) when `dirty` (as a delta over its base
/// while few files changed), then sums the files' words into `cache/words.bin`, which
/// dead-code reads instead of every file.
fn save_cache_and_words(
    store: &Store,
    entries: &BTreeMap<&str, EntryView<'_>>,
    dirty: Option<&CacheChanges>,
    progress: &Progress,
) {
    if let Some(changes) = dirty {
        let view = CacheView {
            stamp: cache::stamp(),
            entries,
        };
        let paths = (store.extract_cache_path(), store.extract_cache_delta_path());
        let changed = changes.changed(entries);
        if let Err(err) = view.save_store((&paths.0, &paths.1), &changes.origin, &changed) {
            progress.say(format_args!("{err}"));
        }
    }
    let files: Vec<FileEntry<'_>> = entries
        .iter()
        .map(|(&path, view)| (path, view.words))
        .collect();
    let names: Vec<u32> = entries
        .values()
        .flat_map(|view| &view.entry.facts.symbols)
        .filter(|symbol| matches!(symbol.kind, NodeKind::Function | NodeKind::Method))
        .map(|symbol| word_hash(&symbol.name))
        .collect();
    if let Err(err) = WordTable::build(&files, names).save(&store.words_path()) {
        progress.say(format_args!(
            "warning: {err}; dead-code will read the files instead"
        ));
    }
}

/// What the summary counts of the graph.
struct Counts<'a> {
    nodes: u64,
    edges_by_kind: &'a BTreeMap<EdgeKind, u64>,
    diagnostics: u64,
    stats: ResolveStats,
}

/// The closing summary: only what the stream holds. How many files this run parsed or took
/// from the cache is a fact about the run (stderr), and would make an incremental run's bytes
/// differ from a clean run's.
fn summary(cli: &Cli, files_seen: u64, skipped: u64, graph: &Counts) -> Record {
    let mut counts: BTreeMap<String, Value> = BTreeMap::new();
    let mut put = |name: &str, value: u64| {
        counts.insert(name.to_string(), Value::from(value));
    };
    put("files_seen", files_seen);
    put("files", files_seen - skipped);
    put("skipped", skipped);
    put("nodes", graph.nodes);
    put("edges", graph.edges_by_kind.values().sum());
    for kind in EdgeKind::ALL {
        let n = graph.edges_by_kind.get(&kind).copied().unwrap_or(0);
        put(&format!("edges_{}", kind.as_str()), n);
    }
    put("diagnostics", graph.diagnostics);
    put("imports_external", graph.stats.imports_external);
    put("calls_unresolved", graph.stats.calls_unresolved);
    // How this walk differed from a plain one, so that a later freshness check walks alike.
    if !cli.selection.exclude.is_empty() {
        counts.insert(
            "exclude".to_string(),
            Value::from(cli.selection.exclude.clone()),
        );
    }
    if cli.selection.no_ignore {
        counts.insert("no_ignore".to_string(), Value::Bool(true));
    }
    stage::summary(STAGE, counts)
}

fn total(stats: &[ResolveStats]) -> ResolveStats {
    let mut total = ResolveStats::default();
    for &file in stats {
        total.add(file);
    }
    total
}

/// The header of the whole stream made from the inputs `fingerprint` names.
fn header(fingerprint: &str) -> Record {
    let mut header = stream_header();
    header.fingerprint = Some(fingerprint.to_string());
    Record::Header(header)
}

/// The header line of [`header`], as a splice writes it.
fn header_line(fingerprint: &str) -> io::Result<Vec<u8>> {
    let mut writer = RecordWriter::new(Vec::new());
    writer.write(&header(fingerprint))?;
    Ok(writer.into_inner())
}

/// A header without the stream's identity (a patch names both streams in its own field).
fn stream_header() -> Header {
    Header::new(concat!("tg-extract ", env!("CARGO_PKG_VERSION")))
}

/// What a run may splice its output into ([`splice`]): the previous output and its per-file
/// counters, when the files edited since it was written kept their interface or only appended
/// symbols; and which files to resolve.
struct SpliceBase {
    previous: cache::PreviousOutput,
    stats: Vec<ResolveStats>,
    /// The fingerprint of the previous output's inputs: a patch's base.
    fingerprint: String,
    resolve: Vec<bool>,
}

fn splice_base(
    store: &Store,
    extracted: &[extract::Extracted],
    probes: &[extract::Probe],
    settings: &str,
    walk_diagnostics: &[tg_shared::record::Diagnostic],
) -> Option<SpliceBase> {
    let resolve = splice::files_to_resolve(extracted)?;
    let probes = splice::previous_probes(extracted, probes);
    let rels = extracted.iter().map(|item| item.rel.as_str());
    let fingerprint = extract::fingerprint(settings, rels.zip(&probes), walk_diagnostics);
    let stats = splice::load_stats(&store.resolve_stats_path(), &fingerprint)?;
    let ready = (extracted.iter())
        .filter(|item| matches!(item.outcome, Outcome::Ready { .. }))
        .count();
    if stats.len() != ready {
        return None;
    }
    let previous = cache::open_output(&store.extract_output_cache_path(), &fingerprint).ok()??;
    Some(SpliceBase {
        previous,
        stats,
        fingerprint,
        resolve,
    })
}

/// The whole stream from the graph: header, files and nodes, edges, diagnostics, summary.
fn write_graph(
    out: &mut dyn Write,
    graph: &graph::Graph,
    fingerprint: &str,
    summary: &dyn Fn(&Counts) -> Record,
) -> io::Result<()> {
    let mut writer = RecordWriter::new(out);
    writer.write(&header(fingerprint))?;
    graph.write(&mut writer)?;
    writer.write(&summary(&Counts {
        nodes: graph.nodes,
        edges_by_kind: &graph.edges_by_kind,
        diagnostics: graph.diagnostics(),
        stats: total(&graph.file_stats),
    }))?;
    writer.flush()
}

/// The stream spliced from the previous one ([`splice`]), with the diagnostics and summary
/// written again; with `keep_changes`, what the splice changed and the tail it wrote, for a
/// patch.
fn write_spliced(
    out: &mut dyn Write,
    graph: &graph::Graph,
    extracted: &[extract::Extracted],
    (base, fingerprint): (&SpliceBase, &str),
    summary: &dyn Fn(&Counts) -> Record,
    keep_changes: bool,
) -> io::Result<Option<(splice::Changes, Vec<u8>)>> {
    let header = header_line(fingerprint)?;
    let mut splicer = splice::Splicer::new(graph, extracted, header, out)?;
    if keep_changes {
        splicer = splicer.keeping_changes();
    }
    base.previous.write_to(&mut splicer)?;
    let (out, spliced) = splicer.finish()?;
    let mut tail = RecordWriter::new(Vec::new());
    graph.write_diagnostics(&mut tail)?;
    tail.write(&summary(&Counts {
        nodes: graph.nodes,
        edges_by_kind: &spliced.edges_by_kind,
        diagnostics: graph.diagnostics(),
        stats: total(&splice::merged_stats(graph, &base.stats)),
    }))?;
    let tail = tail.into_inner();
    out.write_all(&tail)?;
    out.flush()?;
    Ok(spliced.changes.map(|changes| (changes, tail)))
}

/// Writes the stream `produce` makes (to `--output` or stdout) and, when `output_cache` is
/// given, the same bytes to it. `Ok(false)` when the reader went away.
fn write_stream(
    cli: &Cli,
    scope: &Scope,
    produce: &dyn Fn(&mut dyn Write) -> io::Result<()>,
    output_cache: &mut Option<cache::OutputCache>,
) -> Result<bool, Failure> {
    match &cli.output {
        // Streamed through a temporary file (the kernel's stream is 1.1 GB), which replaces the
        // output only if it differs, so Make sees no change on a no-op.
        Some(path) => {
            let path = scope.cwd.join(path);
            let cant = |e: io::Error| Failure::cant_write(&path, &e);
            let mut file = store::AtomicFile::create(&path).map_err(cant)?;
            match output_cache.as_mut() {
                Some(cache_writer) => produce(&mut Tee {
                    a: &mut file,
                    b: cache_writer,
                }),
                None => produce(&mut file),
            }
            .map_err(cant)?;
            file.commit_if_changed().map_err(cant)?;
        }
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
            let result = match output_cache.as_mut() {
                Some(cache_writer) => produce(&mut Tee {
                    a: &mut out,
                    b: cache_writer,
                }),
                None => produce(&mut out),
            };
            if reader_went_away(result)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Everything writing the output needs besides the graph.
struct Output<'a> {
    cli: &'a Cli,
    scope: &'a Scope,
    store: &'a Store,
    progress: &'a Progress,
    fingerprint: &'a str,
    /// Keep the output and its per-file counters in the cache.
    cache_it: bool,
    files_seen: u64,
    skipped: u64,
}

/// Splices the previous stream into a sink; with `true`, keeps what changed and the tail.
type SpliceInto<'a> = dyn Fn(&mut dyn Write, &SpliceBase, bool) -> io::Result<Option<(splice::Changes, Vec<u8>)>>
    + 'a;

/// Splices the whole stream into the output cache (when there is one) and gives the patch
/// from the previous stream to it.
fn spliced_patch(
    output: &Output,
    base: &SpliceBase,
    cache_writer: &mut Option<cache::OutputCache>,
    splice: &SpliceInto,
) -> Result<Vec<u8>, Failure> {
    let cache_path = output.store.extract_output_cache_path();
    let cant = |e: io::Error| Failure::cant_write(&cache_path, &e);
    let kept = match cache_writer.as_mut() {
        Some(writer) => splice(writer, base, true),
        None => splice(&mut io::sink(), base, true),
    }
    .map_err(cant)?;
    let Some((changes, tail)) = kept else {
        return Err(Failure::new(exit::SOFTWARE, "the splice kept no changes"));
    };
    let mut patch = Vec::new();
    let ends = (base.fingerprint.as_str(), output.fingerprint);
    patch::write(&mut patch, stream_header(), ends, &changes, &tail).map_err(Failure::write)?;
    Ok(patch)
}

/// Writes the stream (spliced into `base`'s when given) and keeps it, with its per-file
/// counters, in the cache. Returns the number of edges written, or `None` when the reader went
/// away.
fn write_output(
    output: &Output,
    graph: &graph::Graph,
    extracted: &[extract::Extracted],
    base: Option<&SpliceBase>,
) -> Result<Option<u64>, Failure> {
    let stats_path = output.store.resolve_stats_path();
    let edges_written = std::cell::Cell::new(0u64);
    let summary = |counts: &Counts| {
        edges_written.set(counts.edges_by_kind.values().sum());
        summary(output.cli, output.files_seen, output.skipped, counts)
    };
    let splice = |out: &mut dyn Write, base: &SpliceBase, keep_changes: bool| {
        let ends = (base, output.fingerprint);
        write_spliced(out, graph, extracted, ends, &summary, keep_changes).inspect_err(|_| {
            // Never splice into that output again.
            let _ = std::fs::remove_file(&stats_path);
        })
    };
    let produce = |out: &mut dyn Write| match base {
        Some(base) => splice(out, base, false).map(drop),
        None => write_graph(out, graph, output.fingerprint, &summary),
    };
    let cache_path = output.store.extract_output_cache_path();
    let mut cache_writer = match output.cache_it {
        true => {
            let previous = base.map_or(&[][..], |base| base.previous.frames());
            cache::OutputCache::create(&cache_path, output.fingerprint, previous).ok()
        }
        false => None,
    };
    let written = match base.filter(|_| output.cli.patch) {
        // The whole stream goes to the cache alone, the patch to the output.
        Some(base) => {
            let patch = spliced_patch(output, base, &mut cache_writer, &splice)?;
            let produce = |out: &mut dyn Write| out.write_all(&patch);
            write_stream(output.cli, output.scope, &produce, &mut None)?
        }
        None => write_stream(output.cli, output.scope, &produce, &mut cache_writer)?,
    };
    if !written {
        return Ok(None);
    }
    if let Some(writer) = cache_writer {
        let per_file = match base {
            Some(base) => splice::merged_stats(graph, &base.stats),
            None => graph.file_stats.clone(),
        };
        let saved = writer
            .finish()
            .map_err(|err| format!("{}: {err}", cache_path.display()))
            .and_then(|()| splice::save_stats(&stats_path, output.fingerprint, &per_file));
        if let Err(err) = saved {
            output.progress.say(format_args!("cannot write {err}"));
        }
    }
    Ok(Some(edges_written.get()))
}

/// Runs the extraction; returns the exit code.
pub fn run(cli: Cli) -> Result<i32, Failure> {
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let scope = scope(&cli)?;
    if let Some(threads) = cli.threads {
        // Ignored if a pool already exists (only in tests that call run twice).
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build_global();
    }
    let store = Store::open_checked(&scope.root).map_err(|e| Failure::new(exit::NO_PERM, e))?;
    let mut lock = None;
    // Shards sharing a directory neither wait for each other nor touch the store.
    if !cli.no_cache && cli.shard.is_none() {
        match store.lock() {
            Ok(held) => lock = Some(held),
            Err(err) => progress.say(format_args!(
                "cache disabled: cannot lock {}: {err}",
                store.dir().display()
            )),
        }
    }

    let walked = walk_or_snapshot(&cli, &scope, &store, lock.is_some())?;
    if let (Some(slice), Some(facts_out)) = (cli.shard, &cli.facts_out) {
        return shard::run(slice, walked, cli.max_file_size, facts_out, &progress);
    }
    let files_seen = walked.files.len() as u64;
    progress.phase("walk");
    // Stamps are read and written only with the cache, under the lock: `--no-cache` (which
    // takes no lock) reads every file.
    let mut stamps = match lock {
        Some(_) => Verified::load(&store),
        None => Verified::default(),
    };
    let stamped = progress.metered(("reading", "files"), files_seen, |done| {
        extract::probe_all(&walked.files, cli.max_file_size, &stamps, done)
    });
    if lock.is_some() {
        extract::remember_stamps(&mut stamps, &walked.files, &stamped, scope.full_walk);
        if let Err(err) = stamps.save(&store) {
            progress.say(format_args!("cannot save the file stamps: {err}"));
        }
    }
    let probes: Vec<extract::Probe> = stamped.into_iter().map(|(probe, _)| probe).collect();
    progress.phase("probe");
    let aliases = graph::package_aliases(&scope.root, &walked.files);
    let settings = settings(&cli, &aliases);
    let rels = walked.files.iter().map(|file| file.rel.as_str());
    let fingerprint = extract::fingerprint(&settings, rels.zip(&probes), &walked.diagnostics);
    let output_cache = store.extract_output_cache_path();

    let mut cache = ExtractCache::empty();
    // A word table lost or from another build is made again, from the cache: the previous
    // output alone cannot give it.
    let words_missing = !WordTable::is_current(&store.words_path());
    if lock.is_some() && !words_missing {
        let previous = (output_cache.as_path(), fingerprint.as_str());
        if reuse_previous_output(&cli, &scope, previous, files_seen, &progress)? {
            return Ok(exit::OK);
        }
    }
    if lock.is_some() {
        let (loaded, note) = ExtractCache::load_store(
            &store.extract_cache_path(),
            &store.extract_cache_delta_path(),
        );
        cache = loaded;
        if let Some(note) = note {
            progress.say(note);
        }
    }
    // Entries merged from shards are not the store's: the cache is then written whole.
    let changes = CacheChanges {
        origin: match cli.merge.is_empty() {
            true => cache.origin.clone(),
            false => cache::Origin::default(),
        },
        loaded: cache.entries.keys().cloned().collect(),
        extracted: &[],
    };
    shard::load_facts(&mut cache, &cli.merge)?;

    progress.phase("cache load");
    // Only a full walk's output is kept, so only one may be spliced into.
    let may_splice = lock.is_some() && scope.full_walk && cli.merge.is_empty();
    let probes_seen = match may_splice {
        true => probes.clone(),
        false => Vec::new(),
    };
    let (extracted, words) = progress.metered(("parsing", "files"), files_seen, |done| {
        extract::extract_all(walked.files, probes, cli.max_file_size, &mut cache, done)
    });
    let changing: Vec<&str> = extracted
        .iter()
        .filter(|e| e.changed_while_read)
        .map(|e| e.rel.as_str())
        .collect();
    if !changing.is_empty() {
        progress.say(format_args!(
            "warning: {} changed while it was read; its newer content was extracted, and the next run looks again",
            changing.join(", ")
        ));
    }
    progress.phase("parse");
    let (parsed, cached, skipped) = outcome_counts(&extracted);
    let base = match may_splice && changing.is_empty() {
        true => splice_base(
            &store,
            &extracted,
            &probes_seen,
            &settings,
            &walked.diagnostics,
        ),
        false => None,
    };
    drop(probes_seen);
    let resolve = match &base {
        Some(base) => graph::Resolve::Only(base.resolve.clone()),
        None => graph::Resolve::All,
    };
    // The cache and the word table are written on a thread of its own while resolution runs:
    // both only read the extraction results. Facts merged from shards go into the store's
    // cache too.
    let dirty =
        parsed > 0 || !cli.merge.is_empty() || (scope.full_walk && !cache.entries.is_empty());
    let output = Output {
        cli: &cli,
        scope: &scope,
        store: &store,
        progress: &progress,
        fingerprint: &fingerprint,
        // Not when a file changed while it was read: the fingerprint describes the bytes probed.
        cache_it: lock.is_some() && changing.is_empty(),
        files_seen,
        skipped,
    };
    // The output is written while the cache is saved: on the kernel each takes seconds.
    let written = std::thread::scope(|threads| {
        // The words are let go as soon as they are saved, or at once when nothing saves them.
        let saver = if lock.is_some() && (dirty || words_missing) {
            Some(threads.spawn(|| {
                let entries = current_entries(&cache, &extracted, &words, scope.full_walk);
                let changes = CacheChanges {
                    extracted: &extracted,
                    ..changes
                };
                save_cache_and_words(&store, &entries, dirty.then_some(&changes), &progress);
                drop(entries);
                drop(words);
            }))
        } else {
            drop(words);
            None
        };
        let graph = graph::build(&extracted, &aliases, walked.diagnostics, resolve);
        progress.phase("resolve");
        let written = write_output(&output, &graph, &extracted, base.as_ref());
        progress.phase("output");
        if saver.is_some_and(|saver| saver.join().is_err()) {
            eprintln!("tg-extract: writing the cache failed; it will be rebuilt next run");
        }
        let resolved = graph.resolved.iter().filter(|&&r| r).count();
        written.map(|edges| edges.map(|edges| (graph.nodes, edges, graph.diagnostics(), resolved)))
    })?;
    drop(lock);
    let Some((nodes, edges, diagnostics, resolved)) = written else {
        return Ok(exit::OK);
    };
    if base.is_some() {
        let edited = parsed;
        let naming = resolved.saturating_sub(edited as usize);
        progress.say(format_args!(
            "{edited} files changed inside their bodies or at their ends only: resolved them and {naming} files naming what was added or removed, and spliced their records into the previous output"
        ));
    }
    progress.say(format_args!(
        "{files_seen} files ({parsed} parsed, {cached} cached, {skipped} skipped), {nodes} nodes, {edges} edges, {diagnostics} diagnostics in {:.2}s",
        progress.elapsed()
    ));
    Ok(exit::OK)
}
