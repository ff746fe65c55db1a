//! Edge lines as the stages write them, read without serde.
//!
//! Edges are four in five records of a stream (3.8 million on the Linux kernel), and every
//! stage after tg-extract reads each of them. serde reads one in about half a microsecond, most
//! of it in skipping the `type` key, matching field names and checking strings for escapes.
//! [`read`] takes only the exact form [`crate::ndjson::RecordWriter`] writes: the fields in
//! their declared order, no whitespace, strings without escapes or control characters, plain
//! integers, decimals without an exponent. Anything else gives `None` and is read by serde, so a
//! line this reader takes gives the same [`Edge`] serde would give (a test compares the two on
//! every edge of real streams and on lines bent away from that form).

use crate::record::{Edge, EdgeKind, Resolution};

const RESOLUTIONS: [(&str, Resolution); 7] = [
    ("local", Resolution::Local),
    ("self", Resolution::SelfMethod),
    ("import", Resolution::Import),
    ("typed", Resolution::Typed),
    ("closure", Resolution::Closure),
    ("unique", Resolution::Unique),
    ("ambiguous", Resolution::Ambiguous),
];

/// Significant digits below which a decimal means the same number to serde_json as to the
/// standard library (both exact: a significand under 2^53 divided by a power of ten under
/// 10^22 is rounded once).
const MAX_DECIMAL_DIGITS: usize = 15;

/// The edge on `text`, if the line is in the canonical form; `None` means "ask serde".
pub fn read(text: &str) -> Option<Edge> {
    let mut at = Cursor {
        rest: text.strip_prefix("{\"type\":\"edge\"")?,
    };
    let kind = at.string_field("kind")?;
    let kind = EdgeKind::ALL.into_iter().find(|k| k.as_str() == kind)?;
    let src = at.string_field("src")?.to_string();
    let dst = at.string_field("dst")?.to_string();
    let line = at.integer_field("line")?;
    let count = at.integer_field("count")?;
    let resolution = match at.optional("resolution") {
        true => {
            let name = at.string()?;
            Some(RESOLUTIONS.iter().find(|(n, _)| *n == name)?.1)
        }
        false => None,
    };
    let confidence = match at.optional("confidence") {
        true => Some(at.decimal()?),
        false => None,
    };
    let cross_layer = match at.optional("cross_layer") {
        true => Some(at.boolean()?),
        false => None,
    };
    let violation = match at.optional("violation") {
        true => Some(at.boolean()?),
        false => None,
    };
    (at.rest == "}").then_some(Edge {
        kind,
        src,
        dst,
        line,
        count,
        resolution,
        confidence,
        cross_layer,
        violation,
    })
}

struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    /// `,"name":` next.
    fn key(&mut self, name: &str) -> Option<()> {
        let rest = self.rest.strip_prefix(",\"")?.strip_prefix(name)?;
        self.rest = rest.strip_prefix("\":")?;
        Some(())
    }

    /// Whether the optional field `name` comes next (its key is then taken).
    fn optional(&mut self, name: &str) -> bool {
        self.key(name).is_some()
    }

    fn string_field(&mut self, name: &str) -> Option<&'a str> {
        self.key(name)?;
        self.string()
    }

    fn integer_field(&mut self, name: &str) -> Option<u32> {
        self.key(name)?;
        self.integer()
    }

    /// A string without escapes or control characters: its text is its value.
    fn string(&mut self) -> Option<&'a str> {
        let body = self.rest.strip_prefix('"')?;
        // Bytes, not chars: the three stops are ASCII, and no byte of a multi-byte character
        // is below 0x80.
        let end = body
            .bytes()
            .position(|b| b == b'"' || b == b'\\' || b < b' ')?;
        if body.as_bytes()[end] != b'"' {
            return None;
        }
        self.rest = &body[end + 1..];
        Some(&body[..end])
    }

    fn digits(&mut self) -> &'a str {
        let end = self
            .rest
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(self.rest.len());
        let (digits, rest) = self.rest.split_at(end);
        self.rest = rest;
        digits
    }

    /// A JSON integer that fits a `u32` (no sign, no leading zero).
    fn integer(&mut self) -> Option<u32> {
        let digits = self.digits();
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        digits.parse().ok()
    }

    /// `0.95`, `1.0`: digits, a point, digits, no exponent, few enough digits to be exact.
    fn decimal(&mut self) -> Option<f64> {
        let start = self.rest;
        let whole = self.digits();
        if whole.is_empty() || (whole.len() > 1 && whole.starts_with('0')) {
            return None;
        }
        self.rest = self.rest.strip_prefix('.')?;
        let fraction = self.digits();
        if fraction.is_empty()
            || whole.len() + fraction.len() > MAX_DECIMAL_DIGITS
            || self.rest.starts_with(['e', 'E'])
        {
            return None;
        }
        start[..whole.len() + 1 + fraction.len()].parse().ok()
    }

    fn boolean(&mut self) -> Option<bool> {
        for (text, value) in [("true", true), ("false", false)] {
            if let Some(rest) = self.rest.strip_prefix(text) {
                self.rest = rest;
                return Some(value);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_serde(text: &str) -> Option<Edge> {
        serde_json::from_str(text).ok()
    }

    /// Every canonical edge the writer can make from these parts reads back the same both ways.
    #[test]
    fn written_edges_read_as_serde_reads_them() {
        let mut seen = 0;
        for kind in EdgeKind::ALL {
            for (_, resolution) in RESOLUTIONS
                .iter()
                .map(|&(n, r)| (n, Some(r)))
                .chain([("", None)])
            {
                for marks in [(None, None), (Some(true), None), (Some(true), Some(false))] {
                    for (src, line, count) in [
                        ("pkg/a.py::Loader.load", 1, 1),
                        ("src/lib.rs::Store::open#2", 4_294_967_295, 12),
                        ("drivers/net/é€.c::probe", 0, 300),
                    ] {
                        let edge = Edge {
                            kind,
                            src: src.to_string(),
                            dst: "x.c::f".to_string(),
                            line,
                            count,
                            resolution,
                            confidence: resolution.map(Resolution::confidence),
                            cross_layer: marks.0,
                            violation: marks.1,
                        };
                        let text =
                            serde_json::to_string(&crate::record::Record::Edge(edge.clone()))
                                .unwrap();
                        assert_eq!(read(&text), Some(edge), "{text}");
                        seen += 1;
                    }
                }
            }
        }
        assert_eq!(seen, 5 * 8 * 3 * 3);
    }

    /// Lines bent away from the written form: this reader declines them (serde decides), or
    /// reads what serde reads.
    #[test]
    fn other_forms_are_left_to_serde_or_read_alike() {
        let base = r#"{"type":"edge","kind":"calls","src":"a.c::f","dst":"b.c::g","line":3,"count":1,"resolution":"unique","confidence":0.6}"#;
        let bent = [
            base.replace("a.c::f", r"a.c::f\u0041"),
            base.replace("a.c::f", "a.c::\u{1}f"),
            base.replace(r#""line":3"#, r#""line":03"#),
            base.replace(r#""line":3"#, r#""line":4294967296"#),
            base.replace(r#""line":3"#, r#""line":-3"#),
            base.replace(r#""line":3"#, r#""line":3.0"#),
            base.replace("0.6", "6e-1"),
            base.replace("0.6", "0.60000000000000000001"),
            base.replace("0.6", "00.6"),
            base.replace("0.6", ".6"),
            base.replace(r#","count":1"#, ""),
            base.replace(r#""kind":"calls","#, r#""kind":"calls", "#),
            base.replace(
                r#""src":"a.c::f","dst":"b.c::g""#,
                r#""dst":"b.c::g","src":"a.c::f""#,
            ),
            base.replace("unique", "guessed"),
            base.replace("calls", "uses"),
            base.replace("}", r#","weight":2}"#),
            base.replace("}", "} "),
            base.replace(r#""resolution":"unique","#, ""),
            format!("{base}\n"),
            base.replace(r#"{"type":"edge","#, r#"{"type":"edge","type":"edge","#),
        ];
        for text in &bent {
            if let Some(edge) = read(text) {
                assert_eq!(Some(edge), by_serde(text), "{text}");
            }
        }
        assert_eq!(read(base), by_serde(base));
        assert!(read(base).is_some());
        // Read alike: no resolution, no confidence.
        let plain =
            r#"{"type":"edge","kind":"contains","src":"a.c","dst":"a.c::f","line":1,"count":1}"#;
        assert_eq!(read(plain), by_serde(plain));
        assert!(read(plain).is_some());
    }
}
