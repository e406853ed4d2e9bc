//! Google Gemini, through its native REST API: videos go up with the Files API's resumable
//! protocol, streamed from disk one chunk at a time (memory does not grow with the file), are
//! polled until ACTIVE, described with generateContent, then deleted. Small images go inline.
//! Retries follow Google's rules: 429 after its RetryInfo delay (never for a daily quota),
//! 500/503/504 with exponential backoff, never past the call's deadline.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

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

mod answer;
mod errors;
mod files;
mod parts;
mod quota;

use answer::parse_answer;
use errors::{retry_wait, upstream_error};
pub use files::parse_duration;
use files::UploadedFile;
use parts::{add_image, add_planned, estimate_of, image_setting, set_part_resolution, warn_on_gap};

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
