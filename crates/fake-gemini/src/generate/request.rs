//! The reading of a `generateContent` (or `countTokens`) request, strict like Google's:
//! unknown fields, roles, the parts' `data` oneof, file states, inline base64, clips and fps
//! are checked, and what the model would read and see is gathered into a [`Prompt`].

use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::config::{parse_generation_config, GenConfig};
use crate::errors::ApiError;
use crate::files;
use crate::media::{self, Modality};
use crate::router::{check_fields, field, snake};
use crate::state::{FileState, Inner};

const REQUEST_FIELDS: &[&str] = &[
    "model",
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "safetySettings",
    "generationConfig",
    "cachedContent",
    "serviceTier",
    "store",
    "labels",
];
const CONTENT_FIELDS: &[&str] = &["role", "parts"];
const PART_FIELDS: &[&str] = &[
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "toolCall",
    "toolResponse",
    "videoMetadata",
    "thought",
    "thoughtSignature",
    "partMetadata",
    "mediaResolution",
];
/// The members of Part's `data` oneof.
const DATA_FIELDS: &[&str] = &[
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "toolCall",
    "toolResponse",
];
const BLOB_FIELDS: &[&str] = &["mimeType", "data"];
const FILE_DATA_FIELDS: &[&str] = &["fileUri", "mimeType"];
const VIDEO_METADATA_FIELDS: &[&str] = &["startOffset", "endOffset", "fps"];
/// A part's own `mediaResolution` (Gemini 3 and later).
const PART_RESOLUTION_FIELDS: &[&str] = &["level", "numTokens"];
const SAFETY_FIELDS: &[&str] = &["category", "threshold"];

/// One media part of the prompt, as the model "saw" it.
#[derive(Debug, Clone)]
pub(crate) struct MediaPart {
    pub(crate) mime: String,
    pub(crate) size: u64,
    pub(crate) sha_hex: String,
    pub(crate) duration: Option<f64>,
    pub(crate) modality: Modality,
    pub(crate) tokens: u64,
    /// The stretch of a video watched (`videoMetadata` offsets), in seconds; None: all of it.
    pub(crate) clip: Option<(f64, f64)>,
}

/// A validated request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prompt {
    pub(crate) media: Vec<MediaPart>,
    pub(crate) user_text: String,
    /// What a model reads besides the media: the system instruction, each user text part in
    /// order, and the text of the earlier `model` turns of the conversation.
    pub(crate) read: crate::received::Received,
    pub(crate) text_tokens: u64,
    pub(crate) config: GenConfig,
}

impl Prompt {
    pub(crate) fn prompt_tokens(&self) -> u64 {
        self.text_tokens + self.media.iter().map(|m| m.tokens).sum::<u64>()
    }

    /// `promptTokensDetails`: TEXT first, then each media modality in order of appearance.
    pub(crate) fn details(&self) -> Value {
        let mut out: Vec<(Modality, u64)> = Vec::new();
        if self.text_tokens > 0 {
            out.push((Modality::Text, self.text_tokens));
        }
        for m in &self.media {
            match out.iter_mut().find(|(k, _)| *k == m.modality) {
                Some((_, n)) => *n += m.tokens,
                None => out.push((m.modality, m.tokens)),
            }
        }
        Value::Array(
            out.into_iter()
                .map(|(k, n)| json!({"modality": k.as_str(), "tokenCount": n}))
                .collect(),
        )
    }
}

pub(crate) fn text_tokens(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

pub(super) fn expect_object<'a>(
    v: &'a Value,
    at: &str,
) -> Result<&'a Map<String, Value>, ApiError> {
    v.as_object().ok_or_else(|| {
        ApiError::invalid(format!(
            "Invalid JSON payload received. Expected an object at '{at}', got {v}."
        ))
    })
}

