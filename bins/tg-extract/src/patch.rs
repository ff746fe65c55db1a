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

/// A sink for a whole stream that keeps its tail: every line after the files, nodes and
/// edges (the header is the first line, and is not kept).
#[derive(Default)]
pub struct TailKeeper {
    lines_seen: u64,
    in_tail: bool,
    partial: Vec<u8>,
    pub tail: Vec<u8>,
}

impl TailKeeper {
    fn line(&mut self, line: &[u8]) {
        self.lines_seen += 1;
        if !self.in_tail && self.lines_seen > 1 {
            let body = [
                &b"{\"type\":\"file\""[..],
                b"{\"type\":\"node\"",
                b"{\"type\":\"edge\"",
            ];
            self.in_tail = !body.iter().any(|prefix| line.starts_with(prefix));
        }
        if self.in_tail {
            self.tail.extend_from_slice(line);
        }
    }
}

impl Write for TailKeeper {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut partial = std::mem::take(&mut self.partial);
        let written = crate::splice::split_lines(&mut partial, buf, |line| {
            self.line(line);
            Ok(())
        });
        self.partial = partial;
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_what_follows_the_edges_in_any_pieces() {
        let stream = b"{\"type\":\"header\"}\n{\"type\":\"file\",\"path\":\"a\"}\n{\"type\":\"node\",\"id\":\"a\"}\n{\"type\":\"edge\",\"kind\":\"calls\"}\n{\"type\":\"diagnostic\",\"x\":1}\n{\"type\":\"edge\",\"late\":1}\n{\"type\":\"summary\"}\n";
        for step in [1, 3, 7, stream.len()] {
            let mut keeper = TailKeeper::default();
            for piece in stream.chunks(step) {
                keeper.write_all(piece).expect("in memory");
            }
            assert_eq!(
                String::from_utf8_lossy(&keeper.tail),
                "{\"type\":\"diagnostic\",\"x\":1}\n{\"type\":\"edge\",\"late\":1}\n{\"type\":\"summary\"}\n",
                "pieces of {step}"
            );
        }
    }
}
