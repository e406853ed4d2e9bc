//! The adapter layer: one trait that every vision model service implements, so the pipeline
//! never knows whose API it talks to: Gemini (native, with video), OpenAI-compatible chat
//! completions (OpenAI, z.ai, vLLM, Ollama, LM Studio), Anthropic messages and Amazon
//! Bedrock's Converse API (SigV4-signed). Also the one
//! place where upstream requests are sent and retried within the call's deadline.

pub mod anthropic;
pub mod bedrock;
pub mod bounded;
pub mod gemini;
pub mod openai;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use vaider_base::error::VaiderError;
use vaider_base::progress::ProgressSink;
use vaider_base::secrets::ApiKey;
use vaider_media::image_fit::{FittedImage, ImageLimits};
use vaider_media::media::MediaInfo;

use crate::settings::{Adapter, GeminiConfig, ProviderConfig};

/// One piece of media, in the form the provider takes it.
#[derive(Debug, Clone)]
pub enum MediaPart {
    /// A whole file: Gemini uploads it; an OpenAI-compatible server that takes video gets it
    /// as a data URL. `plan`, for a video, says what the model is shown of it once uploaded
    /// (clips, keyframes, or all of it when none); it is worked out during the upload.
    File {
        path: PathBuf,
        media: MediaInfo,
        plan: Option<crate::sampling::PlannedVideo>,
    },
    /// An image ready to send inline, with a label sent just before it (a keyframe's time,
    /// "EXPECTED", "ACTUAL").
    Image {
        image: FittedImage,
        label: Option<String>,
        /// A still of a video (sent in place of it), not an image the agent sent: it may go
        /// at a lower resolution (`TokenRules::keyframe_setting`).
        keyframe: bool,
    },
}

/// The parts of an uploaded video a model is shown, from the sampling plan.
#[derive(Debug, Clone)]
pub struct VideoClips {
    pub clips: Vec<crate::sampling::Clip>,
    /// The `mediaResolution` they go at.
    pub setting: crate::tokens::Setting,
}

/// What a provider takes, so the pipeline can adapt media to it instead of failing.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// Whole videos go to the provider; otherwise they become keyframes.
    pub video: bool,
    pub image: ImageLimits,
    /// Images over the inline limit can go as files (Gemini's Files API) rather than shrink.
    pub files_for_large_images: bool,
    /// Parts of a video can be sent as clips with their own rate (Gemini's `videoMetadata`).
    pub video_clips: bool,
}

impl Capabilities {
    pub fn of(config: &ProviderConfig) -> Capabilities {
        Capabilities {
            video: config.accepts_video,
            image: ImageLimits {
                formats: config.image_formats.clone(),
                max_bytes: config.max_image_bytes,
                max_side: config.max_image_side,
            },
            files_for_large_images: config.adapter == Adapter::Gemini,
            video_clips: config.adapter == Adapter::Gemini && config.accepts_video,
        }
    }
}

/// Everything a provider needs for one call.
pub struct ProviderJob<'a> {
    pub parts: &'a [MediaPart],
    pub model: &'a str,
    /// What the call is for: with the model, it decides the sampling and reasoning settings
    /// sent (`crate::guidance`).
    pub job: crate::guidance::Job,
    pub system_prompt: &'a str,
    pub user_prompt: &'a str,
    /// The user prompt with a note about the media, for a video whose plan is known only
    /// after its upload (the note says which moments the model sees).
    pub user_prompt_with: &'a (dyn Fn(&str) -> String + Sync),
    /// When set, the model must answer JSON that follows this schema.
    pub response_schema: Option<serde_json::Value>,
    pub progress: &'a dyn ProgressSink,
    /// The whole call must end by then; retries never wait past it. A wait for the quota
    /// pushes it back: after [`crate::quota::Meter::admit`], read `meter.deadline()`.
    pub deadline: Instant,
    /// The call's place under the provider's per-minute quota (provider, key and model).
    pub meter: &'a crate::quota::Meter<'a>,
    /// A short id to name uploads by, so an upload can be traced to its interaction.
    pub interaction_id: &'a str,
    /// Cancelled when the answer is no longer wanted (the same bytes were answered from the
    /// cache meanwhile). A provider stops at the next point where stopping leaves nothing
    /// behind, and cleans up what it uploaded; it is never dropped half-way through a request
    /// that creates something upstream.
    pub stop: &'a tokio_util::sync::CancellationToken,
}

impl ProviderJob<'_> {
    /// An error once the answer is no longer wanted: checked between the steps of a call.
    pub fn ensure_wanted(&self) -> Result<(), VaiderError> {
        if self.stop.is_cancelled() {
            return Err(stopped());
        }
        Ok(())
    }
}

