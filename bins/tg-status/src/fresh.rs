//! The state of the last build, read from `.tldrgraph/`, and whether it is still current:
//! content hashes of the sources (and of the layers config) against those the build saw.

use crate::extend;
use serde_json::{json, Value};
use std::path::Path;
use tg_shared::artifacts::{
    self,
    state::{ReadError, SavedState},
};
use tg_shared::exit;
use tg_shared::freshness::Verified;
use tg_shared::stage::Failure;
use tg_shared::store::Store;

/// The status of a repository where nothing was built yet.
pub const NOT_BUILT: &str = "not_built";

pub fn from_artifacts(root: &Path, store: &Store) -> Result<Value, Failure> {
    let state = match SavedState::read(store) {
        Ok(state) => state,
        Err(ReadError::Missing) => {
            return Ok(json!({
                "status": NOT_BUILT,
                "fresh": false,
                "next_action": "Run `tldrgraph init --json` to build the graph",
            }));
        }
        Err(ReadError::Unreadable(path, err)) => {
            return Err(Failure::new(
                exit::NO_INPUT,
                format!("cannot read {}: {err}", path.display()),
            ))
        }
        Err(ReadError::Damaged(path, e)) => {
            // A damaged record of the last build is no build: say so, and let init rewrite it.
            eprintln!(
                "tg-status: warning: ignoring damaged {}: line {}: {e}",
                path.display(),
                e.line()
            );
            return Ok(json!({
                "status": NOT_BUILT,
                "fresh": false,
                "reason": format!("{} is damaged (line {}: {e})", artifacts::STATE, e.line()),
                "next_action": "Run `tldrgraph init --json` to build the graph again",
            }));
        }
    };
    let changes =
        tg_lang::walk::changes_since(root, store, &state, &mut Verified::load(store)).to_fields();
    Ok(extend(state.payload, changes))
}
