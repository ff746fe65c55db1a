//! The binary codec of caches. bincode is retired upstream (3.0.0 is a tombstone; we pin
//! 2.0.x), so it stays behind these two functions: swapping it is a change to this file only.

use serde::de::DeserializeOwned;
use serde::Serialize;

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    bincode::serde::encode_to_vec(value, bincode::config::standard()).map_err(|e| e.to_string())
}

/// Decodes `bytes`. A length prefix read from damaged bytes can claim anything; bincode
/// allocates what it claims before reading, so the claims are capped by a limit of at least the
/// input's size (the next power of four from 1 MiB): damage becomes an error, never a huge
/// allocation.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    fn with_limit<T: DeserializeOwned, const LIMIT: usize>(bytes: &[u8]) -> Result<T, String> {
        let config = bincode::config::standard().with_limit::<LIMIT>();
        let (value, _read) =
            bincode::serde::decode_from_slice(bytes, config).map_err(|e| e.to_string())?;
        Ok(value)
    }
    const MIB: usize = 1 << 20;
    match bytes.len() {
        n if n <= MIB => with_limit::<T, MIB>(bytes),
        n if n <= 4 * MIB => with_limit::<T, { 4 * MIB }>(bytes),
        n if n <= 16 * MIB => with_limit::<T, { 16 * MIB }>(bytes),
        n if n <= 64 * MIB => with_limit::<T, { 64 * MIB }>(bytes),
        n if n <= 256 * MIB => with_limit::<T, { 256 * MIB }>(bytes),
        n if n <= 1024 * MIB => with_limit::<T, { 1024 * MIB }>(bytes),
        _ => with_limit::<T, { usize::MAX }>(bytes),
    }
}

/// Marks the end of a sealed payload (and the layout revision of the seal itself).
const SEAL_MAGIC: &[u8; 8] = b"TGSEAL01";
const SEAL_LEN: usize = 32 + SEAL_MAGIC.len();

/// [`encode`], followed by the payload's BLAKE3 hash and a magic: a cache whose bytes changed
/// after it was written (a torn write, a flipped bit, an edit) is refused by [`decode_sealed`]
/// instead of decoding into plausible but wrong values. The payload stays at offset 0, so a
/// reader may still decode a leading header from the first bytes alone.
pub fn encode_sealed<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    let mut bytes = encode(value)?;
    let hash = blake3::hash(&bytes);
    bytes.extend_from_slice(hash.as_bytes());
    bytes.extend_from_slice(SEAL_MAGIC);
    Ok(bytes)
}

/// [`encode_sealed`] into `out` as the value is encoded, without holding the bytes.
pub fn encode_sealed_into<T: Serialize>(
    value: &T,
    out: &mut impl std::io::Write,
) -> Result<(), String> {
    let mut hashing = crate::hash::HashingWriter::new(&mut *out);
    bincode::serde::encode_into_std_write(value, &mut hashing, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    let hash = hashing.finish_raw();
    out.write_all(&hash)
        .and_then(|()| out.write_all(SEAL_MAGIC))
        .map_err(|e| e.to_string())
}

/// Decodes what [`encode_sealed`] wrote; the error says whether the seal or the layout failed.
pub fn decode_sealed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let payload = unseal(bytes)?;
    // The checksum vouches that these are the bytes we wrote: their length claims are real
    // (a large store's decoded claims add up to several times its size, past any cap that
    // guards against damage).
    let (value, _read) = bincode::serde::decode_from_slice(payload, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    Ok(value)
}

/// [`decode_sealed`] of the file at `path`, without holding its bytes: the checksum is
/// verified in a first pass, then a value that leads the payload (the whole of what was
/// written, or a prefix of its fields) is decoded as it is read.
pub fn decode_sealed_file<T: DeserializeOwned>(path: &std::path::Path) -> Result<T, String> {
    use std::io::Read;
    let named = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(named)?;
    let size = file.metadata().map_err(named)?.len();
    let Some(payload_len) = size.checked_sub(SEAL_LEN as u64) else {
        return Err("no checksum trailer (truncated, or written by an older version)".into());
    };
    let mut hasher = blake3::Hasher::new();
    std::io::copy(&mut (&mut file).take(payload_len), &mut hasher).map_err(named)?;
    let mut trailer = [0u8; SEAL_LEN];
    file.read_exact(&mut trailer).map_err(named)?;
    check_trailer(hasher.finalize().as_bytes(), &trailer)?;
    let file = std::fs::File::open(path).map_err(named)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file.take(payload_len));
    bincode::serde::decode_from_std_read(&mut reader, bincode::config::standard())
        .map_err(|e| e.to_string())
}

/// Whether `trailer` is a seal, over a payload whose hash is `hash`.
fn check_trailer(hash: &[u8; 32], trailer: &[u8]) -> Result<(), String> {
    if trailer.len() != SEAL_LEN || !trailer.ends_with(SEAL_MAGIC) {
        return Err("no checksum trailer (truncated, or written by an older version)".into());
    }
    if hash != &trailer[..32] {
        return Err("checksum mismatch: the file was damaged after it was written".into());
    }
    Ok(())
}

