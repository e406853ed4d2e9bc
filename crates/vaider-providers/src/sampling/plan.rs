//! The plan: which moments of a recording a video model is sent, worked out from the changes
//! the detector found and priced at the documented rates of the model called (`tokens`), so
//! that the cheapest way that loses no change is chosen. Pure arithmetic: no file, no
//! process, no clock.
//!
//! A GUI recording is mostly still. Each still stretch goes as one frame (a clip of the
//! uploaded file whose `fps` gives exactly one frame); a burst of changes (a transition, a
//! toast, typing) goes as a clip at twice the detector's rate, so a state shorter than one
//! detector interval next to a change is still seen; long motion (an animation) at
//! `LONG_MOTION_FPS`. When that needs more clips than Gemini takes in one request, the
//! changes go as timestamped keyframe images instead; when neither is cheaper than Gemini's
//! own one frame a second (the whole video is motion), the whole video goes as before.

use serde::{Deserialize, Serialize};

use super::VideoSampling;
use crate::tokens::{self, Setting, TokenRules};
use vaider_media::keyframes::Timeline;

/// Gemini takes at most 10 videos in one request; each clip is one `fileData` part.
pub const MAX_VIDEO_PARTS: usize = 10;
/// Changes at most this many detector intervals apart are one motion, sent as one clip.
pub(super) const BURST_GAP_INTERVALS: f64 = 2.0;
/// Motion up to this long is a burst, sent at twice the detector's rate; longer motion (an
/// animation, a video in the page) at `LONG_MOTION_FPS`.
const SHORT_MOTION_SECONDS: f64 = 2.0;
pub(super) const LONG_MOTION_FPS: f64 = 2.0;
/// The most keyframe images sent in place of clips (the keyframes' own limit).
pub const MAX_KEYFRAMES: usize = 30;
/// Gemini's `fps` range is (0, 24].
const MAX_FPS: f64 = 24.0;
/// The detector is unsure of a recording when more than this share of its samples flicker
/// (noise everywhere) or are changes (never still): it cannot single out moments, so the
/// whole video goes at Gemini's uniform sampling.
pub(super) const UNSURE_SHARE: f64 = 0.5;

/// How the video was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Used {
    /// The whole video at Gemini's default sampling.
    Full,
    /// Clips of the uploaded video around the changes, one frame for each still stretch.
    Clips,
    /// Timestamped still images of the changes.
    Keyframes,
}

impl Used {
    pub fn as_str(self) -> &'static str {
        match self {
            Used::Full => "full",
            Used::Clips => "clips",
            Used::Keyframes => "keyframes",
        }
    }
}

/// What a clip stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClipKind {
    /// A screen that does not change from `start` to `end`: one frame.
    Still,
    /// Changes in quick succession (or an animation), at a higher rate.
    Motion,
}

/// One `fileData` part: the uploaded video from `start` to `end` seconds at `fps`.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    pub start: f64,
    pub end: f64,
    pub fps: f64,
    pub kind: ClipKind,
    /// The `mediaResolution` its frames go at: sharp where its changes brought fine detail
    /// (text) on Gemini 3, the default elsewhere (see `TokenRules::clip_setting`).
    pub setting: Setting,
}

impl Clip {
    /// The frames Gemini samples from the clip: one every 1/fps from the start, at least one.
    pub fn frames(&self) -> u64 {
        (((self.end - self.start) * self.fps).ceil() as u64).max(1)
    }

    pub fn frame_times(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.frames()).map(|k| self.start + k as f64 / self.fps)
    }
}

/// The video as the planner sees it.
#[derive(Debug, Clone)]
pub struct VideoFacts {
    /// Seconds, as Gemini will count them.
    pub duration: f64,
    pub has_audio: bool,
    pub timeline: Timeline,
}

