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

/// Decodes what [`encode_sealed`] wrote; the error says whether the seal or the layout failed.
pub fn decode_sealed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let payload = unseal(bytes)?;
    decode(payload)
}

/// The payload of a sealed buffer, once its checksum matches.
pub fn unseal(bytes: &[u8]) -> Result<&[u8], String> {
    if bytes.len() < SEAL_LEN || !bytes.ends_with(SEAL_MAGIC) {
        return Err("no checksum trailer (truncated, or written by an older version)".into());
    }
    let (payload, trailer) = bytes.split_at(bytes.len() - SEAL_LEN);
    if blake3::hash(payload).as_bytes() != &trailer[..32] {
        return Err("checksum mismatch: the file was damaged after it was written".into());
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
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
