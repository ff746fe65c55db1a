//! `.tldrgraph/layers.yaml`: per layer, what it holds and how it depends on the others.

use crate::classify::Tally;
use serde::Serialize;
use std::collections::BTreeMap;
use tg_shared::layers::{Format, LayerConfig};

/// Files listed per layer.
const TOP_FILES: usize = 5;
/// Violations listed per layer (all are counted).
const VIOLATION_SAMPLES: usize = 20;

#[derive(Debug, Serialize)]
pub struct LayersReport {
    /// `native`, `original` (the original tool's format) or `none` (no config: one bucket).
    pub config: &'static str,
    pub nodes: u64,
    /// Dependency edges (calls, imports, includes, inherits) between two layers.
    pub cross_layer_edges: u64,
    pub violations: u64,
    pub layers: Vec<LayerReport>,
}

#[derive(Debug, Serialize)]
pub struct LayerReport {
    pub id: String,
    pub name: String,
    pub order: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_depend_on: Option<Vec<String>>,
    pub nodes: u64,
    pub kinds: BTreeMap<String, u64>,
    /// Nodes by role (`product`, `test`, ...).
    pub roles: BTreeMap<String, u64>,
    pub top_files: Vec<FileCount>,
    /// Dependency edges from this layer to each other layer.
    pub depends_on: BTreeMap<String, u64>,
    /// Dependency edges from each other layer into this one.
    pub used_by: BTreeMap<String, u64>,
    pub violations: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violation_samples: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct FileCount {
    pub path: String,
    pub nodes: u64,
}

pub fn build(config: &LayerConfig, has_config: bool, tally: &mut Tally) -> LayersReport {
    let layer_count = config.layers.len();
    let mut kinds = vec![BTreeMap::<String, u64>::new(); layer_count];
    let mut files = vec![BTreeMap::<&str, u64>::new(); layer_count];
    let mut roles = vec![BTreeMap::<String, u64>::new(); layer_count];
    for node in &tally.nodes {
        *roles[node.layer]
            .entry(node.role.as_str().to_string())
            .or_default() += 1;
        *kinds[node.layer]
            .entry(node.kind.as_str().to_string())
            .or_default() += 1;
        *files[node.layer].entry(node.file.as_str()).or_default() += 1;
    }
    let mut used_by = vec![BTreeMap::<String, u64>::new(); layer_count];
    for (from, targets) in tally.cross.iter().enumerate() {
        for (to, count) in targets {
            used_by[*to].insert(config.layers[from].id.clone(), *count);
        }
    }
    let counts = tally.layer_counts(layer_count);
    let mut layers = Vec::with_capacity(layer_count);
    for (index, layer) in config.layers.iter().enumerate() {
        let mut top: Vec<(&str, u64)> = files[index].iter().map(|(f, n)| (*f, *n)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let violations = &mut tally.violations[index];
        violations.sort();
        layers.push(LayerReport {
            id: layer.id.clone(),
            name: layer.name.clone(),
            order: layer.order,
            default: index == config.default,
            may_depend_on: layer.may_depend_on.clone(),
            nodes: counts[index],
            kinds: std::mem::take(&mut kinds[index]),
            roles: std::mem::take(&mut roles[index]),
            top_files: top
                .into_iter()
                .take(TOP_FILES)
                .map(|(path, nodes)| FileCount {
                    path: path.to_string(),
                    nodes,
                })
                .collect(),
            depends_on: tally.cross[index]
                .iter()
                .map(|(to, n)| (config.layers[*to].id.clone(), *n))
                .collect(),
            used_by: std::mem::take(&mut used_by[index]),
            violations: violations.len() as u64,
            violation_samples: violations
                .iter()
                .take(VIOLATION_SAMPLES)
                .map(|v| {
                    format!(
                        "{} --{}--> {} (line {})",
                        v.src,
                        v.kind.as_str(),
                        v.dst,
                        v.line
                    )
                })
                .collect(),
        });
    }
    LayersReport {
        config: config_name(config, has_config),
        nodes: tally.nodes.len() as u64,
        cross_layer_edges: tally.cross_layer_edges,
        violations: tally.violation_count,
        layers,
    }
}

/// How the config was written: `native`, `original` (the original tool's format) or `none`.
pub fn config_name(config: &LayerConfig, has_config: bool) -> &'static str {
    match (has_config, config.format) {
        (false, _) => "none",
        (true, Format::Native) => "native",
        (true, Format::Original) => "original",
    }
}

/// The report as YAML, with a line saying where it comes from.
pub fn to_yaml(report: &LayersReport) -> Result<String, String> {
    let body = tg_shared::yaml::to_string(report)?;
    Ok(format!(
        "# Written by tg-classify from .tldrgraph/layers.config.yaml and the graph; do not edit.\n{body}"
    ))
}
