//! The one error type of the engine. Every door (REST, MCP, CLI, UI) shows these, so each
//! message says what went wrong and what to do, and each carries a stable code that the REST
//! contract and the MCP results report.

use std::time::Duration;

use crate::media_error::MediaError;

/// Stable error codes, shared by every door. The REST contract maps them to HTTP statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The path or URL does not lead to a readable video or image.
    InvalidPath,
    /// An argument is missing or malformed.
    InvalidRequest,
    /// The call took longer than its timeout.
    Timeout,
    /// The model service answered with an error, or could not be reached.
    UpstreamError,
    /// The provider's per-minute quota refused the call and kept refusing after Vaider
    /// waited and retried as it asked (the wait is in the message).
    RateLimited,
    /// The provider's daily quota is used up: waiting minutes will not help.
    QuotaExhausted,
    /// No API key is configured for the provider.
    NoApiKey,
    /// Something inside Vaider failed (disk, database).
    Internal,
    /// Analyses are paused from the tray app or the UI.
    Paused,
    /// The provider does not serve the model asked for (shut down, or a wrong name).
    ModelNotFound,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidPath => "INVALID_PATH",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::UpstreamError => "UPSTREAM_ERROR",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::QuotaExhausted => "QUOTA_EXHAUSTED",
            ErrorCode::NoApiKey => "NO_API_KEY",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Paused => "PAUSED",
            ErrorCode::ModelNotFound => "MODEL_NOT_FOUND",
        }
    }
}

/// What the model service answered, kept for the caller (REST `upstreamResponse`) and the log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpstreamResponse {
    pub status: u16,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
pub enum VaiderError {
    #[error(transparent)]
    Media(#[from] MediaError),

    #[error("{message}")]
    InvalidPath { message: String },

    #[error("{0}")]
    InvalidRequest(String),

    #[error("The analysis took longer than the {}s timeout and was stopped. Retry with a longer timeout (timeout_sec / timeoutSec) for long videos.", .limit.as_secs())]
    Timeout { limit: Duration, elapsed: Duration },

    #[error("{message}")]
    Upstream {
        message: String,
        /// The service's own answer, when it gave one (not for network failures).
        response: Option<UpstreamResponse>,
    },

    /// The provider refused the call for its quota (HTTP 429), after Vaider's retries; or at
    /// once for a daily quota.
    #[error("{message}")]
    RateLimited {
        message: String,
        /// How long the provider asked to wait, when it said.
        retry_after: Option<Duration>,
        /// A daily quota: no retry helps until it resets.
        daily: bool,
        response: Option<UpstreamResponse>,
    },

    #[error("No API key is set for {provider}. Run `vaider key set` (stores it in the OS keychain), or set GEMINI_API_KEY in the environment or in a .env file.")]
    NoApiKey { provider: String },

    #[error("Vaider could not {action}: {reason}")]
    Internal { action: String, reason: String },

    /// The provider does not serve the model (boxed: the error path is the rare one).
    #[error("{}", .0.message())]
    ModelNotFound(Box<ModelGone>),

    #[error("Vaider is paused: a person paused it from the tray menu or the history window. Ask them to choose Resume server, or retry later.")]
    Paused,
}

impl VaiderError {
    pub fn code(&self) -> ErrorCode {
        match self {
            VaiderError::Media(_) | VaiderError::InvalidPath { .. } => ErrorCode::InvalidPath,
            VaiderError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            VaiderError::Timeout { .. } => ErrorCode::Timeout,
            VaiderError::Upstream { .. } => ErrorCode::UpstreamError,
            VaiderError::RateLimited { daily: true, .. } => ErrorCode::QuotaExhausted,
            VaiderError::RateLimited { .. } => ErrorCode::RateLimited,
            VaiderError::NoApiKey { .. } => ErrorCode::NoApiKey,
            VaiderError::Internal { .. } => ErrorCode::Internal,
            VaiderError::Paused => ErrorCode::Paused,
            VaiderError::ModelNotFound(_) => ErrorCode::ModelNotFound,
        }
    }

    pub fn internal(action: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        VaiderError::Internal {
            action: action.into(),
            reason: reason.to_string(),
        }
    }

    pub fn upstream_response(&self) -> Option<&UpstreamResponse> {
        match self {
            VaiderError::Upstream { response, .. } | VaiderError::RateLimited { response, .. } => {
                response.as_ref()
            }
            VaiderError::ModelNotFound(gone) => gone.response.as_ref(),
            _ => None,
        }
    }
}

/// What [`VaiderError::ModelNotFound`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelGone {
    pub provider: String,
    pub model: String,
    /// The shutdown day, when the model is in the table of retirements.
    pub shut_down: Option<String>,
    /// The models to pick instead: the provider's list, else the table's replacements.
    pub choices: Vec<String>,
    /// The provider's own answer.
    pub response: Option<UpstreamResponse>,
    /// The sentence shown, made from the table of models (`models::not_found_message`).
    pub sentence: String,
}

impl ModelGone {
    pub fn message(&self) -> String {
        self.sentence.clone()
    }
}

pub type Result<T, E = VaiderError> = std::result::Result<T, E>;
