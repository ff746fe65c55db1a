//! A file read in place, a range at a time, every byte checked: the writer hashes the file in
//! blocks of [`BLOCK`] bytes and keeps the hashes in a trailer, itself hashed in a fixed footer.
//! A reader verifies the trailer once, then each block the first time a range covers it; so a
//! flipped bit is refused wherever it lies, at the cost of hashing only what is read (a query on
//! a 400 MB index reads and hashes a few tens of MB).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes per checked block.
pub const BLOCK: usize = 64 << 10;
/// Bytes of each block's hash (a truncated BLAKE3, as [`crate::hash::content_hash`] truncates).
const BLOCK_HASH: usize = 16;
/// `trailer offset u64, trailer length u64, BLAKE3 of the trailer, magic`.
const FOOTER_MAGIC: &[u8; 8] = b"TGBLKS01";
const FOOTER: usize = 8 + 8 + 32 + FOOTER_MAGIC.len();

/// Writes a file and hashes it block by block; [`BlockWriter::finish`] appends the trailer
/// (the caller's bytes, then the block hashes) and the footer.
pub struct BlockWriter<W: Write> {
    inner: W,
    written: u64,
    block: crate::hash::Hasher,
    in_block: usize,
    hashes: Vec<[u8; BLOCK_HASH]>,
}

impl<W: Write> BlockWriter<W> {
    pub fn new(inner: W) -> Self {
        BlockWriter {
            inner,
            written: 0,
            block: crate::hash::Hasher::new(),
            in_block: 0,
            hashes: Vec::new(),
        }
    }

    /// Bytes written so far: the offset of the next byte.
    pub fn position(&self) -> u64 {
        self.written
    }

    fn close_block(&mut self) {
        let hash = self.block.finish_raw();
        let mut short = [0u8; BLOCK_HASH];
        short.copy_from_slice(&hash[..BLOCK_HASH]);
        self.hashes.push(short);
        self.block.reset();
        self.in_block = 0;
    }

