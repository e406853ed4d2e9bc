//! `models/{model}:generateContent`, `:streamGenerateContent` (SSE or JSON array) and
//! `:countTokens`: strict request validation like Google's (unknown fields, roles, parts, file
//! states, inline base64, fps), deterministic token counts, and an answer that proves which
//! bytes arrived (or JSON built from the requested schema).

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::answer::{
    blocked_response, build_answer, finish_only_response, stream_responses, unary_response,
};
use crate::errors::{json_ok, ApiError};
use crate::files;
use crate::media::{self, Modality};
use crate::router::{check_fields, field, snake};
use crate::state::{FileState, Inner, Shared};
use crate::Fault;

/// How the answer is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `:generateContent`: one JSON object.
    Unary,
    /// `:streamGenerateContent?alt=sse`: `data: {json}` events.
    Sse,
    /// `:streamGenerateContent` without `alt=sse`: a JSON array of responses.
    JsonArray,
}

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
const GENERATION_CONFIG_FIELDS: &[&str] = &[
    "stopSequences",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "_responseJsonSchema",
    "responseModalities",
    "candidateCount",
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseLogprobs",
    "logprobs",
    "enableEnhancedCivicAnswers",
    "speechConfig",
    "thinkingConfig",
    "imageConfig",
    "mediaResolution",
];
const THINKING_FIELDS: &[&str] = &["includeThoughts", "thinkingBudget", "thinkingLevel"];
const SAFETY_FIELDS: &[&str] = &["category", "threshold"];
/// Fields of Gemini's OpenAPI-subset `Schema` (responseSchema); others are refused.
const SCHEMA_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const RESPONSE_MIME_TYPES: &[&str] = &[
    "text/plain",
    "application/json",
    "application/xml",
    "application/yaml",
    "text/x.enum",
];
const MEDIA_RESOLUTIONS: &[&str] = &[
    "MEDIA_RESOLUTION_UNSPECIFIED",
    "MEDIA_RESOLUTION_LOW",
    "MEDIA_RESOLUTION_MEDIUM",
    "MEDIA_RESOLUTION_HIGH",
    "MEDIA_RESOLUTION_ULTRA_HIGH",
];

/// One media part of the prompt, as the model "saw" it.
#[derive(Debug, Clone)]
pub(crate) struct MediaPart {
    pub(crate) mime: String,
    pub(crate) size: u64,
    pub(crate) sha_hex: String,
    pub(crate) duration: Option<f64>,
    pub(crate) modality: Modality,
    pub(crate) tokens: u64,
}

/// The generation settings that shape the answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct GenConfig {
    pub(crate) max_output: Option<u64>,
    pub(crate) response_mime: Option<String>,
    /// `responseSchema` or `responseJsonSchema`.
    pub(crate) schema: Option<Value>,
    pub(crate) stop: Vec<String>,
    pub(crate) candidates: u64,
    pub(crate) thinking_budget: Option<i64>,
    pub(crate) thinking_level: Option<String>,
    pub(crate) include_thoughts: bool,
    /// `generationConfig.mediaResolution`: every part's, unless a part sets its own.
    pub(crate) resolution: media::Resolution,
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

pub(crate) fn model_known(model: &str) -> bool {
    crate::models::known(model)
}

pub(crate) fn model_not_found(model: &str, version: &str) -> ApiError {
    ApiError::new(
        404,
        format!(
            "models/{model} is not found for API version {version}, or is not supported for \
             generateContent. Call ListModels to see the list of available models and their \
             supported methods."
        ),
    )
}

pub(crate) fn thinking_model(model: &str) -> bool {
    model.contains("2.5") || model.starts_with("gemini-3")
}

pub(crate) fn is_pro(model: &str) -> bool {
    model.contains("-pro")
}

