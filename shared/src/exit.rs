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
