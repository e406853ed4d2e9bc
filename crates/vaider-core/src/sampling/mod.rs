//! Change-aware sampling: what a model that takes video (Gemini) is sent of a recording.
//! Gemini samples a whole video at one frame a second, about 258 tokens a frame, and a GUI
//! test recording is mostly still. Vaider already finds where the screen changes (the
//! keyframe detector); this module turns that into the cheapest request that loses no change
//! ([`plan`]), and into what the result says about it ([`SamplingReport`]).
//!
//! The setting: `video_sampling = "auto" | "full" | "keyframes"` (config, `VAIDER_VIDEO_SAMPLING`,
//! or `sampling` per call). `full` is Gemini's own sampling, for motion that matters
//! (animations, video players).

pub mod plan;

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use plan::{Clip, ClipKind, Plan, Rates, Used, VideoFacts, GEMINI_RATES};

use crate::error::Result;
use crate::keyframes::{self, KeyframeOptions};

/// How a video is sampled for a model that takes video.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VideoSampling {
    /// The moments where the screen changes, when that is cheaper; else the whole video.
    #[default]
    Auto,
    /// The whole video at the model's own sampling (Gemini: one frame a second).
    Full,
    /// Timestamped still frames where the screen changes, as for a model without video.
    Keyframes,
}

impl VideoSampling {
    pub const NAMES: &'static str = "auto, full or keyframes";

    pub fn parse(text: &str) -> Option<VideoSampling> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(VideoSampling::Auto),
            "full" => Some(VideoSampling::Full),
            "keyframes" => Some(VideoSampling::Keyframes),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VideoSampling::Auto => "auto",
            VideoSampling::Full => "full",
            VideoSampling::Keyframes => "keyframes",
        }
    }
}

/// Finds the changes and reads the length and sound track of a video, for [`plan::plan`],
/// in one ffmpeg pass.
pub async fn study(video: &Path) -> Result<VideoFacts> {
    let timeline = keyframes::timeline(video, &KeyframeOptions::default()).await?;
    Ok(VideoFacts {
        // A WebM written live has no duration in its header: the samples decoded tell it.
        duration: timeline.duration.unwrap_or(timeline.sampled_seconds),
        has_audio: timeline.has_audio,
        timeline,
    })
}

/// What a result says about how its video was sampled: small, numbers and a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SamplingReport {
    /// The setting in force: auto, full or keyframes.
    pub requested: VideoSampling,
    /// How the video went: full (the whole video), clips (around the changes) or keyframes.
    pub used: Used,
    /// Seconds into the video of each frame sent; empty when the whole video went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moments: Vec<f64>,
    /// "low" when the frames went at MEDIA_RESOLUTION_LOW, else "default".
    pub media_resolution: String,
    /// Input tokens Gemini's default sampling (the whole video, one frame a second) would
    /// have used for this call, at its documented rates. Compare with usage.inputTokens.
    pub default_sampling_input_tokens: u64,
    /// Why the video went this way.
    pub reason: String,
}

impl SamplingReport {
    /// The report of a plan, given the input tokens the call really used.
    pub fn of(requested: VideoSampling, plan: &Plan, input_tokens: u64) -> SamplingReport {
        SamplingReport {
            requested,
            used: plan.used,
            moments: plan.moments.clone(),
            media_resolution: if plan.low_resolution {
                "low"
            } else {
                "default"
            }
            .into(),
            // What was sent is replaced by what the default would have sent; the prompt's
            // text stays the same.
            default_sampling_input_tokens: input_tokens.saturating_sub(plan.media_tokens)
                + plan.default_media_tokens,
            reason: plan.reason.clone(),
        }
    }

    /// The whole video, as asked or because the plan could not be made.
    pub fn whole(requested: VideoSampling, input_tokens: u64, reason: String) -> SamplingReport {
        SamplingReport {
            requested,
            used: Used::Full,
            moments: Vec::new(),
            media_resolution: "default".into(),
            default_sampling_input_tokens: input_tokens,
            reason,
        }
    }
}