/// What a provider returns when it stopped because the answer was no longer wanted.
pub fn stopped() -> VaiderError {
    VaiderError::internal(
        "ask the model",
        "stopped: the same media was answered from the cache",
    )
}

/// The tokens a call used, as the provider counted them, beside Vaider's estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// What the provider counted (Gemini's `usageMetadata.promptTokenCount`): the truth.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Vaider's estimate of the input tokens, worked out before the call from the request
    /// sent and the token rules of the model called; shown beside `inputTokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_input_tokens: Option<u64>,
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
    /// The name users write in config and arguments ("gemini", "openai", ...).
    fn name(&self) -> &str;
    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError>;
}

/// Builds the adapter for a provider's settings.
pub fn build(
    config: &ProviderConfig,
    http: reqwest::Client,
    key: Option<ApiKey>,
    max_attempts: u32,
    gemini: &GeminiConfig,
) -> Box<dyn VisionProvider> {
    let upstream = Upstream {
        http,
        max_attempts: max_attempts.max(1),
        retry_base: Duration::from_millis(gemini.retry_base_ms.max(1)),
        service: config.name.clone(),
        base_url: config.base_url.trim_end_matches('/').to_string(),
    };
    match config.adapter {
        Adapter::Gemini => Box::new(gemini::GeminiProvider::new(
            upstream,
            gemini,
            key.unwrap_or_else(|| ApiKey::new("")),
        )),
        Adapter::Openai => Box::new(openai::OpenAiProvider::new(upstream, key)),
        Adapter::Anthropic => Box::new(anthropic::AnthropicProvider::new(
            upstream,
            key.unwrap_or_else(|| ApiKey::new("")),
        )),
        Adapter::Bedrock => Box::new(bedrock::BedrockProvider::new(
            upstream,
            crate::aws::AwsChoice {
                profile: config.aws_profile.clone(),
                region: config.region.clone(),
            },
        )),
    }
}

/// Each service's rules for when to retry and how to word its errors.
pub trait RetryRules: Sync {
    /// How long to wait before retrying, or None when retrying will not help.
    fn wait(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        body: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration>;
    /// The error to report for an answer that is not a success.
    fn error(&self, status: u16, body: &str) -> VaiderError;
    /// The same, for services whose headers say more than the body (Bedrock names its error
    /// in `x-amzn-ErrorType`); by default the body alone.
    fn error_with_headers(
        &self,
        status: u16,
        _headers: &reqwest::header::HeaderMap,
        body: &str,
    ) -> VaiderError {
        self.error(status, body)
    }
}

/// Sends requests to one service, retrying within the call's deadline.
pub struct Upstream {
    pub http: reqwest::Client,
    pub max_attempts: u32,
    pub retry_base: Duration,
    /// The provider's name, for messages.
    pub service: String,
    pub base_url: String,
}

impl Upstream {
    pub async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
        method: &'static str,
        endpoint: &str,
        deadline: Instant,
        calls: &mut Vec<UpstreamCall>,
        rules: &dyn RetryRules,
    ) -> Result<reqwest::Response, VaiderError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let outcome = build().send().await;
            let mut record = |status| {
                calls.push(UpstreamCall {
                    method,
                    endpoint: endpoint.to_string(),
                    status,
                    duration_ms: started.elapsed().as_millis() as u64,
                    attempt,
                })
            };
            let (wait, error) = match outcome {
                Ok(response) if response.status().is_success() => {
                    record(Some(response.status().as_u16()));
                    return Ok(response);
                }
                Ok(response) => {
                    record(Some(response.status().as_u16()));
                    self.refusal(response, attempt, rules).await
                }
                Err(e) => {
                    record(None);
                    self.unreachable(e, attempt)
                }
            };
            match wait {
                Some(wait) if attempt < self.max_attempts && Instant::now() + wait < deadline => {
                    tracing::info!(service = %self.service, endpoint, attempt, wait_ms = wait.as_millis() as u64, "retrying");
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(error),
            }
        }
    }
}

