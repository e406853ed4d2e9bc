//! The prepare stage: checked files turned into what the chosen provider takes. Whole files
//! where it can; otherwise a video's keyframes (where the screen changes) and images fitted
//! to its size and format limits, with a note for the model and a list of what was adapted.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::analysis::Tool;
use crate::config::ProviderConfig;
use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::media::{MediaInfo, MediaKind};
use crate::provider::{Capabilities, MediaPart};
use crate::{image_fit, keyframes};

/// What was sent for one call: the parts, the prompt note and what was adapted.
#[derive(Default)]
pub(super) struct Prepared {
    pub parts: Vec<MediaPart>,
    /// Told to the model, e.g. that the video came as keyframes.
    pub note: Option<String>,
    pub keyframes: Option<u64>,
    pub adaptations: Vec<String>,
}

impl Prepared {
    /// The parts as the interaction file records them (no pixels).
    pub fn describe_parts(&self) -> Vec<serde_json::Value> {
        self.parts
            .iter()
            .map(|part| match part {
                MediaPart::File { path, media } => {
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
    ) -> Result<Prepared> {
        let caps = Capabilities::of(provider);
        let mut prepared = Prepared::default();
        for (index, (path, info)) in media.enumerate() {
            match info.kind {
                MediaKind::Video if caps.video => prepared.parts.push(MediaPart::File {
                    path: path.clone(),
                    media: info.clone(),
                }),
                MediaKind::Video => {
                    add_keyframes(&mut prepared, path, &caps, provider, work_dir).await?
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

/// A video for a provider without video: the frames where the screen changes, plus the first
/// and the last, each labelled with its time.
async fn add_keyframes(
    prepared: &mut Prepared,
    path: &Path,
    caps: &Capabilities,
    provider: &ProviderConfig,
    work_dir: &Path,
) -> Result<()> {
    let frames = keyframes::extract(
        path,
        &work_dir.join("frames"),
        &keyframes::KeyframeOptions::default(),
    )
    .await?;
    let count = frames.len();
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
    }
    prepared.keyframes = Some(count as u64);
    prepared.note = Some(format!(
        "The video was sent as {count} still frames, taken where the screen changes plus the first and the last; \
each is labelled with its time. Describe it as a timeline using those times."
    ));
    prepared.adaptations.push(format!(
        "video sent as {count} keyframes (where the screen changes, plus first and last): {} takes no video",
        provider.name
    ));
    Ok(())
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
