//! OpenAI-compatible chat completions (`POST /v1/chat/completions`, also z.ai's
//! `/api/paas/v4/chat/completions` and Gemini's `/v1beta/openai/chat/completions`): checks the
//! key, the body, every image and video part against the server's options, and answers with
//! the proof of what arrived, whole or as server-sent events.

use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::media::{self, MediaFacts};
use crate::proof::{limit_answer, text_tokens, Proof, Seen};
use crate::server::{self, header_str, json_response, Incoming, Injected, ReadBody};
use crate::state::{Shared, ALNUM};
use crate::{FakeOpenAi, OpenAiOptions};

/// An error answer: `{"error":{"message","type","param","code"}}`.
#[derive(Debug, Clone)]
pub(crate) struct OpenAiError {
    status: u16,
    message: String,
    kind: &'static str,
    param: Option<String>,
    code: Option<&'static str>,
    headers: Vec<(&'static str, String)>,
}

impl OpenAiError {
    fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        OpenAiError {
            status,
            message: message.into(),
            kind,
            param: None,
            code: None,
            headers: Vec::new(),
        }
    }

    /// 400 `invalid_request_error`.
    fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, "invalid_request_error", message)
    }

    fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    fn code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    fn missing(param: &str) -> Self {
        Self::invalid(format!("Missing required parameter: '{param}'."))
            .param(param)
            .code("missing_required_parameter")
    }

    fn wrong_type(param: &str, expected: &str, got: &Value) -> Self {
        Self::invalid(format!(
            "Invalid type for '{param}': expected {expected}, but got {} instead.",
            json_kind(got)
        ))
        .param(param)
        .code("invalid_type")
    }

    fn invalid_value(param: &str, value: &str, supported: &[&str]) -> Self {
        Self::invalid(format!(
            "Invalid value: '{value}'. Supported values are: {}.",
            quoted_list(supported)
        ))
        .param(param)
        .code("invalid_value")
    }

    fn bad_key(given: Option<&str>) -> Self {
        let message = match given {
            None => "You didn't provide an API key. You need to provide your API key in an \
                     Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), \
                     or as the password field (with blank username) if you're accessing the API \
                     from your browser and are prompted for a username and password. You can \
                     obtain an API key from https://platform.openai.com/account/api-keys."
                .to_string(),
            Some(key) => format!(
                "Incorrect API key provided: {}. You can find your API key at \
                 https://platform.openai.com/account/api-keys.",
                redact(key)
            ),
        };
        let e = Self::new(401, "invalid_request_error", message);
        if given.is_some() {
            e.code("invalid_api_key")
        } else {
            e
        }
    }

    fn rate_limited(model: &str, retry_after_secs: Option<u64>) -> Self {
        let wait = retry_after_secs.unwrap_or(20);
        let mut e = Self::new(
            429,
            "requests",
            format!(
                "Rate limit reached for {model} in organization org-fakevision on requests per \
                 min (RPM): Limit 500, Used 500, Requested 1. Please try again in {wait}s. Visit \
                 https://platform.openai.com/account/rate-limits to learn more."
            ),
        )
        .code("rate_limit_exceeded");
        e.headers.push(("x-ratelimit-limit-requests", "500".into()));
        e.headers
            .push(("x-ratelimit-remaining-requests", "0".into()));
        e.headers
            .push(("x-ratelimit-reset-requests", format!("{wait}s")));
        if let Some(secs) = retry_after_secs {
            e.headers.push(("retry-after", secs.to_string()));
        }
        e
    }

    /// The generic answer for an HTTP status, as a fault injects it.
    fn for_status(status: u16, model: &str) -> Self {
        match status {
            401 => Self::bad_key(Some("sk-injected-fault")),
            404 => Self::invalid(format!(
                "The model `{model}` does not exist or you do not have access to it."
            ))
            .with_status(404)
            .code("model_not_found"),
            429 => Self::rate_limited(model, None),
            500 => Self::new(
                500,
                "server_error",
                "The server had an error while processing your request. Sorry about that!",
            ),
            503 => Self::new(
                503,
                "server_error",
                "The server is overloaded or not ready yet.",
            ),
            s if s >= 500 => Self::new(s, "server_error", format!("Server error (HTTP {s}).")),
            s => Self::invalid(format!("Request refused (HTTP {s}).")).with_status(s),
        }
    }

    fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    fn into_response(self, options: &OpenAiOptions, request_id: &str) -> Response {
        if options.google_errors {
            return self.into_google_response();
        }
        let body = json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": self.param,
            "code": self.code,
        }});
        let mut headers = self.headers;
        headers.push(("x-request-id", request_id.to_string()));
        json_response(self.status, &body, &headers)
    }

    /// Gemini's OpenAI-compatible layer: Google's error body in a one-element array, a wrong
    /// key as 400 API_KEY_INVALID and a missing one as 403, and no `Retry-After`, ever.
    fn into_google_response(self) -> Response {
        let (status, body) = match (self.status, self.code) {
            (401, Some("invalid_api_key")) => (400, fake_gemini::google_bad_key_error()),
            (401, _) => (403, fake_gemini::google_missing_key_error()),
            (status, _) => (status, fake_gemini::google_error(status, &self.message)),
        };
        json_response(status, &json!([body]), &[])
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a decimal number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// "'a', 'b', and 'c'", the way OpenAI lists allowed values.
fn quoted_list(items: &[&str]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        2 => format!("{} and {}", q[0], q[1]),
        n => format!("{}, and {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

/// OpenAI shows the first and last characters of a wrong key only.
fn redact(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

pub(crate) async fn handle(shared: &Shared, options: &OpenAiOptions, req: Incoming) -> Response {
    let request_id = format!("req_{}", shared.lock().new_id(32, b"0123456789abcdef"));
    let path = req.path.trim_end_matches('/');
    let chat = matches!(
        path,
        "/v1/chat/completions"
            | "/api/paas/v4/chat/completions"
            | "/v1beta/openai/chat/completions"
    );
    let models = matches!(
        path,
        "/v1/models" | "/api/paas/v4/models" | "/v1beta/openai/models"
    );
    if chat && req.method == Method::POST {
        chat_completions(shared, options, req, &request_id).await
    } else if models && req.method == Method::GET {
        match check_key(options, &req.headers) {
            Ok(()) => json_response(200, &models_list(), &[("x-request-id", request_id)]),
            Err(e) => e.into_response(options, &request_id),
        }
    } else {
        OpenAiError::invalid(format!("Invalid URL ({} {})", req.method, req.path))
            .with_status(404)
            .into_response(options, &request_id)
    }
}

fn models_list() -> Value {
    let created = 1_715_367_049u64;
    let data: Vec<Value> = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5"]
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": created, "owned_by": "system"}))
        .collect();
    json!({"object": "list", "data": data})
}

fn check_key(options: &OpenAiOptions, headers: &HeaderMap) -> Result<(), OpenAiError> {
    if !options.require_key {
        return Ok(());
    }
    let given = header_str(headers, "authorization").map(|v| {
        v.strip_prefix("Bearer ")
            .or_else(|| v.strip_prefix("bearer "))
            .unwrap_or(v)
            .trim()
    });
    match given {
        Some(k) if k == FakeOpenAi::API_KEY => Ok(()),
        Some(k) if !k.is_empty() => Err(OpenAiError::bad_key(Some(k))),
        _ => Err(OpenAiError::bad_key(None)),
    }
}

async fn chat_completions(
    shared: &Shared,
    options: &OpenAiOptions,
    req: Incoming,
    request_id: &str,
) -> Response {
    let parsed: Option<Value> = match &req.body {
        ReadBody::Complete(bytes) => serde_json::from_slice(bytes).ok(),
        ReadBody::TooLarge(_) => None,
    };
    if let Some(v) = &parsed {
        shared.lock().bodies.push(v.clone());
    }
    let model = parsed
        .as_ref()
        .and_then(|v| v.get("model"))
        .and_then(Value::as_str)
        .unwrap_or("gpt-4o")
        .to_string();

    // Faults come first, before even the key check.
    if let Some(fault) = server::take_fault(shared).await {
        let e = match fault {
            Injected::Status(code) => OpenAiError::for_status(code, &model),
            Injected::RateLimited { retry_after_secs } => {
                OpenAiError::rate_limited(&model, Some(retry_after_secs))
            }
        };
        return e.into_response(options, request_id);
    }
    if let ReadBody::TooLarge(n) = req.body {
        return OpenAiError::invalid(format!(
            "Request too large: {n} bytes; at most {} bytes are accepted.",
            server::MAX_BODY_BYTES
        ))
        .with_status(413)
        .code("request_too_large")
        .into_response(options, request_id);
    }
    if let Err(e) = check_key(options, &req.headers) {
        return e.into_response(options, request_id);
    }
    let Some(body) = parsed else {
        return OpenAiError::invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you \
             aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but \
             what was sent was not valid JSON. If you have trouble figuring out how to fix this, \
             please contact us through our help center at help.openai.com.)",
        )
        .into_response(options, request_id);
    };
    let reply = shared.lock().reply_text.clone();
    match answer(options, &body, reply) {
        Ok(answer) => send_answer(shared, &body, answer, request_id),
        Err(e) => e.into_response(options, request_id),
    }
}

/// The answer with its id, whole or streamed as the request asked.
fn send_answer(shared: &Shared, body: &Value, mut answer: Value, request_id: &str) -> Response {
    answer["id"] = json!(format!("chatcmpl-{}", shared.lock().new_id(29, ALNUM)));
    if body.get("stream") == Some(&Value::Bool(true)) {
        let usage = body
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            == Some(&Value::Bool(true));
        return stream_response(&answer, usage, request_id);
    }
    json_response(200, &answer, &[("x-request-id", request_id.to_string())])
}

/// `stream: true`: the answer as `chat.completion.chunk` events (the role, then the content in
/// pieces of a few words, then the finish reason, then the usage when `include_usage` asked for
/// it), each a `data:` line, ending with `data: [DONE]`.
fn stream_response(answer: &Value, include_usage: bool, request_id: &str) -> Response {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": answer["id"], "object": "chat.completion.chunk", "created": answer["created"],
            "model": answer["model"], "system_fingerprint": answer["system_fingerprint"],
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    };
    let choice = &answer["choices"][0];
    let content = choice["message"]["content"].as_str().unwrap_or("");
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    for piece in pieces(content) {
        events.push(chunk(json!({"content": piece}), Value::Null));
    }
    events.push(chunk(json!({}), choice["finish_reason"].clone()));
    if include_usage {
        let mut last = chunk(json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = answer["usage"].clone();
        events.push(last);
    }
    let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    let mut response = (axum::http::StatusCode::OK, text).into_response();
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/event-stream"),
    );
    if let Ok(id) = axum::http::HeaderValue::from_str(request_id) {
        headers.insert("x-request-id", id);
    }
    response
}

/// The content in pieces of about four words, each keeping its trailing space, so that the
/// pieces joined give the content back exactly.
fn pieces(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut words = 0;
    for c in content.chars() {
        piece.push(c);
        if c == ' ' || c == '\n' {
            words += 1;
            if words == 4 {
                out.push(std::mem::take(&mut piece));
                words = 0;
            }
        }
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

/// What the request asked the answer to look like.
enum Format {
    Text,
    JsonObject,
    Schema(Value),
}

/// Models that reason before answering: they refuse `max_tokens` and a non-default
/// temperature, and their reasoning tokens count against `max_completion_tokens`.
fn is_reasoning_model(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    (m.starts_with("o1") || m.starts_with("o3") || m.starts_with("o4") || m.starts_with("gpt-5"))
        && !m.contains("chat")
}

/// Validate the request and build the answer body (without its id).
fn answer(
    options: &OpenAiOptions,
    body: &Value,
    reply: Option<String>,
) -> Result<Value, OpenAiError> {
    let req = body
        .as_object()
        .ok_or_else(|| OpenAiError::wrong_type("body", "an object", body))?;
    let model = model_of(req)?;
    let reasoning = is_reasoning_model(&model);
    let messages = messages_of(req)?;
    let mut walk = Walk {
        // Gemini's OpenAI-compatible layer bills images by Gemini's rules for the model.
        gemini_family: options
            .google_errors
            .then(|| fake_gemini::media::Family::of(&model)),
        ..Walk::default()
    };
    for (i, m) in messages.iter().enumerate() {
        walk.message(options, m, i)?;
    }

    check_temperature(req, reasoning)?;
    // Gemini's layer maps `reasoning_effort` to its own thinking settings: not checked here.
    if !options.google_errors {
        check_reasoning_effort(req, &model, reasoning)?;
    }
    let limit = output_limit(req, reasoning)?;
    let format = response_format(options, req, &walk.all_text)?;

    let proof = Proof::new(&walk.seen);
    let text = reply.unwrap_or_else(|| match &format {
        Format::Text => proof.text(),
        Format::JsonObject => proof.json_object().to_string(),
        Format::Schema(s) => proof.for_schema(s).to_string(),
    });
    let reasoning_tokens = thinking_tokens(req, reasoning, walk.images);
    let (content, cut, completion) = limited(text, limit, reasoning_tokens);
    // Each message costs 3 tokens of framing, and the answer is primed with 3 more.
    let prompt = walk.tokens + 3 * messages.len() as u64 + 3;
    Ok(json!({
        "id": "",
        "object": "chat.completion",
        "created": server::unix_now(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null, "annotations": []},
            "logprobs": null,
            "finish_reason": if cut { "length" } else { "stop" },
        }],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens.min(completion)},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fakevision",
    }))
}

