//! Command-line options.

use clap::Parser;
/// The default `--batch`: symbols per enrichment round.
pub use tg_shared::contract::DEFAULT_BATCH;
pub use tg_shared::options::Enrich;
use tg_shared::options::{Approval, Enrichment};
use tg_shared::stage::{StageArgs, StreamArgs};

/// Rank the architectural bottleneck symbols of a classified stream and ask for approval
/// before any token is spent on summarising them.
///
/// Passes the stream through, appends one `candidate` record per selected symbol (ranked, with
/// reasons and metrics) and, when candidates still need an intent the user has not approved,
/// a `needs_confirmation` status. Writes `.tldrgraph/plan.json`; `--yes` records approval in
/// `.tldrgraph/approval.json`. Before layers exist (a `needs_layers` status upstream) it ranks
/// nothing.
///
/// Exit codes: 0 done, 2 bad arguments, 65 a malformed or truncated stream or a bad config,
/// 66 an input that does not exist, 73 an artifact cannot be written, 74 other I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-plan", version)]
pub struct Cli {
    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub stream: StreamArgs,

    #[command(flatten)]
    pub enrichment: Enrichment,

    #[command(flatten)]
    pub approval: Approval,

    /// Override `plan.min_lines` of the config.
    #[arg(long, value_name = "N")]
    pub min_lines: Option<u32>,

    /// Override `plan.include_tests` of the config.
    #[arg(long)]
    pub include_tests: bool,

    /// Override `plan.include_default_layer` of the config.
    #[arg(long)]
    pub include_default_layer: bool,

    /// Override `plan.coverage` of the config (0 < share <= 1).
    #[arg(long, value_name = "SHARE")]
    pub coverage: Option<f64>,

    /// Never select more than N symbols (default 1000, or `plan.max_symbols` in the config).
    #[arg(long, value_name = "N")]
    pub max_symbols: Option<u32>,

    /// Override `plan.max_share` of the config (0 < share <= 1).
    #[arg(long, value_name = "SHARE")]
    pub max_share: Option<f64>,
}

impl Cli {
    /// Symbols per enrichment batch.
    pub fn batch(&self) -> u64 {
        self.enrichment.batch.unwrap_or(DEFAULT_BATCH)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
