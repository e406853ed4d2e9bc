//! `fake-vision`: local stand-ins for OpenAI-compatible chat completions (OpenAI, z.ai, vLLM,
//! Ollama, LM Studio, Gemini's OpenAI-compatible endpoint), the Anthropic messages API and
//! Amazon Bedrock's Converse API.
//! This is the workspace's one fake of the chat-completions protocol. The real services are out of reach, so
//! Vaider's provider adapters are tested against fakes that check what the real ones check.
//!
//! Start one with [`FakeOpenAi::start`] / [`FakeAnthropic::start`], point a client at
//! `base_url()` with the fake's `API_KEY`, and inspect what arrived with `requests()` (JSON
//! bodies) and `recorded()` (every HTTP request). The default answer proves what arrived: one
//! line per image or video (type, pixel size, bytes, sha256), the text label right before each
//! image, and the prompt.
//!
//! Real-API details a client must get right (all faked):
//! - OpenAI: `Authorization: Bearer`; data URLs `data:image/png;base64,...`; only png, jpeg,
//!   gif, webp; a `video_url` part is refused; `json_object` needs the word "json" in the
//!   messages; `json_schema` with `strict: true` needs `additionalProperties: false` and every
//!   property required; o-series / gpt-5 models refuse `max_tokens` and a non-default
//!   `temperature`; `stream: true` answers server-sent events ending in `data: [DONE]`.
//! - Gemini's OpenAI-compatible layer: images only, and Google's error body inside a
//!   one-element array.
//! - Anthropic: `x-api-key` and `anthropic-version` headers; `max_tokens` required;
//!   `media_type` must be one of four and match the bytes; the 5 MB image limit counts the
//!   *base64* text; 8000 px a side (2000 when over 20 images); 100 images; 32 MB a request
//!   (413); unknown top-level fields are refused ("Extra inputs are not permitted"); Claude
//!   4.7 and later refuse `temperature`, `top_p` and `top_k` and take adaptive thinking only,
//!   earlier ones a thinking budget, and thinking allows no temperature but 1 (`claude.rs`);
//!   a thinking model's answer starts with a thinking block.
//! - OpenAI: `reasoning_effort` only on reasoning models, with the values each takes.
//! - Bedrock: `POST /model/{modelId}/converse` with the model id percent-encoded; a SigV4
//!   `Authorization` for service `bedrock` in the fake's region, `host` and `x-amz-date`
//!   signed, the signature recomputed with [`FakeBedrock::SECRET_ACCESS_KEY`]; image blocks
//!   `{"image": {"format", "source": {"bytes": base64}}}` in png/jpeg/gif/webp matching their
//!   bytes; video blocks only for Nova models; errors as `{"message"}` with `x-amzn-ErrorType`.

mod anthropic;
mod bedrock;
mod claude;
mod media;
mod openai;
mod proof;
mod server;
mod sigv4_check;
mod state;

use std::sync::Arc;
use std::time::Duration;

use server::ServerGuard;
use state::{Provider, Shared};

/// A one-shot fault, used by the next request to the fake's model endpoint
/// (`chat/completions` or `/v1/messages`), in order, before any other check (even the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this HTTP status and the provider's error body for it (OpenAI: 500
    /// `server_error`, 503 "The server is overloaded or not ready yet.", ...; Anthropic: 500
    /// `api_error`, 529 `overloaded_error`, ...). A plain 429 has no `retry-after` header.
    Status(u16),
    /// 429 with the provider's rate-limit body and a `retry-after: N` header (seconds).
    RateLimited { retry_after_secs: u64 },
    /// Wait this long, then handle the request normally.
    Delay(Duration),
}

/// One HTTP request as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// Bytes of body received (also for bodies refused as too large).
    pub body_len: u64,
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

/// What the OpenAI-compatible fake accepts; [`Default`] is OpenAI itself. The presets
/// ([`OpenAiOptions::zai`], [`OpenAiOptions::vllm`], ...) follow each server's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiOptions {
    /// `Authorization: Bearer <key>` needed; false for local servers (Ollama, LM Studio,
    /// vLLM without `--api-key`), which ignore the header.
    pub require_key: bool,
    /// `{"type":"video_url"}` parts accepted (vLLM, z.ai); false = 400 (OpenAI, Ollama).
    pub accept_video: bool,
    /// Image MIME types accepted, checked against the bytes' real format.
    pub image_formats: Vec<&'static str>,
    /// Decoded bytes allowed per image; 0 = no limit.
    pub max_image_bytes: u64,
    /// Pixels allowed on either side of an image; 0 = no limit.
    pub max_image_side: u32,
    /// Video MIME types accepted when `accept_video` (checked against the bytes' format).
    pub video_formats: Vec<&'static str>,
    /// Enforce OpenAI's structured-output rules for `json_schema` with `strict: true`
    /// (every object `additionalProperties: false`, every property required). Other servers
    /// ignore `strict`.
    pub strict_schemas: bool,
    /// Errors as Gemini's OpenAI-compatible layer sends them: Google's
    /// `{"error": {"code", "message", "status", "details"}}` inside a one-element array, a
    /// wrong key as 400 `API_KEY_INVALID`. False: OpenAI's `{"error": {"message", "type",
    /// "param", "code"}}`.
    pub google_errors: bool,
    /// The path [`FakeOpenAi::base_url`] ends with ("/v1"; Gemini's "/v1beta/openai"). Every
    /// server's chat path is answered whatever this is.
    pub base_path: &'static str,
}

