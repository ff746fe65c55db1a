//! Command-line options.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use tg_shared::options::{
    self, Approval, EmbeddingsChoice, Enrichment, Llm, SearchArgs, Selection,
};

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
    /// Check .tldrgraph/layers.config.yaml: whether it is valid and what each layer matches,
    /// with examples (runs `tg-extract | tg-classify --check` with the stages beside this
    /// binary). Exit 0 when valid, 65 when not (every problem listed).
    Layers(AskArgs),
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
    Query(QueryCommand),
    /// The call path from A to B, preferring confident edges (runs `tg-query trace`). Exit 0
    /// with "no path" when there is none; 64 for an unknown or ambiguous name.
    Trace(TraceCommand),
    /// Functions and methods with no inbound call, import or reference, minus entry points,
    /// each with a reason and a confidence (runs `tg-query dead-code`).
    DeadCode(DeadCodeCommand),
    /// Serve the map to coding agents over the Model Context Protocol (stdio): tools status,
    /// search, trace, callers, callees, symbol, dead_code, layers, impact, check, init and
    /// apply_intents.
    /// Answers say whether they are fresh; a source change is rebuilt before answering (up to
    /// --wait-ms). Logs go to stderr; stdout carries the protocol only.
    Mcp(McpArgs),
    /// What a change touches: the symbols whose own source changed (added, removed, moved),
    /// their callers up to --depth with the confidence of each path, grouped by layer, the tests
    /// that reach them (as the test runner names them) and the public signatures that changed.
    /// Compares the working tree with a commit (--since, default HEAD), the index with HEAD
    /// (--staged), or, without git, the named files with the last build (--files).
    Impact(ImpactArgs),
    /// Layering violations (edges that break `may_depend_on`) of the working tree, or with
    /// --since only those the change introduced. Exit 0 clean, 1 violations found, 64 usage,
    /// 66 when there is nothing to judge against (no layers config, an unknown REF): a gate
    /// never passes by accident.
    Check(CheckArgs),
    /// The architecture as a picture: one self-contained HTML page (.tldrgraph/map.html, or
    /// --output) with the layers as bands, the weighted dependencies between them, the
    /// violations, and every symbol's callers, callees, intent and signature on demand, with
    /// search by name and intent. It opens from disk and makes no network request. Read-only: it
    /// draws the last build's graph.json (and plan.json); 66 when there is none.
    Ui(UiArgs),
}

#[derive(Debug, Args)]
pub struct UiArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Write the page here instead of .tldrgraph/map.html (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Then open it in the browser ($BROWSER, else xdg-open or open).
    #[arg(long)]
    pub open: bool,

    /// Then serve it on 127.0.0.1 (loopback only) until interrupted, rewritten whenever a build
    /// changes the graph.
    #[arg(long)]
    pub serve: bool,

    /// The port --serve listens on (0: any free port; the URL is printed).
    #[arg(long, value_name = "N", default_value_t = 8765, requires = "serve")]
    pub port: u16,
}

#[derive(Debug, Args)]
pub struct ImpactArgs {
    /// The repository (default: the git top level, else the current directory).
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,

    /// Compare the working tree with this commit (branch, tag, HEAD~3; default HEAD).
    #[arg(long, value_name = "REF", conflicts_with_all = ["staged", "files"])]
    pub since: Option<String>,

    /// Compare what is staged for commit with HEAD.
    #[arg(long, conflicts_with = "files")]
    pub staged: bool,

    /// Compare these files as they are with the last build (no git needed).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub files: Vec<PathBuf>,

    /// Follow callers this many calls up.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub depth: u32,

    /// Follow only call paths at least this sure (the product of their edges' confidences).
    #[arg(long, value_name = "C", default_value_t = 0.0)]
    pub min_confidence: f64,

    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,

    /// Cut the longest lists until the answer fits this many tokens (4 characters each).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
}

