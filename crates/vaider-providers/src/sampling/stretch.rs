//! A stretch of a recording watched closely in place of the whole: the part of a failed test
//! from the step before the failure through the failure, at a rate that shows states too short
//! for Gemini's one frame a second (a toast, an error flashing, a spinner). The caller (the
//! validation) chooses the stretch; here it becomes the one clip sent, its plan and its note.

use super::plan::{whole_tokens, Clip, ClipKind, Plan, Used};
use crate::tokens::TokenRules;

/// The most frames a second a stretch is watched at: Gemini takes up to 24, and a GUI state
/// worth naming lasts a tenth of a second or more.
pub const MAX_FPS: f64 = 10.0;
/// The most frames one stretch sends; a longer stretch is watched at a lower rate.
pub const MAX_FRAMES: f64 = 120.0;
/// The shortest stretch: a step that took no time is still shown in its surroundings.
const MIN_SECONDS: f64 = 1.0;

/// From `start` to `end` seconds of the video, at `fps` frames a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    pub start: f64,
    pub end: f64,
    pub fps: f64,
}

impl Stretch {
    /// A stretch made sound: not before the start, at least [`MIN_SECONDS`] long, at 1 to
    /// [`MAX_FPS`] frames a second and never more than [`MAX_FRAMES`] frames.
    pub fn new(start: f64, end: f64, fps: f64) -> Stretch {
        let start = if start.is_finite() {
            start.max(0.0)
        } else {
            0.0
        };
        let end = if end.is_finite() { end } else { start };
        let end = end.max(start + MIN_SECONDS);
        let fps = if fps.is_finite() { fps } else { 1.0 };
        let fps = fps
            .clamp(1.0, MAX_FPS)
            .min((MAX_FRAMES / (end - start)).max(1.0));
        Stretch { start, end, fps }
    }

    /// Ends the stretch at the video's end, when the video is known to be shorter.
    pub fn within(self, duration: Option<f64>) -> Stretch {
        match duration {
            Some(d) if d.is_finite() && d > 0.0 && self.end > d => {
                Stretch::new((d - (self.end - self.start)).min(self.start), d, self.fps)
            }
            _ => self,
        }
    }

    /// The one clip sent, sharp enough to read text on the models where that costs more.
    pub fn clip(&self, rules: TokenRules, longest_side: u32) -> Clip {
        Clip {
            start: self.start,
            end: self.end,
            fps: self.fps,
            kind: ClipKind::Motion,
            setting: rules.clip_setting(longest_side, true),
        }
    }

    /// What is sent, with its cost beside the whole video's at Gemini's default.
    pub fn plan(&self, rules: TokenRules, longest_side: u32, duration: f64) -> Plan {
        let clip = self.clip(rules, longest_side);
        let media_tokens = clip.frames() * rules.video_frame(clip.setting.resolution(rules));
        Plan {
            used: Used::Clips,
            moments: clip
                .frame_times()
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect(),
            setting: clip.setting,
            clips: vec![clip],
            media_tokens,
            default_media_tokens: whole_tokens(duration, false, rules),
            changes: Vec::new(),
            reason: format!(
                "the stretch {:.1}-{:.1} s was asked for, at {} frames a second",
                self.start,
                self.end,
                fps_text(self.fps)
            ),
            duration,
            has_audio: false,
        }
    }

    /// Told to the model before the clip: which part of the video it sees, on whose clock.
    pub fn note(&self) -> String {
        format!(
            "The video is sent as one clip, from {:.1} s to {:.1} s of the recording at {} frames \
             a second; times are the recording's own, in seconds from its start.",
            self.start,
            self.end,
            fps_text(self.fps)
        )
    }

    /// The stretch in a cache key: another stretch is another question.
    pub fn key(&self) -> String {
        format!("stretch {:.3}-{:.3}@{:.3}", self.start, self.end, self.fps)
    }
}

fn fps_text(fps: f64) -> String {
    if (fps - fps.round()).abs() < 1e-9 {
        format!("{}", fps.round() as u64)
    } else {
        format!("{fps:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretch_is_made_sound_whatever_it_is_given() {
        let s = Stretch::new(-2.0, 3.0, 50.0);
        assert_eq!((s.start, s.end, s.fps), (0.0, 3.0, MAX_FPS));
        // A step that took no time is shown for a second around it.
        let s = Stretch::new(4.0, 4.0, 8.0);
        assert_eq!((s.start, s.end), (4.0, 5.0));
        // A long stretch lowers its rate to stay within the frames one stretch sends.
        let s = Stretch::new(0.0, 60.0, 8.0);
        assert_eq!(s.fps, 2.0);
        let s = Stretch::new(f64::NAN, f64::INFINITY, f64::NAN);
        assert!(s.start == 0.0 && s.end == 1.0 && s.fps == 1.0, "{s:?}");
    }

    #[test]
    fn a_stretch_past_the_end_of_the_video_ends_with_it() {
        let s = Stretch::new(8.0, 12.0, 8.0).within(Some(10.0));
        assert_eq!((s.start, s.end), (6.0, 10.0));
        assert_eq!(Stretch::new(1.0, 3.0, 8.0).within(None).end, 3.0);
    }

    #[test]
    fn its_plan_is_one_clip_of_its_frames_costed_at_the_models_rates() {
        let rules = TokenRules::for_model("gemini-2.5-flash");
        let plan = Stretch::new(2.0, 4.0, 8.0).plan(rules, 1280, 20.0);
        assert_eq!(plan.used, Used::Clips);
        assert_eq!(plan.clips.len(), 1);
        assert_eq!(plan.moments.len(), 16);
        assert_eq!(plan.moments[1], 2.125);
        assert_eq!(plan.default_media_tokens, 20 * 258);
        assert_eq!(plan.media_tokens, 16 * 258);
        assert!(Stretch::new(2.0, 4.0, 8.0)
            .note()
            .contains("from 2.0 s to 4.0 s"));
    }
}
