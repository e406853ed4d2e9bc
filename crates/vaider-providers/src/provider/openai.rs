//! OpenAI-compatible chat completions: OpenAI itself, z.ai GLM-4.6V, vLLM, Ollama and LM
//! Studio, so a user can keep every pixel on their own machine. Images go as base64 data URLs;
//! a whole video only to servers that take `video_url` (vLLM); otherwise the pipeline has
//! already turned it into timestamped keyframes.

use std::time::Duration;

use serde_json::{json, Value};

use super::{
    data_url, MediaPart, ProviderAnswer, ProviderJob, RetryRules, Upstream, VisionProvider,
};
use vaider_base::error::{UpstreamResponse, VaiderError};
use vaider_base::progress::Progress;
use vaider_base::secrets::ApiKey;

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
        let (body, videos) = chat_request(&job);
        job.progress.report(Progress::Generating);
        let mut calls = Vec::new();
        let response = self.post_chat(&job, &body, &videos, &mut calls).await?;
        let answer = super::read_json(response, &self.upstream.service).await?;
        let choice = &answer["choices"][0];
        let text = choice["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let reason = choice["finish_reason"].as_str().map(str::to_string);
        super::chat_answer(
            &self.upstream.service,
            answer,
            text,
            reason.as_deref(),
            ("prompt_tokens", "completion_tokens"),
            calls,
        )
    }
}

impl OpenAiProvider {
    /// Posts the chat completion (retried by the provider's rules), the videos' data URLs
    /// streamed into the body from disk.
    async fn post_chat(
        &self,
        job: &ProviderJob<'_>,
        body: &Value,
        videos: &[(std::path::PathBuf, &'static str)],
        calls: &mut Vec<super::UpstreamCall>,
    ) -> Result<reqwest::Response, VaiderError> {
        let url = format!("{}/chat/completions", self.upstream.base_url);
        let rules = OpenAiRules(&self.upstream.service);
        self.upstream
            .send(
                || {
                    let request = self.upstream.http.post(&url);
                    let request = if videos.is_empty() {
                        request.json(body)
                    } else {
                        let (length, stream) = streamed_body(body, videos);
                        request
                            .header(reqwest::header::CONTENT_TYPE, "application/json")
                            .header(reqwest::header::CONTENT_LENGTH, length.to_string())
                            .body(stream)
                    };
                    match &self.key {
                        Some(key) if !key.expose().is_empty() => request.bearer_auth(key.expose()),
                        _ => request,
                    }
                },
                "POST",
                "/chat/completions",
                job.deadline,
                calls,
                &rules,
            )
            .await
    }
}

/// The chat completion's body: the system prompt, then the images (each after its label) and
/// videos, then the prompt; with the answer's schema when there is one. A video stands as a
/// marker here (see `streamed_body`); the videos are returned in the markers' order.
fn chat_request(job: &ProviderJob<'_>) -> (Value, Vec<(std::path::PathBuf, &'static str)>) {
    let mut content = Vec::new();
    let mut videos: Vec<(std::path::PathBuf, &'static str)> = Vec::new();
    let total: u64 = job.parts.iter().map(part_size).sum();
    let mut sent = 0;
    for part in job.parts {
        match part {
            MediaPart::Image { image, label, .. } => {
                if let Some(label) = label {
                    content.push(json!({"type": "text", "text": label}));
                }
                content.push(json!({"type": "image_url", "image_url": {"url": data_url(image.mime_type, &image.bytes), "detail": "high"}}));
            }
            MediaPart::File { path, media, .. } => {
                // Only for servers that declared video support. The data URL is streamed
                // into the body from disk (see `streamed_body`), never held whole.
                videos.push((path.clone(), media.mime_type));
                let marker = format!("{VIDEO_MARKER}{}", videos.len() - 1);
                content.push(json!({"type": "video_url", "video_url": {"url": marker}}));
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
    });
    ask_as_guided(&mut body, job);
    if let Some(schema) = &job.response_schema {
        body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "vaider_answer", "schema": schema, "strict": true}});
    }
    (body, videos)
}

