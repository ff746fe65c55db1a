//! The original Python tldrgraph's (0.2.0) layer format, so its users can bring their config:
//!
//! ```yaml
//! utility_id: shared
//! layers:
//!   - id: api
//!     name: "Layer 1: API"
//!     order: 1
//!     rules:
//!       - file_contains: ["api/"]
//!         exclude_file: ["tests"]
//!       - label_ends_with: ["Handler"]
//!   - id: shared
//!     name: Shared
//!     order: 2
//!     rules: []
//! ```
//!
//! Semantics, as that tool applies them: layers are tried by `(order, id)`, the first matching rule
//! of any layer wins, unmatched nodes go to `utility_id`. Inside one rule the positive keys are
//! OR-ed and any exclusion vetoes: `(any positive) AND NOT (any exclusion)`; a rule without a
//! positive key matches nothing. Mapping onto our nodes:
//!
//! | key | matched against | how |
//! |---|---|---|
//! | `file_contains`, `exclude_file` | the file path, lowercased | substring, case-insensitive |
//! | `path_regex`, `exclude_path_regex` | the file path, lowercased | regex search, case-insensitive |
//! | `label_contains`, `exclude_label` | the label, lowercased | substring, case-insensitive |
//! | `label_ends_with`, `exclude_label_ends_with` | the label, lowercased | suffix, case-insensitive |
//! | `label_regex` | the label, lowercased | regex search, case-insensitive |
//! | `type_in` | our node kind (`function`, `class`, ...) | exact |
//! | `id_prefix` | our id (`path::Qualified.Name`) | prefix, case-sensitive |
//! | `id_regex` | our id | regex search, case-insensitive |
//!
//! The label is spelled as that tool spelled it: `name()` for a function or macro, `.name()` for
//! a method, the bare name otherwise (a module's label is its file name). Its ids were lowercased
//! paths joined by `_`, so `id_prefix`/`id_regex` values need rewriting for our ids; its `type`
//! values (`external`, ...) have no counterpart here, so `type_in` takes our kinds instead.
//! Unlike that tool, an unknown rule key is an error rather than silently dropped.

use super::{finish, Ctx, Format, Layer, LayerConfig, Matcher, NodeView, OneOrMany};
use crate::layers::ConfigError;
use crate::record::NodeKind;
use crate::yaml;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    utility_id: String,
    layers: Vec<RawLayer>,
    /// Written by that tool on save, never checked by it.
    #[serde(default)]
    #[allow(dead_code)]
    version: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    id: String,
    name: String,
    order: i64,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    rules: Vec<RawRule>,
    /// Our extension, accepted here too.
    #[serde(default)]
    may_depend_on: Option<OneOrMany>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    file_contains: Option<OneOrMany>,
    exclude_file: Option<OneOrMany>,
    label_contains: Option<OneOrMany>,
    exclude_label: Option<OneOrMany>,
    label_ends_with: Option<OneOrMany>,
    exclude_label_ends_with: Option<OneOrMany>,
    type_in: Option<OneOrMany>,
    id_prefix: Option<OneOrMany>,
    path_regex: Option<String>,
    exclude_path_regex: Option<String>,
    label_regex: Option<String>,
    id_regex: Option<String>,
}

/// One compiled rule.
#[derive(Debug, Default)]
pub struct Rule {
    file_contains: Vec<String>,
    exclude_file: Vec<String>,
    label_contains: Vec<String>,
    exclude_label: Vec<String>,
    label_ends_with: Vec<String>,
    exclude_label_ends_with: Vec<String>,
    type_in: Vec<NodeKind>,
    id_prefix: Vec<String>,
    path_regex: Option<Regex>,
    exclude_path_regex: Option<Regex>,
    label_regex: Option<Regex>,
    id_regex: Option<Regex>,
}

/// The label that tool gave a node.
pub fn label(node: &NodeView) -> String {
    match node.kind {
        NodeKind::Function | NodeKind::Macro => format!("{}()", node.name),
        NodeKind::Method => format!(".{}()", node.name),
        _ => node.name.to_string(),
    }
}

