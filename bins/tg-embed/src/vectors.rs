//! The vectors of a build, written to vectors.i8 row by row as they are made (and quantised)
//! or copied from the previous build, so no matrix is ever held whole.

use crate::corpus::Corpus;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::io::{BufReader, Read, Seek, Write};
use tg_shared::artifacts;
use tg_shared::embed::service::Embedder;
use tg_shared::hash::{content_hash, reader_hash, HashingWriter};
use tg_shared::search::layout::{Column, Section};
use tg_shared::search::{
    quantize, row_bytes, Embedder as EmbedderInfo, IndexHead, IndexView, INDEX_VERSION, NO_VECTOR,
};
use tg_shared::stage::{Failure, Progress};
use tg_shared::store::{AtomicFile, Store};

/// Texts given to the embedder at a time: large enough for its own batching, small enough that
/// progress moves every second or so on two cores.
const EMBED_CHUNK: usize = 2048;

/// vectors.i8 being written, and the content hash of what went into it.
pub type MatrixFile = HashingWriter<AtomicFile>;

/// Opens the temporary file the new matrix is written to (moved into place with the index).
pub fn create_matrix(store: &Store) -> Result<MatrixFile, Failure> {
    let path = store.path(artifacts::SEARCH_VECTORS);
    AtomicFile::create(&path)
        .map(HashingWriter::new)
        .map_err(|e| Failure::cant_write(&path, &e))
}

/// What a build's embedding gave.
#[derive(Default)]
pub struct Vectors {
    pub rows: u32,
    /// Per embeddable symbol: its text hash and its row (or [`NO_VECTOR`]).
    pub assigned: Vec<(String, u32)>,
    /// Per embeddable symbol so far: its row.
    pub(crate) rows_of: Vec<u32>,
    /// Texts embedded this run, and vectors reused from the previous index.
    pub embedded: u64,
    pub reused: u64,
    pub info: Option<EmbedderInfo>,
    /// Why some or all vectors are missing.
    pub problem: Option<String>,
}

/// The previous build's vectors, by text hash, read from its matrix a row at a time.
struct Previous {
    row_of: FxHashMap<String, u32>,
    matrix: BufReader<std::fs::File>,
    position: u64,
    dim: usize,
}

impl Previous {
    /// The previous index and matrix, if they were made by `embedder_id` and are whole.
    fn open(store: &Store, embedder_id: &str) -> Option<Previous> {
        let path = store.path(artifacts::SEARCH_INDEX);
        if !path.exists() {
            return None;
        }
        if let Some(head) = IndexHead::read_any(&path).filter(|h| h.version != INDEX_VERSION) {
            eprintln!(
                "tg-embed: warning: {}: index version {} (this build reads {INDEX_VERSION}); rebuilding the index",
                path.display(),
                head.version
            );
            return None;
        }
        let old = match IndexView::open(&path) {
            Ok(old) => old,
            Err(err) => {
                eprintln!("tg-embed: warning: {err}; rebuilding the index");
                return None;
            }
        };
        let info = old.meta.embedder.as_ref().filter(|e| e.id == embedder_id)?;
        let dim = info.dim as usize;
        let matrix_path = store.path(artifacts::SEARCH_VECTORS);
        let expected = old.meta.rows as u64 * row_bytes(dim) as u64;
        let whole = std::fs::File::open(&matrix_path).and_then(|mut file| {
            let size = file.metadata()?.len();
            let hash = (size == expected)
                .then(|| reader_hash(&mut file))
                .transpose()?;
            file.rewind()?;
            Ok((file, hash))
        });
        let file = match whole {
            Ok((file, Some(hash))) if hash == old.meta.vectors_hash => file,
            Ok(_) => {
                // Not the matrix this index was written with (a run killed in between).
                eprintln!(
                    "tg-embed: warning: {} does not match {}; embedding again",
                    artifacts::SEARCH_VECTORS,
                    artifacts::SEARCH_INDEX
                );
                return None;
            }
            Err(err) => {
                eprintln!(
                    "tg-embed: warning: {}: {err}; embedding again",
                    matrix_path.display()
                );
                return None;
            }
        };
        let scanned = [
            Section::Records,
            Section::Offsets(Column::TextHash),
            Section::Blob(Column::TextHash),
        ];
        if let Err(why) = old.require(&scanned) {
            eprintln!("tg-embed: warning: {why}; embedding again");
            return None;
        }
        let row_of = (0..old.len() as u32)
            .map(|i| old.symbol(i))
            .filter(|s| s.vector != NO_VECTOR && s.vector < old.meta.rows)
            .map(|s| (s.text_hash().into_owned(), s.vector))
            .collect();
        if let Some(why) = old.failure() {
            eprintln!("tg-embed: warning: {why}; embedding again");
            return None;
        }
        Some(Previous {
            row_of,
            matrix: BufReader::with_capacity(1 << 16, file),
            position: 0,
            dim,
        })
    }

