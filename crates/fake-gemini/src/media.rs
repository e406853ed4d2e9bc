//! Media facts: which MIME types Gemini accepts as prompt input, the play length read from a
//! WebM/Matroska or MP4 header, and the deterministic token cost of a media part.

/// How many leading bytes of an upload are kept to find its duration.
pub(crate) const HEAD_BYTES: usize = 1 << 20;

/// Duration assumed when a video's header tells none.
pub(crate) const DEFAULT_VIDEO_SECS: f64 = 6.0;

/// Tokens per sampled video frame or image at default resolution, and at MEDIA_RESOLUTION_LOW.
pub(crate) const TOKENS_PER_FRAME: u64 = 258;
pub(crate) const TOKENS_PER_FRAME_LOW: u64 = 66;
/// Tokens per second of audio (audio tracks and audio files).
pub(crate) const TOKENS_PER_AUDIO_SECOND: u64 = 32;

/// The video MIME types the doc lists, plus the common aliases clients derive from extensions.
const VIDEO_TYPES: &[&str] = &[
    "video/mp4",
    "video/mpeg",
    "video/mov",
    "video/quicktime",
    "video/avi",
    "video/x-msvideo",
    "video/x-flv",
    "video/mpg",
    "video/webm",
    "video/wmv",
    "video/x-ms-wmv",
    "video/3gpp",
];

const IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

const AUDIO_TYPES: &[&str] = &[
    "audio/wav",
    "audio/x-wav",
    "audio/mp3",
    "audio/mpeg",
    "audio/aiff",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
];

/// The kind of a prompt part, which is also its `promptTokensDetails` modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Modality {
    Text,
    Image,
    Video,
    Audio,
    Document,
}

impl Modality {
    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "TEXT",
            Modality::Image => "IMAGE",
            Modality::Video => "VIDEO",
            Modality::Audio => "AUDIO",
            Modality::Document => "DOCUMENT",
        }
    }
}

/// The modality of a MIME type Gemini accepts as input, or None when it rejects it.
pub(crate) fn modality_of(mime: &str) -> Option<Modality> {
    let mime = mime.trim().to_ascii_lowercase();
    let base = mime.split(';').next().unwrap_or("").trim();
    if VIDEO_TYPES.contains(&base) {
        Some(Modality::Video)
    } else if IMAGE_TYPES.contains(&base) {
        Some(Modality::Image)
    } else if AUDIO_TYPES.contains(&base) {
        Some(Modality::Audio)
    } else if base == "application/pdf" {
        Some(Modality::Document)
    } else if base.starts_with("text/")
        || matches!(
            base,
            "application/json" | "application/x-javascript" | "application/x-python"
        )
    {
        Some(Modality::Text)
    } else {
        None
    }
}

pub(crate) fn is_video(mime: &str) -> bool {
    modality_of(mime) == Some(Modality::Video)
}

pub(crate) fn is_timed(mime: &str) -> bool {
    matches!(modality_of(mime), Some(Modality::Video | Modality::Audio))
}

/// The play length in seconds found in the first bytes of a WebM/Matroska or MP4/MOV file.
pub fn sniff_duration(head: &[u8]) -> Option<f64> {
    let secs = if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        matroska_duration(head)
    } else if head.len() >= 8 && &head[4..8] == b"ftyp" {
        mp4_duration(head)
    } else {
        None
    }?;
    (secs.is_finite() && secs > 0.0 && secs < 100.0 * 3600.0).then_some(secs)
}

