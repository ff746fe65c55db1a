//! Command-line options.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Answer questions about a repository from the search index tg-embed built
/// (`.tldrgraph/search.bin`): find symbols, trace call paths, list dead code. Read-only: no
/// artifact is ever written.
///
/// Exit codes: 0 answered (a trace with no path included), 64 an unknown or ambiguous symbol
/// name, 65 a damaged index, 66 no index yet (run `tldrgraph init`), 74 an output error.
#[derive(Debug, Parser)]
#[command(name = "tg-query", version)]
pub struct Cli {
    /// Repository root, where `.tldrgraph/` lives (default: the git top level, else the
    /// current directory).
    #[arg(long, global = true)]
    pub root: Option<PathBuf>,

    /// Print JSON instead of Markdown.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The symbols that best match TEXT, each with its execution flow across layers.
    Search(SearchArgs),
    /// The call path from A to B (ids, qualified names or unique short names).
    Trace(TraceArgs),
    /// Functions and methods nothing calls, imports or references, with a reason and a
    /// confidence.
    DeadCode(DeadCodeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Reciprocal rank fusion of BM25 and embedding cosine.
    Hybrid,
    /// BM25 over identifier-aware terms only.
    Lexical,
    /// Embedding cosine only.
    Semantic,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for, in words.
    pub text: String,

    /// How many symbols to return.
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub top_k: usize,

    /// Also pack the most relevant symbols' signatures and intents into at most this many
    /// tokens (approximated as 4 characters per token): a context pack for an agent.
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

    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Args)]
pub struct DeadCodeArgs {
    /// Only findings with at least this confidence (0 to 1).
    #[arg(long, value_name = "C", default_value_t = 0.0)]
    pub min_confidence: f64,
}