/// The `generateContent` family.
pub(crate) async fn handle(
    shared: &Shared,
    version: &str,
    model: &str,
    mode: Mode,
    body: &[u8],
    injected: Option<Fault>,
) -> Response {
    let delay = shared.lock().generate_delay;
    if delay > Duration::ZERO {
        tokio::time::sleep(delay).await;
    }
    if !model_known(model) {
        return model_not_found(model, version).into_response();
    }
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return ApiError::invalid(format!("Invalid JSON payload received. {e}")).into_response()
        }
    };
    let (prompt, reply_text, response_id) = {
        let mut inner = shared.lock();
        inner.generate_bodies.push(request.clone());
        let prompt = match parse_request(&mut inner, &request, model, "GenerateContentRequest") {
            Ok(p) => p,
            Err(e) => return e.into_response(),
        };
        (prompt, inner.reply_text.clone(), inner.new_id(22))
    };

    let responses = match injected {
        Some(Fault::Blocked(reason)) => {
            vec![blocked_response(&prompt, &reason, model, &response_id)]
        }
        Some(Fault::FinishReason(reason)) => {
            vec![finish_only_response(&prompt, &reason, model, &response_id)]
        }
        _ => {
            let answer = build_answer(&prompt, reply_text, model);
            match mode {
                Mode::Unary => vec![unary_response(&prompt, &answer, model, &response_id)],
                Mode::Sse | Mode::JsonArray => {
                    stream_responses(&prompt, &answer, model, &response_id)
                }
            }
        }
    };
    match mode {
        Mode::Unary => json_ok(&responses[0]),
        Mode::Sse => {
            let events: Vec<Result<String, std::convert::Infallible>> = responses
                .iter()
                .map(|r| Ok(format!("data: {}\r\n\r\n", r)))
                .collect();
            let mut resp = (
                StatusCode::OK,
                Body::from_stream(futures_util::stream::iter(events)),
            )
                .into_response();
            resp.headers_mut().insert(
                axum::http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            resp
        }
        Mode::JsonArray => {
            let parts: Vec<String> = responses
                .iter()
                .map(|r| serde_json::to_string_pretty(r).unwrap_or_default())
                .collect();
            let body = format!("[{}]", parts.join("\n,\r\n"));
            let mut resp = (StatusCode::OK, body).into_response();
            resp.headers_mut().insert(
                axum::http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=UTF-8"),
            );
            resp
        }
    }
}

/// `models/{model}:countTokens` with `contents` or a whole `generateContentRequest`.
pub(crate) fn count_tokens(shared: &Shared, version: &str, model: &str, body: &[u8]) -> Response {
    if !model_known(model) {
        return model_not_found(model, version).into_response();
    }
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return ApiError::invalid(format!("Invalid JSON payload received. {e}")).into_response()
        }
    };
    let Value::Object(top) = &request else {
        return ApiError::invalid("Invalid JSON payload received. Expected an object.")
            .into_response();
    };
    if let Err(e) = check_fields(top, &["contents", "generateContentRequest"], "") {
        return e.into_response();
    }
    let inner_request = match field(top, "generateContentRequest") {
        Some(r) => r.clone(),
        None => json!({ "contents": top.get("contents").cloned().unwrap_or(Value::Null) }),
    };
    let mut inner = shared.lock();
    match parse_request(&mut inner, &inner_request, model, "CountTokensRequest") {
        Ok(p) => json_ok(&json!({
            "totalTokens": p.prompt_tokens(),
            "promptTokensDetails": p.details(),
        })),
        Err(e) => e.into_response(),
    }
}

fn expect_object<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>, ApiError> {
    v.as_object().ok_or_else(|| {
        ApiError::invalid(format!(
            "Invalid JSON payload received. Expected an object at '{at}', got {v}."
        ))
    })
}

fn expect_array<'a>(v: &'a Value, at: &str) -> Result<&'a Vec<Value>, ApiError> {
    v.as_array().ok_or_else(|| {
        ApiError::invalid(format!(
            "Invalid JSON payload received. Proto field is repeating, cannot start with {v} at '{at}'."
        ))
    })
}

fn invalid_value(at: &str, kind: &str, v: &Value) -> ApiError {
    ApiError::invalid(format!("Invalid value at '{at}' ({kind}), {v}"))
}

