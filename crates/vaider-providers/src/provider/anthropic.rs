//! Anthropic messages: images as base64 blocks, each preceded by its label. Anthropic takes no
//! video, so the pipeline sends a video's keyframes. It has no JSON-schema field: the schema is
//! put in the prompt and the answer read as JSON.

use std::time::Duration;

use serde_json::{json, Value};

use super::{MediaPart, ProviderAnswer, ProviderJob, RetryRules, Upstream, VisionProvider};
use vaider_base::error::{UpstreamResponse, VaiderError};
use vaider_base::progress::Progress;
use vaider_base::secrets::ApiKey;

const API_VERSION: &str = "2023-06-01";
const MAX_TOKENS: u32 = 4096;
/// With thinking on, the answer's 4096 tokens and room for the thinking before it (the size
/// Anthropic's own thinking examples use).
const MAX_TOKENS_THINKING: u32 = 16_000;

pub struct AnthropicProvider {
    upstream: Upstream,
    key: ApiKey,
}

impl AnthropicProvider {
    pub fn new(upstream: Upstream, key: ApiKey) -> Self {
        AnthropicProvider { upstream, key }
    }
}

struct AnthropicRules;

impl RetryRules for AnthropicRules {
    fn wait(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        _: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration> {
        match status {
            429 | 500 | 502 | 503 | 504 | 529 => {
                Some(super::retry_after(headers).unwrap_or_else(|| super::backoff(attempt, base)))
            }
            _ => None,
        }
    }

    fn error(&self, status: u16, body: &str) -> VaiderError {
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let kind = parsed["error"]["type"].as_str().unwrap_or("");
        let message = parsed["error"]["message"].as_str().unwrap_or("").trim();
        let hint = match status {
            401 => " Check the key: `vaider key set --provider anthropic` stores it.",
            429 => " Rate limit; Vaider retried within the timeout.",
            529 => " Anthropic is overloaded; Vaider retried with backoff. Try again later.",
            500..=599 => " The service had a problem; Vaider retried with backoff.",
            _ => "",
        };
        VaiderError::Upstream {
            message: format!("Anthropic answered HTTP {status} {kind}: {message}.{hint}"),
            response: Some(UpstreamResponse {
                status,
                body: body.to_string(),
            }),
        }
    }
}

#[async_trait::async_trait]
impl VisionProvider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.upstream.service
    }

    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError> {
        let body = messages_request(&job)?;
        job.progress.report(Progress::Generating);
        let url = format!("{}/v1/messages", self.upstream.base_url);
        let mut calls = Vec::new();
        let response = self
            .upstream
            .send(
                || {
                    self.upstream
                        .http
                        .post(&url)
                        .header("x-api-key", self.key.expose())
                        .header("anthropic-version", API_VERSION)
                        .json(&body)
                },
                "POST",
                "/v1/messages",
                job.deadline,
                &mut calls,
                &AnthropicRules,
            )
            .await?;
        let answer = super::read_json(response, "Anthropic").await?;
        let text: String = answer["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("")
            })
            .unwrap_or_default();
        let reason = answer["stop_reason"].as_str().map(str::to_string);
        super::chat_answer(
            "Anthropic",
            answer,
            text,
            reason.as_deref(),
            ("input_tokens", "output_tokens"),
            calls,
        )
    }
}

/// The messages request: the images, each after its label, then the prompt with the answer's
/// schema in it (Anthropic has no schema field). A file left whole is a bug upstream: the
/// pipeline turns videos into keyframes for Anthropic.
fn messages_request(job: &ProviderJob<'_>) -> Result<Value, VaiderError> {
    use base64::Engine as _;
    let mut content = Vec::new();
    for part in job.parts {
        match part {
            MediaPart::Image { image, label, .. } => {
                if let Some(label) = label {
                    content.push(json!({"type": "text", "text": label}));
                }
                content.push(json!({"type": "image", "source": {
                    "type": "base64",
                    "media_type": image.mime_type,
                    "data": base64::engine::general_purpose::STANDARD.encode(&image.bytes)
                }}));
            }
            MediaPart::File { path, .. } => {
                return Err(VaiderError::internal(
                    "send a file to Anthropic",
                    format!("{} was not turned into images first", path.display()),
                ))
            }
        }
    }
    let mut prompt = job.user_prompt.to_string();
    if let Some(schema) = &job.response_schema {
        prompt.push_str(&format!(
            "\n\nReply with only a JSON object (no code fence) that follows this JSON schema:\n{schema}"
        ));
    }
    content.push(json!({"type": "text", "text": prompt}));
    let mut body = json!({
        "model": job.model,
        "max_tokens": MAX_TOKENS,
        "system": job.system_prompt,
        "messages": [{"role": "user", "content": content}],
    });
    ask_as_guided(&mut body, job);
    Ok(body)
}

/// The temperature and thinking the model's family is asked with for this job
/// (`crate::guidance`): Claude 4.6 and later think adaptively at the job's effort, with no
/// temperature (4.7 and later refuse one; thinking forbids changing it); earlier models get
/// 0.2 and no thinking.
fn ask_as_guided(body: &mut Value, job: &ProviderJob<'_>) {
    use crate::guidance::{asking, Reasoning};
    let asked = asking(crate::settings::Adapter::Anthropic, job.model, job.job);
    if let Some(temperature) = asked.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(Reasoning::AdaptiveThinking(effort)) = asked.reasoning {
        body["thinking"] = json!({"type": "adaptive"});
        body["output_config"] = json!({"effort": effort.as_str()});
        // `max_tokens` bounds the thinking and the answer together.
        body["max_tokens"] = json!(MAX_TOKENS_THINKING);
    }
}
