//! Command-line options.

use clap::Parser;
use std::path::PathBuf;
use tg_shared::stage::StageArgs;

/// Print the tldrgraph contract state as one JSON object.
///
/// From a stream (stdin or --input): the first blocking status record in pipeline order
/// (needs_layers, needs_confirmation, needs_enrichment, needs_embeddings), else `done` with
/// counts; the graph is written to `.tldrgraph/graph.json` and the state to
/// `.tldrgraph/state.json`. With no stream (stdin is a terminal) or --from-artifacts: the state
/// of the last build, read from `.tldrgraph/` without re-running anything, with `fresh` telling
/// whether the sources changed since.
///
/// Exit codes: 0 the state was reported (whatever it is), 2 bad arguments, 65 a malformed or
/// truncated stream, 66 an input that does not exist, 73 an artifact cannot be written, 74 I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-status", version)]
pub struct Cli {
    #[command(flatten)]
    pub stage: StageArgs,

    /// Read the stream from FILE instead of stdin.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Report the last build's state from `.tldrgraph/`, even if stdin is a pipe.
    #[arg(long, conflicts_with = "input")]
    pub from_artifacts: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
