//! Google Gemini, through its native REST API: videos go up with the Files API's resumable
//! protocol, streamed from disk one chunk at a time (memory does not grow with the file), are
//! polled until ACTIVE, described with generateContent, then deleted. Small images go inline.
//! Retries follow Google's rules: 429 after its RetryInfo delay (never for a daily quota),
//! 500/503/504 with exponential backoff, never past the call's deadline.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use super::{
    MediaPart, ProviderAnswer, ProviderJob, RetryRules, Upstream, UpstreamCall, VisionProvider,
};
use crate::provider::Usage;
use crate::sampling::Sending;
use crate::settings::GeminiConfig;
use crate::tokens::{self, Resolution, Setting, TokenRules};
use vaider_base::error::{UpstreamResponse, VaiderError};
use vaider_base::progress::Progress;
use vaider_base::secrets::ApiKey;
use vaider_media::media::MediaInfo;

mod quota;
use quota::Quota429;

/// Google's resumable protocol wants every chunk but the last to be a multiple of 256 KiB.
const CHUNK_GRANULE: usize = 256 * 1024;

pub struct GeminiProvider {
    upstream: Upstream,
    key: ApiKey,
    chunk_bytes: usize,
    poll_interval: Duration,
}

impl GeminiProvider {
    pub fn new(upstream: Upstream, config: &GeminiConfig, key: ApiKey) -> Self {
        let chunk = (config.upload_chunk_mib.max(1) as usize) * 1024 * 1024;
        GeminiProvider {
            upstream,
            key,
            chunk_bytes: chunk.div_ceil(CHUNK_GRANULE) * CHUNK_GRANULE,
            poll_interval: Duration::from_millis(config.poll_interval_ms.max(10)),
        }
    }
}

/// Google's retry rules and error wording.
struct GoogleRules;

impl RetryRules for GoogleRules {
    fn wait(
        &self,
        status: u16,
        _: &reqwest::header::HeaderMap,
        body: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration> {
        retry_wait(status, body, attempt, base)
    }

    fn error(&self, status: u16, body: &str) -> VaiderError {
        upstream_error(status, body)
    }
}

/// Gemini's names for the formats it takes (it wants `video/mov`, not `video/quicktime`).
fn gemini_mime(media: &MediaInfo) -> &'static str {
    match media.mime_type {
        "video/quicktime" => "video/mov",
        // WebM is Matroska with fewer codecs; Gemini lists WebM but not Matroska.
        "video/x-matroska" => "video/webm",
        other => other,
    }
}

#[async_trait::async_trait]
impl VisionProvider for GeminiProvider {
    fn name(&self) -> &str {
        "gemini"
    }

    async fn describe(&self, job: ProviderJob<'_>) -> Result<ProviderAnswer, VaiderError> {
        let mut calls = Vec::new();
        let mut uploads: Vec<UploadedFile> = Vec::new();
        let mut estimate = None;
        let outcome = self
            .ask(&job, &mut uploads, &mut calls, &mut estimate)
            .await;
        // Delete the uploads whatever the answer was; a failed delete only leaves a file that
        // Google removes by itself after 48 hours.
        let video_seconds = uploads.iter().find_map(|f| f.video_seconds);
        for file in uploads {
            self.delete(file, &mut calls).await;
        }
        let answer = outcome?;
        let mut parsed = parse_answer(answer, video_seconds, calls)?;
        parsed.usage.estimated_input_tokens = estimate;
        warn_on_gap(job.model, &parsed.usage);
        Ok(parsed)
    }
}

