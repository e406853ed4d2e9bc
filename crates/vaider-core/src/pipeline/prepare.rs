//! The prepare stage: checked files turned into what the chosen provider takes. A video goes
//! to a model that takes video as the sampling plan says (the moments where the screen
//! changes, or the whole file); otherwise as keyframes. Images are fitted to the provider's
//! size and format limits. With a note for the model and a list of what was adapted.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::analysis::Tool;
use crate::config::ProviderConfig;
use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::media::{MediaInfo, MediaKind};
use crate::provider::{Capabilities, MediaPart, VideoClips};
use crate::sampling::{self, Plan, Used, VideoSampling};
use crate::{image_fit, keyframes};

/// What was sent for one call: the parts, the prompt note and what was adapted.
#[derive(Default)]
pub(super) struct Prepared {
    pub parts: Vec<MediaPart>,
    /// Told to the model, e.g. that the video came as keyframes.
    pub note: Option<String>,
    /// Frames of a video sent: keyframes, or the frames of its clips.
    pub frames_sent: Option<u64>,
    pub adaptations: Vec<String>,
    /// How a video went to a model that takes video.
    pub sampling: Option<Sampled>,
}

/// The sampling setting of a call and what came of it.
pub(super) struct Sampled {
    pub requested: VideoSampling,
    /// None when the whole video went without a plan (asked for, or the plan failed).
    pub plan: Option<Plan>,
    pub reason: String,
}

impl Prepared {
    /// The parts as the interaction file records them (no pixels).
    pub fn describe_parts(&self) -> Vec<serde_json::Value> {
        self.parts
            .iter()
            .map(|part| match part {
                MediaPart::File { path, media, .. } => {
                    json!({"file": path, "type": media.mime_type, "sizeBytes": media.size_bytes})
                }
                MediaPart::Image { image, label } => json!({
                    "image": image.mime_type, "width": image.width, "height": image.height,
                    "sizeBytes": image.bytes.len(), "label": label, "adapted": image.adapted
                }),
            })
            .collect()
    }
}

impl Vaider {
    pub(super) async fn prepare(
        &self,
        media: impl Iterator<Item = &(PathBuf, MediaInfo)>,
        provider: &ProviderConfig,
        tool: Tool,
        work_dir: &Path,
        sampling: VideoSampling,
    ) -> Result<Prepared> {
        let caps = Capabilities::of(provider);
        let mut prepared = Prepared::default();
        for (index, (path, info)) in media.enumerate() {
            match info.kind {
                MediaKind::Video if caps.video => {
                    let video = Video { path, info };
                    add_video(&mut prepared, video, &caps, work_dir, sampling).await?
                }
                MediaKind::Video => {
                    let why = format!("{} takes no video", provider.name);
                    add_keyframes(&mut prepared, path, &caps, work_dir, &why).await?;
                }
                MediaKind::Image => {
                    let label = diff_label(tool, index);
                    add_image(&mut prepared, path, info, &caps, label, index).await?
                }
            }
        }
        Ok(prepared)
    }
}

/// A diff's images are named for the model, in the order the prompt expects.
fn diff_label(tool: Tool, index: usize) -> Option<String> {
    (tool == Tool::UiDiffCheck).then(|| {
        if index == 0 {
            "EXPECTED (the first image):"
        } else {
            "ACTUAL (the second image):"
        }
        .to_string()
    })
}

/// A video file and what the check found of it.
struct Video<'a> {
    path: &'a Path,
    info: &'a MediaInfo,
}

impl Video<'_> {
    fn whole(&self, clips: Option<VideoClips>) -> MediaPart {
        MediaPart::File {
            path: self.path.to_path_buf(),
            media: self.info.clone(),
            clips,
        }
    }
}