/// The output budget: `max_completion_tokens`, else `max_tokens` (which reasoning models
/// refuse).
fn output_limit(req: &Map<String, Value>, reasoning: bool) -> Result<Option<u64>, OpenAiError> {
    if reasoning && req.get("max_tokens").is_some_and(|v| !v.is_null()) {
        return Err(OpenAiError::invalid(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
             'max_completion_tokens' instead.",
        )
        .param("max_tokens")
        .code("unsupported_parameter"));
    }
    let max_completion = token_limit(req, "max_completion_tokens")?;
    let max_tokens = token_limit(req, "max_tokens")?;
    Ok(max_completion.or(max_tokens))
}

/// Reasoning models think first, and the thinking shares the output budget.
fn thinking_tokens(req: &Map<String, Value>, reasoning: bool, images: u64) -> u64 {
    let thinks = reasoning
        && !matches!(
            req.get("reasoning_effort").and_then(Value::as_str),
            Some("minimal" | "none")
        );
    if thinks {
        128 + 64 * images
    } else {
        0
    }
}

/// A message's `role`: required, one of the roles OpenAI knows.
fn role_of<'a>(obj: &'a Map<String, Value>, at: &str) -> Result<&'a str, OpenAiError> {
    let role = match obj.get("role") {
        Some(Value::String(r)) => r.as_str(),
        None | Some(Value::Null) => return Err(OpenAiError::missing(&format!("{at}.role"))),
        Some(other) => {
            return Err(OpenAiError::wrong_type(
                &format!("{at}.role"),
                "a string",
                other,
            ))
        }
    };
    if !ROLES.contains(&role) {
        return Err(OpenAiError::invalid_value(
            &format!("{at}.role"),
            role,
            &ROLES,
        ));
    }
    Ok(role)
}

