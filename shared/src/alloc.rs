//! The process allocator of every tldrgraph binary: they all link this crate, so it is chosen
//! here once, and swapping it is this one file.
//!
//! jemalloc, for two measured reasons. tree-sitter makes many small allocations from both
//! threads: it made cold extraction of the stdlib ~13% faster than glibc's malloc
//! (BENCHMARKS.md). And the stream stages read millions of records, each into a few small
//! strings that live for one line: glibc spent about a sixth of their time consolidating and
//! unlinking free chunks.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