impl GeminiProvider {
    async fn ask(
        &self,
        job: &ProviderJob<'_>,
        uploads: &mut Vec<UploadedFile>,
        calls: &mut Vec<UpstreamCall>,
        estimate: &mut Option<u64>,
    ) -> Result<Value, VaiderError> {
        let rules = TokenRules::for_model(job.model);
        let total: u64 = job
            .parts
            .iter()
            .map(|p| match p {
                MediaPart::File { media, .. } => media.size_bytes,
                MediaPart::Image { image, .. } => image.bytes.len() as u64,
            })
            .sum();
        let mut sent = 0;
        let mut parts = Vec::new();
        let mut request_resolution = None;
        let mut note = None;
        // Length and sound of each uploaded video, for the estimate.
        let mut videos: Vec<(String, Option<f64>, bool)> = Vec::new();
        for part in job.parts {
            match part {
                MediaPart::Image {
                    image,
                    label,
                    keyframe,
                } => {
                    add_image(
                        &mut parts,
                        image,
                        label.as_deref(),
                        image_setting(rules, *keyframe),
                    );
                    sent += image.bytes.len() as u64;
                    job.progress.report(Progress::Uploading { sent, total });
                }
                MediaPart::File { path, media, plan } => {
                    job.ensure_wanted()?;
                    let mime = gemini_mime(media);
                    let upload_started = Instant::now();
                    let file = self
                        .upload(job, path, media, mime, sent, total, calls)
                        .await?;
                    sent += media.size_bytes;
                    uploads.push(file);
                    let file = uploads
                        .last_mut()
                        .ok_or_else(|| VaiderError::internal("upload", "lost the file"))?;
                    job.ensure_wanted()?;
                    self.wait_until_active(file, job, calls).await?;
                    let mut file_data =
                        json!({"fileData": {"fileUri": file.uri, "mimeType": mime}});
                    if media.kind == vaider_media::media::MediaKind::Image {
                        // An image too large to go inline: a screenshot all the same.
                        set_part_resolution(&mut file_data, rules.screenshot_setting());
                    } else {
                        videos.push((file.uri.clone(), file.video_seconds, false));
                    }
                    let Some(plan) = plan else {
                        parts.push(file_data);
                        continue;
                    };
                    // The scan ran during the upload and is usually done by now. The answer
                    // waits for it a tenth of a large video's upload time (at least a second),
                    // and at most half the time left: past that, the whole video goes.
                    let left = job.deadline.saturating_duration_since(Instant::now());
                    let latest = Instant::now() + left / 2;
                    let sending = tokio::select! {
                        sending = plan.resolve_after_upload(upload_started.elapsed(), media.size_bytes, latest) => sending,
                        _ = job.stop.cancelled() => return Err(super::stopped()),
                    };
                    match sending {
                        Some(sending) => {
                            let planned = add_planned(&mut parts, file_data, &sending, rules);
                            request_resolution = request_resolution.or(planned);
                            note = sending.note.clone();
                            if let (Some(plan), Some(video)) = (&sending.plan, videos.last_mut()) {
                                video.1 = video.1.or(Some(plan.duration));
                                video.2 = plan.has_audio;
                            }
                        }
                        None => parts.push(file_data),
                    }
                }
            }
        }
        match &note {
            Some(note) => parts.push(json!({"text": (job.user_prompt_with)(note)})),
            None => parts.push(json!({"text": job.user_prompt})),
        }
        let mut generation_config = json!({"temperature": 0.2});
        if let Some(resolution) = request_resolution {
            generation_config["mediaResolution"] = json!(resolution.api_name());
        }
        if let Some(schema) = &job.response_schema {
            generation_config["responseMimeType"] = json!("application/json");
            generation_config["responseJsonSchema"] = schema.clone();
        }
        let body = json!({
            "systemInstruction": {"parts": [{"text": job.system_prompt}]},
            "contents": [{"role": "user", "parts": parts}],
            "generationConfig": generation_config,
        });
        *estimate = estimate_of(&body, rules, &videos);
        let url = format!(
            "{}/v1beta/models/{}:generateContent",
            self.upstream.base_url, job.model
        );
        let endpoint = format!("/v1beta/models/{}:generateContent", job.model);
        job.ensure_wanted()?;
        let response = self.generate(job, &url, &endpoint, &body, calls).await?;
        super::read_json(response, "Gemini").await
    }
}

fn add_image(
    parts: &mut Vec<Value>,
    image: &vaider_media::image_fit::FittedImage,
    label: Option<&str>,
    setting: Setting,
) {
    if let Some(label) = label {
        parts.push(json!({"text": label}));
    }
    let mut part = json!({"inlineData": {"mimeType": image.mime_type, "data": base64::engine::general_purpose::STANDARD.encode(&image.bytes)}});
    set_part_resolution(&mut part, setting);
    parts.push(part);
}

/// The resolution an image goes at: a keyframe at what a recording's frame needs, an image
/// the agent sent at what its text needs (`TokenRules`).
fn image_setting(rules: TokenRules, keyframe: bool) -> Setting {
    if keyframe {
        rules.keyframe_setting()
    } else {
        rules.screenshot_setting()
    }
}