impl SamplingReport {
    /// One line for people: how the video went and what the default would have cost.
    pub fn summary(&self, input_tokens: u64) -> String {
        let sent = match self.used {
            Used::Full => "the whole video".to_string(),
            Used::Clips => format!("{} frames in clips around the changes", self.moments.len()),
            Used::Keyframes => format!("{} keyframes", self.moments.len()),
        };
        let mut line = format!(
            "video sampling {}: {sent}; {input_tokens} input tokens",
            self.requested.as_str()
        );
        if self.default_sampling_input_tokens > input_tokens {
            line.push_str(&format!(
                " where Gemini's default sampling would use {} ({})",
                self.default_sampling_input_tokens,
                fewer(self.default_sampling_input_tokens, input_tokens)
            ));
        }
        line
    }
}

/// "6.1x fewer": how many times fewer tokens `used` is than `default`.
pub fn fewer(default: u64, used: u64) -> String {
    format!("{:.1}x fewer", default as f64 / used.max(1) as f64)
}

/// The sentence the model reads before the clips: which moments it sees, and that the screen
/// did not change between them.
pub fn clips_note(clips: &[Clip]) -> String {
    let mut lines = vec![format!(
        "The recording is sent as {} parts of the same video, in order. The screen was watched \
         for changes: each still stretch is shown by one frame, taken when it began, and the \
         screen did not change until the next part begins; changes in quick succession are shown \
         as short clips. Use the video's own times.",
        clips.len()
    )];
    for clip in clips {
        let (from, to) = (
            keyframes::timestamp(clip.start),
            keyframes::timestamp(clip.end),
        );
        lines.push(match clip.kind {
            ClipKind::Still => format!("- {from}–{to}: one frame; unchanged until {to}."),
            ClipKind::Motion => format!(
                "- {from}–{to}: {} frames of changes; the last one stays until {to}.",
                clip.frames()
            ),
        });
    }
    lines.join("\n")
}

/// What goes to the model in place of the whole video: worked out while the video uploads,
/// so that the scan adds nothing before the upload starts.
#[derive(Debug, Default)]
pub struct Sending {
    /// None when no plan was made (the scan failed): the whole video goes.
    pub plan: Option<Plan>,
    pub reason: String,
    /// Told to the model just before the clips or frames.
    pub note: Option<String>,
    /// The clips to send, when the plan chose clips.
    pub clips: Option<crate::provider::VideoClips>,
    /// Timestamped frames (label and image parts), when the plan chose keyframes.
    pub images: Vec<crate::provider::MediaPart>,
    pub frames_sent: Option<u64>,
    pub adaptations: Vec<String>,
}

impl Sending {
    /// The whole video, for a reason.
    pub fn whole(reason: String) -> Sending {
        Sending {
            adaptations: vec![reason.clone()],
            reason,
            ..Sending::default()
        }
    }
}

/// A video's [`Sending`], being worked out on its own task. Clones share the one answer; when
/// the last clone is dropped (the call ended), the work stops and ffmpeg with it.
#[derive(Clone)]
pub struct PlannedVideo {
    answer: futures_util::future::Shared<futures_util::future::BoxFuture<'static, Arc<Sending>>>,
    /// Whether the provider sent what the plan chose (it gives up on a scan slower than the
    /// time left allows).
    used: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for PlannedVideo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlannedVideo")
    }
}

impl PlannedVideo {
    /// Starts the work now, whether or not anyone awaits it yet.
    pub fn start(
        work: impl std::future::Future<Output = Sending> + Send + 'static,
    ) -> PlannedVideo {
        use futures_util::FutureExt;
        let task = AbortOnDrop(tokio::spawn(work));
        let answer = async move {
            let mut task = task;
            match (&mut task.0).await {
                Ok(sending) => Arc::new(sending),
                Err(e) => Arc::new(Sending::whole(format!(
                    "the scan for screen changes stopped ({e}), so the whole video was sent"
                ))),
            }
        };
        PlannedVideo {
            answer: answer.boxed().shared(),
            used: Default::default(),
        }
    }

    /// The answer, if the work is done by `by`; None means the whole video goes instead.
    pub async fn resolve_by(&self, by: std::time::Instant) -> Option<Arc<Sending>> {
        let sending = tokio::time::timeout_at(by.into(), self.answer.clone())
            .await
            .ok()?;
        self.used.store(true, std::sync::atomic::Ordering::SeqCst);
        Some(sending)
    }

    /// What the provider sent, if it used the plan (it has answered by then).
    pub fn sent(&self) -> Option<Arc<Sending>> {
        use futures_util::FutureExt;
        if !self.used.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        self.answer.clone().now_or_never()
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<Sending>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
