//! The reading of a request's `generationConfig`, strict like Google's: each setting's type
//! and range, the response's type and schema, the media resolution and thinking.

use serde_json::{json, Map, Value};

use super::request::{expect_array, expect_object, invalid_value, number_at};
use super::{is_pro, thinking_model};
use crate::errors::ApiError;
use crate::media;
use crate::router::{check_fields, field};

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

pub(super) fn parse_generation_config(
    gc: &Value,
    model: &str,
    what: &str,
) -> Result<GenConfig, ApiError> {
    let at = "generation_config";
    let gc = expect_object(gc, at)?;
    check_fields(gc, GENERATION_CONFIG_FIELDS, at)?;
    let mut config = GenConfig {
        candidates: 1,
        ..Default::default()
    };
    read_sampling(gc, what, &mut config)?;
    if let Some(stops) = field(gc, "stopSequences") {
        config.stop = read_stop_sequences(stops, what)?;
    }
    read_response_format(gc, what, &mut config)?;
    if let Some(r) = field(gc, "mediaResolution") {
        config.resolution = read_media_resolution(r, what)?;
    }
    if let Some(tc) = field(gc, "thinkingConfig") {
        read_thinking(tc, model, &mut config)?;
    }
    Ok(config)
}

/// A value out of its range, in Google's words.
fn bad_range(what: &str, name: &str, rule: &str) -> ApiError {
    ApiError::invalid(format!("* {what}.generation_config.{name}: {rule}\n"))
}

/// temperature, topP, topK, candidateCount and maxOutputTokens, each within its range.
fn read_sampling(
    gc: &Map<String, Value>,
    what: &str,
    config: &mut GenConfig,
) -> Result<(), ApiError> {
    let at = "generation_config";
    if let Some(t) = number_at(gc, "temperature", at, "TYPE_FLOAT")? {
        if !(0.0..=2.0).contains(&t) {
            return Err(bad_range(
                what,
                "temperature",
                "temperature must be in the range [0.0, 2.0].",
            ));
        }
    }
    if let Some(p) = number_at(gc, "topP", at, "TYPE_FLOAT")? {
        if !(0.0..=1.0).contains(&p) {
            return Err(bad_range(
                what,
                "top_p",
                "top_p must be in the range [0.0, 1.0].",
            ));
        }
    }
    number_at(gc, "topK", at, "TYPE_INT32")?;
    if let Some(n) = number_at(gc, "candidateCount", at, "TYPE_INT32")? {
        if !(1.0..=8.0).contains(&n) || n.fract() != 0.0 {
            return Err(bad_range(
                what,
                "candidate_count",
                "candidate_count must be in the range [1, 8].",
            ));
        }
        config.candidates = n as u64;
    }
    if let Some(n) = number_at(gc, "maxOutputTokens", at, "TYPE_INT32")? {
        if n < 1.0 || n.fract() != 0.0 {
            return Err(bad_range(
                what,
                "max_output_tokens",
                "max_output_tokens must be positive.",
            ));
        }
        config.max_output = Some(n as u64);
    }
    Ok(())
}

/// The non-empty stop sequences, at most five.
fn read_stop_sequences(stops: &Value, what: &str) -> Result<Vec<String>, ApiError> {
    let mut stop = Vec::new();
    for s in expect_array(stops, "generation_config.stop_sequences")? {
        match s.as_str() {
            Some(s) if !s.is_empty() => stop.push(s.to_string()),
            _ => {}
        }
    }
    if stop.len() > 5 {
        return Err(bad_range(
            what,
            "stop_sequences",
            "at most 5 stop sequences are allowed.",
        ));
    }
    Ok(stop)
}

/// responseMimeType and one response schema (OpenAPI or JSON Schema), which needs JSON or
/// an enum as the answer's type.
fn read_response_format(
    gc: &Map<String, Value>,
    what: &str,
    config: &mut GenConfig,
) -> Result<(), ApiError> {
    if let Some(m) = field(gc, "responseMimeType") {
        let m = m.as_str().ok_or_else(|| {
            invalid_value("generation_config.response_mime_type", "TYPE_STRING", m)
        })?;
        if !m.is_empty() {
            if !RESPONSE_MIME_TYPES.contains(&m) {
                return Err(bad_range(
                    what,
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
            what,
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
                what,
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
    Ok(())
}

/// The request's mediaResolution; ULTRA_HIGH is a per-part setting only.
fn read_media_resolution(r: &Value, what: &str) -> Result<media::Resolution, ApiError> {
    let r = r.as_str().unwrap_or("");
    if !MEDIA_RESOLUTIONS.contains(&r) {
        return Err(invalid_value(
            "generation_config.media_resolution",
            "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig.MediaResolution",
            &json!(r),
        ));
    }
    if r == "MEDIA_RESOLUTION_ULTRA_HIGH" {
        return Err(bad_range(
            what,
            "media_resolution",
            "MEDIA_RESOLUTION_ULTRA_HIGH is only supported per part, not in generation_config.",
        ));
    }
    Ok(media::Resolution::parse(r).unwrap_or_default())
}

/// thinkingConfig: a budget (never 0 on a Pro thinking model), a level, the thoughts shown.
fn read_thinking(tc: &Value, model: &str, config: &mut GenConfig) -> Result<(), ApiError> {
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
        check_level(model, &l)?;
        config.thinking_level = Some(l);
    }
    config.include_thoughts = field(tc, "includeThoughts") == Some(&Value::Bool(true));
    Ok(())
}

/// A thinking level is Gemini 3's (earlier models answer 400), and one the model has.
fn check_level(model: &str, level: &str) -> Result<(), ApiError> {
    if level == "unspecified" {
        return Ok(());
    }
    if !crate::guidance::gemini_3(model) {
        return Err(ApiError::invalid(
            "Thinking level is not supported for this model.",
        ));
    }
    if !crate::guidance::supports_level(model, level) {
        return Err(ApiError::invalid(format!(
            "Thinking level {} is not supported for this model. Please retry with other \
             thinking level.",
            level.to_ascii_uppercase()
        )));
    }
    Ok(())
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