/// What will be sent, with its expected cost.
#[derive(Debug, Clone)]
pub struct Plan {
    pub used: Used,
    /// The clips, when `used` is `Clips`.
    pub clips: Vec<Clip>,
    /// Seconds of each frame sent (every frame of the clips, or each keyframe); empty for
    /// `Full`, which samples every second.
    pub moments: Vec<f64>,
    /// The `mediaResolution` the keyframes go at, or the sharpest any clip goes at (each clip
    /// has its own, chosen so that its text stays readable; see `TokenRules::clip_setting`).
    pub setting: Setting,
    /// Media tokens of what is sent, at the documented rates of the model called.
    pub media_tokens: u64,
    /// Media tokens of the whole video at Gemini's default sampling and resolution.
    pub default_media_tokens: u64,
    /// Seconds into the video of each screen change found (the first frame not counted).
    pub changes: Vec<f64>,
    /// Why this way was chosen, in a sentence.
    pub reason: String,
    /// The video's length and sound, for the estimate of the request.
    pub duration: f64,
    pub has_audio: bool,
}

/// Chooses how to send the video, at the rates of the model called.
pub fn plan(mode: VideoSampling, video: &VideoFacts, rules: TokenRules) -> Plan {
    let base = whole_video(video, rules);
    let full = |reason: String| Plan {
        reason,
        ..base.clone()
    };
    match mode {
        VideoSampling::Full => return full("full sampling was asked for".into()),
        VideoSampling::Keyframes => {
            return Plan {
                reason: "keyframes were asked for".into(),
                ..keyframes(&base, video, rules)
            };
        }
        VideoSampling::Auto => {}
    }
    if let Some(why) = unsure(&video.timeline) {
        return full(why);
    }
    if let Some(clips) = clips_if_cheaper(&base, video, rules) {
        return clips;
    }
    let changes = video.timeline.changes.len().saturating_sub(1);
    let images = keyframes(&base, video, rules);
    if video.timeline.changes.len() < MAX_KEYFRAMES
        && images.media_tokens < base.default_media_tokens
    {
        return Plan {
            reason: format!(
                "{changes} screen changes need more than {MAX_VIDEO_PARTS} clips: sent as keyframes"
            ),
            ..images
        };
    }
    let seconds = video.duration;
    // Said as it is: "mostly motion" read wrong for 29 changes in 5 minutes.
    full(match video.timeline.changes.len() >= MAX_KEYFRAMES {
        true => format!(
            "the screen changes {changes} times in {seconds:.0} s: more moments than \
             {MAX_VIDEO_PARTS} clips or {MAX_KEYFRAMES} keyframes hold, so the whole video is sent"
        ),
        false => format!(
            "the screen changes {changes} times in {seconds:.0} s: as clips or keyframes it would \
             cost more than the whole video at one frame a second, so the whole video is sent"
        ),
    })
}

/// The whole video at Gemini's default sampling: what every other plan is measured against.
fn whole_video(video: &VideoFacts, rules: TokenRules) -> Plan {
    let default_tokens = full_tokens(video, rules);
    Plan {
        used: Used::Full,
        clips: Vec::new(),
        moments: Vec::new(),
        setting: Setting::None,
        media_tokens: default_tokens,
        default_media_tokens: default_tokens,
        changes: video.timeline.changes.iter().skip(1).copied().collect(),
        reason: String::new(),
        duration: video.duration,
        has_audio: video.has_audio,
    }
}

/// The video's keyframes sent as images in its place.
fn keyframes(base: &Plan, video: &VideoFacts, rules: TokenRules) -> Plan {
    let moments = keyframe_moments(&video.timeline);
    Plan {
        used: Used::Keyframes,
        media_tokens: keyframe_tokens(moments.len(), rules),
        moments,
        setting: rules.keyframe_setting(),
        ..base.clone()
    }
}

