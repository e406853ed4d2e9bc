//! `fake-gemini`: a local stand-in for the Google Gemini REST API (Files API resumable
//! upload, file polling and deletion, `generateContent` / `streamGenerateContent`, Google
//! error bodies) used by Vaider's tests and benchmarks, since the real service is unreachable.
//!
//! Start one with [`FakeGemini::start`], point a client at [`FakeGemini::base_url`] with the
//! key [`FakeGemini::API_KEY`], and inspect what arrived with [`FakeGemini::requests`],
//! [`FakeGemini::files`] and [`FakeGemini::generate_requests`]; [`FakeGemini::seen`] tells
//! which moments of a video each request showed the model.
//!
//! Real-API details a client must get right (all faked faithfully):
//! - `sha256Hash` is the base64 of the lower-case *hex* digest (88 characters), not of the
//!   raw 32 bytes;
//! - a wrong key is 400 INVALID_ARGUMENT / `API_KEY_INVALID`, but no key at all is 403
//!   PERMISSION_DENIED; unknown, deleted or expired files are 403 PERMISSION_DENIED;
//! - error bodies omit `details` when there are none; no `Retry-After` header, ever;
//! - on thinking models (2.5, 3.x) `totalTokenCount` = prompt + candidates +
//!   `thoughtsTokenCount`, and thoughts share `maxOutputTokens` (a tiny limit gives
//!   `MAX_TOKENS` with no `parts`);
//! - only today's models are served ([`served_models`]); a shut-down one (gemini-2.5-flash,
//!   gemini-2.5-pro, gemini-2.0-flash) answers 404 NOT_FOUND with Google's message;
//!   `GET /{v}/models` is paged (`pageSize`, `pageToken`, `nextPageToken`);
//! - `thinkingConfig.thinkingLevel` is refused before Gemini 3 ("Thinking level is not
//!   supported for this model.") and where the model lacks the level (no `minimal` on
//!   gemini-3.8-flash or the Pro models); a lowered temperature on Gemini 3, which Google
//!   accepts but advises against, is noted in [`FakeGemini::guidance_notes`];
//! - unknown JSON fields are refused (400 "Unknown name ..."), camelCase and snake_case alike
//!   are accepted; JSON request bodies are limited to 20 MiB.

mod answer;
mod browse;
mod errors;
mod failure;
mod files;
mod generate;
mod guidance;
mod judge;
pub mod media;
mod models;
mod planner;
mod quota;
mod received;
mod review;
mod router;
pub mod schema;
mod seen;
mod state;
mod upload;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use models::served_models;
pub use seen::{Seen, SeenImage, SeenVideo};
use state::Shared;

/// The endpoints a [`Fault`] can be queued for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /upload/{v}/files` without `upload_id` (starting a resumable upload).
    UploadStart,
    /// Any request on an upload session URL (`?upload_id=`): chunks, finalize, query.
    UploadChunk,
    /// `GET /{v}/files/{id}`.
    GetFile,
    /// `:generateContent` and `:streamGenerateContent`. (Gemini's OpenAI-compatible
    /// `/v1beta/openai/chat/completions` is faked by `fake-vision`, with the other
    /// chat-completions servers.)
    Generate,
    /// `DELETE /{v}/files/{id}`.
    DeleteFile,
}

/// A one-shot fault, used by the next request to its endpoint (see [`FakeGemini::push_fault`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Answer with this HTTP status and the Google error body for it (400 INVALID_ARGUMENT,
    /// 403 PERMISSION_DENIED, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 500 INTERNAL,
    /// 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, ...). A plain 429 carries no details.
    Status(u16),
    /// 429 RESOURCE_EXHAUSTED with a `RetryInfo` detail (`retryDelay`, e.g. "1.5s" or
    /// "45.837906927s") and a `QuotaFailure` detail whose `quotaId` contains `PerDay` when
    /// `per_day` is true (else a per-minute quota id).
    RateLimited { retry_delay: String, per_day: bool },
    /// Wait this long, then answer normally.
    Delay(Duration),
    /// Generate only: answer 200 with `promptFeedback.blockReason` set to this value
    /// (e.g. "SAFETY", "PROHIBITED_CONTENT") and no candidates.
    Blocked(String),
    /// Generate only: answer 200 with one candidate whose `finishReason` is this value
    /// (e.g. "SAFETY", "RECITATION") and which has no content.
    FinishReason(String),
    /// Answer with this status and a body of `bytes` bytes (a JSON opening, then spaces),
    /// streamed in 64 kiB chunks without a Content-Length: a hostile or broken upstream
    /// whose answer never ends. Nothing that large is ever held in memory here.
    Huge { status: u16, bytes: u64 },
}

