//! Streaming NDJSON (JSON Lines) reading and writing of [`Record`]s.
//!
//! The reader never holds more than one line; a malformed line is an error naming its line
//! number (`line 12: expected ',' or '}' at column 40`), never a panic. Lines whose `type` is not
//! a known record are handed back raw so a stage can pass them through unchanged.

use crate::record::{Record, SCHEMA_MAJOR};
use serde::Deserialize;
use std::fmt;
use std::io::{self, BufRead, Write};

/// A line that could not be read as a record.
#[derive(Debug)]
pub struct NdjsonError {
    /// 1-based line number in the stream.
    pub line: u64,
    pub message: String,
}

impl fmt::Display for NdjsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for NdjsonError {}

/// One line of a stream.
#[derive(Debug)]
pub struct Item {
    pub line: u64,
    /// The line as read, without its newline: what a pass-through stage writes back.
    pub raw: String,
    /// `None` for a record type this version does not know.
    pub record: Option<Record>,
}

/// The longest line a reader accepts. The longest real record is a node whose signature and
/// doc are capped by the extractor, well under a megabyte; a longer line is damage (or hostile),
/// and reading it whole would let one line take all memory.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Reads records one line at a time.
pub struct RecordReader<R> {
    input: R,
    line: u64,
    buf: Vec<u8>,
    max_line: usize,
}

#[derive(Deserialize)]
struct TypeTag<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

impl<R: BufRead> RecordReader<R> {
    pub fn new(input: R) -> Self {
        Self::with_max_line(input, MAX_LINE_BYTES)
    }

    /// A reader that rejects lines longer than `max_line` bytes (for tests of the bound).
    pub fn with_max_line(input: R, max_line: usize) -> Self {
        RecordReader {
            input,
            line: 0,
            buf: Vec::new(),
            max_line,
        }
    }

    /// Reads one line into `buf` (without its newline), never holding more than `max_line`
    /// bytes: `Ok(false)` at end of input, an error for an over-long line (whose rest is skipped).
    fn read_bounded_line(&mut self) -> Result<bool, NdjsonError> {
        let read = read_line_bounded(&mut self.input, &mut self.buf, self.max_line);
        match read {
            Ok(BoundedLine::End) => Ok(false),
            Ok(BoundedLine::Line) => Ok(true),
            Ok(BoundedLine::TooLong) => Err(NdjsonError {
                line: self.line,
                message: format!(
                    "line longer than {} MiB: not a record this version writes (a damaged or hostile stream)",
                    self.max_line >> 20
                ),
            }),
            Err(err) => Err(NdjsonError {
                line: self.line,
                message: format!("cannot read input: {err}"),
            }),
        }
    }

    /// The next non-blank line, or `None` at end of input.
    pub fn next_item(&mut self) -> Option<Result<Item, NdjsonError>> {
        loop {
            self.line += 1;
            match self.read_bounded_line() {
                Ok(false) => return None,
                Ok(true) => {}
                Err(err) => return Some(Err(err)),
            }
            let bytes = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
            let text = match std::str::from_utf8(bytes) {
                Ok(text) => text,
                Err(err) => {
                    return Some(Err(NdjsonError {
                        line: self.line,
                        message: format!("not UTF-8 ({err})"),
                    }))
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            return Some(parse_line(self.line, text));
        }
    }
}

/// What [`read_line_bounded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundedLine {
    /// The end of the input: nothing was read.
    End,
    /// A line, in the buffer without its newline.
    Line,
    /// A line longer than the bound: its rest was skipped, the buffer holds none of it.
    TooLong,
}

/// Reads one line of `input` into `buf` (cleared first, the newline left out), never holding
/// more than `max` bytes of it: every reader of the stream's lines, and of graph.json's, is
/// bounded the same way, so one line cannot take all memory.
pub fn read_line_bounded(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<BoundedLine> {
    buf.clear();
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            break;
        }
        seen_any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                *buf = Vec::new();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(if done { take + 1 } else { take });
        if done {
            break;
        }
    }
    Ok(match (seen_any, too_long) {
        (false, _) => BoundedLine::End,
        (true, true) => BoundedLine::TooLong,
        (true, false) => BoundedLine::Line,
    })
}

