//! Amazon Bedrock through its Converse API (`POST /model/{modelId}/converse`), one request
//! shape for every model on Bedrock (Claude, Nova, Llama...). Images go as base64 `bytes`
//! blocks, each after its label; a whole video only when the provider is set to accept it
//! (Nova), otherwise the pipeline has sent keyframes. Requests are signed with SigV4 using
//! the standard AWS credential chain, resolved at each call so rotated keys are picked up.
//! Converse has no JSON-schema field: the schema goes in the prompt, as for Anthropic.

use std::time::Duration;

use serde_json::{json, Value};

use super::{MediaPart, ProviderAnswer, ProviderJob, RetryRules, Upstream, VisionProvider};
use crate::aws::sigv4::{self, Scope, SigningRequest};
use crate::aws::{AwsChoice, AwsSetup};
use crate::provider::Usage;
use vaider_base::error::{UpstreamResponse, VaiderError};
use vaider_base::progress::Progress;

const MAX_TOKENS: u32 = 4096;
/// Bedrock's limit on a video sent inline (larger ones must come from S3).
const MAX_INLINE_VIDEO_BYTES: u64 = 25 * 1024 * 1024;

/// How the adapter reads the environment: the process's own, or a test's.
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

pub struct BedrockProvider {
    upstream: Upstream,
    choice: AwsChoice,
    env: Box<EnvLookup>,
}

impl BedrockProvider {
    pub fn new(upstream: Upstream, choice: AwsChoice) -> Self {
        Self::with_env(upstream, choice, Box::new(|name| std::env::var(name).ok()))
    }

    pub fn with_env(upstream: Upstream, choice: AwsChoice, env: Box<EnvLookup>) -> Self {
        BedrockProvider {
            upstream,
            choice,
            env,
        }
    }
}

/// The path of a Converse call: the model id encoded as one path segment (its `:` and, for
/// an ARN, its `/` too), as the AWS SDKs send it.
pub fn converse_path(model: &str) -> String {
    format!("/model/{}/converse", sigv4::uri_encode(model, true))
}

/// The image format names Converse takes.
fn image_format(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "image/png" => "png",
        "image/jpeg" => "jpeg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => return None,
    })
}

/// The video format names Converse takes (Nova).
fn video_format(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "video/mp4" => "mp4",
        "video/quicktime" => "mov",
        "video/x-matroska" => "mkv",
        "video/webm" => "webm",
        _ => return None,
    })
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The content blocks of the user message, the prompt last.
async fn content_blocks(job: &ProviderJob<'_>) -> Result<Vec<Value>, VaiderError> {
    let mut content = Vec::new();
    for part in job.parts {
        match part {
            MediaPart::Image { image, label, .. } => {
                let format = image_format(image.mime_type).ok_or_else(|| {
                    VaiderError::internal(
                        "send an image to Bedrock",
                        format!("{} is not png, jpeg, gif or webp", image.mime_type),
                    )
                })?;
                if let Some(label) = label {
                    content.push(json!({"text": label}));
                }
                content.push(
                    json!({"image": {"format": format, "source": {"bytes": base64(&image.bytes)}}}),
                );
            }
            MediaPart::File { path, media, .. } => {
                content.push(video_block(path, media).await?);
            }
        }
    }
    let mut prompt = job.user_prompt.to_string();
    if let Some(schema) = &job.response_schema {
        prompt.push_str(&format!(
            "\n\nReply with only a JSON object (no code fence) that follows this JSON schema:\n{schema}"
        ));
    }
    content.push(json!({"text": prompt}));
    Ok(content)
}