/// A part's own `mediaResolution` (Gemini 3 and later; the rules never ask it of others).
fn set_part_resolution(part: &mut Value, setting: Setting) {
    if let Setting::Part(resolution) = setting {
        part["mediaResolution"] = json!({"level": resolution.api_name()});
    }
}

/// The uploaded video as its plan says: one `fileData` part per clip (each with its offsets,
/// rate and resolution), or the keyframes inline, or the whole file. Returns the resolution
/// the whole request must go at, if any. (The plan's note goes into the prompt.)
fn add_planned(
    parts: &mut Vec<Value>,
    file_data: Value,
    sending: &Sending,
    rules: TokenRules,
) -> Option<Resolution> {
    if let Some(clips) = &sending.clips {
        parts.extend(clips.clips.iter().map(|clip| {
            let mut part = file_data.clone();
            part["videoMetadata"] = json!({
                "startOffset": format!("{:.3}s", clip.start),
                "endOffset": format!("{:.3}s", clip.end),
                "fps": clip.fps,
            });
            set_part_resolution(&mut part, clip.setting);
            part
        }));
        return match clips.setting {
            Setting::Request(resolution) => Some(resolution),
            _ => None,
        };
    }
    if sending.images.is_empty() {
        parts.push(file_data);
    }
    // Keyframes: the upload goes unused and is deleted with the others.
    for image in &sending.images {
        if let MediaPart::Image {
            image,
            label,
            keyframe,
        } = image
        {
            add_image(
                parts,
                image,
                label.as_deref(),
                image_setting(rules, *keyframe),
            );
        }
    }
    None
}

/// The estimate of the request's prompt tokens, at the rules of the model called; None when
/// a video's length is unknown. A video's sound is known from its plan (none without one:
/// Playwright records none).
fn estimate_of(
    body: &Value,
    rules: TokenRules,
    videos: &[(String, Option<f64>, bool)],
) -> Option<u64> {
    let files: Vec<tokens::VideoFile<'_>> = videos
        .iter()
        .filter_map(|(uri, seconds, has_audio)| {
            Some(tokens::VideoFile {
                uri,
                seconds: (*seconds)?,
                has_audio: *has_audio,
            })
        })
        .collect();
    tokens::estimate_request(body, rules, &files)
}

/// A warning when Gemini counted far from the estimate: the token rules may have changed.
fn warn_on_gap(model: &str, usage: &Usage) {
    if let Some(estimate) = usage.estimated_input_tokens {
        if tokens::large_gap(estimate, usage.input_tokens) {
            tracing::warn!(
                model,
                estimate,
                counted = usage.input_tokens,
                "Gemini counted {} input tokens where Vaider estimated {estimate} (more than 20 % apart): \
                 the token rules for this model may have changed",
                usage.input_tokens
            );
        }
    }
}

/// An uploaded file; deleted when dropped unless `delete` ran, so a timeout or an error
/// between upload and answer does not leave it behind.
struct UploadedFile {
    name: String,
    uri: String,
    state: String,
    video_seconds: Option<f64>,
    cleanup: Option<(reqwest::Client, String, ApiKey)>,
}

impl Drop for UploadedFile {
    fn drop(&mut self) {
        if let Some((http, url, key)) = self.cleanup.take() {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = http
                        .delete(url)
                        .header("x-goog-api-key", key.expose())
                        .send()
                        .await;
                });
            }
        }
    }
}

