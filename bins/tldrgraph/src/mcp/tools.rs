//! What each MCP tool does, apart from the protocol: typed parameters in, a JSON answer out
//! (the answer's own fields, then `freshness` and `budget`), or a [`ToolError`].
//! [`super::server`] binds them to MCP.

use super::budget::{self, Spent};
use super::session::{Freshness, Session};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::process::{Command, Stdio};
use tg_query::answer::{self, Direction, NameError};
use tg_shared::artifacts::{self, state::SavedState};
use tg_shared::contract;
use tg_shared::options::{Mode, SearchArgs};
use tg_shared::stage::Failure;

/// Deepest walk `callers`/`callees` take.
const MAX_DEPTH: u32 = 10;
/// Reserved for the `budget` report itself, so the whole answer stays within the budget.
const ENVELOPE_TOKENS: usize = 60;
/// Payload strings longer than this are left out of `status`.
const STATUS_TEXT: usize = 400;

/// A tool that could not answer: the message, a hint, and details a client can act on
/// (candidates for an ambiguous name), with the answer's freshness when the graph was read.
#[derive(Debug)]
pub struct ToolError {
    pub message: String,
    pub hint: Option<String>,
    pub details: Option<Value>,
    pub freshness: Option<Freshness>,
    /// The budget the error must fit too.
    pub tokens: Option<usize>,
}

impl ToolError {
    pub fn to_json(&self) -> Value {
        let mut out = json!({"error": self.message});
        if let Some(hint) = &self.hint {
            out["hint"] = Value::String(hint.clone());
        }
        if let Some(Value::Object(details)) = &self.details {
            for (k, v) in details {
                out.as_object_mut()
                    .map(|o| o.entry(k.clone()).or_insert(v.clone()));
            }
        }
        if let Some(freshness) = &self.freshness {
            out["freshness"] = serde_json::to_value(freshness).unwrap_or(Value::Null);
        }
        let tokens = budget::tokens(self.tokens);
        let cut = budget::fit(&mut out, tokens.saturating_sub(ENVELOPE_TOKENS));
        if !cut.is_empty() {
            out["budget"] = json!(Spent {
                budget_tokens: tokens,
                tokens: 0,
                cut,
            });
            count_tokens(&mut out);
        }
        out
    }

    /// The error of a question asked of the graph `freshness` describes, within `tokens`.
    fn about(mut self, freshness: &Freshness, tokens: Option<usize>) -> ToolError {
        self.freshness = Some(freshness.clone());
        self.tokens = tokens;
        self
    }
}

impl From<Failure> for ToolError {
    fn from(f: Failure) -> Self {
        ToolError {
            message: f.message,
            hint: f.hint,
            details: Some(json!({"exit_code": f.code})),
            freshness: None,
            tokens: None,
        }
    }
}

impl From<NameError> for ToolError {
    /// The name and its candidates as fields (the CLI's message lists them in prose too).
    fn from(e: NameError) -> Self {
        let (kind, message, candidates) = match e {
            NameError::Unknown { name, nearest } => (
                "unknown_symbol",
                format!("no symbol named `{name}`"),
                nearest,
            ),
            NameError::Ambiguous { name, candidates } => (
                "ambiguous_symbol",
                format!("`{name}` is ambiguous: {} symbols match", candidates.len()),
                candidates,
            ),
        };
        ToolError {
            message,
            hint: Some(
                "give one of `candidates` (an id, path::Qualified.name), a qualified name (Type.method, module.function) or a unique short name; `search` finds ids".into(),
            ),
            details: Some(json!({"kind": kind, "candidates": candidates})),
            freshness: None,
            tokens: None,
        }
    }
}

fn usage(message: String) -> ToolError {
    ToolError {
        message,
        hint: None,
        details: None,
        freshness: None,
        tokens: None,
    }
}

/// An answer, or the error (boxed: answers are the common case).
pub type Answered = Result<Value, Box<ToolError>>;

impl From<Failure> for Box<ToolError> {
    fn from(f: Failure) -> Self {
        Box::new(f.into())
    }
}

impl From<NameError> for Box<ToolError> {
    fn from(e: NameError) -> Self {
        Box::new(e.into())
    }
}

