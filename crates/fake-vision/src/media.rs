//! Media facts read from the bytes themselves, as the real services do: the image or video
//! format from its magic bytes, pixel dimensions from PNG/JPEG/GIF/WebP headers, data URLs,
//! base64 and hashes.

use base64::Engine;
use sha2::{Digest, Sha256};

/// The format of image bytes by their magic, including formats no provider accepts (so the
/// error can name what was sent).
pub(crate) fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"BM") {
        Some("image/bmp")
    } else if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        Some("image/tiff")
    } else if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        match &bytes[8..12] {
            b"avif" | b"avis" => Some("image/avif"),
            b"heic" | b"heix" | b"mif1" | b"msf1" => Some("image/heic"),
            _ => None,
        }
    } else {
        None
    }
}

/// Width and height from the header of a PNG, JPEG, GIF or WebP file.
pub(crate) fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    match sniff_image(bytes)? {
        "image/png" => {
            if bytes.get(12..16)? != b"IHDR" {
                return None;
            }
            Some((be32(bytes, 16)?, be32(bytes, 20)?))
        }
        "image/gif" => Some((le16(bytes, 6)? as u32, le16(bytes, 8)? as u32)),
        "image/jpeg" => jpeg_size(bytes),
        "image/webp" => webp_size(bytes),
        _ => None,
    }
}

/// Walk the JPEG markers up to the first start-of-frame, which holds the size.
fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        if *bytes.get(i)? != 0xFF {
            return None;
        }
        while *bytes.get(i)? == 0xFF {
            i += 1;
        }
        let marker = *bytes.get(i)?;
        i += 1;
        if marker == 0x01 || (0xD0..=0xD9).contains(&marker) {
            continue;
        }
        let len = be16(bytes, i)? as usize;
        let is_sof = (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            let height = be16(bytes, i + 3)? as u32;
            let width = be16(bytes, i + 5)? as u32;
            return Some((width, height));
        }
        if len < 2 {
            return None;
        }
        i += len;
    }
}

/// WebP: lossy (`VP8 `), lossless (`VP8L`) and extended (`VP8X`) headers.
fn webp_size(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => {
            if bytes.get(23..26)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            Some((
                (le16(bytes, 26)? & 0x3FFF) as u32,
                (le16(bytes, 28)? & 0x3FFF) as u32,
            ))
        }
        b"VP8L" => {
            if *bytes.get(20)? != 0x2F {
                return None;
            }
            let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(bytes, 24)? + 1, le24(bytes, 27)? + 1)),
        _ => None,
    }
}

/// The container of video bytes by their magic.
pub(crate) fn sniff_video(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        let head = &bytes[..bytes.len().min(64)];
        if find(head, b"webm").is_some() {
            Some("video/webm")
        } else {
            Some("video/x-matroska")
        }
    } else if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        match &bytes[8..12] {
            b"qt  " => Some("video/quicktime"),
            // Still-image brands share the ISO container.
            b"avif" | b"avis" | b"heic" | b"heix" | b"mif1" | b"msf1" => None,
            _ => Some("video/mp4"),
        }
    } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"AVI " {
        Some("video/x-msvideo")
    } else {
        None
    }
}

/// The canonical name for a declared MIME type ("image/jpg" → "image/jpeg", "video/mov" →
/// "video/quicktime"), lower case, without parameters.
pub(crate) fn canonical_mime(mime: &str) -> String {
    let base = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match base.as_str() {
        "image/jpg" | "image/pjpeg" => "image/jpeg".into(),
        "video/mov" => "video/quicktime".into(),
        "video/mkv" | "video/matroska" => "video/x-matroska".into(),
        "video/avi" => "video/x-msvideo".into(),
        _ => base,
    }
}

/// Whether a declared video type fits the sniffed container: MP4 and QuickTime share a box
/// structure and are labelled interchangeably by tools, WebM is a Matroska profile.
pub(crate) fn video_types_agree(declared: &str, sniffed: &str) -> bool {
    let family = |m: &str| {
        match m {
            "video/mp4" | "video/quicktime" | "video/3gpp" => "iso",
            "video/webm" | "video/x-matroska" => "matroska",
            other => other,
        }
        .to_string()
    };
    family(declared) == family(sniffed)
}

