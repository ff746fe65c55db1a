//! The binary codec of caches. bincode is retired upstream (3.0.0 is a tombstone; we pin
//! 2.0.x), so it stays behind these two functions: swapping it is a change to this file only.

use serde::de::DeserializeOwned;
use serde::Serialize;

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    bincode::serde::encode_to_vec(value, bincode::config::standard()).map_err(|e| e.to_string())
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let (value, _read) = bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_and_garbage_is_an_error() {
        let value = (String::from("a"), vec![1u32, 2, 3], Some(7u8));
        let bytes = super::encode(&value).unwrap();
        let back: (String, Vec<u32>, Option<u8>) = super::decode(&bytes).unwrap();
        assert_eq!(back, value);
        assert!(super::decode::<(String, Vec<u32>)>(&[0xff, 0xff, 0xff]).is_err());
    }
}
