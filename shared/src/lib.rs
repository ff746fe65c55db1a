//! `tg-shared`, the core every tldrgraph stage builds on: the NDJSON records (and the id
//! scheme) with their streaming codec, the stage runner, the `.tldrgraph/` store and its
//! artifacts, the layers config, the contract payloads, freshness, intents, search, the
//! embedder, hashing and exit codes. It knows no language: those are tg-lang (rules, the walk)
//! and tg-parse (grammars).

mod alloc;
pub mod approval;
pub mod artifacts;
pub mod codec;
pub mod contract;
mod edge_line;
pub mod embed;
pub mod exclude;
pub mod exit;
pub mod frames;
pub mod freshness;
pub mod hash;
pub mod http;
pub mod intents;
pub mod layers;
pub mod lexical;
pub mod ndjson;
pub mod options;
pub mod patch;
pub mod record;
pub mod search;
pub mod stage;
pub mod store;
pub mod suggest;
pub mod yaml;
