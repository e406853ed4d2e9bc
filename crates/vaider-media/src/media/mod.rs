//! Content checks for files before Vaider sends them to a remote vision model.
//!
//! A file is identified only by its magic bytes (never its extension) and its container is walked
//! just far enough to refuse truncated or still-being-written recordings, so that secrets, text
//! files and broken videos never leave the machine. Playwright's live-recorded WebM is first-class.
//!
//! Here: what a file is (its magic bytes) and the reading they share (a bounded window on the
//! file, the element budget, the fault). Each container's walk is its own file: `matroska`,
//! `iso_bmff`, `riff` (AVI, WebP) and `images` (PNG, JPEG, GIF); `animation` tells an animated
//! GIF, APNG or WebP (a recording) from a still, and `sound` a file with no picture at all.

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

// The error and the kind it names live in vaider-base, so the one error type can carry them.
pub use vaider_base::media_error::{MediaError, MediaKind};

mod animation;
mod images;
mod iso_bmff;
mod matroska;
mod riff;
mod sound;
pub use animation::{
    shown_ms, Animation, MAX_ANIMATION_FRAMES, MAX_ANIMATION_PIXELS, MAX_DECODED_PIXELS,
};
use images::*;
use iso_bmff::*;
use matroska::*;
use riff::*;

/// What [`inspect`] found out about an accepted file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaInfo {
    pub kind: MediaKind,
    /// "video/webm", "video/x-matroska", "video/mp4", "video/quicktime", "video/avi",
    /// "image/png", "image/jpeg", "image/webp" or "image/gif".
    pub mime_type: &'static str,
    /// Human name: "WebM", "Matroska", "MP4", "QuickTime MOV", "AVI", "PNG", "JPEG", "WebP", "GIF".
    pub format: &'static str,
    pub size_bytes: u64,
    /// For a GIF, PNG or WebP of more than one frame: the animation, which the video tools
    /// watch as a recording and the image tools see by its first frame.
    pub animation: Option<Animation>,
}

impl MediaInfo {
    /// "an animated GIF (12 frames, 00:04.3)", for the notes that tell a recording apart.
    pub fn animation_text(&self) -> Option<String> {
        let a = self.animation?;
        let seconds = a.duration_ms as f64 / 1000.0;
        Some(format!(
            "an animated {} ({} frames, {seconds:.1} s)",
            self.format, a.frames
        ))
    }

    /// Whether this file is what a video tool watches: a video, or an animated image.
    pub fn is_recording(&self) -> bool {
        self.kind == MediaKind::Video || self.animation.is_some()
    }
}

/// Default upload limit (2 GB).
pub const MAX_MEDIA_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// How many bytes [`inspect`] reads from the start of a file to identify it.
pub const SNIFF_BYTES: usize = 4096;

type Sniffed = (MediaKind, &'static str, &'static str);

const WEBM: Sniffed = (MediaKind::Video, "video/webm", "WebM");
const MATROSKA: Sniffed = (MediaKind::Video, "video/x-matroska", "Matroska");
const MP4: Sniffed = (MediaKind::Video, "video/mp4", "MP4");
const MOV: Sniffed = (MediaKind::Video, "video/quicktime", "QuickTime MOV");
const AVI: Sniffed = (MediaKind::Video, "video/avi", "AVI");
const PNG: Sniffed = (MediaKind::Image, "image/png", "PNG");
const JPEG: Sniffed = (MediaKind::Image, "image/jpeg", "JPEG");
const WEBP: Sniffed = (MediaKind::Image, "image/webp", "WebP");
const GIF: Sniffed = (MediaKind::Image, "image/gif", "GIF");

