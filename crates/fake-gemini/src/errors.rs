//! Google-style error answers: `{"error":{"code","message","status","details"}}` with the
//! canonical status names and messages of the Gemini API. No `Retry-After` header, ever.

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// An error answer under construction.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub code: u16,
    pub status: &'static str,
    pub message: String,
    /// Omitted from the body when empty, as Google does.
    pub details: Vec<Value>,
    pub headers: Vec<(&'static str, String)>,
}

/// The canonical gRPC status name Google uses for an HTTP code.
pub(crate) fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

fn default_message(code: u16) -> &'static str {
    match code {
        400 => "Request contains an invalid argument.",
        401 => "Request had invalid authentication credentials.",
        403 => "The caller does not have permission",
        404 => "Requested entity was not found.",
        409 => "The entity already exists.",
        429 => "Resource has been exhausted (e.g. check quota).",
        499 => "The operation was cancelled.",
        500 => "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
        501 => "Operation is not implemented, or supported, or enabled.",
        503 => "The model is overloaded. Please try again later.",
        504 => "Deadline expired before operation could complete.",
        _ => "Unknown error.",
    }
}

impl ApiError {
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        ApiError {
            code,
            status: status_name(code),
            message: message.into(),
            details: Vec::new(),
            headers: Vec::new(),
        }
    }

    /// The generic answer for an HTTP status, as a fault injects it.
    pub fn for_status(code: u16) -> Self {
        Self::new(code, default_message(code))
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    /// 400 FAILED_PRECONDITION.
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        ApiError {
            status: "FAILED_PRECONDITION",
            ..Self::new(400, message)
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// A key was given but is not the accepted one.
    pub fn bad_key() -> Self {
        let message = "API key not valid. Please pass a valid API key.";
        ApiError {
            details: vec![
                json!({
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"}
                }),
                json!({
                    "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                    "locale": "en-US",
                    "message": message
                }),
            ],
            ..Self::new(400, message)
        }
    }

    /// No key at all: Google answers 403, not 400.
    pub fn missing_key() -> Self {
        Self::new(
            403,
            "Method doesn't allow unregistered callers (callers without established identity). \
             Please use API Key or other form of API consumer identity to call this API.",
        )
    }

    /// 429 with QuotaFailure and RetryInfo details.
    pub fn rate_limited(retry_delay: &str, per_day: bool, model: Option<&str>) -> Self {
        let model = model.unwrap_or("gemini-3.5-flash-lite");
        Self::quota_exceeded(retry_delay, per_day, model, if per_day { 250 } else { 10 })
    }

    /// 429 for a quota of `limit` calls a minute (or a day), as Google words it.
    pub fn quota_exceeded(retry_delay: &str, per_day: bool, model: &str, limit: u32) -> Self {
        let quota_id = if per_day {
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        } else {
            "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
        };
        let limit = limit.to_string();
        let message = format!(
            "You exceeded your current quota, please check your plan and billing details. For more \
             information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n\
             * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, \
             limit: {limit}, model: {model}\nPlease retry in {retry_delay}."
        );
        ApiError {
            details: vec![
                json!({
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [{
                        "description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits"
                    }]
                }),
                json!({
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": quota_id,
                        "quotaDimensions": {"location": "global", "model": model},
                        "quotaValue": limit
                    }]
                }),
                json!({
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": retry_delay
                }),
            ],
            ..Self::new(429, message)
        }
    }

    pub fn body(&self) -> Value {
        let mut error = json!({
            "code": self.code,
            "message": self.message,
            "status": self.status,
        });
        if !self.details.is_empty() {
            error["details"] = Value::Array(self.details.clone());
        }
        json!({ "error": error })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_string_pretty(&self.body()).unwrap_or_default();
        let mut resp = (status, body).into_response();
        let headers = resp.headers_mut();
        headers.insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=UTF-8"),
        );
        for (name, value) in &self.headers {
            if let Ok(v) = HeaderValue::from_str(value) {
                headers.insert(HeaderName::from_static(name), v);
            }
        }
        resp
    }
}

/// Google's front end answers unknown URLs with an HTML page, not a JSON error.
pub(crate) fn html_not_found(path: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error 404 (Not Found)!!1</title>\n  \
         <p><b>404.</b> <ins>That’s an error.</ins>\n  <p>The requested URL <code>{}</code> was not found on this server.  \
         <ins>That’s all we know.</ins>\n",
        html_escape(path)
    );
    let mut resp = (StatusCode::NOT_FOUND, body).into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=UTF-8"),
    );
    resp
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A JSON 200 answer with Google's content type.
pub(crate) fn json_ok(value: &Value) -> Response {
    let body = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    resp
}
