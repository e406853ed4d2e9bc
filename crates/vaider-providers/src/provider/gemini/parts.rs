//! The parts of a Gemini request: images inline at their resolution, an uploaded video as its
//! sampling plan says (clips, keyframes or the whole file), and the estimate of the prompt
//! tokens they make, checked against what Gemini counted.

use base64::Engine as _;
use serde_json::{json, Value};

use super::*;

/// A request's contents as they are built: the parts in order, the resolution the whole
/// request must go at, the note of a settled plan (it goes into the prompt), and each
/// uploaded video's uri, length and sound (for the estimate).
#[derive(Default)]
pub(super) struct Contents {
    pub(super) parts: Vec<Value>,
    resolution: Option<Resolution>,
    note: Option<String>,
    videos: Vec<(String, Option<f64>, bool)>,
}

impl Contents {
    /// An uploaded file: a video as its settled plan says (all of it without one), or an
    /// image too large to go inline.
    pub(super) fn add_file(
        &mut self,
        file: &files::UploadedFile,
        media: &MediaInfo,
        rules: TokenRules,
        sending: Option<&Sending>,
    ) {
        let mut file_data =
            json!({"fileData": {"fileUri": file.uri, "mimeType": gemini_mime(media)}});
        if media.kind == vaider_media::media::MediaKind::Image {
            // An image too large to go inline: a screenshot all the same.
            set_part_resolution(&mut file_data, rules.screenshot_setting());
        } else {
            self.videos
                .push((file.uri.clone(), file.video_seconds, false));
        }
        let Some(sending) = sending else {
            self.parts.push(file_data);
            return;
        };
        let planned = add_planned(&mut self.parts, file_data, sending, rules);
        self.resolution = self.resolution.or(planned);
        self.note = sending.note.clone();
        if let (Some(plan), Some(video)) = (&sending.plan, self.videos.last_mut()) {
            video.1 = video.1.or(Some(plan.duration));
            video.2 = plan.has_audio;
        }
    }

    /// The generateContent body (the prompt last, with the plan's note), and the estimate of
    /// its prompt tokens.
    pub(super) fn request(
        mut self,
        job: &ProviderJob<'_>,
        rules: TokenRules,
    ) -> (Value, Option<u64>) {
        match &self.note {
            Some(note) => self
                .parts
                .push(json!({"text": (job.user_prompt_with)(note)})),
            None => self.parts.push(json!({"text": job.user_prompt})),
        }
        let mut generation_config = sampling_and_thinking(job);
        if let Some(resolution) = self.resolution {
            generation_config["mediaResolution"] = json!(resolution.api_name());
        }
        if let Some(schema) = &job.response_schema {
            generation_config["responseMimeType"] = json!("application/json");
            generation_config["responseJsonSchema"] = schema.clone();
        }
        let body = json!({
            "systemInstruction": {"parts": [{"text": job.system_prompt}]},
            "contents": [{"role": "user", "parts": self.parts}],
            "generationConfig": generation_config,
        });
        let estimate = estimate_of(&body, rules, &self.videos);
        (body, estimate)
    }
}

/// The start of `generationConfig`: the temperature and the thinking level the model's family
/// is asked with for this job (`crate::guidance`): none and a level on Gemini 3, 0.2 as
/// ever on Gemini 2.x.
fn sampling_and_thinking(job: &ProviderJob<'_>) -> Value {
    use crate::guidance::{asking, Reasoning};
    let asked = asking(crate::settings::Adapter::Gemini, job.model, job.job);
    let mut config = json!({});
    if let Some(temperature) = asked.temperature {
        config["temperature"] = json!(temperature);
    }
    if let Some(Reasoning::ThinkingLevel(level)) = asked.reasoning {
        config["thinkingConfig"] = json!({"thinkingLevel": level.as_str()});
    }
    config
}

pub(super) fn add_image(
    parts: &mut Vec<Value>,
    image: &vaider_media::image_fit::FittedImage,
    label: Option<&str>,
    setting: Setting,
) {
    if let Some(label) = label {
        parts.push(json!({"text": label}));
    }
    let mut part = json!({"inlineData": {"mimeType": image.mime_type, "data": base64::engine::general_purpose::STANDARD.encode(&image.bytes)}});
    set_part_resolution(&mut part, setting);
    parts.push(part);
}

/// The resolution an image goes at: a keyframe at what a recording's frame needs, an image
/// the agent sent at what its text needs (`TokenRules`).
pub(super) fn image_setting(rules: TokenRules, keyframe: bool) -> Setting {
    if keyframe {
        rules.keyframe_setting()
    } else {
        rules.screenshot_setting()
    }
}

/// A part's own `mediaResolution` (Gemini 3 and later; the rules never ask it of others).
fn set_part_resolution(part: &mut Value, setting: Setting) {
    if let Setting::Part(resolution) = setting {
        part["mediaResolution"] = json!({"level": resolution.api_name()});
    }
}

/// The uploaded video as its plan says: one `fileData` part per clip (each with its offsets,
/// rate and resolution), or the keyframes inline, or the whole file. Returns the resolution
/// the whole request must go at, if any. (The plan's note goes into the prompt.)
fn add_planned(
    parts: &mut Vec<Value>,
    file_data: Value,
    sending: &Sending,
    rules: TokenRules,
) -> Option<Resolution> {
    if let Some(clips) = &sending.clips {
        parts.extend(clips.clips.iter().map(|clip| {
            let mut part = file_data.clone();
            part["videoMetadata"] = json!({
                "startOffset": format!("{:.3}s", clip.start),
                "endOffset": format!("{:.3}s", clip.end),
                "fps": clip.fps,
            });
            set_part_resolution(&mut part, clip.setting);
            part
        }));
        return match clips.setting {
            Setting::Request(resolution) => Some(resolution),
            _ => None,
        };
    }
    if sending.images.is_empty() {
        parts.push(file_data);
    }
    // Keyframes: the upload goes unused and is deleted with the others.
    for image in &sending.images {
        if let MediaPart::Image {
            image,
            label,
            keyframe,
        } = image
        {
            add_image(
                parts,
                image,
                label.as_deref(),
                image_setting(rules, *keyframe),
            );
        }
    }
    None
}

/// The estimate of the request's prompt tokens, at the rules of the model called; None when
/// a video's length is unknown. A video's sound is known from its plan (none without one:
/// Playwright records none).
fn estimate_of(
    body: &Value,
    rules: TokenRules,
    videos: &[(String, Option<f64>, bool)],
) -> Option<u64> {
    let files: Vec<tokens::VideoFile<'_>> = videos
        .iter()
        .filter_map(|(uri, seconds, has_audio)| {
            Some(tokens::VideoFile {
                uri,
                seconds: (*seconds)?,
                has_audio: *has_audio,
            })
        })
        .collect();
    tokens::estimate_request(body, rules, &files)
}

/// A warning when Gemini counted far from the estimate: the token rules may have changed.
pub(super) fn warn_on_gap(model: &str, usage: &Usage) {
    if let Some(estimate) = usage.estimated_input_tokens {
        if tokens::large_gap(estimate, usage.input_tokens) {
            tracing::warn!(
                model,
                estimate,
                counted = usage.input_tokens,
                "Gemini counted {} input tokens where Vaider estimated {estimate} (more than 20 % apart): \
                 the token rules for this model may have changed",
                usage.input_tokens
            );
        }
    }
}