const EBML_MAGIC: &[u8] = &[0x1A, 0x45, 0xDF, 0xA3];
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Checks that `path` is an existing, readable regular file of at most `max_bytes`, and a video or
/// image by its content, not truncated. Blocking: reads only headers and seeks (never the whole file).
/// `expected`: Some(kind) to require video or image; None accepts either.
pub fn inspect(
    path: &Path,
    max_bytes: u64,
    expected: Option<MediaKind>,
) -> Result<MediaInfo, MediaError> {
    let size = size_within(path, max_bytes)?;
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    // All checks use the size seen above, so a file that is still growing is judged as of that
    // moment, and one that shrinks shows up as truncated.
    let mut src = Source::new(file, size);
    let unreadable = |e: io::Error| MediaError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let prefix = read_prefix(&mut src).map_err(unreadable)?;
    let Some((kind, mime_type, format)) = sniff(&prefix) else {
        if let Some(what) = sound::audio_file(&prefix) {
            return Err(MediaError::NoPicture {
                path: path.to_path_buf(),
                what,
            });
        }
        return Err(not_media(path, &prefix, size));
    };
    let wrong_kind = || MediaError::WrongKind {
        path: path.to_path_buf(),
        expected: expected.unwrap_or(kind),
        found: format,
    };
    // A still image is never a recording, so it is turned away before any walk; an image
    // may be an animation, which a video tool takes.
    if expected == Some(MediaKind::Image) && kind == MediaKind::Video {
        if sound::has_picture(&mut src, format) == Some(false) {
            return Err(no_picture(path, format));
        }
        return Err(wrong_kind());
    }
    if expected == Some(MediaKind::Video)
        && !matches!(format, "GIF" | "PNG" | "WebP")
        && kind == MediaKind::Image
    {
        return Err(wrong_kind());
    }
    match check_container(&mut src, format) {
        // Running out of work budget means everything seen so far was sound; the rest of an
        // enormous file is not walked so that a check stays cheap.
        Ok(()) | Err(Fault::GaveUp) => {}
        Err(Fault::Io(e)) => return Err(unreadable(e)),
        Err(Fault::Bad(detail)) => {
            return Err(MediaError::Truncated {
                path: path.to_path_buf(),
                format,
                detail,
            })
        }
    }
    if kind == MediaKind::Video && sound::has_picture(&mut src, format) == Some(false) {
        return Err(no_picture(path, format));
    }
    let animation = animation::animation_of(&mut src, format);
    if expected == Some(MediaKind::Video) && kind == MediaKind::Image && animation.is_none() {
        return Err(wrong_kind());
    }
    Ok(MediaInfo {
        kind,
        mime_type,
        format,
        size_bytes: size,
        animation,
    })
}

/// A video container whose tracks are all sound.
fn no_picture(path: &Path, format: &'static str) -> MediaError {
    let what = match format {
        "WebM" => "a WebM file with sound only",
        "Matroska" => "a Matroska file with sound only",
        "MP4" => "an MP4 file with sound only",
        "QuickTime MOV" => "a QuickTime MOV file with sound only",
        _ => "an AVI file with sound only",
    };
    MediaError::NoPicture {
        path: path.to_path_buf(),
        what,
    }
}