/// Matroska: Segment/Info holds TimecodeScale (0x2AD7B1, default 1 ms) and Duration (0x4489,
/// a float in TimecodeScale units). A plain byte search is enough for headers written by
/// ffmpeg, browsers and Playwright.
fn matroska_duration(head: &[u8]) -> Option<f64> {
    let mut scale_ns = 1_000_000f64;
    if let Some(i) = find(head, &[0x2A, 0xD7, 0xB1]) {
        let size_byte = *head.get(i + 3)?;
        if size_byte & 0x80 != 0 {
            let len = (size_byte & 0x7F) as usize;
            if (1..=8).contains(&len) {
                let bytes = head.get(i + 4..i + 4 + len)?;
                let v = bytes.iter().fold(0u64, |acc, b| (acc << 8) | *b as u64);
                if v > 0 {
                    scale_ns = v as f64;
                }
            }
        }
    }
    let mut from = 0;
    while let Some(rel) = find(&head[from..], &[0x44, 0x89]) {
        let i = from + rel;
        match head.get(i + 2) {
            Some(0x84) => {
                let b: [u8; 4] = head.get(i + 3..i + 7)?.try_into().ok()?;
                return Some(f32::from_be_bytes(b) as f64 * scale_ns / 1e9);
            }
            Some(0x88) => {
                let b: [u8; 8] = head.get(i + 3..i + 11)?.try_into().ok()?;
                return Some(f64::from_be_bytes(b) * scale_ns / 1e9);
            }
            _ => from = i + 2,
        }
    }
    None
}

/// MP4/MOV: moov/mvhd holds a timescale and a duration (only found when moov is at the front).
fn mp4_duration(head: &[u8]) -> Option<f64> {
    let i = find(head, b"mvhd")?;
    let body = head.get(i + 4..)?;
    let version = *body.first()?;
    let be32 = |at: usize| -> Option<u64> {
        Some(u32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?) as u64)
    };
    let (timescale, duration) = if version == 1 {
        let d = u64::from_be_bytes(body.get(24..32)?.try_into().ok()?);
        (be32(20)?, d)
    } else {
        (be32(12)?, be32(16)?)
    };
    (timescale > 0).then(|| duration as f64 / timescale as f64)
}

/// Whether a video's first bytes declare a sound track: a Matroska/WebM track whose CodecID
/// (element 0x86) is an audio codec ("A_OPUS", "A_VORBIS", ...), or an MP4/MOV handler of
/// type "soun". Gemini bills audio only for videos that have it.
pub fn sniff_audio(head: &[u8]) -> bool {
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        head.windows(4)
            .any(|w| w[0] == 0x86 && w[1] & 0x80 != 0 && &w[2..4] == b"A_")
    } else {
        let mut from = 0;
        while let Some(rel) = find(&head[from..], b"hdlr") {
            let i = from + rel;
            if head.get(i + 12..i + 16) == Some(b"soun") {
                return true;
            }
            from = i + 4;
        }
        false
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A duration the way Google's JSON writes it: "6s", "5.520s".
pub(crate) fn format_duration(secs: f64) -> String {
    let millis = (secs * 1000.0).round() as u64;
    if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{}.{:03}s", millis / 1000, millis % 1000)
    }
}