impl Upstream {
    /// The error of an answer that is not a success, and the wait before trying again, if
    /// the provider's rules retry it.
    async fn refusal(
        &self,
        response: reqwest::Response,
        attempt: u32,
        rules: &dyn RetryRules,
    ) -> (Option<Duration>, VaiderError) {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = crate::body::read_capped(response, crate::body::MAX_ERROR_BYTES).await;
        let (body, unread) = match body {
            Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), None),
            // The headers (Retry-After) still count; the body is left unread.
            Err(e) => (String::new(), Some(e)),
        };
        let wait = rules.wait(status, &headers, &body, attempt, self.retry_base);
        let error = match unread {
            None => rules.error_with_headers(status, &headers, &body),
            Some(e) => VaiderError::Upstream {
                message: format!(
                    "{} answered HTTP {status} with {}",
                    self.service,
                    match e {
                        crate::body::BodyError::TooLarge { limit } => format!(
                            "an error body larger than {}; Vaider stopped reading it.",
                            crate::body::size_text(limit)
                        ),
                        crate::body::BodyError::BrokeOff(why) =>
                            format!("an error body that broke off ({why})."),
                    }
                ),
                response: None,
            },
        };
        (wait, rate_limited(status, error, wait))
    }

    /// The error of a request that got no answer; a refused connection or a timeout is
    /// tried again after a backoff.
    fn unreachable(&self, e: reqwest::Error, attempt: u32) -> (Option<Duration>, VaiderError) {
        // Never show the URL: an upload session URL is a credential.
        let e = e.without_url();
        let retry = e.is_connect() || e.is_timeout();
        let error = VaiderError::Upstream {
            message: format!(
                "Could not reach {} at {} ({e}). Check the network and the provider's base_url.",
                self.service, self.base_url
            ),
            response: None,
        };
        (retry.then(|| backoff(attempt, self.retry_base)), error)
    }
}

/// A 429 is the provider's quota, not a failure of its service: it gets its own error
/// (`RATE_LIMITED`, or `QUOTA_EXHAUSTED` when waiting will not help, e.g. an exhausted
/// balance), with the wait the provider asked for.
fn rate_limited(status: u16, error: VaiderError, wait: Option<Duration>) -> VaiderError {
    match error {
        VaiderError::Upstream { message, response } if status == 429 => {
            let waited = match wait {
                Some(w) => format!(
                    " The provider asked to wait {:.0} s.",
                    w.as_secs_f64().ceil()
                ),
                None => String::new(),
            };
            VaiderError::RateLimited {
                message: format!("{message} (rate-limited){waited}"),
                retry_after: wait,
                daily: wait.is_none(),
                response,
            }
        }
        other => other,
    }
}

/// Exponential backoff from `base`, with a little jitter so parallel calls do not retry in
/// lockstep.
pub fn backoff(attempt: u32, base: Duration) -> Duration {
    let exp = base.saturating_mul(1 << (attempt.saturating_sub(1)).min(6));
    exp + Duration::from_millis(rand::random::<u64>() % (base.as_millis() as u64 / 4 + 1))
}

/// The `retry-after` header (seconds or an HTTP date), as OpenAI, Anthropic and Bedrock send
/// it; clamped to [`bounded::MAX_RETRY_WAIT`], None when missing or garbage.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    bounded::retry_after_value(value, std::time::SystemTime::now(), bounded::MAX_RETRY_WAIT)
}

/// Reads a JSON answer of at most [`crate::body::MAX_ANSWER_BYTES`], or an upstream error
/// that keeps the body (a body past the limit is never kept).
pub async fn read_json(
    response: reqwest::Response,
    service: &str,
) -> Result<serde_json::Value, VaiderError> {
    let status = response.status().as_u16();
    let bytes = crate::body::read_capped(response, crate::body::MAX_ANSWER_BYTES)
        .await
        .map_err(|e| VaiderError::Upstream {
            message: e.describe(service, "answer"),
            response: None,
        })?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    serde_json::from_str(&text).map_err(|_| VaiderError::Upstream {
        message: format!("{service}'s answer was not JSON."),
        response: Some(vaider_base::error::UpstreamResponse { status, body: text }),
    })
}

/// The answer of a chat-style API: its text and token counts (read from the given usage
/// fields), or an upstream error saying why there is no text.
pub fn chat_answer(
    service: &str,
    answer: serde_json::Value,
    text: String,
    no_text_reason: Option<&str>,
    usage_fields: (&str, &str),
    calls: Vec<UpstreamCall>,
) -> Result<ProviderAnswer, VaiderError> {
    if text.trim().is_empty() {
        return Err(VaiderError::Upstream {
            message: format!(
                "{service} gave no description ({}).",
                no_text_reason.unwrap_or("no text in the answer")
            ),
            response: Some(vaider_base::error::UpstreamResponse {
                status: 200,
                body: answer.to_string(),
            }),
        });
    }
    Ok(ProviderAnswer {
        text,
        usage: Usage {
            input_tokens: answer["usage"][usage_fields.0].as_u64().unwrap_or(0),
            output_tokens: answer["usage"][usage_fields.1].as_u64().unwrap_or(0),
            ..Default::default()
        },
        model_version: answer["model"].as_str().map(str::to_string),
        video_seconds: None,
        raw_response: answer,
        calls,
    })
}

/// A base64 data URL for an image or file.
pub fn data_url(mime_type: &str, bytes: &[u8]) -> String {
    use base64::Engine as _;
    format!(
        "data:{mime_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}
