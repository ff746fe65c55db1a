//! `--patch`: what a run changed in the previous run's stream, instead of the whole stream.
//!
//! A patch is written when the run spliced its output into the previous one ([`crate::splice`])
//! or changed nothing. Its header names both whole streams by tg-extract's fingerprints of
//! their inputs; then come the lines the splice dropped, the lines it wrote in their place, and
//! the stream's tail (diagnostics and summary), each section opened by a `patch` record
//! ([`tg_shared::record::PatchSection`] says how a patch applies). On the kernel, a body edit's
//! patch is a few kilobytes against a stream of 1.1 GB.

use crate::splice::Changes;
use std::io::{self, Write};
use tg_shared::ndjson::RecordWriter;
use tg_shared::record::{Header, PatchMarker, PatchOf, PatchSection, Record};

/// The patch from the stream of `base` to the stream of `result`.
pub fn write(
    out: &mut dyn Write,
    mut header: Header,
    (base, result): (&str, &str),
    changes: &Changes,
    tail: &[u8],
) -> io::Result<()> {
    header.patch = Some(PatchOf {
        base: base.to_string(),
        result: result.to_string(),
    });
    let mut writer = RecordWriter::new(out);
    writer.write(&Record::Header(header))?;
    let sections: [(PatchSection, &[&[u8]]); 3] = [
        (PatchSection::Removed, &[&changes.removed]),
        (
            PatchSection::Added,
            &[&changes.added_files, &changes.added_edges],
        ),
        (PatchSection::Tail, &[tail]),
    ];
    for (section, parts) in sections {
        writer.write(&Record::Patch(PatchMarker { section }))?;
        for part in parts {
            writer.write_bytes(part)?;
        }
    }
    writer.flush()
}

/// The tail of the whole stream whose frames are `frames`: every line after its header,
/// files, nodes and edges (the diagnostics and the summary), read from as few of its last
/// frames as hold it.
pub fn tail_of_frames(frames: &[u8]) -> io::Result<Vec<u8>> {
    let content = tg_shared::frames::decompress_last(frames, |c| tail_start(c).is_some())?;
    let start = tail_start(&content)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "the stream has no header"))?;
    Ok(content[start..].to_vec())
}

/// Where the tail begins in `content` (whole lines from a stream's end): after its last
/// header, file, node or edge line; `None` when it holds none.
fn tail_start(content: &[u8]) -> Option<usize> {
    const BEFORE_TAIL: [&[u8]; 4] = [
        b"{\"type\":\"header\"",
        b"{\"type\":\"file\"",
        b"{\"type\":\"node\"",
        b"{\"type\":\"edge\"",
    ];
    let mut end = content.len();
    while end > 0 {
        let start = memchr::memrchr(b'\n', &content[..end - 1]).map_or(0, |i| i + 1);
        if BEFORE_TAIL
            .iter()
            .any(|p| content[start..end].starts_with(p))
        {
            return Some(end);
        }
        end = start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_what_follows_the_last_record_of_the_graph() {
        let stream = b"{\"type\":\"header\"}\n{\"type\":\"file\",\"path\":\"a\"}\n{\"type\":\"node\",\"id\":\"a\"}\n{\"type\":\"edge\",\"kind\":\"calls\"}\n{\"type\":\"diagnostic\",\"x\":1}\n{\"type\":\"summary\"}\n";
        let tail = b"{\"type\":\"diagnostic\",\"x\":1}\n{\"type\":\"summary\"}\n";
        assert_eq!(tail_start(stream), Some(stream.len() - tail.len()));
        assert_eq!(
            tail_start(tail),
            None,
            "no record of the graph: the tail goes on before"
        );
        let header_only = b"{\"type\":\"header\"}\n{\"type\":\"summary\"}\n";
        assert_eq!(
            tail_start(header_only),
            Some(b"{\"type\":\"header\"}\n".len())
        );
        let mut frames = tg_shared::frames::FrameWriter::new(Vec::new());
        frames.write_all(stream).expect("in memory");
        let frames = frames.finish().expect("in memory");
        assert_eq!(tail_of_frames(&frames).expect("a stream"), tail);
    }
}