/// Reads a whole stream into memory for a stage that needs it twice (tg-embed fingerprints it
/// before parsing), rejecting a line longer than [`MAX_LINE_BYTES`] as soon as it is seen rather
/// than after buffering all of it.
pub fn read_whole_stream(mut input: impl io::Read) -> Result<Vec<u8>, NdjsonError> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    let (mut line, mut line_len) = (1u64, 0usize);
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                return Err(NdjsonError {
                    line,
                    message: format!("cannot read input: {err}"),
                })
            }
        };
        for &byte in &chunk[..n] {
            if byte == b'\n' {
                line += 1;
                line_len = 0;
            } else {
                line_len += 1;
            }
        }
        if line_len > MAX_LINE_BYTES {
            return Err(NdjsonError {
                line,
                message: format!(
                    "line longer than {} MiB: not a record this version writes (a damaged or hostile stream)",
                    MAX_LINE_BYTES >> 20
                ),
            });
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = Result<Item, NdjsonError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_item()
    }
}

/// Parses one line of a stream (used by the reader; public for tests and tools).
pub fn parse_line(line: u64, text: &str) -> Result<Item, NdjsonError> {
    let err = |message: String| NdjsonError { line, message };
    let kind = match leading_known_tag(text) {
        Some(kind) => std::borrow::Cow::Borrowed(kind),
        None => {
            let tag: TypeTag =
                serde_json::from_str(text).map_err(|e| err(format!("not a JSON object: {e}")))?;
            tag.kind
                .ok_or_else(|| err("record has no \"type\" field".to_string()))?
        }
    };
    let record = if Record::KNOWN_TYPES.contains(&kind.as_ref()) {
        let record = Record::from_json_tagged(&kind, text).map_err(|e| {
            // A tag read without a parse says nothing of the rest: name broken JSON as such.
            match serde_json::from_str::<TypeTag>(text) {
                Ok(_) => err(format!("invalid {kind} record: {e}")),
                Err(e) => err(format!("not a JSON object: {e}")),
            }
        })?;
        if let Record::Header(header) = &record {
            check_schema(&header.schema).map_err(err)?;
        }
        Some(record)
    } else {
        None
    };
    Ok(Item {
        line,
        raw: text.to_string(),
        record,
    })
}

/// The `type` of a line that starts `{"type":"<known tag>"`, as every writer of the stream puts
/// it, read without a JSON parse (the record's own parse then checks the whole line). Any other
/// line, and an escaped tag, takes the general path.
fn leading_known_tag(text: &str) -> Option<&'static str> {
    let rest = text.strip_prefix("{\"type\":\"")?;
    let tag = &rest[..rest.find('"')?];
    Record::KNOWN_TYPES
        .iter()
        .copied()
        .find(|known| *known == tag)
}

fn check_schema(schema: &str) -> Result<(), String> {
    let major = schema.split('.').next().and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(SCHEMA_MAJOR) => Ok(()),
        Some(other) => Err(format!(
            "stream schema {schema} has major version {other}; this build reads schema {SCHEMA_MAJOR}.x"
        )),
        None => Err(format!("unreadable schema version {schema:?}")),
    }
}

/// Writes one record per line. Callers wrap the sink in a `BufWriter`.
pub struct RecordWriter<W: Write> {
    out: W,
    /// One line at a time: serde_json would wrap the sink's errors, hiding a broken pipe.
    line: Vec<u8>,
}

