//! A fixture crate.

mod store;
pub mod util;

use crate::store::Store;

/// Opens the default store.
pub fn open_default() -> Store {
    let store = Store::open("default");
    util::log("opened");
    store
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens() {
        let _ = open_default();
    }
}
