//! Command-line options.

use clap::Parser;
use std::path::PathBuf;
use tg_shared::stage::{StageArgs, StreamArgs};

/// Assign every node of a tldrgraph stream to an architectural layer.
///
/// Reads the stream (stdin or --input), sets `layer` on every node, marks edges that cross
/// layers (`cross_layer`) and those that break `may_depend_on` (`violation`), appends one
/// `layer` record per layer and writes `.tldrgraph/layers.yaml` and `.tldrgraph/symbols.md`.
/// Without `.tldrgraph/layers.config.yaml` every node lands in `unclassified` and a
/// `needs_layers` status record is appended.
///
/// Exit codes: 0 done, 2 bad arguments, 65 a bad config or a malformed/truncated stream,
/// 66 an input that does not exist, 73 an artifact cannot be written, 74 other I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-classify", version)]
pub struct Cli {
    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub stream: StreamArgs,

    /// The layers config (default: ROOT/.tldrgraph/layers.config.yaml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Validate the config and, given a stream, print what each layer matches; no stream
    /// output, no artifacts.
    #[arg(long)]
    pub check: bool,

    /// With --check: print the report as JSON.
    #[arg(long, requires = "check")]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
