//! Each symbol's texts, made when they are needed rather than all held at once (on the kernel
//! the two texts of a million symbols would take a gigabyte).

use crate::text::{self, Facts, NEIGHBOURS};
use tg_shared::record::EdgeKind;
use tg_shared::search::{IndexEdge, IndexLayer, IndexSymbol};

/// The symbols with the first [`NEIGHBOURS`] symbols each calls and is called by.
pub struct Corpus<'a> {
    symbols: &'a [IndexSymbol],
    layers: &'a [IndexLayer],
    calls: Vec<Vec<u32>>,
    called_by: Vec<Vec<u32>>,
}

impl<'a> Corpus<'a> {
    /// `edges` sorted as the index keeps them: neighbours come in index order.
    pub fn new(symbols: &'a [IndexSymbol], layers: &'a [IndexLayer], edges: &[IndexEdge]) -> Self {
        let mut calls: Vec<Vec<u32>> = vec![Vec::new(); symbols.len()];
        let mut called_by: Vec<Vec<u32>> = vec![Vec::new(); symbols.len()];
        for edge in edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Calls && e.src != e.dst)
        {
            let out = &mut calls[edge.src as usize];
            if out.len() < NEIGHBOURS {
                out.push(edge.dst);
            }
            let back = &mut called_by[edge.dst as usize];
            if back.len() < NEIGHBOURS {
                back.push(edge.src);
            }
        }
        Corpus {
            symbols,
            layers,
            calls,
            called_by,
        }
    }

    fn with_facts<R>(&self, i: usize, make: impl FnOnce(&Facts<'_>) -> R) -> R {
        let symbol = &self.symbols[i];
        let names = |list: &[u32]| -> Vec<&str> {
            list.iter()
                .map(|&n| self.symbols[n as usize].name.as_str())
                .collect()
        };
        let (calls, called_by) = (names(&self.calls[i]), names(&self.called_by[i]));
        make(&Facts {
            id: &symbol.id,
            kind: symbol.kind,
            name: &symbol.name,
            file: &symbol.file,
            layer: symbol.layer.map(|l| self.layers[l as usize].name.as_str()),
            signature: symbol.signature.as_deref(),
            about: symbol.intent.as_deref().or(symbol.doc.as_deref()),
            calls: &calls,
            called_by: &called_by,
        })
    }

    /// The text the embedder reads for symbol `i`.
    pub fn embedding_text(&self, i: usize) -> String {
        self.with_facts(i, text::embedding_text)
    }

    /// How many symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// The text BM25 indexes for symbol `i`.
    pub fn lexical_text(&self, i: usize) -> String {
        self.with_facts(i, text::lexical_text)
    }
}
