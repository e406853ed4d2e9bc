//! OpenAI-compatible chat completions: OpenAI itself, z.ai GLM-4.6V, vLLM, Ollama and LM
//! Studio, so a user can keep every pixel on their own machine. Images go as base64 data URLs;
//! a whole video only to servers that take `video_url` (vLLM); otherwise the pipeline has
//! already turned it into timestamped keyframes.

use std::time::Duration;

use serde_json::{json, Value};

use super::{
    data_url, MediaPart, ProviderAnswer, ProviderJob, RetryRules, Upstream, VisionProvider,
};
use crate::analysis::Usage;
use crate::error::{UpstreamResponse, VaiderError};
use crate::progress::Progress;
use crate::secrets::ApiKey;

pub struct OpenAiProvider {
    upstream: Upstream,
    /// None for local servers that need no key.
    key: Option<ApiKey>,
}

impl OpenAiProvider {
    pub fn new(upstream: Upstream, key: Option<ApiKey>) -> Self {
        OpenAiProvider { upstream, key }
    }
}

struct OpenAiRules<'a>(&'a str);

impl RetryRules for OpenAiRules<'_> {
    fn wait(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        body: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration> {
        match status {
            // An exhausted balance is not a rate: waiting will not help.
            429 if body.contains("insufficient_quota") => None,
            429 => {
                Some(super::retry_after(headers).unwrap_or_else(|| super::backoff(attempt, base)))
            }
            500 | 502 | 503 | 504 => {
                Some(super::retry_after(headers).unwrap_or_else(|| super::backoff(attempt, base)))
            }
            _ => None,
        }
    }

    fn error(&self, status: u16, body: &str) -> VaiderError {
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let message = parsed["error"]["message"].as_str().unwrap_or("").trim();
        let hint = match status {
            401 => " Check the key: `vaider key set --provider NAME` stores it.",
            404 => " Check the model name and the provider's base_url.",
            429 => " Rate or quota limit; Vaider retried within the timeout.",
            500..=599 => " The service had a problem; Vaider retried with backoff.",
            _ => "",
        };
        VaiderError::Upstream {
            message: format!(
                "{} answered HTTP {status}{}{}.{hint}",
                self.0,
                if message.is_empty() { "" } else { ": " },
                message.trim_end_matches('.')
            ),
            response: Some(UpstreamResponse {
                status,
                body: body.to_string(),
            }),
        }
    }
}

#[async_trait::async_trait]
impl VisionProvider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.upstream.service
    }

    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError> {
        let mut content = Vec::new();
        let total: u64 = job.parts.iter().map(part_size).sum();
        let mut sent = 0;
        for part in job.parts {
            match part {
                MediaPart::Image { image, label } => {
                    if let Some(label) = label {
                        content.push(json!({"type": "text", "text": label}));
                    }
                    content.push(json!({"type": "image_url", "image_url": {"url": data_url(image.mime_type, &image.bytes), "detail": "high"}}));
                }
                MediaPart::File { path, media } => {
                    // Only for servers that declared video support; the file is read once.
                    let bytes = tokio::fs::read(path).await.map_err(|e| {
                        VaiderError::internal(format!("read {}", path.display()), e)
                    })?;
                    content.push(json!({"type": "video_url", "video_url": {"url": data_url(media.mime_type, &bytes)}}));
                }
            }
            sent += part_size(part);
            job.progress.report(Progress::Uploading { sent, total });
        }
        content.push(json!({"type": "text", "text": job.user_prompt}));
        let mut body = json!({
            "model": job.model,
            "messages": [
                {"role": "system", "content": job.system_prompt},
                {"role": "user", "content": content}
            ],
            "temperature": 0.2,
        });
        if let Some(schema) = &job.response_schema {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "vaider_answer", "schema": schema, "strict": true}});
        }
        job.progress.report(Progress::Generating);
        let url = format!("{}/chat/completions", self.upstream.base_url);
        let mut calls = Vec::new();
        let rules = OpenAiRules(&self.upstream.service);
        let response = self
            .upstream
            .send(
                || {
                    let request = self.upstream.http.post(&url).json(&body);
                    match &self.key {
                        Some(key) if !key.expose().is_empty() => request.bearer_auth(key.expose()),
                        _ => request,
                    }
                },
                "POST",
                "/chat/completions",
                job.deadline,
                &mut calls,
                &rules,
            )
            .await?;
        let answer = super::read_json(response, &self.upstream.service).await?;
        let choice = &answer["choices"][0];
        let text = choice["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if text.trim().is_empty() {
            let reason = choice["finish_reason"]
                .as_str()
                .unwrap_or("no text in the answer");
            return Err(VaiderError::Upstream {
                message: format!("{} gave no description ({reason}).", self.upstream.service),
                response: Some(UpstreamResponse {
                    status: 200,
                    body: answer.to_string(),
                }),
            });
        }
        Ok(ProviderAnswer {
            text,
            usage: Usage {
                input_tokens: answer["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: answer["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            },
            model_version: answer["model"].as_str().map(str::to_string),
            video_seconds: None,
            raw_response: answer,
            calls,
        })
    }
}

fn part_size(part: &MediaPart) -> u64 {
    match part {
        MediaPart::Image { image, .. } => image.bytes.len() as u64,
        MediaPart::File { media, .. } => media.size_bytes,
    }
}
