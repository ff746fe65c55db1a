//! zstd behind one door: large artifacts written as a run of independent zstd frames,
//! compressed and decompressed across the cores.
//!
//! A run of frames is an ordinary `.zst` stream (`zstd -dc` reads it). Independent frames are
//! what lets both directions use every core. A frame ends after a line chosen by its content
//! (the hash of its last bytes), once the frame holds [`MIN_FRAME`] bytes, or at
//! [`MAX_FRAME`]: the same input gives the same bytes whatever the number of threads or the
//! way it was written, and an edit in the middle of a file leaves the frames before it and,
//! past the next chosen line, those after it unchanged. A writer given the previous version
//! of its file copies each frame whose content that version already compressed instead of
//! compressing it again ([`FrameWriter::reusing`]): each run ends with a skippable frame (which
//! decoders pass over) indexing every frame by its content's hash. Each data frame carries its
//! content size and a checksum of its content.

use rayon::prelude::*;
use std::collections::HashMap;
use std::io::{self, Read, Write};

/// The least input a frame holds before a line may end it: large enough that a frame
/// compresses nearly as well as one whole stream.
pub const MIN_FRAME: usize = 4 << 20;
/// The most input a frame holds: a batch of them across the cores stays a few tens of MB.
pub const MAX_FRAME: usize = 16 << 20;
/// A line ends a frame (past [`MIN_FRAME`]) when these bits of its tail's hash are zero: one
/// line in 16,384, about every 4 MB of a stream's 230-byte lines.
const CUT_MASK: u64 = (1 << 14) - 1;
/// How much of a line's end its hash covers: edges and nodes end in their most varied fields.
const TAIL: usize = 64;
/// zstd's fastest regular level: on the kernel's stream it compresses 10.5x at about 450 MB/s
/// a core; higher levels gained under 2% for a third more time.
const LEVEL: i32 = 1;
/// The skippable frame that indexes a run's frames (zstd reserves 0x184D2A50-5F for them).
const INDEX_MAGIC: u32 = 0x184D_2A5B;
const INDEX_TAG: &[u8] = b"tg-frames 1\n";
/// Per frame in the index: its content's hash, compressed length and content length.
const INDEX_ENTRY: usize = 16 + 8 + 8;

/// Frames held at once per thread while compressing or decompressing a batch.
fn batch_frames() -> usize {
    rayon::current_num_threads().max(1) * 2
}

fn compress_frame(input: &[u8]) -> io::Result<Vec<u8>> {
    let mut compressor = zstd::bulk::Compressor::new(LEVEL)?;
    compressor.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    compressor.compress(input)
}

/// Decompresses one frame into `out` (emptied first; its capacity is kept for the next).
fn decompress_frame(
    decompressor: &mut zstd::bulk::Decompressor<'_>,
    frame: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    let damaged = || io::Error::new(io::ErrorKind::InvalidData, "a damaged zstd frame");
    // The content size is in every frame this module writes, and never over MAX_FRAME.
    let size = zstd::zstd_safe::get_frame_content_size(frame)
        .ok()
        .flatten()
        .filter(|&size| size <= MAX_FRAME as u64)
        .ok_or_else(damaged)?;
    out.clear();
    out.reserve(size as usize);
    let written = decompressor
        .decompress_to_buffer(frame, out)
        .map_err(|_| damaged())?;
    if written as u64 != size {
        return Err(damaged());
    }
    Ok(())
}

fn content_key(content: &[u8]) -> [u8; 16] {
    let mut key = [0u8; 16];
    key.copy_from_slice(&blake3::hash(content).as_bytes()[..16]);
    key
}

/// Whether the line ending at `end` (the index of its newline) in `bytes`, which begins no
/// earlier than `floor`, ends a frame.
fn ends_frame(bytes: &[u8], floor: usize, end: usize) -> bool {
    use std::hash::Hasher;
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(&bytes[end.saturating_sub(TAIL).max(floor)..end]);
    hasher.finish() & CUT_MASK == 0
}