impl GeminiProvider {
    /// Uploads one file; `before` bytes of the call's `all` were sent already (progress).
    #[allow(clippy::too_many_arguments)]
    async fn upload(
        &self,
        job: &ProviderJob<'_>,
        path: &Path,
        media: &MediaInfo,
        mime: &str,
        before: u64,
        all: u64,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<UploadedFile, VaiderError> {
        let total = media.size_bytes;
        let display_name = display_name(path, job.interaction_id);
        let start_url = format!("{}/upload/v1beta/files", self.upstream.base_url);
        let start_body = json!({"file": {"display_name": display_name}});
        let response = self
            .upstream
            .send(
                || {
                    self.upstream
                        .http
                        .post(&start_url)
                        .header("x-goog-api-key", self.key.expose())
                        .header("X-Goog-Upload-Protocol", "resumable")
                        .header("X-Goog-Upload-Command", "start")
                        .header("X-Goog-Upload-Header-Content-Length", total.to_string())
                        .header("X-Goog-Upload-Header-Content-Type", mime)
                        .json(&start_body)
                },
                "POST",
                "/upload/v1beta/files (start)",
                job.deadline,
                calls,
                &GoogleRules,
            )
            .await?;
        // The session URL is a credential of its own: it is never logged or returned.
        let upload_url = response
            .headers()
            .get("x-goog-upload-url")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| VaiderError::Upstream {
                message: "Gemini did not return an upload URL for the resumable upload.".into(),
                response: Some(UpstreamResponse {
                    status: response.status().as_u16(),
                    body: String::new(),
                }),
            })?;

        let mut offset: u64 = 0;
        job.progress.report(Progress::Uploading {
            sent: before,
            total: all,
        });
        loop {
            // Stopping between chunks leaves nothing: an unfinished session creates no file.
            job.ensure_wanted()?;
            let len = (self.chunk_bytes as u64).min(total - offset);
            let last = offset + len >= total;
            let command = if last { "upload, finalize" } else { "upload" };
            let response = self
                .upstream
                .send(
                    || {
                        self.upstream
                            .http
                            .post(&upload_url)
                            .header("X-Goog-Upload-Offset", offset.to_string())
                            .header("X-Goog-Upload-Command", command)
                            .header(reqwest::header::CONTENT_LENGTH, len.to_string())
                            .body(file_slice(path, offset, len))
                    },
                    "POST",
                    "upload session (chunk)",
                    job.deadline,
                    calls,
                    &GoogleRules,
                )
                .await?;
            offset += len;
            job.progress.report(Progress::Uploading {
                sent: before + offset,
                total: all,
            });
            if last {
                let answer: Value = super::read_json(response, "Gemini").await?;
                let file_json = answer.get("file").cloned().unwrap_or(answer);
                let name = file_json["name"].as_str().unwrap_or_default().to_string();
                let uri = file_json["uri"].as_str().unwrap_or_default().to_string();
                if name.is_empty() || uri.is_empty() {
                    return Err(VaiderError::Upstream {
                        message: "Gemini's upload answer has no file name or URI.".into(),
                        response: Some(UpstreamResponse {
                            status: 200,
                            body: file_json.to_string(),
                        }),
                    });
                }
                return Ok(UploadedFile {
                    cleanup: Some((
                        self.upstream.http.clone(),
                        format!("{}/v1beta/{}", self.upstream.base_url, name),
                        self.key.clone(),
                    )),
                    state: file_json["state"]
                        .as_str()
                        .unwrap_or("PROCESSING")
                        .to_string(),
                    video_seconds: video_seconds(&file_json),
                    name,
                    uri,
                });
            }
        }
    }

    async fn wait_until_active(
        &self,
        file: &mut UploadedFile,
        job: &ProviderJob<'_>,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<(), VaiderError> {
        let url = format!("{}/v1beta/{}", self.upstream.base_url, file.name);
        let endpoint = format!("/v1beta/{}", file.name);
        let mut polls = 0;
        loop {
            match file.state.as_str() {
                "ACTIVE" => return Ok(()),
                "FAILED" => {
                    return Err(VaiderError::Upstream {
                        message: format!(
                            "Gemini could not process the video ({}). Check that it plays in a browser; re-encode it (e.g. `ffmpeg -i in.webm out.mp4`) if it does not.",
                            file.name
                        ),
                        response: None,
                    })
                }
                _ => {}
            }
            polls += 1;
            job.progress.report(Progress::Processing { polls });
            let pause = tokio::time::sleep(
                self.poll_interval
                    .min(job.deadline.saturating_duration_since(Instant::now())),
            );
            tokio::select! {
                _ = pause => {}
                // The file is already in the call's uploads, which are deleted on the way out.
                _ = job.stop.cancelled() => return Err(super::stopped()),
            }
            let response = self
                .upstream
                .send(
                    || {
                        self.upstream
                            .http
                            .get(&url)
                            .header("x-goog-api-key", self.key.expose())
                    },
                    "GET",
                    &endpoint,
                    job.deadline,
                    calls,
                    &GoogleRules,
                )
                .await?;
            let body: Value = super::read_json(response, "Gemini").await?;
            file.state = body["state"].as_str().unwrap_or("PROCESSING").to_string();
            if let Some(seconds) = video_seconds(&body) {
                file.video_seconds = Some(seconds);
            }
            if file.state == "FAILED" {
                let reason = body["error"]["message"]
                    .as_str()
                    .unwrap_or("no reason given");
                return Err(VaiderError::Upstream {
                    message: format!(
                        "Gemini could not process the video: {reason}. Check that it plays in a browser; re-encode it (e.g. `ffmpeg -i in.webm out.mp4`) if it does not."
                    ),
                    response: Some(UpstreamResponse {
                        status: 200,
                        body: body.to_string(),
                    }),
                });
            }
        }
    }

