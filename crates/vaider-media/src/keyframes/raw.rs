//! Raw video read directly, without ffmpeg: uncompressed 4:2:0 frames in AVI (`I420`, as
//! ffmpeg's `rawvideo` writes them) or in a Y4M file. Such a file is as large as its frames
//! (800 MB for 20 s of 720p), and ffmpeg would read every byte of it to keep one frame in
//! seven at 4 samples a second. Here only the sampled frames are read (at their offsets),
//! shrunk to the detector's size on a thread of their own while the frames before are
//! measured, so the scan reads a seventh of the file and starts no process.
//!
//! The samples are those ffmpeg's `fps=...:round=up` filter makes: sample `n` shows the last
//! frame at or before `n / fps` seconds, and there are `ceil(length * fps)` of them. Anything
//! unusual (another pixel format, a dropped frame's empty chunk, a stream that does not start
//! at 0, a frame marker with parameters) leaves the file to ffmpeg.

use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

use super::change::PlaneProber;
use super::y4m::{Sample, FRAMES_AHEAD};
use super::{FrameReader, Geometry, InputFacts};
use vaider_base::error::VaiderError;

/// A raw video whose frames can be read by offset.
pub(super) struct RawVideo {
    file: File,
    /// The video's own frame size.
    geometry: Geometry,
    /// Where each frame's bytes start.
    frames: Vec<u64>,
    /// Seconds a frame lasts, as a fraction (AVI's `dwScale / dwRate`, Y4M's `F` inverted).
    frame_seconds: (u64, u64),
    has_audio: bool,
}

impl RawVideo {
    /// The video, when it is raw 4:2:0 in AVI or Y4M and laid out as expected; None leaves it
    /// to ffmpeg.
    pub fn open(path: &Path) -> Option<RawVideo> {
        let file = File::open(path).ok()?;
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, 0).ok()?;
        let raw = if head.starts_with(b"RIFF") && &head[8..12] == b"AVI " {
            avi(file)?
        } else if head.starts_with(b"YUV4MPEG2 ") {
            y4m(file)?
        } else {
            return None;
        };
        (!raw.frames.is_empty()).then_some(raw)
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// What ffmpeg would have said of the input: its length, sound and size.
    pub fn facts(&self) -> InputFacts {
        let (num, den) = self.frame_seconds;
        InputFacts {
            duration: Some(self.frames.len() as f64 * num as f64 / den as f64),
            has_audio: self.has_audio,
            size: Some((self.geometry.width as u32, self.geometry.height as u32)),
        }
    }

    /// The frame shown by each of the samples taken `fps` times a second.
    fn sampled(&self, fps: f64) -> Vec<usize> {
        let (num, den) = (self.frame_seconds.0 as f64, self.frame_seconds.1 as f64);
        let total = self.frames.len();
        // The tiny margins keep exact ratios exact (600 frames at 30 fps are 80 samples).
        let samples = (total as f64 * num * fps / den - 1e-9).ceil().max(1.0) as usize;
        (0..samples)
            .map(|n| ((n as f64 * den / (num * fps) + 1e-9).floor() as usize).min(total - 1))
            .collect()
    }

    /// Reads the sampled frames, shrunk to `out`, on a blocking thread: the frames come as
    /// they would from ffmpeg's pipe.
    pub fn start(self, fps: f64, out: Geometry) -> FrameReader {
        let (sender, frames) = tokio::sync::mpsc::channel(FRAMES_AHEAD);
        let (spare, mut spares) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::task::spawn_blocking(move || {
            let mut frame = vec![0u8; self.geometry.frame_len()];
            let shrink = Shrinker::new(self.geometry, out);
            for index in self.sampled(fps) {
                let read = self
                    .file
                    .read_exact_at(&mut frame, self.frames[index])
                    .map_err(|e| VaiderError::internal("read the raw video's frames", e));
                let shrunk = read.map(|_| {
                    let mut shrunk = spares
                        .try_recv()
                        .unwrap_or_else(|_| vec![0; out.frame_len()]);
                    shrink.frame(&frame, &mut shrunk);
                    Sample::sampled(shrunk)
                });
                let failed = shrunk.is_err();
                // The receiver is gone when reading stopped early: stop too.
                if sender.blocking_send(shrunk).is_err() || failed {
                    return;
                }
            }
        });
        FrameReader {
            frames,
            spare,
            task,
        }
    }
}