async fn video_block(
    path: &std::path::Path,
    media: &vaider_media::media::MediaInfo,
) -> Result<Value, VaiderError> {
    let format = video_format(media.mime_type).ok_or_else(|| {
        VaiderError::InvalidRequest(format!(
            "Bedrock takes video as mp4, mov, mkv or webm, not {}. Convert it, or set `accepts_video = false` under [providers.bedrock] so Vaider sends keyframes.",
            media.format
        ))
    })?;
    if media.size_bytes > MAX_INLINE_VIDEO_BYTES {
        return Err(VaiderError::InvalidRequest(format!(
            "{} is {:.1} MB; Bedrock takes at most 25 MB of video in a request. Trim it, or set `accepts_video = false` under [providers.bedrock] so Vaider sends keyframes.",
            path.display(),
            media.size_bytes as f64 / 1_048_576.0
        )));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
    Ok(json!({"video": {"format": format, "source": {"bytes": base64(&bytes)}}}))
}

/// The request, signed: the URL and the headers to send with the body.
#[derive(Clone)]
struct SignedRequest {
    url: String,
    headers: Vec<(&'static str, String)>,
}

fn sign_request(
    base_url: &str,
    model: &str,
    body: &[u8],
    setup: &AwsSetup,
) -> Result<SignedRequest, VaiderError> {
    let base = base_url.replace("{region}", &setup.region);
    let path = converse_path(model);
    let url = format!("{base}{path}");
    let parsed = reqwest::Url::parse(&url).map_err(|e| {
        VaiderError::InvalidRequest(format!(
            "Bedrock's base_url {base_url:?} is not a URL ({e}). Fix `base_url` under [providers.bedrock] or remove it."
        ))
    })?;
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => {
            return Err(VaiderError::InvalidRequest(format!(
                "Bedrock's base_url {base_url:?} has no host."
            )))
        }
    };
    let payload_hash = sigv4::sha256_hex(body);
    let signed_headers = [
        ("content-type".to_string(), "application/json".to_string()),
        ("host".to_string(), host),
        ("x-amz-content-sha256".to_string(), payload_hash.clone()),
    ];
    let signature = sigv4::sign(
        &SigningRequest {
            method: "POST",
            // Any path in base_url (a proxy's prefix) is part of what is signed.
            path: parsed.path(),
            query: &[],
            headers: &signed_headers,
            payload: body,
        },
        &setup.credentials,
        &Scope {
            region: &setup.region,
            service: "bedrock",
            time: chrono::Utc::now(),
        },
    );
    let mut headers = vec![
        ("content-type", "application/json".to_string()),
        ("x-amz-content-sha256", payload_hash),
    ];
    headers.extend(signature.headers);
    Ok(SignedRequest { url, headers })
}

struct BedrockRules;

impl RetryRules for BedrockRules {
    fn wait(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        _: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration> {
        // 429: ThrottlingException or ModelNotReadyException; 5xx: InternalServerException,
        // ServiceUnavailableException; 408: ModelTimeoutException.
        match status {
            408 | 429 | 500 | 502 | 503 | 504 => {
                Some(super::retry_after(headers).unwrap_or_else(|| super::backoff(attempt, base)))
            }
            _ => None,
        }
    }

    fn error(&self, status: u16, body: &str) -> VaiderError {
        self.error_with_headers(status, &reqwest::header::HeaderMap::new(), body)
    }

    fn error_with_headers(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        body: &str,
    ) -> VaiderError {
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let message = parsed["message"]
            .as_str()
            .or_else(|| parsed["Message"].as_str())
            .unwrap_or("")
            .trim();
        // "ThrottlingException:http://internal.amazon.com/coral/..." names the error.
        let kind = headers
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(':').next())
            .unwrap_or("");
        VaiderError::Upstream {
            message: format!(
                "Bedrock answered HTTP {status}{}: {message}{}",
                if kind.is_empty() {
                    String::new()
                } else {
                    format!(" {kind}")
                },
                bedrock_hint(status, kind, message)
            ),
            response: Some(UpstreamResponse {
                status,
                body: body.to_string(),
            }),
        }
    }
}

/// What to do about a Bedrock error, from its status and message.
fn bedrock_hint(status: u16, kind: &str, message: &str) -> &'static str {
    let lower = message.to_ascii_lowercase();
    match (kind, status) {
        ("UnrecognizedClientException" | "ExpiredTokenException", _) => " The AWS credentials are not valid (an unknown access key or an expired session token): refresh them (`aws sts get-caller-identity` checks them) and retry.",
        ("InvalidSignatureException", _) => " The AWS secret key does not match the access key id, or this machine's clock is off by more than 5 minutes.",
        ("ModelNotReadyException", _) => " The model is not ready yet; Vaider retried with backoff. Try again in a minute.",
        _ => hint_by_status(status, &lower),
    }
}