    async fn delete(&self, mut file: UploadedFile, calls: &mut Vec<UpstreamCall>) {
        let url = format!("{}/v1beta/{}", self.upstream.base_url, file.name);
        let started = Instant::now();
        let status = self
            .upstream
            .http
            .delete(&url)
            .header("x-goog-api-key", self.key.expose())
            .send()
            .await
            .ok()
            .map(|r| r.status().as_u16());
        calls.push(UpstreamCall {
            method: "DELETE",
            endpoint: format!("/v1beta/{}", file.name),
            status,
            duration_ms: started.elapsed().as_millis() as u64,
            attempt: 1,
        });
        if status.is_some_and(|s| s < 300 || s == 404) {
            file.cleanup = None;
        }
    }
}

/// How long to wait before retrying, or None when retrying will not help.
fn retry_wait(status: u16, body: &str, attempt: u32, base: Duration) -> Option<Duration> {
    match status {
        429 => {
            let quota = Quota429::read(body);
            match quota.daily {
                true => None,
                false => quota.wait(attempt, base),
            }
        }
        500 | 503 | 504 => Some(super::backoff(attempt, base)),
        _ => None,
    }
}

fn upstream_error(status: u16, body: &str) -> VaiderError {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let google_status = parsed["error"]["status"].as_str().unwrap_or("");
    let google_message = parsed["error"]["message"].as_str().unwrap_or("").trim();
    if status == 429 {
        let response = UpstreamResponse {
            status,
            body: body.to_string(),
        };
        return Quota429::read(body).error(response, google_message);
    }
    let hint = match (status, google_status) {
        (400, _) if body.contains("API_KEY_INVALID") => {
            " Check the key: `vaider key set` stores a new one; `vaider doctor` shows which key is used."
        }
        (403, _) => " The key may lack access to this model or file.",
        (404, _) => " Check the model name (config `model`, or the `model` argument).",
        (500..=599, _) => " The service had a problem; Vaider retried with backoff. Try again later.",
        _ => "",
    };
    let what = if google_message.is_empty() {
        format!("Gemini answered HTTP {status}.")
    } else {
        format!("Gemini answered HTTP {status} {google_status}: {google_message}")
    };
    VaiderError::Upstream {
        message: format!("{what}{hint}"),
        response: Some(UpstreamResponse {
            status,
            body: body.to_string(),
        }),
    }
}

fn parse_answer(
    answer: Value,
    video_seconds: Option<f64>,
    calls: Vec<UpstreamCall>,
) -> Result<ProviderAnswer, VaiderError> {
    let candidate = &answer["candidates"][0];
    let text: String = candidate["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| !p["thought"].as_bool().unwrap_or(false))
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    if text.trim().is_empty() {
        let reason = answer["promptFeedback"]["blockReason"]
            .as_str()
            .or_else(|| candidate["finishReason"].as_str())
            .unwrap_or("no text in the answer");
        return Err(VaiderError::Upstream {
            message: format!(
                "Gemini gave no description ({reason}). Rephrase the prompt or try another model."
            ),
            response: Some(UpstreamResponse {
                status: 200,
                body: answer.to_string(),
            }),
        });
    }
    let usage = &answer["usageMetadata"];
    // Thinking tokens are billed as output.
    let output = usage["candidatesTokenCount"].as_u64().unwrap_or(0)
        + usage["thoughtsTokenCount"].as_u64().unwrap_or(0);
    Ok(ProviderAnswer {
        text,
        usage: Usage {
            input_tokens: usage["promptTokenCount"].as_u64().unwrap_or(0),
            output_tokens: output,
            estimated_input_tokens: None,
        },
        model_version: answer["modelVersion"].as_str().map(str::to_string),
        video_seconds,
        raw_response: answer,
        calls,
    })
}

fn video_seconds(file: &Value) -> Option<f64> {
    file["videoMetadata"]["videoDuration"]
        .as_str()
        .and_then(parse_duration)
        .map(|d| d.as_secs_f64())
}

/// Google's duration strings: "37s", "45.837906927s"; bounded (see `bounded`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    super::bounded::google_duration(text, super::bounded::MAX_MEDIA_DURATION)
}