/// One HTTP request as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// Bytes of body received (for upload chunks, only this is kept).
    pub body_len: u64,
    /// When the request's head reached the fake's handler. Comparable with `Instant`s taken
    /// elsewhere in the same process (benchmarks run the fake in-process for this).
    pub at: Instant,
    /// When the first body byte arrived; recorded for upload session requests only (None for
    /// other requests and for empty bodies).
    pub first_byte_at: Option<Instant>,
}

impl RecordedRequest {
    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A file created through the Files API (kept after deletion, with `deleted = true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// "files/abc123".
    pub name: String,
    /// Empty when the client gave none.
    pub display_name: String,
    pub mime_type: String,
    pub size_bytes: u64,
    /// Lower-case hex of the SHA-256 of the bytes received.
    pub sha256_hex: String,
    /// "PROCESSING", "ACTIVE" or "FAILED".
    pub state: String,
    pub deleted: bool,
    /// Number of upload requests that carried bytes or finalized the upload.
    pub chunks: u32,
}

/// Google's error body, `{"error": {"code", "message", "status"}}`, with the canonical status
/// name for `code` (400 INVALID_ARGUMENT, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, ...), for
/// other fakes that answer as Google does.
pub fn google_error(code: u16, message: &str) -> serde_json::Value {
    errors::ApiError::new(code, message).body()
}

/// Google's answer to a wrong API key: 400 INVALID_ARGUMENT with an `ErrorInfo` detail whose
/// reason is `API_KEY_INVALID`.
pub fn google_bad_key_error() -> serde_json::Value {
    errors::ApiError::bad_key().body()
}

/// Google's answer to a request with no API key at all: 403 PERMISSION_DENIED.
pub fn google_missing_key_error() -> serde_json::Value {
    errors::ApiError::missing_key().body()
}

/// A running fake Gemini server. Clones share the server; it stops when the last clone drops.
#[derive(Clone)]
pub struct FakeGemini {
    shared: Arc<Shared>,
    _guard: Arc<ServerGuard>,
}

struct ServerGuard(tokio::task::AbortHandle);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl std::fmt::Debug for FakeGemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGemini")
            .field("base_url", &self.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl FakeGemini {
    /// The only API key accepted until [`FakeGemini::set_api_key`] changes it.
    pub const API_KEY: &'static str = "test-gemini-key";

    /// Binds 127.0.0.1:0 and serves in a tokio task; returns once listening.
    pub async fn start() -> FakeGemini {
        Self::start_on(0)
            .await
            .expect("fake-gemini: cannot bind 127.0.0.1:0")
    }

    /// Binds 127.0.0.1:`port` (0 = any free port) and serves in a tokio task.
    pub async fn start_on(port: u16) -> std::io::Result<FakeGemini> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(format!("http://127.0.0.1:{}", addr.port())));
        let app = router::app(shared.clone());
        let task = tokio::spawn(async move {
            // Errors here only happen when the listener dies; nothing useful to do with them.
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeGemini {
            shared,
            _guard: Arc::new(ServerGuard(task.abort_handle())),
        })
    }

    /// "http://127.0.0.1:PORT", without a trailing slash.
    pub fn base_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// Replace the accepted API key.
    pub fn set_api_key(&self, key: &str) {
        self.shared.lock().api_key = key.to_string();
    }

    /// Answer at most `n` models a page on `GET /{v}/models` (Google may answer fewer than
    /// `pageSize`), so a client that does not follow `nextPageToken` misses models.
    pub fn set_models_page_cap(&self, n: usize) {
        self.shared.lock().models_page_cap = n.max(1);
    }

    /// How many GET polls of a file answer PROCESSING before it turns ACTIVE (default 1).
    /// Applies to files finalized after the call; 0 makes them ACTIVE at once.
    pub fn set_processing_polls(&self, n: u32) {
        self.shared.lock().processing_polls = n;
    }

    /// Make the next uploaded files end in state FAILED (with `error {code,message}`) after
    /// processing, until switched off again.
    pub fn set_fail_processing(&self, on: bool) {
        self.shared.lock().fail_processing = on;
    }

    /// Queue a fault: each queued fault is used once, by the next request to that endpoint,
    /// in order, before any other handling (even the API key check).
    pub fn push_fault(&self, endpoint: Endpoint, fault: Fault) {
        self.shared
            .lock()
            .faults
            .entry(endpoint)
            .or_default()
            .push_back(fault);
    }

    /// Replace the model's answer text (None = the default automatic answer).
    pub fn set_reply_text(&self, text: Option<String>) {
        self.shared.lock().reply_text = text;
    }

    /// Delay before every generateContent answer (slow model), default zero.
    pub fn set_generate_delay(&self, d: Duration) {
        self.shared.lock().generate_delay = d;
    }

    /// Enforce a per-minute quota of `n` generateContent calls per API key and model over a
    /// sliding minute (None: no quota, the default). A call past it gets Google's 429
    /// RESOURCE_EXHAUSTED with QuotaFailure (`quotaId`
    /// `GenerateRequestsPerMinutePerProjectPerModel-FreeTier`, `quotaValue` n) and RetryInfo
    /// (the real time left, e.g. "37.5s"); refused calls do not count.
    pub fn set_quota_per_minute(&self, n: Option<u32>) {
        self.shared.lock().quotas.per_minute = n;
    }

    /// The same for a daily quota (`GenerateRequestsPerDayPerProjectPerModel-FreeTier`); the
    /// fake's day starts with a key's first call on a model.
    pub fn set_quota_per_day(&self, n: Option<u32>) {
        self.shared.lock().quotas.per_day = n;
    }

    /// When each call refused for a quota was answered, oldest first.
    pub fn quota_refusals(&self) -> Vec<Instant> {
        self.shared.lock().quotas.refused.clone()
    }

    /// Every request received, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Every file ever created (finalized uploads), including deleted ones, oldest first.
    pub fn files(&self) -> Vec<FileRecord> {
        self.shared
            .lock()
            .files
            .iter()
            .map(|f| f.record())
            .collect()
    }

    /// When each generateContent / streamGenerateContent answer left its handler, oldest
    /// first: taken right before the response is handed to the server (for a streamed answer
    /// the body still follows). Requests answered by a queued `Status` / `RateLimited` fault or
    /// refused before the handler (bad key, oversized body) are not counted.
    pub fn generate_answered_at(&self) -> Vec<Instant> {
        self.shared.lock().generate_answered.clone()
    }

    /// Where the generateContent calls so far departed from their model family's guidance
    /// (a temperature below 1.0 or no thinking level on Gemini 3...), one line each; empty
    /// when every call followed it.
    pub fn guidance_notes(&self) -> Vec<String> {
        self.shared.lock().guidance_notes.clone()
    }

    /// The JSON bodies of the generateContent / streamGenerateContent calls that parsed as JSON.
    pub fn generate_requests(&self) -> Vec<serde_json::Value> {
        self.shared.lock().generate_bodies.clone()
    }

    /// What each generateContent / streamGenerateContent call (as in
    /// [`FakeGemini::generate_requests`]) showed the model: the frames Gemini samples from its
    /// video parts and its images with their labelled times.
    pub fn seen(&self) -> Vec<Seen> {
        let inner = self.shared.lock();
        let duration = |uri: &str| {
            let id = generate::file_id_of_uri(uri)?;
            inner.files.iter().find(|f| f.id == id)?.duration_secs
        };
        inner
            .generate_bodies
            .iter()
            .map(|body| seen::seen(body, duration))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timestamps benchmarks rely on: arrival, first upload byte, generate answer.
    #[tokio::test]
    async fn requests_and_answers_are_timestamped() {
        let fake = FakeGemini::start().await;
        let client = reqwest::Client::new();
        let before = Instant::now();
        let start = client
            .post(format!("{}/upload/v1beta/files", fake.base_url()))
            .header("x-goog-api-key", FakeGemini::API_KEY)
            .header("X-Goog-Upload-Protocol", "resumable")
            .header("X-Goog-Upload-Command", "start")
            .header("X-Goog-Upload-Header-Content-Length", "1000")
            .header("X-Goog-Upload-Header-Content-Type", "video/webm")
            .send()
            .await
            .expect("start");
        let url = start
            .headers()
            .get("x-goog-upload-url")
            .and_then(|v| v.to_str().ok())
            .expect("upload url")
            .to_string();
        let chunk = client
            .post(&url)
            .header("X-Goog-Upload-Offset", "0")
            .header("X-Goog-Upload-Command", "upload, finalize")
            .body(vec![7u8; 1000])
            .send()
            .await
            .expect("chunk");
        assert_eq!(chunk.status(), 200);
        let generate = client
            .post(format!(
                "{}/v1beta/models/gemini-3.5-flash-lite:generateContent",
                fake.base_url()
            ))
            .header("x-goog-api-key", FakeGemini::API_KEY)
            .json(&serde_json::json!({"contents": [{"parts": [{"text": "hi"}]}]}))
            .send()
            .await
            .expect("generate");
        assert_eq!(generate.status(), 200);
        let after = Instant::now();

        let requests = fake.requests();
        assert_eq!(requests.len(), 3);
        assert!(requests.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(before <= requests[0].at && requests[2].at <= after);
        assert_eq!(requests[0].first_byte_at, None);
        let first_byte = requests[1].first_byte_at.expect("first byte time");
        assert!(requests[1].at <= first_byte && first_byte <= after);
        let answered = fake.generate_answered_at();
        assert_eq!(answered.len(), 1);
        assert!(requests[2].at <= answered[0] && answered[0] <= after);
    }
}
