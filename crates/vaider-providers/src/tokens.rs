//! What Gemini bills for media, per model family: tokens per video frame, per image and per
//! second of audio at each `mediaResolution` (docs/sampling.md), and which resolution
//! each of Vaider's jobs sends. One table, so the sampling plan, the estimate shown beside
//! `usageMetadata.promptTokenCount` and the "saved versus default" figure all use the rules of
//! the model actually called.
//!
//! | family | video frame | image |
//! |---|---|---|
//! | Gemini 2.x | 258 (66 at LOW) | 258 (66 at LOW) |
//! | Gemini 3+ | 70 at LOW, MEDIUM or unspecified; 280 at HIGH | 280 LOW, 560 MEDIUM, 1120 HIGH or unspecified, 2240 ULTRA_HIGH (per part only) |
//!
//! Audio adds 32 tokens a second when a video has a sound track. `mediaResolution` goes in
//! `generationConfig` for the whole request, or, on Gemini 3 and later, on each part.

use serde_json::Value;

/// Tokens a second of a video's sound track, in every family.
pub const AUDIO_PER_SECOND: u64 = 32;
/// Frames a second of Gemini's own sampling of a whole video (`videoMetadata.fps` default).
pub const DEFAULT_FPS: f64 = 1.0;
/// The longest side, in pixels, that a low-resolution frame keeps without shrinking (half
/// the default's side). Frames no larger lose nothing at the cheapest setting.
pub const SMALL_FRAME_SIDE: u32 = 384;

/// A model family, read from the model's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// gemini-2.x (and the retired 1.x, billed alike).
    Gemini2,
    /// gemini-3 and later.
    Gemini3,
    /// A name that says no version (an alias, a tuned model): the larger figure of both
    /// families at each setting, so an estimate errs on the high side, and no per-part
    /// setting, which Gemini 2.x does not take.
    Unknown,
}

impl Family {
    /// "gemini-2.5-flash-lite" → Gemini2, "models/gemini-3.5-flash-lite" → Gemini3.
    pub fn of(model: &str) -> Family {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let Some(version) = name.strip_prefix("gemini-") else {
            return Family::Unknown;
        };
        let major: String = version.chars().take_while(char::is_ascii_digit).collect();
        match major.parse::<u32>() {
            Ok(0..=2) => Family::Gemini2,
            Ok(_) => Family::Gemini3,
            Err(_) => Family::Unknown,
        }
    }
}

/// Gemini's `mediaResolution` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resolution {
    /// Nothing sent: the model's default.
    Default,
    Low,
    Medium,
    High,
    /// Per part only, Gemini 3 and later.
    UltraHigh,
}

impl Resolution {
    /// The name on the wire.
    pub fn api_name(self) -> &'static str {
        match self {
            Resolution::Default => "MEDIA_RESOLUTION_UNSPECIFIED",
            Resolution::Low => "MEDIA_RESOLUTION_LOW",
            Resolution::Medium => "MEDIA_RESOLUTION_MEDIUM",
            Resolution::High => "MEDIA_RESOLUTION_HIGH",
            Resolution::UltraHigh => "MEDIA_RESOLUTION_ULTRA_HIGH",
        }
    }

    pub fn parse(name: &str) -> Option<Resolution> {
        Some(match name.trim().to_ascii_uppercase().as_str() {
            "MEDIA_RESOLUTION_UNSPECIFIED" => Resolution::Default,
            "MEDIA_RESOLUTION_LOW" => Resolution::Low,
            "MEDIA_RESOLUTION_MEDIUM" => Resolution::Medium,
            "MEDIA_RESOLUTION_HIGH" => Resolution::High,
            "MEDIA_RESOLUTION_ULTRA_HIGH" => Resolution::UltraHigh,
            _ => return None,
        })
    }

    /// For people and the result's `sampling.mediaResolution`: "default", "low", "high"…
    pub fn label(self) -> &'static str {
        match self {
            Resolution::Default => "default",
            Resolution::Low => "low",
            Resolution::Medium => "medium",
            Resolution::High => "high",
            Resolution::UltraHigh => "ultra_high",
        }
    }
}

/// What one request sets a part's resolution with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Nothing: the model's default.
    None,
    /// `generationConfig.mediaResolution`, for every part of the request.
    Request(Resolution),
    /// The part's own `mediaResolution: {"level": …}` (Gemini 3 and later).
    Part(Resolution),
}

/// The token rules of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRules {
    pub family: Family,
}

impl TokenRules {
    pub fn for_model(model: &str) -> TokenRules {
        TokenRules {
            family: Family::of(model),
        }
    }

