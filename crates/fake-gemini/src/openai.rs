//! Gemini's OpenAI-compatible endpoint (`POST /v1beta/openai/chat/completions`): text and
//! images (base64 data URLs) only, video refused, as the doc says. Requests are translated to
//! the native form and answered like generateContent; errors come as a one-element array.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::errors::{json_ok, ApiError};
use crate::generate::{self, answer_native, PlainAnswer};
use crate::state::Shared;

const IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/webp",
    "image/gif",
];

/// The OpenAI-compatible layer wraps Google errors in an array.
pub(crate) fn error_response(e: ApiError) -> Response {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::BAD_REQUEST);
    let body = serde_json::to_string_pretty(&json!([e.body()])).unwrap_or_default();
    let mut resp = (status, body).into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    resp
}

pub(crate) fn chat(shared: &Shared, body: &[u8]) -> Response {
    match chat_inner(shared, body) {
        Ok(resp) => resp,
        Err(e) => error_response(e),
    }
}

fn chat_inner(shared: &Shared, body: &[u8]) -> Result<Response, ApiError> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("Invalid JSON payload received. {e}")))?;
    let req = request
        .as_object()
        .ok_or_else(|| ApiError::invalid("Invalid JSON payload received. Expected an object."))?;
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::invalid("model is required."))?;
    let model = model.strip_prefix("models/").unwrap_or(model).to_string();
    if !generate::model_known(&model) {
        return Err(generate::model_not_found(&model, "v1beta"));
    }
    let native = to_native(req)?;
    let stream = req.get("stream") == Some(&Value::Bool(true));
    let include_usage = req
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        == Some(&Value::Bool(true));

    let (answer, id) = {
        let mut inner = shared.lock();
        inner.generate_bodies.push(native.clone());
        let answer = answer_native(&mut inner, &native, &model)?;
        (answer, format!("chatcmpl-{}", inner.new_id(24)))
    };
    let created = chrono::Utc::now().timestamp();
    let finish = if answer.finish == "MAX_TOKENS" {
        "length"
    } else {
        "stop"
    };
    if !stream {
        return Ok(json_ok(&json!({
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "finish_reason": finish,
            }],
            "usage": usage(&answer),
        })));
    }
    let text = answer.text.clone().unwrap_or_default();
    let mut events: Vec<Value> = generate::pieces(&text)
        .into_iter()
        .map(|piece| {
            json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": null}],
            })
        })
        .collect();
    events.push(json!({
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
    }));
    if include_usage {
        events.push(json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [], "usage": usage(&answer),
        }));
    }
    let mut lines: Vec<Result<String, std::convert::Infallible>> = events
        .iter()
        .map(|e| Ok(format!("data: {e}\n\n")))
        .collect();
    lines.push(Ok("data: [DONE]\n\n".to_string()));
    let mut resp = (
        StatusCode::OK,
        Body::from_stream(futures_util::stream::iter(lines)),
    )
        .into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    Ok(resp)
}

fn usage(a: &PlainAnswer) -> Value {
    let completion = a.text_tokens + a.thought_tokens;
    json!({
        "prompt_tokens": a.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": a.prompt_tokens + completion,
    })
}

