//! tg-classify: the layer of every node, the edges that cross layers or break `may_depend_on`,
//! and the overview an agent designs layers from (the agent contract's `needs_layers`).
//!
//! Stream: every input record passes through in order; nodes gain `layer`; dependency edges
//! (`calls`, `imports`, `includes`, `inherits`) between two layers gain `cross_layer: true`, and
//! `violation: true` where the source layer's `may_depend_on` forbids the target layer
//! (`contains` is structure and is never marked). At the end come one `layer` record per layer,
//! the `needs_layers` status when there is no config, and this stage's `summary`. The layer,
//! `needs_layers` and summary records of an earlier tg-classify are dropped, so running the
//! stage twice in a pipeline gives the same bytes as running it once.

pub mod check;
pub mod classify;
pub mod cli;
pub mod overview;
pub mod patched;
pub mod report;
pub mod state;

use classify::Tally;
use cli::Cli;
use serde_json::Value;
use tg_shared::artifacts;
use tg_shared::contract::{self, DirectoryCount, NeedsLayers};
use tg_shared::exit;
use tg_shared::layers::{self, LayerConfig};
use tg_shared::ndjson::Item;
use tg_shared::patch::{Opened, Patch};
use tg_shared::record::{LayerRecord, Record};
use tg_shared::stage::{self, Failure, Input, Output, Owned, Progress, StreamCheck};
use tg_shared::store::{self, STORE_DIR};

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-classify";

/// What this stage appends: an earlier tg-classify's are replaced.
const OWNED: Owned = Owned {
    stage: STAGE,
    status: contract::NEEDS_LAYERS,
    types: &["layer"],
    diagnostics: &[],
};

/// Layers the agent assigned with its intents (`layer` in `.tldrgraph/intents.ndjson`), by node
/// id; one naming a layer the config no longer has is ignored, with a warning.
fn layer_overrides(
    store: &tg_shared::store::Store,
    config: &LayerConfig,
    quiet: bool,
) -> Result<rustc_hash::FxHashMap<String, usize>, Failure> {
    let path = store.path(artifacts::INTENTS);
    let intents = tg_shared::intents::IntentStore::load(&path)
        .map_err(|message| Failure::new(tg_shared::exit::DATA, message))?;
    let mut overrides = rustc_hash::FxHashMap::default();
    for entry in intents.entries() {
        let Some(layer) = &entry.layer else { continue };
        match config.layers.iter().position(|l| &l.id == layer) {
            Some(index) => {
                overrides.insert(entry.id.clone(), index);
            }
            None if !quiet => eprintln!(
                "tg-classify: warning: {}: the layer `{layer}` given to {} is not in the config; ignored",
                path.display(),
                entry.id
            ),
            None => {}
        }
    }
    Ok(overrides)
}

/// Classifies the stream after its `header` as it passes through: nodes gain their layer,
/// edges their marks. Returns `None` when the reader went away (a success, but the stream was
/// not seen whole), else tg-extract's word on an empty walk, for the needs_layers payload.
fn classify_stream(
    (config, key): (&LayerConfig, &str),
    tally: &mut Tally,
    (header, mut stream): (Item, StreamCheck),
    input: &mut Input,
    output: &mut Output,
) -> Result<Option<Option<String>>, Failure> {
    let mut no_sources: Option<String> = None;
    let mut next = Some(Ok(header));
    while let Some(item) = next {
        let item = item?;
        match &item.record {
            Some(Record::Node(node)) => {
                let line = classify::node_line(config, tally, node, &item.raw);
                output.line(&line)?;
            }
            Some(Record::Edge(edge)) => {
                let line = classify::edge_line(config, tally, edge, &item.raw);
                output.line(&line)?;
            }
            Some(Record::File(file)) => {
                tally.files.insert(file.path.clone(), file.lines);
                output.line(&item.raw)?;
            }
            // The stream this stage writes depends on its config as well as on its input.
            Some(Record::Header(_)) => {
                output.line(&tg_shared::patch::folded_header(&item.raw, key))?
            }
            record => {
                if passed_through(record.as_ref(), &mut no_sources) {
                    output.line(&item.raw)?;
                }
            }
        }
        if output.is_closed() {
            return Ok(None);
        }
        next = input.next_item(&mut stream);
    }
    stream.finish(&input.name)?;
    Ok(Some(no_sources))
}