    /// Tokens of one sampled video frame.
    pub fn video_frame(self, resolution: Resolution) -> u64 {
        use Resolution::*;
        match (self.family, resolution) {
            (Family::Gemini2, Low) => 66,
            (Family::Gemini2, _) => 258,
            // No video figure above HIGH is documented: ULTRA_HIGH is counted as HIGH.
            (Family::Gemini3, High | UltraHigh) => 280,
            (Family::Gemini3, _) => 70,
            (Family::Unknown, r) => Self::gemini2()
                .video_frame(r)
                .max(Self::gemini3().video_frame(r)),
        }
    }

    /// Tokens of one image.
    pub fn image(self, resolution: Resolution) -> u64 {
        use Resolution::*;
        match (self.family, resolution) {
            (Family::Gemini2, Low) => 66,
            (Family::Gemini2, _) => 258,
            (Family::Gemini3, Low) => 280,
            (Family::Gemini3, Medium) => 560,
            (Family::Gemini3, Default | High) => 1120,
            (Family::Gemini3, UltraHigh) => 2240,
            (Family::Unknown, r) => Self::gemini2().image(r).max(Self::gemini3().image(r)),
        }
    }

    /// Whether a part may carry its own `mediaResolution` (Gemini 3 and later only).
    pub fn takes_part_resolution(self) -> bool {
        self.family == Family::Gemini3
    }

    /// The resolution a part is billed at, from its own setting and the request's; a part's
    /// own setting counts only where the family takes it.
    pub fn effective(self, part: Option<Resolution>, request: Option<Resolution>) -> Resolution {
        let part = part.filter(|_| self.takes_part_resolution());
        part.or(request).unwrap_or(Resolution::Default)
    }

    /// The resolution a clip of a recording goes at, by the recording's longest side and
    /// whether the clip's changes brought fine detail (text).
    ///
    /// A GUI recording is read for its text ("the dashboard says Welcome"), and each still
    /// stretch is sent as a single frame, so a frame that shows new text must be legible. At
    /// about 70 tokens a frame (Gemini 2.x LOW, Gemini 3's default) a frame keeps about half
    /// the side, and OCR read only 11–50 % of the words on real login screens against 50–100 %
    /// at Gemini 2.x's default 258 (`scripts/media-resolution.sh`; Gemini 3's frame size is
    /// not documented, so this assumes its 70 tokens keep about what 2.x's 66 do); Google
    /// likewise advises HIGH for video whose text matters. So on Gemini 3 a clip whose
    /// changes have fine detail goes at HIGH (280, about 2.x's default), and one whose
    /// changes are colours or flat areas (a panel, a pale screen, a toast gone) at the
    /// default: the text around them was already sent sharp when it appeared. Gemini 2.x
    /// takes one setting for the whole request: its default. Frames no larger than
    /// `SMALL_FRAME_SIDE` lose nothing at the low setting, and go at it.
    pub fn clip_setting(self, longest_side: u32, detail: bool) -> Setting {
        let small = longest_side <= SMALL_FRAME_SIDE;
        match self.family {
            // Gemini 3's default for video is already the low figure.
            Family::Gemini3 if small || !detail => Setting::None,
            Family::Gemini3 => Setting::Part(Resolution::High),
            _ if small => Setting::Request(Resolution::Low),
            _ => Setting::None,
        }
    }

    /// The resolution of a keyframe image (a still of a recording, in place of clips).
    ///
    /// MEDIUM on Gemini 3: 560 tokens, twice Gemini 2.x's 258 at which the same frames read
    /// well, and half the 1120 of the default, which a frame of a recording (at most a
    /// browser window, JPEG-compressed) does not need. Gemini 2.x has one figure.
    pub fn keyframe_setting(self) -> Setting {
        match self.family {
            Family::Gemini3 => Setting::Part(Resolution::Medium),
            _ => Setting::None,
        }
    }

    /// The resolution of a screenshot or image the agent sent: the whole subject of the call,
    /// often asked about to the letter (an error message, a transcription, a chart's values,
    /// a one-pixel difference). HIGH, named on Gemini 3 so that the choice shows in the
    /// request (it is also the default there: 1120 tokens).
    pub fn screenshot_setting(self) -> Setting {
        match self.family {
            Family::Gemini3 => Setting::Part(Resolution::High),
            _ => Setting::None,
        }
    }

    fn gemini2() -> TokenRules {
        TokenRules {
            family: Family::Gemini2,
        }
    }

    fn gemini3() -> TokenRules {
        TokenRules {
            family: Family::Gemini3,
        }
    }
}

impl Setting {
    /// The resolution this setting bills a part at, under `rules`.
    pub fn resolution(self, rules: TokenRules) -> Resolution {
        match self {
            Setting::None => Resolution::Default,
            Setting::Request(r) => r,
            Setting::Part(r) => rules.effective(Some(r), None),
        }
    }
}

