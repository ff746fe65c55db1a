//! BERT's uncased WordPiece tokenizer, as all-MiniLM-L6-v2 was trained with: lower-case, drop
//! combining accents, split on whitespace and punctuation, then the longest vocabulary prefix
//! (`##` marks a continuation). For scripts other than Latin the punctuation test is an
//! approximation (non-alphanumeric symbols split) and CJK characters are not spaced out, which
//! code identifiers and English docs never need.

use rustc_hash::FxHashMap as HashMap;
use unicode_normalization::UnicodeNormalization;

/// Words longer than this become `[UNK]`, as in BERT.
const MAX_WORD_CHARS: usize = 100;

#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace())
}

/// Combining diacritical marks (what NFD splits off accented Latin letters).
fn is_combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F)
}

impl WordPiece {
    /// From the vocabulary, one token per line (the line number is the id).
    pub fn new(tokens: &[String]) -> Result<WordPiece, String> {
        let vocab: HashMap<String, u32> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let unk = *vocab
            .get("[UNK]")
            .ok_or_else(|| "the vocabulary has no [UNK] token".to_string())?;
        Ok(WordPiece { vocab, unk })
    }

    /// The basic tokenizer's words.
    pub fn words(text: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut current = String::new();
        for c in text.nfd().flat_map(char::to_lowercase) {
            if is_combining(c) || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if c.is_whitespace() || is_punctuation(c) {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
                if is_punctuation(c) {
                    words.push(c.to_string());
                }
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            words.push(current);
        }
        words
    }

    /// Token ids of `text`, at most `limit`.
    pub fn ids(&self, text: &str, limit: usize) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut piece = String::new();
        for word in Self::words(text) {
            if ids.len() >= limit {
                break;
            }
            let chars: Vec<char> = word.chars().collect();
            if chars.len() > MAX_WORD_CHARS {
                ids.push(self.unk);
                continue;
            }
            let mut start = 0;
            let mut pieces = Vec::new();
            while start < chars.len() {
                let mut end = chars.len();
                let mut found = None;
                while start < end {
                    piece.clear();
                    if start > 0 {
                        piece.push_str("##");
                    }
                    piece.extend(&chars[start..end]);
                    if let Some(&id) = self.vocab.get(piece.as_str()) {
                        found = Some(id);
                        break;
                    }
                    end -= 1;
                }
                match found {
                    Some(id) => {
                        pieces.push(id);
                        start = end;
                    }
                    None => {
                        pieces = vec![self.unk];
                        break;
                    }
                }
            }
            ids.extend(pieces);
        }
        ids.truncate(limit);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        let tokens: Vec<String> = [
            "[PAD]",
            "[UNK]",
            "get",
            "connection",
            "##s",
            "pool",
            "(",
            ")",
            "_",
            "con",
            "##nect",
            "cafe",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        WordPiece::new(&tokens).unwrap()
    }

    #[test]
    fn words_split_on_space_and_punctuation_lower_cased_without_accents() {
        assert_eq!(
            WordPiece::words("Get_Connection(pool) Café"),
            ["get", "_", "connection", "(", "pool", ")", "cafe"]
        );
    }

    #[test]
    fn wordpiece_takes_the_longest_prefix_and_unknown_words_are_unk() {
        let wp = vocab();
        assert_eq!(wp.ids("get_connections", 10), [2, 8, 3, 4]);
        assert_eq!(wp.ids("connect xyz", 10), [9, 10, 1]);
        assert_eq!(wp.ids("get get get", 2), [2, 2]);
    }
}