/// The frames a previous version of a file holds, by their content's hash: what a writer may
/// copy instead of compressing again.
#[derive(Default)]
struct Reuse<'a> {
    frames: HashMap<[u8; 16], &'a [u8]>,
}

impl<'a> Reuse<'a> {
    /// The frames of `bytes` its index names, each checked against the index's length; none
    /// when it has no index this module wrote.
    fn of(bytes: &'a [u8]) -> Self {
        let Ok(all) = split_all(bytes) else {
            return Reuse::default();
        };
        let Some((index, data)) = all.split_last() else {
            return Reuse::default();
        };
        let Some(entries) = index_entries(index) else {
            return Reuse::default();
        };
        if entries.len() != data.len() {
            return Reuse::default();
        }
        let frames = (entries.into_iter().zip(data))
            .filter(|((_, compressed, _), frame)| *compressed == frame.len() as u64)
            .map(|((key, _, _), frame)| (key, *frame))
            .collect();
        Reuse { frames }
    }
}

/// The entries of an index frame: (content hash, compressed length, content length).
fn index_entries(frame: &[u8]) -> Option<Vec<([u8; 16], u64, u64)>> {
    let payload = skippable_payload(frame)?;
    let entries = payload.strip_prefix(INDEX_TAG)?;
    if entries.len() % INDEX_ENTRY != 0 {
        return None;
    }
    let u64_at = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
    Some(
        entries
            .chunks_exact(INDEX_ENTRY)
            .map(|entry| {
                let mut key = [0u8; 16];
                key.copy_from_slice(&entry[..16]);
                (key, u64_at(&entry[16..24]), u64_at(&entry[24..32]))
            })
            .collect(),
    )
}

/// The payload of a skippable frame of ours, `None` for any other frame.
fn skippable_payload(frame: &[u8]) -> Option<&[u8]> {
    let magic = u32::from_le_bytes(frame.get(..4)?.try_into().ok()?);
    (magic == INDEX_MAGIC).then(|| frame.get(8..)).flatten()
}

/// A frame's content hash, and its compressed bytes: made now, or copied.
type KeyedFrame<'a> = ([u8; 16], std::borrow::Cow<'a, [u8]>);

/// A writer that compresses what it is given into frames, a batch of frames at a time across
/// the cores, and writes them in order to the sink. [`FrameWriter::finish`] writes the last
/// frame and the index, and gives the sink back.
pub struct FrameWriter<'a, W: Write> {
    sink: W,
    pending: Vec<u8>,
    /// Where the frames found in `pending` end, in order.
    cuts: Vec<usize>,
    /// How far `pending` was searched for the next cut.
    searched: usize,
    reuse: Reuse<'a>,
    index: Vec<u8>,
    reused: usize,
}

impl<W: Write> FrameWriter<'static, W> {
    pub fn new(sink: W) -> Self {
        FrameWriter::reusing(sink, &[])
    }
}

impl<'a, W: Write> FrameWriter<'a, W> {
    /// A writer that copies the frames of `previous` (a run this module wrote) whose content
    /// it is given again, instead of compressing them: the bytes are the same either way.
    pub fn reusing(sink: W, previous: &'a [u8]) -> Self {
        FrameWriter {
            sink,
            pending: Vec::new(),
            cuts: Vec::new(),
            searched: 0,
            reuse: Reuse::of(previous),
            index: INDEX_TAG.to_vec(),
            reused: 0,
        }
    }

    /// Finds the frame ends in what is pending, past the last one found.
    fn find_cuts(&mut self) {
        loop {
            let start = self.cuts.last().copied().unwrap_or(0);
            let from = self.searched.max(start + MIN_FRAME - 1);
            let limit = (start + MAX_FRAME).min(self.pending.len());
            if from >= limit {
                if self.pending.len() >= start + MAX_FRAME {
                    self.cuts.push(start + MAX_FRAME);
                    continue;
                }
                self.searched = self.searched.max(from.min(self.pending.len()));
                return;
            }
            let found = memchr::memchr_iter(b'\n', &self.pending[from..limit])
                .map(|at| from + at)
                .find(|&end| ends_frame(&self.pending, start, end));
            match found {
                Some(end) => self.cuts.push(end + 1),
                None if limit == start + MAX_FRAME => self.cuts.push(limit),
                None => {
                    self.searched = limit;
                    return;
                }
            }
        }
    }