    /// Appends `trailer` (unchecked by blocks: the footer's hash covers it, and the block
    /// hashes after it) and the footer; returns the inner writer.
    pub fn finish(mut self, trailer: &[u8]) -> io::Result<W> {
        if self.in_block > 0 {
            self.close_block();
        }
        let trailer_offset = self.written;
        let mut tail = Vec::with_capacity(trailer.len() + 8 + self.hashes.len() * BLOCK_HASH);
        tail.extend_from_slice(&(trailer.len() as u64).to_le_bytes());
        tail.extend_from_slice(trailer);
        for hash in &self.hashes {
            tail.extend_from_slice(hash);
        }
        self.inner.write_all(&tail)?;
        self.inner.write_all(&trailer_offset.to_le_bytes())?;
        self.inner.write_all(&(tail.len() as u64).to_le_bytes())?;
        self.inner.write_all(blake3::hash(&tail).as_bytes())?;
        self.inner.write_all(FOOTER_MAGIC)?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for BlockWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let take = buf.len().min(BLOCK - self.in_block);
        let n = self.inner.write(&buf[..take])?;
        self.block.update(&buf[..n]);
        self.in_block += n;
        self.written += n as u64;
        if self.in_block == BLOCK {
            self.close_block();
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A file written by [`BlockWriter`], open for checked reads of its ranges.
pub struct BlockFile {
    file: File,
    path: PathBuf,
    /// Where the blocks end (the trailer's offset).
    end: u64,
    hashes: Vec<[u8; BLOCK_HASH]>,
    /// Blocks already verified (each is hashed once however often it is read).
    verified: Mutex<Vec<bool>>,
}

impl BlockFile {
    /// Opens `path` and verifies its footer and trailer; returns the file and the trailer's
    /// caller bytes. The error says what is wrong, naming the file.
    pub fn open(path: &Path) -> Result<(BlockFile, Vec<u8>), String> {
        let damaged = |what: &str| format!("{}: damaged ({what})", path.display());
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let size = file
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let footer_at = size
            .checked_sub(FOOTER as u64)
            .ok_or_else(|| damaged("shorter than its footer"))?;
        let mut footer = [0u8; FOOTER];
        read_at(&file, &mut footer, footer_at).map_err(|e| format!("{}: {e}", path.display()))?;
        if &footer[48..] != FOOTER_MAGIC {
            return Err(damaged("no footer"));
        }
        let trailer_offset = u64_at(&footer, 0);
        let trailer_len = u64_at(&footer, 8);
        if trailer_offset.checked_add(trailer_len) != Some(footer_at) {
            return Err(damaged("the footer does not match the size"));
        }
        let mut tail = vec![0u8; usize::try_from(trailer_len).map_err(|_| damaged("trailer"))?];
        read_at(&file, &mut tail, trailer_offset)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if blake3::hash(&tail).as_bytes()[..] != footer[16..48] {
            return Err(damaged("the trailer's checksum does not match"));
        }
        let own_len = u64_at(&tail, 0) as usize;
        let own = tail
            .get(8..8usize.saturating_add(own_len))
            .ok_or_else(|| damaged("trailer"))?
            .to_vec();
        let hash_bytes = &tail[8 + own_len..];
        let blocks = trailer_offset.div_ceil(BLOCK as u64) as usize;
        if hash_bytes.len() != blocks * BLOCK_HASH {
            return Err(damaged("the block table does not match the size"));
        }
        let hashes = hash_bytes
            .chunks_exact(BLOCK_HASH)
            .map(|c| {
                let mut h = [0u8; BLOCK_HASH];
                h.copy_from_slice(c);
                h
            })
            .collect();
        let reader = BlockFile {
            file,
            path: path.to_path_buf(),
            end: trailer_offset,
            hashes,
            verified: Mutex::new(vec![false; blocks]),
        };
        Ok((reader, own))
    }

    /// Bytes `offset..offset + len`, every block they touch verified. The error names the file.
    pub fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let damaged = |what: &str| format!("{}: damaged ({what})", self.path.display());
        let stop = offset
            .checked_add(len)
            .filter(|&stop| stop <= self.end)
            .ok_or_else(|| damaged("a section past the end"))?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let first = (offset / BLOCK as u64) as usize;
        let last = ((stop - 1) / BLOCK as u64) as usize;
        let cannot = |e: io::Error| format!("{}: {e}", self.path.display());
        let all_verified = self
            .verified
            .lock()
            .map(|v| v[first..=last].iter().all(|&b| b))
            .unwrap_or(false);
        if all_verified {
            // Checked before: only the bytes asked for.
            let mut bytes = vec![0u8; len as usize];
            read_at(&self.file, &mut bytes, offset).map_err(cannot)?;
            return Ok(bytes);
        }
        let span_start = first as u64 * BLOCK as u64;
        let span_stop = ((last as u64 + 1) * BLOCK as u64).min(self.end);
        let mut span = vec![0u8; (span_stop - span_start) as usize];
        read_at(&self.file, &mut span, span_start).map_err(cannot)?;
        let lock = || {
            self.verified
                .lock()
                .map_err(|_| damaged("a reader thread failed"))
        };
        let checked: Vec<bool> = lock()?[first..=last].to_vec();
        // Hashed across the cores, outside the lock: the sections of one answer are checked
        // at once (a quarter of a gigabyte on the kernel).
        use rayon::prelude::*;
        let bad = span
            .par_chunks(BLOCK)
            .enumerate()
            .filter(|&(k, _)| !checked[k])
            .find_first(|&(k, block)| {
                blake3::hash(block).as_bytes()[..BLOCK_HASH] != self.hashes[first + k]
            });
        if let Some((k, _)) = bad {
            let at = first + k;
            return Err(damaged(&format!("block {at} does not match its checksum")));
        }
        lock()?[first..=last].fill(true);
        let from = (offset - span_start) as usize;
        span.drain(..from);
        span.truncate(len as usize);
        Ok(span)
    }
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(body: &[u8], trailer: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut w = BlockWriter::new(Vec::new());
        w.write_all(body).unwrap();
        assert_eq!(w.position(), body.len() as u64);
        std::fs::write(&path, w.finish(trailer).unwrap()).unwrap();
        (dir, path)
    }

    #[test]
    fn ranges_read_back_across_blocks_and_a_flipped_bit_is_refused_where_it_is_read() {
        let body: Vec<u8> = (0..(3 * BLOCK + 100)).map(|i| (i % 251) as u8).collect();
        let (_dir, path) = written(&body, b"own");
        let (file, own) = BlockFile::open(&path).unwrap();
        assert_eq!(own, b"own");
        for (at, len) in [
            (0, 10),
            (BLOCK - 3, 7),
            (10, 2 * BLOCK + 50),
            (3 * BLOCK, 100),
        ] {
            assert_eq!(
                file.read(at as u64, len as u64).unwrap(),
                &body[at..at + len]
            );
        }
        assert!(file.read(3 * BLOCK as u64, 101).is_err(), "past the end");

        let mut bytes = std::fs::read(&path).unwrap();
        bytes[BLOCK + 5] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (file, _) = BlockFile::open(&path).unwrap();
        assert!(file.read(0, 100).is_ok(), "block 0 is intact");
        let err = file.read(BLOCK as u64 + 1, 10).unwrap_err();
        assert!(err.contains("block 1"), "{err}");

        bytes[BLOCK + 5] ^= 1;
        let last = bytes.len() - 20;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(BlockFile::open(&path).is_err(), "the footer's hash");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(BlockFile::open(&path).is_err(), "truncated");
    }
}
