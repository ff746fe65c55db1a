//! `.tldrgraph/layers.config.yaml`: the architectural layers the agent designs for one repository.
//!
//! Two formats are read. Ours (version 1):
//!
//! ```yaml
//! version: 1
//! default_layer: shared            # symbols no rule matches land here
//! layers:
//!   - id: api
//!     name: HTTP API
//!     order: 1                     # lower order is checked first; the first matching layer wins
//!     description: Request handlers and routing
//!     paths: ["src/app/api/**", "!**/tests/**"]   # globs on the repo-relative path; ! excludes
//!     symbols: ["*Handler", "route_*"]              # globs on the name or qualified name
//!     kinds: [function, method]                     # node kinds
//!     may_depend_on: [services, models]             # edges to any other layer are violations
//!   - id: tests
//!     name: Tests
//!     order: 50
//!     paths: ["tests/**"]
//!     role: test                   # overrides the detected role of what this layer holds
//!   - id: shared
//!     name: Shared utilities
//!     order: 99
//! ```
//!
//! A top-level `exclude:` list of path globs leaves files out of the graph altogether (tg-extract
//! reads it; see [`repo_excludes`]).
//!
//! Within a layer, `paths`, `symbols` and `kinds` must all hold (each one given); a layer with none
//! of them matches nothing and only collects what falls through to it as `default_layer`.
//!
//! The original Python tldrgraph's format (`utility_id` and `rules:` lists) is read too, with that
//! tool's semantics; see [`original`]. Every error names the file, line and column, says what is
//! wrong and what to write instead.

mod locate;
pub mod original;

use crate::artifacts;
use crate::exit;
use crate::record::{NodeKind, Role};
use crate::stage::Failure;
use crate::store::{Store, STORE_DIR};
use crate::yaml;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The one bucket of a repository without a config.
pub const UNCLASSIFIED_ID: &str = "unclassified";

/// A config that cannot be used: where, what, and what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub hint: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for ConfigError {}

/// Which format a config was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Native,
    Original,
}

/// What a layer rule sees of a node.
#[derive(Debug, Clone, Copy)]
pub struct NodeView<'a> {
    pub id: &'a str,
    pub kind: NodeKind,
    pub name: &'a str,
    pub file: &'a str,
}

impl NodeView<'_> {
    /// The qualified name: the id after `path::` (the file path itself for a module).
    pub fn qualname(&self) -> &str {
        match self.id.split_once("::") {
            Some((_, qualified)) => qualified,
            None => self.id,
        }
    }
}

#[derive(Debug)]
enum Matcher {
    /// A layer without rules: only the default layer collects anything through it.
    Nothing,
    Globs(GlobRule),
    Original(Vec<original::Rule>),
}

#[derive(Debug)]
struct GlobRule {
    include: Option<GlobSet>,
    exclude: GlobSet,
    symbols: Option<GlobSet>,
    kinds: Option<Vec<NodeKind>>,
}

impl GlobRule {
    fn matches(&self, node: &NodeView) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(node.file))
            && !self.exclude.is_match(node.file)
            && self
                .symbols
                .as_ref()
                .is_none_or(|g| g.is_match(node.name) || g.is_match(node.qualname()))
            && self.kinds.as_ref().is_none_or(|k| k.contains(&node.kind))
    }
}

/// One validated layer.
#[derive(Debug)]
pub struct Layer {
    pub id: String,
    pub name: String,
    pub order: i64,
    pub description: Option<String>,
    /// `None`: this layer may depend on any other.
    pub may_depend_on: Option<Vec<String>>,
    /// `role:`: what the layer's symbols are for, whatever the language rule says.
    pub role: Option<Role>,
    matcher: Matcher,
}

impl Layer {
    fn matches(&self, node: &NodeView) -> bool {
        match &self.matcher {
            Matcher::Nothing => false,
            Matcher::Globs(rule) => rule.matches(node),
            Matcher::Original(rules) => rules.iter().any(|r| r.matches(node)),
        }
    }

