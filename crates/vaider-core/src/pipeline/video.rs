//! A video for the prepare stage. To a model that takes clips of a video (Gemini), `auto`
//! starts the scan for screen changes beside the upload and sends what the plan chooses once
//! both are done, so the scan adds nothing before the upload starts; `keyframes` sends still
//! frames; `full` the whole video. A model without video gets keyframes, and so does an
//! animated GIF, APNG or WebP whatever the model (`add_animation`).

use std::path::{Path, PathBuf};

use super::prepare::{Prepared, Sampled};
use crate::error::{Result, VaiderError};
use crate::media::MediaInfo;
use crate::provider::{Capabilities, MediaPart, VideoClips};
use crate::sampling::{
    self, PlannedVideo, Scanning, Sending, Stretch, Studied, Used, VideoSampling,
};
use crate::tokens::TokenRules;
use crate::{image_fit, keyframes};

/// A video file and what the check found of it.
pub(super) struct Video<'a> {
    pub path: &'a Path,
    pub info: &'a MediaInfo,
}

impl Video<'_> {
    fn part(&self, plan: Option<PlannedVideo>) -> MediaPart {
        MediaPart::File {
            path: self.path.to_path_buf(),
            media: self.info.clone(),
            plan,
        }
    }
}

/// A video for a model that takes video, sent as the sampling setting says.
pub(super) async fn add_video(
    prepared: &mut Prepared,
    video: Video<'_>,
    caps: &Capabilities,
    work_dir: &Path,
    requested: VideoSampling,
    rules: TokenRules,
) -> Result<()> {
    match requested {
        VideoSampling::Keyframes => {
            add_asked_keyframes(prepared, video.path, caps, work_dir, rules).await
        }
        VideoSampling::Auto if caps.video_clips => {
            let (path, caps, work_dir) = (
                video.path.to_path_buf(),
                caps.clone(),
                work_dir.to_path_buf(),
            );
            let planned =
                PlannedVideo::start(|scanning| plan_video(path, caps, work_dir, rules, scanning));
            prepared.parts.push(video.part(Some(planned.clone())));
            prepared.planned = Some((requested, planned));
            Ok(())
        }
        // A provider that takes no clips (a vLLM server) takes all of it.
        _ => {
            prepared.parts.push(video.part(None));
            if caps.video_clips {
                prepared.sampling = Some(Sampled {
                    requested,
                    plan: None,
                    reason: "full sampling was asked for".into(),
                });
            }
            Ok(())
        }
    }
}

/// A stretch of the video watched closely (a failed test's last steps), whatever the sampling
/// setting: to Gemini one clip of the uploaded file at the stretch's rate, the plan ready at
/// once (there is nothing to scan for). A model that takes video but no clips (a vLLM server)
/// gets the whole video, and the prompt still names the stretch.
pub(super) fn add_stretch(
    prepared: &mut Prepared,
    video: Video<'_>,
    caps: &Capabilities,
    (requested, stretch): (VideoSampling, Stretch),
    rules: TokenRules,
) {
    if !caps.video_clips {
        prepared.parts.push(video.part(None));
        prepared.adaptations.push(format!(
            "the provider takes no clips: the whole video was sent, for the stretch {:.1}-{:.1} s",
            stretch.start, stretch.end
        ));
        return;
    }
    let path = video.path.to_path_buf();
    let planned = PlannedVideo::start(move |_| async move {
        let duration = keyframes::duration_seconds(&path).await;
        let stretch = stretch.within(duration);
        // Its frame size is not read: the stretch is there to be read closely, so it goes at
        // the resolution that keeps text readable.
        let plan = stretch.plan(rules, READ_CLOSELY, duration.unwrap_or(stretch.end));
        Sending {
            reason: plan.reason.clone(),
            note: Some(stretch.note()),
            clips: Some(VideoClips {
                clips: plan.clips.clone(),
                setting: plan.setting,
            }),
            frames_sent: Some(plan.moments.len() as u64),
            adaptations: vec![plan.reason.clone()],
            plan: Some(plan),
            images: Vec::new(),
        }
    });
    prepared.parts.push(video.part(Some(planned.clone())));
    // The report says which setting was in force and that the stretch overrode it.
    prepared.planned = Some((requested, planned));
}

/// A frame side past what Gemini shrinks to its lowest resolution without loss.
const READ_CLOSELY: u32 = 1280;

/// Keyframes asked for by the setting, with what the default sampling would have cost.
async fn add_asked_keyframes(
    prepared: &mut Prepared,
    path: &Path,
    caps: &Capabilities,
    work_dir: &Path,
    rules: TokenRules,
) -> Result<()> {
    let times = add_keyframes(prepared, path, caps, work_dir, "keyframes were asked for").await?;
    if caps.video_clips {
        if let Ok(facts) = sampling::study(path).await {
            let mut plan = sampling::plan::plan(VideoSampling::Keyframes, &facts, rules);
            plan.media_tokens = sampling::plan::keyframe_tokens(times.len(), rules);
            plan.moments = times;
            prepared.sampling = Some(Sampled {
                requested: VideoSampling::Keyframes,
                reason: plan.reason.clone(),
                plan: Some(plan),
            });
        }
    }
    Ok(())
}

