//! Texts numbered in the order first seen, each held once: the compact graphs that impact, check
//! and the map page keep of a build refer to ids, files and layers by number.

use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct Interner {
    texts: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u32>,
}

impl Interner {
    /// The number of `text`, given it now if it has none.
    pub fn intern(&mut self, text: &str) -> u32 {
        if let Some(&number) = self.numbers.get(text) {
            return number;
        }
        let number = self.texts.len() as u32;
        let text: Arc<str> = Arc::from(text);
        self.texts.push(text.clone());
        self.numbers.insert(text, number);
        number
    }

    /// The number of `text`, if it has one.
    pub fn number(&self, text: &str) -> Option<u32> {
        self.numbers.get(text).copied()
    }

    /// The text numbered `number` (given by [`Interner::intern`]).
    pub fn text(&self, number: u32) -> &str {
        &self.texts[number as usize]
    }

    /// Every text, by number.
    pub fn texts(&self) -> impl ExactSizeIterator<Item = &str> {
        self.texts.iter().map(|t| &**t)
    }
}