/// Whether a record other than a file, node or edge passes through (an earlier tg-classify's
/// own records do not); tg-extract's word on an empty walk is kept in `no_sources`.
fn passed_through(record: Option<&Record>, no_sources: &mut Option<String>) -> bool {
    match record {
        Some(Record::Diagnostic(diagnostic))
            if diagnostic.code == tg_shared::record::NO_SOURCES =>
        {
            *no_sources = Some(diagnostic.message.clone());
            true
        }
        record => !OWNED.owns(record),
    }
}

/// Writes `layers.yaml` and `symbols.md` under the store's lock. The artifacts come before the
/// stream's end: if they cannot be written, the stream stays without its summary and the
/// stages after this one commit nothing either.
fn write_artifacts(
    store: &tg_shared::store::Store,
    config: &LayerConfig,
    has_config: bool,
    tally: &mut Tally,
    directories: &[DirectoryCount],
) -> Result<(), Failure> {
    let markdown = overview::symbols_markdown(tally, directories, has_config.then_some(config));
    let layers_report = report::build(config, has_config, tally);
    let yaml = report::to_yaml(&layers_report).map_err(|e| {
        Failure::new(
            exit::SOFTWARE,
            format!("cannot serialise {}: {e}", artifacts::LAYERS_REPORT),
        )
    })?;
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    for (name, bytes) in [
        (artifacts::LAYERS_REPORT, yaml.as_bytes()),
        (artifacts::SYMBOLS, markdown.as_bytes()),
    ] {
        let path = store.path(name);
        store::write_if_changed(&path, bytes).map_err(|e| Failure::cant_write(&path, &e))?;
    }
    Ok(())
}

/// The `needs_layers` status of a repository without a layers config.
fn needs_layers(
    tally: &Tally,
    directories: &[DirectoryCount],
    no_sources: Option<String>,
) -> Record {
    let symbols = tally
        .nodes
        .iter()
        .filter(|n| n.kind != tg_shared::record::NodeKind::Module)
        .count() as u64;
    let payload = NeedsLayers {
        reason: format!(
            "{STORE_DIR}/{} does not exist: the layers of this repository are not designed yet",
            artifacts::LAYERS_CONFIG
        ),
        extracted_symbols_count: symbols,
        top_directories: directories.iter().map(|d| d.path.clone()).collect(),
        directories: directories.to_vec(),
        next_action: contract::NEEDS_LAYERS_ACTION.to_string(),
        symbols_overview: format!("{STORE_DIR}/{}", artifacts::SYMBOLS),
        config_path: format!("{STORE_DIR}/{}", artifacts::LAYERS_CONFIG),
        no_sources,
    };
    Record::Status(contract::status(contract::NEEDS_LAYERS, &payload))
}

/// What this stage appends to the stream: a record per layer, `needs_layers` without a config,
/// and its summary.
fn tail_records(
    config: &LayerConfig,
    has_config: bool,
    tally: &Tally,
    directories: &[DirectoryCount],
    no_sources: Option<String>,
) -> Vec<Record> {
    let counts = tally.layer_counts(config.layers.len());
    let mut records: Vec<Record> = (config.layers.iter().enumerate())
        .map(|(index, layer)| {
            Record::Layer(LayerRecord {
                id: layer.id.clone(),
                name: layer.name.clone(),
                order: layer.order,
                nodes: counts[index],
                description: layer.description.clone(),
                may_depend_on: layer.may_depend_on.clone(),
                default: index == config.default && has_config,
            })
        })
        .collect();
    if !has_config {
        records.push(needs_layers(tally, directories, no_sources));
    }
    records.push(stage::summary(
        STAGE,
        [
            (
                "config",
                Value::from(report::config_name(config, has_config)),
            ),
            ("layers", (config.layers.len() as u64).into()),
            ("nodes", (tally.nodes.len() as u64).into()),
            ("cross_layer_edges", tally.cross_layer_edges.into()),
            ("violations", tally.violation_count.into()),
            (
                "violations_ambiguous",
                tally.ambiguous_violation_count.into(),
            ),
        ],
    ));
    records
}

/// The classified stream's configuration: the config, whether the repository has one, and
/// the key of both with the agent's layers ([`state::settings_key`]).
struct Settings {
    config: LayerConfig,
    has_config: bool,
    key: String,
}

