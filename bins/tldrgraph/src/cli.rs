//! Command-line options.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// An architectural map of a repository for coding agents.
///
/// `tldrgraph init --json` runs the pipeline (tg-extract | tg-classify | tg-plan | tg-enrich |
/// tg-embed | tg-status) and prints
/// the contract state; `.tldrgraph/AGENT_CONTRACT.md` describes the whole loop.
///
/// Exit codes: 0 the command did what was asked, whatever the state; 2 bad arguments;
/// 64 usage error; 65 bad data (a malformed layers config or stream); 66 a path that does not
/// exist; 69 a stage binary is missing; 70 a stage crashed; 73/74 an artifact or output cannot
/// be written; 75 another run holds the repository lock. `status --exit-code` has one code per
/// state (see `tldrgraph status --help`).
#[derive(Debug, Parser)]
#[command(name = "tldrgraph", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build or update the graph and print the contract state.
    Init(InitArgs),
    /// Print the state of the last build from .tldrgraph/, without running anything.
    ///
    /// With --exit-code the exit code tells the state: 0 done, 10 needs_layers,
    /// 11 needs_confirmation, 12 needs_enrichment, 13 needs_embeddings, 14 stale (sources or
    /// config changed since the last build), 15 never built, 16 the state cannot be read
    /// (a damaged .tldrgraph/state.json, or tg-status failed).
    Status(StatusArgs),
    /// Write .tldrgraph/AGENT_CONTRACT.md (only if its content changed), or with --check
    /// report whether the file matches what this build writes (exit 1 if not).
    Contract(ContractArgs),
    /// Tell coding agents about tldrgraph in this repository: a managed block in AGENTS.md,
    /// command/rule files for Claude Code and Cursor, .gitignore lines for generated
    /// artifacts. Idempotent; `uninstall` removes exactly what it wrote.
    Install(InstallArgs),
    /// Remove what `install` wrote (user text around the managed blocks is left as it was).
    Uninstall(InstallArgs),
    /// Show the ranked bottleneck candidates of the last build (read-only).
    Plan(PlanArgs),
    /// Show what the user approved for enrichment; `--revoke` withdraws it.
    Approve(ApproveArgs),
    /// Store the agent's intents for a `needs_enrichment` batch (then run `init` again).
    ///
    /// FILE (or `-` for stdin) is NDJSON, a JSON array or a YAML list of
    /// `{"id": ..., "intent": ...}`, optionally with `layer`, `inputs`, `outputs`. The whole
    /// file is checked against the last build first; any unknown or duplicate id, empty or
    /// multi-paragraph intent rejects it (exit 65) with every problem listed, and nothing is
    /// written.
    Enrich(EnrichArgs),
    /// Find symbols by what they do: hybrid BM25 + embedding ranking, each hit with its
    /// execution flow across layers (runs `tg-query search`; read-only).
    Query(QueryArgs),
    /// The call path from A to B, preferring confident edges (runs `tg-query trace`). Exit 0
    /// with "no path" when there is none; 64 for an unknown or ambiguous name.
    Trace(TraceArgs),
    /// Functions and methods with no inbound call, import or reference, minus entry points,
    /// each with a reason and a confidence (runs `tg-query dead-code`).
    DeadCode(DeadCodeArgs),
}

/// Options every question command shares.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// The repository (default: the git top level, else the current directory).
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,

    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// What to look for, in words.
    pub text: String,

    #[arg(long, value_name = "K", default_value_t = 5)]
    pub top_k: usize,

    /// Also print a context pack of at most this many tokens (4 characters per token).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,

    /// Only symbols of this layer (its id); repeatable.
    #[arg(long, value_name = "ID")]
    pub layer: Vec<String>,

    /// Never symbols of this layer (its id); repeatable.
    #[arg(long, value_name = "ID")]
    pub exclude_layer: Vec<String>,

    /// Rank tests, examples and tooling among the product code by score alone (by default
    /// they follow the product hits).
    #[arg(long)]
    pub include_tests: bool,

    /// hybrid (default), lexical or semantic.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,

    #[command(flatten)]
    pub ask: AskArgs,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    pub from: String,
    pub to: String,

    #[command(flatten)]
    pub ask: AskArgs,
}

#[derive(Debug, Args)]
pub struct DeadCodeArgs {
    /// Only findings with at least this confidence (0 to 1).
    #[arg(long, value_name = "C")]
    pub min_confidence: Option<f64>,

    #[command(flatten)]
    pub ask: AskArgs,
}

#[derive(Debug, Args)]
pub struct EnrichArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// The answer file, or `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub apply: PathBuf,

    /// Print the result (or the error) as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,

    /// Show only the first N candidates.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Withdraw the approval (and what was declined): the next `init` asks again.
    #[arg(long, conflicts_with = "decline_rest")]
    pub revoke: bool,

    /// Decline the candidates of the current plan that are not approved: `init` reaches `done`
    /// with what was enriched and stays there; candidates that appear later are asked about.
    #[arg(long)]
    pub decline_rest: bool,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// List what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ContractArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Do not write: exit 0 when the file is current, 1 when it is missing or differs.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Embeddings {
    Off,
    Auto,
    Openai,
    Ollama,
}

impl Embeddings {
    pub fn as_str(self) -> &'static str {
        match self {
            Embeddings::Off => "off",
            Embeddings::Auto => "auto",
            Embeddings::Openai => "openai",
            Embeddings::Ollama => "ollama",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Enrich {
    Off,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    Agent,
    Openai,
    Ollama,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Agent => "agent",
            Provider::Openai => "openai",
            Provider::Ollama => "ollama",
        }
    }
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Leave paths matching GLOB out of the graph (repeatable; beside the config's `exclude:`;
    /// forwarded to tg-extract).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Read files .gitignore and .ignore hide too (forwarded to tg-extract).
    #[arg(long)]
    pub no_ignore: bool,

    /// Print the contract payload as one JSON object and nothing else on stdout.
    #[arg(long)]
    pub json: bool,

    /// Symbols per enrichment batch (forwarded to tg-plan / tg-enrich when installed).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: Option<u32>,

    /// Enrich at most N symbols this run (forwarded to tg-plan / tg-enrich when installed).
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,

    /// Approve the planned enrichment (forwarded to tg-plan when installed).
    #[arg(long)]
    pub yes: bool,

    /// Enrichment mode; `off` is zero-token mode (forwarded to tg-plan / tg-enrich when
    /// installed).
    #[arg(long, value_enum)]
    pub enrich: Option<Enrich>,

    /// Who writes intents: the calling agent (default), or an LLM endpoint configured by
    /// TLDRGRAPH_LLM_* variables (forwarded to tg-enrich).
    #[arg(long, value_enum)]
    pub provider: Option<Provider>,

    /// Spend cap for an LLM provider: at most N requests this run (forwarded to tg-enrich).
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,

    /// Embeddings: `auto` the embedded model (default), `off` lexical search only, `openai` or
    /// `ollama` an HTTP endpoint configured by TLDRGRAPH_EMBED_* variables (forwarded to
    /// tg-embed).
    #[arg(long, value_enum)]
    pub embeddings: Option<Embeddings>,

    /// Allow plain http to an endpoint other than loopback (the code and the key would travel
    /// unencrypted); same as TLDRGRAPH_ALLOW_INSECURE_HTTP=1.
    #[arg(long)]
    pub allow_insecure_http: bool,

    /// Forward the stages' progress lines to stderr even with --json.
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Print the state as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Exit with the state's own code (see above) instead of 0.
    #[arg(long)]
    pub exit_code: bool,
}