pub(super) fn expect_array<'a>(v: &'a Value, at: &str) -> Result<&'a Vec<Value>, ApiError> {
    v.as_array().ok_or_else(|| {
        ApiError::invalid(format!(
            "Invalid JSON payload received. Proto field is repeating, cannot start with {v} at '{at}'."
        ))
    })
}

pub(super) fn invalid_value(at: &str, kind: &str, v: &Value) -> ApiError {
    ApiError::invalid(format!("Invalid value at '{at}' ({kind}), {v}"))
}

pub(super) fn number_at(
    obj: &Map<String, Value>,
    name: &str,
    at: &str,
    kind: &str,
) -> Result<Option<f64>, ApiError> {
    match field(obj, name) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        // Proto JSON also accepts numbers written as strings.
        Some(v @ Value::String(s)) => s
            .parse::<f64>()
            .map(Some)
            .map_err(|_| invalid_value(&format!("{at}.{}", snake(name)), kind, v)),
        Some(v) => Err(invalid_value(&format!("{at}.{}", snake(name)), kind, v)),
    }
}

fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let s = s.trim();
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(s).ok())
}

/// The file id of a Files API uri ("https://host/v1beta/files/abc").
pub(crate) fn file_id_of_uri(uri: &str) -> Option<&str> {
    let rest = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"))?;
    let path = &rest[rest.find('/')?..];
    let path = path.split(['?', '#']).next().unwrap_or(path);
    ["/v1beta/files/", "/v1/files/", "/v1alpha/files/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// Validate a GenerateContentRequest the way Google does, and gather what the answer needs.
pub(super) fn parse_request(
    inner: &mut Inner,
    request: &Value,
    model: &str,
    what: &str,
) -> Result<Prompt, ApiError> {
    let top = expect_object(request, "")?;
    check_fields(top, REQUEST_FIELDS, "")?;
    let mut prompt = Prompt {
        config: GenConfig {
            candidates: 1,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(gc) = field(top, "generationConfig") {
        prompt.config = parse_generation_config(gc, model, what)?;
    }
    if let Some(settings) = field(top, "safetySettings") {
        check_safety_settings(settings)?;
    }
    if let Some(si) = field(top, "systemInstruction") {
        read_system_instruction(si, &mut prompt)?;
    }
    let contents = match field(top, "contents") {
        None => None,
        Some(c) => Some(expect_array(c, "contents")?),
    };
    let contents = contents.filter(|c| !c.is_empty()).ok_or_else(|| {
        ApiError::invalid(format!("* {what}.contents: contents is not specified\n"))
    })?;
    let mut reading = Reading {
        inner,
        model,
        what,
        prompt,
        user_texts: Vec::new(),
    };
    for (i, content) in contents.iter().enumerate() {
        reading.content(content, &format!("contents[{i}]"))?;
    }
    let Reading {
        mut prompt,
        user_texts,
        ..
    } = reading;
    prompt.user_text = user_texts.join(" ");
    prompt.read.texts = user_texts;
    Ok(prompt)
}

fn check_safety_settings(settings: &Value) -> Result<(), ApiError> {
    for (i, s) in expect_array(settings, "safety_settings")?
        .iter()
        .enumerate()
    {
        let at = format!("safety_settings[{i}]");
        check_fields(expect_object(s, &at)?, SAFETY_FIELDS, &at)?;
    }
    Ok(())
}

/// The system instruction's text parts: read by the model, and counted.
fn read_system_instruction(si: &Value, prompt: &mut Prompt) -> Result<(), ApiError> {
    let si = expect_object(si, "system_instruction")?;
    check_fields(si, CONTENT_FIELDS, "system_instruction")?;
    let Some(parts) = field(si, "parts") else {
        return Ok(());
    };
    for (j, part) in expect_array(parts, "system_instruction.parts")?
        .iter()
        .enumerate()
    {
        let at = format!("system_instruction.parts[{j}]");
        let part = expect_object(part, &at)?;
        check_fields(part, PART_FIELDS, &at)?;
        if let Some(t) = field(part, "text").and_then(Value::as_str) {
            prompt.text_tokens += text_tokens(t);
            prompt.read.system.push(t.to_string());
        }
    }
    Ok(())
}

/// A request's contents being read: the prompt gathered so far and what each part needs.
struct Reading<'a> {
    inner: &'a mut Inner,
    model: &'a str,
    /// The request's message name in errors ("GenerateContentRequest", "CountTokensRequest").
    what: &'a str,
    prompt: Prompt,
    user_texts: Vec<String>,
}

/// How the model samples one media part: its clip and frame rate (`videoMetadata`) and how
/// it is billed.
struct Look {
    clip: Option<(f64, f64)>,
    fps: f64,
    billing: media::Billing,
}

impl Reading<'_> {
    /// One turn of the conversation: a `user` or `model` role and its parts.
    fn content(&mut self, content: &Value, at: &str) -> Result<(), ApiError> {
        let what = self.what;
        let content = expect_object(content, at)?;
        check_fields(content, CONTENT_FIELDS, at)?;
        let role = match field(content, "role") {
            None => "user",
            Some(Value::String(r)) if r.is_empty() => "user",
            Some(Value::String(r)) => r.as_str(),
            Some(v) => return Err(invalid_value(&format!("{at}.role"), "TYPE_STRING", v)),
        };
        if role != "user" && role != "model" {
            return Err(ApiError::invalid("Please use a valid role: user, model."));
        }
        let parts = match field(content, "parts") {
            None => None,
            Some(p) => Some(expect_array(p, &format!("{at}.parts"))?),
        };
        let parts = parts.filter(|p| !p.is_empty()).ok_or_else(|| {
            ApiError::invalid(format!(
                "* {what}.{at}.parts: contents.parts must not be empty.\n"
            ))
        })?;
        for (j, part) in parts.iter().enumerate() {
            self.part(part, &format!("{at}.parts[{j}]"), role)?;
        }
        Ok(())
    }

    /// One part: text, inline data, an uploaded file, or anything else counted as text.
    fn part(&mut self, part: &Value, at: &str, role: &str) -> Result<(), ApiError> {
        let part = expect_object(part, at)?;
        check_fields(part, PART_FIELDS, at)?;
        check_one_data_field(part, at, self.what)?;
        let (clip, fps) = parse_video_metadata(part, at)?;
        let billing = part_billing(part, at, self.model, self.prompt.config.resolution)?;
        let look = Look { clip, fps, billing };
        if let Some(t) = field(part, "text") {
            let t = t
                .as_str()
                .ok_or_else(|| invalid_value(&format!("{at}.text"), "TYPE_STRING", t))?;
            self.prompt.text_tokens += text_tokens(t);
            if field(part, "thought") != Some(&Value::Bool(true)) {
                match role {
                    "user" => self.user_texts.push(t.to_string()),
                    _ => self.prompt.read.answers.push(t.to_string()),
                }
            }
        } else if let Some(blob) = field(part, "inlineData") {
            let media = inline_data(blob, &format!("{at}.inline_data"), self.what, &look)?;
            self.prompt.media.push(media);
        } else if let Some(fd) = field(part, "fileData") {
            let media = self.file_data(fd, &format!("{at}.file_data"), &look)?;
            self.prompt.media.push(media);
        } else {
            // Function calls and the like: count their JSON as text.
            let json = serde_json::to_string(part).unwrap_or_default();
            self.prompt.text_tokens += text_tokens(&json);
        }
        Ok(())
    }

    /// A Files API file: it must exist and be ACTIVE; the model sees what was uploaded.
    fn file_data(&mut self, fd: &Value, at: &str, look: &Look) -> Result<MediaPart, ApiError> {
        let what = self.what;
        let fd = expect_object(fd, at)?;
        check_fields(fd, FILE_DATA_FIELDS, at)?;
        let uri = field(fd, "fileUri").and_then(Value::as_str).unwrap_or("");
        if uri.is_empty() {
            return Err(ApiError::invalid(format!(
                "* {what}.{at}.file_uri: file_uri must be set.\n"
            )));
        }
        let id = file_id_of_uri(uri)
            .ok_or_else(|| ApiError::invalid(format!("Invalid or unsupported file uri: {uri}")))?;
        let Some(file) = self.inner.live_file_mut(id) else {
            return Err(files::not_found(id));
        };
        if file.state != FileState::Active {
            return Err(ApiError::failed_precondition(format!(
                "The File {id} is not in an ACTIVE state and usage is not allowed."
            )));
        }
        if let Some(m) = field(fd, "mimeType").and_then(Value::as_str) {
            if media::modality_of(m).is_none() {
                return Err(ApiError::invalid(format!("Unsupported MIME type: {m}")));
            }
        }
        let modality = media::modality_of(&file.mime_type).ok_or_else(|| {
            ApiError::invalid(format!("Unsupported MIME type: {}", file.mime_type))
        })?;
        let tokens = media::media_cost(
            &file.mime_type,
            file.size_bytes,
            file.duration_secs,
            look.clip,
            look.fps,
            look.billing,
            file.has_audio,
        );
        Ok(MediaPart {
            mime: file.mime_type.clone(),
            size: file.size_bytes,
            sha_hex: file.sha256_hex(),
            duration: file.duration_secs,
            modality,
            tokens,
            clip: look.clip,
        })
    }
}

/// Part's `data` is a oneof: exactly one of its members is set.
fn check_one_data_field(part: &Map<String, Value>, at: &str, what: &str) -> Result<(), ApiError> {
    let set: Vec<&str> = DATA_FIELDS
        .iter()
        .copied()
        .filter(|f| field(part, f).is_some())
        .collect();
    match set.as_slice() {
        [] => Err(ApiError::invalid(format!(
            "* {what}.{at}.data: required oneof field 'data' must have one initialized field\n"
        ))),
        [_] => Ok(()),
        [_, second, ..] => Err(ApiError::invalid(format!(
            "Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{second}'"
        ))),
    }
}

/// Inline bytes: a MIME type the model takes and valid base64; the model sees the bytes.
fn inline_data(blob: &Value, at: &str, what: &str, look: &Look) -> Result<MediaPart, ApiError> {
    let blob = expect_object(blob, at)?;
    check_fields(blob, BLOB_FIELDS, at)?;
    let mime = field(blob, "mimeType")
        .and_then(Value::as_str)
        .unwrap_or("");
    if mime.is_empty() {
        return Err(ApiError::invalid(format!(
            "* {what}.{at}.mime_type: inline data must have a mime type.\n"
        )));
    }
    let data = field(blob, "data").unwrap_or(&Value::Null);
    let text = data
        .as_str()
        .ok_or_else(|| invalid_value(&format!("{at}.data"), "TYPE_BYTES", data))?;
    let bytes = decode_base64(text).ok_or_else(|| {
        let shown: String = text.chars().take(40).collect();
        ApiError::invalid(format!(
            "Invalid value at '{at}.data' (TYPE_BYTES), Base64 decoding failed for \"{shown}\""
        ))
    })?;
    let modality = media::modality_of(mime)
        .ok_or_else(|| ApiError::invalid(format!("Unsupported MIME type: {mime}")))?;
    let duration = if media::is_timed(mime) {
        media::sniff_duration(&bytes[..bytes.len().min(media::HEAD_BYTES)])
    } else {
        None
    };
    let head = &bytes[..bytes.len().min(media::HEAD_BYTES)];
    let has_audio =
        modality == Modality::Audio || (modality == Modality::Video && media::sniff_audio(head));
    let tokens = media::media_cost(
        mime,
        bytes.len() as u64,
        duration,
        look.clip,
        look.fps,
        look.billing,
        has_audio,
    );
    Ok(MediaPart {
        mime: mime.to_string(),
        size: bytes.len() as u64,
        sha_hex: hex::encode(Sha256::digest(&bytes)),
        duration,
        modality,
        tokens,
        clip: look.clip,
    })
}

/// How a part is billed: the model's family and the part's resolution, which is its own
/// `mediaResolution: {"level": …}` on Gemini 3 and later (ignored on 2.x, which bills every
/// part at the request's), else the request's.
fn part_billing(
    part: &Map<String, Value>,
    at: &str,
    model: &str,
    request: media::Resolution,
) -> Result<media::Billing, ApiError> {
    let family = media::Family::of(model);
    let mut resolution = request;
    if let Some(own) = field(part, "mediaResolution") {
        let at = format!("{at}.media_resolution");
        let own = expect_object(own, &at)?;
        check_fields(own, PART_RESOLUTION_FIELDS, &at)?;
        if let Some(level) = field(own, "level") {
            let parsed = level.as_str().and_then(media::Resolution::parse);
            let Some(parsed) = parsed else {
                return Err(invalid_value(
                    &format!("{at}.level"),
                    "type.googleapis.com/google.ai.generativelanguage.v1beta.MediaResolution.Level",
                    level,
                ));
            };
            if family.per_part_resolution() && parsed != media::Resolution::Unspecified {
                resolution = parsed;
            }
        }
    }
    Ok(media::Billing { family, resolution })
}

/// `videoMetadata` of a part: the clip (start, end) and the fps (default 1).
fn parse_video_metadata(
    part: &Map<String, Value>,
    at: &str,
) -> Result<(Option<(f64, f64)>, f64), ApiError> {
    let Some(vm) = field(part, "videoMetadata") else {
        return Ok((None, 1.0));
    };
    let at = format!("{at}.video_metadata");
    let vm = expect_object(vm, &at)?;
    check_fields(vm, VIDEO_METADATA_FIELDS, &at)?;
    let offset = |name: &str| -> Result<Option<f64>, ApiError> {
        match field(vm, name) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .and_then(media::parse_duration)
                .filter(|d| *d >= 0.0)
                .map(Some)
                .ok_or_else(|| {
                    invalid_value(
                        &format!("{at}.{}", snake(name)),
                        "type.googleapis.com/google.protobuf.Duration",
                        v,
                    )
                }),
        }
    };
    let start = offset("startOffset")?;
    let end = offset("endOffset")?;
    let fps = number_at(vm, "fps", &at, "TYPE_DOUBLE")?;
    if let Some(f) = fps {
        if !(f > 0.0 && f <= 24.0) {
            return Err(ApiError::invalid(format!(
                "* GenerateContentRequest.{at}.fps: fps must be in the range (0, 24], got {f}.\n"
            )));
        }
    }
    if let (Some(s), Some(e)) = (start, end) {
        if e <= s {
            return Err(ApiError::invalid(format!(
                "* GenerateContentRequest.{at}.end_offset: end_offset must be after start_offset.\n"
            )));
        }
    }
    let clip = match (start, end) {
        (None, None) => None,
        (s, e) => Some((s.unwrap_or(0.0), e.unwrap_or(f64::MAX))),
    };
    Ok((clip, fps.unwrap_or(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_map_to_ids() {
        assert_eq!(
            file_id_of_uri("http://127.0.0.1:9/v1beta/files/abc123"),
            Some("abc123")
        );
        assert_eq!(
            file_id_of_uri("https://generativelanguage.googleapis.com/v1/files/x"),
            Some("x")
        );
        assert_eq!(file_id_of_uri("files/abc"), None);
        assert_eq!(file_id_of_uri("https://www.youtube.com/watch?v=1"), None);
    }

    #[test]
    fn both_base64_alphabets_decode() {
        assert_eq!(decode_base64("-_8"), Some(vec![0xfb, 0xff]));
        assert_eq!(decode_base64("+/8="), Some(vec![0xfb, 0xff]));
        assert_eq!(decode_base64("not base64!"), None);
    }
}
