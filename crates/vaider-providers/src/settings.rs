//! A provider's settings once resolved from the config file, the environment and the
//! built-in defaults: which protocol it speaks, where, and what media it takes. The config
//! (vaider-core's `config`) reads and resolves them; the adapters here only use them.

use serde::{Deserialize, Serialize};

pub const DEFAULT_GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GeminiConfig {
    pub base_url: String,
    /// Size of each resumable-upload chunk; the official SDK uses 8 MiB. Rounded to 256 KiB.
    pub upload_chunk_mib: u32,
    /// How often to ask whether an uploaded video has finished processing.
    pub poll_interval_ms: u64,
    /// First backoff wait after a 500/503/504; doubled on each further try.
    pub retry_base_ms: u64,
}

impl Default for GeminiConfig {
    fn default() -> Self {
        GeminiConfig {
            base_url: DEFAULT_GEMINI_BASE_URL.to_string(),
            upload_chunk_mib: 8,
            poll_interval_ms: 1000,
            retry_base_ms: 1000,
        }
    }
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Adapter {
    /// Google's native Gemini API (video through the Files API).
    Gemini,
    /// OpenAI chat completions, also spoken by z.ai, vLLM, Ollama and LM Studio.
    Openai,
    /// Anthropic messages.
    Anthropic,
    /// Amazon Bedrock's Converse API, signed with AWS credentials (SigV4).
    Bedrock,
}

/// A provider with every setting resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    pub name: String,
    pub adapter: Adapter,
    pub base_url: String,
    pub model: String,
    pub needs_key: bool,
    pub accepts_video: bool,
    pub max_image_bytes: u64,
    pub max_image_side: u32,
    pub image_formats: Vec<String>,
    /// Bedrock only: the AWS region and profile chosen in the config file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_profile: Option<String>,
}

/// Bedrock's runtime endpoint; `{region}` is filled in from the AWS region at each call.
pub const BEDROCK_BASE_URL: &str = "https://bedrock-runtime.{region}.amazonaws.com";