/// The hint when the error type is missing or generic, from the status and message.
fn hint_by_status(status: u16, lower: &str) -> &'static str {
    match status {
        403 if lower.contains("signature") => " The AWS secret key does not match the access key id, or this machine's clock is off by more than 5 minutes.",
        403 if lower.contains("security token") || lower.contains("expired") => " The AWS credentials are not valid (UnrecognizedClientException or an expired session token): refresh them (`aws sts get-caller-identity` checks them) and retry.",
        403 => " Access denied: the AWS identity needs bedrock:InvokeModel on this model, and the model must be enabled under Model access in the Bedrock console for this region.",
        400 if lower.contains("on-demand") || lower.contains("inference profile") => " This model is only served through an inference profile: use its id with a region prefix, e.g. us.anthropic.claude-...",
        400 => " Bedrock refused the request (ValidationException): check the model id (e.g. anthropic.claude-3-5-sonnet-20241022-v2:0) and that the model takes images.",
        404 => " The model id is not known in this region: check `model` and the AWS region.",
        408 => " The model took too long (ModelTimeoutException); Vaider retried. Try a shorter video or fewer images.",
        424 => " The model itself failed (ModelErrorException); try again.",
        429 => " Throttled (ThrottlingException or ModelNotReadyException); Vaider retried with backoff within the timeout. Try again later or ask AWS for a higher quota.",
        503 => " Bedrock is unavailable (ServiceUnavailableException); Vaider retried with backoff. Try again later.",
        500..=599 => " Bedrock had a problem (InternalServerException); Vaider retried with backoff.",
        _ => "",
    }
}

#[async_trait::async_trait]
impl VisionProvider for BedrockProvider {
    fn name(&self) -> &str {
        &self.upstream.service
    }

    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError> {
        let setup = crate::aws::resolve(&*self.env, &self.choice)?;
        tracing::debug!(
            access_key_id = %setup.credentials.access_key_id,
            source = %setup.credentials.source,
            region = %setup.region,
            "signing for Bedrock"
        );
        let body = json!({
            "messages": [{"role": "user", "content": content_blocks(&job).await?}],
            "system": [{"text": job.system_prompt}],
            "inferenceConfig": inference_config(job.model, job.job),
        });
        let body = serde_json::to_vec(&body)
            .map_err(|e| VaiderError::internal("write the Bedrock request", e))?;
        job.progress.report(Progress::Generating);
        let endpoint = converse_path(job.model);
        // Signing fails only on a bad base_url: found here, before any request.
        let first = sign_request(&self.upstream.base_url, job.model, &body, &setup)?;
        let mut calls = Vec::new();
        let response = self
            .upstream
            .send(
                || {
                    // Signed again on each attempt: a retry after a wait gets a fresh date.
                    let signed = sign_request(&self.upstream.base_url, job.model, &body, &setup)
                        .unwrap_or_else(|_| first.clone());
                    let mut request = self.upstream.http.post(&signed.url);
                    for (name, value) in signed.headers {
                        request = request.header(name, value);
                    }
                    request.body(body.clone())
                },
                "POST",
                &endpoint,
                job.deadline,
                &mut calls,
                &BedrockRules,
            )
            .await?;
        let answer = super::read_json(response, "Bedrock").await?;
        converse_answer(answer, job.model, calls)
    }
}

/// `inferenceConfig`: the output limit, and the temperature the model's family is asked with
/// (`crate::guidance`): none for Claude 4.7 and later, which refuse one; 0.2 for the others.
fn inference_config(model: &str, job: crate::guidance::Job) -> Value {
    let asked = crate::guidance::asking(crate::settings::Adapter::Bedrock, model, job);
    let mut config = json!({"maxTokens": MAX_TOKENS});
    if let Some(temperature) = asked.temperature {
        config["temperature"] = json!(temperature);
    }
    config
}

