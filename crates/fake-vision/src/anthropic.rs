//! The Anthropic messages API (`POST /v1/messages`): checks the headers, the body (required
//! fields, no unknown ones), every image block against Anthropic's limits, and answers with
//! the proof of what arrived.

use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::claude;
use crate::media::{self, MediaFacts};
use crate::proof::{limit_answer, text_tokens, Proof, Seen};
use crate::server::{self, header_str, json_response, Incoming, Injected, ReadBody};
use crate::state::{Shared, ALNUM};
use crate::FakeAnthropic;

/// Largest request Anthropic accepts (the fake's own cap is larger).
const MAX_REQUEST_BYTES: u64 = 32 * 1024 * 1024;
/// Per image, counted on the base64 text as the real API does (so about 3.75 MB of bytes).
const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;
const MAX_SIDE: u32 = 8000;
/// Requests with more than this many images get the smaller side limit.
const MANY_IMAGES: usize = 20;
const MAX_SIDE_MANY: u32 = 2000;
const MAX_IMAGES: usize = 100;
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const VERSIONS: [&str; 2] = ["2023-06-01", "2023-01-01"];

/// The tokens a thinking model's thinking costs in the fake (billed as output).
const THOUGHT_TOKENS: u64 = 64;

const TOP_LEVEL_FIELDS: [&str; 18] = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "stream",
    "metadata",
    "tools",
    "tool_choice",
    "thinking",
    "output_config",
    "service_tier",
    "container",
    "mcp_servers",
    "context_management",
];

const BLOCK_TYPES: [&str; 10] = [
    "document",
    "image",
    "redacted_thinking",
    "search_result",
    "server_tool_use",
    "text",
    "thinking",
    "tool_result",
    "tool_use",
    "web_search_tool_result",
];

/// An error answer: `{"type":"error","error":{"type","message"},"request_id"}`.
#[derive(Debug, Clone)]
pub(crate) struct AnthropicError {
    status: u16,
    kind: &'static str,
    message: String,
    headers: Vec<(&'static str, String)>,
}

impl AnthropicError {
    fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        AnthropicError {
            status,
            kind,
            message: message.into(),
            headers: Vec::new(),
        }
    }

    /// 400 `invalid_request_error`.
    fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, "invalid_request_error", message)
    }

    fn too_large() -> Self {
        Self::new(
            413,
            "request_too_large",
            "Request exceeds the maximum allowed number of bytes.",
        )
    }

    fn rate_limited(retry_after_secs: Option<u64>) -> Self {
        let mut e = Self::new(
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization (fake-vision) of 50 \
             requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. \
             You can see the response headers for current usage. Please reduce the prompt length \
             or the maximum tokens requested, or try again later.",
        );
        e.headers
            .push(("anthropic-ratelimit-requests-limit", "50".into()));
        e.headers
            .push(("anthropic-ratelimit-requests-remaining", "0".into()));
        if let Some(secs) = retry_after_secs {
            e.headers.push(("retry-after", secs.to_string()));
        }
        e
    }

    /// The generic answer for an HTTP status, as a fault injects it.
    fn for_status(status: u16) -> Self {
        match status {
            400 => Self::invalid("Bad request."),
            401 => Self::new(401, "authentication_error", "invalid x-api-key"),
            403 => Self::new(
                403,
                "permission_error",
                "Your API key does not have permission to use the specified resource.",
            ),
            404 => Self::new(
                404,
                "not_found_error",
                "The requested resource could not be found.",
            ),
            413 => Self::too_large(),
            429 => Self::rate_limited(None),
            529 => Self::new(529, "overloaded_error", "Overloaded"),
            s if s >= 500 => Self::new(s, "api_error", "Internal server error"),
            s => Self::new(
                s,
                "invalid_request_error",
                format!("Request refused (HTTP {s})."),
            ),
        }
    }

    fn into_response(self, request_id: &str) -> Response {
        let body = json!({
            "type": "error",
            "error": {"type": self.kind, "message": self.message},
            "request_id": request_id,
        });
        let mut headers = self.headers;
        headers.push(("request-id", request_id.to_string()));
        json_response(self.status, &body, &headers)
    }
}