/// Translate chat messages to a native GenerateContentRequest.
fn to_native(req: &Map<String, Value>) -> Result<Value, ApiError> {
    let messages = req
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| ApiError::invalid("messages must be a non-empty array."))?;
    let mut system: Vec<Value> = Vec::new();
    let mut contents: Vec<Value> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let parts = message_parts(m.get("content").unwrap_or(&Value::Null), i)?;
        match role {
            "system" | "developer" => system.extend(parts),
            "user" | "tool" => contents.push(json!({"role": "user", "parts": parts})),
            "assistant" => contents.push(json!({"role": "model", "parts": parts})),
            other => {
                return Err(ApiError::invalid(format!(
                    "messages[{i}].role: unsupported role {other:?}."
                )))
            }
        }
    }
    let mut native = json!({ "contents": contents });
    if !system.is_empty() {
        native["systemInstruction"] = json!({ "parts": system });
    }
    let mut gc = Map::new();
    if let Some(t) = req.get("temperature").filter(|v| !v.is_null()) {
        gc.insert("temperature".into(), t.clone());
    }
    if let Some(t) = req.get("top_p").filter(|v| !v.is_null()) {
        gc.insert("topP".into(), t.clone());
    }
    if let Some(n) = req
        .get("max_completion_tokens")
        .or_else(|| req.get("max_tokens"))
        .filter(|v| !v.is_null())
    {
        gc.insert("maxOutputTokens".into(), n.clone());
    }
    if let Some(n) = req.get("n").filter(|v| !v.is_null()) {
        gc.insert("candidateCount".into(), n.clone());
    }
    if let Some(stop) = req.get("stop").filter(|v| !v.is_null()) {
        let list = match stop {
            Value::String(s) => json!([s]),
            other => other.clone(),
        };
        gc.insert("stopSequences".into(), list);
    }
    match req
        .get("response_format")
        .and_then(|f| f.get("type"))
        .and_then(Value::as_str)
    {
        None | Some("text") => {}
        Some("json_object") => {
            gc.insert("responseMimeType".into(), json!("application/json"));
        }
        Some("json_schema") => {
            gc.insert("responseMimeType".into(), json!("application/json"));
            let schema = req
                .get("response_format")
                .and_then(|f| f.get("json_schema"))
                .and_then(|s| s.get("schema"))
                .cloned()
                .unwrap_or_else(|| json!({}));
            gc.insert("responseJsonSchema".into(), schema);
        }
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "response_format.type: unsupported value {other:?}."
            )))
        }
    }
    if !gc.is_empty() {
        native["generationConfig"] = Value::Object(gc);
    }
    Ok(native)
}

fn message_parts(content: &Value, i: usize) -> Result<Vec<Value>, ApiError> {
    match content {
        Value::String(s) => Ok(vec![json!({ "text": s })]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(j, item)| content_part(item, i, j))
            .collect(),
        _ => Err(ApiError::invalid(format!(
            "messages[{i}].content must be a string or an array of content parts."
        ))),
    }
}

fn content_part(item: &Value, i: usize, j: usize) -> Result<Value, ApiError> {
    let at = format!("messages[{i}].content[{j}]");
    match item.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => Ok(json!({ "text": item.get("text").and_then(Value::as_str).unwrap_or("") })),
        "image_url" => {
            let url = item
                .get("image_url")
                .and_then(|u| u.get("url").or(Some(u)))
                .and_then(Value::as_str)
                .unwrap_or("");
            let Some(rest) = url.strip_prefix("data:") else {
                return Err(ApiError::invalid(format!(
                    "{at}.image_url: only base64 data URLs are supported here (fake-gemini cannot \
                     fetch remote images)."
                )));
            };
            let (meta, data) = rest.split_once(',').unwrap_or((rest, ""));
            let mime = meta
                .strip_suffix(";base64")
                .unwrap_or(meta)
                .to_ascii_lowercase();
            if !IMAGE_TYPES.contains(&mime.as_str()) {
                return Err(ApiError::invalid(format!(
                    "{at}.image_url: unsupported MIME type {mime:?}: the OpenAI-compatible \
                     endpoint takes images (png, jpeg, webp, gif) only; send video through the \
                     native API."
                )));
            }
            let mime = if mime == "image/jpg" {
                "image/jpeg".to_string()
            } else {
                mime
            };
            // The native path checks the base64; gif is accepted here and counted as an image.
            let mime = if mime == "image/gif" {
                "image/png".to_string()
            } else {
                mime
            };
            Ok(json!({ "inlineData": { "mimeType": mime, "data": data } }))
        }
        other => Err(ApiError::invalid(format!(
            "{at}.type: unsupported content type {other:?}: the OpenAI-compatible endpoint takes \
             text and image_url parts only (no video)."
        ))),
    }
}