    /// The row of the text with `hash`, if the previous build had it.
    fn row(&mut self, hash: &str) -> Option<Vec<u8>> {
        let row = *self.row_of.get(hash)?;
        let offset = row as u64 * row_bytes(self.dim) as u64;
        // Rows come mostly in order: a relative seek keeps the read buffer.
        let delta = offset as i64 - self.position as i64;
        self.matrix.seek_relative(delta).ok()?;
        let mut bytes = vec![0u8; row_bytes(self.dim)];
        let read = self.matrix.read_exact(&mut bytes);
        self.position = offset + if read.is_ok() { bytes.len() as u64 } else { 0 };
        if read.is_err() {
            // A short read leaves the position unknown: find it again.
            self.position = self.matrix.stream_position().ok()?;
            return None;
        }
        Some(bytes)
    }
}

fn matrix_error(err: std::io::Error) -> Failure {
    Failure::new(
        tg_shared::exit::CANT_CREATE,
        format!("cannot write {}: {err}", artifacts::SEARCH_VECTORS),
    )
}

/// A vector for a row: made this run, or a row as stored.
enum Found {
    Fresh(Vec<f32>),
    Stored(Vec<u8>),
}

/// The embedder, loaded when the first text needs it; the reason it failed once it has.
enum State {
    Unloaded(Embedder),
    Ready(Embedder),
    Failed,
}

/// Embeds the texts of the `embeddable` symbols into `matrix`, in their order, reusing the
/// previous build's vectors whose text is unchanged; each text is embedded once however many
/// symbols share it.
pub fn embed_symbols(
    embedder: Embedder,
    store: &Store,
    corpus: &Corpus<'_>,
    embeddable: &[usize],
    matrix: &mut MatrixFile,
    progress: &Progress,
) -> Result<Vectors, Failure> {
    let id = embedder.id();
    let mut previous = Previous::open(store, &id);
    progress.phase("read previous vectors");
    let hashes: Vec<String> = embeddable
        .par_iter()
        .map(|&i| {
            // One text at a time, hashed whole: the same digest as a `Hasher` fed the parts,
            // without its 64 KiB gathering buffer per text (a million on the kernel).
            let text = corpus.embedding_text(i);
            let mut bytes = Vec::with_capacity(id.len() + 1 + text.len());
            bytes.extend_from_slice(id.as_bytes());
            bytes.push(b'\n');
            bytes.extend_from_slice(text.as_bytes());
            content_hash(&bytes)
        })
        .collect();
    // Per embeddable position: whether its text is the first with its hash (the one embedded).
    let mut met: FxHashSet<&str> = FxHashSet::default();
    let first: Vec<bool> = hashes.iter().map(|h| met.insert(h.as_str())).collect();
    drop(met);
    let is_old = |h: &str| previous.as_ref().is_some_and(|p| p.row_of.contains_key(h));
    let todo = (0..hashes.len())
        .filter(|&k| first[k] && !is_old(&hashes[k]))
        .count() as u64;
    // The model is loaded before the meter starts: its loading is not embedding.
    let mut out = Vectors::default();
    let state = if todo == 0 {
        State::Unloaded(embedder)
    } else {
        match embedder.loaded() {
            Ok(loaded) => State::Ready(loaded),
            Err(reason) => {
                out.problem = Some(reason);
                State::Failed
            }
        }
    };
    let mut run = Run {
        out,
        state,
        row_of_hash: FxHashMap::default(),
        dim: None,
    };
    progress.metered(("embedding", "texts"), todo, |done| {
        let positions: Vec<usize> = (0..embeddable.len()).collect();
        for chunk in positions.chunks(EMBED_CHUNK) {
            let fresh = run.embed_chunk(
                chunk,
                (corpus, embeddable),
                (&hashes, &first),
                &mut previous,
            );
            done.fetch_add(fresh.len() as u64, std::sync::atomic::Ordering::Relaxed);
            run.write_chunk(chunk, &hashes, fresh, &mut previous, matrix)?;
        }
        Ok::<(), Failure>(())
    })?;
    let Run { mut out, dim, .. } = run;
    out.assigned = hashes
        .into_iter()
        .zip(std::mem::take(&mut out.rows_of))
        .collect();
    if out.rows > 0 || out.problem.is_none() {
        out.info = Some(EmbedderInfo {
            id,
            dim: dim.unwrap_or(0) as u32,
        });
    }
    Ok(out)
}