/// The size of `path`, once it is known to be a regular file that is neither empty nor over
/// `max_bytes`.
fn size_within(path: &Path, max_bytes: u64) -> Result<u64, MediaError> {
    let meta = stat(path)?;
    if !meta.is_file() {
        return Err(MediaError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let size = meta.len();
    if size == 0 {
        return Err(MediaError::Empty {
            path: path.to_path_buf(),
        });
    }
    if size > max_bytes {
        return Err(MediaError::TooLarge {
            path: path.to_path_buf(),
            size_bytes: size,
            limit_bytes: max_bytes,
        });
    }
    Ok(size)
}

/// The first bytes of the file, enough to identify it.
fn read_prefix(src: &mut Source) -> io::Result<Vec<u8>> {
    let mut prefix = src.read_at(0, SNIFF_BYTES)?.to_vec();
    // The EBML header holding the DocType is normally ~40 bytes, but a muxer may pad it; read all of
    // it (bounded) so that sniffing sees the DocType.
    if let Some(n) = ebml_header_end(&prefix) {
        if n > prefix.len() as u64 && n <= MAX_EBML_HEADER {
            prefix = src.read_at(0, n as usize)?.to_vec();
        }
    }
    Ok(prefix)
}

/// The refusal of a file no format was recognised in: a supported format cut inside its
/// header, or not media at all (with a guess at what it is, never its content).
fn not_media(path: &Path, prefix: &[u8], size: u64) -> MediaError {
    let whole_file = prefix.len() as u64 >= size;
    match partial_magic(prefix) {
        Some(format) if whole_file => MediaError::Truncated {
            path: path.to_path_buf(),
            format,
            detail: "the file ends inside its header".to_string(),
        },
        _ => MediaError::NotMedia {
            path: path.to_path_buf(),
            looks_like: looks_like(prefix),
        },
    }
}

/// Walks the container `format` names, just far enough to refuse a truncated file.
fn check_container(src: &mut Source, format: &str) -> Result<(), Fault> {
    match format {
        "WebM" | "Matroska" => check_matroska(src),
        "MP4" | "QuickTime MOV" => check_iso_bmff(src),
        "AVI" => check_riff(src, true),
        "WebP" => check_riff(src, false),
        "PNG" => check_png(src),
        "JPEG" => check_jpeg(src),
        _ => check_gif(src),
    }
}

/// Sniff a byte prefix only (for in-memory data such as `data:` URLs later); None when not a
/// supported format. Returns (kind, MIME type, human format name).
pub fn sniff(prefix: &[u8]) -> Option<(MediaKind, &'static str, &'static str)> {
    if prefix.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(JPEG);
    }
    if prefix.starts_with(PNG_SIGNATURE) {
        return Some(PNG);
    }
    if prefix.starts_with(b"GIF87a") || prefix.starts_with(b"GIF89a") {
        return Some(GIF);
    }
    if prefix.len() >= 12 && prefix.starts_with(b"RIFF") {
        return match &prefix[8..12] {
            b"AVI " => Some(AVI),
            b"WEBP" => Some(WEBP),
            _ => None,
        };
    }
    if prefix.starts_with(EBML_MAGIC) {
        return match ebml_doctype(prefix) {
            DocType::Found(b"webm") => Some(WEBM),
            DocType::Found(b"matroska") => Some(MATROSKA),
            _ => None,
        };
    }
    sniff_iso_bmff(prefix)
}

fn sniff_iso_bmff(prefix: &[u8]) -> Option<Sniffed> {
    if prefix.len() < 8 {
        return None;
    }
    let size = be_u32(&prefix[0..4]);
    match &prefix[4..8] {
        b"ftyp" => {
            let brand: &[u8] = prefix.get(8..12)?;
            if non_video_brand(brand).is_some() {
                None
            } else if brand == b"qt  " {
                Some(MOV)
            } else {
                Some(MP4)
            }
        }
        // Older QuickTime files have no ftyp. These box names are ordinary words, so a text file
        // could match by chance: require a sane box size and binary content.
        b"moov" | b"wide" | b"mdat" | b"free" | b"skip"
            if (size == 0 || size == 1 || size >= 8) && !looks_like_text(prefix) =>
        {
            Some(MOV)
        }
        _ => None,
    }
}

/// ISO BMFF brands that are not videos Vaider can send, with what to call them.
fn non_video_brand(brand: &[u8]) -> Option<&'static str> {
    match brand {
        b"heic" | b"heix" | b"hevc" | b"hevx" | b"heim" | b"heis" | b"hevm" | b"hevs" | b"mif1"
        | b"msf1" | b"avif" | b"avis" => {
            Some("a HEIC/AVIF image, which is not supported; convert it to PNG or JPEG")
        }
        b"M4A " | b"M4B " | b"M4P " | b"F4A " | b"F4B " => Some("an audio-only MP4 (M4A)"),
        _ => None,
    }
}

/// For a file too short to be identified: the format its first bytes start, if any.
fn partial_magic(prefix: &[u8]) -> Option<&'static str> {
    if prefix.starts_with(EBML_MAGIC) {
        return matches!(ebml_doctype(prefix), DocType::Incomplete).then_some("Matroska/WebM");
    }
    if prefix.starts_with(b"\x89PNG") && prefix.len() < PNG_SIGNATURE.len() {
        return Some("PNG");
    }
    if prefix.starts_with(b"GIF8") && prefix.len() < 6 {
        return Some("GIF");
    }
    if prefix.starts_with(b"RIFF") && prefix.len() < 12 {
        return Some("AVI/WebP");
    }
    if prefix.len() >= 8 && &prefix[4..8] == b"ftyp" && prefix.len() < 12 {
        return Some("MP4");
    }
    None
}

/// Best-effort description of a file that is not supported media. Only fixed strings: the file may
/// be a secret and its content must never end up in a message.
fn looks_like(prefix: &[u8]) -> Option<&'static str> {
    let has = |needle: &[u8]| prefix.windows(needle.len()).any(|w| w == needle);
    if (has(b"-----BEGIN") && has(b"PRIVATE KEY"))
        || has(b"openssh-key")
        || prefix.starts_with(b"PuTTY-User-Key-File")
    {
        return Some("a private key");
    }
    if prefix.starts_with(b"%PDF") {
        return Some("PDF");
    }
    if prefix.starts_with(b"PK\x03\x04") || prefix.starts_with(b"PK\x05\x06") {
        return Some("ZIP archive");
    }
    if prefix.starts_with(b"\x7FELF") {
        return Some("ELF executable");
    }
    if prefix.starts_with(b"\x1F\x8B") {
        return Some("gzip archive");
    }
    if prefix.starts_with(b"SQLite format 3\0") {
        return Some("SQLite database");
    }
    if prefix.starts_with(b"RIFF") {
        return Some(if prefix.get(8..12) == Some(b"WAVE") {
            "WAV audio"
        } else {
            "a RIFF file of an unsupported type"
        });
    }
    if prefix.starts_with(EBML_MAGIC) {
        return Some("a Matroska/EBML file of an unsupported type");
    }
    if prefix.len() >= 12 && &prefix[4..8] == b"ftyp" {
        return non_video_brand(&prefix[8..12]);
    }
    if prefix.starts_with(b"OggS") {
        return Some("Ogg media, which is not supported");
    }
    if looks_like_text(prefix) {
        return Some("text");
    }
    // Checked after text because these two-byte signatures are plausible starts of a text file.
    if prefix.starts_with(b"MZ") {
        return Some("Windows executable");
    }
    if prefix.starts_with(b"II*\0") || prefix.starts_with(b"MM\0*") {
        return Some("a TIFF image, which is not supported; convert it to PNG");
    }
    if prefix.starts_with(b"BM") {
        return Some("a BMP image, which is not supported; convert it to PNG");
    }
    None
}