const ALL_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const MIB: u64 = 1024 * 1024;

impl Default for OpenAiOptions {
    fn default() -> Self {
        Self::openai()
    }
}

impl OpenAiOptions {
    /// OpenAI: Bearer key, png/jpeg/webp/gif up to 20 MB each, no video.
    pub fn openai() -> Self {
        OpenAiOptions {
            require_key: true,
            accept_video: false,
            image_formats: ALL_IMAGES.to_vec(),
            max_image_bytes: 20 * MIB,
            max_image_side: 0,
            video_formats: Vec::new(),
            strict_schemas: true,
            google_errors: false,
            base_path: "/v1",
        }
    }

    /// z.ai GLM-4.6V (`/api/paas/v4/chat/completions`): Bearer key, jpg/png up to 5 MB,
    /// video as mp4, mkv or mov (webm is not in its list).
    pub fn zai() -> Self {
        OpenAiOptions {
            require_key: true,
            accept_video: true,
            image_formats: vec!["image/png", "image/jpeg"],
            max_image_bytes: 5 * MIB,
            max_image_side: 0,
            video_formats: vec!["video/mp4", "video/x-matroska", "video/quicktime"],
            strict_schemas: false,
            google_errors: false,
            base_path: "/v1",
        }
    }

    /// vLLM serving a video-capable model (Qwen-VL style): no key, images and `video_url`
    /// data URLs in any container its decoder reads.
    pub fn vllm() -> Self {
        OpenAiOptions {
            require_key: false,
            accept_video: true,
            image_formats: ALL_IMAGES.to_vec(),
            max_image_bytes: 0,
            max_image_side: 0,
            video_formats: vec![
                "video/mp4",
                "video/webm",
                "video/x-matroska",
                "video/quicktime",
            ],
            strict_schemas: false,
            google_errors: false,
            base_path: "/v1",
        }
    }

    /// Ollama's OpenAI-compatible API: no key, images only.
    pub fn ollama() -> Self {
        OpenAiOptions {
            require_key: false,
            accept_video: false,
            image_formats: vec!["image/png", "image/jpeg", "image/webp"],
            max_image_bytes: 0,
            max_image_side: 0,
            video_formats: Vec::new(),
            strict_schemas: false,
            google_errors: false,
            base_path: "/v1",
        }
    }

    /// LM Studio's OpenAI-compatible server: no key, images only.
    pub fn lm_studio() -> Self {
        Self::ollama()
    }

    /// Gemini's OpenAI-compatible endpoint (`/v1beta/openai/chat/completions`): Bearer key,
    /// images (png, jpeg, webp, gif) only, video refused, Google's errors in an array.
    pub fn gemini() -> Self {
        OpenAiOptions {
            require_key: true,
            accept_video: false,
            image_formats: ALL_IMAGES.to_vec(),
            max_image_bytes: 20 * MIB,
            max_image_side: 0,
            video_formats: Vec::new(),
            strict_schemas: false,
            google_errors: true,
            base_path: "/v1beta/openai",
        }
    }
}

/// The state and lifetime shared by both fakes.
#[derive(Clone)]
struct Handle {
    shared: Arc<Shared>,
    _guard: Arc<ServerGuard>,
}

impl Handle {
    async fn start(provider: Provider, base_path: &str) -> Handle {
        let (shared, guard) = server::start(provider, base_path)
            .await
            .expect("fake-vision: cannot bind 127.0.0.1:0");
        Handle {
            shared,
            _guard: Arc::new(guard),
        }
    }

    fn push_fault(&self, fault: Fault) {
        self.shared.lock().faults.push_back(fault);
    }

    fn set_reply_text(&self, text: Option<String>) {
        self.shared.lock().reply_text = text;
    }

    fn requests(&self) -> Vec<serde_json::Value> {
        self.shared.lock().bodies.clone()
    }

    fn recorded(&self) -> Vec<RecordedRequest> {
        self.shared.lock().recorded.clone()
    }
}

/// A running fake OpenAI-compatible server. Clones share it; it stops when the last clone drops.
#[derive(Clone)]
pub struct FakeOpenAi {
    handle: Handle,
}

