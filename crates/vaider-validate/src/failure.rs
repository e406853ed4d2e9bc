//! The failing step, watched closely. For a failed test whose steps are known on its
//! recording's clock (from its trace), the model gets the stretch of the recording from the
//! step before the failing one through the failure, at a rate that shows short-lived states
//! (a toast, an error flashing), with the test's steps and Playwright's error. It answers what
//! the screen showed at the failing step against what the step expected, and the first moment
//! the screen went wrong, as a time and a step. The answer is small: sentences and the steps
//! named as `step 3 'add the chair', 00:04.2`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use vaider_core::analysis::tools;
use vaider_core::progress::ProgressSink;
use vaider_core::sampling::Stretch;
use vaider_core::task::{no_options_note, Job, Task, TaskMedia, Tool};
use vaider_core::Vaider;

use crate::report::TestError;
use crate::timeline::clock;
use crate::video::Asker;

/// The failing stretch is watched at this rate: a state shown for an eighth of a second shows.
pub const STRETCH_FPS: f64 = 8.0;
/// Seconds shown after the failure, for what the page did once the step gave up.
const AFTER_FAILURE: f64 = 0.5;
/// Steps listed to the model at most: those nearest the failure.
const MAX_STEPS_LISTED: usize = 40;

pub const WATCH_FAILING_STEP: Tool = Tool::new(&Task {
    name: "watch_failing_step",
    media: TaskMedia::Video,
    job: Job::Judge,
    system: Some(
        "Your task: find where a failed GUI test went wrong. You see a stretch of its screen \
recording around the step that failed, and the test's steps with their times on the recording's \
clock. Compare what the screen shows with what each step expected; quote the visible text \
exactly. Times are mm:ss.s from the start of the recording.",
    ),
    default_prompt: "Say what the screen showed when the test failed.",
    answer: Some(answer_schema),
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

fn answer_schema() -> Value {
    json!({
        "screen_at_failure": {"type": "string", "description": "What the screen showed at the step that failed, with its visible text."},
        "expected": {"type": "string", "description": "What that step expected to see."},
        "first_wrong_at": {"type": "string", "description": "mm:ss.s: the first moment the screen went wrong; empty if it never looked wrong."},
        "first_wrong_step": {"type": "integer", "description": "The number of the step running at that moment; 0 if none."},
        "cause": {"type": "string", "description": "The most likely cause, in a sentence."}
    })
}

/// A step of the test on the recording's clock, as the model is told it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOnClock {
    pub number: usize,
    pub title: String,
    pub start: f64,
    pub end: Option<f64>,
    /// 0 for a step of the test itself, 1 for one inside a `test.step`, and so on.
    pub depth: usize,
    /// Its error, when it failed.
    pub error: Option<String>,
}

impl StepOnClock {
    /// `step 3 'add the chair', 00:04.2`: how results name a step.
    pub fn label(&self) -> String {
        label(self.number, &self.title, self.start)
    }
}

/// `step 3 'add the chair', 00:04.2`, as [`crate::timeline::name_step`] names a step.
pub fn label(number: usize, title: &str, at: f64) -> String {
    format!("step {number} '{title}', {}", clock(at))
}

/// What the model saw of a failed test's failing step: `data.failure_analysis`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureAnalysis {
    pub test: String,
    /// The step that failed, as `step 3 'add the chair', 00:04.2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failing_step: Option<String>,
    /// The stretch of the recording the model watched, in seconds, and its rate.
    pub watched: Watched,
    pub screen_at_failure: String,
    pub expected: String,
    /// The first moment the screen went wrong, as the step running then and its time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_wrong: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_wrong_at: Option<f64>,
    pub cause: String,
    /// The recording watched (Playwright's video, or the trace's screencast made into one).
    pub video: String,
    pub interaction_id: String,
    pub model: String,
    pub cost_usd: f64,
    pub cached: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Watched {
    pub from: f64,
    pub to: f64,
    pub fps: f64,
}

/// The test the model watches: its title, error and steps, the number of the step that
/// failed, and its recording.
pub struct FailedRun<'a> {
    pub title: &'a str,
    pub error: Option<&'a TestError>,
    pub steps: &'a [StepOnClock],
    pub failing: usize,
    pub video: &'a Path,
}