/// A content part's `type`: required, a string.
fn part_type<'a>(obj: &'a Map<String, Value>, at: &str) -> Result<&'a str, OpenAiError> {
    match obj.get("type") {
        Some(Value::String(t)) => Ok(t.as_str()),
        None | Some(Value::Null) => Err(OpenAiError::missing(&format!("{at}.type"))),
        Some(other) => Err(OpenAiError::wrong_type(
            &format!("{at}.type"),
            "a string",
            other,
        )),
    }
}

/// A text part's `text`: required, a string.
fn text_of<'a>(obj: &'a Map<String, Value>, at: &str) -> Result<&'a String, OpenAiError> {
    match obj.get("text") {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(OpenAiError::missing(&format!("{at}.text"))),
        Some(other) => Err(OpenAiError::wrong_type(
            &format!("{at}.text"),
            "a string",
            other,
        )),
    }
}

/// Media parts are only allowed in a user's message.
fn from_user(role: &str, at: &str, kinds: &str, one: &str) -> Result<(), OpenAiError> {
    if role == "user" {
        return Ok(());
    }
    Err(OpenAiError::invalid(format!(
        "{kinds} are only allowed for messages with role 'user', but this message with role \
         '{role}' contains {one}."
    ))
    .param(at))
}

/// An image part's `detail`: "auto" (the default), "low" or "high".
fn image_detail<'a>(obj: &'a Map<String, Value>, at: &str) -> Result<&'a str, OpenAiError> {
    Ok(match obj.get("image_url").and_then(|u| u.get("detail")) {
        None | Some(Value::Null) => "auto",
        Some(Value::String(d)) if matches!(d.as_str(), "auto" | "low" | "high") => d.as_str(),
        Some(Value::String(d)) => {
            return Err(OpenAiError::invalid_value(
                &format!("{at}.image_url.detail"),
                d,
                &["auto", "low", "high"],
            ))
        }
        Some(other) => {
            return Err(OpenAiError::wrong_type(
                &format!("{at}.image_url.detail"),
                "a string",
                other,
            ))
        }
    })
}

