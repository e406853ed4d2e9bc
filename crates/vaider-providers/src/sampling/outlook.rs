//! What the scan's samples so far say of the plan, before the scan ends: the fewest tokens the
//! plan can still come to, whatever the rest of the video holds (when even that is the whole
//! video, the whole video goes at once and the scan stops), and the tokens it is expected to
//! come to (what the answer waits for once the upload is done: `planned::wait_after_upload`).
//! Pure arithmetic, like the plan.

use super::plan::{
    self, VideoFacts, BURST_GAP_INTERVALS, LONG_MOTION_FPS, MAX_KEYFRAMES, UNSURE_SHARE,
};
use crate::tokens::{TokenRules, AUDIO_PER_SECOND};
use vaider_media::keyframes::{Change, Seen, Timeline};

/// The plan as the scan so far foresees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlook {
    /// Seconds of the video scanned.
    pub seen: f64,
    /// The video's length; None while unknown (a WebM written live has none in its header),
    /// when the part scanned is taken as the whole.
    pub duration: Option<f64>,
    /// Tokens of the whole video at Gemini's default sampling.
    pub whole: u64,
    /// The fewest tokens the plan can still come to, whatever the rest of the video holds.
    pub fewest: u64,
    /// The tokens the plan is expected to come to: what the part scanned costs, and the rest
    /// costing the same again in proportion to the share scanned (see [`expected`]).
    pub expected: u64,
}

impl Outlook {
    pub fn of(seen: &Seen<'_>, rules: TokenRules) -> Outlook {
        let scanned = seen.seconds();
        // A container's length can be a little short of the last sample's time.
        let duration = seen.duration.filter(|d| *d > 0.0).map(|d| d.max(scanned));
        let length = duration.unwrap_or(scanned).max(seen.interval);
        let whole = plan::whole_tokens(length, seen.has_audio, rules);
        let lasting: Vec<&Change> = seen.changes.iter().filter(|c| c.lasting).collect();
        let fewest = match duration {
            Some(duration) => fewest(seen, &lasting, duration, whole, rules),
            // The rest could be hours of a still screen: nothing is ruled out.
            None => 0,
        };
        let expected = expected(seen, &lasting, length, whole, rules).clamp(fewest, whole);
        Outlook {
            seen: scanned,
            duration,
            whole,
            fewest,
            expected,
        }
    }

    /// Whether the whole video goes whatever the rest of it holds.
    pub fn whole_for_sure(&self) -> bool {
        self.fewest >= self.whole
    }

    /// Tokens the plan is expected to save against the whole video.
    pub fn expected_saving(&self) -> u64 {
        self.whole.saturating_sub(self.expected)
    }

    /// Seconds of the video still to scan; None while its length is unknown.
    pub fn left(&self) -> Option<f64> {
        self.duration.map(|d| (d - self.seen).max(0.0))
    }
}

/// The fewest tokens the plan can come to. Only lasting changes count (the others may yet be
/// left out as a caret's blinks), and each bound holds whatever changes the rest brings:
/// - the plan is unsure (the whole video goes) once more than half of all the samples the
///   video will have are lasting changes, or flicker;
/// - clips: every stretch where lasting changes follow each other closely is inside a motion
///   clip, sampled at `LONG_MOTION_FPS` at least, at the cheapest frame a clip can have;
/// - keyframes: one image per lasting change, and none once there are `MAX_KEYFRAMES`.
fn fewest(
    seen: &Seen<'_>,
    lasting: &[&Change],
    duration: f64,
    whole: u64,
    rules: TokenRules,
) -> u64 {
    let all_samples = (duration / seen.interval).ceil() + 1.0;
    let most = |count: usize| count as f64 > UNSURE_SHARE * all_samples;
    if most(seen.flickering as usize) || most(lasting.len().saturating_sub(1)) {
        return whole;
    }
    let frames = (LONG_MOTION_FPS * motion_seconds(lasting, seen.interval)).floor();
    let frame = rules.video_frame(rules.clip_setting(longest_side(seen), false).resolution(rules));
    let audio = audio_tokens(duration.floor(), seen.has_audio);
    let clips = frames.max(1.0) as u64 * frame + audio;
    let keyframes = match lasting.len() < MAX_KEYFRAMES {
        true => plan::keyframe_tokens(lasting.len(), rules),
        false => whole,
    };
    clips.min(keyframes).min(whole)
}