    /// Whether a dependency from this layer onto `other` breaks `may_depend_on`.
    pub fn forbids(&self, other: &str) -> bool {
        other != self.id
            && self
                .may_depend_on
                .as_ref()
                .is_some_and(|allowed| !allowed.iter().any(|a| a == other))
    }
}

/// A validated config, layers sorted by `(order, id)`.
#[derive(Debug)]
pub struct LayerConfig {
    pub format: Format,
    pub layers: Vec<Layer>,
    /// Index into `layers` of the catch-all.
    pub default: usize,
    /// The `plan:` section: how tg-plan selects bottleneck symbols.
    pub plan: PlanSettings,
    /// `exclude:`: path globs left out of the graph.
    pub exclude: Vec<String>,
    /// The content hash of what the config says of layers: its parsed value without the
    /// `plan:` section, so comments, formatting and the plan's settings do not count (empty for
    /// [`LayerConfig::unclassified`]). What tg-classify writes depends on nothing else of it.
    pub layers_digest: String,
}

/// `plan:` in layers.config.yaml; every key optional. Read by tg-plan; flags override it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanSettings {
    /// Symbols shorter than this many lines that call nothing are trivial, never candidates.
    pub min_lines: u32,
    /// Consider symbols of the default (catch-all) layer too.
    pub include_default_layer: bool,
    /// Consider test code too.
    pub include_tests: bool,
    /// Stop adding symbols for cross-layer coverage once this share of cross-layer dependency
    /// edges has a selected endpoint.
    pub coverage: f64,
    /// Never select more than this share of the eligible symbols.
    pub max_share: f64,
    /// Never select more than this many symbols, however large the repository.
    pub max_symbols: u32,
}

impl Default for PlanSettings {
    fn default() -> Self {
        PlanSettings {
            min_lines: 3,
            include_default_layer: false,
            include_tests: false,
            coverage: 0.8,
            max_share: 1.0,
            max_symbols: 1000,
        }
    }
}

impl LayerConfig {
    /// The single `Unclassified` bucket of a repository without a config.
    pub fn unclassified() -> Self {
        LayerConfig {
            format: Format::Native,
            layers: vec![Layer {
                id: UNCLASSIFIED_ID.to_string(),
                name: "Unclassified".to_string(),
                order: 1,
                description: Some(
                    "Everything, until .tldrgraph/layers.config.yaml defines layers".to_string(),
                ),
                may_depend_on: None,
                role: None,
                matcher: Matcher::Nothing,
            }],
            default: 0,
            plan: PlanSettings::default(),
            exclude: Vec::new(),
            layers_digest: String::new(),
        }
    }

    /// Index of the layer `node` belongs to: the first matching layer by order, else the default.
    pub fn classify(&self, node: &NodeView) -> usize {
        self.layers
            .iter()
            .position(|layer| layer.matches(node))
            .unwrap_or(self.default)
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.id == id)
    }
}

/// Why a config cannot be used: it cannot be read, or it is invalid (with its position).
#[derive(Debug)]
pub enum ConfigProblem {
    Unreadable(Failure),
    Invalid(ConfigError),
}

impl From<ConfigProblem> for Failure {
    fn from(problem: ConfigProblem) -> Self {
        match problem {
            ConfigProblem::Unreadable(failure) => failure,
            ConfigProblem::Invalid(err) => {
                Failure::new(exit::DATA, err.to_string()).with_hint(err.hint)
            }
        }
    }
}

