//! Amazon Bedrock's Converse API (`POST /model/{modelId}/converse`): checks the SigV4
//! signature (see `sigv4_check`), the body (known top-level fields, content blocks, image
//! formats that match their bytes, video only for Nova models) and answers as Bedrock does:
//! `output.message.content[].text`, `stopReason`, `usage`, `metrics.latencyMs`; errors as
//! `{"message": ...}` with the type in `x-amzn-ErrorType`.

use axum::http::Method;
use axum::response::Response;
use serde_json::{json, Value};

use crate::media::{self, MediaFacts};
use crate::proof::{text_tokens, Proof, Seen};
use crate::server::{self, json_response, Incoming, Injected, ReadBody};
use crate::sigv4_check::{self, Expected};
use crate::state::Shared;
use crate::FakeBedrock;

const TOP_LEVEL_FIELDS: [&str; 10] = [
    "messages",
    "system",
    "inferenceConfig",
    "toolConfig",
    "guardrailConfig",
    "additionalModelRequestFields",
    "promptVariables",
    "additionalModelResponseFieldPaths",
    "requestMetadata",
    "performanceConfig",
];
const IMAGE_FORMATS: [(&str, &str); 4] = [
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
];
const VIDEO_FORMATS: [&str; 9] = [
    "mkv", "mov", "mp4", "webm", "flv", "mpeg", "mpg", "wmv", "three_gp",
];
/// Tokens Bedrock's Claude counts for an image of about 1000x700 px.
const IMAGE_TOKENS: u64 = 1_000;

/// An error answer: `{"message"}`, the type in `x-amzn-ErrorType`.
struct BedrockError {
    status: u16,
    kind: &'static str,
    message: String,
}

impl BedrockError {
    fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        BedrockError {
            status,
            kind,
            message: message.into(),
        }
    }

    fn validation(message: impl Into<String>) -> Self {
        Self::new(400, "ValidationException", message)
    }

    fn for_status(status: u16) -> Self {
        match status {
            400 => Self::validation("The provided model identifier is invalid."),
            403 => Self::new(
                403,
                "AccessDeniedException",
                "You don't have access to the model with the specified model ID.",
            ),
            404 => Self::new(
                404,
                "ResourceNotFoundException",
                "Could not resolve the foundation model from the provided model identifier.",
            ),
            408 => Self::new(
                408,
                "ModelTimeoutException",
                "Model has timed out in processing the request.",
            ),
            424 => Self::new(424, "ModelErrorException", "The model returned an error."),
            429 => Self::new(
                429,
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            ),
            503 => Self::new(
                503,
                "ServiceUnavailableException",
                "Bedrock is unable to process your request.",
            ),
            s if s >= 500 => Self::new(
                s,
                "InternalServerException",
                "The server encountered an internal error.",
            ),
            s => Self::validation(format!("Request refused (HTTP {s}).")),
        }
    }

    fn into_response(self, request_id: &str) -> Response {
        json_response(
            self.status,
            &json!({"message": self.message}),
            &[
                (
                    "x-amzn-errortype",
                    format!(
                        "{}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                        self.kind
                    ),
                ),
                ("x-amzn-requestid", request_id.to_string()),
            ],
        )
    }
}

pub(crate) async fn handle(shared: &Shared, region: &str, req: Incoming) -> Response {
    let request_id = uuid_like(shared);
    let model = req
        .path
        .strip_prefix("/model/")
        .and_then(|rest| rest.strip_suffix("/converse"))
        .map(percent_decode);
    let (Some(model), true) = (model, req.method == Method::POST) else {
        return BedrockError::new(404, "UnknownOperationException", "Unknown operation")
            .into_response(&request_id);
    };
    match converse(shared, region, &model, req).await {
        Ok(answer) => json_response(200, &answer, &[("x-amzn-requestid", request_id)]),
        Err(e) => e.into_response(&request_id),
    }
}