    /// Compresses (or copies) and writes every frame found, and what remains as the last one
    /// when `all`.
    fn drain(&mut self, all: bool) -> io::Result<()> {
        if all && self.cuts.last().copied().unwrap_or(0) < self.pending.len() {
            self.cuts.push(self.pending.len());
        }
        let mut bounds = Vec::with_capacity(self.cuts.len());
        let mut start = 0;
        for &end in &self.cuts {
            bounds.push(start..end);
            start = end;
        }
        if bounds.is_empty() {
            return Ok(());
        }
        let reuse = &self.reuse;
        let pending = &self.pending;
        let frames: Vec<io::Result<KeyedFrame<'a>>> = bounds
            .par_iter()
            .map(|range| {
                let content = &pending[range.clone()];
                let key = content_key(content);
                Ok(match reuse.frames.get(&key) {
                    Some(&frame) => (key, std::borrow::Cow::Borrowed(frame)),
                    None => (key, std::borrow::Cow::Owned(compress_frame(content)?)),
                })
            })
            .collect();
        for (frame, range) in frames.into_iter().zip(&bounds) {
            let (key, frame) = frame?;
            self.reused += usize::from(matches!(frame, std::borrow::Cow::Borrowed(_)));
            self.sink.write_all(&frame)?;
            self.index.extend_from_slice(&key);
            self.index
                .extend_from_slice(&(frame.len() as u64).to_le_bytes());
            self.index
                .extend_from_slice(&(range.len() as u64).to_le_bytes());
        }
        self.pending.drain(..start);
        self.cuts.clear();
        self.searched = self.searched.saturating_sub(start);
        Ok(())
    }

    /// Writes the last frame and the index, and gives the sink back.
    pub fn finish(self) -> io::Result<W> {
        Ok(self.finish_counting()?.0)
    }

    /// [`Self::finish`], also saying how many frames were copied from the previous version
    /// rather than compressed.
    pub fn finish_counting(mut self) -> io::Result<(W, usize)> {
        self.find_cuts();
        self.drain(true)?;
        let size = u32::try_from(self.index.len()).map_err(io::Error::other)?;
        self.sink.write_all(&INDEX_MAGIC.to_le_bytes())?;
        self.sink.write_all(&size.to_le_bytes())?;
        self.sink.write_all(&self.index)?;
        self.sink.flush()?;
        Ok((self.sink, self.reused))
    }
}

impl<W: Write> Write for FrameWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= self.searched + MIN_FRAME {
            self.find_cuts();
            if self.cuts.len() >= batch_frames() {
                self.drain(false)?;
            }
        }
        Ok(buf.len())
    }

    /// Frames are cut by content alone, so a flush writes nothing early: the bytes stay the
    /// same however the input was split into writes.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Every frame of `bytes`, skippable ones included, in order; an error when they do not split
/// exactly into frames.
fn split_all(mut bytes: &[u8]) -> io::Result<Vec<&[u8]>> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let len = zstd::zstd_safe::find_frame_compressed_size(bytes)
            .ok()
            .filter(|&len| len > 0 && len <= bytes.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a damaged zstd frame"))?;
        let (frame, rest) = bytes.split_at(len);
        frames.push(frame);
        bytes = rest;
    }
    Ok(frames)
}

/// The data frames of `bytes`, in order (skippable frames left out).
fn split_frames(bytes: &[u8]) -> io::Result<Vec<&[u8]>> {
    let mut frames = split_all(bytes)?;
    frames.retain(|frame| !is_skippable(frame));
    Ok(frames)
}

fn is_skippable(frame: &[u8]) -> bool {
    frame
        .get(..4)
        .and_then(|magic| magic.try_into().ok())
        .map(u32::from_le_bytes)
        .is_some_and(|magic| magic & 0xFFFF_FFF0 == 0x184D_2A50)
}

