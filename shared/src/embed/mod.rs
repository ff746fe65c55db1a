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
    table: Table,
    /// Name and content hash: vectors from another table are never mixed with these.
    id: String,
}

/// Where the rows are: in memory, for tg-embed's hundreds of thousands of texts; or left in
/// the file and read as a text needs them, for a query's one short text (reading and converting
/// the 47 MB table was a fifth of a hybrid query on the kernel).
enum Table {
    Memory(Vec<f32>),
    File { file: std::fs::File, at: u64 },
}

/// A table's header: the sizes that place its vocabulary and its rows.
struct Header {
    vocab: usize,
    dim: usize,
    words_len: usize,
}

impl Header {
    const LEN: usize = 24;

    fn parse(bytes: &[u8], bad: &dyn Fn(&str) -> String) -> Result<Header, String> {
        if bytes.get(..8) != Some(MAGIC.as_slice()) {
            return Err(bad("bad magic"));
        }
        let field = |at: usize| u32_at(bytes, at).ok_or_else(|| bad("short header"));
        let (version, vocab, dim, words_len) = (field(8)?, field(12)?, field(16)?, field(20)?);
        if version != 1 || dim == 0 || vocab == 0 {
            return Err(bad("unknown version or empty"));
        }
        Ok(Header {
            vocab: vocab as usize,
            dim: dim as usize,
            words_len: words_len as usize,
        })
    }

    /// Where the rows begin.
    fn table_at(&self) -> usize {
        Self::LEN + self.words_len
    }

    fn file_len(&self) -> u64 {
        self.table_at() as u64 + (self.vocab as u64) * (self.dim as u64) * 4
    }

    /// The tokenizer of the vocabulary `words`.
    fn tokenizer(&self, words: &[u8], bad: &dyn Fn(&str) -> String) -> Result<WordPiece, String> {
        let words = std::str::from_utf8(words).map_err(|_| bad("vocabulary"))?;
        let tokens: Vec<String> = words.split('\n').map(str::to_string).collect();
        if tokens.len() != self.vocab {
            return Err(bad("vocabulary size"));
        }
        WordPiece::new(&tokens).map_err(|e| bad(&e))
    }
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
    check_shape(path)?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(id_of(&bytes))
}

/// The table's header and vocabulary, read from `path` and checked against the file's size.
fn read_head(path: &Path) -> Result<(Header, Vec<u8>, std::fs::File), String> {
    use std::io::Read;
    let bad = |what: &str| format!("{}: not a tldrgraph model table ({what})", path.display());
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut head = [0u8; Header::LEN];
    file.read_exact(&mut head)
        .map_err(|_| bad("short header"))?;
    let header = Header::parse(&head, &bad)?;
    let size = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if size != header.file_len() {
        return Err(bad("wrong size"));
    }
    let mut words = vec![0u8; header.words_len];
    file.read_exact(&mut words).map_err(|_| bad("vocabulary"))?;
    Ok((header, words, file))
}