/// The repository's config (`explicit`, relative to `cwd`, else `.tldrgraph/layers.config.yaml`):
/// `None` when the repository has none yet.
pub fn load_repo_config(
    cwd: &Path,
    store: &Store,
    explicit: Option<&Path>,
) -> Result<Option<LayerConfig>, ConfigProblem> {
    let (path, shown) = match explicit {
        Some(path) => (cwd.join(path), path.to_path_buf()),
        None => (
            store.path(artifacts::LAYERS_CONFIG),
            PathBuf::from(STORE_DIR).join(artifacts::LAYERS_CONFIG),
        ),
    };
    let text = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
            return Ok(None)
        }
        Err(err) => {
            return Err(ConfigProblem::Unreadable(Failure::new(
                exit::NO_INPUT,
                format!("cannot read {}: {err}", shown.display()),
            )))
        }
    };
    let text = String::from_utf8(text).map_err(|e| {
        ConfigProblem::Unreadable(
            Failure::new(
                exit::DATA,
                format!(
                    "{}: not UTF-8 (byte {})",
                    shown.display(),
                    e.utf8_error().valid_up_to()
                ),
            )
            .with_hint("save the config as UTF-8"),
        )
    })?;
    parse(&shown, &text)
        .map(Some)
        .map_err(ConfigProblem::Invalid)
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<LayerConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!("cannot read the layers config: {e}"),
        hint: "write it as UTF-8 YAML; AGENT_CONTRACT.md shows the schema".to_string(),
    })?;
    parse(path, &text)
}

/// Parses and validates `text`; `file` is only used in messages.
pub fn parse(file: &Path, text: &str) -> Result<LayerConfig, ConfigError> {
    let ctx = Ctx { file, text };
    let value: serde_json::Value = yaml::from_str(text).map_err(|e| ctx.yaml(e, &[]))?;
    let mut config = match detect_format(&value) {
        Format::Original => original::parse(&ctx),
        Format::Native => parse_native(&ctx),
    }?;
    let mut layers_part = value;
    if let serde_json::Value::Object(map) = &mut layers_part {
        map.shift_remove("plan");
    }
    config.layers_digest = crate::hash::content_hash(layers_part.to_string().as_bytes());
    Ok(config)
}

fn detect_format(value: &serde_json::Value) -> Format {
    let Some(map) = value.as_object() else {
        return Format::Native;
    };
    let has_rules = map
        .get("layers")
        .and_then(|l| l.as_array())
        .is_some_and(|layers| layers.iter().any(|l| l.get("rules").is_some()));
    if map.contains_key("utility_id") || (has_rules && !map.contains_key("default_layer")) {
        Format::Original
    } else {
        Format::Native
    }
}

/// Shared by both formats: the file being read and how to point into it.
pub(crate) struct Ctx<'a> {
    pub file: &'a Path,
    pub text: &'a str,
}

impl Ctx<'_> {
    pub fn error(&self, at: (usize, usize), message: String, hint: String) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: at.0,
            column: at.1,
            message,
            hint,
        }
    }

    /// Where `value` first appears under `key` (the `nth` time, 0-based); the file start if nowhere.
    pub fn at(&self, key: &str, value: &str, nth: usize) -> (usize, usize) {
        locate::find(self.text, key, value, nth).unwrap_or((1, 1))
    }

    /// A serde_yaml error, with unknown keys turned into a "did you mean" suggestion.
    pub fn yaml(&self, err: yaml::YamlError, context_hint: &[&str]) -> ConfigError {
        let at = (err.line.unwrap_or(1), err.column.unwrap_or(1));
        if let Some((unknown, expected)) = parse_unknown_field(&err.message) {
            let nearest = nearest(&unknown, &expected);
            let message = match &nearest {
                Some(n) => format!("unknown key `{unknown}`; did you mean `{n}`?"),
                None => format!("unknown key `{unknown}`"),
            };
            return self.error(
                at,
                message,
                format!("valid keys here: {}", expected.join(", ")),
            );
        }
        let hint = if let Some(field) = missing_field(&err.message) {
            format!("add `{field}:`{}", field_example(&field))
        } else if context_hint.is_empty() {
            "check the YAML syntax and the schema in .tldrgraph/AGENT_CONTRACT.md".to_string()
        } else {
            context_hint.join("; ")
        };
        self.error(at, err.message, hint)
    }
}

