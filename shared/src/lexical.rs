//! Identifier-aware terms for BM25: words are split at `_`, `.`, `::`, punctuation and
//! camelCase humps, lower-cased and lightly stemmed; a compound identifier is also kept whole
//! (`getConnection` gives `get`, `connection`, `getconnection`). Used for both the index and
//! the query, so they always agree.

/// Words too common to tell symbols apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "if", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with", "self", "def", "return", "none",
];

/// Splits `word` (letters and digits only) at camelCase humps: `HTTPServerError` gives
/// `HTTP`, `Server`, `Error`.
fn humps(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let boundary = (c.is_uppercase() && prev.is_lowercase())
            || (c.is_uppercase() && prev.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (c.is_ascii_digit() != prev.is_ascii_digit());
        if boundary {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// A light suffix stemmer: enough that `requests`, `requested` and `request` meet.
pub fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.len() >= 3 && !base.ends_with('s') {
                return base.to_string();
            }
        }
    }
    word.to_string()
}

/// The terms of `text`, in order, duplicates kept (term frequency counts).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for identifier in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if identifier.is_empty() {
            continue;
        }
        let parts: Vec<&str> = identifier
            .split('_')
            .filter(|p| !p.is_empty())
            .flat_map(humps)
            .collect();
        for part in &parts {
            let lower = part.to_lowercase();
            if lower.len() > 1 && !STOPWORDS.contains(&lower.as_str()) {
                out.push(stem(&lower));
            }
        }
        if parts.len() > 1 {
            out.push(identifier.to_lowercase().replace('_', ""));
        }
    }
    out
}

/// `get_connection_pool` or `getConnectionPool` as words: "get connection pool".
pub fn humanise(identifier: &str) -> String {
    identifier
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .flat_map(humps)
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_words_and_stay_whole() {
        assert_eq!(
            terms("HTTPServerError in get_connection_pool()"),
            [
                "http",
                "server",
                "error",
                "httpservererror",
                "get",
                "connection",
                "pool",
                "getconnectionpool"
            ]
        );
        assert_eq!(terms("Sends the requests"), ["send", "request"]);
        assert_eq!(terms("parse2json x"), ["parse", "json", "parse2json"]);
        assert_eq!(
            humanise("pkg/api.py::Session.getConnection"),
            "pkg api py session get connection"
        );
    }
}
