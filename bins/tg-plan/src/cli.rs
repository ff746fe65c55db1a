//! Command-line options.

use clap::{Parser, ValueEnum};
/// The default `--batch`: symbols per enrichment round.
pub use tg_shared::contract::DEFAULT_BATCH;
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

    /// Symbols per enrichment batch (an agent round).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: u64,

    /// Enrich at most N symbols this run (0: none, so nothing to confirm).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Approve the current candidates (recorded in .tldrgraph/approval.json).
    #[arg(long)]
    pub yes: bool,

    /// `off`: zero-token mode, no confirmation and no enrichment; the plan is still written.
    #[arg(long, value_enum, default_value_t = Enrich::Auto)]
    pub enrich: Enrich,

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Enrich {
    Off,
    Auto,
}