/// Mostly printable UTF-8 (at most 5% control characters other than whitespace, and no NUL).
fn looks_like_text(prefix: &[u8]) -> bool {
    let text = match std::str::from_utf8(prefix) {
        Ok(s) => s,
        // The prefix may cut a multi-byte character in half; that is still text.
        Err(e) if e.error_len().is_none() => {
            match std::str::from_utf8(&prefix[..e.valid_up_to()]) {
                Ok(s) => s,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    if text.is_empty() || text.contains('\0') {
        return false;
    }
    let total = text.chars().count();
    let control = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0C'))
        .count();
    control * 20 <= total
}

fn stat(path: &Path) -> Result<Metadata, MediaError> {
    // symlink_metadata tells "nothing at this path" apart from other errors; metadata then follows
    // symlinks, so a dangling symlink is also reported as NotFound rather than as an odd I/O error.
    fs::symlink_metadata(path).map_err(|e| io_error(path, e))?;
    fs::metadata(path).map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, e: io::Error) -> MediaError {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => MediaError::NotFound {
            path: path.to_path_buf(),
        },
        _ => MediaError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        },
    }
}

/// Why a structure check failed.
enum Fault {
    Io(io::Error),
    /// Truncated or malformed; the text says where.
    Bad(String),
    /// The work budget ran out before anything wrong was found.
    GaveUp,
}

impl From<io::Error> for Fault {
    fn from(e: io::Error) -> Self {
        Fault::Io(e)
    }
}

fn bad<T>(detail: impl Into<String>) -> Result<T, Fault> {
    Err(Fault::Bad(detail.into()))
}

/// Upper bound on elements/boxes/chunks visited per file, so a check stays cheap even for a 2 GB
/// recording made of tiny blocks.
const MAX_ELEMENTS: u32 = 1_000_000;

struct Budget(u32);

impl Budget {
    fn spend(&mut self) -> Result<(), Fault> {
        self.0 = self.0.checked_sub(1).ok_or(Fault::GaveUp)?;
        Ok(())
    }
}

/// Random-access reads through a small cached window, so walking many small headers that sit close
/// together costs one read, while large payloads are skipped by seeking.
struct Source {
    file: File,
    len: u64,
    window: Vec<u8>,
    window_start: u64,
}

const WINDOW: usize = 16 * 1024;

impl Source {
    fn new(file: File, len: u64) -> Self {
        Source {
            file,
            len,
            window: Vec::new(),
            window_start: 0,
        }
    }

    /// Up to `n` bytes at `offset`; fewer only at the end of the file.
    fn read_at(&mut self, offset: u64, n: usize) -> io::Result<&[u8]> {
        let end = offset.saturating_add(n as u64).min(self.len);
        if offset >= end {
            return Ok(&[]);
        }
        let want = (end - offset) as usize;
        let window_end = self.window_start + self.window.len() as u64;
        if offset < self.window_start || end > window_end {
            let fill = (self.len - offset).min(WINDOW.max(want) as u64) as usize;
            self.window.clear();
            self.window.resize(fill, 0);
            self.file.seek(SeekFrom::Start(offset))?;
            let got = read_full(&mut self.file, &mut self.window)?;
            self.window.truncate(got);
            self.window_start = offset;
        }
        let start = (offset - self.window_start) as usize;
        let stop = (start + want).min(self.window.len());
        Ok(&self.window[start.min(stop)..stop])
    }

    /// Copies up to N bytes at `offset` into an array; returns it and how many bytes are valid.
    fn small<const N: usize>(&mut self, offset: u64) -> io::Result<([u8; N], usize)> {
        let mut out = [0u8; N];
        let got = self.read_at(offset, N)?;
        let n = got.len();
        out[..n].copy_from_slice(got);
        Ok((out, n))
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[cfg(test)]
mod tests;