pub(crate) async fn handle(shared: &Shared, req: Incoming) -> Response {
    let request_id = format!("req_011C{}", shared.lock().new_id(20, ALNUM));
    let path = req.path.trim_end_matches('/');
    if path == "/v1/messages" && req.method == Method::POST {
        messages(shared, req, &request_id).await
    } else if path == "/v1/models" && req.method == Method::GET {
        match check_headers(&req.headers) {
            Ok(()) => json_response(200, &models_list(), &[("request-id", request_id)]),
            Err(e) => e.into_response(&request_id),
        }
    } else {
        AnthropicError::new(404, "not_found_error", "Not Found").into_response(&request_id)
    }
}

fn models_list() -> Value {
    let data: Vec<Value> = [
        (
            "claude-sonnet-4-5-20250929",
            "Claude Sonnet 4.5",
            "2025-09-29T00:00:00Z",
        ),
        (
            "claude-haiku-4-5-20251001",
            "Claude Haiku 4.5",
            "2025-10-01T00:00:00Z",
        ),
        (
            "claude-opus-4-1-20250805",
            "Claude Opus 4.1",
            "2025-08-05T00:00:00Z",
        ),
    ]
    .iter()
    .map(
        |(id, name, at)| json!({"type": "model", "id": id, "display_name": name, "created_at": at}),
    )
    .collect();
    let first = data.first().map(|m| m["id"].clone());
    let last = data.last().map(|m| m["id"].clone());
    json!({"data": data, "has_more": false, "first_id": first, "last_id": last})
}

/// `x-api-key` first (401), then `anthropic-version` (400).
fn check_headers(headers: &HeaderMap) -> Result<(), AnthropicError> {
    match header_str(headers, "x-api-key").map(str::trim) {
        Some(k) if k == FakeAnthropic::API_KEY => {}
        Some(k) if !k.is_empty() => {
            return Err(AnthropicError::new(
                401,
                "authentication_error",
                "invalid x-api-key",
            ))
        }
        _ => {
            return Err(AnthropicError::new(
                401,
                "authentication_error",
                "x-api-key header is required",
            ))
        }
    }
    match header_str(headers, "anthropic-version").map(str::trim) {
        None | Some("") => Err(AnthropicError::invalid(
            "anthropic-version: header is required",
        )),
        Some(v) if !VERSIONS.contains(&v) => Err(AnthropicError::invalid(format!(
            "anthropic-version: invalid version '{v}'; use one of {}",
            VERSIONS.join(", ")
        ))),
        Some(_) => Ok(()),
    }
}

async fn messages(shared: &Shared, req: Incoming, request_id: &str) -> Response {
    let parsed: Option<Value> = match &req.body {
        ReadBody::Complete(bytes) => serde_json::from_slice(bytes).ok(),
        ReadBody::TooLarge(_) => None,
    };
    if let Some(v) = &parsed {
        shared.lock().bodies.push(v.clone());
    }
    // Faults come first, before even the key check.
    if let Some(fault) = server::take_fault(shared).await {
        let e = match fault {
            Injected::Status(code) => AnthropicError::for_status(code),
            Injected::RateLimited { retry_after_secs } => {
                AnthropicError::rate_limited(Some(retry_after_secs))
            }
        };
        return e.into_response(request_id);
    }
    if req.body.len() > MAX_REQUEST_BYTES {
        return AnthropicError::too_large().into_response(request_id);
    }
    if let Err(e) = check_headers(&req.headers) {
        return e.into_response(request_id);
    }
    let content_type = header_str(&req.headers, "content-type").unwrap_or("");
    if !content_type
        .to_ascii_lowercase()
        .starts_with("application/json")
    {
        return AnthropicError::invalid(format!(
            "content-type: expected application/json, got '{content_type}'"
        ))
        .into_response(request_id);
    }
    let Some(body) = parsed else {
        return AnthropicError::invalid("There was an issue with the request body: invalid JSON")
            .into_response(request_id);
    };
    let beta = header_str(&req.headers, "anthropic-beta").unwrap_or("");
    let structured = beta.contains("structured-outputs");
    let reply = shared.lock().reply_text.clone();
    match answer(&body, structured, reply) {
        Ok(mut answer) => {
            answer["id"] = json!(format!("msg_01{}", shared.lock().new_id(22, ALNUM)));
            json_response(200, &answer, &[("request-id", request_id.to_string())])
        }
        Err(e) => e.into_response(request_id),
    }
}