impl std::fmt::Debug for FakeOpenAi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeOpenAi")
            .field("base_url", &self.handle.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl FakeOpenAi {
    /// The only key accepted when the options require one.
    pub const API_KEY: &'static str = "test-openai-key";

    /// OpenAI's behaviour on 127.0.0.1:0, serving in a tokio task; returns once listening.
    pub async fn start() -> FakeOpenAi {
        Self::start_with(OpenAiOptions::default()).await
    }

    /// Another OpenAI-compatible server's behaviour (see the [`OpenAiOptions`] presets).
    pub async fn start_with(options: OpenAiOptions) -> FakeOpenAi {
        let base_path = options.base_path;
        FakeOpenAi {
            handle: Handle::start(Provider::OpenAi(options), base_path).await,
        }
    }

    /// "http://127.0.0.1:PORT/v1" (or the options' `base_path`): clients POST
    /// `{base_url}/chat/completions`. The same endpoint also answers at
    /// `/api/paas/v4/chat/completions` (z.ai's path) and `/v1beta/openai/chat/completions`
    /// (Gemini's).
    pub fn base_url(&self) -> String {
        self.handle.shared.base_url.clone()
    }

    /// Queue a fault for the next chat/completions request (see [`Fault`]).
    pub fn push_fault(&self, fault: Fault) {
        self.handle.push_fault(fault);
    }

    /// Replace the answer text (None = the default answer that proves what arrived).
    pub fn set_reply_text(&self, text: Option<String>) {
        self.handle.set_reply_text(text);
    }

    /// Every chat/completions body that parsed as JSON, in arrival order, whatever the
    /// answer was (faulted and refused requests included, so retries can be counted).
    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.handle.requests()
    }

    /// Every HTTP request received, in arrival order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.handle.recorded()
    }
}

/// A running fake Anthropic messages API. Clones share it; it stops when the last clone drops.
#[derive(Clone)]
pub struct FakeAnthropic {
    handle: Handle,
}

impl std::fmt::Debug for FakeAnthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeAnthropic")
            .field("base_url", &self.handle.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl FakeAnthropic {
    /// The only `x-api-key` accepted.
    pub const API_KEY: &'static str = "test-anthropic-key";

    /// Binds 127.0.0.1:0 and serves in a tokio task; returns once listening.
    pub async fn start() -> FakeAnthropic {
        FakeAnthropic {
            handle: Handle::start(Provider::Anthropic, "").await,
        }
    }

    /// "http://127.0.0.1:PORT": clients POST `{base_url}/v1/messages`.
    pub fn base_url(&self) -> String {
        self.handle.shared.base_url.clone()
    }

    /// Queue a fault for the next `/v1/messages` request (see [`Fault`]).
    pub fn push_fault(&self, fault: Fault) {
        self.handle.push_fault(fault);
    }

    /// Replace the answer text (None = the default answer that proves what arrived).
    pub fn set_reply_text(&self, text: Option<String>) {
        self.handle.set_reply_text(text);
    }

    /// Every `/v1/messages` body that parsed as JSON, in arrival order, whatever the answer.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.handle.requests()
    }

    /// Every HTTP request received, in arrival order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.handle.recorded()
    }
}

/// A running fake Amazon Bedrock runtime (Converse). Clones share it; it stops when the last
/// clone drops.
#[derive(Clone)]
pub struct FakeBedrock {
    handle: Handle,
}

impl std::fmt::Debug for FakeBedrock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeBedrock")
            .field("base_url", &self.handle.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl FakeBedrock {
    /// The only access key id accepted.
    pub const ACCESS_KEY_ID: &'static str = "AKIDFAKEBEDROCK";
    /// The secret the fake checks signatures with (a test value, not a real key).
    pub const SECRET_ACCESS_KEY: &'static str = "fake/Bedrock+Secret/Key0000000000000000";
    /// The region signatures must be scoped to, unless started with another.
    pub const REGION: &'static str = "us-east-1";

    /// Binds 127.0.0.1:0 and serves in a tokio task; returns once listening.
    pub async fn start() -> FakeBedrock {
        Self::start_in(Self::REGION).await
    }

    /// A fake that accepts signatures scoped to `region` only.
    pub async fn start_in(region: &str) -> FakeBedrock {
        FakeBedrock {
            handle: Handle::start(
                Provider::Bedrock {
                    region: region.to_string(),
                },
                "",
            )
            .await,
        }
    }

    /// "http://127.0.0.1:PORT": clients POST `{base_url}/model/{modelId}/converse`.
    pub fn base_url(&self) -> String {
        self.handle.shared.base_url.clone()
    }

    /// Queue a fault for the next Converse request (see [`Fault`]); it answers before the
    /// signature is checked.
    pub fn push_fault(&self, fault: Fault) {
        self.handle.push_fault(fault);
    }

    /// Replace the answer text (None = the default answer that proves what arrived).
    pub fn set_reply_text(&self, text: Option<String>) {
        self.handle.set_reply_text(text);
    }

    /// Every Converse body that parsed as JSON, in arrival order, whatever the answer.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.handle.requests()
    }

    /// Every HTTP request received, in arrival order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.handle.recorded()
    }
}