/// A `data:` URL split into its declared MIME type and payload.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DataUrl<'a> {
    pub mime: String,
    pub base64: bool,
    pub payload: &'a str,
}

/// Split `data:<mime>[;params][;base64],<payload>`; None when it is not a data URL.
pub(crate) fn parse_data_url(url: &str) -> Option<DataUrl<'_>> {
    let rest = url.strip_prefix("data:")?;
    let (meta, payload) = rest.split_once(',')?;
    let mut fields = meta.split(';');
    let mime = fields.next().unwrap_or("").trim().to_ascii_lowercase();
    let base64 = fields.any(|f| f.trim().eq_ignore_ascii_case("base64"));
    Some(DataUrl {
        mime,
        base64,
        payload,
    })
}

/// Strict standard base64 (padding required), as the real services decode it.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Everything the fake learned about one inline image or video.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MediaFacts {
    pub mime: &'static str,
    pub size: Option<(u32, u32)>,
    pub bytes: u64,
    pub sha256: String,
    /// Play length from the container header (videos only, when the header tells).
    pub duration_secs: Option<f64>,
}

impl MediaFacts {
    pub fn image(mime: &'static str, bytes: &[u8]) -> Self {
        MediaFacts {
            mime,
            size: image_size(bytes),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
            duration_secs: None,
        }
    }

    pub fn video(mime: &'static str, bytes: &[u8]) -> Self {
        MediaFacts {
            mime,
            size: None,
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
            duration_secs: fake_gemini::media::sniff_duration(&bytes[..bytes.len().min(1 << 20)]),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jpeg_size_skips_segments_before_the_frame() {
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
        jpeg.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        jpeg.extend_from_slice(&[0xFF, 0xC2, 0x00, 0x11, 0x08, 0x01, 0xF4, 0x03, 0x20]);
        assert_eq!(sniff_image(&jpeg), Some("image/jpeg"));
        assert_eq!(image_size(&jpeg), Some((800, 500)));
    }

    #[test]
    fn webp_variants_and_gif() {
        let mut lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2F".to_vec();
        // width 800 → 799, height 500 → 499, packed 14 bits each.
        lossless.extend_from_slice(&(799u32 | (499u32 << 14)).to_le_bytes());
        assert_eq!(image_size(&lossless), Some((800, 500)));

        let mut extended = b"RIFF\0\0\0\0WEBPVP8X\x0A\0\0\0\0\0\0\0".to_vec();
        extended.extend_from_slice(&[0x1F, 0x03, 0x00, 0xF3, 0x01, 0x00]);
        assert_eq!(image_size(&extended), Some((800, 500)));

        let mut lossy = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9D\x01\x2A".to_vec();
        lossy.extend_from_slice(&800u16.to_le_bytes());
        lossy.extend_from_slice(&500u16.to_le_bytes());
        assert_eq!(image_size(&lossy), Some((800, 500)));

        let gif = b"GIF89a\x20\x03\xF4\x01";
        assert_eq!(image_size(gif), Some((800, 500)));
    }

    #[test]
    fn videos_and_data_urls() {
        assert_eq!(
            sniff_video(b"\0\0\0\x18ftypisom\0\0\0\0"),
            Some("video/mp4")
        );
        assert_eq!(
            sniff_video(b"\0\0\0\x14ftypqt  \0\0\0\0"),
            Some("video/quicktime")
        );
        assert_eq!(sniff_video(b"\0\0\0\x18ftypheic\0\0\0\0"), None);
        assert_eq!(
            sniff_video(b"\x1A\x45\xDF\xA3\x9F\x42\x86\x81\x01\x42\x82\x84webm"),
            Some("video/webm")
        );
        assert!(video_types_agree("video/quicktime", "video/mp4"));
        assert!(!video_types_agree("video/mp4", "video/webm"));
        assert_eq!(
            parse_data_url("data:Image/PNG;base64,AAAA"),
            Some(DataUrl {
                mime: "image/png".into(),
                base64: true,
                payload: "AAAA"
            })
        );
        assert_eq!(parse_data_url("https://x/y.png"), None);
        assert_eq!(canonical_mime("image/jpg"), "image/jpeg");
    }
}
