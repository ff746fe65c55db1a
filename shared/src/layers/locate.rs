//! Finding where a value sits in a YAML text, for messages about what serde cannot locate
//! (a duplicate id, a layer name that does not exist). Block and flow style, one document.

/// 1-based (line, column) of the `nth` (0-based) occurrence of `value` as a whole scalar under
/// `key`; with an empty `value`, of the `nth` `key:` itself.
pub fn find(text: &str, key: &str, value: &str, nth: usize) -> Option<(usize, usize)> {
    let mut current_key: Option<&str> = None;
    let mut seen = 0;
    for (index, line) in text.lines().enumerate() {
        let code = strip_comment(line);
        let trimmed = code.trim_start();
        let item = trimmed.strip_prefix("- ").unwrap_or(trimmed).trim_start();
        let mut search_from = 0;
        if let Some(colon) = item.find(':') {
            let name = item[..colon].trim().trim_matches(['"', '\'']);
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                current_key = Some(name);
                let key_column = code.len() - item.len();
                search_from = key_column + colon + 1;
                if value.is_empty() && name == key {
                    if seen == nth {
                        return Some((index + 1, char_column(code, key_column)));
                    }
                    seen += 1;
                }
            }
        }
        if value.is_empty() {
            current_key = last_key_before(code, code.len()).or(current_key);
            continue;
        }
        for column in scalar_positions(code, value, search_from) {
            // In flow style (`{"a": [x], "b": y}`) the key is the nearest one before the value.
            if last_key_before(code, column).or(current_key) != Some(key) {
                continue;
            }
            if seen == nth {
                return Some((index + 1, char_column(code, column)));
            }
            seen += 1;
        }
        current_key = last_key_before(code, code.len()).or(current_key);
    }
    None
}

/// The 1-based column, in characters as libyaml counts them, of byte `byte` of `line`: a
/// message mixing both would point at different places on a line with wide characters.
fn char_column(line: &str, byte: usize) -> usize {
    line.get(..byte).map_or(byte, |head| head.chars().count()) + 1
}

/// The last `key:` (bare or quoted) that ends before byte `end` of `line`.
fn last_key_before(line: &str, end: usize) -> Option<&str> {
    let head = &line[..end];
    let mut found = None;
    for (colon, _) in head.match_indices(':') {
        let before = head[..colon].trim_end();
        let unquoted = before.trim_end_matches(['"', '\'']);
        // Just past the last character that cannot be part of a key (which may be wide).
        let start = unquoted
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &unquoted[start..];
        let after = head[colon + 1..].chars().next();
        if !word.is_empty() && after.is_none_or(|c| c == ' ' || c == '\t') {
            found = Some(word);
        }
    }
    found
}

fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if i == 0 || line[..i].ends_with([' ', '\t']) => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Byte columns where `value` occurs in `line` (from `from`) delimited as a YAML scalar.
fn scalar_positions(line: &str, value: &str, from: usize) -> Vec<usize> {
    let boundary = |c: Option<char>| {
        c.is_none_or(|c| {
            matches!(
                c,
                ' ' | '\t' | ',' | '[' | ']' | '"' | '\'' | '{' | '}' | ':'
            )
        })
    };
    let mut found = Vec::new();
    let mut start = from.min(line.len());
    while let Some(offset) = line[start..].find(value) {
        let at = start + offset;
        let before = line[..at].chars().next_back();
        let after = line[at + value.len()..].chars().next();
        if boundary(before) && boundary(after) {
            found.push(at);
        }
        start = at + value.len().max(1);
        if start >= line.len() {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::find;

    const TEXT: &str = "version: 1\ndefault_layer: shared\nlayers:\n  - id: api\n    order: 1\n    may_depend_on: [core, shraed]\n  - id: api   # again\n    order: 2\n    may_depend_on:\n      - core\n      - util\n";

    #[test]
    fn finds_values_under_their_key() {
        assert_eq!(find(TEXT, "id", "api", 0), Some((4, 9)));
        assert_eq!(find(TEXT, "id", "api", 1), Some((7, 9)));
        assert_eq!(find(TEXT, "may_depend_on", "shraed", 0), Some((6, 27)));
        assert_eq!(find(TEXT, "may_depend_on", "util", 0), Some((11, 9)));
        assert_eq!(find(TEXT, "default_layer", "shared", 0), Some((2, 16)));
        assert_eq!(find(TEXT, "order", "", 1), Some((8, 5)));
        assert_eq!(find(TEXT, "id", "ap", 0), None);
    }

    #[test]
    fn wide_characters_before_a_colon_are_no_trouble() {
        let text = "description: The “core”: rules\nname: Storage—SQL: x\norder: 2\n";
        assert_eq!(find(text, "order", "2", 0), Some((3, 8)));
        assert_eq!(find(text, "name", "x", 0), None);
    }
}