impl<W: Write> RecordWriter<W> {
    pub fn new(out: W) -> Self {
        RecordWriter {
            out,
            line: Vec::with_capacity(512),
        }
    }

    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, record).map_err(io::Error::other)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Writes lines already serialised (each ending in a newline).
    pub fn write_bytes(&mut self, lines: &[u8]) -> io::Result<()> {
        self.out.write_all(lines)
    }

    /// Writes a line exactly as read (pass-through of records a stage does not own).
    pub fn write_raw(&mut self, line: &str) -> io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Header, Record};

    fn read_all(text: &str) -> Vec<Result<Item, NdjsonError>> {
        RecordReader::new(text.as_bytes()).collect()
    }

    #[test]
    fn reads_known_and_passes_unknown_types_through() {
        let text = "{\"type\":\"header\",\"schema\":\"1.3\",\"producer\":\"x\",\"root\":\".\"}\n\n{\"type\":\"future\",\"id\":\"api\"}\n";
        let items: Vec<Item> = read_all(text).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(items.len(), 2);
        assert!(matches!(items[0].record, Some(Record::Header(_))));
        assert_eq!(items[1].line, 3);
        assert!(items[1].record.is_none());
        assert_eq!(items[1].raw, "{\"type\":\"future\",\"id\":\"api\"}");
    }

    #[test]
    fn malformed_line_names_its_line_number() {
        let text = "{\"type\":\"summary\",\"stage\":\"a\"}\n{\"type\":\"node\", oops}\n";
        let results = read_all(text);
        assert!(results[0].is_ok());
        let err = results[1].as_ref().unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.to_string().starts_with("line 2: not a JSON object"),
            "{err}"
        );
    }

    #[test]
    fn record_with_missing_field_is_an_error_not_a_panic() {
        let err = parse_line(7, r#"{"type":"node","id":"a"}"#).unwrap_err();
        assert_eq!(err.line, 7);
        assert!(
            err.message.contains("invalid node record"),
            "{}",
            err.message
        );
        let err = parse_line(1, r#"[1,2]"#).unwrap_err();
        assert!(err.message.contains("not a JSON object"), "{}", err.message);
        let err = parse_line(1, r#"{"id":"a"}"#).unwrap_err();
        assert!(err.message.contains("no \"type\""), "{}", err.message);
    }

    #[test]
    fn unknown_major_schema_is_rejected() {
        let err = parse_line(
            1,
            r#"{"type":"header","schema":"2.0","producer":"x","root":"."}"#,
        )
        .unwrap_err();
        assert!(err.message.contains("major version 2"), "{}", err.message);
    }

    #[test]
    fn an_over_long_line_is_an_error_without_holding_it_and_reading_goes_on() {
        let long = format!("{{\"type\":\"future\",\"pad\":\"{}\"}}", "x".repeat(5000));
        let text = format!("{long}\n{{\"type\":\"future\"}}\n");
        // A small buffer so the line arrives in many chunks.
        let input = io::BufReader::with_capacity(64, text.as_bytes());
        let mut reader = RecordReader::with_max_line(input, 1024);
        let err = reader.next_item().unwrap().unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("line longer than"), "{}", err.message);
        assert!(
            reader.buf.capacity() <= 1024 + 64,
            "{}",
            reader.buf.capacity()
        );
        let next = reader.next_item().unwrap().unwrap();
        assert_eq!((next.line, next.raw.as_str()), (2, "{\"type\":\"future\"}"));
        assert!(reader.next_item().is_none());
    }

    #[test]
    fn invalid_utf8_and_crlf_lines() {
        let items: Vec<_> =
            RecordReader::new(&b"{\"type\":\"future\"}\r\n\xff\xfe\n"[..]).collect();
        assert_eq!(items[0].as_ref().unwrap().raw, "{\"type\":\"future\"}");
        let err = items[1].as_ref().unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.starts_with("not UTF-8"), "{}", err.message);
    }

    #[test]
    fn writer_output_reads_back_identically() {
        let mut writer = RecordWriter::new(Vec::new());
        let header = Record::Header(Header::new("test 1"));
        writer.write(&header).unwrap();
        writer.write_raw("{\"type\":\"future\"}").unwrap();
        let bytes = writer.into_inner();
        let items: Vec<Item> = RecordReader::new(&bytes[..]).map(|r| r.unwrap()).collect();
        assert_eq!(items[0].record.as_ref(), Some(&header));
        assert_eq!(items[1].raw, "{\"type\":\"future\"}");
    }
}
