//! Command-line options.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
pub use tg_shared::options::{DeadCodeArgs, Mode, SearchArgs, TraceArgs};

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

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