/// An AVI's first video stream, when it is `I420` with one full frame in every chunk.
fn avi(file: File) -> Option<RawVideo> {
    let riff_end = u64::from(u32_at(&file, 4)?) + 8;
    let mut walk = Chunks::new(&file, 12, riff_end.min(file.metadata().ok()?.len()));
    let mut video: Option<(Geometry, (u64, u64))> = None;
    let mut has_audio = false;
    let mut frames = Vec::new();
    while let Some(chunk) = walk.next() {
        match &chunk.id {
            b"LIST" if chunk.list_type(&file)? == *b"hdrl" => {
                let streams = Chunks::new(&file, chunk.body.start + 4, chunk.body.end);
                for list in streams.filter(|c| &c.id == b"LIST") {
                    match stream_header(&file, &list)? {
                        Stream::Video(geometry, rate) if video.is_none() => {
                            video = Some((geometry, rate))
                        }
                        Stream::Audio => has_audio = true,
                        _ => {}
                    }
                }
            }
            b"LIST" if chunk.list_type(&file)? == *b"movi" => {
                let (geometry, _) = video?;
                movi(&file, &chunk, geometry.frame_len() as u64, &mut frames)?;
            }
            _ => {}
        }
        // OpenDML files (over 1 GiB) go on in `RIFF AVIX` chunks, each with its own `movi`.
        if walk.at >= walk.end {
            let next = walk.end + (walk.end & 1);
            if u32_at(&file, next).map(u32::to_le_bytes) == Some(*b"RIFF") {
                let len = u64::from(u32_at(&file, next + 4)?);
                walk = Chunks::new(&file, next + 12, next + 8 + len);
            }
        }
    }
    let (geometry, frame_seconds) = video?;
    Some(RawVideo {
        file,
        geometry,
        frames,
        frame_seconds,
        has_audio,
    })
}

/// What one `strl` list describes.
enum Stream {
    Video(Geometry, (u64, u64)),
    Audio,
    Other,
}

/// Reads a `strl`: its `strh` (kind, rate, start) and, for video, its `strf` (size, format).
fn stream_header(file: &File, list: &Chunk) -> Option<Stream> {
    if list.list_type(file)? != *b"strl" {
        return Some(Stream::Other);
    }
    let mut parts = Chunks::new(file, list.body.start + 4, list.body.end);
    let strh = parts.next().filter(|c| &c.id == b"strh")?;
    let mut h = [0u8; 36];
    file.read_exact_at(&mut h, strh.body.start).ok()?;
    match &h[0..4] {
        b"auds" => return Some(Stream::Audio),
        b"vids" => {}
        _ => return Some(Stream::Other),
    }
    let word = |at: usize| u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let (scale, rate, start) = (word(20), word(24), word(28));
    let strf = parts.next().filter(|c| &c.id == b"strf")?;
    let mut f = [0u8; 20];
    file.read_exact_at(&mut f, strf.body.start).ok()?;
    let width = i32::from_le_bytes([f[4], f[5], f[6], f[7]]);
    let height = i32::from_le_bytes([f[8], f[9], f[10], f[11]]);
    let bits = u16::from_le_bytes([f[14], f[15]]);
    // Only I420 (Y, then U, then V, top row first) at 12 bits a pixel is what the scan reads.
    if &f[16..20] != b"I420" || bits != 12 || start != 0 || scale == 0 || rate == 0 {
        return None;
    }
    let geometry = Geometry {
        width: usize::try_from(width).ok().filter(|&w| w > 0)?,
        height: usize::try_from(height.checked_abs()?)
            .ok()
            .filter(|&h| h > 0)?,
    };
    Some(Stream::Video(geometry, (u64::from(scale), u64::from(rate))))
}

/// Adds the offset of each frame of stream 0 in a `movi` list; None when a chunk is not a
/// whole frame (a dropped frame's empty chunk, say).
fn movi(file: &File, list: &Chunk, frame_len: u64, frames: &mut Vec<u64>) -> Option<()> {
    for chunk in Chunks::new(file, list.body.start + 4, list.body.end) {
        match &chunk.id {
            b"00dc" | b"00db" if chunk.body.end - chunk.body.start == frame_len => {
                frames.push(chunk.body.start)
            }
            b"00dc" | b"00db" => return None,
            // `rec ` lists group a frame with its sound.
            b"LIST" => movi(file, &chunk, frame_len, frames)?,
            _ => {}
        }
    }
    Some(())
}