/// An estimate of the tokens of a text: about four characters a token. Gemini's tokenizer
/// is not public; English prose and JSON come close to this.
pub fn text_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// What is known of an uploaded video, for [`estimate_request`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoFile<'a> {
    pub uri: &'a str,
    pub seconds: f64,
    pub has_audio: bool,
}

/// The prompt tokens a generateContent request body will cost under `rules`: its text, each
/// image, and each video part (its clip's frames at its `fps`, the sound of its seconds).
/// None when a video part's length is not known.
pub fn estimate_request(body: &Value, rules: TokenRules, videos: &[VideoFile<'_>]) -> Option<u64> {
    let request_resolution = body["generationConfig"]["mediaResolution"]
        .as_str()
        .and_then(Resolution::parse);
    let system = body["systemInstruction"]["parts"].as_array();
    let contents = body["contents"].as_array();
    let parts = system.into_iter().flatten().chain(
        contents
            .into_iter()
            .flatten()
            .filter_map(|c| c["parts"].as_array())
            .flatten(),
    );
    let mut total = 0;
    for part in parts {
        let own = part["mediaResolution"]["level"]
            .as_str()
            .and_then(Resolution::parse);
        let resolution = rules.effective(own, request_resolution);
        total += if let Some(text) = part["text"].as_str() {
            text_tokens(text)
        } else if part.get("inlineData").is_some() {
            rules.image(resolution)
        } else if let Some(file) = part.get("fileData") {
            file_tokens(part, file, rules, resolution, videos)?
        } else {
            0
        };
    }
    Some(total)
}

fn file_tokens(
    part: &Value,
    file: &Value,
    rules: TokenRules,
    resolution: Resolution,
    videos: &[VideoFile<'_>],
) -> Option<u64> {
    let uri = file["fileUri"].as_str().unwrap_or_default();
    let Some(video) = videos.iter().find(|v| v.uri == uri) else {
        let mime = file["mimeType"].as_str().unwrap_or_default();
        // A video of unknown length cannot be estimated; an image too large to go inline
        // goes as a file.
        return (!mime.starts_with("video/")).then(|| rules.image(resolution));
    };
    let meta = &part["videoMetadata"];
    let offset = |name: &str| {
        meta[name]
            .as_str()
            .and_then(|s| s.strip_suffix('s'))
            .and_then(|s| s.parse::<f64>().ok())
    };
    let start = offset("startOffset").unwrap_or(0.0).min(video.seconds);
    let end = offset("endOffset")
        .unwrap_or(video.seconds)
        .min(video.seconds);
    let seconds = (end - start).max(0.0);
    let fps = meta["fps"].as_f64().unwrap_or(DEFAULT_FPS);
    if !(seconds.is_finite() && fps > 0.0) {
        return None;
    }
    let frames = ((seconds * fps).ceil() as u64).max(1);
    let audio = if video.has_audio {
        seconds.ceil() as u64 * AUDIO_PER_SECOND
    } else {
        0
    };
    Some(frames * rules.video_frame(resolution) + audio)
}

/// Whether an estimate is far enough from what Gemini counted to say so: more than 20 %.
pub fn large_gap(estimate: u64, counted: u64) -> bool {
    estimate.abs_diff(counted) * 5 > counted.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Resolution::*;

    #[test]
    fn families_are_read_from_model_names() {
        assert_eq!(Family::of("gemini-2.5-flash-lite"), Family::Gemini2);
        assert_eq!(Family::of("models/gemini-2.0-flash"), Family::Gemini2);
        assert_eq!(Family::of("gemini-1.5-pro"), Family::Gemini2);
        assert_eq!(Family::of("gemini-3.5-flash-lite"), Family::Gemini3);
        assert_eq!(Family::of("gemini-3-pro-preview"), Family::Gemini3);
        assert_eq!(Family::of("models/gemini-3.1-pro-preview"), Family::Gemini3);
        assert_eq!(Family::of("Gemini-10.0-ultra"), Family::Gemini3);
        assert_eq!(Family::of("gemini-flash-latest"), Family::Unknown);
        assert_eq!(Family::of("gpt-4.1-mini"), Family::Unknown);
        assert_eq!(Family::of(""), Family::Unknown);
    }

    #[test]
    fn the_table_of_the_doc() {
        let two = TokenRules::for_model("gemini-2.5-flash-lite");
        let three = TokenRules::for_model("gemini-3.5-flash-lite");
        for (r, frame2, image2, frame3, image3) in [
            (Default, 258, 258, 70, 1120),
            (Low, 66, 66, 70, 280),
            (Medium, 258, 258, 70, 560),
            (High, 258, 258, 280, 1120),
            (UltraHigh, 258, 258, 280, 2240),
        ] {
            assert_eq!(two.video_frame(r), frame2, "2.x frame at {r:?}");
            assert_eq!(two.image(r), image2, "2.x image at {r:?}");
            assert_eq!(three.video_frame(r), frame3, "3 frame at {r:?}");
            assert_eq!(three.image(r), image3, "3 image at {r:?}");
        }
    }

    #[test]
    fn an_unknown_family_takes_the_larger_figure_and_no_part_setting() {
        let unknown = TokenRules::for_model("gemini-flash-latest");
        assert_eq!(unknown.video_frame(Default), 258);
        assert_eq!(unknown.video_frame(High), 280);
        assert_eq!(unknown.video_frame(Low), 70);
        assert_eq!(unknown.image(Default), 1120);
        assert_eq!(unknown.image(Low), 280);
        assert!(!unknown.takes_part_resolution());
        assert_eq!(unknown.keyframe_setting(), Setting::None);
    }

    #[test]
    fn a_part_setting_counts_only_on_gemini_3_and_wins_over_the_request() {
        let two = TokenRules::for_model("gemini-2.5-flash-lite");
        let three = TokenRules::for_model("gemini-3.5-flash-lite");
        assert_eq!(three.effective(Some(Medium), Some(Low)), Medium);
        assert_eq!(three.effective(None, Some(Low)), Low);
        assert_eq!(two.effective(Some(High), Some(Low)), Low);
        assert_eq!(two.effective(Some(High), None), Default);
    }

    #[test]
    fn each_job_keeps_its_text_readable() {
        let two = TokenRules::for_model("gemini-2.5-flash-lite");
        let three = TokenRules::for_model("gemini-3.5-flash-lite");
        assert_eq!(three.clip_setting(800, true), Setting::Part(High));
        assert_eq!(three.clip_setting(800, false), Setting::None);
        assert_eq!(three.clip_setting(320, true), Setting::None);
        assert_eq!(two.clip_setting(800, true), Setting::None);
        assert_eq!(two.clip_setting(800, false), Setting::None);
        assert_eq!(two.clip_setting(320, true), Setting::Request(Low));
        assert_eq!(three.keyframe_setting(), Setting::Part(Medium));
        assert_eq!(three.screenshot_setting(), Setting::Part(High));
        assert_eq!(two.screenshot_setting(), Setting::None);
        // A clip frame on Gemini 3 costs about what it costs at 2.x's default.
        let frame3 = three.video_frame(three.clip_setting(800, true).resolution(three));
        assert_eq!(frame3, 280);
    }

    #[test]
    fn a_request_is_estimated_part_by_part() {
        let three = TokenRules::for_model("gemini-3.5-flash-lite");
        let two = TokenRules::for_model("gemini-2.5-flash-lite");
        let body = json!({
            "systemInstruction": {"parts": [{"text": "12345678"}]},
            "contents": [{"role": "user", "parts": [
                {"fileData": {"fileUri": "u1", "mimeType": "video/webm"},
                 "videoMetadata": {"startOffset": "0.000s", "endOffset": "4.000s", "fps": 0.2},
                 "mediaResolution": {"level": "MEDIA_RESOLUTION_HIGH"}},
                {"fileData": {"fileUri": "u1", "mimeType": "video/webm"},
                 "videoMetadata": {"startOffset": "4.000s", "endOffset": "5.000s", "fps": 4.0}},
                {"inlineData": {"mimeType": "image/png", "data": ""},
                 "mediaResolution": {"level": "MEDIA_RESOLUTION_MEDIUM"}},
                {"text": "abcd"}]}]});
        let videos = [VideoFile {
            uri: "u1",
            seconds: 10.0,
            has_audio: true,
        }];
        let audio = 5 * 32;
        assert_eq!(
            estimate_request(&body, three, &videos),
            Some(2 + 280 + 4 * 70 + 560 + 1 + audio)
        );
        assert_eq!(
            estimate_request(&body, two, &videos),
            Some(2 + 258 + 4 * 258 + 258 + 1 + audio)
        );
        // The whole video: one frame a second.
        let whole = json!({"contents": [{"parts": [{"fileData": {"fileUri": "u1"}}]}],
                           "generationConfig": {"mediaResolution": "MEDIA_RESOLUTION_LOW"}});
        assert_eq!(
            estimate_request(&whole, two, &videos),
            Some(10 * 66 + 10 * 32)
        );
        assert_eq!(estimate_request(&whole, two, &[]), Some(66));
        let unknown = json!({"contents": [{"parts": [{"fileData": {"fileUri": "u2", "mimeType": "video/mp4"}}]}]});
        assert_eq!(estimate_request(&unknown, two, &videos), None);
    }

    #[test]
    fn gaps_over_a_fifth_are_large() {
        assert!(!large_gap(1200, 1000));
        assert!(large_gap(1201, 1000));
        assert!(large_gap(799, 1000));
        assert!(!large_gap(0, 0));
    }
}
