//! Media facts: which MIME types Gemini accepts as prompt input, the play length read from a
//! WebM/Matroska or MP4 header, and the deterministic token cost of a media part, by model
//! family and `mediaResolution` as Gemini documents them:
//!
//! | family | video frame | image |
//! |---|---|---|
//! | Gemini 2.x | 258 (66 at LOW) | 258 (66 at LOW) |
//! | Gemini 3+ | 70 at LOW, MEDIUM or unspecified; 280 at HIGH | 280 LOW, 560 MEDIUM, 1120 HIGH or unspecified, 2240 ULTRA_HIGH (per part only) |
//!
//! plus 32 tokens a second of a video's sound track. The resolution comes from the part's own
//! `mediaResolution` (Gemini 3 and later only), else the request's `generationConfig`.

/// How many leading bytes of an upload are kept to find its duration.
pub(crate) const HEAD_BYTES: usize = 1 << 20;

/// Duration assumed when a video's header tells none.
pub(crate) const DEFAULT_VIDEO_SECS: f64 = 6.0;

/// Tokens of a PDF page (one page assumed), whatever the family.
pub(crate) const TOKENS_PER_PAGE: u64 = 258;
/// Tokens per second of audio (audio tracks and audio files).
pub(crate) const TOKENS_PER_AUDIO_SECOND: u64 = 32;

/// The model families of the token table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// gemini-2.x (and older).
    Gemini2,
    /// gemini-3 and later, and names without a version (aliases of a current model).
    Gemini3,
}

impl Family {
    /// "gemini-2.5-flash-lite" is Gemini 2.x; "gemini-3.5-flash-lite", "gemini-10-x" and
    /// "gemini-flash-latest" are not.
    pub fn of(model: &str) -> Family {
        let name = model.strip_prefix("models/").unwrap_or(model);
        let version = name.strip_prefix("gemini-").unwrap_or(name);
        let major: String = version.chars().take_while(char::is_ascii_digit).collect();
        match major.parse::<u32>() {
            Ok(n) if n < 3 => Family::Gemini2,
            _ => Family::Gemini3,
        }
    }

    /// Whether parts may carry their own `mediaResolution`.
    pub fn per_part_resolution(self) -> bool {
        self == Family::Gemini3
    }
}

/// `MEDIA_RESOLUTION_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resolution {
    #[default]
    Unspecified,
    Low,
    Medium,
    High,
    UltraHigh,
}

impl Resolution {
    pub fn parse(name: &str) -> Option<Resolution> {
        Some(match name {
            "MEDIA_RESOLUTION_UNSPECIFIED" => Resolution::Unspecified,
            "MEDIA_RESOLUTION_LOW" => Resolution::Low,
            "MEDIA_RESOLUTION_MEDIUM" => Resolution::Medium,
            "MEDIA_RESOLUTION_HIGH" => Resolution::High,
            "MEDIA_RESOLUTION_ULTRA_HIGH" => Resolution::UltraHigh,
            _ => return None,
        })
    }
}

/// Tokens of one sampled video frame. (No video figure above HIGH is documented.)
pub fn frame_tokens(family: Family, resolution: Resolution) -> u64 {
    use Resolution::*;
    match (family, resolution) {
        (Family::Gemini2, Low) => 66,
        (Family::Gemini2, _) => 258,
        (Family::Gemini3, High | UltraHigh) => 280,
        (Family::Gemini3, _) => 70,
    }
}

/// Tokens of one image.
pub fn image_tokens(family: Family, resolution: Resolution) -> u64 {
    use Resolution::*;
    match (family, resolution) {
        (Family::Gemini2, Low) => 66,
        (Family::Gemini2, _) => 258,
        (Family::Gemini3, Low) => 280,
        (Family::Gemini3, Medium) => 560,
        (Family::Gemini3, Unspecified | High) => 1120,
        (Family::Gemini3, UltraHigh) => 2240,
    }
}

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

/// How a part is billed: the model's family and the part's resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Billing {
    pub family: Family,
    pub resolution: Resolution,
}

/// Deterministic token cost of a media part: frames at `fps` of the clip (per the table
/// above) plus 32/s of audio when the video has a sound track; the table's figure per image,
/// 32/s for audio, 258 per PDF page (one page assumed), a quarter token per byte for text.
pub(crate) fn media_cost(
    mime: &str,
    size: u64,
    duration_secs: Option<f64>,
    clip: Option<(f64, f64)>,
    fps: f64,
    billing: Billing,
    has_audio: bool,
) -> u64 {
    let per_frame = frame_tokens(billing.family, billing.resolution);
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
        Modality::Image => image_tokens(billing.family, billing.resolution),
        Modality::Document => TOKENS_PER_PAGE,
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

    const G2: Billing = Billing {
        family: Family::Gemini2,
        resolution: Resolution::Unspecified,
    };
    const G2_LOW: Billing = Billing {
        family: Family::Gemini2,
        resolution: Resolution::Low,
    };

    #[test]
    fn costs_are_plausible() {
        let c = media_cost("video/webm", 1, None, None, 1.0, G2, true);
        assert_eq!(c, 6 * 258 + 6 * 32);
        let c = media_cost("video/webm", 1, None, None, 1.0, G2, false);
        assert_eq!(c, 6 * 258);
        // A clip: frames at its fps between its offsets.
        let c = media_cost(
            "video/webm",
            1,
            Some(60.0),
            Some((4.0, 11.0)),
            0.1427,
            G2,
            false,
        );
        assert_eq!(c, 258);
        let c = media_cost(
            "video/webm",
            1,
            Some(60.0),
            Some((5.0, 5.5625)),
            8.0,
            G2_LOW,
            false,
        );
        assert_eq!(c, 5 * 66);
        let c = media_cost("image/png", 1, None, None, 1.0, G2_LOW, false);
        assert_eq!(c, 66);
        assert!(modality_of("application/x-foo").is_none());
    }

    #[test]
    fn the_token_table_per_family_and_resolution() {
        use Resolution::*;
        assert_eq!(Family::of("gemini-2.5-flash-lite"), Family::Gemini2);
        assert_eq!(Family::of("models/gemini-2.0-flash"), Family::Gemini2);
        assert_eq!(Family::of("gemini-3.5-flash-lite"), Family::Gemini3);
        assert_eq!(Family::of("gemini-3-pro-preview"), Family::Gemini3);
        for (r, f2, i2, f3, i3) in [
            (Unspecified, 258, 258, 70, 1120),
            (Low, 66, 66, 70, 280),
            (Medium, 258, 258, 70, 560),
            (High, 258, 258, 280, 1120),
            (UltraHigh, 258, 258, 280, 2240),
        ] {
            assert_eq!(frame_tokens(Family::Gemini2, r), f2);
            assert_eq!(image_tokens(Family::Gemini2, r), i2);
            assert_eq!(frame_tokens(Family::Gemini3, r), f3);
            assert_eq!(image_tokens(Family::Gemini3, r), i3);
        }
        let g3 = Billing {
            family: Family::Gemini3,
            resolution: Unspecified,
        };
        // Gemini 3: a minute of silent video at its default costs 60 frames of 70.
        assert_eq!(
            media_cost("video/webm", 1, Some(60.0), None, 1.0, g3, false),
            60 * 70
        );
    }
}