/// One build's embedding, chunk after chunk.
struct Run {
    out: Vectors,
    state: State,
    /// Rows written this build, by text hash: a later symbol with the same text reads its row
    /// back.
    row_of_hash: FxHashMap<String, u32>,
    /// The length every row must have: the first vector's, in symbol order.
    dim: Option<usize>,
}

impl Run {
    /// Embeds the texts of `chunk` that are first with their hash and not in the previous
    /// build; gives them by position.
    fn embed_chunk(
        &mut self,
        chunk: &[usize],
        (corpus, embeddable): (&Corpus<'_>, &[usize]),
        (hashes, first): (&[String], &[bool]),
        previous: &mut Option<Previous>,
    ) -> FxHashMap<usize, Vec<f32>> {
        let wanted: Vec<usize> = chunk
            .iter()
            .copied()
            .filter(|&k| {
                first[k]
                    && !previous
                        .as_ref()
                        .is_some_and(|p| p.row_of.contains_key(&hashes[k]))
            })
            .collect();
        if wanted.is_empty() {
            return FxHashMap::default();
        }
        let embedder = match std::mem::replace(&mut self.state, State::Failed) {
            State::Unloaded(embedder) => match embedder.loaded() {
                Ok(embedder) => embedder,
                Err(reason) => {
                    self.out.problem = Some(reason);
                    return FxHashMap::default();
                }
            },
            State::Ready(embedder) => embedder,
            State::Failed => return FxHashMap::default(),
        };
        let texts: Vec<String> = wanted
            .par_iter()
            .map(|&k| corpus.embedding_text(embeddable[k]))
            .collect();
        match embedder.embed(&texts) {
            Ok(fresh) => {
                self.state = State::Ready(embedder);
                self.out.embedded += fresh.len() as u64;
                wanted.into_iter().zip(fresh).collect()
            }
            Err(reason) => {
                // The vectors already made are kept; the rest are asked for next run.
                self.out.problem = Some(reason);
                FxHashMap::default()
            }
        }
    }

    /// Writes the rows of `chunk` in order: made now, from the previous build, or read back
    /// from an earlier row with the same text.
    fn write_chunk(
        &mut self,
        chunk: &[usize],
        hashes: &[String],
        mut fresh: FxHashMap<usize, Vec<f32>>,
        previous: &mut Option<Previous>,
        matrix: &mut MatrixFile,
    ) -> Result<(), Failure> {
        for &k in chunk {
            let hash = &hashes[k];
            let vector = if let Some(v) = fresh.remove(&k) {
                Some(Found::Fresh(v))
            } else if let Some(&row) = self.row_of_hash.get(hash) {
                let mut bytes = vec![0u8; row_bytes(self.dim.unwrap_or(0))];
                matrix
                    .get_mut()
                    .read_back(row as u64 * bytes.len() as u64, &mut bytes)
                    .map_err(matrix_error)?;
                Some(Found::Stored(bytes))
            } else {
                let old = previous.as_mut().and_then(|p| p.row(hash));
                self.out.reused += u64::from(old.is_some());
                old.map(Found::Stored)
            };
            let row = self.place(hash, vector, matrix)?;
            self.out.rows_of.push(row);
        }
        Ok(())
    }

    /// Appends `vector` as the next row; its row, or [`NO_VECTOR`] when there is none or it
    /// has the wrong length.
    fn place(
        &mut self,
        hash: &str,
        vector: Option<Found>,
        matrix: &mut MatrixFile,
    ) -> Result<u32, Failure> {
        let (length, bytes) = match vector {
            None => return Ok(NO_VECTOR),
            Some(Found::Fresh(v)) => (v.len(), quantize(&v)),
            Some(Found::Stored(row)) => (row.len().saturating_sub(4), row),
        };
        let dim = *self.dim.get_or_insert(length);
        if length != dim {
            self.out.problem.get_or_insert_with(|| {
                format!("the embedder returned vectors of {length} and {dim} dimensions")
            });
            return Ok(NO_VECTOR);
        }
        matrix.write_all(&bytes).map_err(matrix_error)?;
        let row = self.out.rows;
        self.row_of_hash.entry(hash.to_string()).or_insert(row);
        self.out.rows += 1;
        Ok(row)
    }
}
