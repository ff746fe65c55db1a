//! Command-line options.

use clap::Parser;
pub use tg_shared::options::Embeddings;
use tg_shared::options::{EmbeddingsChoice, Http};
use tg_shared::stage::{StageArgs, StreamArgs};

/// Embed every symbol of a stream and build the search index (`.tldrgraph/search.bin`,
/// `.tldrgraph/vectors.i8`) that `tldrgraph query`, `trace` and `dead-code` read.
///
/// Passes the stream through. Each symbol's text (its name and qualified name in words, layer,
/// file, signature, intent or doc line, and the names it calls and is called by) is embedded
/// once: vectors are keyed by a hash of that text, so a rerun embeds only texts that changed.
/// The default embedder is all-MiniLM-L6-v2 distilled into a static table (`make model`);
/// without it, or with the HTTP provider unreachable, the index is lexical only and the stage
/// appends `needs_embeddings`. Its summary says `embeddings_ready`.
///
/// Exit codes: 0 done, 2 bad arguments, 64 a bad provider setting, 65 a malformed stream,
/// 66 an input that does not exist, 73 an artifact cannot be written, 74 other I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-embed", version)]
pub struct Cli {
    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub stream: StreamArgs,

    #[command(flatten)]
    pub embedder: EmbeddingsChoice,

    #[command(flatten)]
    pub http: Http,

    /// Texts per HTTP request.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=2048))]
    pub http_batch: u64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