fn number_at(
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
fn parse_request(
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
        for (i, s) in expect_array(settings, "safety_settings")?
            .iter()
            .enumerate()
        {
            let at = format!("safety_settings[{i}]");
            check_fields(expect_object(s, &at)?, SAFETY_FIELDS, &at)?;
        }
    }

    if let Some(si) = field(top, "systemInstruction") {
        let si = expect_object(si, "system_instruction")?;
        check_fields(si, CONTENT_FIELDS, "system_instruction")?;
        if let Some(parts) = field(si, "parts") {
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
        }
    }

    let contents = match field(top, "contents") {
        None => None,
        Some(c) => Some(expect_array(c, "contents")?),
    };
    let contents = contents.filter(|c| !c.is_empty()).ok_or_else(|| {
        ApiError::invalid(format!("* {what}.contents: contents is not specified\n"))
    })?;
    let mut user_texts: Vec<String> = Vec::new();
    for (i, content) in contents.iter().enumerate() {
        let at = format!("contents[{i}]");
        let content = expect_object(content, &at)?;
        check_fields(content, CONTENT_FIELDS, &at)?;
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
            let at = format!("{at}.parts[{j}]");
            let part = expect_object(part, &at)?;
            check_fields(part, PART_FIELDS, &at)?;
            let set: Vec<&str> = DATA_FIELDS
                .iter()
                .copied()
                .filter(|f| field(part, f).is_some())
                .collect();
            match set.as_slice() {
                [] => {
                    return Err(ApiError::invalid(format!(
                        "* {what}.{at}.data: required oneof field 'data' must have one initialized field\n"
                    )))
                }
                [_] => {}
                [_, second, ..] => {
                    return Err(ApiError::invalid(format!(
                        "Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{second}'"
                    )))
                }
            }
            let (clip, fps) = parse_video_metadata(part, &at)?;
            let billing = part_billing(part, &at, model, prompt.config.resolution)?;
            if let Some(t) = field(part, "text") {
                let t = t
                    .as_str()
                    .ok_or_else(|| invalid_value(&format!("{at}.text"), "TYPE_STRING", t))?;
                prompt.text_tokens += text_tokens(t);
                if field(part, "thought") != Some(&Value::Bool(true)) {
                    match role {
                        "user" => user_texts.push(t.to_string()),
                        _ => prompt.read.answers.push(t.to_string()),
                    }
                }
            } else if let Some(blob) = field(part, "inlineData") {
                let at = format!("{at}.inline_data");
                let blob = expect_object(blob, &at)?;
                check_fields(blob, BLOB_FIELDS, &at)?;
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
                let has_audio = modality == Modality::Audio
                    || (modality == Modality::Video && media::sniff_audio(head));
                let tokens = media::media_cost(
                    mime,
                    bytes.len() as u64,
                    duration,
                    clip,
                    fps,
                    billing,
                    has_audio,
                );
                prompt.media.push(MediaPart {
                    mime: mime.to_string(),
                    size: bytes.len() as u64,
                    sha_hex: hex::encode(Sha256::digest(&bytes)),
                    duration,
                    modality,
                    tokens,
                });
            } else if let Some(fd) = field(part, "fileData") {
                let at = format!("{at}.file_data");
                let fd = expect_object(fd, &at)?;
                check_fields(fd, FILE_DATA_FIELDS, &at)?;
                let uri = field(fd, "fileUri").and_then(Value::as_str).unwrap_or("");
                if uri.is_empty() {
                    return Err(ApiError::invalid(format!(
                        "* {what}.{at}.file_uri: file_uri must be set.\n"
                    )));
                }
                let id = file_id_of_uri(uri).ok_or_else(|| {
                    ApiError::invalid(format!("Invalid or unsupported file uri: {uri}"))
                })?;
                let Some(file) = inner.live_file_mut(id) else {
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
                    clip,
                    fps,
                    billing,
                    file.has_audio,
                );
                prompt.media.push(MediaPart {
                    mime: file.mime_type.clone(),
                    size: file.size_bytes,
                    sha_hex: file.sha256_hex(),
                    duration: file.duration_secs,
                    modality,
                    tokens,
                });
            } else {
                // Function calls and the like: count their JSON as text.
                let json = serde_json::to_string(part).unwrap_or_default();
                prompt.text_tokens += text_tokens(&json);
            }
        }
    }
    prompt.user_text = user_texts.join(" ");
    prompt.read.texts = user_texts;
    Ok(prompt)
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

