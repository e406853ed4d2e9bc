//! Change-aware sampling: what a model that takes video (Gemini) is sent of a recording.
//! Gemini samples a whole video at one frame a second (258 tokens a frame on Gemini 2.x, 70
//! on Gemini 3: `tokens`), and a GUI test recording is mostly still. Vaider already finds where the screen changes (the
//! keyframe detector); this module turns that into the cheapest request that loses no change
//! ([`plan`]), and into what the result says about it ([`SamplingReport`]).
//!
//! The setting: `video_sampling = "auto" | "full" | "keyframes"` (config, `VAIDER_VIDEO_SAMPLING`,
//! or `sampling` per call). `full` is Gemini's own sampling, for motion that matters
//! (animations, video players).

mod outlook;
pub mod plan;
mod planned;
pub mod stretch;

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use outlook::Outlook;
pub use plan::{Clip, ClipKind, Plan, Used, VideoFacts};
pub use planned::{
    wait_after_upload, PlannedVideo, ScanProgress, Scanning, Sending, Wait, SECONDS_A_FRAME,
};
pub use stretch::Stretch;

use crate::tokens::TokenRules;
use vaider_base::error::Result;
use vaider_media::keyframes::{self, KeyframeOptions, Seen};

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

/// What a watched scan came to.
#[derive(Debug, Clone)]
pub enum Studied {
    /// The scan read the whole video.
    Facts(VideoFacts),
    /// It found, before the end, that the whole video goes whatever the rest holds, and
    /// stopped after `samples` samples.
    Whole { reason: String, samples: u64 },
}

/// [`study`], telling `scanning` what the plan is expected to save after each sample, and
/// stopping as soon as the whole video goes whatever the rest of it holds (a screen that never
/// stands still shows it long before the end).
pub async fn study_watched(
    video: &Path,
    rules: TokenRules,
    scanning: &Scanning,
) -> Result<Studied> {
    let mut first: Option<(Instant, f64)> = None;
    let mut whole: Option<(String, u64)> = None;
    let mut watcher = |seen: &Seen<'_>| {
        let outlook = Outlook::of(seen, rules);
        if outlook.whole_for_sure() {
            whole = Some((outlook::whole_reason(seen, &outlook), seen.samples));
            return ControlFlow::Break(());
        }
        let now = Instant::now();
        let (since, from) = *first.get_or_insert((now, seen.seconds()));
        let elapsed = now.saturating_duration_since(since).as_secs_f64();
        scanning.tell(ScanProgress {
            seen: seen.seconds(),
            samples: seen.samples,
            changes: seen
                .changes
                .iter()
                .filter(|c| c.lasting)
                .count()
                .saturating_sub(1) as u64,
            flickering: seen.flickering,
            expected_saving: outlook.expected_saving(),
            frame_tokens: rules.video_frame(crate::tokens::Resolution::Default),
            video_left: outlook.left(),
            pace: (elapsed > 0.0 && seen.seconds() > from)
                .then(|| (seen.seconds() - from) / elapsed),
            at: now,
        });
        ControlFlow::Continue(())
    };
    let options = KeyframeOptions::default();
    let timeline = keyframes::watched_timeline(video, &options, &mut watcher).await?;
    Ok(match (timeline, whole) {
        (Some(timeline), _) => Studied::Facts(VideoFacts {
            duration: timeline.duration.unwrap_or(timeline.sampled_seconds),
            has_audio: timeline.has_audio,
            timeline,
        }),
        (None, Some((reason, samples))) => Studied::Whole { reason, samples },
        (None, None) => Studied::Whole {
            reason: "the scan for screen changes stopped, so the whole video was sent".into(),
            samples: 0,
        },
    })
}

