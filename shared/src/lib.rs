//! `tg-shared`: what two or more tldrgraph stages need — the NDJSON record types and their
//! streaming codec, the `.tldrgraph/` store, content hashing, exit codes, the cache codec and
//! the language registry.

pub mod approval;
pub mod artifacts;
pub mod codec;
pub mod contract;
pub mod embed;
pub mod exit;
pub mod freshness;
pub mod hash;
pub mod http;
pub mod intents;
pub mod lang;
pub mod layers;
pub mod lexical;
pub mod ndjson;
pub mod record;
pub mod search;
pub mod stage;
pub mod store;
pub mod suggest;
pub mod walk;
pub mod yaml;