fn parse_generation_config(gc: &Value, model: &str, what: &str) -> Result<GenConfig, ApiError> {
    let at = "generation_config";
    let gc = expect_object(gc, at)?;
    check_fields(gc, GENERATION_CONFIG_FIELDS, at)?;
    let mut config = GenConfig {
        candidates: 1,
        ..Default::default()
    };
    let bad_range = |name: &str, rule: &str| {
        ApiError::invalid(format!("* {what}.generation_config.{name}: {rule}\n"))
    };
    if let Some(t) = number_at(gc, "temperature", at, "TYPE_FLOAT")? {
        if !(0.0..=2.0).contains(&t) {
            return Err(bad_range(
                "temperature",
                "temperature must be in the range [0.0, 2.0].",
            ));
        }
    }
    if let Some(p) = number_at(gc, "topP", at, "TYPE_FLOAT")? {
        if !(0.0..=1.0).contains(&p) {
            return Err(bad_range("top_p", "top_p must be in the range [0.0, 1.0]."));
        }
    }
    number_at(gc, "topK", at, "TYPE_INT32")?;
    if let Some(n) = number_at(gc, "candidateCount", at, "TYPE_INT32")? {
        if !(1.0..=8.0).contains(&n) || n.fract() != 0.0 {
            return Err(bad_range(
                "candidate_count",
                "candidate_count must be in the range [1, 8].",
            ));
        }
        config.candidates = n as u64;
    }
    if let Some(n) = number_at(gc, "maxOutputTokens", at, "TYPE_INT32")? {
        if n < 1.0 || n.fract() != 0.0 {
            return Err(bad_range(
                "max_output_tokens",
                "max_output_tokens must be positive.",
            ));
        }
        config.max_output = Some(n as u64);
    }
    if let Some(stops) = field(gc, "stopSequences") {
        for s in expect_array(stops, "generation_config.stop_sequences")? {
            match s.as_str() {
                Some(s) if !s.is_empty() => config.stop.push(s.to_string()),
                _ => {}
            }
        }
        if config.stop.len() > 5 {
            return Err(bad_range(
                "stop_sequences",
                "at most 5 stop sequences are allowed.",
            ));
        }
    }
    if let Some(m) = field(gc, "responseMimeType") {
        let m = m.as_str().ok_or_else(|| {
            invalid_value("generation_config.response_mime_type", "TYPE_STRING", m)
        })?;
        if !m.is_empty() {
            if !RESPONSE_MIME_TYPES.contains(&m) {
                return Err(bad_range(
                    "response_mime_type",
                    "allowed mimetypes are `text/plain`, `application/json`, `application/xml`, \
                     `application/yaml` and `text/x.enum`.",
                ));
            }
            config.response_mime = Some(m.to_string());
        }
    }
    let openapi = field(gc, "responseSchema");
    let json_schema = field(gc, "responseJsonSchema").or_else(|| gc.get("_responseJsonSchema"));
    if openapi.is_some() && json_schema.is_some() {
        return Err(bad_range(
            "response_schema",
            "only one of response_schema and response_json_schema may be set.",
        ));
    }
    if let Some(s) = openapi {
        check_openapi_schema(s, "generation_config.response_schema")?;
    }
    if let Some(s) = openapi.or(json_schema) {
        let mime = config.response_mime.as_deref().unwrap_or("text/plain");
        if mime != "application/json" && mime != "text/x.enum" {
            return Err(bad_range(
                if openapi.is_some() {
                    "response_schema"
                } else {
                    "response_json_schema"
                },
                "response_mime_type must be `application/json` or `text/x.enum` when a response \
                 schema is set.",
            ));
        }
        config.schema = Some(s.clone());
    }
    if let Some(r) = field(gc, "mediaResolution") {
        let r = r.as_str().unwrap_or("");
        if !MEDIA_RESOLUTIONS.contains(&r) {
            return Err(invalid_value(
                "generation_config.media_resolution",
                "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig.MediaResolution",
                &json!(r),
            ));
        }
        // ULTRA_HIGH is a per-part setting only.
        if r == "MEDIA_RESOLUTION_ULTRA_HIGH" {
            return Err(bad_range(
                "media_resolution",
                "MEDIA_RESOLUTION_ULTRA_HIGH is only supported per part, not in generation_config.",
            ));
        }
        config.resolution = media::Resolution::parse(r).unwrap_or_default();
    }
    if let Some(tc) = field(gc, "thinkingConfig") {
        let at = "generation_config.thinking_config";
        let tc = expect_object(tc, at)?;
        check_fields(tc, THINKING_FIELDS, at)?;
        if let Some(b) = number_at(tc, "thinkingBudget", at, "TYPE_INT32")? {
            if b == 0.0 && is_pro(model) && thinking_model(model) {
                return Err(ApiError::invalid(
                    "Budget 0 is invalid. This model only works in thinking mode.",
                ));
            }
            config.thinking_budget = Some(b as i64);
        }
        if let Some(l) = field(tc, "thinkingLevel") {
            let l = l.as_str().unwrap_or("").to_ascii_lowercase();
            let l = l.strip_prefix("thinking_level_").unwrap_or(&l).to_string();
            if !matches!(
                l.as_str(),
                "minimal" | "low" | "medium" | "high" | "unspecified"
            ) {
                return Err(invalid_value(
                    "generation_config.thinking_config.thinking_level",
                    "type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel",
                    &json!(l),
                ));
            }
            config.thinking_level = Some(l);
        }
        config.include_thoughts = field(tc, "includeThoughts") == Some(&Value::Bool(true));
    }
    Ok(config)
}

/// `responseSchema` only takes the fields of Gemini's Schema message.
fn check_openapi_schema(s: &Value, at: &str) -> Result<(), ApiError> {
    let obj = expect_object(s, at)?;
    check_fields(obj, SCHEMA_FIELDS, at)?;
    if let Some(Value::Object(props)) = field(obj, "properties") {
        for (name, sub) in props {
            check_openapi_schema(sub, &format!("{at}.properties[{name}].value"))?;
        }
    }
    if let Some(items) = field(obj, "items") {
        check_openapi_schema(items, &format!("{at}.items"))?;
    }
    if let Some(Value::Array(branches)) = field(obj, "anyOf") {
        for (i, b) in branches.iter().enumerate() {
            check_openapi_schema(b, &format!("{at}.any_of[{i}]"))?;
        }
    }
    Ok(())
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

    #[test]
    fn models_are_checked() {
        assert!(model_known("gemini-3.5-flash-lite"));
        assert!(!model_known("gemini-2.5-flash"));
        assert!(!model_known("gpt-4o"));
        assert!(!model_known("gemini-"));
    }
}
