use crate::util::log;

/// A key-value store.
#[derive(Debug, Default)]
pub struct Store {
    name: String,
}

pub enum Mode {
    Read,
    Write,
}

pub trait Named {
    fn name(&self) -> &str;

    /// A default method.
    fn shout(&self) -> String {
        self.name().to_uppercase()
    }
}

impl Store {
    /// Opens a store by name.
    pub fn open(name: &str) -> Self {
        log(name);
        let mut store = Store { name: name.to_string() };
        store.touch();
        Self::validate(&store);
        store
    }

    fn touch(&mut self) {
        self.flush_all();
    }

    fn flush_all(&self) {}

    fn validate(_store: &Store) {}
}

impl Named for Store {
    fn name(&self) -> &str {
        &self.name
    }
}