fn answer(body: &Value, structured: bool, reply: Option<String>) -> Result<Value, AnthropicError> {
    let request = Request::read(body, structured)?;
    let req = request.fields;
    let messages = request.messages;
    let mut walk = Walk {
        images: count_images(messages),
        ..Walk::default()
    };
    if walk.images > MAX_IMAGES {
        return Err(AnthropicError::invalid(format!(
            "messages: too many images: {} > {MAX_IMAGES}",
            walk.images
        )));
    }
    walk.system(req.get("system"))?;
    for (i, m) in messages.iter().enumerate() {
        walk.message(m, i, i + 1 == messages.len())?;
    }

    let proof = Proof::new(&walk.seen);
    let text = reply.unwrap_or_else(|| match &request.schema {
        Some(s) => proof.for_schema(s).to_string(),
        None => proof.text(),
    });
    let (text, mut stop_reason, stop_sequence) = stop_at_sequences(text, &request.stop_sequences);
    // A thinking model thinks first, and the thinking shares `max_tokens`.
    let thinks = claude::thinks(&request.model, req);
    let thought = if thinks { THOUGHT_TOKENS } else { 0 };
    let max_tokens = request.max_tokens.saturating_sub(thought).max(1);
    let (text, cut) = limit_answer(text, Some(max_tokens));
    if cut {
        stop_reason = "max_tokens";
    }
    let output = text_tokens(&text).clamp(1, max_tokens) + thought;
    let mut content = Vec::new();
    if thinks {
        content.push(json!({"type": "thinking", "thinking": "Looking at each image in turn.", "signature": "ZmFrZS12aXNpb24tdGhvdWdodA=="}));
    }
    content.push(json!({"type": "text", "text": text}));
    let input = walk.tokens + 4 * messages.len() as u64;
    Ok(json!({
        "id": "",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": {
            "input_tokens": input,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output,
            "service_tier": "standard",
        },
    }))
}

/// A messages request's settings, checked in the order and words of Anthropic's validation.
struct Request<'a> {
    fields: &'a serde_json::Map<String, Value>,
    model: String,
    max_tokens: u64,
    messages: &'a Vec<Value>,
    stop_sequences: Vec<String>,
    /// `output_format`'s JSON schema (structured outputs), if any.
    schema: Option<Value>,
}

impl<'a> Request<'a> {
    fn read(body: &'a Value, structured: bool) -> Result<Request<'a>, AnthropicError> {
        let req = body
            .as_object()
            .ok_or_else(|| AnthropicError::invalid("Input should be a valid dictionary"))?;
        for key in req.keys() {
            let known =
                TOP_LEVEL_FIELDS.contains(&key.as_str()) || (structured && key == "output_format");
            if !known {
                return Err(AnthropicError::invalid(format!(
                    "{key}: Extra inputs are not permitted"
                )));
            }
        }
        let model = model_of(req)?;
        let max_tokens = max_tokens_of(req)?;
        let messages = messages_of(req)?;
        if !model.starts_with("claude-") {
            return Err(AnthropicError::new(
                404,
                "not_found_error",
                format!("model: {model}"),
            ));
        }
        if messages.is_empty() {
            return Err(AnthropicError::invalid(
                "messages: at least one message is required",
            ));
        }
        if req.get("stream") == Some(&Value::Bool(true)) {
            return Err(AnthropicError::invalid(
                "stream: true is not supported by fake-vision; send stream: false",
            ));
        }
        if let Some(claude::Refusal(message)) = claude::refused_sampling(&model, req) {
            return Err(AnthropicError::invalid(message));
        }
        check_temperature(req)?;
        claude::check_thinking(&model, req, max_tokens)
            .map_err(|claude::Refusal(message)| AnthropicError::invalid(message))?;
        let stop_sequences = stop_sequences_of(req)?;
        let schema = output_schema(req)?;

        Ok(Request {
            fields: req,
            model,
            max_tokens,
            messages,
            stop_sequences,
            schema,
        })
    }
}

/// `model`: required, a string.
fn model_of(req: &serde_json::Map<String, Value>) -> Result<String, AnthropicError> {
    Ok(match req.get("model") {
        None | Some(Value::Null) => return Err(AnthropicError::invalid("model: Field required")),
        Some(Value::String(m)) => m.clone(),
        Some(_) => {
            return Err(AnthropicError::invalid(
                "model: Input should be a valid string",
            ))
        }
    })
}

/// `max_tokens`: required, an integer of at least 1.
fn max_tokens_of(req: &serde_json::Map<String, Value>) -> Result<u64, AnthropicError> {
    Ok(match req.get("max_tokens") {
        None | Some(Value::Null) => {
            return Err(AnthropicError::invalid("max_tokens: Field required"))
        }
        Some(v) => match v.as_i64() {
            Some(n) if n >= 1 => n as u64,
            Some(_) => {
                return Err(AnthropicError::invalid(
                    "max_tokens: Input should be greater than or equal to 1",
                ))
            }
            None => {
                return Err(AnthropicError::invalid(
                    "max_tokens: Input should be a valid integer",
                ))
            }
        },
    })
}

/// `messages`: required, a list.
fn messages_of(req: &serde_json::Map<String, Value>) -> Result<&Vec<Value>, AnthropicError> {
    Ok(match req.get("messages") {
        None | Some(Value::Null) => {
            return Err(AnthropicError::invalid("messages: Field required"))
        }
        Some(Value::Array(m)) => m,
        Some(_) => {
            return Err(AnthropicError::invalid(
                "messages: Input should be a valid list",
            ))
        }
    })
}

/// `stop_sequences`: a list of strings, if given.
fn stop_sequences_of(req: &serde_json::Map<String, Value>) -> Result<Vec<String>, AnthropicError> {
    Ok(match req.get("stop_sequences") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                AnthropicError::invalid("stop_sequences.0: Input should be a valid string")
            })?,
        Some(_) => {
            return Err(AnthropicError::invalid(
                "stop_sequences: Input should be a valid list",
            ))
        }
    })
}