/// An image's data URL is base64 with an image MIME type.
fn check_image_data_url(data: &media::DataUrl<'_>, url_param: &str) -> Result<(), OpenAiError> {
    if !data.mime.starts_with("image/") || !data.base64 {
        let got = if data.base64 {
            format!("unsupported MIME type '{}'", data.mime)
        } else {
            "a data URL that is not base64-encoded".to_string()
        };
        return Err(OpenAiError::invalid(format!(
            "Invalid '{url_param}'. Expected a base64-encoded data URL with an image MIME type \
             (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got {got}."
        ))
        .param(url_param)
        .code("invalid_value"));
    }
    Ok(())
}

fn invalid_image() -> OpenAiError {
    OpenAiError::invalid("You uploaded an unsupported image. Please make sure your image is valid.")
        .code("invalid_image")
}

/// The image's bytes and its data URL's type are both a format the server takes, and the same.
fn check_image_format(
    options: &OpenAiOptions,
    sniffed: &str,
    declared: &str,
) -> Result<(), OpenAiError> {
    let allowed: Vec<String> = options
        .image_formats
        .iter()
        .map(|m| format!("'{}'", m.trim_start_matches("image/")))
        .collect();
    let format_error = |what: String| {
        OpenAiError::invalid(format!(
            "Invalid image format: {what}. You uploaded an unsupported image. Please make sure \
             your image has of one the following formats: [{}]; supported formats are {}.",
            allowed.join(", "),
            options.image_formats.join(", ")
        ))
        .code("invalid_image_format")
    };
    if !options.image_formats.contains(&sniffed) {
        return Err(format_error(format!("the bytes are {sniffed}")));
    }
    if !options.image_formats.contains(&declared) {
        return Err(format_error(format!("the data URL says {declared}")));
    }
    if declared != sniffed {
        return Err(format_error(format!(
            "the data URL says {declared} but the bytes are {sniffed}"
        )));
    }
    Ok(())
}

/// `model`: required, a non-empty string.
fn model_of(req: &Map<String, Value>) -> Result<String, OpenAiError> {
    match req.get("model") {
        Some(Value::String(m)) if !m.is_empty() => Ok(m.clone()),
        _ => Err(OpenAiError::invalid("you must provide a model parameter")),
    }
}

/// `messages`: required, a non-empty array.
fn messages_of(req: &Map<String, Value>) -> Result<&Vec<Value>, OpenAiError> {
    Ok(match req.get("messages") {
        None | Some(Value::Null) => return Err(OpenAiError::missing("messages")),
        Some(Value::Array(m)) if m.is_empty() => {
            return Err(OpenAiError::invalid(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but \
                 got an empty array instead.",
            )
            .param("messages")
            .code("empty_array"))
        }
        Some(Value::Array(m)) => m,
        Some(other) => return Err(OpenAiError::wrong_type("messages", "an array", other)),
    })
}