fn display_name(path: &Path, interaction_id: &str) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("vaider-{interaction_id}-{file}")
}

/// A request body that streams `len` bytes of the file from `offset`, so a chunk is never held
/// in memory whole; each retry opens a fresh stream.
fn file_slice(path: &Path, offset: u64, len: u64) -> reqwest::Body {
    use std::io::Seek;
    let opened = std::fs::File::open(path).and_then(|mut file| {
        file.seek(std::io::SeekFrom::Start(offset))?;
        Ok(file)
    });
    match opened {
        Ok(file) => {
            let reader = tokio::fs::File::from_std(file).take(len);
            reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(
                reader,
                256 * 1024,
            ))
        }
        Err(e) => reqwest::Body::wrap_stream(futures_util::stream::once(async move {
            Err::<bytes::Bytes, _>(e)
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_durations_parse() {
        assert_eq!(parse_duration("37s"), Some(Duration::from_secs(37)));
        let d = parse_duration("45.837906927s").unwrap();
        assert!((d.as_secs_f64() - 45.837906927).abs() < 1e-6);
        assert_eq!(parse_duration("soon"), None);
    }

    #[test]
    fn daily_quota_is_not_retried_but_per_minute_waits_the_given_delay() {
        let per_minute = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
        assert_eq!(
            retry_wait(429, per_minute, 1, Duration::from_secs(1)),
            Some(Duration::from_millis(1500))
        );
        let per_day = per_minute.replace("PerMinute", "PerDay");
        assert_eq!(retry_wait(429, &per_day, 1, Duration::from_secs(1)), None);
        assert!(retry_wait(503, "", 1, Duration::from_secs(1)).is_some());
        assert_eq!(retry_wait(400, "", 1, Duration::from_secs(1)), None);
    }

    #[test]
    fn absurd_retry_delays_clamp_or_end_in_a_clear_error() {
        for delay in ["1e30s", "-5s", "garbage", "NaNs", "infs", "1e309s", ""] {
            let body = format!(
                r#"{{"error":{{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{delay}"}}]}}}}"#
            );
            let wait = retry_wait(429, &body, 1, Duration::from_secs(1));
            assert!(
                wait.is_none_or(|w| w < super::super::bounded::MAX_RETRY_WAIT),
                "{delay}: {wait:?}"
            );
            let error = upstream_error(429, &body);
            assert_eq!(
                error.code(),
                vaider_base::error::ErrorCode::RateLimited,
                "{delay}"
            );
        }
        let huge = upstream_error(
            429,
            r#"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1e30s"}]}}"#,
        );
        assert!(huge.to_string().contains("longer than"), "{huge}");
        // A video's length is clamped too.
        assert!(parse_duration("1e30s").is_some());
    }

    #[test]
    fn a_quota_failure_names_the_quota_and_its_size() {
        let body = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-3.5-flash-lite"},"quotaValue":"20"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37.5s"}]}}"#;
        let quota = Quota429::read(body);
        assert!(!quota.daily);
        assert_eq!(quota.limit, Some(20));
        assert_eq!(quota.retry, Some(Duration::from_millis(37_500)));
        assert!(Quota429::read(&body.replace("PerMinute", "PerDay")).daily);
    }

    #[test]
    fn thoughts_are_not_part_of_the_description_but_are_billed() {
        let answer = json!({"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"00:01 Login page."}]},"finishReason":"STOP"}],
            "usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"thoughtsTokenCount":5}});
        let parsed = parse_answer(answer, None, vec![]).unwrap();
        assert_eq!(parsed.text, "00:01 Login page.");
        assert_eq!(
            parsed.usage,
            Usage {
                input_tokens: 100,
                output_tokens: 15,
                estimated_input_tokens: None,
            }
        );
    }

    #[test]
    fn a_blocked_answer_is_an_error_that_says_why() {
        let answer = json!({"promptFeedback":{"blockReason":"SAFETY"}});
        let err = parse_answer(answer, None, vec![]).unwrap_err();
        assert!(err.to_string().contains("SAFETY"));
    }
}
