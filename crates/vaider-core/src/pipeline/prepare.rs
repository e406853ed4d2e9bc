//! The prepare stage: checked files turned into what the chosen provider takes. A video goes
//! to a model that takes video as the sampling plan says (the moments where the screen
//! changes, or the whole file); otherwise as keyframes. Images are fitted to the provider's
//! size and format limits. With a note for the model and a list of what was adapted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::video::{add_animation, add_keyframes, add_stretch, add_video, Video};
use crate::analysis::Tool;
use crate::config::ProviderConfig;
use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::image_fit;
use crate::media::{MediaInfo, MediaKind};
use crate::provider::{Capabilities, MediaPart};
use crate::sampling::{Plan, PlannedVideo, Sending, Stretch, VideoSampling};
use crate::tokens::TokenRules;

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
    /// A video's plan being worked out during its upload, with the setting it follows.
    pub planned: Option<(VideoSampling, PlannedVideo)>,
    /// What that plan sent, once settled.
    pub sent: Option<Arc<Sending>>,
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
        let clips = self.sent.as_ref().and_then(|s| s.clips.as_ref());
        let frames = self.sent.iter().flat_map(|s| s.images.iter());
        self.parts
            .iter()
            .chain(frames)
            .map(|part| match part {
                MediaPart::File { path, media, .. } => {
                    let mut file = json!({"file": path, "type": media.mime_type, "sizeBytes": media.size_bytes});
                    if let Some(clips) = clips {
                        file["clips"] = clips
                            .clips
                            .iter()
                            .map(|c| json!({"start": c.start, "end": c.end, "fps": c.fps}))
                            .collect();
                    }
                    file
                }
                MediaPart::Image { image, label, .. } => json!({
                    "image": image.mime_type, "width": image.width, "height": image.height,
                    "sizeBytes": image.bytes.len(), "label": label, "adapted": image.adapted
                }),
            })
            .collect()
    }

    /// Takes in what a video's plan sent, once the provider has answered: the frames, the
    /// adaptations and the sampling report.
    pub fn settle(&mut self) {
        let Some((requested, planned)) = self.planned.take() else {
            return;
        };
        let Some(sent) = planned.sent() else {
            let reason = planned.given_up().unwrap_or_else(|| {
                "the scan for screen changes was not done in time, so the whole video was sent"
                    .into()
            });
            self.adaptations.push(reason.clone());
            self.sampling = Some(Sampled {
                requested,
                plan: None,
                reason,
            });
            return;
        };
        if sent.frames_sent.is_some() {
            self.frames_sent = sent.frames_sent;
        }
        self.adaptations.extend(sent.adaptations.iter().cloned());
        self.sampling = Some(Sampled {
            requested,
            plan: sent.plan.clone(),
            reason: sent.reason.clone(),
        });
        self.sent = Some(sent);
    }
}

impl Vaider {
    pub(super) async fn prepare(
        &self,
        media: impl Iterator<Item = &(PathBuf, MediaInfo)>,
        provider: &ProviderConfig,
        model: &str,
        tool: Tool,
        work_dir: &Path,
        (sampling, stretch): (VideoSampling, Option<Stretch>),
    ) -> Result<Prepared> {
        let caps = Capabilities::of(provider);
        let rules = TokenRules::for_model(model);
        let mut prepared = Prepared::default();
        for (index, (path, info)) in media.enumerate() {
            match info.kind {
                MediaKind::Video if caps.video => {
                    let video = Video { path, info };
                    match stretch {
                        Some(stretch) => {
                            add_stretch(&mut prepared, video, &caps, (sampling, stretch), rules)
                        }
                        None => {
                            add_video(&mut prepared, video, &caps, work_dir, sampling, rules)
                                .await?
                        }
                    }
                }
                MediaKind::Video => {
                    let why = format!("{} takes no video", provider.name);
                    add_keyframes(&mut prepared, path, &caps, work_dir, &why).await?;
                }
                MediaKind::Image if info.animation.is_some() && tool.takes_video() => {
                    add_animation(&mut prepared, path, info, &caps, work_dir).await?
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

/// What each image is, told to the model before it, as the task names them: its main images
/// first, then any close-ups.
fn diff_label(tool: Tool, index: usize) -> Option<String> {
    let task = tool.task();
    let main_images = if tool.takes_two_images() { 2 } else { 1 };
    let label = if index >= main_images {
        task.more_images_label
    } else {
        task.image_labels.get(index).copied()
    };
    label.map(str::to_string)
}

/// An image inline, fitted to the provider's limits; one too large to send inline goes as a
/// file where the provider takes files (Gemini) rather than shrink. An animation is seen by
/// its first frame, and the result says where it is watched playing.
async fn add_image(
    prepared: &mut Prepared,
    path: &Path,
    info: &MediaInfo,
    caps: &Capabilities,
    label: Option<String>,
    index: usize,
) -> Result<()> {
    if let Some(what) = info.animation_text() {
        prepared.adaptations.push(format!(
            "image {} is {what}: only its first frame was looked at; analyze_video watches it play",
            index + 1
        ));
    }
    if caps.files_for_large_images
        && info.animation.is_none()
        && info.size_bytes > caps.image.max_bytes
        && caps.image.takes(info.mime_type)
    {
        prepared.parts.push(MediaPart::File {
            path: path.to_path_buf(),
            media: info.clone(),
            plan: None,
        });
        return Ok(());
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
    let mime = info.mime_type;
    let limits = caps.image.clone();
    let animated = info.animation.is_some();
    let image = tokio::task::spawn_blocking(move || match animated {
        true => image_fit::first_frame(bytes, mime, &limits),
        false => image_fit::fit(bytes, mime, &limits),
    })
    .await
    .map_err(|e| VaiderError::internal("fit the image", e))??;
    if let Some(adapted) = &image.adapted {
        prepared
            .adaptations
            .push(format!("image {}: {adapted}", index + 1));
    }
    prepared.parts.push(MediaPart::Image {
        image,
        label,
        keyframe: false,
    });
    Ok(())
}
