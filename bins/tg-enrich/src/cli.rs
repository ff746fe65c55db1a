//! Command-line options.

use clap::Parser;
use std::path::PathBuf;
pub use tg_shared::options::{Enrich, Provider};
use tg_shared::options::{Enrichment, Http, Llm};
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

    #[command(flatten)]
    pub enrichment: Enrichment,

    #[command(flatten)]
    pub llm: Llm,

    #[command(flatten)]
    pub http: Http,

    /// Store the intents in FILE (`-`: stdin) and exit; no stream is read.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "output"])]
    pub apply: Option<PathBuf>,

    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: u64,

    /// Keep the intents of symbols absent from the stream (for a filtered stream).
    #[arg(long)]
    pub no_prune: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