/// A tool's answer with its `freshness` and `budget`, as its output schema describes it.
#[derive(Serialize, JsonSchema)]
pub struct Envelope<T> {
    #[serde(flatten)]
    pub answer: T,
    pub freshness: Freshness,
    pub budget: Spent,
    /// Arguments outside their range, and the value used instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `value` within `low..=high`; a note saying so when it was outside.
fn bounded<V: PartialOrd + Copy + std::fmt::Display>(
    name: &str,
    value: V,
    low: V,
    high: V,
    notes: &mut Vec<String>,
) -> V {
    let used = if value < low {
        low
    } else if value > high {
        high
    } else {
        return value;
    };
    notes.push(format!(
        "{name} {value} is outside {low}..={high}: {used} was used"
    ));
    used
}

/// `answer` in its envelope, cut to `tokens`.
fn respond<T: Serialize>(answer: T, freshness: Freshness, tokens: Option<usize>) -> Answered {
    respond_noting(answer, freshness, tokens, Vec::new())
}

/// [`respond`], with `notes` on the arguments.
fn respond_noting<T: Serialize>(
    answer: T,
    freshness: Freshness,
    tokens: Option<usize>,
    mut notes: Vec<String>,
) -> Answered {
    if let Some(asked) = tokens.filter(|t| *t < budget::MIN_TOKENS) {
        notes.push(format!(
            "budget_tokens {asked} is below {}: {} was used",
            budget::MIN_TOKENS,
            budget::MIN_TOKENS
        ));
    }
    let tokens = budget::tokens(tokens);
    let envelope = Envelope {
        answer,
        freshness,
        budget: Spent::default(),
        notes,
    };
    let mut value =
        serde_json::to_value(&envelope).map_err(|e| usage(format!("cannot serialise: {e}")))?;
    let cut = budget::fit(&mut value, tokens.saturating_sub(ENVELOPE_TOKENS));
    let spent = Spent {
        budget_tokens: tokens,
        tokens: 0,
        cut,
    };
    value["budget"] = serde_json::to_value(&spent).unwrap_or(Value::Null);
    count_tokens(&mut value);
    Ok(value)
}

/// Writes the answer's own size into `budget.tokens` (the count is part of what it counts, so
/// it is written until it no longer changes the size).
fn count_tokens(value: &mut Value) {
    for _ in 0..4 {
        let size = value.to_string().len().div_ceil(budget::CHARS_PER_TOKEN);
        if value["budget"]["tokens"] == size {
            break;
        }
        value["budget"]["tokens"] = Value::from(size);
    }
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {}

/// The contract state and freshness in a few hundred bytes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusAnswer {
    /// The contract state of the last build, or `never_built`.
    pub status: String,
    /// Whether the sources, config and decisions are those the build saw.
    pub fresh: bool,
    /// What changed since (counts), when not fresh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<super::session::ChangeCounts>,
    /// The changes, a few files named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
    /// The state's short fields (counts, `next_action`); lists are left to `init`.
    pub summary: Map<String, Value>,
}

pub fn status(session: &mut Session) -> Answered {
    let answer = match session.look() {
        Ok((state, changes)) => StatusAnswer {
            status: state.payload["status"].as_str().unwrap_or("unknown").into(),
            fresh: changes.fresh(),
            changes: (!changes.fresh()).then(|| (&changes).into()),
            stale: (!changes.fresh()).then(|| super::session::describe(&changes)),
            summary: summary(&state),
        },
        Err(failure)
            if matches!(
                SavedState::read(session.store()),
                Err(artifacts::state::ReadError::Missing)
            ) =>
        {
            let mut summary = Map::new();
            summary.insert(
                "next_action".into(),
                Value::String(format!("{}; call the `init` tool", failure.message)),
            );
            StatusAnswer {
                status: "never_built".into(),
                fresh: false,
                changes: None,
                stale: None,
                summary,
            }
        }
        Err(failure) => return Err(failure.into()),
    };
    Ok(serde_json::to_value(answer).map_err(|e| usage(format!("cannot serialise: {e}")))?)
}

/// The payload's scalar fields (lists and long text are `init`'s to give).
fn summary(state: &SavedState) -> Map<String, Value> {
    let Value::Object(payload) = &state.payload else {
        return Map::new();
    };
    payload
        .iter()
        .filter(|(k, v)| {
            *k != "status"
                && match v {
                    Value::String(s) => s.len() <= STATUS_TEXT,
                    Value::Number(_) | Value::Bool(_) => true,
                    _ => false,
                }
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// How `search` ranks.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Identifiers and embeddings fused (the default).
    #[default]
    Hybrid,
    /// BM25 over identifier-aware terms only.
    Lexical,
    /// Embeddings only.
    Semantic,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to look for: words of what the code does, or names (`get_command`, `Type.method`).
    pub query: String,
    /// How many symbols (default 5).
    #[serde(default)]
    pub k: Option<usize>,
    /// Only these layers (ids or names).
    #[serde(default)]
    pub layers: Vec<String>,
    /// Never these layers (ids or names).
    #[serde(default)]
    pub exclude_layers: Vec<String>,
    /// Rank tests, examples and tooling among product code (by default they follow it).
    #[serde(default)]
    pub include_tests: bool,
    #[serde(default)]
    pub mode: SearchMode,
    /// The answer's size limit in tokens (default 4000).
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

pub fn search(session: &mut Session, p: SearchParams) -> Answered {
    let mut notes = Vec::new();
    let (graph, freshness) = session.prepare()?;
    let args = SearchArgs {
        text: p.query,
        top_k: bounded("k", p.k.unwrap_or(5), 1, 100, &mut notes),
        budget: None,
        layer: p.layers,
        exclude_layer: p.exclude_layers,
        include_tests: p.include_tests,
        mode: match p.mode {
            SearchMode::Hybrid => Mode::Hybrid,
            SearchMode::Lexical => Mode::Lexical,
            SearchMode::Semantic => Mode::Semantic,
        },
    };
    let answer =
        answer::search(graph, &args).map_err(|e| usage(e).about(&freshness, p.budget_tokens))?;
    graph.check()?;
    respond_noting(answer, freshness, p.budget_tokens, notes)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceParams {
    /// Where the path starts: an id, a qualified name (`Type.method`, `module.func`) or a unique
    /// short name.
    pub from: String,
    /// Where it ends.
    pub to: String,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

pub fn trace(session: &mut Session, p: TraceParams) -> Answered {
    let (graph, freshness) = session.prepare()?;
    let result = answer::trace(graph, &p.from, &p.to)
        .map_err(|e| ToolError::from(e).about(&freshness, p.budget_tokens))?;
    graph.check()?;
    respond(result, freshness, p.budget_tokens)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeighboursParams {
    /// The symbol: an id, a qualified name or a unique short name.
    pub symbol: String,
    /// Calls away, 1 (direct, the default) to 10.
    #[serde(default)]
    pub depth: Option<u32>,
    /// Follow only call edges at least this sure (0 to 1; default 0).
    #[serde(default)]
    pub min_confidence: Option<f32>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

pub fn neighbours(session: &mut Session, p: NeighboursParams, direction: Direction) -> Answered {
    let (graph, freshness) = session.prepare()?;
    let symbol = graph
        .resolve(&p.symbol)
        .map_err(|e| ToolError::from(e).about(&freshness, p.budget_tokens))?;
    let mut notes = Vec::new();
    let depth = bounded("depth", p.depth.unwrap_or(1), 1, MAX_DEPTH, &mut notes);
    let min_confidence = bounded(
        "min_confidence",
        p.min_confidence.unwrap_or(0.0),
        0.0,
        1.0,
        &mut notes,
    );
    let found = answer::neighbours(graph, symbol, direction, depth, min_confidence);
    graph.check()?;
    respond_noting(found, freshness, p.budget_tokens, notes)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolParams {
    /// The symbol: an id, a qualified name or a unique short name.
    pub symbol: String,
    /// Include its source lines.
    #[serde(default)]
    pub source: bool,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

pub fn symbol(session: &mut Session, p: SymbolParams) -> Answered {
    let root = session.root().to_path_buf();
    let (graph, freshness) = session.prepare()?;
    let i = graph
        .resolve(&p.symbol)
        .map_err(|e| ToolError::from(e).about(&freshness, p.budget_tokens))?;
    let found = answer::symbol(graph, &root, i, p.source);
    graph.check()?;
    respond(found, freshness, p.budget_tokens)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeadCodeParams {
    /// Only findings at least this sure (0 to 1; default 0).
    #[serde(default)]
    pub min_confidence: Option<f64>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

pub fn dead_code(session: &mut Session, p: DeadCodeParams) -> Answered {
    let (_, freshness) = session.prepare()?;
    let found = answer::dead_code_of(session.dead_code()?, p.min_confidence.unwrap_or(0.0));
    respond(found, freshness, p.budget_tokens)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayersParams {
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// `.tldrgraph/layers.yaml` as tg-classify wrote it: per layer its counts by kind and role, its
/// top files, the edges to and from each other layer, and its violations of `may_depend_on`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LayersAnswer {
    /// `native`, `original` or `none` (no config yet: one bucket).
    pub config: String,
    pub nodes: u64,
    pub cross_layer_edges: u64,
    pub violations: u64,
    pub layers: Vec<Map<String, Value>>,
}

pub fn layers(session: &mut Session, p: LayersParams) -> Answered {
    let (_, freshness) = session.prepare()?;
    let path = session.store().path(artifacts::LAYERS_REPORT);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ToolError::from(Failure::new(
            tg_shared::exit::NO_INPUT,
            format!("cannot read {}: {e}", path.display()),
        ))
    })?;
    let report: LayersAnswer =
        serde_yaml::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    respond(report, freshness, p.budget_tokens)
}

/// Whether intents are written (as `init --enrich`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EnrichChoice {
    /// Planned symbols get intents once the user approves (the default).
    Auto,
    /// Zero-token mode: no confirmation, nothing asked; doc comments stand in for intents.
    Off,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitParams {
    /// The user approved enriching the planned symbols (`init --yes`).
    #[serde(default)]
    pub yes: bool,
    /// `off` for zero-token mode; the server's own rebuilds keep the choice.
    #[serde(default)]
    pub enrich: Option<EnrichChoice>,
    /// Symbols per `needs_enrichment` batch.
    #[serde(default)]
    pub batch: Option<u64>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// The payload of `tldrgraph init --json`: `status` and that state's fields, as
/// AGENT_CONTRACT.md gives them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InitAnswer {
    pub status: String,
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

pub fn init(session: &mut Session, p: InitParams) -> Answered {
    if let Some(choice) = p.enrich {
        session.set_enrich(Some(
            match choice {
                EnrichChoice::Auto => "auto",
                EnrichChoice::Off => "off",
            }
            .into(),
        ));
    }
    let mut args: Vec<String> = vec!["init".into(), "--json".into()];
    args.extend(session.init_flags());
    if p.yes {
        args.push("--yes".into());
    }
    if let Some(batch) = p.batch {
        args.push("--batch".into());
        args.push(batch.max(1).to_string());
    }
    let payload = run_json(session, &args, None)?;
    session.forget();
    init_answer(payload, p.budget_tokens)
}

/// The payload as it is, with `next_tool` beside it (the call that moves the contract on),
/// its lists cut to the budget. A `needs_enrichment` batch cut that way is a smaller batch:
/// `remaining_after_batch` and `next_action` count what is shown, and the next `init` asks for
/// the rest.
fn init_answer(payload: Value, tokens: Option<usize>) -> Answered {
    let mut value = payload;
    if let Some(next) = next_tool(&value) {
        value["next_tool"] = next;
    }
    let tokens = budget::tokens(tokens);
    let cut = budget::fit(&mut value, tokens.saturating_sub(ENVELOPE_TOKENS));
    if let Some(batch) = cut.iter().find(|c| c.path == "/batch") {
        let left_out = (batch.total - batch.shown) as u64;
        if let Some(remaining) = value["remaining_after_batch"].as_u64() {
            value["remaining_after_batch"] = Value::from(remaining + left_out);
        }
        value["next_action"] = Value::String(contract::enrichment_action(batch.shown));
    }
    if !cut.is_empty() {
        value["budget"] = json!(Spent {
            budget_tokens: tokens,
            tokens: 0,
            cut,
        });
        count_tokens(&mut value);
    }
    Ok(value)
}

/// The MCP call that answers a state (`next_action` names the CLI's command).
fn next_tool(payload: &Value) -> Option<Value> {
    let (name, arguments, first) = match payload["status"].as_str()? {
        contract::NEEDS_LAYERS => ("init", json!({}), "write the layers config at `config_path` (read `symbols_overview`; the schema is in AGENT_CONTRACT.md)"),
        contract::NEEDS_CONFIRMATION => ("init", json!({"yes": true}), "ask the user the question in `next_action`; call this only if they agree (or `init` with `enrich: off` to go on without intents)"),
        contract::NEEDS_ENRICHMENT => ("apply_intents", json!({"intents": [{"id": "<id from batch>", "intent": "<one line: what it is for>"}]}), "write one intent per `batch` item"),
        contract::NEEDS_EMBEDDINGS => ("init", json!({}), "fix what `reason` names"),
        _ => return None,
    };
    Some(json!({"name": name, "arguments": arguments, "first": first}))
}

/// One intent the agent wrote.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Intent {
    /// The symbol's id, as the batch gave it.
    pub id: String,
    /// One line: what it is for, not how it works.
    pub intent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyIntentsParams {
    /// The answers to a `needs_enrichment` batch.
    pub intents: Vec<Intent>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// Stores the intents (`tldrgraph enrich --apply`), then runs `init` for the next state; the
/// answer is that state's payload with `applied` beside it.
pub fn apply_intents(session: &mut Session, p: ApplyIntentsParams) -> Answered {
    let input =
        serde_json::to_vec(&p.intents).map_err(|e| usage(format!("cannot serialise: {e}")))?;
    let applied = run_json(
        session,
        &[
            "enrich".into(),
            "--apply".into(),
            "-".into(),
            "--json".into(),
        ],
        Some(&input),
    )?;
    if applied["status"] == contract::ERROR || applied.get("error").is_some() {
        return Err(Box::new(ToolError {
            message: applied["error"]
                .as_str()
                .unwrap_or("the intents were rejected")
                .into(),
            hint: Some("correct the intents `error` names and call `apply_intents` again with the whole batch".into()),
            details: Some(applied),
            freshness: None,
            tokens: p.budget_tokens,
        }));
    }
    let mut args: Vec<String> = vec!["init".into(), "--json".into()];
    args.extend(session.init_flags());
    let mut next = run_json(session, &args, None)?;
    session.forget();
    next["applied"] = applied;
    init_answer(next, p.budget_tokens)
}

/// Runs this executable with `args` and the repository, `input` on its stdin; the JSON it
/// printed (an error payload is returned as it is: it is a contract state).
fn run_json(session: &Session, args: &[String], input: Option<&[u8]>) -> Answered {
    let mut child = Command::new(session.exe())
        .args(args)
        .arg(session.root())
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| usage(format!("cannot run {}: {e}", session.exe().display())))?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(bytes)
            .map_err(|e| usage(format!("cannot write to {}: {e}", args.join(" "))))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| usage(format!("cannot run {}: {e}", args.join(" "))))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let parsed = serde_json::from_str(text.trim()).map_err(|e| {
        usage(format!(
            "`tldrgraph {}` printed no JSON ({e}; exit {:?})",
            args.join(" "),
            output.status.code()
        ))
    })?;
    Ok(parsed)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactParams {
    /// Compare the working tree with this commit (default HEAD).
    #[serde(default)]
    pub since: Option<String>,
    /// Compare what is staged with HEAD instead.
    #[serde(default)]
    pub staged: bool,
    /// Compare these files (repository-relative) with the last build instead (no git needed).
    #[serde(default)]
    pub files: Vec<String>,
    /// Follow callers this many calls up (default 3).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Follow only call paths at least this sure (0 to 1).
    #[serde(default)]
    pub min_confidence: Option<f64>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// What a change touches, as `tldrgraph impact --json` gives it. It extracts the trees it
/// compares, so it needs no fresh build.
pub fn impact(session: &mut Session, p: ImpactParams) -> Answered {
    let root = session.root().to_path_buf();
    let args = crate::cli::ImpactArgs {
        root: Some(root.clone()),
        since: p.since,
        staged: p.staged,
        files: p.files.iter().map(|f| root.join(f)).collect(),
        depth: p.depth.unwrap_or(3),
        min_confidence: p.min_confidence.unwrap_or(0.0),
        json: true,
        budget: None,
    };
    let found = crate::impact::analyse(&args)?;
    fitted(found, p.budget_tokens)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// Only the violations introduced since this commit.
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
}

/// Layering violations, as `tldrgraph check --format json` gives them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckAnswer {
    pub scope: String,
    pub count: usize,
    pub violations: Vec<crate::impact::check::Violation>,
}

pub fn check(session: &mut Session, p: CheckParams) -> Answered {
    let args = crate::cli::CheckArgs {
        root: Some(session.root().to_path_buf()),
        since: p.since,
        format: crate::cli::CheckFormat::Json,
    };
    let (scope, violations) = crate::impact::judge(&args)?;
    let answer = CheckAnswer {
        scope,
        count: violations.len(),
        violations,
    };
    fitted(answer, p.budget_tokens)
}

/// `answer` with its lists cut to the budget and `budget` saying so (for answers that do not
/// come from the loaded graph, so have no `freshness`).
fn fitted<T: Serialize>(answer: T, tokens: Option<usize>) -> Answered {
    let mut value =
        serde_json::to_value(answer).map_err(|e| usage(format!("cannot serialise: {e}")))?;
    let tokens = budget::tokens(tokens);
    let cut = budget::fit(&mut value, tokens.saturating_sub(ENVELOPE_TOKENS));
    value["budget"] = json!(Spent {
        budget_tokens: tokens,
        tokens: 0,
        cut,
    });
    count_tokens(&mut value);
    Ok(value)
}

/// `T` with the `budget` report beside its fields, as [`fitted`] returns it.
#[derive(Serialize, JsonSchema)]
pub struct Budgeted<T> {
    #[serde(flatten)]
    pub answer: T,
    pub budget: Spent,
}