/// The `auto` plan, on its own task while the video uploads, telling `scanning` what it is
/// expected to save as the scan goes. When the changes cannot be read, the whole video goes as
/// before rather than fail.
async fn plan_video(
    path: PathBuf,
    caps: Capabilities,
    work_dir: PathBuf,
    rules: TokenRules,
    scanning: Scanning,
) -> Sending {
    let facts = match sampling::study_watched(&path, rules, &scanning).await {
        Ok(Studied::Facts(facts)) => facts,
        Ok(Studied::Whole { reason, .. }) => return Sending::whole(reason),
        Err(e) => {
            return Sending::whole(format!(
                "the screen's changes could not be read, so the whole video was sent: {e}"
            ))
        }
    };
    let mut plan = sampling::plan::plan(VideoSampling::Auto, &facts, rules);
    let mut sending = Sending {
        reason: plan.reason.clone(),
        ..Sending::default()
    };
    match plan.used {
        Used::Full => {}
        Used::Clips => {
            let frames: u64 = plan.clips.iter().map(|c| c.frames()).sum();
            sending.adaptations.push(format!(
                "video sent as {} clips around its screen changes: {frames} frames where one a second would be {}",
                plan.clips.len(),
                facts.duration.ceil().max(1.0),
            ));
            sending.note = Some(sampling::clips_note(&plan.clips, &facts.timeline.ongoing));
            sending.frames_sent = Some(frames);
            sending.clips = Some(VideoClips {
                clips: plan.clips.clone(),
                setting: plan.setting,
            });
        }
        Used::Keyframes => {
            let mut frames = Prepared::default();
            let why = "cheaper than clips or the whole video";
            match add_keyframes(&mut frames, &path, &caps, &work_dir, why).await {
                Ok(times) => {
                    plan.media_tokens = sampling::plan::keyframe_tokens(times.len(), rules);
                    plan.moments = times;
                    sending.note = frames.note;
                    sending.frames_sent = frames.frames_sent;
                    sending.adaptations = frames.adaptations;
                    sending.images = frames.parts;
                }
                Err(e) => {
                    return Sending::whole(format!(
                        "the keyframes could not be taken, so the whole video was sent: {e}"
                    ))
                }
            }
        }
    }
    sending.plan = Some(plan);
    sending
}

/// An animated GIF, APNG or WebP for a video tool: the frames where the picture changes, plus
/// the first and the last, each labelled with its time on the animation's clock. No model
/// takes these files as video (Gemini's video formats hold none of them), so every provider
/// gets the frames, whatever the sampling setting.
pub(super) async fn add_animation(
    prepared: &mut Prepared,
    path: &Path,
    info: &MediaInfo,
    caps: &Capabilities,
    work_dir: &Path,
) -> Result<()> {
    let what = info
        .animation_text()
        .unwrap_or_else(|| format!("an animated {}", info.format));
    let count = push_keyframes(prepared, path, caps, work_dir).await?.len();
    prepared.note = Some(format!(
        "The recording ({what}) was sent as {count} still frames, taken where the picture changes plus the first and the last; \
each is labelled with its time on the animation's own clock (each frame's delay as a browser plays it). Describe it as a timeline using those times."
    ));
    prepared.adaptations.push(format!(
        "{what} sent as {count} frames (where the picture changes, plus first and last): a model takes an animation as frames"
    ));
    if let Some(animation) = info.animation {
        let watched = animation.frames_watched();
        if watched < animation.frames {
            prepared.adaptations.push(format!(
                "only its first {watched} of {} frames were watched (at most {} frames, and {} million pixels in all, are decoded)",
                animation.frames,
                crate::media::MAX_ANIMATION_FRAMES,
                crate::media::MAX_DECODED_PIXELS / 1_000_000
            ));
        }
    }
    Ok(())
}

/// A video as the frames where the screen changes, plus the first and the last, each
/// labelled with its time. Returns the frames' times.
pub(super) async fn add_keyframes(
    prepared: &mut Prepared,
    path: &Path,
    caps: &Capabilities,
    work_dir: &Path,
    why: &str,
) -> Result<Vec<f64>> {
    let times = push_keyframes(prepared, path, caps, work_dir).await?;
    let count = times.len();
    prepared.note = Some(format!(
        "The video was sent as {count} still frames, taken where the screen changes plus the first and the last; \
each is labelled with its time. Describe it as a timeline using those times."
    ));
    prepared.adaptations.push(format!(
        "video sent as {count} keyframes (where the screen changes, plus first and last): {why}"
    ));
    Ok(times)
}

/// The keyframes as labelled images among the parts; returns their times.
async fn push_keyframes(
    prepared: &mut Prepared,
    path: &Path,
    caps: &Capabilities,
    work_dir: &Path,
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
            keyframe: true,
        });
        times.push(frame.at_seconds);
    }
    prepared.frames_sent = Some(count as u64);
    Ok(times)
}