/// Seconds covered by runs of changes each at most `BURST_GAP_INTERVALS` apart: the motion.
fn motion_seconds(changes: &[&Change], interval: f64) -> f64 {
    let gap = BURST_GAP_INTERVALS * interval + 1e-6;
    changes
        .windows(2)
        .map(|pair| pair[1].at - pair[0].at)
        .filter(|step| *step <= gap)
        .sum()
}

/// The tokens the plan is expected to come to. The part scanned costs what its clips would;
/// the rest is expected to cost, beyond the first frame, what the part scanned did, in
/// proportion to the share scanned: a GUI recording is mostly still, so a page loading in its
/// first second says little of the next ten minutes, while motion through half of it says
/// much. With the share scanned `s`, that is the first frame and `2 - s` times the rest of
/// the part scanned. So also for the counts that make the plan unsure.
fn expected(
    seen: &Seen<'_>,
    lasting: &[&Change],
    length: f64,
    whole: u64,
    rules: TokenRules,
) -> u64 {
    let scanned = seen.seconds();
    if scanned <= 0.0 || lasting.is_empty() {
        return whole;
    }
    let share = (scanned / length).clamp(0.0, 1.0);
    let onward = 2.0 - share;
    let samples = length / seen.interval;
    let most = |count: f64| count * onward > UNSURE_SHARE * samples;
    if most(seen.flickering as f64) || most(lasting.len().saturating_sub(1) as f64) {
        return whole;
    }
    let so_far = clips_so_far(seen, lasting, rules);
    let first = rules.video_frame(
        rules
            .clip_setting(longest_side(seen), lasting[0].detail)
            .resolution(rules),
    );
    let beyond_first = so_far.saturating_sub(first) as f64;
    first + (beyond_first * onward).round() as u64 + audio_tokens(length, seen.has_audio)
}

/// Tokens of the clips of the part scanned, as if the video ended there (no sound: it is
/// counted over the whole length apart).
fn clips_so_far(seen: &Seen<'_>, lasting: &[&Change], rules: TokenRules) -> u64 {
    let scanned = seen.seconds().max(seen.interval);
    let (width, height) = seen.size.unwrap_or((0, 0));
    let part = VideoFacts {
        duration: scanned,
        has_audio: false,
        timeline: Timeline {
            changes: lasting.iter().map(|c| c.at).collect(),
            detail: lasting.iter().map(|c| c.detail).collect(),
            ongoing: Vec::new(),
            interval: seen.interval,
            samples: seen.samples,
            flickering_samples: seen.flickering,
            sampled_seconds: scanned,
            duration: Some(scanned),
            has_audio: false,
            width,
            height,
        },
    };
    plan::clips_tokens(&part, rules)
}

/// The video's longest side; 0 while unknown (which prices clips at their cheapest).
fn longest_side(seen: &Seen<'_>) -> u32 {
    seen.size.map_or(0, |(w, h)| w.max(h))
}

fn audio_tokens(seconds: f64, has_audio: bool) -> u64 {
    match has_audio {
        true => seconds.ceil() as u64 * AUDIO_PER_SECOND,
        false => 0,
    }
}

/// Why the whole video goes, decided before the end of the scan.
pub(super) fn whole_reason(seen: &Seen<'_>, outlook: &Outlook) -> String {
    let lasting = seen.changes.iter().filter(|c| c.lasting).count().saturating_sub(1);
    let of = outlook
        .duration
        .map_or(String::new(), |d| format!(" of {d:.0} s"));
    let what = match seen.flickering > lasting as u64 {
        true => format!(
            "much of the screen flickered in {} of its {} samples (noise, or motion everywhere)",
            seen.flickering, seen.samples
        ),
        false => format!(
            "the screen changed in {lasting} of its {} samples",
            seen.samples
        ),
    };
    format!(
        "in the first {:.1} s{of} {what}: whatever the rest holds, clips or keyframes could not \
         cost fewer tokens than the whole video, so it was sent whole without scanning the rest",
        outlook.seen
    )
}