/// The temperature and reasoning effort the model's family is asked with for this job
/// (`crate::guidance`): a reasoning model gets no temperature but an effort; others 0.2.
fn ask_as_guided(body: &mut Value, job: &ProviderJob<'_>) {
    use crate::guidance::{asking, Reasoning};
    let asked = asking(crate::settings::Adapter::Openai, job.model, job.job);
    if let Some(temperature) = asked.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(Reasoning::ReasoningEffort(effort)) = asked.reasoning {
        body["reasoning_effort"] = json!(effort.as_str());
    }
}

/// Stands in the JSON for a video's data URL until the body is streamed.
const VIDEO_MARKER: &str = "\u{1}vaider-video-";

/// The request body with each video's data URL base64-encoded from disk as it is sent, so a
/// video never sits in memory whole. Returns the exact length (for Content-Length) and the
/// body; called again for each retry.
fn streamed_body(
    body: &Value,
    videos: &[(std::path::PathBuf, &'static str)],
) -> (u64, reqwest::Body) {
    use futures_util::StreamExt;
    let text = body.to_string();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut rest = text.as_str();
    let mut length = 0u64;
    for (index, (path, mime)) in videos.iter().enumerate() {
        // serde_json writes the control character as \u0001.
        let marker = format!("\\u0001vaider-video-{index}");
        let Some(at) = rest.find(&marker) else {
            continue;
        };
        let head = format!("{}data:{mime};base64,", &rest[..at]);
        length += head.len() as u64;
        pieces.push(Piece::Text(head));
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        length += size.div_ceil(3) * 4;
        pieces.push(Piece::File(path.clone()));
        rest = &rest[at + marker.len()..];
    }
    length += rest.len() as u64;
    pieces.push(Piece::Text(rest.to_string()));
    let stream =
        futures_util::stream::iter(pieces).flat_map(|piece| match piece {
            Piece::Text(text) => futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(bytes::Bytes::from(text))
            })
            .boxed(),
            Piece::File(path) => {
                futures_util::stream::once(async move { tokio::fs::File::open(path).await })
                    .flat_map(|opened| match opened {
                        Ok(file) => base64_chunks(file).boxed(),
                        Err(e) => futures_util::stream::once(async move { Err(e) }).boxed(),
                    })
                    .boxed()
            }
        });
    (length, reqwest::Body::wrap_stream(stream))
}

/// A file as base64, in 768 KiB reads: every read but the last is filled to a multiple of
/// 3 bytes, so the pieces' base64 joins with no padding between them.
fn base64_chunks(
    file: tokio::fs::File,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send {
    use base64::Engine as _;
    use tokio::io::AsyncReadExt;
    futures_util::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buffer = vec![0u8; 768 * 1024];
        let mut filled = 0;
        while filled < buffer.len() {
            match file.read(&mut buffer[filled..]).await {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Some((Err(e), None)),
            }
        }
        if filled == 0 {
            return None;
        }
        let encoded = base64::engine::general_purpose::STANDARD.encode(&buffer[..filled]);
        let more = (filled == buffer.len()).then_some(file);
        Some((Ok(bytes::Bytes::from(encoded)), more))
    })
}

enum Piece {
    Text(String),
    File(std::path::PathBuf),
}

fn part_size(part: &MediaPart) -> u64 {
    match part {
        MediaPart::Image { image, .. } => image.bytes.len() as u64,
        MediaPart::File { media, .. } => media.size_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn a_streamed_video_encodes_exactly_as_a_whole_one() {
        use base64::Engine as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.mp4");
        // Over two reads, and not a multiple of 3.
        let bytes: Vec<u8> = (0..2_000_003u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let body = json!({"model": "m", "url": format!("{VIDEO_MARKER}0"), "after": 1});
        let (length, _) = streamed_body(&body, &[(path.clone(), "video/mp4")]);
        let file = tokio::fs::File::open(&path).await.unwrap();
        let chunks: Vec<bytes::Bytes> = base64_chunks(file).map(|c| c.unwrap()).collect().await;
        let joined: String = chunks
            .iter()
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        assert_eq!(
            joined,
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        );
        let expected = body.to_string().replace(
            "\\u0001vaider-video-0",
            &format!("data:video/mp4;base64,{joined}"),
        );
        assert_eq!(length, expected.len() as u64);
    }
}