fn check_shape(path: &Path) -> Result<(), String> {
    read_head(path).map(|_| ())
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
        let header = Header::parse(&bytes, &bad)?;
        if bytes.len() as u64 != header.file_len() {
            return Err(bad("table size"));
        }
        let tokenizer = header.tokenizer(&bytes[Header::LEN..header.table_at()], &bad)?;
        let table: Vec<f32> = bytes[header.table_at()..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(StaticModel {
            tokenizer,
            dim: header.dim,
            table: Table::Memory(table),
            id: id_of(&bytes),
        })
    }

    /// Opens the table at `path` and leaves its rows in the file, to be read as texts need them.
    /// Its id is `verified_id` when the caller found the file unchanged since it was hashed to
    /// that id ([`crate::freshness::verified_before`]); otherwise the whole file is hashed.
    pub fn open(path: &Path, verified_id: Option<String>) -> Result<StaticModel, String> {
        let bad = |what: &str| format!("{}: not a tldrgraph model table ({what})", path.display());
        let (header, words, file) = read_head(path)?;
        let tokenizer = header.tokenizer(&words, &bad)?;
        let id = match verified_id {
            Some(id) => id,
            None => model_id(path)?,
        };
        Ok(StaticModel {
            tokenizer,
            dim: header.dim,
            table: Table::File {
                file,
                at: header.table_at() as u64,
            },
            id,
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The unit-length embedding of `text` (all zeros when it has no token); why not, when a
    /// row left in the file cannot be read.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, String> {
        let mut sum = vec![0f32; self.dim];
        let mut row_bytes = Vec::new();
        for id in self.tokenizer.ids(text, MAX_TOKENS) {
            let start = id as usize * self.dim;
            match &self.table {
                Table::Memory(table) => add(&mut sum, &table[start..start + self.dim]),
                Table::File { file, at } => {
                    use std::os::unix::fs::FileExt;
                    row_bytes.resize(self.dim * 4, 0);
                    file.read_exact_at(&mut row_bytes, at + start as u64 * 4)
                        .map_err(|e| {
                            format!("{}: cannot read a row of the model table: {e}", self.id)
                        })?;
                    for (s, c) in sum.iter_mut().zip(row_bytes.chunks_exact(4)) {
                        *s += f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
            }
        }
        normalize(&mut sum);
        Ok(sum)
    }
}

fn add(sum: &mut [f32], row: &[f32]) {
    for (s, v) in sum.iter_mut().zip(row) {
        *s += v;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A table in `distill.py`'s format: these tokens, each row `dim` floats from `row`.
    fn write_table(path: &Path, tokens: &[&str], dim: usize, row: impl Fn(usize, usize) -> f32) {
        let words = tokens.join("\n");
        let mut bytes = MAGIC.to_vec();
        for field in [1, tokens.len(), dim, words.len()] {
            bytes.extend_from_slice(&(field as u32).to_le_bytes());
        }
        bytes.extend_from_slice(words.as_bytes());
        for t in 0..tokens.len() {
            for d in 0..dim {
                bytes.extend_from_slice(&row(t, d).to_le_bytes());
            }
        }
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn rows_read_from_the_file_embed_as_the_table_in_memory_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        let tokens = ["[UNK]", "fetch", "url", "##s", "parse"];
        write_table(&path, &tokens, 3, |t, d| (t * 3 + d) as f32 - 4.5);
        let memory = StaticModel::load(&path).unwrap();
        let file = StaticModel::open(&path, None).unwrap();
        assert_eq!(memory.id(), file.id());
        assert_eq!(file.id(), model_id(&path).unwrap());
        for text in ["fetch urls", "parse the url", "", "unknown words here"] {
            let (a, b) = (memory.embed(text).unwrap(), file.embed(text).unwrap());
            assert_eq!(a, b, "{text}");
        }
        // "fetch" is row 1: (3, 4, 5) - 4.5, normalised.
        let v = file.embed("fetch").unwrap();
        let norm = (1.5f32 * 1.5 + 0.25 + 0.25).sqrt();
        assert_eq!(v, vec![-1.5 / norm, -0.5 / norm, 0.5 / norm]);
        // A caller that verified the file since gives its id, and it is not hashed again.
        let trusted = StaticModel::open(&path, Some("static:given".into())).unwrap();
        assert_eq!(trusted.id(), "static:given");
    }

    #[test]
    fn a_table_cut_short_or_not_a_table_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        write_table(&path, &["[UNK]", "a"], 4, |_, _| 1.0);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let err = StaticModel::open(&path, None).unwrap_err();
        assert!(
            err.contains("model.bin") && err.contains("wrong size"),
            "{err}"
        );
        assert!(StaticModel::load(&path).unwrap_err().contains("table size"));
        std::fs::write(&path, b"not a table at all, but long enough").unwrap();
        assert!(StaticModel::open(&path, None)
            .unwrap_err()
            .contains("bad magic"));
        write_table(&path, &["a", "b"], 2, |_, _| 1.0);
        assert!(StaticModel::open(&path, None)
            .unwrap_err()
            .contains("[UNK]"));
    }
}