fn field_example(field: &str) -> &'static str {
    match field {
        "version" => " at the top: `version: 1`",
        "default_layer" => " at the top, naming the catch-all layer's id",
        "utility_id" => " at the top, naming the catch-all layer's id",
        "layers" => " with a list of layers (id, name, order)",
        "id" => " to this layer: a short machine id such as `api`",
        "name" => " to this layer: a human name such as `HTTP API`",
        "order" => " to this layer: an integer, lower is checked first",
        _ => "",
    }
}

/// `unknown field `x`, expected one of `a`, `b`` → (x, [a, b]) (serde's stable wording).
fn parse_unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `").or_else(|| {
        message
            .find("unknown field `")
            .map(|i| &message[i + "unknown field `".len()..])
    })?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((unknown.to_string(), expected))
}

fn missing_field(message: &str) -> Option<String> {
    let rest = &message[message.find("missing field `")? + "missing field `".len()..];
    Some(rest.split('`').next()?.to_string())
}

/// "did you mean `x`? " for the nearest of `candidates`, or nothing.
fn did_you_mean(word: &str, candidates: &[String]) -> String {
    match nearest(word, candidates) {
        Some(n) => format!("did you mean `{n}`? "),
        None => String::new(),
    }
}

pub(crate) use crate::suggest::nearest;

/// A string or a list of strings.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }

    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    version: u32,
    default_layer: String,
    layers: Vec<RawLayer>,
    #[serde(default)]
    plan: PlanSettings,
    #[serde(default)]
    exclude: Option<OneOrMany>,
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
    paths: Option<OneOrMany>,
    #[serde(default)]
    symbols: Option<OneOrMany>,
    #[serde(default)]
    kinds: Option<OneOrMany>,
    #[serde(default)]
    may_depend_on: Option<OneOrMany>,
    #[serde(default)]
    role: Option<String>,
}

fn parse_native(ctx: &Ctx) -> Result<LayerConfig, ConfigError> {
    let raw: RawConfig = yaml::from_str(ctx.text).map_err(|e| ctx.yaml(e, &[]))?;
    if raw.version != 1 {
        return Err(ctx.error(
            ctx.at("version", &raw.version.to_string(), 0),
            format!("unsupported config version {}", raw.version),
            "write `version: 1` (the only version this build reads)".to_string(),
        ));
    }
    let mut layers = Vec::with_capacity(raw.layers.len());
    for raw_layer in raw.layers {
        let matcher = native_matcher(ctx, &raw_layer)?;
        let deps = raw_layer.may_depend_on.map(OneOrMany::into_vec);
        let role = match &raw_layer.role {
            None => None,
            Some(name) => Some(parse_role(ctx, name)?),
        };
        layers.push(Layer {
            id: raw_layer.id,
            name: raw_layer.name,
            order: raw_layer.order,
            description: raw_layer.description,
            may_depend_on: deps,
            role,
            matcher,
        });
    }
    let plan = raw.plan;
    for (key, value) in [("coverage", plan.coverage), ("max_share", plan.max_share)] {
        if !(value > 0.0 && value <= 1.0) {
            return Err(ctx.error(
                ctx.at(key, &value.to_string(), 0),
                format!("plan.{key} is {value}; it is a share of symbols or edges"),
                format!("write a number above 0 and at most 1, e.g. `{key}: 0.8`"),
            ));
        }
    }
    let mut config = finish(
        ctx,
        Format::Native,
        layers,
        &raw.default_layer,
        "default_layer",
    )?;
    config.plan = plan;
    config.exclude = raw.exclude.map(OneOrMany::into_vec).unwrap_or_default();
    if let Err(message) = crate::exclude::compile(&config.exclude) {
        let first = config.exclude.first().map_or("", String::as_str);
        return Err(ctx.error(
            ctx.at("exclude", first, 0),
            format!("invalid `exclude` glob: {message}"),
            "globs use `*` (within a directory), `**` (any depth), `?`, `[abc]`, `{a,b}`"
                .to_string(),
        ));
    }
    Ok(config)
}