/// A video for a model that takes video, sent as the sampling plan says. When the changes
/// cannot be read, `auto` sends the whole video as before rather than fail.
async fn add_video(
    prepared: &mut Prepared,
    video: Video<'_>,
    caps: &Capabilities,
    work_dir: &Path,
    requested: VideoSampling,
) -> Result<()> {
    let why = "keyframes were asked for";
    if !caps.video_clips || requested == VideoSampling::Full {
        // A provider without clips (a vLLM server) can only take all of it, or keyframes.
        if requested == VideoSampling::Keyframes {
            add_keyframes(prepared, video.path, caps, work_dir, why).await?;
            return Ok(());
        }
        prepared.parts.push(video.whole(None));
        if caps.video_clips {
            prepared.sampling = Some(Sampled {
                requested,
                plan: None,
                reason: "full sampling was asked for".into(),
            });
        }
        return Ok(());
    }
    let facts = match sampling::study(video.path).await {
        Ok(facts) => facts,
        Err(e) if requested == VideoSampling::Auto => {
            prepared.parts.push(video.whole(None));
            let reason =
                format!("the screen's changes could not be read, so the whole video was sent: {e}");
            prepared.adaptations.push(reason.clone());
            prepared.sampling = Some(Sampled {
                requested,
                plan: None,
                reason,
            });
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let mut plan = sampling::plan::plan(requested, &facts, &sampling::GEMINI_RATES);
    match plan.used {
        Used::Full => prepared.parts.push(video.whole(None)),
        Used::Clips => {
            let frames: u64 = plan.clips.iter().map(|c| c.frames()).sum();
            prepared.adaptations.push(format!(
                "video sent as {} clips around its screen changes: {frames} frames where one a second would be {}",
                plan.clips.len(),
                facts.duration.ceil().max(1.0),
            ));
            prepared.note = Some(sampling::clips_note(&plan.clips));
            prepared.frames_sent = Some(frames);
            prepared.parts.push(video.whole(Some(VideoClips {
                clips: plan.clips.clone(),
                low_resolution: plan.low_resolution,
            })));
        }
        Used::Keyframes => {
            let why = if requested == VideoSampling::Keyframes {
                why
            } else {
                "cheaper than clips or the whole video"
            };
            plan.moments = add_keyframes(prepared, video.path, caps, work_dir, why).await?;
            plan.media_tokens = plan.moments.len() as u64 * sampling::GEMINI_RATES.per_frame;
        }
    }
    prepared.sampling = Some(Sampled {
        requested,
        reason: plan.reason.clone(),
        plan: Some(plan),
    });
    Ok(())
}

/// A video as the frames where the screen changes, plus the first and the last, each
/// labelled with its time. Returns the frames' times.
async fn add_keyframes(
    prepared: &mut Prepared,
    path: &Path,
    caps: &Capabilities,
    work_dir: &Path,
    why: &str,
) -> Result<Vec<f64>> {
    let frames = keyframes::extract(
        path,
        &work_dir.join("frames"),
        &keyframes::KeyframeOptions::default(),
    )
    .await?;
    let count = frames.len();
    let mut times = Vec::with_capacity(count);
    for frame in frames {
        let bytes = tokio::fs::read(&frame.path)
            .await
            .map_err(|e| VaiderError::internal(format!("read {}", frame.path.display()), e))?;
        let limits = caps.image.clone();
        let image =
            tokio::task::spawn_blocking(move || image_fit::fit(bytes, "image/jpeg", &limits))
                .await
                .map_err(|e| VaiderError::internal("fit a frame", e))??;
        prepared.parts.push(MediaPart::Image {
            image,
            label: Some(format!(
                "Frame at {}:",
                keyframes::timestamp(frame.at_seconds)
            )),
        });
        times.push(frame.at_seconds);
    }
    prepared.frames_sent = Some(count as u64);
    prepared.note = Some(format!(
        "The video was sent as {count} still frames, taken where the screen changes plus the first and the last; \
each is labelled with its time. Describe it as a timeline using those times."
    ));
    prepared.adaptations.push(format!(
        "video sent as {count} keyframes (where the screen changes, plus first and last): {why}"
    ));
    Ok(times)
}

/// An image inline, fitted to the provider's limits; one too large to send inline goes as a
/// file where the provider takes files (Gemini) rather than shrink.
async fn add_image(
    prepared: &mut Prepared,
    path: &Path,
    info: &MediaInfo,
    caps: &Capabilities,
    label: Option<String>,
    index: usize,
) -> Result<()> {
    if caps.files_for_large_images
        && info.size_bytes > caps.image.max_bytes
        && caps.image.takes(info.mime_type)
    {
        prepared.parts.push(MediaPart::File {
            path: path.to_path_buf(),
            media: info.clone(),
            clips: None,
        });
        return Ok(());
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
    let mime = info.mime_type;
    let limits = caps.image.clone();
    let image = tokio::task::spawn_blocking(move || image_fit::fit(bytes, mime, &limits))
        .await
        .map_err(|e| VaiderError::internal("fit the image", e))??;
    if let Some(adapted) = &image.adapted {
        prepared
            .adaptations
            .push(format!("image {}: {adapted}", index + 1));
    }
    prepared.parts.push(MediaPart::Image { image, label });
    Ok(())
}
