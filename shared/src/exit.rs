//! Exit codes shared by every binary (sysexits-style; 2 is left to clap's usage errors).

/// Success: the command did what was asked (per-file problems are diagnostics, not failures).
pub const OK: i32 = 0;
/// Usage error found after parsing arguments (e.g. a path outside the root).
pub const USAGE: i32 = 64;
/// Bad input data: malformed NDJSON, YAML or JSON.
pub const DATA: i32 = 65;
/// An input path does not exist or cannot be opened.
pub const NO_INPUT: i32 = 66;
/// Internal error (a bug): please report it.
pub const SOFTWARE: i32 = 70;
/// Output could not be created or written.
pub const CANT_CREATE: i32 = 73;
/// Other I/O error.
pub const IO: i32 = 74;
/// A stage binary the pipeline needs is missing (not beside `tldrgraph`, not on PATH).
pub const UNAVAILABLE: i32 = 69;
/// Another run holds the repository lock (`.tldrgraph/tldrgraph.lock`); try again later.
pub const LOCKED: i32 = 75;
/// A patch (`tg-extract --patch`) this stage cannot apply: the state it keeps is of another
/// stream than the patch's base, of another config, or missing. Nothing was written; run the
/// whole stream through the stage instead.
pub const NO_BASE: i32 = 76;
/// Refused: the store or an input would lead outside the repository (a `.tldrgraph` that is a
/// symlink, a link in it pointing elsewhere).
pub const NO_PERM: i32 = 77;

/// `tldrgraph status --exit-code`: one code per contract state, for scripts and Make.
pub mod state {
    /// `done`.
    pub const DONE: i32 = 0;
    /// `needs_layers`.
    pub const NEEDS_LAYERS: i32 = 10;
    /// `needs_confirmation`.
    pub const NEEDS_CONFIRMATION: i32 = 11;
    /// `needs_enrichment`.
    pub const NEEDS_ENRICHMENT: i32 = 12;
    /// `needs_embeddings`.
    pub const NEEDS_EMBEDDINGS: i32 = 13;
    /// The last build is out of date: sources changed since.
    pub const STALE: i32 = 14;
    /// Nothing was built yet in this repository.
    pub const NOT_BUILT: i32 = 15;
    /// The state cannot be read (a damaged `.tldrgraph/state.json`, or tg-status failed).
    pub const ERROR: i32 = 16;
}