/// `temperature`, when given: a number in [0, 2], and only the default 1 on a reasoning model.
fn check_temperature(req: &Map<String, Value>, reasoning: bool) -> Result<(), OpenAiError> {
    if let Some(t) = req.get("temperature").filter(|v| !v.is_null()) {
        let Some(t) = t.as_f64() else {
            return Err(OpenAiError::wrong_type("temperature", "a number", t));
        };
        if reasoning && t != 1.0 {
            return Err(OpenAiError::invalid(format!(
                "Unsupported value: 'temperature' does not support {t} with this model. Only the \
                 default (1) value is supported."
            ))
            .param("temperature")
            .code("unsupported_value"));
        }
        if t > 2.0 {
            return Err(OpenAiError::invalid(format!(
                "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but \
                 got {t} instead."
            ))
            .param("temperature")
            .code("decimal_above_max_value"));
        }
        if t < 0.0 {
            return Err(OpenAiError::invalid(format!(
                "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but \
                 got {t} instead."
            ))
            .param("temperature")
            .code("decimal_below_min_value"));
        }
    }
    Ok(())
}

/// `reasoning_effort`: only on a reasoning model, and one of the values that model takes
/// (o-series: low, medium, high; gpt-5, -mini, -nano: minimal too; gpt-5.1 and later: none,
/// low, medium, high, xhigh, as OpenAI's API reference lists them).
fn check_reasoning_effort(
    req: &Map<String, Value>,
    model: &str,
    reasoning: bool,
) -> Result<(), OpenAiError> {
    let Some(effort) = req.get("reasoning_effort").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    if !reasoning {
        return Err(OpenAiError::invalid(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
        )
        .param("reasoning_effort")
        .code("unsupported_parameter"));
    }
    let Some(effort) = effort.as_str() else {
        return Err(OpenAiError::wrong_type(
            "reasoning_effort",
            "a string",
            effort,
        ));
    };
    let name = model.rsplit('/').next().unwrap_or(model);
    let supported: &[&str] = if name.starts_with("gpt-5.") {
        &["none", "low", "medium", "high", "xhigh"]
    } else if name.starts_with("gpt-5") {
        &["minimal", "low", "medium", "high"]
    } else {
        &["low", "medium", "high"]
    };
    if !supported.contains(&effort) {
        return Err(OpenAiError::invalid(format!(
            "Unsupported value: '{effort}' is not supported with the '{name}' model. Supported \
             values are: {}.",
            quoted_list(supported)
        ))
        .param("reasoning_effort")
        .code("unsupported_value"));
    }
    Ok(())
}

/// The answer within the output budget, which a reasoning model's thinking shares: its
/// content, whether it was cut, and the completion tokens billed.
fn limited(text: String, limit: Option<u64>, reasoning_tokens: u64) -> (String, bool, u64) {
    let (content, cut) = match limit {
        Some(max) if max <= reasoning_tokens => (String::new(), true),
        Some(max) => limit_answer(text, Some(max - reasoning_tokens)),
        None => limit_answer(text, None),
    };
    let completion = if content.is_empty() && reasoning_tokens == 0 {
        1
    } else {
        text_tokens(&content) + reasoning_tokens
    };
    let completion = match limit {
        Some(max) => completion.min(max),
        None => completion,
    };
    (content, cut, completion)
}

fn token_limit(req: &Map<String, Value>, name: &str) -> Result<Option<u64>, OpenAiError> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if n >= 1 => Ok(Some(n as u64)),
            Some(n) => Err(OpenAiError::invalid(format!(
                "Invalid '{name}': integer below minimum value. Expected a value >= 1, but got \
                 {n} instead."
            ))
            .param(name)
            .code("integer_below_min_value")),
            None => Err(OpenAiError::wrong_type(name, "an integer", v)),
        },
    }
}

fn response_format(
    options: &OpenAiOptions,
    req: &Map<String, Value>,
    all_text: &str,
) -> Result<Format, OpenAiError> {
    let rf = match req.get("response_format") {
        None | Some(Value::Null) => return Ok(Format::Text),
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(OpenAiError::wrong_type(
                "response_format",
                "an object",
                other,
            ))
        }
    };
    match rf.get("type").and_then(Value::as_str) {
        None => Err(OpenAiError::missing("response_format.type")),
        Some("text") => Ok(Format::Text),
        Some("json_object") => {
            if !all_text.to_ascii_lowercase().contains("json") {
                return Err(OpenAiError::invalid(
                    "'messages' must contain the word 'json' in some form, to use \
                     'response_format' of type 'json_object'.",
                )
                .param("messages"));
            }
            Ok(Format::JsonObject)
        }
        Some("json_schema") => json_schema_format(options, rf),
        Some(other) => Err(OpenAiError::invalid_value(
            "response_format.type",
            other,
            &["json_object", "json_schema", "text"],
        )),
    }
}