impl Rule {
    pub fn matches(&self, node: &NodeView) -> bool {
        let path = node.file.to_lowercase();
        let label = label(node).to_lowercase();
        let excluded = self.exclude_file.iter().any(|n| path.contains(n.as_str()))
            || self
                .exclude_path_regex
                .as_ref()
                .is_some_and(|r| r.is_match(&path))
            || self
                .exclude_label
                .iter()
                .any(|n| label.contains(n.as_str()))
            || self
                .exclude_label_ends_with
                .iter()
                .any(|n| label.ends_with(n.as_str()));
        if excluded {
            return false;
        }
        self.file_contains.iter().any(|n| path.contains(n.as_str()))
            || self.path_regex.as_ref().is_some_and(|r| r.is_match(&path))
            || self
                .label_contains
                .iter()
                .any(|n| label.contains(n.as_str()))
            || self
                .label_ends_with
                .iter()
                .any(|n| label.ends_with(n.as_str()))
            || self
                .label_regex
                .as_ref()
                .is_some_and(|r| r.is_match(&label))
            || self.type_in.contains(&node.kind)
            || self
                .id_prefix
                .iter()
                .any(|p| node.id.starts_with(p.as_str()))
            || self.id_regex.as_ref().is_some_and(|r| r.is_match(node.id))
    }
}

pub(crate) fn parse(ctx: &Ctx) -> Result<LayerConfig, ConfigError> {
    let raw: RawConfig = yaml::from_str(ctx.text).map_err(|e| ctx.yaml(e, &[]))?;
    let mut layers = Vec::with_capacity(raw.layers.len());
    for raw_layer in raw.layers {
        let rules = raw_layer
            .rules
            .into_iter()
            .map(|r| compile_rule(ctx, r))
            .collect::<Result<Vec<_>, _>>()?;
        layers.push(Layer {
            id: raw_layer.id,
            name: raw_layer.name,
            order: raw_layer.order,
            description: raw_layer.description,
            may_depend_on: raw_layer.may_depend_on.map(OneOrMany::into_vec),
            role: None,
            matcher: if rules.is_empty() {
                Matcher::Nothing
            } else {
                Matcher::Original(rules)
            },
        });
    }
    finish(ctx, Format::Original, layers, &raw.utility_id, "utility_id")
}

fn lower(list: Option<OneOrMany>) -> Vec<String> {
    list.map(OneOrMany::into_vec)
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.to_lowercase())
        .collect()
}

fn compile_rule(ctx: &Ctx, raw: RawRule) -> Result<Rule, ConfigError> {
    let regex = |key: &str, pattern: Option<String>| -> Result<Option<Regex>, ConfigError> {
        let Some(pattern) = pattern else {
            return Ok(None);
        };
        RegexBuilder::new(&pattern)
            .case_insensitive(true)
            .build()
            .map(Some)
            .map_err(|e| {
                let first = e.to_string();
                let reason = first.lines().last().unwrap_or("invalid regex").trim();
                ctx.error(
                    ctx.at(key, &pattern, 0),
                    format!("invalid regex {pattern:?} in `{key}`: {reason}"),
                    "write a Rust/Python-compatible regex, e.g. \"^src/api/\"".to_string(),
                )
            })
    };
    let type_in = raw
        .type_in
        .map(OneOrMany::into_vec)
        .unwrap_or_default()
        .iter()
        .map(|name| super::parse_kind(ctx, "type_in", name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Rule {
        file_contains: lower(raw.file_contains),
        exclude_file: lower(raw.exclude_file),
        label_contains: lower(raw.label_contains),
        exclude_label: lower(raw.exclude_label),
        label_ends_with: lower(raw.label_ends_with),
        exclude_label_ends_with: lower(raw.exclude_label_ends_with),
        type_in,
        id_prefix: raw.id_prefix.map(OneOrMany::into_vec).unwrap_or_default(),
        path_regex: regex("path_regex", raw.path_regex)?,
        exclude_path_regex: regex("exclude_path_regex", raw.exclude_path_regex)?,
        label_regex: regex("label_regex", raw.label_regex)?,
        id_regex: regex("id_regex", raw.id_regex)?,
    })
}
