//! Command-line options.

use clap::Parser;
use std::path::PathBuf;
use tg_shared::options::Selection;
use tg_shared::stage::StageArgs;

/// Extract a code graph (symbols, calls, imports, includes, inheritance) from a repository and
/// write it as NDJSON (one JSON record per line; see `tg_shared::record` for the schema).
///
/// Exit codes: 0 done (per-file problems are `diagnostic` records), 2 bad arguments, 64 a path
/// outside the root, 66 a path that does not exist, 73 the output cannot be written, 74 other I/O.
#[derive(Debug, Parser)]
#[command(name = "tg-extract", version)]
pub struct Cli {
    /// Files or directories to extract, relative to the current directory (default: the root).
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub selection: Selection,

    /// Write the stream to FILE (only if its content changed) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Skip files larger than this many bytes (suffixes K, M, KiB, MiB accepted). Large enough
    /// for amalgamated C libraries (sqlite3.c is 9 MB); minified and big generated files are
    /// skipped by their shape instead.
    #[arg(long, value_name = "BYTES", default_value = "32MiB", value_parser = parse_size)]
    pub max_file_size: u64,

    /// Parse with at most N threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Neither read nor write the per-file cache in .tldrgraph/cache/.
    #[arg(long)]
    pub no_cache: bool,

    /// Parse only slice K of N (0 <= K < N; a file's slice is a hash of its path) and write
    /// its facts to --facts-out instead of a stream; the store is neither read nor written.
    #[arg(long, value_name = "K/N", value_parser = crate::shard::parse_shard, requires = "facts_out", conflicts_with_all = ["output", "merge"])]
    pub shard: Option<crate::shard::Shard>,

    /// Where --shard writes its facts (the format of the per-file cache).
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub facts_out: Option<PathBuf>,

    /// Facts files written by shards: used as the per-file cache, so only files no shard
    /// parsed (or that changed since) are parsed; the stream is the one a single run writes.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub merge: Vec<PathBuf>,

    /// Write what changed since the last run instead of the whole stream, when only files
    /// whose interface is unchanged were edited (or nothing changed): a patch, whose header
    /// names the streams it leads from and to, holding the replaced lines, their new versions
    /// and the stream's tail. Otherwise the whole stream, as without this flag. The whole
    /// stream is kept in the cache either way.
    #[arg(long, conflicts_with_all = ["no_cache", "merge", "shard"])]
    pub patch: bool,
}

/// `2097152`, `512K`, `2M`, `2MiB` → bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (try 2097152 or 2MiB)"))?;
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        other => return Err(format!("unknown size unit {other:?} (use K, M or G)")),
    };
    number
        .checked_mul(factor)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::{parse_size, Cli};

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("2MiB"), Ok(2 * 1024 * 1024));
        assert_eq!(parse_size("512K"), Ok(512 * 1024));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3X").is_err());
    }
}
