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
        // libyaml reports an error at the end of a text without a final newline one line past
        // its end (`"x: 1\ny"` at 3:1): point just after the last character instead. (After a
        // final newline, the empty line that follows is a place an editor can show.)
        let (last_line, last_width) = last_line_and_width(text);
        let (line, column) = match location {
            Some(l) if l.line() > last_line => (Some(last_line), Some(last_width + 1)),
            Some(l) => (Some(l.line()), Some(l.column())),
            None => (None, None),
        };
        YamlError {
            line,
            column,
            message,
        }
    })
}

/// The number of the last line and its width in characters, breaking lines where libyaml does
/// (LF, CR, CRLF, NEL, LS, PS), so positions agree with its own.
fn last_line_and_width(text: &str) -> (usize, usize) {
    let (mut line, mut width) = (1, 0);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                (line, width) = (line + 1, 0);
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => (line, width) = (line + 1, 0),
            _ => width += 1,
        }
    }
    (line, width)
}

/// Serialises `value` as a YAML document.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, String> {
    serde_yaml::to_string(value).map_err(|e| e.to_string())
}