/// OpenAI's structured-output rules for `strict: true`: an object at the root, and every
/// object closed (`additionalProperties: false`) with all its properties required.
fn check_strict(schema: &Value, name: &str) -> Result<(), OpenAiError> {
    let fail = |msg: String| {
        Err(OpenAiError::invalid(format!(
            "Invalid schema for response_format '{name}': {msg}"
        ))
        .param("response_format")
        .code("invalid_value"))
    };
    let root_type = schema.get("type").and_then(Value::as_str).unwrap_or("");
    if root_type != "object" {
        return fail(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{root_type}\"'."
        ));
    }
    let mut stack: Vec<(&Value, Vec<String>)> = vec![(schema, Vec::new())];
    while let Some((node, context)) = stack.pop() {
        let Some(obj) = node.as_object() else {
            continue;
        };
        if let Some(problem) = open_object_problem(obj, &python_tuple(&context)) {
            return fail(problem);
        }
        push_children(&mut stack, obj, &context);
    }
    Ok(())
}

/// A `json_schema` response format: a valid name, and a schema that follows the strict rules
/// when it asks for them (and the server checks them).
fn json_schema_format(
    options: &OpenAiOptions,
    rf: &Map<String, Value>,
) -> Result<Format, OpenAiError> {
    let js = match rf.get("json_schema") {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => {
            return Err(OpenAiError::missing("response_format.json_schema"))
        }
        Some(other) => {
            return Err(OpenAiError::wrong_type(
                "response_format.json_schema",
                "an object",
                other,
            ))
        }
    };
    let name = match js.get("name") {
        Some(Value::String(n)) => n.as_str(),
        _ => return Err(OpenAiError::missing("response_format.json_schema.name")),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err(OpenAiError::invalid(
            "Invalid 'response_format.json_schema.name': string does not match pattern. \
             Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        )
        .param("response_format.json_schema.name")
        .code("invalid_value"));
    }
    let schema = js.get("schema").cloned().unwrap_or_else(|| json!({}));
    if js.get("strict") == Some(&Value::Bool(true)) && options.strict_schemas {
        check_strict(&schema, name)?;
    }
    Ok(Format::Schema(schema))
}

/// What breaks the strict rules in an object schema, if anything: it must be closed
/// (`additionalProperties: false`) and require all its properties.
fn open_object_problem(obj: &Map<String, Value>, ctx: &str) -> Option<String> {
    let is_object =
        obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if is_object {
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            return Some(format!(
                "In context={ctx}, 'additionalProperties' is required to be supplied and to \
                 be false."
            ));
        }
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            if let Some(missing) = props.keys().find(|k| !required.contains(&k.as_str())) {
                return Some(format!(
                    "In context={ctx}, 'required' is required to be supplied and to be an \
                     array including every key in properties. Missing '{missing}'."
                ));
            }
        }
    }
    None
}

/// The schemas inside this one, each with its path, to be checked in turn.
fn push_children<'a>(
    stack: &mut Vec<(&'a Value, Vec<String>)>,
    obj: &'a Map<String, Value>,
    context: &[String],
) {
    let child = |key: &str, sub: Option<&str>| {
        let mut c = context.to_vec();
        c.push(key.to_string());
        if let Some(s) = sub {
            c.push(s.to_string());
        }
        c
    };
    for key in ["properties", "$defs", "definitions"] {
        if let Some(map) = obj.get(key).and_then(Value::as_object) {
            for (k, v) in map {
                stack.push((v, child(key, Some(k))));
            }
        }
    }
    if let Some(items) = obj.get("items") {
        stack.push((items, child("items", None)));
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = obj.get(key).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                stack.push((v, child(key, Some(&i.to_string()))));
            }
        }
    }
}

/// A path printed like a Python tuple: `()`, `('properties',)`, `('properties', 'a')`.
fn python_tuple(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    match q.len() {
        0 => "()".into(),
        1 => format!("({},)", q[0]),
        _ => format!("({})", q.join(", ")),
    }
}

/// What the messages hold, gathered while checking them.
#[derive(Default)]
struct Walk {
    /// The parts of each user message, for the proof.
    seen: Vec<Vec<Seen>>,
    /// Prompt tokens of text and media (framing is added later).
    tokens: u64,
    images: u64,
    /// All text of all messages (for the "json" word rule).
    all_text: String,
    /// Set for Gemini's OpenAI-compatible layer: the family whose token table applies.
    gemini_family: Option<fake_gemini::media::Family>,
}

const ROLES: [&str; 6] = [
    "system",
    "assistant",
    "user",
    "function",
    "tool",
    "developer",
];

impl Walk {
    fn message(&mut self, options: &OpenAiOptions, m: &Value, i: usize) -> Result<(), OpenAiError> {
        let at = format!("messages[{i}]");
        let obj = m
            .as_object()
            .ok_or_else(|| OpenAiError::wrong_type(&at, "an object", m))?;
        let role = role_of(obj, &at)?;
        let mut parts = Vec::new();
        match obj.get("content") {
            None | Some(Value::Null) if role == "assistant" => {}
            None | Some(Value::Null) => return Err(OpenAiError::missing(&format!("{at}.content"))),
            Some(Value::String(s)) => {
                self.text(s);
                parts.push(Seen::Text(s.clone()));
            }
            Some(Value::Array(items)) if items.is_empty() => {
                return Err(OpenAiError::invalid(format!(
                    "Invalid '{at}.content': empty array. Expected an array with minimum length \
                     1, but got an empty array instead."
                ))
                .param(format!("{at}.content"))
                .code("empty_array"))
            }
            Some(Value::Array(items)) => {
                for (j, item) in items.iter().enumerate() {
                    if let Some(seen) =
                        self.part(options, role, item, &format!("{at}.content[{j}]"))?
                    {
                        parts.push(seen);
                    }
                }
            }
            Some(other) => {
                return Err(OpenAiError::wrong_type(
                    &format!("{at}.content"),
                    "one of a string or array of objects",
                    other,
                ))
            }
        }
        if role == "user" {
            self.seen.push(parts);
        }
        Ok(())
    }

