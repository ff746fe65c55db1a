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
pub mod report;

use classify::Tally;
use cli::Cli;
use serde_json::Value;
use tg_shared::artifacts;
use tg_shared::contract::{self, DirectoryCount, NeedsLayers};
use tg_shared::exit;
use tg_shared::layers::{self, LayerConfig};
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

/// Classifies the stream as it passes through: nodes gain their layer, edges their marks.
/// Returns `None` when the reader went away (a success, but the stream was not seen whole),
/// else tg-extract's word on an empty walk, for the needs_layers payload.
fn classify_stream(
    config: &LayerConfig,
    tally: &mut Tally,
    input: &mut Input,
    output: &mut Output,
) -> Result<Option<Option<String>>, Failure> {
    let mut stream = StreamCheck::default();
    let mut no_sources: Option<String> = None;
    while let Some(item) = input.next_item(&mut stream) {
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
            Some(Record::Diagnostic(diagnostic))
                if diagnostic.code == tg_shared::record::NO_SOURCES =>
            {
                no_sources = Some(diagnostic.message.clone());
                output.line(&item.raw)?;
            }
            record if OWNED.owns(record.as_ref()) => {}
            _ => output.line(&item.raw)?,
        }
        if output.is_closed() {
            return Ok(None);
        }
    }
    stream.finish(&input.name)?;
    Ok(Some(no_sources))
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
    let Some(no_sources) = classify_stream(&config, &mut tally, &mut input, &mut output)? else {
        return Ok(());
    };
    let directories = overview::top_directories(&tally);
    write_artifacts(&store, &config, has_config, &mut tally, &directories)?;

    let counts = tally.layer_counts(config.layers.len());
    for (index, layer) in config.layers.iter().enumerate() {
        output.record(&Record::Layer(LayerRecord {
            id: layer.id.clone(),
            name: layer.name.clone(),
            order: layer.order,
            nodes: counts[index],
            description: layer.description.clone(),
            may_depend_on: layer.may_depend_on.clone(),
            default: index == config.default && has_config,
        }))?;
    }
    if !has_config {
        output.record(&needs_layers(&tally, &directories, no_sources))?;
    }
    output.record(&stage::summary(
        STAGE,
        [
            (
                "config",
                Value::from(report::config_name(&config, has_config)),
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
    ))?;
    output.finish()?;
    progress.say(format_args!(
        "{} nodes in {} layer(s), {} cross-layer edges, {} violations",
        tally.nodes.len(),
        config.layers.len(),
        tally.cross_layer_edges,
        tally.violation_count
    ));
    Ok(())
}
