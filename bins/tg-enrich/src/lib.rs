//! tg-enrich: one-line intents for the approved bottleneck symbols (the agent contract's
//! `needs_enrichment`), from the calling agent (`needs_enrichment` batches answered with `--apply`), from an LLM endpoint
//! ([`provider`]), or in zero-token mode from doc comments. Intents are stored per symbol in
//! `.tldrgraph/intents.ndjson` ([`tg_shared::intents`]) with the source hash they describe, so
//! only a symbol whose own source changed is asked about again.

pub mod apply;
pub mod cli;
pub mod patched;
pub mod prompt;
pub mod provider;
pub mod stream;

use cli::Cli;
use tg_shared::stage::Failure;

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-enrich";

pub fn run(cli: &Cli) -> Result<(), Failure> {
    cli.http.apply();
    let (_, store) = cli.stage.workspace()?;
    match &cli.apply {
        Some(file) => apply::run(&store, file, cli.stage.quiet),
        None => stream::run(cli, &store),
    }
}
