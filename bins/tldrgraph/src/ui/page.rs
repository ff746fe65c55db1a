//! The page: the template with its style, its script and the data put in place. The data goes
//! in a `<script type="application/json">` block with every character that could end that block
//! or start markup escaped, and the script reads it as data, never as markup; the page's
//! Content-Security-Policy allows only its own script and style (by SHA-256) and no connection,
//! so even text that got into the DOM could neither run nor reach the network.

use base64::Engine;
use sha2::{Digest, Sha256};

const TEMPLATE: &str = include_str!("assets/map.html");
const STYLE: &str = include_str!("assets/map.css");
const SCRIPT: &str = include_str!("assets/map.js");

/// The page for `data` (serialised [`super::export::MapData`]) titled after `repo`.
pub fn render(repo: &str, data_json: &str) -> String {
    let csp = content_security_policy();
    let mut page =
        String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + data_json.len() + 1024);
    // One pass over the template: what is put in is never searched for placeholders again.
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        page.push_str(&rest[..start]);
        match &rest[start + 2..start + len] {
            "CSP" => page.push_str(&csp),
            "TITLE" => page.push_str(&escape_html(repo)),
            "STYLE" => page.push_str(STYLE),
            "SCRIPT" => page.push_str(SCRIPT),
            "DATA" => push_script_data(&mut page, data_json),
            other => {
                page.push_str("{{");
                page.push_str(other);
                page.push_str("}}");
            }
        }
        rest = &rest[start + len + 2..];
    }
    page.push_str(rest);
    page
}

/// The policy the page carries (in a meta tag, and as a header when served).
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:; \
         connect-src 'none'; base-uri 'none'; form-action 'none'",
        sha256_base64(SCRIPT),
        sha256_base64(STYLE)
    )
}

fn sha256_base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` (so no `</script>` or `<!--`
/// can end or bend the block) and the two line separators JavaScript once treated as newlines,
/// as `\u` escapes, which JSON reads back as the same characters. They occur only inside
/// strings, where the escape is valid.
pub fn escape_script_data(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 50);
    push_script_data(&mut out, json);
    out
}

/// [`escape_script_data`] appended to `out` (the page), without a copy of the data between.
fn push_script_data(out: &mut String, json: &str) {
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_data_cannot_close_its_block_and_reads_back_the_same() {
        let json =
            serde_json::json!({"intent": "</script><script>alert(1)</script> & <!-- \u{2028}"})
                .to_string();
        let safe = escape_script_data(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back.to_string(), json);
    }

    #[test]
    fn the_page_has_every_part_once_and_no_placeholder_left() {
        let page = render("a<b", r#"{"x":"{{SCRIPT}}"}"#);
        assert!(page.contains("<title>a&lt;b"));
        assert!(
            page.contains(r#"{"x":"{{SCRIPT}}"}"#),
            "data is put in verbatim, not expanded"
        );
        assert_eq!(page.matches(SCRIPT).count(), 1);
        assert!(page.contains(&content_security_policy()));
    }

    #[test]
    fn the_policy_names_the_script_by_its_hash() {
        // The digest of the empty string, to check the encoding.
        assert_eq!(
            sha256_base64(""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert!(content_security_policy().contains(&format!("'sha256-{}'", sha256_base64(SCRIPT))));
    }
}