/// Each still stretch as one frame and the changes as clips, when they fit in Gemini's parts
/// and cost fewer tokens than the whole video.
fn clips_if_cheaper(base: &Plan, video: &VideoFacts, rules: TokenRules) -> Option<Plan> {
    let clips = clips(video, rules);
    let setting = clips
        .iter()
        .map(|c| c.setting)
        .max_by_key(|s| rules.video_frame(s.resolution(rules)))
        .unwrap_or(Setting::None);
    let clip_tokens: u64 = clips.iter().map(|c| clip_tokens(c, video, rules)).sum();
    if clips.len() > MAX_VIDEO_PARTS || clip_tokens >= base.default_media_tokens {
        return None;
    }
    let changes = video.timeline.changes.len().saturating_sub(1);
    Some(Plan {
        used: Used::Clips,
        moments: clips
            .iter()
            .flat_map(Clip::frame_times)
            .map(round_ms)
            .collect(),
        clips,
        setting,
        media_tokens: clip_tokens,
        reason: format!(
            "{changes} screen changes: each still stretch as one frame and the changes as clips"
        ),
        ..base.clone()
    })
}

/// Why the detector cannot be trusted with this recording, if it cannot: noise everywhere
/// (small changes cannot be told from it) or a screen that is never still.
fn unsure(timeline: &Timeline) -> Option<String> {
    let samples = timeline.samples.max(1);
    let most = |count: u64| count as f64 > UNSURE_SHARE * samples as f64;
    let uniform = "so the whole video is sent at Gemini's uniform sampling (one frame a second)";
    if most(timeline.flickering_samples) {
        return Some(format!(
            "the detector is unsure: much of the screen flickers in {} of {samples} samples \
             (noise, or motion everywhere), where a small change cannot be told from noise; {uniform}",
            timeline.flickering_samples
        ));
    }
    let changes = timeline.changes.len().saturating_sub(1) as u64;
    if most(changes) {
        return Some(format!(
            "the detector is unsure: the screen is never still (it changes in {changes} of \
             {samples} samples, {:.2} s apart); {uniform}",
            timeline.interval
        ));
    }
    None
}

/// The whole video at one frame a second and the model's default resolution, with its audio.
pub fn full_tokens(video: &VideoFacts, rules: TokenRules) -> u64 {
    whole_tokens(video.duration, video.has_audio, rules)
}

/// [`full_tokens`] of a video `seconds` long.
pub fn whole_tokens(seconds: f64, has_audio: bool, rules: TokenRules) -> u64 {
    let frames = ((seconds * tokens::DEFAULT_FPS).ceil() as u64).max(1);
    frames * rules.video_frame(tokens::Resolution::Default) + audio_tokens(seconds, has_audio)
}

/// Tokens of the clips that would cover the video, however many they are.
pub(super) fn clips_tokens(video: &VideoFacts, rules: TokenRules) -> u64 {
    let clips = clips(video, rules);
    clips.iter().map(|c| clip_tokens(c, video, rules)).sum()
}

/// `count` keyframe images at the resolution keyframes go at.
pub fn keyframe_tokens(count: usize, rules: TokenRules) -> u64 {
    count as u64 * rules.image(rules.keyframe_setting().resolution(rules))
}

fn clip_tokens(clip: &Clip, video: &VideoFacts, rules: TokenRules) -> u64 {
    clip.frames() * rules.video_frame(clip.setting.resolution(rules))
        + audio_tokens(clip.end - clip.start, video.has_audio)
}

fn audio_tokens(seconds: f64, has_audio: bool) -> u64 {
    if has_audio {
        seconds.ceil() as u64 * tokens::AUDIO_PER_SECOND
    } else {
        0
    }
}

/// The keyframes: each change, and the last screen.
fn keyframe_moments(timeline: &Timeline) -> Vec<f64> {
    let mut moments = timeline.changes.clone();
    let last = (timeline.sampled_seconds - timeline.interval).max(0.0);
    if moments.last().is_none_or(|t| last - t > 1e-6) {
        moments.push(last);
    }
    moments.into_iter().map(round_ms).collect()
}

