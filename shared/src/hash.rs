//! Content hashing: blake3, hex, truncated to 128 bits (ample for a repository's files and
//! symbols, and half the bytes in every record).

/// Hex hash of `bytes` (32 hex chars).
pub fn content_hash(bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes);
    hash.to_hex()[..32].to_string()
}

/// A [`content_hash`] kept as its 16 bytes: held per symbol until a repository is resolved, a
/// String of the hex costs 56 (the kernel has a million symbols).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct ContentHash(pub [u8; 16]);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> Self {
        let mut out = [0u8; 16];
        out.copy_from_slice(&blake3::hash(bytes).as_bytes()[..16]);
        ContentHash(out)
    }

    /// The hex [`content_hash`] gives for the same bytes.
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(32);
        for byte in self.0 {
            hex.push(DIGITS[usize::from(byte >> 4)] as char);
            hex.push(DIGITS[usize::from(byte & 15)] as char);
        }
        hex
    }
}

impl std::fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Incremental hashing of many parts (for fingerprints of whole inputs, and what writers pass
/// on). Small parts are gathered before blake3 sees them: given a record line at a time, blake3
/// compresses one 64-byte block after another, several times slower than on whole chunks,
/// where it hashes many at once (on the kernel's 1.1 GB stream, seconds per stage). The digest
/// is the same however the bytes are split.
#[derive(Default, Clone)]
pub struct Hasher {
    inner: blake3::Hasher,
    pending: Vec<u8>,
}

/// Bytes gathered before they are hashed: many of blake3's 1 KiB chunks at once.
const GATHER: usize = 64 * 1024;

impl Hasher {
    pub fn new() -> Self {
        Hasher::default()
    }

    pub fn update(&mut self, bytes: &[u8]) -> &mut Self {
        if self.pending.len() + bytes.len() > GATHER {
            self.inner.update(&self.pending);
            self.pending.clear();
        }
        if bytes.len() >= GATHER {
            self.inner.update(bytes);
        } else {
            if self.pending.capacity() == 0 {
                self.pending.reserve_exact(GATHER);
            }
            self.pending.extend_from_slice(bytes);
        }
        self
    }

    /// The full 32-byte hash of what was given.
    pub fn finish_raw(&self) -> [u8; 32] {
        *self.finalized().as_bytes()
    }

    /// Hex digest, same length as [`content_hash`].
    pub fn finish(&self) -> String {
        self.finalized().to_hex()[..32].to_string()
    }

    /// The hash of everything given, the gathered rest included.
    fn finalized(&self) -> blake3::Hash {
        let mut inner = self.inner.clone();
        inner.update(&self.pending);
        inner.finalize()
    }

    /// Starts again, as new (keeping the gathering buffer).
    pub fn reset(&mut self) {
        self.inner.reset();
        self.pending.clear();
    }
}

/// [`content_hash`] of everything `reader` gives, read a piece at a time (a gigabyte file is
/// hashed without holding it).
pub fn reader_hash(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    std::io::copy(&mut reader, &mut hasher)?;
    Ok(hasher.finalize().to_hex()[..32].to_string())
}

/// A writer that hashes every byte written through it (a stream's checksum without holding it).
pub struct HashingWriter<W> {
    inner: W,
    hasher: Hasher,
}

impl<W: std::io::Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Hasher::new(),
        }
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The writer, and the [`content_hash`] of what went through it.
    pub fn finish(self) -> (W, String) {
        let hex = self.hasher.finish();
        (self.inner, hex)
    }

    /// The full 32-byte hash of what went through it.
    pub fn finish_raw(self) -> [u8; 32] {
        self.hasher.finish_raw()
    }
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_sensitive() {
        // blake3("abc"), first 16 bytes: a known vector, so the hash never drifts silently.
        assert_eq!(content_hash(b"abc"), "6437b3ac38465133ffb63b75273a8db5");
        assert_ne!(content_hash(b"abc"), content_hash(b"abd"));
        let mut parts = Hasher::new();
        parts.update(b"a").update(b"bc");
        assert_eq!(parts.finish(), content_hash(b"abc"));
    }

    #[test]
    fn parts_gathered_or_not_hash_as_the_whole_does() {
        let whole: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let expected = content_hash(&whole);
        // Small parts, parts across the gathering size, one part larger than it, and empty ones.
        for sizes in [
            &[1usize, 7, 200][..],
            &[65_535, 2, 70_000],
            &[200_000, 0, 3],
        ] {
            let mut hasher = Hasher::new();
            let (mut at, mut k) = (0, 0);
            while at < whole.len() {
                let end = (at + sizes[k % sizes.len()]).min(whole.len());
                hasher.update(&whole[at..end]);
                (at, k) = (end, k + 1);
            }
            assert_eq!(hasher.finish(), expected, "{sizes:?}");
            assert_eq!(hasher.finish_raw(), *blake3::hash(&whole).as_bytes());
            hasher.reset();
            hasher.update(b"abc");
            assert_eq!(hasher.finish(), content_hash(b"abc"));
        }
    }

    #[test]
    fn a_hash_kept_as_bytes_writes_the_hex_of_content_hash() {
        assert_eq!(
            ContentHash::of(b"abc").hex(),
            "6437b3ac38465133ffb63b75273a8db5"
        );
        for text in ["", "int f(void) { return 0; }", "\u{e9}t\u{e9}"] {
            assert_eq!(
                ContentHash::of(text.as_bytes()).hex(),
                content_hash(text.as_bytes())
            );
        }
    }

    #[test]
    fn a_hashing_writer_passes_bytes_on_and_hashes_them_as_content_hash_does() {
        use std::io::Write;
        let mut writer = HashingWriter::new(Vec::new());
        writer.write_all(b"a").unwrap();
        writer.write_all(b"bc").unwrap();
        let (bytes, hash) = writer.finish();
        assert_eq!(bytes, b"abc");
        assert_eq!(hash, content_hash(b"abc"));
        assert_eq!(reader_hash(&b"abc"[..]).unwrap(), content_hash(b"abc"));
    }
}
