//! The one module that touches `serde_yaml` (archived upstream, still sound): swapping it for
//! `serde_yaml_ng` or `serde_norway` changes only this file.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A YAML document that could not be read, with the 1-based position serde_yaml reported.
#[derive(Debug, Clone)]
pub struct YamlError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

/// Parses `text` into `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_yaml::from_str(text).map_err(|err| {
        let location = err.location();
        let mut message = err.to_string();
        // serde_yaml appends " at line L column C"; the caller prints the position itself.
        if let Some(cut) = message.find(" at line ") {
            message.truncate(cut);
        }
        YamlError {
            line: location.as_ref().map(|l| l.line()),
            column: location.as_ref().map(|l| l.column()),
            message,
        }
    })
}

/// Serialises `value` as a YAML document.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, String> {
    serde_yaml::to_string(value).map_err(|e| e.to_string())
}