/// How `check` prints its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// `file:line: message`, then a count.
    Text,
    /// One JSON object: scope, count, violations.
    Json,
    /// GitHub Actions annotations (`::error file=...,line=...::`).
    Github,
    /// A SARIF 2.1.0 log for code-scanning tools.
    Sarif,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The repository (default: the git top level, else the current directory).
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,

    /// Report only the violations introduced since this commit.
    #[arg(long, value_name = "REF")]
    pub since: Option<String>,

    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The repository (default: the git top level, else the current directory).
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,

    /// The longest an answer waits for a rebuild after a source change; past it the answer
    /// comes from the previous build and says so (the rebuild goes on).
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub wait_ms: u64,

    /// `--enrich` for the rebuilds the server runs (`off`: zero-token mode, so a source change
    /// never stops at `needs_confirmation`). The `init` tool's own choice replaces it.
    #[arg(long, value_enum)]
    pub enrich: Option<options::Enrich>,
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
pub struct QueryCommand {
    #[command(flatten)]
    pub search: SearchArgs,

    #[command(flatten)]
    pub ask: AskArgs,
}

#[derive(Debug, Args)]
pub struct TraceCommand {
    #[command(flatten)]
    pub call_path: options::TraceArgs,

    #[command(flatten)]
    pub ask: AskArgs,
}

#[derive(Debug, Args)]
pub struct DeadCodeCommand {
    #[command(flatten)]
    pub findings: options::DeadCodeArgs,

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

    /// Decline the candidates of the current plan that have no intent yet, approved or not:
    /// `init` reaches `done` with what was enriched and stays there; candidates that appear
    /// later are asked about.
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

    /// Also register `tldrgraph mcp` as this project's MCP server for Claude Code
    /// (`.mcp.json`) and Cursor (`.cursor/mcp.json`); `uninstall` takes the entries out again.
    #[arg(long)]
    pub mcp: bool,
}

#[derive(Debug, Args)]
pub struct ContractArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Do not write: exit 0 when the file is current, 1 when it is missing or differs.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The repository (default: the git top level, else the current directory).
    pub path: Option<PathBuf>,

    /// Print the contract payload as one JSON object and nothing else on stdout.
    #[arg(long)]
    pub json: bool,

    /// Forwarded to tg-extract.
    #[command(flatten)]
    pub selection: Selection,

    /// Forwarded to tg-plan and tg-enrich.
    #[command(flatten)]
    pub enrichment: Enrichment,

    /// Forwarded to tg-plan.
    #[command(flatten)]
    pub approval: Approval,

    /// Forwarded to tg-enrich.
    #[command(flatten)]
    pub llm: Llm,

    /// Forwarded to tg-embed.
    #[command(flatten)]
    pub embedder: EmbeddingsChoice,

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

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    /// Each subcommand parses (clap checks a subcommand's arguments only when it is used).
    #[test]
    fn every_subcommand_parses() {
        use clap::Parser;
        for argv in [
            &[
                "init",
                "--json",
                "--batch",
                "5",
                "--enrich",
                "off",
                "--exclude",
                "x",
            ][..],
            &["status", "--json"],
            &["query", "who loads", "--mode", "lexical", "--json"],
            &["trace", "a", "b", "--root", "."],
            &["dead-code", "--min-confidence", "0.5"],
            &["plan", "--json"],
            &["approve", "--revoke"],
            &["enrich", "--apply", "-"],
            &["install", "--dry-run"],
            &["install", "--mcp"],
            &["uninstall"],
            &["contract", "--check"],
            &["mcp", "--root", ".", "--wait-ms", "500", "--enrich", "off"],
            &[
                "impact", "--since", "HEAD~2", "--depth", "2", "--json", "--budget", "500",
            ],
            &[
                "impact",
                "--files",
                "a.py",
                "b.py",
                "--min-confidence",
                "0.5",
            ],
            &["impact", "--staged"],
            &["check", "--since", "main", "--format", "sarif"],
            &["ui", ".", "--output", "m.html", "--open"],
            &["ui", "--serve", "--port", "0"],
        ] {
            let parsed = super::Cli::try_parse_from(
                std::iter::once("tldrgraph").chain(argv.iter().copied()),
            );
            assert!(parsed.is_ok(), "{argv:?}: {:?}", parsed.err());
        }
    }
}
