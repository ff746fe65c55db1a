//! zstd behind one door: large artifacts written as a run of independent zstd frames, each of
//! [`FRAME_INPUT`] bytes of input, compressed and decompressed across the cores.
//!
//! A run of frames is an ordinary `.zst` stream (`zstd -dc` reads it). Independent frames are
//! what lets both directions use every core, and a frame's boundaries depend only on the
//! input, so the same input gives the same bytes whatever the number of threads. Each frame
//! carries its content size and a checksum of its content.

use rayon::prelude::*;
use std::io::{self, Read, Write};

/// Input bytes per frame: large enough that a frame compresses nearly as well as one whole
/// stream, small enough that a batch of them across the cores stays a few tens of MB.
pub const FRAME_INPUT: usize = 8 << 20;
/// zstd's fastest regular level: on the kernel's stream it compresses 10.5x at about 450 MB/s
/// a core; higher levels gained under 2% for a third more time.
const LEVEL: i32 = 1;

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
    // The content size is in every frame this module writes, and never over FRAME_INPUT.
    let size = zstd::zstd_safe::get_frame_content_size(frame)
        .ok()
        .flatten()
        .filter(|&size| size <= FRAME_INPUT as u64)
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

/// A writer that compresses what it is given into frames, a batch of frames at a time across
/// the cores, and writes them in order to the sink. [`FrameWriter::finish`] writes the last
/// frame and gives the sink back.
pub struct FrameWriter<W: Write> {
    sink: W,
    pending: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(sink: W) -> Self {
        FrameWriter {
            sink,
            pending: Vec::new(),
        }
    }

    /// Compresses and writes every whole frame pending (and the partial last one when
    /// `all`).
    fn drain(&mut self, all: bool) -> io::Result<()> {
        let whole = self.pending.len() / FRAME_INPUT * FRAME_INPUT;
        let end = if all { self.pending.len() } else { whole };
        if end == 0 {
            return Ok(());
        }
        let frames: Vec<io::Result<Vec<u8>>> = self.pending[..end]
            .par_chunks(FRAME_INPUT)
            .map(compress_frame)
            .collect();
        for frame in frames {
            self.sink.write_all(&frame?)?;
        }
        self.pending.drain(..end);
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.drain(true)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= batch_frames() * FRAME_INPUT {
            self.drain(false)?;
        }
        Ok(buf.len())
    }

    /// Frames are cut at fixed input offsets, so a flush writes nothing early: the bytes stay
    /// the same however the input was split into writes.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The frames of `bytes`, in order; an error when they do not split exactly into frames.
fn split_frames(mut bytes: &[u8]) -> io::Result<Vec<&[u8]>> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let len = zstd::zstd_safe::find_frame_compressed_size(bytes)
            .ok()
            .filter(|&len| len > 0 && len <= bytes.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not zstd frames"))?;
        let (frame, rest) = bytes.split_at(len);
        frames.push(frame);
        bytes = rest;
    }
    Ok(frames)
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

    #[test]
    fn round_trips_and_cuts_frames_by_input_offset_alone() {
        for len in [
            0,
            1,
            FRAME_INPUT - 1,
            FRAME_INPUT,
            FRAME_INPUT + 1,
            3 * FRAME_INPUT + 17,
        ] {
            let input = sample(len);
            let whole = compress(&input, input.len());
            assert_eq!(compress(&input, 1 << 16), whole, "len {len}: split writes");
            assert_eq!(compress(&input, 1_000_003), whole, "len {len}: odd writes");
            let frames = split_frames(&whole).unwrap();
            assert_eq!(frames.len(), len.div_ceil(FRAME_INPUT), "len {len}");
            let mut out = Vec::new();
            decompress_to(&whole, &mut out).unwrap();
            assert_eq!(out, input, "len {len}: decompressed in parallel");
            let mut streamed = Vec::new();
            reader(&whole[..])
                .unwrap()
                .read_to_end(&mut streamed)
                .unwrap();
            assert_eq!(streamed, input, "len {len}: streamed");
            if len > 1000 {
                assert!(whole.len() * 4 < input.len(), "len {len}: compressed");
            }
        }
    }

    #[test]
    fn damage_is_an_error_not_wrong_bytes() {
        let input = sample(2 * FRAME_INPUT + 5);
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
