//! The adapter layer: one trait that every vision model service implements, so the pipeline
//! never knows whose API it talks to. Gemini is the first adapter; OpenAI-compatible, Anthropic
//! and local models plug in behind the same trait.

pub mod gemini;

use std::path::Path;
use std::time::Instant;

use crate::analysis::Usage;
use crate::error::VaiderError;
use crate::media::MediaInfo;
use crate::progress::ProgressSink;

/// Everything a provider needs for one call.
pub struct ProviderJob<'a> {
    pub media_path: &'a Path,
    pub media: &'a MediaInfo,
    pub model: &'a str,
    pub system_prompt: &'a str,
    pub user_prompt: &'a str,
    /// When set, the model must answer JSON that follows this schema.
    pub response_schema: Option<serde_json::Value>,
    pub progress: &'a dyn ProgressSink,
    /// The whole call must end by then; retries never wait past it.
    pub deadline: Instant,
    /// A short id to name uploads by, so an upload can be traced to its interaction.
    pub interaction_id: &'a str,
}

/// What a provider answers.
#[derive(Debug, Clone)]
pub struct ProviderAnswer {
    pub text: String,
    pub usage: Usage,
    /// The model that actually answered (may carry a version suffix).
    pub model_version: Option<String>,
    /// Seconds of video the provider reports, when it does.
    pub video_seconds: Option<f64>,
    /// The provider's answer with nothing secret in it, for the interaction log.
    pub raw_response: serde_json::Value,
    /// Each upstream request made (method, endpoint without query, status, ms), for the log.
    pub calls: Vec<UpstreamCall>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamCall {
    pub method: &'static str,
    /// The endpoint with no key, no query and no upload session id.
    pub endpoint: String,
    pub status: Option<u16>,
    pub duration_ms: u64,
    pub attempt: u32,
}

#[async_trait::async_trait]
pub trait VisionProvider: Send + Sync {
    /// The name users write in config and arguments ("gemini").
    fn name(&self) -> &'static str;
    /// Whether this provider can take this video or image as it is.
    fn accepts(&self, media: &MediaInfo) -> bool;
    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError>;
}
