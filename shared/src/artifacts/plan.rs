//! `.tldrgraph/plan.json`: the ranked bottleneck candidates of the last build and the coverage
//! figures behind them. Written by tg-plan; read by `tldrgraph plan` and `approve`.

use crate::exit;
use crate::record::Candidate;
use crate::stage::Failure;
use crate::store::{self, Store};
use serde::{Deserialize, Serialize};

/// Read with defaults for figures a plan written by an older build lacks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanFile {
    pub eligible: u64,
    pub budget: u64,
    pub skipped_trivial: u64,
    pub skipped_not_product: u64,
    pub product_edges: u64,
    pub covered_edges: u64,
    pub cross_layer_calls: u64,
    pub coverable_calls: u64,
    pub covered_calls: u64,
    pub betweenness_covered: f64,
    pub betweenness: String,
    pub candidates: Vec<Candidate>,
}

impl PlanFile {
    /// Reads the plan; the error says what to do (`tldrgraph init` writes it).
    pub fn read(store: &Store) -> Result<PlanFile, Failure> {
        let path = store.path(super::PLAN);
        let bytes = std::fs::read(&path).map_err(|e| {
            Failure::new(exit::NO_INPUT, format!("{}: {e}", path.display()))
                .with_hint("run `tldrgraph init --json` first: it writes the plan")
        })?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Failure::new(
                exit::DATA,
                format!("{}: line {}: {e}", path.display(), e.line()),
            )
            .with_hint("run `tldrgraph init --json` again to rewrite it")
        })
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
