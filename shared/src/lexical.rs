//! Identifier-aware terms for BM25: words are split at `_`, `.`, `::`, punctuation and
//! camelCase humps, lower-cased and lightly stemmed; a compound identifier is also kept whole
//! (`getConnection` gives `get`, `connection`, `getconnection`). Used for both the index and
//! the query, so they always agree.

/// Words too common to tell symbols apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "if", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with", "self", "def", "return", "none",
];

/// Splits `word` (letters and digits only) at camelCase humps, appended to `parts`:
/// `HTTPServerError` gives `HTTP`, `Server`, `Error`.
fn push_humps<'a>(word: &'a str, parts: &mut Vec<&'a str>) {
    let mut chars = word.char_indices().peekable();
    let mut start = 0;
    if let Some((_, mut prev)) = chars.next() {
        while let Some((at, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            let boundary = (c.is_uppercase() && prev.is_lowercase())
                || (c.is_uppercase()
                    && prev.is_uppercase()
                    && next.is_some_and(char::is_lowercase))
                || (c.is_ascii_digit() != prev.is_ascii_digit());
            if boundary {
                parts.push(&word[start..at]);
                start = at;
            }
            prev = c;
        }
    }
    parts.push(&word[start..]);
}

/// A light suffix stemmer: enough that `requests`, `requested` and `request` meet, and so do
/// `update`, `updated`, `updates` and `updating` (a final `e` goes too).
pub fn stem(word: &str) -> String {
    word[..stemmed_len(word)].to_string()
}

/// The length of `word`'s stem: the stem is always a prefix, so a term is cut, not copied.
fn stemmed_len(word: &str) -> usize {
    let mut len = word.len();
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.len() >= 3 && !base.ends_with('s') {
                len = base.len();
                break;
            }
        }
    }
    // `handle` meets `handled`, `file` meets `files` (`fil`), `classes` (`classe`) meets `class`.
    if word.as_bytes()[..len].ends_with(b"e") && len > 3 {
        len -= 1;
    }
    len
}

/// `word` lower-cased; ASCII (nearly every identifier) without the Unicode tables.
fn lowercase(word: &str) -> String {
    if word.is_ascii() {
        word.to_ascii_lowercase()
    } else {
        word.to_lowercase()
    }
}

/// A compound identifier kept whole: lower-cased, its underscores dropped.
fn whole(identifier: &str) -> String {
    if identifier.is_ascii() {
        identifier
            .bytes()
            .filter(|&b| b != b'_')
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect()
    } else {
        // Unicode lower-casing of a whole string differs from a character's (a final sigma).
        identifier.to_lowercase().replace('_', "")
    }
}

/// The terms of `text`, in order, duplicates kept (term frequency counts). Every symbol's
/// text goes through here when the index is built, so it allocates once per term.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut parts: Vec<&str> = Vec::new();
    for identifier in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if identifier.is_empty() {
            continue;
        }
        parts.clear();
        for piece in identifier.split('_').filter(|p| !p.is_empty()) {
            push_humps(piece, &mut parts);
        }
        for part in &parts {
            let mut lower = lowercase(part);
            if lower.len() > 1 && !STOPWORDS.contains(&lower.as_str()) {
                lower.truncate(stemmed_len(&lower));
                out.push(lower);
            }
        }
        if parts.len() > 1 {
            out.push(whole(identifier));
        }
    }
    out
}

/// Words that ask rather than describe. In a question of several words ("where are filters
/// registered") they match whatever docstring happens to use them ("...where key is...") and
/// say nothing of the symbol wanted; so they leave a query, but never the index (`where` is
/// also a query builder's method, found by that name alone).
const QUESTION_WORDS: &[&str] = &[
    "how", "where", "what", "which", "who", "whom", "whose", "when", "why", "do", "does", "did",
    "can", "could", "should", "would", "there",
];

/// The terms of a search `query`: [`terms`], without the question words of a question of three
/// words or more.
pub fn query_terms(query: &str) -> Vec<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.len() < 3 {
        return terms(query);
    }
    let asks = |word: &str| {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        bare.chars().all(char::is_alphabetic) && QUESTION_WORDS.contains(&lowercase(bare).as_str())
    };
    let kept: Vec<&str> = words.into_iter().filter(|w| !asks(w)).collect();
    terms(&kept.join(" "))
}