/// The seal of what [`encode_sealed`] wrote (the payload's hash): it names those bytes.
pub fn seal_of(bytes: &[u8]) -> Option<[u8; 32]> {
    let trailer = bytes.get(bytes.len().checked_sub(SEAL_LEN)?..)?;
    trailer.ends_with(SEAL_MAGIC).then(|| {
        let mut seal = [0u8; 32];
        seal.copy_from_slice(&trailer[..32]);
        seal
    })
}

/// The payload of a sealed buffer, once its checksum matches.
pub fn unseal(bytes: &[u8]) -> Result<&[u8], String> {
    if bytes.len() < SEAL_LEN || !bytes.ends_with(SEAL_MAGIC) {
        return Err("no checksum trailer (truncated, or written by an older version)".into());
    }
    let (payload, trailer) = bytes.split_at(bytes.len() - SEAL_LEN);
    check_trailer(blake3::hash(payload).as_bytes(), trailer)?;
    Ok(payload)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sealing_into_a_writer_gives_the_bytes_sealing_to_a_vec_gives() {
        let value = (7u32, "seven".to_string(), vec![1.5f32, 2.5]);
        let mut streamed = Vec::new();
        super::encode_sealed_into(&value, &mut streamed).unwrap();
        assert_eq!(streamed, super::encode_sealed(&value).unwrap());
        let back: (u32, String, Vec<f32>) = super::decode_sealed(&streamed).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn a_sealed_value_decodes_however_far_its_decoded_size_outgrows_its_bytes() {
        // Small integers take a byte each and claim eight when decoded: the kernel's extract
        // cache (261 MB) was refused as damaged by a cap of four times its size.
        let value: Vec<u64> = (0..300_000).map(|i| i % 100).collect();
        let sealed = super::encode_sealed(&value).unwrap();
        assert!(
            sealed.len() * 4 < value.len() * 8,
            "the claims outgrow a 4x cap"
        );
        assert_eq!(super::decode_sealed::<Vec<u64>>(&sealed).unwrap(), value);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.bin");
        std::fs::write(&path, &sealed).unwrap();
        assert_eq!(super::decode_sealed_file::<Vec<u64>>(&path).unwrap(), value);
    }

    #[test]
    fn a_sealed_file_decodes_whole_or_by_its_leading_fields_and_damage_anywhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sealed.bin");
        let value = (7u32, "seven".to_string(), vec![1.5f32; 1000]);
        let bytes = super::encode_sealed(&value).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let whole: (u32, String, Vec<f32>) = super::decode_sealed_file(&path).unwrap();
        assert_eq!(whole, value);
        let leading: (u32, String) = super::decode_sealed_file(&path).unwrap();
        assert_eq!(leading, (7, "seven".to_string()));
        // A flipped byte in the part the prefix does not decode is still caught.
        let mut damaged = bytes.clone();
        damaged[bytes.len() / 2] ^= 1;
        std::fs::write(&path, &damaged).unwrap();
        let err = super::decode_sealed_file::<(u32, String)>(&path).unwrap_err();
        assert!(err.contains("checksum mismatch"), "{err}");
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(super::decode_sealed_file::<(u32, String)>(&path).is_err());
        std::fs::write(&path, b"short").unwrap();
        assert!(super::decode_sealed_file::<(u32, String)>(&path).is_err());
    }

    #[test]
    fn a_damaged_length_prefix_is_an_error_not_an_allocation() {
        // (u32 3, then a string claiming 2^62 or 2^64-1 bytes): found by the codec fuzz target.
        for bytes in [
            &[0x03, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x70][..],
            &[0x03, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff][..],
        ] {
            assert!(super::decode::<(u32, String)>(bytes).is_err());
            assert!(super::decode::<(u32, Vec<u8>)>(bytes).is_err());
        }
    }

    #[test]
    fn a_sealed_payload_detects_any_damage() {
        let value = (String::from("symbol"), vec![1u32, 2, 3]);
        let sealed = super::encode_sealed(&value).unwrap();
        let back: (String, Vec<u32>) = super::decode_sealed(&sealed).unwrap();
        assert_eq!(back, value);
        // The payload is still at the front, for readers of a leading header.
        let head: (String, Vec<u32>) = super::decode(&sealed).unwrap();
        assert_eq!(head, value);
        for at in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[at] ^= 0x01;
            assert!(
                super::decode_sealed::<(String, Vec<u32>)>(&bad).is_err(),
                "flip at {at}"
            );
        }
        for cut in 0..sealed.len() {
            assert!(super::decode_sealed::<(String, Vec<u32>)>(&sealed[..cut]).is_err());
        }
    }

    #[test]
    fn round_trip_and_garbage_is_an_error() {
        let value = (String::from("a"), vec![1u32, 2, 3], Some(7u8));
        let bytes = super::encode(&value).unwrap();
        let back: (String, Vec<u32>, Option<u8>) = super::decode(&bytes).unwrap();
        assert_eq!(back, value);
        assert!(super::decode::<(String, Vec<u32>)>(&[0xff, 0xff, 0xff]).is_err());
    }
}
