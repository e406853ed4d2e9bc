//! What the model is shown by each generateContent request, as Gemini samples it: the frame
//! times of each video part (a clip from its `startOffset` at its `fps`, at least one frame,
//! up to its `endOffset`; a whole video at one frame a second) and each inline image, with the
//! time the text part just before it names (`Frame at 01:02.25:`). Tests read it to check, from
//! the service's side, which moments of a recording reached the model.

use serde_json::Value;

use crate::media;

/// The frames and images one request showed the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// Each video part, in order.
    pub videos: Vec<SeenVideo>,
    /// Each inline image, in order.
    pub images: Vec<SeenImage>,
}

/// One video part: the clip Gemini samples (the whole file when no offsets were given).
#[derive(Debug, Clone, PartialEq)]
pub struct SeenVideo {
    pub start: f64,
    pub end: f64,
    pub fps: f64,
    /// Seconds into the video of each frame sampled.
    pub frames: Vec<f64>,
}

/// One inline image.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenImage {
    pub mime_type: String,
    /// The time (`mm:ss.s`) named at the end of the text part just before it, if any.
    pub at: Option<f64>,
}

impl Seen {
    /// Every moment shown, video frames and timed images alike, in time order.
    pub fn moments(&self) -> Vec<f64> {
        let mut all: Vec<f64> = self
            .videos
            .iter()
            .flat_map(|v| v.frames.iter().copied())
            .chain(self.images.iter().filter_map(|i| i.at))
            .collect();
        all.sort_by(f64::total_cmp);
        all
    }
}

/// What a request body showed; `duration` gives a stored file's length from its `fileUri`.
pub(crate) fn seen(request: &Value, duration: impl Fn(&str) -> Option<f64>) -> Seen {
    let mut seen = Seen::default();
    let parts = request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten());
    let mut label: Option<f64> = None;
    for part in parts {
        if let Some(text) = part["text"].as_str() {
            label = named_time(text);
        } else if let Some(blob) = part.get("inlineData") {
            seen.images.push(SeenImage {
                mime_type: blob["mimeType"].as_str().unwrap_or_default().to_string(),
                at: label.take(),
            });
        } else if let Some(file) = part.get("fileData") {
            let uri = file["fileUri"].as_str().unwrap_or_default();
            let length = duration(uri).unwrap_or(media::DEFAULT_VIDEO_SECS);
            seen.videos.push(sampled(part.get("videoMetadata"), length));
            label = None;
        }
    }
    seen
}

/// The frames Gemini samples from a video part: from the start offset every 1/fps (one frame
/// a second by default), at least one, before the end offset or the video's end.
fn sampled(metadata: Option<&Value>, length: f64) -> SeenVideo {
    let offset = |name: &str| {
        metadata
            .and_then(|m| m[name].as_str())
            .and_then(media::parse_duration)
    };
    let start = offset("startOffset").unwrap_or(0.0).min(length);
    let end = offset("endOffset").unwrap_or(length).min(length);
    let fps = metadata
        .and_then(|m| m["fps"].as_f64())
        .filter(|f| *f > 0.0)
        .unwrap_or(1.0);
    let count = (((end - start).max(0.0) * fps).ceil() as u64).max(1);
    SeenVideo {
        start,
        end,
        fps,
        frames: (0..count).map(|k| start + k as f64 / fps).collect(),
    }
}

/// The time a label ends with: `... 01:02.25:` is 62.25 s.
fn named_time(text: &str) -> Option<f64> {
    let word = text.trim().trim_end_matches(':').rsplit(' ').next()?;
    let (minutes, seconds) = word.split_once(':')?;
    let minutes: u32 = minutes.parse().ok()?;
    let seconds: f64 = seconds.parse().ok()?;
    Some(f64::from(minutes) * 60.0 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clips_whole_videos_and_labelled_images_are_read() {
        let request = json!({"contents": [{"parts": [
            {"text": "note"},
            {"fileData": {"fileUri": "files/a"}, "videoMetadata": {"startOffset": "4s", "endOffset": "5.5s", "fps": 2.0}},
            {"fileData": {"fileUri": "files/a"}, "videoMetadata": {"startOffset": "10s", "endOffset": "20s", "fps": 0.0999}},
            {"fileData": {"fileUri": "files/a"}},
            {"text": "Frame at 01:02.25:"},
            {"inlineData": {"mimeType": "image/jpeg", "data": ""}},
            {"inlineData": {"mimeType": "image/png", "data": ""}},
        ]}]});
        let seen = seen(&request, |_| Some(3.5));
        assert_eq!(
            seen.videos[0].frames,
            vec![3.5],
            "clipped to the video's end"
        );
        let seen = super::seen(&request, |_| Some(30.0));
        assert_eq!(seen.videos[0].frames, vec![4.0, 4.5, 5.0]);
        assert_eq!(seen.videos[1].frames, vec![10.0]);
        assert_eq!(seen.videos[2].frames.len(), 30);
        assert_eq!(seen.images[0].at, Some(62.25));
        assert_eq!(seen.images[1].at, None, "an unlabelled image");
    }
}