/// Applies a patch to the state of its base stream and writes this stage's patch; the tally
/// of the patched stream, or `None` when the reader went away (then nothing is committed, as
/// for a whole stream).
fn run_patch(
    (store, progress): (&tg_shared::store::Store, &Progress),
    settings: &Settings,
    overrides: rustc_hash::FxHashMap<String, usize>,
    patch: Patch,
    output: &mut Output,
) -> Result<Option<Tally>, Failure> {
    let config = &settings.config;
    progress.phase("patch read");
    let mut tally = state::load(store, &patch.of.base, &settings.key)?;
    progress.phase("state load");
    tally.overrides = overrides;
    let applied = patched::apply(config, &mut tally, &patch)?;
    progress.phase("apply");
    let header = tg_shared::patch::folded_header(&patch.header, &settings.key);
    let head =
        [&applied.removed, &applied.added].map(|lines| lines.iter().map(String::as_str).collect());
    tg_shared::patch::write_head(output, &header, head)?;
    let mut no_sources = None;
    for item in &patch.tail {
        if passed_through(item.record.as_ref(), &mut no_sources) {
            output.line(&item.raw)?;
        }
    }
    if output.is_closed() {
        return Ok(None);
    }
    let directories = overview::top_directories(&tally);
    write_artifacts(store, config, settings.has_config, &mut tally, &directories)?;
    progress.phase("artifacts");
    let has_config = settings.has_config;
    for record in tail_records(config, has_config, &tally, &directories, no_sources) {
        output.record(&record)?;
    }
    Ok(Some(tally))
}

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let (cwd, store) = cli.stage.workspace()?;
    let config = match layers::load_repo_config(&cwd, &store, cli.config.as_deref()) {
        Ok(config) => config,
        Err(layers::ConfigProblem::Invalid(err)) if cli.check && cli.json => {
            return check::report_invalid(&err)
        }
        Err(problem) => return Err(problem.into()),
    };
    if cli.check {
        return check::run(cli, config.as_ref());
    }
    let has_config = config.is_some();
    let config = config.unwrap_or_else(LayerConfig::unclassified);

    let mut input = Input::open(cli.stream.input.as_deref())?.metered(&progress);
    let mut output = Output::new(cli.stream.output.as_deref());
    let mut tally = Tally::new(config.layers.len());
    if has_config {
        tally.overrides = layer_overrides(&store, &config, cli.stage.quiet)?;
    }
    let settings = Settings {
        key: state::settings_key(&config, has_config, &tally.overrides),
        config,
        has_config,
    };
    let config = &settings.config;
    let (header, stream, fingerprint) = match tg_shared::patch::open(&mut input)? {
        Opened::Patch(patch) => {
            let result = patch.of.result.clone();
            let overrides = std::mem::take(&mut tally.overrides);
            let patched = (&store, &progress);
            let Some(tally) = run_patch(patched, &settings, overrides, patch, &mut output)? else {
                return Ok(());
            };
            output.finish()?;
            report(&progress, config, &tally);
            progress.phase("patch written");
            state::save(&store, Some(&result), settings.key, tally);
            progress.phase("state save");
            return Ok(());
        }
        Opened::Whole {
            header,
            check,
            stream,
        } => (*header, check, stream),
    };
    let read = (header, stream);
    let classified = (config, settings.key.as_str());
    let Some(no_sources) = classify_stream(classified, &mut tally, read, &mut input, &mut output)?
    else {
        return Ok(());
    };
    let directories = overview::top_directories(&tally);
    write_artifacts(&store, config, has_config, &mut tally, &directories)?;
    for record in tail_records(config, has_config, &tally, &directories, no_sources) {
        output.record(&record)?;
    }
    output.finish()?;
    report(&progress, config, &tally);
    progress.phase("stream");
    state::save(&store, fingerprint.as_deref(), settings.key, tally);
    progress.phase("state save");
    Ok(())
}

/// The one line a run says of what it classified.
fn report(progress: &Progress, config: &LayerConfig, tally: &Tally) {
    progress.say(format_args!(
        "{} nodes in {} layer(s), {} cross-layer edges, {} violations",
        tally.nodes.len(),
        config.layers.len(),
        tally.cross_layer_edges,
        tally.violation_count
    ));
}