/// The clips covering the video: a still stretch from each lone change to the next, a motion
/// clip over each run of close changes, each at the resolution its changes need.
fn clips(video: &VideoFacts, rules: TokenRules) -> Vec<Clip> {
    let timeline = &video.timeline;
    let end = video.duration.max(timeline.interval);
    let longest_side = timeline.width.max(timeline.height);
    let groups = groups(timeline);
    let mut clips = Vec::with_capacity(groups.len());
    for (i, group) in groups.iter().enumerate() {
        let next = groups.get(i + 1).map_or(end, |g| g.first).min(end);
        let clip = if group.last > group.first {
            motion(group.first, group.last, next, timeline.interval)
        } else {
            still(group.first, next)
        };
        if let Some(mut clip) = clip {
            clip.setting = rules.clip_setting(longest_side, group.detail);
            clips.push(clip);
        }
    }
    clips
}

/// A run of changes, each no more than `BURST_GAP_INTERVALS` apart.
struct Group {
    first: f64,
    last: f64,
    /// Any of its changes brought fine detail (text).
    detail: bool,
}

fn groups(timeline: &Timeline) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, &at) in timeline.changes.iter().enumerate() {
        // Unknown counts as detail: sharp is never wrong, only dearer.
        let detail = timeline.detail.get(i).copied().unwrap_or(true);
        match groups.last_mut() {
            Some(g) if at - g.last <= BURST_GAP_INTERVALS * timeline.interval + 1e-6 => {
                g.last = at;
                g.detail |= detail;
            }
            _ => groups.push(Group {
                first: at,
                last: at,
                detail,
            }),
        }
    }
    groups
}

/// One frame at `start` for a screen that stays until `end`.
fn still(start: f64, end: f64) -> Option<Clip> {
    let (start, end) = (round_ms(start), round_ms(end));
    (end > start).then(|| Clip {
        start,
        end,
        // Just under one frame over the clip: exactly one is sampled, at its start.
        fps: (0.999 / (end - start)).min(MAX_FPS),
        kind: ClipKind::Still,
        setting: Setting::None,
    })
}

