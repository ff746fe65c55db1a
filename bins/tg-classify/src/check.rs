//! `tg-classify --check`: is the config valid, and what does each layer match?

use crate::cli::Cli;
use serde::Serialize;
use std::io::IsTerminal;
use tg_shared::exit;
use tg_shared::layers::{ConfigError, LayerConfig, NodeView};
use tg_shared::record::Record;
use tg_shared::stage::{Failure, Input, StreamCheck};

/// Example ids shown per layer.
const EXAMPLES: usize = 5;

#[derive(Debug, Serialize)]
struct CheckReport {
    valid: bool,
    format: &'static str,
    default_layer: String,
    /// Nodes read from the stream; absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<u64>,
    layers: Vec<LayerMatch>,
    /// Layers (other than the default) that match no node of the stream.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unmatched_layers: Vec<String>,
}

#[derive(Debug, Serialize)]
struct LayerMatch {
    id: String,
    name: String,
    order: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    examples: Vec<String>,
}

pub fn run(cli: &Cli, config: Option<&LayerConfig>) -> Result<(), Failure> {
    let Some(config) = config else {
        return Err(Failure::new(
            exit::NO_INPUT,
            ".tldrgraph/layers.config.yaml does not exist: nothing to check",
        )
        .with_hint("write the config first; .tldrgraph/AGENT_CONTRACT.md shows the schema"));
    };
    let mut layers: Vec<LayerMatch> = config
        .layers
        .iter()
        .map(|l| LayerMatch {
            id: l.id.clone(),
            name: l.name.clone(),
            order: l.order,
            nodes: None,
            examples: Vec::new(),
        })
        .collect();
    let mut nodes = None;
    if cli.stream.input.is_some() || !std::io::stdin().is_terminal() {
        let mut input = Input::open(cli.stream.input.as_deref())?;
        let mut stream = StreamCheck::default();
        let mut seen = 0u64;
        let mut counts = vec![0u64; layers.len()];
        while let Some(item) = input.next_item(&mut stream) {
            seen += 1;
            if let Some(Record::Node(node)) = item?.record {
                let index = config.classify(&NodeView {
                    id: &node.id,
                    kind: node.kind,
                    name: &node.name,
                    file: &node.file,
                });
                counts[index] += 1;
                if layers[index].examples.len() < EXAMPLES {
                    layers[index].examples.push(node.id);
                }
            }
        }
        // No stream at all (stdin closed or empty) is "no stream", not an error.
        if seen > 0 {
            stream.finish(&input.name)?;
            nodes = Some(counts.iter().sum());
            for (layer, count) in layers.iter_mut().zip(counts) {
                layer.nodes = Some(count);
            }
        }
    }
    let default_layer = config.layers[config.default].id.clone();
    let unmatched_layers = layers
        .iter()
        .filter(|l| l.nodes == Some(0) && l.id != default_layer)
        .map(|l| l.id.clone())
        .collect();
    let report = CheckReport {
        valid: true,
        format: crate::report::config_name(config, true),
        default_layer,
        nodes,
        layers,
        unmatched_layers,
    };
    let text = if cli.json {
        serde_json::to_string(&report).map_err(|e| {
            Failure::new(exit::SOFTWARE, format!("cannot serialise the report: {e}"))
        })?
    } else {
        human(&report)
    };
    let mut out = tg_shared::stage::Output::new(None);
    out.line(text.trim_end())?;
    out.finish()
}

/// `--check --json` on an invalid config: the error as JSON on stdout, then exit 65.
pub fn report_invalid(err: &ConfigError) -> Result<(), Failure> {
    let report = serde_json::json!({
        "valid": false,
        "file": err.file.display().to_string(),
        "line": err.line,
        "column": err.column,
        "error": err.message,
        "hint": err.hint,
    });
    let mut out = tg_shared::stage::Output::new(None);
    out.line(&report.to_string())?;
    out.finish()?;
    Err(Failure::new(exit::DATA, err.to_string()).with_hint(err.hint.clone()))
}

fn human(report: &CheckReport) -> String {
    let mut text = format!(
        "layers config: valid ({} format, {} layers, default `{}`)\n",
        report.format,
        report.layers.len(),
        report.default_layer
    );
    for layer in &report.layers {
        let count = match layer.nodes {
            Some(n) => format!(": {n} nodes"),
            None => String::new(),
        };
        text.push_str(&format!(
            "  {:<16} order {:<4} {}{count}\n",
            layer.id, layer.order, layer.name
        ));
        for example in &layer.examples {
            text.push_str(&format!("      {example}\n"));
        }
    }
    for id in &report.unmatched_layers {
        text.push_str(&format!("warning: layer `{id}` matches no node\n"));
    }
    if report.nodes.is_none() {
        text.push_str("(pipe a stream in to see what each layer matches: tg-extract . | tg-classify --check)\n");
    }
    text
}