/// From the start of the step before the failing one through the failure and a little after.
/// "The step before" is taken at the test's own level: for an `expect` failing inside
/// `test.step('pay')`, the step before `pay`, since what went wrong often showed there (a
/// toast at step 2, a test failing at step 4 that waited for its effect).
pub fn stretch_for(steps: &[StepOnClock], failing: &StepOnClock) -> Stretch {
    // The test-level step the failing one is part of (itself, at the test's level).
    let anchor = steps
        .iter()
        .filter(|s| s.depth == 0 && s.start <= failing.start)
        .max_by(|a, b| a.start.total_cmp(&b.start))
        .filter(|_| failing.depth > 0)
        .unwrap_or(failing);
    let before = steps
        .iter()
        .filter(|s| s.depth == 0 && s.start < anchor.start && s.number != anchor.number)
        .max_by(|a, b| a.start.total_cmp(&b.start));
    let start = before.map_or(anchor.start - 1.0, |s| s.start);
    let end = failing.end.unwrap_or(failing.start + 1.0) + AFTER_FAILURE;
    Stretch::new(start, end, STRETCH_FPS)
}

/// Asks the model about the failing stretch; the error says why it could not.
pub async fn watch(
    engine: &Vaider,
    asker: &Asker,
    run: FailedRun<'_>,
    progress: &dyn ProgressSink,
) -> Result<FailureAnalysis, String> {
    let failing = run
        .steps
        .iter()
        .find(|s| s.number == run.failing)
        .ok_or_else(|| "the step that failed has no time in the trace".to_string())?;
    let stretch = stretch_for(run.steps, failing);
    let mut request = asker.request(
        WATCH_FAILING_STEP,
        run.video,
        Some(prompt(&run, failing, &stretch)),
    );
    request.stretch = Some(stretch);
    let result = asker.ask(engine, request, progress).await?;
    let details = result.details.unwrap_or_default();
    let text = |name: &str| {
        details[name]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let first_wrong_at = parse_mmss(&text("first_wrong_at"));
    let first_wrong = details["first_wrong_step"]
        .as_u64()
        .and_then(|n| run.steps.iter().find(|s| s.number as u64 == n))
        .map(|s| label(s.number, &s.title, first_wrong_at.unwrap_or(s.start)));
    Ok(FailureAnalysis {
        test: run.title.to_string(),
        failing_step: Some(failing.label()),
        watched: Watched {
            from: stretch.start,
            to: stretch.end,
            fps: stretch.fps,
        },
        screen_at_failure: non_empty(text("screen_at_failure"), &result.description),
        expected: text("expected"),
        first_wrong,
        first_wrong_at,
        cause: text("cause"),
        video: run.video.display().to_string(),
        interaction_id: result.interaction_id,
        model: result.model,
        cost_usd: result.cost_usd,
        cached: result.cached,
    })
}

impl FailureAnalysis {
    /// One line for a summary: the step, what the screen showed, the first wrong moment.
    pub fn sentence(&self) -> String {
        let mut text = match &self.failing_step {
            Some(step) => format!(
                "failed at {step}: {}",
                crate::trace::cut(&self.screen_at_failure)
            ),
            None => format!(
                "the screen showed: {}",
                crate::trace::cut(&self.screen_at_failure)
            ),
        };
        if let Some(first) = &self.first_wrong {
            text.push_str(&format!("; first wrong at {first}"));
        }
        text
    }
}

fn non_empty(text: String, otherwise: &str) -> String {
    if text.is_empty() {
        otherwise.trim().to_string()
    } else {
        text
    }
}

/// The prompt: the test, its steps on the recording's clock, the one that failed with
/// Playwright's error, and the question.
fn prompt(run: &FailedRun<'_>, failing: &StepOnClock, stretch: &Stretch) -> String {
    let mut text = format!(
        "This is the recording of the Playwright test \"{}\" from {} to {}, around the step that failed.\n\
         The test's steps, on the recording's clock (mm:ss.s from its start):\n{}",
        run.title,
        clock(stretch.start),
        clock(stretch.end),
        step_lines(run.steps, failing)
    );
    if let Some(error) = run.error {
        text.push_str(&format!("\nPlaywright's error: {}", error.message.trim()));
        if let Some(at) = &error.location {
            text.push_str(&format!(" (at {at})"));
        }
    }
    text.push_str(&format!(
        "\n\nSay what the screen showed at step {} '{}' against what it expected, and the first \
         moment the screen went wrong: its time and the number of the step running then.",
        failing.number, failing.title
    ));
    text
}

/// `- step 3 'add the chair': 00:04.2 to 00:06.0, failed: …`, the steps nearest the failure.
pub fn step_lines(steps: &[StepOnClock], failing: &StepOnClock) -> String {
    let at = steps
        .iter()
        .position(|s| s.number == failing.number)
        .unwrap_or(0);
    let from = at.saturating_sub(MAX_STEPS_LISTED - 5);
    let lines: Vec<String> = steps
        .iter()
        .skip(from)
        .take(MAX_STEPS_LISTED)
        .map(step_line)
        .collect();
    lines.join("\n")
}

/// One step as the model reads it.
pub fn step_line(step: &StepOnClock) -> String {
    let mut line = format!(
        "- step {} '{}': {}",
        step.number,
        step.title,
        clock(step.start)
    );
    if let Some(end) = step.end {
        line.push_str(&format!(" to {}", clock(end)));
    }
    if let Some(error) = &step.error {
        let first = error.lines().next().unwrap_or_default();
        line.push_str(&format!(", failed: {}", crate::trace::cut(first)));
    }
    line
}

fn parse_mmss(text: &str) -> Option<f64> {
    let (minutes, seconds) = text.trim().split_once(':')?;
    let value = minutes.parse::<f64>().ok()? * 60.0 + seconds.parse::<f64>().ok()?;
    value.is_finite().then_some(value)
}

/// The steps as the description of the whole recording is asked to name them.
pub fn steps_prompt(steps: &[StepOnClock]) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let listed: Vec<String> = steps.iter().take(MAX_STEPS_LISTED).map(step_line).collect();
    Some(format!(
        "{}\n\nThe test's steps, on the recording's clock (mm:ss.s from its start):\n{}\n\
         Name the step running at each moment you describe, as step 3 'its title', 00:04.2.",
        tools::ANALYZE_VIDEO.task().default_prompt,
        listed.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(number: usize, title: &str, start: f64, end: f64, error: Option<&str>) -> StepOnClock {
        StepOnClock {
            number,
            title: title.into(),
            start,
            end: Some(end),
            depth: usize::from(title.starts_with("click") || title.starts_with("expect")),
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_stretch_runs_from_the_step_before_through_the_failure() {
        let steps = [
            step(1, "open the shop", 0.2, 1.0, None),
            step(2, "add the chair", 1.0, 6.0, Some("Timed out")),
            step(3, "click Add", 1.1, 1.3, None),
            step(4, "expect the cart", 1.4, 6.0, Some("Timed out 5000ms")),
        ];
        let failing = &steps[3];
        // The step before is at the test's level: "open the shop", before "add the chair".
        let stretch = stretch_for(&steps, failing);
        assert_eq!((stretch.start, stretch.end), (0.2, 6.5));
        // A failing step of the test's own level: the one before it.
        let third = step(5, "pay", 6.0, 7.0, Some("Timed out"));
        let all = [steps.to_vec(), vec![third.clone()]].concat();
        let stretch = stretch_for(&all, &third);
        assert_eq!((stretch.start, stretch.end), (1.0, 7.5));
        assert_eq!(stretch.fps, STRETCH_FPS);
        assert_eq!(failing.label(), "step 4 'expect the cart', 00:01.4");
        assert_eq!(
            step_line(failing),
            "- step 4 'expect the cart': 00:01.4 to 00:06.0, failed: Timed out 5000ms"
        );
        assert_eq!(parse_mmss("01:02.5"), Some(62.5));
        assert_eq!(parse_mmss(""), None);
    }
}