/// Decompresses a run of frames held in memory to `out`, a batch of frames at a time across
/// the cores, in order. A damaged frame is an [`io::ErrorKind::InvalidData`] error, found
/// before its batch is written.
pub fn decompress_to(bytes: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let frames = split_frames(bytes)?;
    // One buffer and one context per frame of a batch, reused by every batch: fresh 8 MiB
    // buffers cost as much in page faults as the decompression itself.
    let mut slots: Vec<(Vec<u8>, Option<zstd::bulk::Decompressor<'static>>)> =
        (0..batch_frames()).map(|_| (Vec::new(), None)).collect();
    for batch in frames.chunks(slots.len()) {
        slots
            .par_iter_mut()
            .zip(batch)
            .map(|((buffer, context), frame)| {
                let decompressor = match context {
                    Some(decompressor) => decompressor,
                    None => context.insert(zstd::bulk::Decompressor::new()?),
                };
                decompress_frame(decompressor, frame, buffer)
            })
            .collect::<io::Result<()>>()?;
        for (buffer, _) in &slots[..batch.len()] {
            out.write_all(buffer)?;
        }
    }
    Ok(())
}

/// The content of the last frames of `bytes`, as few as `enough` accepts: the last frame, then
/// the last two, and so on to all of them. For a reader of a stream's end, which then need not
/// decompress the gigabyte before it.
pub fn decompress_last(bytes: &[u8], enough: impl Fn(&[u8]) -> bool) -> io::Result<Vec<u8>> {
    let frames = split_frames(bytes)?;
    let mut decompressor = zstd::bulk::Decompressor::new()?;
    let (mut content, mut frame_content) = (Vec::new(), Vec::new());
    for frame in frames.iter().rev() {
        decompress_frame(&mut decompressor, frame, &mut frame_content)?;
        frame_content.extend_from_slice(&content);
        std::mem::swap(&mut content, &mut frame_content);
        if enough(&content) {
            break;
        }
    }
    Ok(content)
}

/// A reader of a run of frames, decompressing as it is read, one frame at a time.
pub fn reader<'a, R: Read + 'a>(compressed: R) -> io::Result<Box<dyn Read + 'a>> {
    let mut compressed = io::BufReader::new(compressed);
    // No frames (empty input) is empty content, which zstd's decoder calls a cut frame.
    if io::BufRead::fill_buf(&mut compressed)?.is_empty() {
        return Ok(Box::new(io::empty()));
    }
    Ok(Box::new(zstd::stream::read::Decoder::with_buffer(
        compressed,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text like a stream's: repetitive, but not a single repeated byte.
    fn sample(len: usize) -> Vec<u8> {
        let mut text = Vec::with_capacity(len + 100);
        let mut n = 0u64;
        while text.len() < len {
            text.extend_from_slice(
                format!(
                    "{{\"type\":\"edge\",\"src\":\"a/{}.c\",\"line\":{n}}}\n",
                    n % 977
                )
                .as_bytes(),
            );
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                >> 1;
        }
        text.truncate(len);
        text
    }

    fn compress(input: &[u8], piece: usize) -> Vec<u8> {
        let mut writer = FrameWriter::new(Vec::new());
        for part in input.chunks(piece.max(1)) {
            writer.write_all(part).unwrap();
            writer.flush().unwrap();
        }
        writer.finish().unwrap()
    }

    fn decompressed(whole: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        decompress_to(whole, &mut out).unwrap();
        let mut streamed = Vec::new();
        reader(whole).unwrap().read_to_end(&mut streamed).unwrap();
        assert_eq!(streamed, out, "streamed and parallel reads agree");
        out
    }

    /// The last frames only, as many as the caller needs: each is the end of the whole.
    #[test]
    fn the_last_frames_are_the_end_of_the_content() {
        let input = sample(3 * MAX_FRAME + 17);
        let whole = compress(&input, input.len());
        let last = decompress_last(&whole, |_| true).unwrap();
        assert!(!last.is_empty() && last.len() <= MAX_FRAME);
        assert!(input.ends_with(&last));
        let more = decompress_last(&whole, |c| c.len() > last.len()).unwrap();
        assert!(more.len() > last.len() && input.ends_with(&more));
        assert_eq!(
            decompress_last(&whole, |_| false).unwrap(),
            input,
            "all of it"
        );
        assert!(decompress_last(&compress(b"", 1), |_| false)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn round_trips_and_cuts_frames_by_content_alone() {
        for len in [
            0,
            1,
            MIN_FRAME - 1,
            MIN_FRAME + 1,
            MAX_FRAME,
            MAX_FRAME + 1,
            3 * MAX_FRAME + 17,
        ] {
            let input = sample(len);
            let whole = compress(&input, input.len());
            assert_eq!(compress(&input, 1 << 16), whole, "len {len}: split writes");
            assert_eq!(compress(&input, 1_000_003), whole, "len {len}: odd writes");
            assert_eq!(compress(&input, 97), whole, "len {len}: line-sized writes");
            let frames = split_frames(&whole).unwrap();
            let sizes: Vec<u64> = frames
                .iter()
                .map(|f| zstd::zstd_safe::get_frame_content_size(f).unwrap().unwrap())
                .collect();
            assert_eq!(sizes.iter().sum::<u64>(), len as u64);
            // Every frame but the last holds between the bounds and ends a line or the bound.
            let mut at = 0usize;
            for &size in &sizes[..sizes.len().saturating_sub(1)] {
                assert!(
                    (MIN_FRAME as u64..=MAX_FRAME as u64).contains(&size),
                    "{size}"
                );
                at += size as usize;
                assert!(input[at - 1] == b'\n' || size == MAX_FRAME as u64);
            }
            assert_eq!(decompressed(&whole), input, "len {len}");
            if len > 1000 {
                assert!(whole.len() * 4 < input.len(), "len {len}: compressed");
            }
        }
    }

    /// A small edit changes the frames around it; the others are copied from the previous
    /// version, and the bytes are those compressing afresh gives.
    #[test]
    fn a_writer_copies_the_frames_the_previous_version_holds() {
        let before = sample(6 * MAX_FRAME);
        let previous = compress(&before, 1 << 16);
        let mut after = before.clone();
        let middle = after.len() / 2;
        after.splice(
            middle..middle + 10,
            b"an edit of another length\n".iter().copied(),
        );
        let fresh = compress(&after, 1 << 16);
        let mut writer = FrameWriter::reusing(Vec::new(), &previous);
        writer.write_all(&after).unwrap();
        let (spliced, reused) = writer.finish_counting().unwrap();
        assert_eq!(spliced, fresh);
        let total = split_frames(&fresh).unwrap().len();
        assert!(total >= 6, "{total} frames");
        assert!(reused + 2 >= total, "{reused} of {total} frames copied");
        assert_eq!(decompressed(&spliced), after);
        // A previous version without an index, or not zstd at all, is only not reused.
        let no_index = &previous[..previous.len() - 8];
        for junk in [no_index, b"not zstd".as_slice(), &[]] {
            let mut writer = FrameWriter::reusing(Vec::new(), junk);
            writer.write_all(&after).unwrap();
            assert_eq!(writer.finish_counting().unwrap(), (fresh.clone(), 0));
        }
    }

    #[test]
    fn damage_is_an_error_not_wrong_bytes() {
        let input = sample(2 * MAX_FRAME + 5);
        let whole = compress(&input, input.len());
        let mut flipped = whole.clone();
        let at = whole.len() / 2;
        flipped[at] ^= 0x20;
        let mut out = Vec::new();
        let err = decompress_to(&flipped, &mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let truncated = &whole[..whole.len() - 3];
        assert!(decompress_to(truncated, &mut Vec::new()).is_err());
        assert!(decompress_to(b"plain text, not zstd", &mut Vec::new()).is_err());
        let mut streamed = Vec::new();
        assert!(reader(&flipped[..])
            .unwrap()
            .read_to_end(&mut streamed)
            .is_err());
    }
}
