//! Content checks for files before Vaider sends them to a remote vision model.
//!
//! A file is identified only by its magic bytes (never its extension) and its container is walked
//! just far enough to refuse truncated or still-being-written recordings, so that secrets, text
//! files and broken videos never leave the machine. Playwright's live-recorded WebM is first-class.
//!
//! Here: what a file is (its magic bytes) and the reading they share (a bounded window on the
//! file, the element budget, the fault). Each container's walk is its own file: `matroska`,
//! `iso_bmff`, `riff` (AVI, WebP) and `images` (PNG, JPEG, GIF).

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

// The error and the kind it names live in vaider-base, so the one error type can carry them.
pub use vaider_base::media_error::{MediaError, MediaKind};

mod images;
mod iso_bmff;
mod matroska;
mod riff;
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

    let file = File::open(path).map_err(|e| io_error(path, e))?;
    // All checks use the size seen above, so a file that is still growing is judged as of that
    // moment, and one that shrinks shows up as truncated.
    let mut src = Source::new(file, size);
    let unreadable = |e: io::Error| MediaError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut prefix = src.read_at(0, SNIFF_BYTES).map_err(unreadable)?.to_vec();
    // The EBML header holding the DocType is normally ~40 bytes, but a muxer may pad it; read all of
    // it (bounded) so that sniffing sees the DocType.
    if let Some(n) = ebml_header_end(&prefix) {
        if n > prefix.len() as u64 && n <= MAX_EBML_HEADER {
            prefix = src.read_at(0, n as usize).map_err(unreadable)?.to_vec();
        }
    }

    let Some((kind, mime_type, format)) = sniff(&prefix) else {
        let whole_file = prefix.len() as u64 >= size;
        return Err(match partial_magic(&prefix) {
            Some(format) if whole_file => MediaError::Truncated {
                path: path.to_path_buf(),
                format,
                detail: "the file ends inside its header".to_string(),
            },
            _ => MediaError::NotMedia {
                path: path.to_path_buf(),
                looks_like: looks_like(&prefix),
            },
        });
    };
    if let Some(expected) = expected {
        if expected != kind {
            return Err(MediaError::WrongKind {
                path: path.to_path_buf(),
                expected,
                found: format,
            });
        }
    }

    let checked = match format {
        "WebM" | "Matroska" => check_matroska(&mut src),
        "MP4" | "QuickTime MOV" => check_iso_bmff(&mut src),
        "AVI" => check_riff(&mut src, true),
        "WebP" => check_riff(&mut src, false),
        "PNG" => check_png(&mut src),
        "JPEG" => check_jpeg(&mut src),
        _ => check_gif(&mut src),
    };
    match checked {
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

    Ok(MediaInfo {
        kind,
        mime_type,
        format,
        size_bytes: size,
    })
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
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    fn media_dir() -> PathBuf {
        match std::env::var("VAIDER_MEDIA_DIR") {
            Ok(dir) => PathBuf::from(dir),
            Err(_) => PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/media"
            )),
        }
    }

    fn sample(name: &str) -> Vec<u8> {
        let path = media_dir().join(name);
        fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    fn check(path: &Path) -> Result<MediaInfo, MediaError> {
        inspect(path, MAX_MEDIA_BYTES, None)
    }

    #[track_caller]
    fn assert_truncated(dir: &Path, name: &str, bytes: &[u8]) {
        let path = write(dir, name, bytes);
        match check(&path) {
            Err(e @ MediaError::Truncated { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(&*path.to_string_lossy()), "{msg}");
                assert!(msg.contains("wait for the test to finish"), "{msg}");
            }
            other => panic!(
                "{name} ({} bytes): expected Truncated, got {other:?}",
                bytes.len()
            ),
        }
    }

    #[track_caller]
    fn assert_accepted(path: &Path, kind: MediaKind, mime: &str, format: &str) {
        let info = check(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            (info.kind, info.mime_type, info.format),
            (kind, mime, format)
        );
        assert_eq!(info.size_bytes, fs::metadata(path).unwrap().len());
        assert_eq!(inspect(path, MAX_MEDIA_BYTES, Some(kind)).unwrap(), info);
    }

    fn cut(bytes: &[u8], percent: usize) -> &[u8] {
        &bytes[..bytes.len() * percent / 100]
    }

    /// (start, header_len, end) of the Segment's top-level children; unknown sizes not handled.
    fn webm_children(d: &[u8]) -> (usize, Vec<(u32, usize, usize, usize)>) {
        let el = |pos: usize| -> (u32, usize, usize, usize) {
            let Vint::Value { len: il, raw, .. } = read_vint(&d[pos..], 4) else {
                panic!()
            };
            let Vint::Value { len: sl, value, .. } = read_vint(&d[pos + il..], 8) else {
                panic!()
            };
            (raw as u32, pos, il + sl, pos + il + sl + value as usize)
        };
        let (_, _, _, header_end) = el(0);
        let (id, seg, seg_hl, _) = el(header_end);
        assert_eq!(id, ID_SEGMENT);
        let mut pos = seg + seg_hl;
        let mut children = Vec::new();
        while pos < d.len() {
            let c = el(pos);
            children.push(c);
            pos = c.3;
        }
        (seg, children)
    }

    /// Rewrites a VINT size in place as "unknown" (all ones, same length), as live recorders write.
    fn make_unknown(d: &mut [u8], size_pos: usize) {
        let Vint::Value { len, .. } = read_vint(&d[size_pos..], 8) else {
            panic!()
        };
        d[size_pos] = (0xFFu16 >> (len - 1)) as u8;
        for b in &mut d[size_pos + 1..size_pos + len] {
            *b = 0xFF;
        }
    }

    fn clusters(d: &[u8]) -> Vec<(usize, usize, usize)> {
        webm_children(d)
            .1
            .into_iter()
            .filter(|c| c.0 == ID_CLUSTER)
            .map(|(_, s, hl, e)| (s, hl, e))
            .collect()
    }

    /// The Playwright sample with Segment and Cluster sizes rewritten as unknown (live recording).
    fn live_webm() -> Vec<u8> {
        let mut d = sample("login-flow.webm");
        let (seg, _) = webm_children(&d);
        for (start, _, _) in clusters(&d) {
            make_unknown(&mut d, start + 4);
        }
        make_unknown(&mut d, seg + 4);
        d
    }

    fn boxes(d: &[u8]) -> Vec<([u8; 4], usize, usize)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < d.len() {
            let size = be_u32(&d[pos..]) as usize;
            let t = [d[pos + 4], d[pos + 5], d[pos + 6], d[pos + 7]];
            out.push((t, pos, pos + size));
            pos += size;
        }
        out
    }

    #[test]
    fn real_samples_are_accepted() {
        let dir = media_dir();
        let v = MediaKind::Video;
        let i = MediaKind::Image;
        assert_accepted(&dir.join("login-flow.webm"), v, "video/webm", "WebM");
        assert_accepted(&dir.join("login-flow.mp4"), v, "video/mp4", "MP4");
        for png in ["login.png", "login-error.png", "dashboard.png"] {
            assert_accepted(&dir.join(png), i, "image/png", "PNG");
        }
    }

    #[test]
    fn content_not_extension_decides() {
        let tmp = tempfile::tempdir().unwrap();
        let png_as_webm = write(tmp.path(), "video.webm", &sample("login.png"));
        assert_accepted(&png_as_webm, MediaKind::Image, "image/png", "PNG");
        let webm_as_txt = write(tmp.path(), "notes.txt", &sample("login-flow.webm"));
        assert_accepted(&webm_as_txt, MediaKind::Video, "video/webm", "WebM");
    }

    #[test]
    fn truncated_webm_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = sample("login-flow.webm");
        let cl = clusters(&d);
        assert!(!cl.is_empty());
        let (start, _, end) = cl[0];
        assert_truncated(tmp.path(), "60.webm", cut(&d, 60));
        assert_truncated(tmp.path(), "1k.webm", &d[..1024]);
        assert_truncated(tmp.path(), "mid.webm", &d[..(start + end) / 2]);
        assert_truncated(tmp.path(), "hdr.webm", &d[..20]);
        assert_truncated(tmp.path(), "pre-cluster.webm", &d[..start]);
        assert_truncated(tmp.path(), "last-byte.webm", &d[..d.len() - 1]);
    }

    #[test]
    fn live_webm_with_unknown_sizes() {
        let tmp = tempfile::tempdir().unwrap();
        let d = live_webm();
        let live = write(tmp.path(), "live.webm", &d);
        assert_accepted(&live, MediaKind::Video, "video/webm", "WebM");

        let cl = clusters(&sample("login-flow.webm"));
        let (first, hl, end) = cl[0];
        assert_truncated(tmp.path(), "60.webm", cut(&d, 60));
        assert_truncated(tmp.path(), "1k.webm", &d[..1024]);
        assert_truncated(tmp.path(), "mid.webm", &d[..(first + end) / 2]);
        // Only the Segment's header elements, no Cluster yet.
        assert_truncated(tmp.path(), "no-cluster.webm", &d[..first]);
        // A Cluster header with no blocks yet ends exactly on an element boundary; that is a valid
        // (if empty) recording so far, like one cut exactly between two blocks.
        let path = write(tmp.path(), "open.webm", &d[..first + hl]);
        assert!(check(&path).is_ok());
        // Cut exactly between clusters: a playable prefix of a live recording.
        let path = write(tmp.path(), "between.webm", &d[..end]);
        assert_accepted(&path, MediaKind::Video, "video/webm", "WebM");
    }

    #[test]
    fn truncated_mp4_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = sample("login-flow.mp4");
        let (_, start, end) = boxes(&d)
            .into_iter()
            .find(|b| &b.0 == b"mdat")
            .expect("mdat box");
        assert_truncated(tmp.path(), "60.mp4", cut(&d, 60));
        assert_truncated(tmp.path(), "1k.mp4", &d[..1024]);
        assert_truncated(tmp.path(), "mid.mp4", &d[..(start + end) / 2]);
        assert_truncated(tmp.path(), "hdr.mp4", &d[..10]);
        assert_truncated(tmp.path(), "last-byte.mp4", &d[..d.len() - 1]);
    }

    #[test]
    fn truncated_pngs_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["login.png", "login-error.png", "dashboard.png"] {
            let d = sample(name);
            // The first IDAT chunk, found by walking chunks.
            let mut pos = 8;
            let idat = loop {
                let len = be_u32(&d[pos..]) as usize;
                if &d[pos + 4..pos + 8] == b"IDAT" {
                    break (pos, pos + 12 + len);
                }
                pos += 12 + len;
            };
            assert_truncated(tmp.path(), "60.png", cut(&d, 60));
            assert_truncated(tmp.path(), "1k.png", &d[..1024]);
            assert_truncated(tmp.path(), "mid.png", &d[..(idat.0 + idat.1) / 2]);
            assert_truncated(tmp.path(), "sig.png", &d[..5]);
            assert_truncated(tmp.path(), "no-iend.png", &d[..d.len() - 12]);
        }
    }

    #[test]
    fn filesystem_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = write(tmp.path(), "empty.webm", b"");
        assert!(matches!(check(&empty), Err(MediaError::Empty { .. })));

        let err = check(tmp.path()).unwrap_err();
        assert!(matches!(err, MediaError::NotAFile { .. }), "{err:?}");
        assert!(err.to_string().contains("video.webm"));

        let missing = tmp.path().join("missing.webm");
        let err = check(&missing).unwrap_err();
        assert!(matches!(err, MediaError::NotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("missing.webm does not exist"));
        assert_eq!(err.path(), missing);

        let under_file = empty.join("x.png");
        assert!(matches!(
            check(&under_file),
            Err(MediaError::NotFound { .. })
        ));

        #[cfg(unix)]
        {
            let link = tmp.path().join("dangling.webm");
            std::os::unix::fs::symlink(&missing, &link).unwrap();
            assert!(matches!(check(&link), Err(MediaError::NotFound { .. })));
            // A symlink to a real file is followed.
            let good = tmp.path().join("good.png");
            std::os::unix::fs::symlink(media_dir().join("login.png"), &good).unwrap();
            assert_accepted(&good, MediaKind::Image, "image/png", "PNG");
        }
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let path = write(tmp.path(), "secret.png", &sample("login.png"));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
        if File::open(&path).is_ok() {
            println!("note: running as root, permission check skipped");
            return;
        }
        let err = check(&path).unwrap_err();
        assert!(matches!(err, MediaError::Unreadable { .. }), "{err:?}");
    }

    #[test]
    fn non_media_is_refused_without_leaking_content() {
        let tmp = tempfile::tempdir().unwrap();
        let text = write(
            tmp.path(),
            "video.webm",
            "hello world\nthis is a log file ✓\n".as_bytes(),
        );
        match check(&text) {
            Err(MediaError::NotMedia { looks_like, .. }) => assert_eq!(looks_like, Some("text")),
            other => panic!("{other:?}"),
        }

        let key_body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
        let key = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{key_body}\n-----END OPENSSH PRIVATE KEY-----\n"
        );
        let key_path = write(tmp.path(), "id_ed25519", key.as_bytes());
        let err = check(&key_path).unwrap_err();
        assert!(
            matches!(
                err,
                MediaError::NotMedia {
                    looks_like: Some("a private key"),
                    ..
                }
            ),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("a private key") && msg.contains("nothing was uploaded"),
            "{msg}"
        );
        assert!(!msg.contains(key_body) && !msg.contains("OPENSSH") && !msg.contains("BEGIN"));

        let cases: &[(&[u8], Option<&str>)] = &[
            (b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n", Some("PDF")),
            (b"PK\x03\x04\x14\x00\x00\x00", Some("ZIP archive")),
            (b"\x7FELF\x02\x01\x01\x00\x00\x00", Some("ELF executable")),
            (b"\x00\x01\x02\x03\xFF\xFE\x00\x00", None),
            (b"RIFF\x24\x00\x00\x00WAVEfmt ", Some("WAV audio")),
        ];
        for (bytes, want) in cases {
            let path = write(tmp.path(), "x.mp4", bytes);
            match check(&path) {
                Err(MediaError::NotMedia { looks_like, .. }) => assert_eq!(looks_like, *want),
                other => panic!("{other:?}"),
            }
        }
        // Words that happen to be QuickTime box names do not make a text file a MOV.
        let path = write(tmp.path(), "free.txt", b"    free software is great\n");
        assert!(matches!(check(&path), Err(MediaError::NotMedia { .. })));
        // HEIC is ISO BMFF but not something we send.
        let heic = [&[0, 0, 0, 24][..], b"ftypheic\0\0\0\0mif1heic"].concat();
        let path = write(tmp.path(), "photo.heic", &heic);
        assert!(
            matches!(check(&path), Err(MediaError::NotMedia { looks_like: Some(l), .. }) if l.contains("HEIC"))
        );
    }

    #[test]
    fn too_large_and_wrong_kind() {
        let png = media_dir().join("login.png");
        let err = inspect(&png, 1000, None).unwrap_err();
        match &err {
            MediaError::TooLarge {
                size_bytes,
                limit_bytes,
                ..
            } => {
                assert_eq!((*size_bytes, *limit_bytes), (6824, 1000));
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("6824 bytes") && msg.contains("1000 bytes"),
            "{msg}"
        );
        let big = MediaError::TooLarge {
            path: "v.webm".into(),
            size_bytes: 3 * 1024 * 1024 * 1024,
            limit_bytes: MAX_MEDIA_BYTES,
        };
        assert!(big.to_string().contains("3.00 GB") && big.to_string().contains("2.00 GB"));

        let err = inspect(&png, MAX_MEDIA_BYTES, Some(MediaKind::Video)).unwrap_err();
        assert!(
            matches!(
                err,
                MediaError::WrongKind {
                    expected: MediaKind::Video,
                    found: "PNG",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("a video is needed"));
        let webm = media_dir().join("login-flow.webm");
        let err = inspect(&webm, MAX_MEDIA_BYTES, Some(MediaKind::Image)).unwrap_err();
        assert!(
            matches!(err, MediaError::WrongKind { found: "WebM", .. }),
            "{err:?}"
        );
    }

    #[test]
    fn sniff_prefixes() {
        let webm = sample("login-flow.webm");
        assert_eq!(sniff(&webm[..64]), Some(WEBM));
        assert_eq!(sniff(&webm[..20]), None);
        let mut mkv = webm[..64].to_vec();
        mkv[0x18..0x1C].copy_from_slice(b"mkvx"); // same length, unsupported DocType
        assert_eq!(sniff(&mkv), None);
        assert_eq!(sniff(&sample("login-flow.mp4")[..12]), Some(MP4));
        assert_eq!(sniff(b"\0\0\0\x14ftypqt  \0\0\0\0"), Some(MOV));
        assert_eq!(sniff(b"\0\0\0\x08wide\0\0\0\x10mdat"), Some(MOV));
        assert_eq!(sniff(&sample("login.png")[..8]), Some(PNG));
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0"), Some(JPEG));
        assert_eq!(sniff(b"GIF89a"), Some(GIF));
        assert_eq!(sniff(b"RIFF\0\0\0\0AVI "), Some(AVI));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBP"), Some(WEBP));
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"hello"), None);
    }

    #[test]
    fn synthetic_iso_bmff_layouts() {
        let tmp = tempfile::tempdir().unwrap();
        let bx = |t: &[u8], payload: usize| -> Vec<u8> {
            let mut b = ((8 + payload) as u32).to_be_bytes().to_vec();
            b.extend_from_slice(t);
            b.resize(8 + payload, 7);
            b
        };
        let ftyp = [&[0, 0, 0, 16][..], b"ftypisom\0\0\0\0"].concat();
        let ok: Vec<Vec<u8>> = vec![
            // Fragmented: moov then moof without a top-level mdat.
            [ftyp.clone(), bx(b"moov", 20), bx(b"moof", 20)].concat(),
            // 64-bit largesize mdat.
            [
                ftyp.clone(),
                bx(b"moov", 20),
                [&[0, 0, 0, 1][..], b"mdat", &24u64.to_be_bytes(), &[9; 8]].concat(),
            ]
            .concat(),
            // size 0: mdat runs to the end of the file.
            [
                ftyp.clone(),
                bx(b"moov", 20),
                [&[0, 0, 0, 0][..], b"mdat", &[1; 50]].concat(),
            ]
            .concat(),
            // Old QuickTime layout without ftyp.
            [bx(b"wide", 0), bx(b"mdat", 30), bx(b"moov", 20)].concat(),
        ];
        for (i, d) in ok.iter().enumerate() {
            let path = write(tmp.path(), &format!("ok{i}.mp4"), d);
            assert!(check(&path).is_ok(), "case {i}: {:?}", check(&path));
        }
        assert_truncated(
            tmp.path(),
            "nomoov.mp4",
            &[ftyp.clone(), bx(b"mdat", 30)].concat(),
        );
        assert_truncated(
            tmp.path(),
            "nomdat.mp4",
            &[ftyp.clone(), bx(b"moov", 30)].concat(),
        );
        let zeros = [ftyp.clone(), bx(b"moov", 20), bx(b"mdat", 20), vec![0; 64]].concat();
        assert_truncated(tmp.path(), "zeros.mp4", &zeros);
        assert_truncated(
            tmp.path(),
            "short.mp4",
            &[ftyp, bx(b"moov", 20), bx(b"mdat", 20)].concat()[..60],
        );
    }

    #[test]
    fn synthetic_images() {
        let tmp = tempfile::tempdir().unwrap();
        let jpeg = [&[0xFF, 0xD8, 0xFF, 0xE0][..], &[1; 100], &[0xFF, 0xD9]].concat();
        let path = write(tmp.path(), "a.jpg", &jpeg);
        assert_accepted(&path, MediaKind::Image, "image/jpeg", "JPEG");
        let padded = [jpeg.clone(), vec![0; 2000]].concat();
        assert!(check(&write(tmp.path(), "p.jpg", &padded)).is_ok());
        let overpadded = [jpeg.clone(), vec![0; 5000]].concat();
        assert_truncated(tmp.path(), "o.jpg", &overpadded);
        assert_truncated(tmp.path(), "t.jpg", &jpeg[..50]);

        let gif = [&b"GIF89a"[..], &[1; 30], &[0x3B]].concat();
        assert!(check(&write(tmp.path(), "a.gif", &gif)).is_ok());
        assert_truncated(tmp.path(), "t.gif", &gif[..20]);
        assert_truncated(tmp.path(), "h.gif", b"GIF8");

        // RIFF size not yet filled in, as while an AVI is being written.
        assert_truncated(tmp.path(), "r.avi", b"RIFF\0\0\0\0AVI LIST\0\0\0\0");
        assert_truncated(tmp.path(), "r.webp", b"RIFF\x40\0\0\0WEBPVP8 ");
    }

    fn ffmpeg(dir: &Path, out: &str, args: &[&str]) -> Option<PathBuf> {
        let path = dir.join(out);
        let status = Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                "testsrc=size=160x120:rate=10",
            ])
            .args(args)
            .arg(&path)
            .status();
        match status {
            Ok(s) if s.success() => Some(path),
            _ => {
                println!("note: ffmpeg could not produce {out}; that format is not tested here");
                None
            }
        }
    }

    #[test]
    fn ffmpeg_generated_samples() {
        if Command::new("ffmpeg").arg("-version").output().is_err() {
            println!("note: ffmpeg not installed; generated-sample test skipped");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let v = MediaKind::Video;
        let i = MediaKind::Image;
        let clip = ["-t", "2", "-c:v", "mpeg4"];
        let one = ["-frames:v", "1"];
        let cases: Vec<(Option<PathBuf>, MediaKind, &str, &str)> = vec![
            (ffmpeg(d, "clip.avi", &clip), v, "video/avi", "AVI"),
            (
                ffmpeg(d, "clip.mov", &clip),
                v,
                "video/quicktime",
                "QuickTime MOV",
            ),
            (
                ffmpeg(d, "clip.mkv", &clip),
                v,
                "video/x-matroska",
                "Matroska",
            ),
            (ffmpeg(d, "clip.mp4", &clip), v, "video/mp4", "MP4"),
            (ffmpeg(d, "clip.gif", &["-t", "1"]), i, "image/gif", "GIF"),
            (ffmpeg(d, "shot.jpg", &one), i, "image/jpeg", "JPEG"),
            (
                ffmpeg(d, "shot.webp", &[&one[..], &["-c:v", "libwebp"]].concat()),
                i,
                "image/webp",
                "WebP",
            ),
        ];
        let mut tested = 0;
        for (path, kind, mime, format) in cases {
            let Some(path) = path else { continue };
            assert_accepted(&path, kind, mime, format);
            let bytes = fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let mut end = bytes.len() * 60 / 100;
            // The GIF check is by trailer byte; move the cut off a 0x3B that a cut could hit by chance.
            while format == "GIF" && bytes[end - 1] == 0x3B {
                end -= 1;
            }
            assert_truncated(d, &format!("60-{name}"), &bytes[..end]);
            assert_truncated(d, &format!("last-{name}"), &bytes[..bytes.len() - 1]);
            tested += 1;
        }
        assert!(tested >= 5, "ffmpeg produced too few samples");

        // Fragmented MP4 (moov first, then moof/mdat pairs) and a live Matroska stream.
        if let Some(p) = ffmpeg(
            d,
            "frag.mp4",
            &[&clip[..], &["-movflags", "frag_keyframe+empty_moov"]].concat(),
        ) {
            assert_accepted(&p, v, "video/mp4", "MP4");
        }
        if let Some(p) = ffmpeg(
            d,
            "live.webm",
            &[
                "-t",
                "2",
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-live",
                "1",
            ],
        ) {
            // ffmpeg's live WebM has a Segment of unknown size, like a recording still in progress.
            assert_accepted(&p, v, "video/webm", "WebM");
            let bytes = fs::read(&p).unwrap();
            assert_truncated(d, "60-live.webm", cut(&bytes, 60));
            assert_truncated(d, "last-live.webm", &bytes[..bytes.len() - 1]);
        }
    }
}