/// A Y4M file of 4:2:0 8-bit frames, each after a bare `FRAME` line.
fn y4m(mut file: File) -> Option<RawVideo> {
    let mut head = Vec::with_capacity(128);
    (&mut file).take(1024).read_to_end(&mut head).ok()?;
    let line_end = head.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&head[..line_end]).ok()?;
    let geometry = Geometry::from_header(header.as_bytes()).ok()?;
    let mut frame_seconds = None;
    for word in header.split_ascii_whitespace().skip(1) {
        match word.split_at(1) {
            ("F", rate) => {
                let (num, den) = rate.split_once(':')?;
                let (num, den): (u64, u64) = (num.parse().ok()?, den.parse().ok()?);
                frame_seconds = Some((den, num)).filter(|&(d, n)| d > 0 && n > 0);
            }
            // 4:2:0 at 8 bits (C420, C420jpeg, C420paldv, C420mpeg2); not C420p10.
            ("C", c) if c.starts_with("420p") && c != "420paldv" => return None,
            _ => {}
        }
    }
    let first = line_end as u64 + 1;
    let stride = b"FRAME\n".len() as u64 + geometry.frame_len() as u64;
    let size = file.metadata().ok()?.len().checked_sub(first)?;
    if size % stride != 0 {
        return None;
    }
    let frames: Vec<u64> = (0..size / stride).map(|i| first + i * stride + 6).collect();
    // Every frame's marker is checked where it is read from.
    let mut marker = [0u8; 6];
    for &at in &frames {
        file.read_exact_at(&mut marker, at - 6).ok()?;
        if &marker != b"FRAME\n" {
            return None;
        }
    }
    Some(RawVideo {
        file,
        geometry,
        frames,
        frame_seconds: frame_seconds?,
        has_audio: false,
    })
}

fn u32_at(file: &File, at: u64) -> Option<u32> {
    let mut word = [0u8; 4];
    file.read_exact_at(&mut word, at).ok()?;
    Some(u32::from_le_bytes(word))
}

/// A RIFF chunk: its four-letter id and where its body lies.
struct Chunk {
    id: [u8; 4],
    body: Range<u64>,
}

impl Chunk {
    fn list_type(&self, file: &File) -> Option<[u8; 4]> {
        u32_at(file, self.body.start).map(u32::to_le_bytes)
    }
}

/// The chunks one after another between two offsets (each padded to an even length).
struct Chunks<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl<'a> Chunks<'a> {
    fn new(file: &'a File, at: u64, end: u64) -> Chunks<'a> {
        Chunks { file, at, end }
    }
}

impl Iterator for Chunks<'_> {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        if self.at + 8 > self.end {
            self.at = self.end;
            return None;
        }
        let mut head = [0u8; 8];
        self.file.read_exact_at(&mut head, self.at).ok()?;
        let len = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
        let body = self.at + 8..(self.at + 8 + len).min(self.end);
        self.at = self.at + 8 + len + (len & 1);
        Some(Chunk {
            id: [head[0], head[1], head[2], head[3]],
            body,
        })
    }
}

/// Shrinks 4:2:0 frames by averaging boxes of pixels, as ffmpeg's `area` scaler does.
pub(super) struct Shrinker {
    planes: [PlaneProber; 3],
}

impl Shrinker {
    pub(super) fn new(from: Geometry, to: Geometry) -> Shrinker {
        // The same box averaging as the change detector's probes (`change::PlaneProber`).
        let luma = PlaneProber::new(from.width, from.height, to.width, to.height);
        let chroma = || {
            PlaneProber::new(
                from.chroma_width(),
                from.chroma_height(),
                to.chroma_width(),
                to.chroma_height(),
            )
        };
        Shrinker {
            planes: [luma, chroma(), chroma()],
        }
    }

    pub(super) fn frame(&self, frame: &[u8], out: &mut [u8]) {
        let (mut input, mut output) = (frame, out);
        for plane in &self.planes {
            let (inside, rest) =
                input.split_at(plane.width * plane.rows.iter().map(|r| r.len()).sum::<usize>());
            let (outside, rest_out) =
                std::mem::take(&mut output).split_at_mut(plane.columns.len() * plane.rows.len());
            plane.probe(inside, outside);
            (input, output) = (rest, rest_out);
        }
    }
}

/// Reads at an offset without moving a shared cursor where the system allows (unix), and by
/// seeking elsewhere: the scan runs on any platform Vaider builds on.
trait ReadAt {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for File {
    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    #[cfg(not(unix))]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut file = self;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}
