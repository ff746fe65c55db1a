//! The embedded sentence embedder: all-MiniLM-L6-v2 distilled into a static token table
//! (`pipelines/model/distill.py`, run once by `make model`), so embedding a text is tokenising it
//! and summing table rows: tens of thousands of texts per second, in-process, offline.
//!
//! The table is looked up at `$TLDRGRAPH_MODEL`, else
//! `$XDG_CACHE_HOME/tldrgraph/models/` (`~/.cache/...`) [`MODEL_FILE`]. Without it, tg-embed
//! says so and search falls back to lexical.

pub mod service;
pub mod wordpiece;

use crate::hash::content_hash;
use std::path::{Path, PathBuf};
use wordpiece::WordPiece;

pub const MODEL_ENV: &str = "TLDRGRAPH_MODEL";
pub const MODEL_FILE: &str = "all-minilm-l6-v2.static.bin";
const MAGIC: &[u8; 8] = b"TGSTATIC";
/// Tokens of a text that count (the model's own limit is 512; symbol texts are short).
pub const MAX_TOKENS: usize = 256;

/// Where the table is looked for.
pub fn model_path() -> PathBuf {
    if let Some(path) = std::env::var_os(MODEL_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    cache.join("tldrgraph").join("models").join(MODEL_FILE)
}

/// The static model: tokenizer and one row per token.
pub struct StaticModel {
    tokenizer: WordPiece,
    dim: usize,
    table: Vec<f32>,
    /// Name and content hash: vectors from another table are never mixed with these.
    id: String,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("id", &self.id)
            .field("dim", &self.dim)
            .finish()
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let slice = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([slice[0], slice[1], slice[2], slice[3]]))
}

/// The id of the table at `path` (what [`StaticModel::id`] gives once loaded), checked for shape
/// and hashed without building the model: enough to tell whether earlier vectors are valid.
pub fn model_id(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let bad = |what: &str| format!("{}: not a tldrgraph model table ({what})", path.display());
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut header = [0u8; 24];
    file.read_exact(&mut header)
        .map_err(|_| bad("short header"))?;
    if &header[..8] != MAGIC.as_slice() {
        return Err(bad("bad magic"));
    }
    let field = |at: usize| u32_at(&header, at).map(|v| v as u64).unwrap_or(0);
    let (vocab, dim, words_len) = (field(12), field(16), field(20));
    let expected = 24 + words_len + vocab * dim * 4;
    let size = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if field(8) != 1 || size != expected {
        return Err(bad("unknown version or wrong size"));
    }
    drop(file);
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(id_of(&bytes))
}

/// The whole table's hash: a table distilled again (other weights, same vocabulary) is another
/// model, and vectors of the old one are not reused with it.
fn id_of(bytes: &[u8]) -> String {
    format!("static:all-MiniLM-L6-v2:{}", &content_hash(bytes)[..12])
}

impl StaticModel {
    /// Reads a table written by `distill.py`; the error says what is wrong with which file.
    pub fn load(path: &Path) -> Result<StaticModel, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |what: &str| format!("{}: not a tldrgraph model table ({what})", path.display());
        if bytes.get(..8) != Some(MAGIC.as_slice()) {
            return Err(bad("bad magic"));
        }
        let version = u32_at(&bytes, 8).ok_or_else(|| bad("short header"))?;
        let vocab = u32_at(&bytes, 12).ok_or_else(|| bad("short header"))? as usize;
        let dim = u32_at(&bytes, 16).ok_or_else(|| bad("short header"))? as usize;
        let words_len = u32_at(&bytes, 20).ok_or_else(|| bad("short header"))? as usize;
        if version != 1 || dim == 0 || vocab == 0 {
            return Err(bad("unknown version or empty"));
        }
        let words_end = 24 + words_len;
        let words = bytes
            .get(24..words_end)
            .and_then(|w| std::str::from_utf8(w).ok())
            .ok_or_else(|| bad("vocabulary"))?;
        let tokens: Vec<String> = words.split('\n').map(str::to_string).collect();
        if tokens.len() != vocab {
            return Err(bad("vocabulary size"));
        }
        let floats = bytes.get(words_end..).ok_or_else(|| bad("table"))?;
        if floats.len() != vocab * dim * 4 {
            return Err(bad("table size"));
        }
        let table: Vec<f32> = floats
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(StaticModel {
            tokenizer: WordPiece::new(&tokens).map_err(|e| bad(&e))?,
            dim,
            table,
            id: id_of(&bytes),
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The unit-length embedding of `text` (all zeros when it has no token).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dim];
        for id in self.tokenizer.ids(text, MAX_TOKENS) {
            let row = &self.table[id as usize * self.dim..(id as usize + 1) * self.dim];
            for (s, v) in sum.iter_mut().zip(row) {
                *s += v;
            }
        }
        normalize(&mut sum);
        sum
    }
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// Dot product (the cosine of unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
