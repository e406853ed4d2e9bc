//! Every door's errors in one place. [`Mapped`] names each capability's error as all doors
//! show it (the contract's code, the HTTP status, the message): the HTTP doors (REST, the UI's
//! API, the guard) answer it as [`ApiError`], the MCP tools put its code and message in their
//! error results. [`ApiError`] is a status and the contract's body
//! `{"error": {"code", "message"}}`, plus the spec's siblings of `error` for a timeout
//! (`durationMs`) and an upstream failure (`upstreamResponse`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use vaider_core::error::{ErrorCode, UpstreamResponse};
use vaider_core::{AnalysisFailure, VaiderError};
use vaider_qa::QaError;

/// An error as every door names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// The contract's code, e.g. `PLAN_NOT_FOUND`.
    pub code: &'static str,
    /// The HTTP status the REST and UI doors answer with.
    pub status: StatusCode,
    pub message: String,
}

impl Mapped {
    /// `CODE: message`, as a tool's error text and the CLI's error line begin.
    pub fn line(&self) -> String {
        format!("{}: {}", self.code, self.message)
    }
}

/// The contract's mapping of the engine's error codes to HTTP statuses.
impl From<&VaiderError> for Mapped {
    fn from(error: &VaiderError) -> Self {
        let code = error.code();
        let status = match code {
            ErrorCode::InvalidPath => StatusCode::BAD_REQUEST,
            ErrorCode::InvalidRequest => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Timeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::UpstreamError | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::RateLimited | ErrorCode::QuotaExhausted => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::NoApiKey | ErrorCode::Paused => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ModelNotFound => StatusCode::NOT_FOUND,
        };
        Mapped {
            code: code.as_str(),
            status,
            message: error.to_string(),
        }
    }
}

/// The QA contract's codes: a plan or run that is not there is a 404, input the service
/// cannot use a 400, a plan no person approved a 403, anything else (browser, model, storage)
/// a 500.
impl From<&QaError> for Mapped {
    fn from(error: &QaError) -> Self {
        use vaider_qa::ErrorCode as Qa;
        let status = match error.code {
            Qa::PlanNotFound | Qa::RunNotFound => StatusCode::NOT_FOUND,
            Qa::InvalidInput => StatusCode::BAD_REQUEST,
            Qa::PlanNotApproved => StatusCode::FORBIDDEN,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Mapped {
            code: error.code.as_str(),
            status,
            message: error.message.clone(),
        }
    }
}

/// An error as the HTTP doors show it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    /// Boxed: handlers return `Result<_, ApiError>`, and the error path is the rare one.
    body: Box<ErrorBody>,
}

/// The whole JSON body. The spec puts `durationMs` and `upstreamResponse` beside `error`;
/// they are inside `error` too, where clients written for earlier versions read them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorBody {
    error: ErrorDetail,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upstream_response: Option<UpstreamResponse>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorDetail {
    code: String,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upstream_response: Option<UpstreamResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interaction_id: Option<String>,
    /// MODEL_NOT_FOUND: the models to pick instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    choices: Option<Vec<String>>,
    /// A capability's own details (a QA error's `details`: what an unapproved plan reaches).
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<serde_json::Value>,
}

impl ApiError {
    /// The sentence the error says, for a door that shows only that (a chat view's tool).
    pub fn message(&self) -> &str {
        &self.body.error.message
    }

    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: Box::new(ErrorBody {
                error: ErrorDetail {
                    code: code.to_string(),
                    message: message.into(),
                    duration_ms: None,
                    upstream_response: None,
                    interaction_id: None,
                    choices: None,
                    details: None,
                },
                duration_ms: None,
                upstream_response: None,
            }),
        }
    }

    /// 400 `INVALID_REQUEST`: a query or body value the UI's API cannot use.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message)
    }

    /// 404 `NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }

    /// 500 `INTERNAL`: something on this machine failed (disk, database, a worker thread).
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", message)
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl From<Mapped> for ApiError {
    fn from(mapped: Mapped) -> Self {
        ApiError::new(mapped.status, mapped.code, mapped.message)
    }
}

/// The contract's `{error: {code, message, details?}}`, details kept.
impl From<QaError> for ApiError {
    fn from(error: QaError) -> Self {
        let mut api: ApiError = Mapped::from(&error).into();
        api.body.error.details = error.details;
        api
    }
}

/// An analysis's failure: its [`Mapped`] code and status, with the timeout's duration, the
/// upstream answer, the interaction and a gone model's choices beside them.
impl From<AnalysisFailure> for ApiError {
    fn from(failure: AnalysisFailure) -> Self {
        let Mapped {
            code,
            status,
            message,
        } = Mapped::from(&failure.error);
        let duration_ms =
            (failure.error.code() == ErrorCode::Timeout).then_some(failure.duration_ms);
        let upstream_response = failure.error.upstream_response().cloned();
        ApiError {
            status,
            body: Box::new(ErrorBody {
                error: ErrorDetail {
                    code: code.to_string(),
                    message,
                    duration_ms,
                    upstream_response: upstream_response.clone(),
                    interaction_id: failure.interaction_id,
                    choices: match &failure.error {
                        VaiderError::ModelNotFound(gone) => Some(gone.choices.clone()),
                        _ => None,
                    },
                    details: None,
                },
                duration_ms,
                upstream_response,
            }),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(*self.body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn body_of(error: ApiError) -> Value {
        serde_json::to_value(&error.body).unwrap_or_default()
    }

    #[test]
    fn a_plain_error_is_code_and_message_only() {
        let body = body_of(ApiError::not_found("No such thing."));
        assert_eq!(
            body,
            json!({"error": {"code": "NOT_FOUND", "message": "No such thing."}})
        );
    }

    #[test]
    fn a_qa_error_keeps_its_code_with_its_status() {
        use vaider_qa::ErrorCode as Qa;
        for (code, status) in [
            (Qa::PlanNotFound, StatusCode::NOT_FOUND),
            (Qa::RunNotFound, StatusCode::NOT_FOUND),
            (Qa::InvalidInput, StatusCode::BAD_REQUEST),
            (Qa::PlanNotApproved, StatusCode::FORBIDDEN),
            (Qa::BrowserError, StatusCode::INTERNAL_SERVER_ERROR),
        ] {
            let error = ApiError::from(QaError::new(code, "why"));
            assert_eq!(error.status(), status);
            assert_eq!(
                body_of(error),
                json!({"error": {"code": code.as_str(), "message": "why"}})
            );
        }
        let mapped = Mapped::from(&QaError::new(Qa::PlanNotFound, "no plan p1"));
        assert_eq!(mapped.line(), "PLAN_NOT_FOUND: no plan p1");
    }
}
