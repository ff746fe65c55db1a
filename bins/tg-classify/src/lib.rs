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
use std::collections::BTreeMap;
use tg_shared::artifacts;

use tg_shared::contract::{self, NeedsLayers};
use tg_shared::exit;
use tg_shared::layers::{self, LayerConfig};
use tg_shared::record::{LayerRecord, Record, Summary};
use tg_shared::stage::{Failure, Input, Output, StreamCheck};
use tg_shared::store::{self, STORE_DIR};

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-classify";

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

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let (cwd, store) = tg_shared::stage::workspace(cli.root.as_deref())?;
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

    let mut input = Input::open(cli.input.as_deref())?;
    let mut output = Output::new(cli.output.as_deref());
    let mut tally = Tally::new(config.layers.len());
    if has_config {
        tally.overrides = layer_overrides(&store, &config, cli.quiet)?;
    }
    let mut stream = StreamCheck::default();
    // tg-extract's word on an empty walk, for the needs_layers payload.
    let mut no_sources: Option<String> = None;
    while let Some(item) = input.next_item(&mut stream) {
        let item = item?;
        if let Some(Record::Diagnostic(diagnostic)) = &item.record {
            if diagnostic.code == tg_shared::record::NO_SOURCES {
                no_sources = Some(diagnostic.message.clone());
            }
        }
        match &item.record {
            Some(Record::Node(node)) => {
                let line = classify::node_line(&config, &mut tally, node, &item.raw);
                output.line(&line)?;
            }
            Some(Record::Edge(edge)) => {
                let line = classify::edge_line(&config, &mut tally, edge, &item.raw);
                output.line(&line)?;
            }
            Some(Record::File(file)) => {
                tally.files.insert(file.path.clone(), file.lines);
                output.line(&item.raw)?;
            }
            // Ours, from an earlier tg-classify in the same pipeline: replaced below.
            Some(Record::Layer(_)) => {}
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {}
            Some(Record::Summary(summary)) if summary.stage == STAGE => {}
            _ => output.line(&item.raw)?,
        }
        if output.is_closed() {
            // The reader went away: a success, but the stream was not seen whole.
            return Ok(());
        }
    }
    stream.finish(&input.name)?;

    // The artifacts first: if they cannot be written, the stream stays without its summary
    // and the stages after this one commit nothing either.
    let directories = overview::top_directories(&tally);
    let markdown = overview::symbols_markdown(&tally, &directories, has_config.then_some(&config));
    let layers_report = report::build(&config, has_config, &mut tally);
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
            directories: directories.clone(),
            next_action: contract::NEEDS_LAYERS_ACTION.to_string(),
            symbols_overview: format!("{STORE_DIR}/{}", artifacts::SYMBOLS),
            config_path: format!("{STORE_DIR}/{}", artifacts::LAYERS_CONFIG),
            no_sources: no_sources.clone(),
        };
        output.record(&Record::Status(contract::status(
            contract::NEEDS_LAYERS,
            &payload,
        )))?;
    }
    let mut summary = BTreeMap::new();
    summary.insert(
        "config".to_string(),
        report::config_name(&config, has_config).into(),
    );
    summary.insert("layers".to_string(), (config.layers.len() as u64).into());
    summary.insert("nodes".to_string(), (tally.nodes.len() as u64).into());
    summary.insert(
        "cross_layer_edges".to_string(),
        tally.cross_layer_edges.into(),
    );
    summary.insert("violations".to_string(), tally.violation_count.into());
    summary.insert(
        "violations_ambiguous".to_string(),
        tally.ambiguous_violation_count.into(),
    );
    output.record(&Record::Summary(Summary {
        stage: STAGE.to_string(),
        counts: summary,
    }))?;
    output.finish()?;

    if !cli.quiet {
        eprintln!(
            "tg-classify: {} nodes in {} layer(s), {} cross-layer edges, {} violations",
            tally.nodes.len(),
            config.layers.len(),
            tally.cross_layer_edges,
            tally.violation_count
        );
    }
    Ok(())
}