/// Parse a protobuf JSON duration ("1250s", "2.5s", "0.000000001s").
pub(crate) fn parse_duration(s: &str) -> Option<f64> {
    let num = s.strip_suffix('s')?;
    if num.is_empty()
        || num.starts_with('+')
        || !num
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Deterministic token cost of a media part: frames at `fps` of the clip (258 each, 66 at
/// low resolution) plus 32/s of audio when the video has a sound track; 258 (66) per image, 32/s for audio, 258 per PDF page
/// (one page assumed), a quarter token per byte for text.
pub(crate) fn media_cost(
    mime: &str,
    size: u64,
    duration_secs: Option<f64>,
    clip: Option<(f64, f64)>,
    fps: f64,
    low_res: bool,
    has_audio: bool,
) -> u64 {
    let per_frame = if low_res {
        TOKENS_PER_FRAME_LOW
    } else {
        TOKENS_PER_FRAME
    };
    match modality_of(mime).unwrap_or(Modality::Document) {
        Modality::Video => {
            let secs = clip_secs(duration_secs.unwrap_or(DEFAULT_VIDEO_SECS), clip);
            let frames = ((secs * fps).ceil() as u64).max(1);
            let audio = if has_audio {
                (secs.ceil() as u64) * TOKENS_PER_AUDIO_SECOND
            } else {
                0
            };
            frames * per_frame + audio
        }
        Modality::Audio => {
            let secs = clip_secs(duration_secs.unwrap_or(DEFAULT_VIDEO_SECS), clip);
            ((secs.ceil() as u64) * TOKENS_PER_AUDIO_SECOND).max(1)
        }
        Modality::Image => per_frame,
        Modality::Document => TOKENS_PER_FRAME,
        Modality::Text => size.div_ceil(4).max(1),
    }
}

fn clip_secs(total: f64, clip: Option<(f64, f64)>) -> f64 {
    match clip {
        Some((start, end)) => {
            let end = end.min(total);
            (end - start.min(end)).max(0.0)
        }
        None => total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webm_duration_is_read() {
        let mut head = vec![0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01];
        head.extend_from_slice(&[0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40]);
        head.extend_from_slice(&[0x44, 0x89, 0x88]);
        head.extend_from_slice(&5520.0f64.to_be_bytes());
        assert_eq!(sniff_duration(&head), Some(5.52));
        assert_eq!(format_duration(5.52), "5.520s");
    }

    #[test]
    fn mp4_duration_is_read() {
        let mut head = vec![0, 0, 0, 0x18];
        head.extend_from_slice(b"ftypisom");
        head.extend_from_slice(&[0; 12]);
        head.extend_from_slice(&[0, 0, 0, 0x6C]);
        head.extend_from_slice(b"mvhd");
        head.extend_from_slice(&[0, 0, 0, 0]); // version, flags
        head.extend_from_slice(&[0; 8]); // creation, modification
        head.extend_from_slice(&1000u32.to_be_bytes());
        head.extend_from_slice(&12_000u32.to_be_bytes());
        assert_eq!(sniff_duration(&head), Some(12.0));
        assert_eq!(format_duration(12.0), "12s");
    }

    #[test]
    fn sound_tracks_are_found_in_webm_and_mp4_heads() {
        let mut webm = vec![0x1A, 0x45, 0xDF, 0xA3, 0, 0];
        webm.extend_from_slice(&[0x86, 0x85]);
        webm.extend_from_slice(b"V_VP8");
        assert!(!sniff_audio(&webm));
        webm.extend_from_slice(&[0x86, 0x86]);
        webm.extend_from_slice(b"A_OPUS");
        assert!(sniff_audio(&webm));
        let mut mp4 = b"\0\0\0\x18ftypisom".to_vec();
        mp4.extend_from_slice(b"hdlr\0\0\0\0\0\0\0\0vide");
        assert!(!sniff_audio(&mp4));
        mp4.extend_from_slice(b"hdlr\0\0\0\0\0\0\0\0soun");
        assert!(sniff_audio(&mp4));
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("1250s"), Some(1250.0));
        assert_eq!(parse_duration("2.5s"), Some(2.5));
        assert_eq!(parse_duration("2"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("abc s"), None);
    }

    #[test]
    fn costs_are_plausible() {
        let c = media_cost("video/webm", 1, None, None, 1.0, false, true);
        assert_eq!(c, 6 * 258 + 6 * 32);
        let c = media_cost("video/webm", 1, None, None, 1.0, false, false);
        assert_eq!(c, 6 * 258);
        // A clip: frames at its fps between its offsets.
        let c = media_cost(
            "video/webm",
            1,
            Some(60.0),
            Some((4.0, 11.0)),
            0.1427,
            false,
            false,
        );
        assert_eq!(c, 258);
        let c = media_cost(
            "video/webm",
            1,
            Some(60.0),
            Some((5.0, 5.5625)),
            8.0,
            true,
            false,
        );
        assert_eq!(c, 5 * 66);
        let c = media_cost("image/png", 1, None, None, 1.0, true, false);
        assert_eq!(c, 66);
        assert!(modality_of("application/x-foo").is_none());
    }
}