/// The most change times a result lists (a noisy recording can have hundreds).
pub const MAX_LISTED_CHANGES: usize = 60;

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
    /// How many screen changes the scan found (the first frame not counted); none when the
    /// video was not scanned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_found: Option<usize>,
    /// Seconds into the video of each change found, when there are at most
    /// `MAX_LISTED_CHANGES`; each one is at or just before a moment sent (or inside the whole
    /// video).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<f64>,
    /// The `mediaResolution` the frames went at: "default", "low", "medium" or "high"; "mixed"
    /// when some clips went at "high" (their changes brought text) and the rest at the default.
    pub media_resolution: String,
    /// Input tokens Gemini's default sampling (the whole video, one frame a second, at the
    /// default resolution) would have used for this call, at the documented rates of the
    /// model called. Compare with usage.inputTokens.
    pub default_sampling_input_tokens: u64,
    /// Why the video went this way.
    pub reason: String,
}

impl SamplingReport {
    /// The report of a plan, given the input tokens the call really used but for the note
    /// that told the model about the moments sent.
    pub fn of(requested: VideoSampling, plan: &Plan, input_tokens: u64) -> SamplingReport {
        SamplingReport {
            requested,
            used: plan.used,
            moments: plan.moments.clone(),
            changes_found: Some(plan.changes.len()),
            changes: if plan.changes.len() <= MAX_LISTED_CHANGES {
                plan.changes.clone()
            } else {
                Vec::new()
            },
            media_resolution: if plan.clips.iter().any(|c| c.setting != plan.setting) {
                "mixed"
            } else {
                match plan.setting {
                    crate::tokens::Setting::None => "default",
                    crate::tokens::Setting::Request(r) | crate::tokens::Setting::Part(r) => {
                        r.label()
                    }
                }
            }
            .into(),
            // What was sent is replaced by what the default would have sent; the rest of the
            // prompt stays the same.
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
            changes_found: None,
            changes: Vec::new(),
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
        let found = match self.changes_found {
            Some(1) => " (1 screen change found)".to_string(),
            Some(n) => format!(" ({n} screen changes found)"),
            None => String::new(),
        };
        let mut line = format!(
            "video sampling {}: {sent}{found}; {input_tokens} input tokens",
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

/// The sentence the model reads before the clips: which moments it sees, that the screen
/// did not change between them, and where a small spot kept changing meanwhile. Short on
/// purpose: on Gemini 3 a frame costs 70 tokens, so every 70 tokens of note cost a frame's
/// worth of the savings. Times are the video's own seconds, as the clips' offsets are.
pub fn clips_note(clips: &[Clip], ongoing: &[keyframes::Ongoing]) -> String {
    let shown: Vec<String> = clips
        .iter()
        .map(|clip| match clip.kind {
            ClipKind::Still => seconds(clip.start),
            ClipKind::Motion => {
                let last = clip.frame_times().last().unwrap_or(clip.start);
                format!(
                    "{}–{} ({} frames)",
                    seconds(clip.start),
                    seconds(last),
                    clip.frames()
                )
            }
        })
        .collect();
    let end = clips.last().map_or(0.0, |c| c.end);
    let counted = if clips.iter().any(|c| c.kind == ClipKind::Motion) {
        " unless a count is given"
    } else {
        ""
    };
    let mut note = format!(
        "The video is sent as {} clips, at its own times in seconds: {}; end {}. Each is one \
         frame{counted}; the screen did not change until the next.",
        clips.len(),
        shown.join(", "),
        seconds(end)
    );
    for spot in ongoing {
        let (from, to) = (seconds(spot.start), seconds(spot.end));
        note.push_str(&if spot.blinking {
            format!("\nA caret-like spot blinked {from}–{to} (not each blink shown).")
        } else {
            format!("\nA spinner-like spot kept changing {from}–{to} (shown at its start and end).")
        });
    }
    note
}

/// "17.75", "4": seconds to the millisecond, without trailing zeros.
fn seconds(at: f64) -> String {
    format!("{}", (at * 1000.0).round() / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Setting;

    fn clip(start: f64, end: f64, fps: f64, kind: ClipKind) -> Clip {
        Clip {
            start,
            end,
            fps,
            kind,
            setting: Setting::None,
        }
    }

    /// A video made by ffmpeg from a lavfi source, in H.264.
    fn make_video(dir: &Path, name: &str, source: &str, filter: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        let status = std::process::Command::new("ffmpeg")
            .args([
                "-v", "error", "-y", "-f", "lavfi", "-i", source, "-vf", filter,
            ])
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
            ])
            .arg(&path)
            .status()
            .expect("ffmpeg (scripts/test.sh installs it)");
        assert!(status.success());
        path
    }

    /// A screen that never stands still (ffmpeg's moving test pattern, 30 s, 120 samples) is
    /// known to go whole from what the scan read before the end, and the scan stops there; a
    /// still screen with two changes is scanned to the end.
    #[tokio::test]
    async fn a_never_still_recording_goes_whole_before_the_scan_ends() {
        let dir = tempfile::tempdir().unwrap();
        let rules = TokenRules::for_model("gemini-2.5-flash");
        let moving = make_video(
            dir.path(),
            "moving.mp4",
            "testsrc2=s=320x180:r=25:d=30",
            "hue=H=2*PI*t/3",
        );
        let (scanning, told) = Scanning::unwatched();
        let studied = study_watched(&moving, rules, &scanning).await.unwrap();
        let Studied::Whole { reason, samples } = studied else {
            panic!("scanned to the end: {studied:?}");
        };
        // Motion at two frames a second costs more than the whole at one from half way on.
        eprintln!("{samples} samples: {reason}");
        assert!((40..=70).contains(&samples), "{samples} samples: {reason}");
        assert!(
            reason.contains("(of 30 s)") && reason.contains("without scanning the rest"),
            "{reason}"
        );
        let last = told.borrow().expect("progress told before the end");
        assert!(
            last.seen < 20.0 && last.video_left.unwrap() > 10.0,
            "{last:?}"
        );

        let still = make_video(
            dir.path(),
            "still.mp4",
            "color=c=white:s=320x180:r=25:d=30",
            "drawbox=enable='gte(t,5)':x=10:y=10:w=90:h=40:color=black:t=fill,\
             drawbox=enable='gte(t,20)':x=120:y=80:w=60:h=60:color=red:t=fill",
        );
        let studied = study_watched(&still, rules, &scanning).await.unwrap();
        let Studied::Facts(facts) = studied else {
            panic!("{studied:?}");
        };
        assert_eq!(facts.timeline.changes, vec![0.0, 5.0, 20.0]);
        assert_eq!(facts.timeline.samples, 120);
        let last = told.borrow().expect("progress told");
        assert!(last.expected_saving.unwrap() > 25 * 258, "{last:?}");
    }

    #[test]
    fn the_note_names_every_moment_sent_and_each_spot_in_few_tokens() {
        let clips = [
            clip(0.0, 4.0, 0.999 / 4.0, ClipKind::Still),
            clip(4.0, 5.0, 0.999, ClipKind::Still),
            clip(5.0, 5.5625, 8.0, ClipKind::Motion),
            clip(10.0, 17.75, 0.999 / 7.75, ClipKind::Still),
            clip(17.75, 60.0, 0.999 / 42.25, ClipKind::Still),
        ];
        let caret = keyframes::Ongoing {
            start: 0.5,
            end: 59.5,
            blinking: true,
        };
        let note = clips_note(&clips, &[caret]);
        assert!(
            note.starts_with("The video is sent as 5 clips, at its own times in seconds: 0, 4, 5–5.5 (5 frames), 10, 17.75; end 60. Each is one frame unless a count is given;"),
            "{note}"
        );
        assert!(note.contains("did not change until the next"), "{note}");
        // Without motion there is no count to speak of.
        let stills = clips_note(&clips[..2], &[]);
        assert!(stills.contains("Each is one frame;"), "{stills}");
        assert!(note.contains("blinked 0.5–59.5"), "{note}");
        // About 60 tokens (Gemini counts about 4 characters a token): less than a frame.
        assert!(note.chars().count() < 280, "{} chars: {note}", note.len());
    }
}