async fn converse(
    shared: &Shared,
    region: &str,
    model: &str,
    req: Incoming,
) -> Result<Value, BedrockError> {
    let started = std::time::Instant::now();
    let ReadBody::Complete(bytes) = &req.body else {
        return Err(BedrockError::validation(
            "Input is too long for requested model.",
        ));
    };
    let body: Option<Value> = serde_json::from_slice(bytes).ok();
    if let Some(body) = &body {
        shared.lock().bodies.push(body.clone());
    }
    match server::take_fault(shared).await {
        Some(Injected::Status(code)) => return Err(BedrockError::for_status(code)),
        Some(Injected::RateLimited { .. }) => return Err(BedrockError::for_status(429)),
        None => {}
    }
    check_signature(region, &req, bytes)?;
    let body = body.ok_or_else(|| {
        BedrockError::new(
            400,
            "SerializationException",
            "Start of structure or map found where not expected.",
        )
    })?;
    let seen = read_messages(&body, model)?;
    check_claude_settings(&body, model)?;
    let proof = Proof::new(&seen);
    let reply = shared.lock().reply_text.clone();
    let text = reply.unwrap_or_else(|| proof.text());
    let images = seen
        .iter()
        .flatten()
        .filter(|s| matches!(s, Seen::Image(_) | Seen::Video(_)))
        .count() as u64;
    let input_tokens = text_tokens(&body.to_string().chars().take(4000).collect::<String>())
        + images * IMAGE_TOKENS;
    let output_tokens = text_tokens(&text);
    Ok(json!({
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
        "metrics": {"latencyMs": started.elapsed().as_millis() as u64 + 1},
    }))
}