    fn text(&mut self, s: &str) {
        self.tokens += text_tokens(s);
        self.all_text.push_str(s);
        self.all_text.push('\n');
    }

    fn part(
        &mut self,
        options: &OpenAiOptions,
        role: &str,
        item: &Value,
        at: &str,
    ) -> Result<Option<Seen>, OpenAiError> {
        let obj = item
            .as_object()
            .ok_or_else(|| OpenAiError::wrong_type(at, "an object", item))?;
        let kind = part_type(obj, at)?;
        let mut supported = vec![
            "text",
            "image_url",
            "input_audio",
            "refusal",
            "audio",
            "file",
        ];
        if options.accept_video {
            supported.insert(2, "video_url");
        }
        match kind {
            "text" => {
                let s = text_of(obj, at)?;
                self.text(s);
                Ok(Some(Seen::Text(s.clone())))
            }
            "image_url" => {
                from_user(role, at, "Image URLs", "an image URL")?;
                self.image(options, obj, at).map(Some)
            }
            "video_url" if !options.accept_video => Err(OpenAiError::invalid(format!(
                "Invalid content type. video_url is not supported by this model. Invalid value: \
                 'video_url'. Supported values are: {}.",
                quoted_list(&supported)
            ))
            .param(format!("{at}.type"))
            .code("invalid_value")),
            "video_url" => {
                from_user(role, at, "Video URLs", "a video URL")?;
                self.video(options, obj, at).map(Some)
            }
            // Accepted by the real API; nothing of them reaches the proof.
            "input_audio" | "refusal" | "audio" | "file" => Ok(None),
            other => Err(OpenAiError::invalid_value(
                &format!("{at}.type"),
                other,
                &supported,
            )),
        }
    }

    /// The `url` of an `image_url` / `video_url` object.
    fn url<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str, OpenAiError> {
        let inner = match obj.get(key) {
            Some(Value::Object(o)) => o,
            None | Some(Value::Null) => return Err(OpenAiError::missing(&format!("{at}.{key}"))),
            Some(other) => {
                return Err(OpenAiError::wrong_type(
                    &format!("{at}.{key}"),
                    "an object",
                    other,
                ))
            }
        };
        match inner.get("url") {
            Some(Value::String(u)) => Ok(u),
            None | Some(Value::Null) => Err(OpenAiError::missing(&format!("{at}.{key}.url"))),
            Some(other) => Err(OpenAiError::wrong_type(
                &format!("{at}.{key}.url"),
                "a string",
                other,
            )),
        }
    }

    fn image(
        &mut self,
        options: &OpenAiOptions,
        obj: &Map<String, Value>,
        at: &str,
    ) -> Result<Seen, OpenAiError> {
        let url = Self::url(obj, "image_url", at)?;
        let detail = image_detail(obj, at)?;
        let url_param = format!("{at}.image_url.url");
        self.images += 1;
        let Some(data) = media::parse_data_url(url) else {
            if url.starts_with("https://") || url.starts_with("http://") {
                self.tokens += if detail == "low" { 85 } else { 765 };
                return Ok(Seen::RemoteImage(url.to_string()));
            }
            return Err(OpenAiError::invalid(format!(
                "Invalid '{url_param}'. Expected a valid URL, but got a value with an invalid format."
            ))
            .param(url_param)
            .code("invalid_value"));
        };
        check_image_data_url(&data, &url_param)?;
        let bytes = media::decode_base64(data.payload).ok_or_else(invalid_image)?;
        let sniffed = media::sniff_image(&bytes).ok_or_else(invalid_image)?;
        check_image_format(options, sniffed, &media::canonical_mime(&data.mime))?;
        let n = bytes.len() as u64;
        if options.max_image_bytes > 0 && n > options.max_image_bytes {
            return Err(OpenAiError::invalid(format!(
                "Image too large: {n} bytes after base64 decoding, more than the {} bytes allowed \
                 per image. Please make sure your image is below {} MB in size.",
                options.max_image_bytes,
                options.max_image_bytes / (1024 * 1024)
            ))
            .param(url_param)
            .code("image_too_large"));
        }
        let facts = MediaFacts::image(sniffed, &bytes);
        let (w, h) = facts.size.ok_or_else(invalid_image)?;
        let side = options.max_image_side;
        if side > 0 && (w > side || h > side) {
            return Err(OpenAiError::invalid(format!(
                "Image too large: {w}x{h} px; images may be at most {side} px on either side."
            ))
            .param(url_param)
            .code("image_too_large"));
        }
        self.tokens += match self.gemini_family {
            // At the model's default resolution (the layer takes no mediaResolution).
            Some(family) => fake_gemini::media::image_tokens(
                family,
                fake_gemini::media::Resolution::Unspecified,
            ),
            None => image_tokens(w, h, detail),
        };
        Ok(Seen::Image(facts))
    }

