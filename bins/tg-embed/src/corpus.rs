//! Each symbol's texts, made when they are needed rather than all held at once (on the kernel
//! the two texts of a million symbols would take a gigabyte).

use crate::text::{self, Facts, NEIGHBOURS};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use tg_shared::lexical;
use tg_shared::record::EdgeKind;
use tg_shared::search::{IndexEdge, IndexLayer, IndexSymbol, Postings};

/// The symbols with the first [`NEIGHBOURS`] symbols each calls and is called by.
pub struct Corpus<'a> {
    symbols: &'a [IndexSymbol],
    layers: &'a [IndexLayer],
    calls: Vec<Vec<u32>>,
    called_by: Vec<Vec<u32>>,
}

/// Symbols whose lexical texts are tokenised at a time: the merge stays in document order and
/// only one chunk's terms are held.
const POSTINGS_CHUNK: usize = 16_384;

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

    /// BM25 postings over every symbol's lexical text.
    pub fn postings(&self) -> Postings {
        let mut by_term: FxHashMap<String, Vec<(u32, u16)>> = FxHashMap::default();
        let mut lengths = Vec::with_capacity(self.symbols.len());
        let all: Vec<usize> = (0..self.symbols.len()).collect();
        for chunk in all.chunks(POSTINGS_CHUNK) {
            // Terms per document in parallel; merged in document order, so lists come sorted.
            let per_doc: Vec<(u32, Vec<(String, u16)>)> = chunk
                .par_iter()
                .map(|&i| {
                    let terms = lexical::terms(&self.with_facts(i, text::lexical_text));
                    let mut counts: FxHashMap<String, u16> = FxHashMap::default();
                    for term in &terms {
                        let count = counts.entry(term.clone()).or_default();
                        *count = count.saturating_add(1);
                    }
                    (terms.len() as u32, counts.into_iter().collect())
                })
                .collect();
            for (&doc, (length, counts)) in chunk.iter().zip(per_doc) {
                lengths.push(length);
                for (term, tf) in counts {
                    by_term.entry(term).or_default().push((doc as u32, tf));
                }
            }
        }
        let mut sorted: Vec<(String, Vec<(u32, u16)>)> = by_term.into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (terms, lists) = sorted.into_iter().unzip();
        Postings {
            terms,
            lists,
            lengths,
        }
    }
}