/// Frames from the first change to the last, evenly spaced so that both are among them, at
/// twice the detector's rate for a burst, `LONG_MOTION_FPS` for long motion.
fn motion(first: f64, last: f64, next: f64, interval: f64) -> Option<Clip> {
    let span = last - first;
    let rate = if span <= SHORT_MOTION_SECONDS {
        2.0 / interval
    } else {
        LONG_MOTION_FPS
    };
    let steps = (span * rate - 1e-9).ceil().max(1.0);
    let fps = (steps / span).min(MAX_FPS);
    // Half a step past the last change, so that it is sampled and nothing after it.
    let end = (last + 0.5 / fps).min(next);
    let (start, end) = (round_ms(first), round_ms(end));
    (end > start).then_some(Clip {
        start,
        end,
        fps,
        kind: ClipKind::Motion,
        setting: Setting::None,
    })
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Family, Resolution};

    const G2: TokenRules = TokenRules {
        family: Family::Gemini2,
    };
    const G3: TokenRules = TokenRules {
        family: Family::Gemini3,
    };

    fn video(changes: &[f64], duration: f64, has_audio: bool) -> VideoFacts {
        VideoFacts {
            duration,
            has_audio,
            timeline: Timeline {
                changes: changes.to_vec(),
                detail: vec![true; changes.len()],
                ongoing: Vec::new(),
                interval: 0.25,
                samples: (duration * 4.0) as u64,
                flickering_samples: 0,
                sampled_seconds: duration,
                duration: Some(duration),
                has_audio,
                width: 800,
                height: 450,
            },
        }
    }

    /// Every change has a frame sent at it or within one detector interval after it.
    fn assert_covered(plan: &Plan, changes: &[f64]) {
        for &at in changes {
            assert!(
                plan.moments
                    .iter()
                    .any(|m| *m >= at - 1e-3 && *m <= at + 0.25 + 1e-3),
                "no frame at or just after {at}: {:?}",
                plan.moments
            );
        }
    }

    #[test]
    fn a_mostly_still_minute_is_one_frame_a_change() {
        let changes = [0.0, 4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5];
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        assert_eq!(plan.used, Used::Clips);
        assert_eq!(plan.clips.len(), 9);
        assert!(plan.clips.iter().all(|c| c.frames() == 1));
        assert_covered(&plan, &changes);
        assert_eq!(plan.default_media_tokens, 60 * 258);
        assert_eq!(plan.media_tokens, 9 * 258);
        // The clips cover the whole minute, end to end.
        assert_eq!(plan.clips[0].start, 0.0);
        assert_eq!(plan.clips.last().unwrap().end, 60.0);
        for pair in plan.clips.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
    }

    #[test]
    fn a_burst_is_a_clip_at_twice_the_detector_rate_with_its_last_change() {
        let changes = [0.0, 5.0, 5.25, 5.5, 20.0];
        let plan = plan(VideoSampling::Auto, &video(&changes, 30.0, false), G2);
        assert_eq!(plan.used, Used::Clips);
        let burst = &plan.clips[1];
        assert_eq!(burst.kind, ClipKind::Motion);
        assert_eq!(burst.fps, 8.0);
        let times: Vec<f64> = burst.frame_times().collect();
        assert_eq!(times, vec![5.0, 5.125, 5.25, 5.375, 5.5]);
        assert_covered(&plan, &changes);
    }

    #[test]
    fn an_animation_is_sampled_at_the_long_motion_rate() {
        let mut changes = vec![0.0];
        changes.extend((0..=40).map(|i| 10.0 + i as f64 * 0.25));
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        assert_eq!(plan.used, Used::Clips);
        let animation = &plan.clips[1];
        assert_eq!((animation.start, animation.fps), (10.0, 2.0));
        assert_eq!(animation.frame_times().last(), Some(20.0));
        // Its start and its end have a frame; within it, one every half second.
        assert_covered(&plan, &[0.0, 10.0, 20.0]);
    }

    #[test]
    fn a_video_that_is_all_motion_goes_whole() {
        let changes: Vec<f64> = (0..240).map(|i| i as f64 * 0.25).collect();
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        assert_eq!(plan.used, Used::Full);
        assert_eq!(plan.media_tokens, plan.default_media_tokens);
    }

    #[test]
    fn a_noisy_or_never_still_recording_goes_whole_and_says_why() {
        let mut noisy = video(&[0.0, 20.0], 60.0, false);
        noisy.timeline.flickering_samples = 200;
        let plan = plan(VideoSampling::Auto, &noisy, G2);
        assert_eq!(plan.used, Used::Full);
        assert!(
            plan.reason.contains("unsure") && plan.reason.contains("noise"),
            "{}",
            plan.reason
        );
        assert_eq!(plan.changes, vec![20.0]);
        // A few flickering samples (the changes themselves) leave the plan alone.
        let mut calm = video(&[0.0, 20.0], 60.0, false);
        calm.timeline.flickering_samples = 3;
        assert_eq!(
            super::plan(VideoSampling::Auto, &calm, G2).used,
            Used::Clips
        );
        // A spinner all along: a change at every sample.
        let changes: Vec<f64> = (0..240).map(|i| i as f64 * 0.25).collect();
        let busy = super::plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        assert_eq!(busy.used, Used::Full);
        assert!(busy.reason.contains("never still"), "{}", busy.reason);
    }

    #[test]
    fn too_many_clips_for_one_request_become_keyframes() {
        let changes: Vec<f64> = (0..15).map(|i| i as f64 * 4.0).collect();
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        assert_eq!(plan.used, Used::Keyframes);
        assert_covered(&plan, &changes);
        assert_eq!(
            plan.media_tokens,
            16 * 258,
            "15 changes and the last screen"
        );
    }

    #[test]
    fn audio_is_counted_over_each_clip_only_when_there_is_audio() {
        let changes = [0.0, 30.0];
        let silent = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G2);
        let loud = plan(VideoSampling::Auto, &video(&changes, 60.0, true), G2);
        assert_eq!(silent.default_media_tokens, 60 * 258);
        assert_eq!(loud.default_media_tokens, 60 * 258 + 60 * 32);
        assert_eq!(loud.media_tokens - silent.media_tokens, 60 * 32);
    }

    #[test]
    fn small_frames_go_at_low_resolution() {
        let mut small = video(&[0.0, 3.0], 10.0, false);
        small.timeline.width = 320;
        small.timeline.height = 180;
        let plan = plan(VideoSampling::Auto, &small, G2);
        assert_eq!(plan.setting, Setting::Request(Resolution::Low));
        assert_eq!(plan.media_tokens, 2 * 66);
        let plan_big = super::plan(VideoSampling::Auto, &video(&[0.0, 3.0], 10.0, false), G2);
        assert_eq!(plan_big.setting, Setting::None);
        // Gemini 3's default for video is its low figure already: nothing to set.
        let plan3 = super::plan(VideoSampling::Auto, &small, G3);
        assert_eq!(plan3.setting, Setting::None);
        assert_eq!(plan3.media_tokens, 2 * 70);
    }

    #[test]
    fn on_gemini_3_clips_go_at_high_and_the_default_is_70_a_frame() {
        let changes = [0.0, 4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5];
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G3);
        assert_eq!(plan.used, Used::Clips);
        assert_eq!(plan.setting, Setting::Part(Resolution::High));
        assert_eq!(plan.default_media_tokens, 60 * 70);
        assert_eq!(plan.media_tokens, 9 * 280);
    }

    #[test]
    fn on_gemini_3_only_clips_whose_changes_bring_text_go_at_high() {
        let changes = [0.0, 4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5];
        let mut facts = video(&changes, 60.0, false);
        // Text on the first screen and at 11 s; the other changes are flat colours.
        facts.timeline.detail = changes.iter().map(|&t| t == 0.0 || t == 11.0).collect();
        let three = plan(VideoSampling::Auto, &facts, G3);
        let settings: Vec<Setting> = three.clips.iter().map(|c| c.setting).collect();
        let high = Setting::Part(Resolution::High);
        assert_eq!(settings[0], high);
        assert_eq!(settings[2], high);
        assert_eq!(
            settings.iter().filter(|s| **s == Setting::None).count(),
            7,
            "{settings:?}"
        );
        assert_eq!(three.setting, high);
        assert_eq!(three.media_tokens, 2 * 280 + 7 * 70);
        // Gemini 2.x has one setting for the request: its default, which reads.
        let two = plan(VideoSampling::Auto, &facts, G2);
        assert!(two.clips.iter().all(|c| c.setting == Setting::None));
        assert_eq!(two.media_tokens, 9 * 258);
    }

    #[test]
    fn on_gemini_3_keyframes_go_at_medium_and_can_cost_more_than_the_whole_video() {
        let changes: Vec<f64> = (0..15).map(|i| i as f64 * 4.0).collect();
        let plan = plan(VideoSampling::Auto, &video(&changes, 60.0, false), G3);
        // 16 images at 560 cost more than the whole minute at 70 a frame.
        assert_eq!(plan.used, Used::Full, "{}", plan.reason);
        let asked = super::plan(VideoSampling::Keyframes, &video(&changes, 60.0, false), G3);
        assert_eq!(asked.setting, Setting::Part(Resolution::Medium));
        assert_eq!(asked.media_tokens, 16 * 560);
    }

    #[test]
    fn the_asked_mode_wins() {
        let changes = [0.0, 4.0];
        let full = plan(VideoSampling::Full, &video(&changes, 10.0, false), G2);
        assert_eq!(full.used, Used::Full);
        let keyframes = plan(VideoSampling::Keyframes, &video(&changes, 10.0, false), G2);
        assert_eq!(keyframes.used, Used::Keyframes);
        assert_eq!(keyframes.moments, vec![0.0, 4.0, 9.75]);
    }
}