    fn video(
        &mut self,
        options: &OpenAiOptions,
        obj: &Map<String, Value>,
        at: &str,
    ) -> Result<Seen, OpenAiError> {
        let url = Self::url(obj, "video_url", at)?;
        let url_param = format!("{at}.video_url.url");
        let Some(data) = media::parse_data_url(url) else {
            if url.starts_with("https://") || url.starts_with("http://") {
                self.tokens += video_tokens(None);
                return Ok(Seen::RemoteVideo(url.to_string()));
            }
            return Err(OpenAiError::invalid(format!(
                "Invalid '{url_param}'. Expected a valid URL, but got a value with an invalid format."
            ))
            .param(url_param)
            .code("invalid_value"));
        };
        if !data.mime.starts_with("video/") || !data.base64 {
            return Err(OpenAiError::invalid(format!(
                "Invalid '{url_param}'. Expected a base64-encoded data URL with a video MIME type \
                 (e.g. 'data:video/mp4;base64,...'), but got '{}'.",
                url.chars().take(40).collect::<String>()
            ))
            .param(url_param)
            .code("invalid_value"));
        }
        let invalid_video = || {
            OpenAiError::invalid(
                "The video could not be decoded. Please make sure the video is valid.",
            )
            .param(format!("{at}.video_url.url"))
            .code("invalid_video")
        };
        let bytes = media::decode_base64(data.payload).ok_or_else(invalid_video)?;
        let sniffed = media::sniff_video(&bytes).ok_or_else(invalid_video)?;
        let declared = media::canonical_mime(&data.mime);
        if !options.video_formats.contains(&sniffed)
            || !media::video_types_agree(&declared, sniffed)
        {
            return Err(OpenAiError::invalid(format!(
                "Invalid video format: the data URL says {declared} and the bytes are {sniffed}; \
                 supported formats are {}.",
                options.video_formats.join(", ")
            ))
            .param(url_param)
            .code("invalid_video_format"));
        }
        let facts = MediaFacts::video(sniffed, &bytes);
        self.tokens += video_tokens(facts.duration_secs);
        Ok(Seen::Video(facts))
    }
}

/// OpenAI's tile rule: fit in 2048x2048, shortest side down to 768, then 170 tokens per
/// 512 px tile plus 85; a flat 85 at low detail.
fn image_tokens(w: u32, h: u32, detail: &str) -> u64 {
    if detail == "low" {
        return 85;
    }
    let (mut w, mut h) = (w.max(1) as f64, h.max(1) as f64);
    let fit = (2048.0 / w.max(h)).min(1.0);
    w *= fit;
    h *= fit;
    let shrink = (768.0 / w.min(h)).min(1.0);
    w *= shrink;
    h *= shrink;
    let tiles = ((w / 512.0).ceil() * (h / 512.0).ceil()) as u64;
    85 + 170 * tiles
}

/// One frame a second of video (6 s when the header tells no length), each billed like a
/// Gemini 2.x frame at the default resolution (258): servers that take video (vLLM) have no
/// published rule, and this is the figure of Gemini's table that this fake stands for.
fn video_tokens(duration_secs: Option<f64>) -> u64 {
    use fake_gemini::media::{frame_tokens, Family, Resolution};
    let secs = duration_secs.unwrap_or(6.0).ceil().max(1.0) as u64;
    frame_tokens(Family::Gemini2, Resolution::Unspecified) * secs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_tokens_follow_openai_rule() {
        assert_eq!(image_tokens(800, 500, "auto"), 85 + 170 * 2);
        assert_eq!(image_tokens(1024, 1024, "high"), 85 + 170 * 4);
        assert_eq!(image_tokens(4096, 8192, "high"), 85 + 170 * 6);
        assert_eq!(image_tokens(4096, 8192, "low"), 85);
    }

    #[test]
    fn streamed_pieces_join_to_the_content() {
        let content = "image 1: image/png, 4x4 px\nprompt: say a few words more than four";
        let split = pieces(content);
        assert!(split.len() > 2, "{split:?}");
        assert_eq!(split.concat(), content);
        assert!(pieces("").is_empty());
    }

    #[test]
    fn helpers_print_like_openai() {
        assert_eq!(
            quoted_list(&["auto", "low", "high"]),
            "'auto', 'low', and 'high'"
        );
        assert_eq!(python_tuple(&["properties".into()]), "('properties',)");
        assert_eq!(redact("sk-wrong-key-1234"), "sk-**********1234");
        assert!(is_reasoning_model("gpt-5-mini") && is_reasoning_model("o3"));
        assert!(!is_reasoning_model("gpt-4o") && !is_reasoning_model("gpt-5-chat-latest"));
    }
}