/// A Claude model's own rules on sampling and thinking (`crate::claude`), which Bedrock hands
/// on: `inferenceConfig`'s temperature and topP, and the thinking and effort of
/// `additionalModelRequestFields`. The model's refusal comes back as a ValidationException.
fn check_claude_settings(body: &Value, model: &str) -> Result<(), BedrockError> {
    if !model.contains("anthropic.claude") {
        return Ok(());
    }
    let inference = &body["inferenceConfig"];
    let mut fields = body["additionalModelRequestFields"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (converse, claude) in [("temperature", "temperature"), ("topP", "top_p")] {
        if let Some(v) = inference.get(converse).filter(|v| !v.is_null()) {
            fields.insert(claude.to_string(), v.clone());
        }
    }
    let max_tokens = inference["maxTokens"].as_u64().unwrap_or(4096);
    let refusal = crate::claude::refused_sampling(model, &fields)
        .map(Err)
        .unwrap_or_else(|| crate::claude::check_thinking(model, &fields, max_tokens));
    refusal.map_err(|crate::claude::Refusal(message)| {
        BedrockError::validation(format!(
            "The model returned the following errors: {message}"
        ))
    })
}

/// The request is signed (SigV4) with the fake's one key pair, for Bedrock in `region`.
fn check_signature(region: &str, req: &Incoming, bytes: &[u8]) -> Result<(), BedrockError> {
    let expected = Expected {
        access_key_id: FakeBedrock::ACCESS_KEY_ID,
        secret: FakeBedrock::SECRET_ACCESS_KEY,
        region,
        service: "bedrock",
    };
    sigv4_check::check(
        &expected,
        req.method.as_str(),
        &req.path,
        &req.headers,
        bytes,
    )
    .map_err(|(status, kind, message)| BedrockError::new(status, kind, message))?;
    Ok(())
}

/// The user messages' blocks, checked as Bedrock checks them.
fn read_messages(body: &Value, model: &str) -> Result<Vec<Vec<Seen>>, BedrockError> {
    let Some(object) = body.as_object() else {
        return Err(BedrockError::validation(
            "Malformed input request, please reformat your input and try again.",
        ));
    };
    if let Some(extra) = object
        .keys()
        .find(|k| !TOP_LEVEL_FIELDS.contains(&k.as_str()))
    {
        return Err(BedrockError::validation(format!("Malformed input request: extraneous key [{extra}] is not permitted, please reformat your input and try again.")));
    }
    let messages = body["messages"].as_array().filter(|m| !m.is_empty()).ok_or_else(|| {
        BedrockError::validation("A conversation must start with a user message. Try again with a conversation that starts with a user message.")
    })?;
    let mut seen = Vec::new();
    for message in messages {
        let blocks = message["content"].as_array().ok_or_else(|| {
            BedrockError::validation("The content field in the Message object is empty.")
        })?;
        let mut parts = Vec::new();
        for block in blocks {
            parts.push(read_block(block, model)?);
        }
        if message["role"] == "user" {
            seen.push(parts);
        }
    }
    Ok(seen)
}

fn read_block(block: &Value, model: &str) -> Result<Seen, BedrockError> {
    if let Some(text) = block["text"].as_str() {
        return Ok(Seen::Text(text.to_string()));
    }
    if block["image"].is_object() {
        let format = block["image"]["format"].as_str().unwrap_or("");
        let Some((_, mime)) = IMAGE_FORMATS.iter().find(|(f, _)| *f == format) else {
            return Err(BedrockError::validation(format!("1 validation error detected: Value '{format}' at 'messages.1.member.content.1.member.image.format' failed to satisfy constraint: Member must satisfy enum value set: [gif, jpeg, png, webp]")));
        };
        let bytes = decoded(&block["image"]["source"]["bytes"])?;
        if media::sniff_image(&bytes) != Some(*mime) {
            return Err(BedrockError::validation("The model returned the following errors: messages.0.content.0.image.source.base64: image format does not match the provided format."));
        }
        return Ok(Seen::Image(MediaFacts::image(mime, &bytes)));
    }
    if block["video"].is_object() {
        if !model.contains("nova") {
            return Err(BedrockError::validation("This model doesn't support the video content block that was provided. Please remove the video content block and try again."));
        }
        let format = block["video"]["format"].as_str().unwrap_or("");
        if !VIDEO_FORMATS.contains(&format) {
            return Err(BedrockError::validation(format!(
                "Value '{format}' at 'video.format' failed to satisfy constraint."
            )));
        }
        let bytes = decoded(&block["video"]["source"]["bytes"])?;
        let mime = media::sniff_video(&bytes).unwrap_or("video/mp4");
        return Ok(Seen::Video(MediaFacts::video(mime, &bytes)));
    }
    Err(BedrockError::validation(format!(
        "Unsupported content block: {}",
        truncate(&block.to_string())
    )))
}

fn decoded(value: &Value) -> Result<Vec<u8>, BedrockError> {
    value
        .as_str()
        .and_then(media::decode_base64)
        .filter(|b| !b.is_empty())
        .ok_or_else(|| {
            BedrockError::new(
                400,
                "SerializationException",
                "Could not decode the bytes of a content block as base64.",
            )
        })
}

fn truncate(text: &str) -> String {
    text.chars().take(80).collect()
}

/// `%3A` back to `:` (the model id arrives encoded as one path segment).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn uuid_like(shared: &Shared) -> String {
    let id = shared.lock().new_id(32, b"0123456789abcdef");
    format!(
        "{}-{}-{}-{}-{}",
        &id[0..8],
        &id[8..12],
        &id[12..16],
        &id[16..20],
        &id[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_are_decoded_and_blocks_checked() {
        assert_eq!(
            percent_decode("anthropic.claude-v2%3A0"),
            "anthropic.claude-v2:0"
        );
        assert_eq!(percent_decode("bad%zz%4"), "bad%zz%4");
        let refused = read_block(
            &json!({"video": {"format": "mp4", "source": {"bytes": "AAAA"}}}),
            "anthropic.claude",
        );
        assert!(refused.is_err());
        let refused = read_block(
            &json!({"image": {"format": "bmp", "source": {"bytes": "AAAA"}}}),
            "m",
        );
        assert!(refused.is_err());
        assert!(read_block(&json!({"document": {}}), "m").is_err());
    }
}
