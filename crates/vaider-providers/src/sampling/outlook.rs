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

    /// Tokens the plan is expected to save against the whole video; None while the video's
    /// length is unknown (a WebM written live): what the rest holds cannot be weighed.
    pub fn expected_saving(&self) -> Option<u64> {
        self.duration?;
        Some(self.whole.saturating_sub(self.expected))
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
    let frame = rules.video_frame(
        rules
            .clip_setting(longest_side(seen), false)
            .resolution(rules),
    );
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
    let so_far =
        clips_so_far(seen, lasting, rules).min(ongoing_as_long_motion(seen, lasting, rules));
    let first = rules.video_frame(
        rules
            .clip_setting(longest_side(seen), lasting[0].detail)
            .resolution(rules),
    );
    let beyond_first = so_far.saturating_sub(first) as f64;
    first + (beyond_first * onward).round() as u64 + audio_tokens(length, seen.has_audio)
}

/// The part scanned priced with the motion still going on at its end as long motion (at
/// `LONG_MOTION_FPS`), which it becomes if it goes on: cut where it is, a motion of under 2 s
/// would be priced as a burst, at four times the rate. `u64::MAX` when no motion is going on.
fn ongoing_as_long_motion(seen: &Seen<'_>, lasting: &[&Change], rules: TokenRules) -> u64 {
    let gap = BURST_GAP_INTERVALS * seen.interval + 1e-6;
    let scanned = seen.seconds();
    let mut start = lasting.len();
    while start > 1 && lasting[start - 1].at - lasting[start - 2].at <= gap {
        start -= 1;
    }
    let Some(last) = lasting.last() else {
        return u64::MAX;
    };
    // One change is no motion; a motion that stopped before the end is priced as it is.
    if start == lasting.len() || scanned - last.at > gap + seen.interval {
        return u64::MAX;
    }
    let first = lasting[start - 1].at;
    let detail = lasting[start - 1..].iter().any(|c| c.detail);
    let frame = rules.video_frame(
        rules
            .clip_setting(longest_side(seen), detail)
            .resolution(rules),
    );
    let motion = ((last.at - first) * LONG_MOTION_FPS).ceil() as u64 + 1;
    let before = match first > 0.0 {
        true => clips_so_far(
            &Seen {
                samples: (first / seen.interval).round() as u64,
                ..*seen
            },
            &lasting[..start - 1],
            rules,
        ),
        false => 0,
    };
    before + motion * frame
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

/// What the scan has seen so far, in words: how many of its samples changed (lasting changes
/// only) or flickered, and whether the detector is unsure (the plan's rule, on the samples so
/// far: more than half of them), in which case the whole video goes at Gemini's uniform
/// sampling.
pub(super) fn seen_so_far(seconds: f64, samples: u64, changes: u64, flickering: u64) -> String {
    let most = |count: u64| count as f64 > UNSURE_SHARE * samples as f64;
    if flickering > changes {
        let what = format!(
            "in the first {seconds:.1} s much of the screen flickered in {flickering} of its \
             {samples} samples (noise, or motion everywhere)"
        );
        return match most(flickering) {
            true => format!("the detector is unsure: {what}"),
            false => what,
        };
    }
    let what = format!(
        "in the first {seconds:.1} s the screen changed in {changes} of its {samples} samples"
    );
    match most(changes) {
        true => format!("the detector is unsure: {what} (it is never still)"),
        false => what,
    }
}

/// Why the whole video goes, decided before the end of the scan.
pub(super) fn whole_reason(seen: &Seen<'_>, outlook: &Outlook) -> String {
    let lasting = seen
        .changes
        .iter()
        .filter(|c| c.lasting)
        .count()
        .saturating_sub(1);
    let of = outlook
        .duration
        .map_or(String::new(), |d| format!(" (of {d:.0} s)"));
    let so_far = seen_so_far(outlook.seen, seen.samples, lasting as u64, seen.flickering);
    format!(
        "{so_far}{of}: whatever the rest holds, clips or keyframes could not cost fewer tokens \
         than the whole video, so it was sent whole at Gemini's uniform sampling without \
         scanning the rest"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Family;

    const G2: TokenRules = TokenRules {
        family: Family::Gemini2,
    };
    const G3: TokenRules = TokenRules {
        family: Family::Gemini3,
    };

    fn change(at: f64, lasting: bool) -> Change {
        Change {
            // The sample it was found at, a quarter second apart.
            index: (at * 4.0) as u64,
            at,
            share: 0.5,
            detail: false,
            lasting,
        }
    }

    /// A 1280x720 recording of `duration` seconds scanned for `samples` quarter seconds.
    fn seen(changes: &[Change], samples: u64, duration: Option<f64>) -> Seen<'_> {
        Seen {
            samples,
            interval: 0.25,
            changes,
            flickering: 0,
            duration,
            has_audio: false,
            size: Some((1280, 720)),
        }
    }

    /// A change at each of the first `samples` samples.
    fn never_still(samples: u64) -> Vec<Change> {
        (0..samples)
            .map(|i| change(i as f64 * 0.25, true))
            .collect()
    }

    #[test]
    fn a_never_still_screen_is_expected_to_save_nothing_early_and_known_to_go_whole_at_half_way() {
        // 60 s at 4 samples a second; 10 s scanned: clips could still win if the rest is
        // still, and a sixth of the video says only so much of the rest.
        let changes = never_still(40);
        let early = Outlook::of(&seen(&changes, 40, Some(60.0)), G2);
        assert_eq!(early.whole, 60 * 258);
        assert!(!early.whole_for_sure(), "{early:?}");
        assert!(
            early.expected_saving().unwrap() < early.whole * 4 / 10,
            "{early:?}"
        );
        assert_eq!(early.left(), Some(50.0));
        // A third of it in motion: the rest is expected to cost more than it could save.
        let changes = never_still(80);
        let third = Outlook::of(&seen(&changes, 80, Some(60.0)), G2);
        assert!(!third.whole_for_sure(), "{third:?}");
        assert_eq!(third.expected_saving(), Some(0), "{third:?}");
        // Past half of it, motion at two frames a second costs more than the whole at one.
        let changes = never_still(122);
        let half = Outlook::of(&seen(&changes, 122, Some(60.0)), G2);
        assert!(half.whole_for_sure(), "{half:?}");
        // More than half of all the samples changed: unsure, whatever the cost.
        let three = Outlook::of(&seen(&changes, 122, Some(60.0)), G3);
        assert!(three.whole_for_sure(), "{three:?}");
    }

    #[test]
    fn a_page_loading_in_the_first_second_of_ten_minutes_is_expected_to_save_most() {
        let mut changes = never_still(4);
        changes.push(change(1.0, true));
        let outlook = Outlook::of(&seen(&changes, 20, Some(600.0)), G3);
        assert_eq!(outlook.whole, 600 * 70);
        assert!(!outlook.whole_for_sure());
        let saving = outlook.expected_saving().unwrap();
        assert!(
            saving > outlook.whole * 9 / 10,
            "{saving} of {}",
            outlook.whole
        );
        // A still screen so far: all but a frame or two.
        let still = [change(0.0, true)];
        let outlook = Outlook::of(&seen(&still, 40, Some(600.0)), G2);
        assert_eq!(outlook.expected, 258);
        assert_eq!(outlook.fewest, 258);
    }

    #[test]
    fn a_motion_going_on_at_the_end_of_the_part_scanned_is_priced_as_long_motion() {
        // Still, then from 10 s a motion still going on at 11.5 s: cut there it would be a
        // burst at 8 frames a second; going on, it goes at 2.
        let mut changes = vec![change(0.0, true)];
        changes.extend((0..7).map(|i| change(10.0 + i as f64 * 0.25, true)));
        let outlook = Outlook::of(&seen(&changes, 47, Some(24.0)), G2);
        // The still stretch, then 1.5 s of motion at 2 a second.
        let so_far = 258 + 4 * 258;
        let share = 11.75 / 24.0;
        let expected = 258 + ((so_far - 258) as f64 * (2.0 - share)).round() as u64;
        assert_eq!(outlook.expected, expected, "{outlook:?}");
        assert!(outlook.expected_saving().unwrap() > 0);
    }

    #[test]
    fn a_blinking_caret_counts_for_nothing() {
        // The first frame, then a small spot changing every half second for 30 s.
        let mut changes = vec![change(0.0, true)];
        changes.extend((1..60).map(|i| change(i as f64 * 0.5, false)));
        let outlook = Outlook::of(&seen(&changes, 120, Some(60.0)), G2);
        assert!(!outlook.whole_for_sure());
        assert_eq!(outlook.expected, 258, "{outlook:?}");
    }

    #[test]
    fn noise_in_most_samples_goes_whole_for_sure() {
        let changes = [change(0.0, true)];
        let mut noisy = seen(&changes, 125, Some(60.0));
        noisy.flickering = 122;
        assert!(Outlook::of(&noisy, G2).whole_for_sure());
        noisy.flickering = 60;
        assert!(!Outlook::of(&noisy, G2).whole_for_sure());
    }

    #[test]
    fn without_a_length_nothing_is_ruled_out_and_the_part_scanned_is_the_whole() {
        let changes = never_still(400);
        let outlook = Outlook::of(&seen(&changes, 400, None), G2);
        assert_eq!(outlook.fewest, 0);
        assert!(!outlook.whole_for_sure());
        assert_eq!(outlook.whole, 100 * 258);
        assert_eq!(outlook.expected_saving(), None);
        assert_eq!(outlook.left(), None);
    }

    #[test]
    fn thirty_changes_far_apart_rule_out_keyframes_but_not_clips() {
        let changes: Vec<Change> = (0..30).map(|i| change(i as f64 * 2.0, true)).collect();
        let outlook = Outlook::of(&seen(&changes, 240, Some(600.0)), G2);
        // Lone changes are stills: one frame is all a bound can count on.
        assert_eq!(outlook.fewest, 258);
    }
}
