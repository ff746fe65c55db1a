//! `.tldrgraph/plan.json`: the ranked bottleneck candidates of the last build and the coverage
//! figures behind them. Written by tg-plan; read by `tldrgraph plan` and `approve`.

use crate::exit;
use crate::record::Candidate;
use crate::stage::Failure;
use crate::store::{self, Store};
use serde::{Deserialize, Serialize};

/// The plan and the figures behind it, in the file's field order. Read with defaults for
/// figures a plan written by an older build lacks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanFile {
    pub eligible: u64,
    /// The most candidates this repository's plan may hold.
    pub budget: u64,
    /// Symbols left out as trivial, and as not product code (tests, examples, tooling,
    /// generated), among the rankable kinds.
    pub skipped_trivial: u64,
    pub skipped_not_product: u64,
    /// Dependency edges between product symbols (calls, inherits), and those with a candidate
    /// at an end.
    pub product_edges: u64,
    pub covered_edges: u64,
    pub cross_layer_calls: u64,
    /// Cross-layer call edges with an eligible endpoint: the ones selection can cover.
    pub coverable_calls: u64,
    pub covered_calls: u64,
    /// Share of all betweenness mass that sits on the candidates.
    pub betweenness_covered: f64,
    /// How betweenness was computed (exact, or sampled from how many sources).
    pub betweenness: String,
    pub candidates: Vec<Candidate>,
}

impl PlanFile {
    /// Reads the plan; the error says what to do (`tldrgraph init` writes it).
    pub fn read(store: &Store) -> Result<PlanFile, Failure> {
        super::read_json(store, super::PLAN, "the plan")
    }

    /// Writes the plan (pretty, one trailing newline), only if it changed.
    pub fn write(&self, store: &Store) -> Result<(), Failure> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise the plan: {e}")))?
            + "\n";
        let path = store.path(super::PLAN);
        store::write_if_changed(&path, text.as_bytes())
            .map(|_| ())
            .map_err(|e| Failure::cant_write(&path, &e))
    }
}
