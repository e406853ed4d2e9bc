//! Google Gemini, through its native REST API: videos go up with the Files API's resumable
//! protocol, streamed from disk one chunk at a time (memory does not grow with the file), are
//! polled until ACTIVE, described with generateContent, then deleted. Small images go inline.
//! Retries follow Google's rules: 429 after its RetryInfo delay (never for a daily quota),
//! 500/503/504 with exponential backoff, never past the call's deadline.

use std::time::{Duration, Instant};

use serde_json::Value;

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
use parts::{add_image, image_setting, warn_on_gap, Contents};

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
    /// Uploads the media (each file until ACTIVE, its plan settled), then asks
    /// generateContent; `estimate` gets the request's prompt tokens as estimated.
    async fn ask(
        &self,
        job: &ProviderJob<'_>,
        uploads: &mut Vec<UploadedFile>,
        calls: &mut Vec<UpstreamCall>,
        estimate: &mut Option<u64>,
    ) -> Result<Value, VaiderError> {
        let rules = TokenRules::for_model(job.model);
        let total: u64 = job.parts.iter().map(part_bytes).sum();
        let mut sent = 0;
        let mut contents = Contents::default();
        for part in job.parts {
            match part {
                MediaPart::Image {
                    image,
                    label,
                    keyframe,
                } => {
                    let setting = image_setting(rules, *keyframe);
                    add_image(&mut contents.parts, image, label.as_deref(), setting);
                    sent += image.bytes.len() as u64;
                    job.progress.report(Progress::Uploading { sent, total });
                }
                MediaPart::File { path, media, plan } => {
                    job.ensure_wanted()?;
                    let file = self
                        .upload(job, path, media, gemini_mime(media), sent, total, calls)
                        .await?;
                    sent += media.size_bytes;
                    uploads.push(file);
                    let file = uploads
                        .last_mut()
                        .ok_or_else(|| VaiderError::internal("upload", "lost the file"))?;
                    job.ensure_wanted()?;
                    self.wait_until_active(file, job, calls).await?;
                    let sending = match plan {
                        Some(plan) => settle_plan(job, plan).await?,
                        None => None,
                    };
                    contents.add_file(file, media, rules, sending.as_deref());
                }
            }
        }
        let (body, estimated) = contents.request(job, rules);
        *estimate = estimated;
        self.generate_content(job, &body, calls).await
    }

    /// Asks generateContent (within the model's quota, retried by Google's rules).
    async fn generate_content(
        &self,
        job: &ProviderJob<'_>,
        body: &Value,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<Value, VaiderError> {
        let url = format!(
            "{}/v1beta/models/{}:generateContent",
            self.upstream.base_url, job.model
        );
        let endpoint = format!("/v1beta/models/{}:generateContent", job.model);
        job.ensure_wanted()?;
        let response = self.generate(job, &url, &endpoint, body, calls).await?;
        super::read_json(response, "Gemini").await
    }
}

/// The bytes a part sends, for the upload's progress.
fn part_bytes(part: &MediaPart) -> u64 {
    match part {
        MediaPart::File { media, .. } => media.size_bytes,
        MediaPart::Image { image, .. } => image.bytes.len() as u64,
    }
}

/// What a video's plan sends, once its upload is done. The scan ran during the upload and is
/// often done by now (or found early that the whole video goes). Else the answer waits for it
/// as long as what it is expected to save is worth (`sampling::wait_after_upload`), and at
/// most half the time left: past that (`None`), the whole video goes.
async fn settle_plan(
    job: &ProviderJob<'_>,
    plan: &crate::sampling::PlannedVideo,
) -> Result<Option<std::sync::Arc<Sending>>, VaiderError> {
    let left = job.deadline.saturating_duration_since(Instant::now());
    let latest = Instant::now() + left / 2;
    tokio::select! {
        sending = plan.resolve_after_upload(latest) => Ok(sending),
        _ = job.stop.cancelled() => Err(super::stopped()),
    }
}
