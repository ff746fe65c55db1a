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
pub mod resolve;
pub mod walk;

use cache::{CacheEntryRef, CacheView, ExtractCache};
use cli::Cli;
use extract::Outcome;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tg_shared::exit;
use tg_shared::ndjson::RecordWriter;
use tg_shared::record::{EdgeKind, Header, Record, Summary};
use tg_shared::store::{self, Store};

/// A failure that ends the run, with its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// The git top level above `dir`, if any.
fn git_top_level(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
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

/// Runs the extraction; returns the exit code.
pub fn run(cli: Cli) -> Result<i32, Failure> {
    let started = Instant::now();
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the current directory: {e}")))?;
    let root = match &cli.root {
        Some(root) => canonical(&cwd.join(root), "root")?,
        None => canonical(&git_top_level(&cwd).unwrap_or_else(|| cwd.clone()), "root")?,
    };
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
    let full_walk = starts.is_empty() || starts.iter().any(|s| *s == root);
    if starts.is_empty() {
        starts.push(root.clone());
    }
    let excludes =
        walk::compile_excludes(&cli.exclude).map_err(|e| Failure::new(exit::USAGE, e))?;
    if let Some(threads) = cli.threads {
        // Ignored if a pool already exists (only in tests that call run twice).
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build_global();
    }

    let store = Store::at_root(&root);
    let mut lock = None;
    let mut cache = ExtractCache::empty();
    if !cli.no_cache {
        match store.lock() {
            Ok(held) => {
                lock = Some(held);
                let (loaded, note) = ExtractCache::load(&store.extract_cache_path());
                cache = loaded;
                if let (Some(note), false) = (note, cli.quiet) {
                    eprintln!("tg-extract: {note}");
                }
            }
            Err(err) => {
                if !cli.quiet {
                    eprintln!(
                        "tg-extract: cache disabled: cannot lock {}: {err}",
                        store.dir().display()
                    );
                }
            }
        }
    }

    let walked = walk::walk(&root, &starts, &excludes);
    let files_seen = walked.files.len() as u64;
    let extracted = extract::extract_all(walked.files, cli.max_file_size, &mut cache);

    let (mut parsed, mut cached, mut skipped) = (0u64, 0u64, 0u64);
    for item in &extracted {
        match &item.outcome {
            Outcome::Ready {
                from_cache: true, ..
            } => cached += 1,
            Outcome::Ready { .. } => parsed += 1,
            Outcome::Skipped => skipped += 1,
        }
    }
    if lock.is_some() {
        // A partial walk keeps the entries of files it did not visit; a full walk drops the
        // entries of files that are gone.
        let dirty = parsed > 0 || (full_walk && !cache.entries.is_empty());
        if dirty {
            let mut entries: BTreeMap<&str, CacheEntryRef> = BTreeMap::new();
            if !full_walk {
                for (path, entry) in &cache.entries {
                    entries.insert(
                        path,
                        CacheEntryRef {
                            hash: &entry.hash,
                            facts: &entry.facts,
                        },
                    );
                }
            }
            for item in &extracted {
                if let Outcome::Ready { hash, facts, .. } = &item.outcome {
                    entries.insert(&item.rel, CacheEntryRef { hash, facts });
                }
            }
            let view = CacheView {
                stamp: cache::stamp(),
                entries,
            };
            if let Err(err) = view.save(&store.extract_cache_path()) {
                if !cli.quiet {
                    eprintln!("tg-extract: {err}");
                }
            }
        }
    }

    let graph = graph::build(&extracted, walked.diagnostics);
    drop(extracted);
    let nodes: u64 = graph.files.iter().map(|(_, n)| n.len() as u64).sum();
    let mut counts: BTreeMap<String, Value> = BTreeMap::new();
    let mut put = |name: &str, value: u64| {
        counts.insert(name.to_string(), Value::from(value));
    };
    put("files_seen", files_seen);
    put("parsed", parsed);
    put("cached", cached);
    put("skipped", skipped);
    put("nodes", nodes);
    put("edges", graph.edges.len() as u64);
    for kind in EdgeKind::ALL {
        let n = graph.edges.iter().filter(|e| e.kind == kind).count() as u64;
        put(&format!("edges_{}", kind.as_str()), n);
    }
    put("diagnostics", graph.diagnostics.len() as u64);
    put("imports_external", graph.stats.imports_external);
    put("calls_unresolved", graph.stats.calls_unresolved);
    let summary = Summary {
        stage: "tg-extract".to_string(),
        counts,
    };

    let write_all = |out: &mut dyn Write| -> io::Result<()> {
        let mut writer = RecordWriter::new(out);
        writer.write(&Record::Header(Header::new(concat!(
            "tg-extract ",
            env!("CARGO_PKG_VERSION")
        ))))?;
        for (file, nodes) in &graph.files {
            writer.write(&Record::File(file.clone()))?;
            for node in nodes {
                writer.write(&Record::Node(node.clone()))?;
            }
        }
        for edge in &graph.edges {
            writer.write(&Record::Edge(edge.clone()))?;
        }
        for diagnostic in &graph.diagnostics {
            writer.write(&Record::Diagnostic(diagnostic.clone()))?;
        }
        writer.write(&Record::Summary(summary.clone()))?;
        writer.flush()
    };
    match &cli.output {
        Some(path) => {
            let mut bytes = Vec::new();
            write_all(&mut bytes).map_err(|e| Failure::new(exit::SOFTWARE, e.to_string()))?;
            let path = cwd.join(path);
            store::write_if_changed(&path, &bytes).map_err(|e| {
                Failure::new(
                    exit::CANT_CREATE,
                    format!("cannot write {}: {e}", path.display()),
                )
            })?;
        }
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
            match write_all(&mut out) {
                Ok(()) => {}
                // `tg-extract . | head` is a success, not an error.
                Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(exit::OK),
                Err(err) => {
                    return Err(Failure::new(
                        exit::IO,
                        format!("cannot write to stdout: {err}"),
                    ))
                }
            }
        }
    }
    drop(lock);
    if !cli.quiet {
        eprintln!(
            "tg-extract: {files_seen} files ({parsed} parsed, {cached} cached, {skipped} skipped), {nodes} nodes, {} edges, {} diagnostics in {:.2}s",
            graph.edges.len(),
            graph.diagnostics.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(exit::OK)
}
