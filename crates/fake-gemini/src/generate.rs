//! `models/{model}:generateContent`, `:streamGenerateContent` (SSE or JSON array) and
//! `:countTokens`: strict request validation like Google's (unknown fields, roles, parts, file
//! states, inline base64, fps), deterministic token counts, and an answer that proves which
//! bytes arrived (or JSON built from the requested schema).
//!
//! Here: the endpoints and the answer's sending. The request's reading is `request` (its
//! `generationConfig` in `config`); the answer's content is `crate::answer`.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::answer::{
    blocked_response, build_answer, finish_only_response, stream_responses, unary_response,
};
use crate::errors::{json_ok, ApiError};
use crate::router::{check_fields, field};
use crate::state::Shared;
use crate::Fault;

mod config;
mod request;
use request::parse_request;
pub(crate) use request::{file_id_of_uri, text_tokens, Prompt};

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
        let notes = crate::guidance::notes(model, &request);
        inner.guidance_notes.extend(notes);
        let prompt = match parse_request(&mut inner, &request, model, "GenerateContentRequest") {
            Ok(p) => p,
            Err(e) => return e.into_response(),
        };
        (prompt, inner.reply_text.clone(), inner.new_id(22))
    };

    let responses = answers(&prompt, reply_text, model, &response_id, mode, injected);
    match mode {
        Mode::Unary => json_ok(&responses[0]),
        Mode::Sse => sse(&responses),
        Mode::JsonArray => json_array(&responses),
    }
}

/// The answer's responses: one, or a stream's chunks; an injected block or finish reason
/// instead of the answer.
fn answers(
    prompt: &Prompt,
    reply_text: Option<String>,
    model: &str,
    response_id: &str,
    mode: Mode,
    injected: Option<Fault>,
) -> Vec<Value> {
    match injected {
        Some(Fault::Blocked(reason)) => {
            vec![blocked_response(prompt, &reason, model, response_id)]
        }
        Some(Fault::FinishReason(reason)) => {
            vec![finish_only_response(prompt, &reason, model, response_id)]
        }
        _ => {
            let answer = build_answer(prompt, reply_text, model);
            match mode {
                Mode::Unary => vec![unary_response(prompt, &answer, model, response_id)],
                Mode::Sse | Mode::JsonArray => {
                    stream_responses(prompt, &answer, model, response_id)
                }
            }
        }
    }
}

/// `alt=sse`: one `data:` event per response.
fn sse(responses: &[Value]) -> Response {
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

/// A stream without `alt=sse`: a pretty-printed JSON array, as Google writes it.
fn json_array(responses: &[Value]) -> Response {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_checked() {
        assert!(model_known("gemini-3.5-flash-lite"));
        assert!(!model_known("gemini-2.5-flash"));
        assert!(!model_known("gpt-4o"));
        assert!(!model_known("gemini-"));
    }
}