/// A role named in a config, with the nearest valid role suggested.
fn parse_role(ctx: &Ctx, name: &str) -> Result<Role, ConfigError> {
    Role::parse(name).ok_or_else(|| {
        let valid: Vec<String> = Role::ALL.iter().map(|r| r.as_str().to_string()).collect();
        let suggestion = did_you_mean(name, &valid);
        ctx.error(
            ctx.at("role", name, 0),
            format!("`{name}` is not a role"),
            format!("{suggestion}roles: {}", valid.join(", ")),
        )
    })
}

/// The `exclude:` globs of the repository's config, for the walk. Read leniently: a config
/// that does not parse excludes nothing here, and tg-classify reports what is wrong with it.
pub fn repo_excludes(store: &Store) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(store.path(artifacts::LAYERS_CONFIG)) else {
        return Vec::new();
    };
    let Ok(value) = yaml::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    match value.get("exclude") {
        Some(serde_json::Value::String(one)) => vec![one.clone()],
        Some(serde_json::Value::Array(many)) => many
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Checks what spans layers (ids, orders, the default, dependencies) and sorts by order.
pub(crate) fn finish(
    ctx: &Ctx,
    format: Format,
    mut layers: Vec<Layer>,
    default_layer: &str,
    default_key: &str,
) -> Result<LayerConfig, ConfigError> {
    if layers.is_empty() {
        return Err(ctx.error(
            ctx.at("layers", "", 0),
            "the config defines no layers".to_string(),
            "list at least the catch-all layer under `layers:`".to_string(),
        ));
    }
    let mut ids = BTreeSet::new();
    let mut orders: BTreeMap<i64, &str> = BTreeMap::new();
    for layer in &layers {
        if layer.id.trim().is_empty() {
            return Err(ctx.error(
                ctx.at("id", "", 0),
                "a layer has an empty `id`".to_string(),
                "give every layer a short machine id such as `api`".to_string(),
            ));
        }
        if !ids.insert(layer.id.as_str()) {
            return Err(ctx.error(
                ctx.at("id", &layer.id, 1),
                format!("layer id `{}` is used twice", layer.id),
                "give every layer its own id".to_string(),
            ));
        }
        if let Some(first) = orders.insert(layer.order, &layer.id) {
            return Err(ctx.error(
                ctx.at("order", &layer.order.to_string(), 1),
                format!(
                    "order {} is used by two layers, `{first}` and `{}`",
                    layer.order, layer.id
                ),
                "give every layer its own order; lower orders are checked first".to_string(),
            ));
        }
    }
    let known: Vec<String> = layers.iter().map(|l| l.id.clone()).collect();
    let unknown_layer = |key: &str, name: &str| {
        let suggestion = did_you_mean(name, &known);
        ctx.error(
            ctx.at(key, name, 0),
            format!("`{key}` names layer `{name}`, which is not defined"),
            format!("{suggestion}defined layers: {}", known.join(", ")),
        )
    };
    for layer in &layers {
        for dep in layer.may_depend_on.iter().flatten() {
            if !known.contains(dep) {
                return Err(unknown_layer("may_depend_on", dep));
            }
        }
    }
    if !known.iter().any(|k| k == default_layer) {
        return Err(unknown_layer(default_key, default_layer));
    }
    layers.sort_by(|a, b| (a.order, &a.id).cmp(&(b.order, &b.id)));
    let default = layers
        .iter()
        .position(|l| l.id == default_layer)
        .unwrap_or_default();
    Ok(LayerConfig {
        format,
        layers,
        default,
        plan: PlanSettings::default(),
        exclude: Vec::new(),
        layers_digest: String::new(),
    })
}

fn native_matcher(ctx: &Ctx, raw: &RawLayer) -> Result<Matcher, ConfigError> {
    let paths = raw.paths.as_ref().map(OneOrMany::to_vec);
    let symbols = raw.symbols.as_ref().map(OneOrMany::to_vec);
    let kinds = raw.kinds.as_ref().map(OneOrMany::to_vec);
    if paths.is_none() && symbols.is_none() && kinds.is_none() {
        return Ok(Matcher::Nothing);
    }
    let (include, exclude) = match &paths {
        None => (None, GlobSet::empty()),
        Some(patterns) => {
            let positive: Vec<&str> = patterns
                .iter()
                .filter(|p| !p.starts_with('!'))
                .map(String::as_str)
                .collect();
            let negative: Vec<&str> = patterns
                .iter()
                .filter_map(|p| p.strip_prefix('!'))
                .collect();
            let include = if positive.is_empty() {
                None
            } else {
                Some(compile_paths(ctx, &positive)?)
            };
            (include, compile_paths(ctx, &negative)?)
        }
    };
    let symbols = match &symbols {
        None => None,
        Some(patterns) => {
            let mut builder = GlobSetBuilder::new();
            for pattern in patterns {
                builder.add(compile_glob(ctx, "symbols", pattern, pattern)?);
            }
            Some(build_set(ctx, "symbols", builder)?)
        }
    };
    let kinds = match &kinds {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|name| parse_kind(ctx, "kinds", name))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    Ok(Matcher::Globs(GlobRule {
        include,
        exclude,
        symbols,
        kinds,
    }))
}

/// A node kind named in a config, with the nearest valid kind suggested.
pub(crate) fn parse_kind(ctx: &Ctx, key: &str, name: &str) -> Result<NodeKind, ConfigError> {
    let quoted = format!("\"{name}\"");
    serde_json::from_str::<NodeKind>(&quoted).map_err(|_| {
        let valid: Vec<String> = NodeKind::ALL
            .iter()
            .map(|k| k.as_str().to_string())
            .collect();
        let suggestion = did_you_mean(name, &valid);
        ctx.error(
            ctx.at(key, name, 0),
            format!("`{name}` is not a node kind"),
            format!("{suggestion}node kinds: {}", valid.join(", ")),
        )
    })
}

/// Path globs: `*` stays inside one directory, `**` crosses them; a plain `src/app` also matches
/// everything below it, as it would in .gitignore.
fn compile_paths(ctx: &Ctx, patterns: &[&str]) -> Result<GlobSet, ConfigError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim_end_matches('/');
        builder.add(compile_glob(ctx, "paths", pattern, trimmed)?);
        if !trimmed.ends_with("**") {
            builder.add(compile_glob(
                ctx,
                "paths",
                pattern,
                &format!("{trimmed}/**"),
            )?);
        }
    }
    build_set(ctx, "paths", builder)
}

fn compile_glob(
    ctx: &Ctx,
    key: &str,
    written: &str,
    pattern: &str,
) -> Result<globset::Glob, ConfigError> {
    GlobBuilder::new(pattern)
        .literal_separator(key == "paths")
        .backslash_escape(true)
        .build()
        .map_err(|e| {
            ctx.error(
                ctx.at(key, written.trim_start_matches('!'), 0),
                format!("invalid glob {written:?} in `{key}`: {}", e.kind()),
                "globs use `*` (within a directory), `**` (any depth), `?`, `[abc]`, `{a,b}`; a leading `!` excludes".to_string(),
            )
        })
}

fn build_set(ctx: &Ctx, key: &str, builder: GlobSetBuilder) -> Result<GlobSet, ConfigError> {
    builder.build().map_err(|e| {
        ctx.error(
            ctx.at(key, "", 0),
            format!("cannot compile the `{key}` globs: {e}"),
            "simplify the globs".to_string(),
        )
    })
}

#[cfg(test)]
mod tests;