/// `get_connection_pool` or `getConnectionPool` as words: "get connection pool".
pub fn humanise(identifier: &str) -> String {
    let mut out = String::with_capacity(identifier.len() + 8);
    let mut parts: Vec<&str> = Vec::new();
    for piece in identifier.split(|c: char| !c.is_alphanumeric()) {
        if !piece.is_empty() {
            push_humps(piece, &mut parts);
        }
    }
    for (k, part) in parts.into_iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        if part.is_ascii() {
            out.extend(part.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            out.push_str(&part.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_of_a_word_meet_in_one_stem() {
        for forms in [
            &["update", "updated", "updates", "updating"][..],
            &["handle", "handled", "handles", "handling"],
            &["request", "requested", "requests", "requesting"],
            &["file", "files"],
            &["class", "classes"],
            &["case", "cases"],
            &["encode", "encoded", "encodes", "encoding"],
        ] {
            let stems: Vec<String> = forms.iter().map(|w| stem(w)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{forms:?}: {stems:?}");
        }
        // Short words keep their letters: `use` is not `us`, `ring` not `r`.
        assert_eq!(stem("use"), "use");
        assert_eq!(stem("ring"), "ring");
    }

    #[test]
    fn a_question_s_asking_words_leave_the_query_but_a_name_keeps_them() {
        assert_eq!(
            query_terms("Where are filters registered?"),
            ["filter", "register"]
        );
        assert_eq!(
            query_terms("how is the sandbox enforced"),
            ["sandbox", "enforc"]
        );
        // A short query is a name: `Query.where`, `where clause`.
        assert_eq!(query_terms("Query.where"), terms("Query.where"));
        assert_eq!(query_terms("where clause"), ["wher", "claus"]);
        // In an identifier, a question word is a part of the name.
        assert_eq!(
            query_terms("find the how_to_use helper"),
            terms("find the how_to_use helper")
        );
    }

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
        assert_eq!(terms("parse2json x"), ["pars", "json", "parse2json"]);
        assert_eq!(
            humanise("pkg/api.py::Session.getConnection"),
            "pkg api py session get connection"
        );
    }

    fn humps_as_first_written(word: &str) -> Vec<&str> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        let mut parts = Vec::new();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let next = chars.get(i + 1).map(|&(_, n)| n);
            let boundary = (c.is_uppercase() && prev.is_lowercase())
                || (c.is_uppercase()
                    && prev.is_uppercase()
                    && next.is_some_and(char::is_lowercase))
                || (c.is_ascii_digit() != prev.is_ascii_digit());
            if boundary {
                parts.push(&word[start..at]);
                start = at;
            }
        }
        parts.push(&word[start..]);
        parts
    }

    /// The terms as the first version computed them (a Vec of characters per word, a copy per
    /// step): the oracle the allocation-lean version must equal.
    fn terms_as_first_written(text: &str) -> Vec<String> {
        fn stem(word: &str) -> String {
            let mut stem = word.to_string();
            for suffix in ["ing", "ed", "es", "s"] {
                if let Some(base) = word.strip_suffix(suffix) {
                    if base.len() >= 3 && !base.ends_with('s') {
                        stem = base.to_string();
                        break;
                    }
                }
            }
            if stem.len() > 3 && stem.ends_with('e') {
                stem.pop();
            }
            stem
        }
        let mut out = Vec::new();
        for identifier in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if identifier.is_empty() {
                continue;
            }
            let parts: Vec<&str> = identifier
                .split('_')
                .filter(|p| !p.is_empty())
                .flat_map(humps_as_first_written)
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

    fn humanise_as_first_written(identifier: &str) -> String {
        identifier
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
            .flat_map(humps_as_first_written)
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn terms_and_words_equal_the_first_version_on_hand_picked_text() {
        for text in [
            "HTTPServerError in get_connection_pool()",
            "__init__ _x_ a__b ABCdef XMLHttpRequest2Go v8_engine",
            "\u{3a3}\u{3a3}_ODY\u{3a3} caf\u{c9}Cr\u{e8}me \u{130}stanbul_ok stra\u{df}e",
            "processes queued passes gets sings is_ready tests",
        ] {
            assert_eq!(terms(text), terms_as_first_written(text), "{text:?}");
            assert_eq!(humanise(text), humanise_as_first_written(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn terms_and_words_equal_the_first_version(text in "[a-zA-Z0-9_ .:ÉéΣσςİß()-]{0,40}") {
            proptest::prop_assert_eq!(terms(&text), terms_as_first_written(&text));
            proptest::prop_assert_eq!(humanise(&text), humanise_as_first_written(&text));
        }
    }
}