/// `output_format`: a JSON schema, if given.
fn output_schema(req: &serde_json::Map<String, Value>) -> Result<Option<Value>, AnthropicError> {
    Ok(match req.get("output_format") {
        None | Some(Value::Null) => None,
        Some(f) => {
            if f.get("type").and_then(Value::as_str) != Some("json_schema") {
                return Err(AnthropicError::invalid(
                    "output_format.type: Input should be 'json_schema'",
                ));
            }
            let schema = f
                .get("schema")
                .filter(|s| s.is_object())
                .ok_or_else(|| AnthropicError::invalid("output_format.schema: Field required"))?;
            Some(schema.clone())
        }
    })
}

/// `temperature`, when given: a number in [0, 1].
fn check_temperature(req: &serde_json::Map<String, Value>) -> Result<(), AnthropicError> {
    if let Some(t) = req.get("temperature").filter(|v| !v.is_null()) {
        match t.as_f64() {
            None => {
                return Err(AnthropicError::invalid(
                    "temperature: Input should be a valid number",
                ))
            }
            Some(t) if t > 1.0 => {
                return Err(AnthropicError::invalid(
                    "temperature: Input should be less than or equal to 1",
                ))
            }
            Some(t) if t < 0.0 => {
                return Err(AnthropicError::invalid(
                    "temperature: Input should be greater than or equal to 0",
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The answer cut at the first stop sequence it holds, with the stop reason and sequence.
fn stop_at_sequences(mut text: String, stops: &[String]) -> (String, &'static str, Value) {
    let mut stop_reason = "end_turn";
    let mut stop_sequence = Value::Null;
    if let Some((at, seq)) = stops
        .iter()
        .filter_map(|s| text.find(s.as_str()).map(|at| (at, s)))
        .min_by_key(|(at, _)| *at)
    {
        text.truncate(at);
        stop_reason = "stop_sequence";
        stop_sequence = json!(seq);
    }
    (text, stop_reason, stop_sequence)
}

/// Image blocks in the whole request, nested tool results included, to pick the side limit
/// before the images are checked one by one.
fn count_images(messages: &[Value]) -> usize {
    fn count(v: &Value) -> usize {
        match v {
            Value::Array(items) => items.iter().map(count).sum(),
            Value::Object(o) => {
                let own = usize::from(o.get("type").and_then(Value::as_str) == Some("image"));
                own + o.get("content").map(count).unwrap_or(0)
            }
            _ => 0,
        }
    }
    messages
        .iter()
        .map(|m| m.get("content").map(count).unwrap_or(0))
        .sum()
}

/// What the messages hold, gathered while checking them.
#[derive(Default)]
struct Walk {
    seen: Vec<Vec<Seen>>,
    tokens: u64,
    images: usize,
}

impl Walk {
    fn system(&mut self, system: Option<&Value>) -> Result<(), AnthropicError> {
        match system {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(s)) => {
                self.tokens += text_tokens(s);
                Ok(())
            }
            Some(Value::Array(blocks)) => {
                for (i, b) in blocks.iter().enumerate() {
                    if b.get("type").and_then(Value::as_str) != Some("text") {
                        return Err(AnthropicError::invalid(format!(
                            "system.{i}.type: Input should be 'text'"
                        )));
                    }
                    let text = b.get("text").and_then(Value::as_str).ok_or_else(|| {
                        AnthropicError::invalid(format!("system.{i}.text: Field required"))
                    })?;
                    self.tokens += text_tokens(text);
                }
                Ok(())
            }
            Some(_) => Err(AnthropicError::invalid(
                "system: Input should be a valid string",
            )),
        }
    }

    fn message(&mut self, m: &Value, i: usize, last: bool) -> Result<(), AnthropicError> {
        let obj = m.as_object().ok_or_else(|| {
            AnthropicError::invalid(format!("messages.{i}: Input should be a valid dictionary"))
        })?;
        let role = role_of(obj, i)?;
        if i == 0 && role != "user" {
            return Err(AnthropicError::invalid(
                "messages: first message must use the \"user\" role",
            ));
        }
        let empty = || {
            AnthropicError::invalid(format!(
                "messages.{i}: all messages must have non-empty content except for the optional \
                 final assistant message"
            ))
        };
        let final_assistant = last && role == "assistant";
        let mut parts = Vec::new();
        match obj.get("content") {
            None => {
                return Err(AnthropicError::invalid(format!(
                    "messages.{i}.content: Field required"
                )))
            }
            Some(Value::String(s)) => {
                if s.is_empty() && !final_assistant {
                    return Err(empty());
                }
                self.tokens += text_tokens(s);
                parts.push(Seen::Text(s.clone()));
            }
            Some(Value::Array(blocks)) => {
                if blocks.is_empty() && !final_assistant {
                    return Err(empty());
                }
                for (j, block) in blocks.iter().enumerate() {
                    if let Some(seen) = self.block(block, &format!("messages.{i}.content.{j}"))? {
                        parts.push(seen);
                    }
                }
            }
            Some(_) => {
                return Err(AnthropicError::invalid(format!(
                    "messages.{i}.content: Input should be a valid string"
                )))
            }
        }
        if role == "user" {
            self.seen.push(parts);
        }
        Ok(())
    }

    fn block(&mut self, block: &Value, at: &str) -> Result<Option<Seen>, AnthropicError> {
        let obj = block.as_object().ok_or_else(|| {
            AnthropicError::invalid(format!("{at}: Input should be a valid dictionary"))
        })?;
        let kind = obj.get("type").and_then(Value::as_str).ok_or_else(|| {
            AnthropicError::invalid(format!(
                "{at}: Unable to extract tag using discriminator 'type'"
            ))
        })?;
        match kind {
            "text" => {
                let text = obj.get("text").and_then(Value::as_str).ok_or_else(|| {
                    AnthropicError::invalid(format!("{at}.text.text: Field required"))
                })?;
                if text.is_empty() {
                    return Err(AnthropicError::invalid(
                        "messages: text content blocks must be non-empty",
                    ));
                }
                if text.trim().is_empty() {
                    return Err(AnthropicError::invalid(
                        "messages: text content blocks must contain non-whitespace text",
                    ));
                }
                self.tokens += text_tokens(text);
                Ok(Some(Seen::Text(text.to_string())))
            }
            "image" => self.image(obj, &format!("{at}.image")).map(Some),
            other if BLOCK_TYPES.contains(&other) => Ok(None),
            other => Err(AnthropicError::invalid(format!(
                "{at}: Input tag '{other}' found using 'type' does not match any of the expected \
                 tags: {}",
                BLOCK_TYPES
                    .iter()
                    .map(|t| format!("'{t}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    fn image(&mut self, obj: &Map<String, Value>, at: &str) -> Result<Seen, AnthropicError> {
        let source = obj
            .get("source")
            .and_then(Value::as_object)
            .ok_or_else(|| AnthropicError::invalid(format!("{at}.source: Field required")))?;
        let kind = source.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != "base64" {
            let remote = remote_image(source, kind, at)?;
            self.tokens += 1600;
            return Ok(Seen::RemoteImage(remote));
        }
        let at = format!("{at}.source.base64");
        let (declared, bytes) = base64_image(source, &at)?;
        let cannot = || AnthropicError::invalid(format!("{at}.data: Could not process image"));
        let sniffed = media::sniff_image(&bytes).ok_or_else(cannot)?;
        if sniffed != declared {
            return Err(AnthropicError::invalid(format!(
                "{at}.data: Image does not match the provided media type {declared} (the image was \
                 specified using the {declared} media type, but the image appears to be a \
                 {sniffed} image)"
            )));
        }
        let facts = MediaFacts::image(declared, &bytes);
        let (w, h) = facts.size.ok_or_else(cannot)?;
        if self.images > MANY_IMAGES && (w > MAX_SIDE_MANY || h > MAX_SIDE_MANY) {
            return Err(AnthropicError::invalid(format!(
                "{at}.data: At least one of the image dimensions exceed max allowed size for \
                 many-image requests: {MAX_SIDE_MANY} pixels"
            )));
        }
        if w > MAX_SIDE || h > MAX_SIDE {
            return Err(AnthropicError::invalid(format!(
                "{at}.data: At least one of the image dimensions exceed max allowed size: \
                 {MAX_SIDE} pixels"
            )));
        }
        self.tokens += image_tokens(w, h);
        Ok(Seen::Image(facts))
    }
}

/// What a url or file image source names (the fake never fetches it).
fn remote_image(
    source: &Map<String, Value>,
    kind: &str,
    at: &str,
) -> Result<String, AnthropicError> {
    match kind {
        "url" => {
            let url = source.get("url").and_then(Value::as_str).ok_or_else(|| {
                AnthropicError::invalid(format!("{at}.source.url.url: Field required"))
            })?;
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(AnthropicError::invalid(format!(
                    "{at}.source.url.url: URL must use http or https"
                )));
            }
            Ok(url.to_string())
        }
        "file" => {
            let id = source
                .get("file_id")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    AnthropicError::invalid(format!("{at}.source.file.file_id: Field required"))
                })?;
            Ok(format!("file {id}"))
        }
        other => Err(AnthropicError::invalid(format!(
            "{at}.source: Input tag '{other}' found using 'type' does not match any of the \
             expected tags: 'base64', 'file', 'url'"
        ))),
    }
}

/// A base64 source's declared type (one Anthropic takes) and its decoded bytes, within the
/// size limit.
fn base64_image(
    source: &Map<String, Value>,
    at: &str,
) -> Result<(&'static str, Vec<u8>), AnthropicError> {
    let declared = source
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(declared) = IMAGE_TYPES.iter().find(|t| **t == declared).copied() else {
        return Err(AnthropicError::invalid(format!(
            "{at}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or \
             'image/webp'"
        )));
    };
    let data = source
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| AnthropicError::invalid(format!("{at}.data: Field required")))?;
    if data.len() > MAX_IMAGE_BASE64 {
        return Err(AnthropicError::invalid(format!(
            "{at}: image exceeds 5 MB maximum: {} bytes > {MAX_IMAGE_BASE64} bytes",
            data.len()
        )));
    }
    let bytes = media::decode_base64(data).ok_or_else(|| {
        AnthropicError::invalid(format!("{at}.data: The image data is not valid base64"))
    })?;
    Ok((declared, bytes))
}

/// A message's `role`: required, "user" or "assistant".
fn role_of(obj: &Map<String, Value>, i: usize) -> Result<&str, AnthropicError> {
    match obj.get("role").and_then(Value::as_str) {
        None => Err(AnthropicError::invalid(format!(
            "messages.{i}.role: Field required"
        ))),
        Some(r @ ("user" | "assistant")) => Ok(r),
        Some(_) => Err(AnthropicError::invalid(format!(
            "messages.{i}.role: Input should be 'user' or 'assistant'"
        ))),
    }
}

/// Anthropic's rule: width × height / 750 after scaling the long edge down to 1568 px, at
/// most about 1600 tokens.
fn image_tokens(w: u32, h: u32) -> u64 {
    let (w, h) = (w.max(1) as f64, h.max(1) as f64);
    let scale = (1568.0 / w.max(h)).min(1.0);
    let tokens = ((w * scale) * (h * scale) / 750.0).ceil() as u64;
    tokens.min(1600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tokens_follow_anthropic_rule() {
        assert_eq!(image_tokens(800, 500), 534);
        assert_eq!(image_tokens(1000, 1000), 1334);
        assert_eq!(image_tokens(8000, 8000), 1600);
    }

    #[test]
    fn images_are_counted_inside_tool_results() {
        let messages = vec![
            json!({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "x"}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "content": [{"type": "image"}]}]}),
            json!({"role": "assistant", "content": "plain"}),
        ];
        assert_eq!(count_images(&messages), 2);
    }
}
