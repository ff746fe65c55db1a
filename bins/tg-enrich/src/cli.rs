//! Command-line options.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use tg_shared::stage::{StageArgs, StreamArgs};

/// Put intents on the approved bottleneck symbols of a planned stream, and ask for the ones
/// still missing.
///
/// Passes the stream through with `intent`, `intent_hash` and `intent_source` set on every node
/// that has a stored intent (`.tldrgraph/intents.ndjson`; a stale one keeps the hash it was
/// written for, so readers can tell). At the end, when approved candidates lack a current
/// intent, it appends `needs_enrichment` with the next batch (also written to
/// `.tldrgraph/enrichment_request.json`), or with `--provider` asks an LLM endpoint for them.
/// Intents of symbols that are gone are pruned; a symbol moved with its source unchanged keeps
/// its intent under the new id.
///
/// `--apply FILE` (or `-`) stores the agent's answer instead: NDJSON, a JSON array or a YAML list
/// of `{"id", "intent"}` (optionally `layer`, `inputs`, `outputs`), checked whole against the
/// last build's graph before anything is written.
///
/// Exit codes: 0 done, 2 bad arguments, 64 a bad provider setting, 65 a malformed stream,
/// answer file or intents file, 66 an input that does not exist, 73 an artifact cannot be
/// written, 74 other I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-enrich", version)]
pub struct Cli {
    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub stream: StreamArgs,

    /// Store the intents in FILE (`-`: stdin) and exit; no stream is read.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "output"])]
    pub apply: Option<PathBuf>,

    /// Symbols per batch (default: the batch size approved with `tldrgraph init --yes`, else 200).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: Option<u64>,

    /// Enrich at most N symbols this run (the first by rank).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// `off`: zero-token mode: nothing is asked or sent; symbols without an intent get the first
    /// sentence of their doc comment, marked `intent_source: doc`.
    #[arg(long, value_enum, default_value_t = Enrich::Auto)]
    pub enrich: Enrich,

    /// Ask an LLM endpoint instead of the calling agent (default: $TLDRGRAPH_LLM_PROVIDER, else
    /// the agent). `openai`: any OpenAI-compatible chat-completions endpoint
    /// ($TLDRGRAPH_LLM_BASE_URL, $TLDRGRAPH_LLM_MODEL, key in $TLDRGRAPH_LLM_API_KEY or
    /// $OPENAI_API_KEY); `ollama`: a local Ollama (default http://127.0.0.1:11434/v1).
    #[arg(long, value_enum)]
    pub provider: Option<Provider>,

    /// Spend cap: send at most N requests this run, retries included.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub max_requests: u64,

    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: u64,

    /// Seconds one request may take, connection to last byte.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub timeout: u64,

    /// Retries of a request answered 429 or 5xx, or timed out, with exponential backoff.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,

    /// Allow plain http to an endpoint other than loopback (the code and the key would travel
    /// unencrypted); same as TLDRGRAPH_ALLOW_INSECURE_HTTP=1.
    #[arg(long)]
    pub allow_insecure_http: bool,

    /// Keep the intents of symbols absent from the stream (for a filtered stream).
    #[arg(long)]
    pub no_prune: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Enrich {
    Off,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// The calling agent answers `needs_enrichment` batches.
    Agent,
    Openai,
    Ollama,
}