/// Reads a Converse answer: `output.message.content[].text`, `stopReason`, `usage`.
fn converse_answer(
    answer: Value,
    model: &str,
    calls: Vec<super::UpstreamCall>,
) -> Result<ProviderAnswer, VaiderError> {
    let text: String = answer["output"]["message"]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    if text.trim().is_empty() {
        let reason = answer["stopReason"]
            .as_str()
            .unwrap_or("no text in the answer");
        return Err(VaiderError::Upstream {
            message: format!("Bedrock gave no description (stopReason: {reason})."),
            response: Some(UpstreamResponse {
                status: 200,
                body: answer.to_string(),
            }),
        });
    }
    Ok(ProviderAnswer {
        text,
        usage: Usage {
            input_tokens: answer["usage"]["inputTokens"].as_u64().unwrap_or(0),
            output_tokens: answer["usage"]["outputTokens"].as_u64().unwrap_or(0),
            ..Default::default()
        },
        model_version: Some(model.to_string()),
        video_seconds: None,
        raw_response: answer,
        calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_are_one_encoded_path_segment() {
        assert_eq!(
            converse_path("anthropic.claude-3-5-sonnet-20241022-v2:0"),
            "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse"
        );
        assert_eq!(
            converse_path("arn:aws:bedrock:us-east-1::foundation-model/x"),
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fx/converse"
        );
    }

    #[test]
    fn a_signed_request_names_the_region_host_and_hash_and_hides_the_secret() {
        let setup = AwsSetup {
            credentials: crate::aws::AwsCredentials::new(
                "AKIDTEST",
                "s3cr3t",
                Some("t0k3n"),
                "test",
            ),
            region: "eu-west-3".into(),
        };
        let signed = sign_request(crate::settings::BEDROCK_BASE_URL, "m:0", b"{}", &setup).unwrap();
        assert_eq!(
            signed.url,
            "https://bedrock-runtime.eu-west-3.amazonaws.com/model/m%3A0/converse"
        );
        let auth = &signed
            .headers
            .iter()
            .find(|(k, _)| *k == "authorization")
            .unwrap()
            .1;
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/"),
            "{auth}"
        );
        assert!(auth.contains("/eu-west-3/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature="), "{auth}");
        assert!(!auth.contains("s3cr3t"));
        assert!(sign_request("not a url", "m", b"", &setup).is_err());
    }

    #[tokio::test]
    async fn videos_go_whole_in_the_formats_bedrock_takes_and_within_its_limit() {
        use vaider_media::media::{MediaInfo, MediaKind};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flow.mp4");
        std::fs::write(&path, b"\0\0\0\x18ftypisom video bytes").unwrap();
        let media = |mime_type, format, size_bytes| MediaInfo {
            kind: MediaKind::Video,
            mime_type,
            format,
            size_bytes,
            animation: None,
        };
        let block = video_block(&path, &media("video/mp4", "MP4", 26))
            .await
            .unwrap();
        assert_eq!(block["video"]["format"], "mp4");
        assert_eq!(
            block["video"]["source"]["bytes"],
            base64(&std::fs::read(&path).unwrap())
        );
        let err = video_block(&path, &media("video/avi", "AVI", 26))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mp4, mov, mkv or webm") && err.contains("keyframes"),
            "{err}"
        );
        let err = video_block(&path, &media("video/mp4", "MP4", 30 * 1024 * 1024))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("25 MB"), "{err}");
    }

    #[test]
    fn answers_and_errors_read_like_bedrock_writes_them() {
        let answer = json!({
            "output": {"message": {"role": "assistant", "content": [{"text": "A login "}, {"text": "form."}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1200, "outputTokens": 30, "totalTokens": 1230},
            "metrics": {"latencyMs": 800}
        });
        let read = converse_answer(answer, "m", Vec::new()).unwrap();
        assert_eq!(read.text, "A login form.");
        assert_eq!(
            (read.usage.input_tokens, read.usage.output_tokens),
            (1200, 30)
        );
        let empty =
            json!({"output": {"message": {"content": []}}, "stopReason": "content_filtered"});
        let err = converse_answer(empty, "m", Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("content_filtered"), "{err}");

        let err = BedrockRules
            .error(
                403,
                r#"{"message":"The security token included in the request is invalid."}"#,
            )
            .to_string();
        assert!(
            err.contains("HTTP 403") && err.contains("aws sts get-caller-identity"),
            "{err}"
        );
        let err = BedrockRules
            .error(
                403,
                r#"{"message":"You don't have access to the model with the specified model ID."}"#,
            )
            .to_string();
        assert!(err.contains("Model access"), "{err}");
        let err = BedrockRules
            .error(
                400,
                r#"{"message":"The provided model identifier is invalid."}"#,
            )
            .to_string();
        assert!(err.contains("ValidationException"), "{err}");
        let err = BedrockRules.error(503, "not json").to_string();
        assert!(err.contains("ServiceUnavailableException"), "{err}");
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            "x-amzn-errortype",
            "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/"
                .parse()
                .unwrap(),
        );
        let err = BedrockRules
            .error_with_headers(403, &headers, r#"{"message":"Signature expired"}"#)
            .to_string();
        assert!(
            err.contains("403 InvalidSignatureException: Signature expired"),
            "{err}"
        );
        assert!(err.contains("clock"), "{err}");
        let none = reqwest::header::HeaderMap::new();
        let base = Duration::from_millis(10);
        assert!(BedrockRules.wait(429, &none, "", 1, base).is_some());
        assert!(BedrockRules.wait(403, &none, "", 1, base).is_none());
        assert!(BedrockRules.wait(400, &none, "", 1, base).is_none());
    }
}
