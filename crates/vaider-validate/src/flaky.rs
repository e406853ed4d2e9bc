//! A flaky test explained: a test that failed and then passed on retry has two attempts, each
//! with its own trace and recording. They are compared step by step (the step where they
//! parted, the steps whose time differs), by what the page logged (network failures and
//! console errors one attempt had and the other not), and by what the screen showed at the
//! step where they parted: the failed attempt's failing step watched closely (`failure`), and
//! the passing attempt's same step watched over the same stretch. The answer says what
//! differed, a sentence each.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vaider_core::analysis::tools;
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use crate::failure::{self, FailedRun, FailureAnalysis, StepOnClock};
use crate::recording::{self, Recording};
use crate::report::{Attempt, TestError, TestReport};
use crate::trace::{self, PageEvents};
use crate::video::Asker;

/// A step's time differs when the attempts' durations differ by this much and by half.
const TIMING_SECONDS: f64 = 0.5;
/// Timing differences told at most (the largest).
const MAX_TIMINGS: usize = 3;

/// `data.flaky[]`: what differed between a flaky test's failed attempt and its passing one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlakyAnalysis {
    pub test: String,
    /// `attempt 1 failed, attempt 2 passed`.
    pub attempts: String,
    /// The step where the attempts parted: the failed attempt's failing step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_at: Option<String>,
    /// What differed, a sentence each.
    pub differences: Vec<String>,
    /// The failed attempt's failing step as the model saw it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_attempt: Option<FailureAnalysis>,
    /// What the passing attempt's screen showed over the same step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed_attempt_screen: Option<String>,
    pub cost_usd: f64,
}

/// One attempt's side of the comparison.
struct Side {
    number: u32,
    recording: Option<Recording>,
    events: PageEvents,
}

impl Side {
    async fn read(
        video: Option<PathBuf>,
        trace: Option<PathBuf>,
        number: u32,
        out: PathBuf,
    ) -> Side {
        let events = trace
            .as_deref()
            .and_then(|t| trace::read_trace(t).ok())
            .unwrap_or_default();
        let recording = recording::of_files(video, trace, &out).await.ok();
        Side {
            number,
            recording,
            events,
        }
    }

    fn steps(&self) -> &[StepOnClock] {
        self.recording.as_ref().map_or(&[], |r| r.steps.as_slice())
    }
}

/// The attempt that failed last before the test passed.
fn failed_attempt(test: &TestReport) -> Option<&Attempt> {
    test.earlier_attempts
        .iter()
        .rev()
        .find(|a| a.status != "passed" && a.status != "skipped")
}

/// One attempt of a flaky test, by its files: its number (1 for the first), its video and
/// trace when it has them, and Playwright's error when it failed.
#[derive(Debug, Clone, Default)]
pub struct AttemptFiles {
    pub number: u32,
    pub video: Option<PathBuf>,
    pub trace: Option<PathBuf>,
    pub error: Option<TestError>,
}

/// Compares a flaky test's failed attempt with its passing last one; `out_dir` is where
/// screencasts are made for attempts without video.
pub async fn explain(
    engine: &Vaider,
    asker: &Asker,
    test: &TestReport,
    out_dir: &Path,
    progress: &dyn ProgressSink,
) -> Option<FlakyAnalysis> {
    let failed = failed_attempt(test)?;
    let file = |paths: Vec<&str>| paths.into_iter().map(PathBuf::from).find(|p| p.is_file());
    let bad = AttemptFiles {
        number: failed.retry + 1,
        video: file(failed.attachment("video").collect()),
        trace: file(failed.attachment("trace").collect()),
        error: failed.error.clone(),
    };
    let good = AttemptFiles {
        number: test.retries + 1,
        video: file(test.attachment("video").collect()),
        trace: file(test.attachment("trace").collect()),
        error: None,
    };
    Some(explain_attempts(engine, asker, &test.title, &bad, &good, out_dir, progress).await)
}

/// Compares a test's failed attempt with its passing one, given their files (what `explain`
/// finds in a report; the eval's flaky pairs are kept as files).
pub async fn explain_attempts(
    engine: &Vaider,
    asker: &Asker,
    title: &str,
    failed: &AttemptFiles,
    passed: &AttemptFiles,
    out_dir: &Path,
    progress: &dyn ProgressSink,
) -> FlakyAnalysis {
    let out = |n: u32| out_dir.join(format!("screencast-flaky-attempt-{n}.webm"));
    let read =
        |a: &AttemptFiles| Side::read(a.video.clone(), a.trace.clone(), a.number, out(a.number));
    let (bad, good) = (read(failed).await, read(passed).await);
    let mut analysis = compare(title, &bad, &good);
    let sides = Sides {
        title,
        error: failed.error.as_ref(),
        bad: &bad,
        good: &good,
    };
    watch_both(engine, asker, sides, &mut analysis, progress).await;
    analysis
}

/// The two attempts watched, with the test's title and the failed one's error.
struct Sides<'a> {
    title: &'a str,
    error: Option<&'a TestError>,
    bad: &'a Side,
    good: &'a Side,
}

/// What the traces tell apart, without the model.
fn compare(title: &str, bad: &Side, good: &Side) -> FlakyAnalysis {
    let failing = bad.recording.as_ref().and_then(|r| r.failing);
    let diverged = failing.and_then(|n| bad.steps().iter().find(|s| s.number == n));
    let mut differences = Vec::new();
    if let Some(step) = diverged {
        differences.push(format!(
            "the attempts parted at {}: it failed in attempt {} ({}) and passed in attempt {}",
            step.label(),
            bad.number,
            first_line(step.error.as_deref().unwrap_or("failed")),
            good.number
        ));
    }
    differences.extend(timings(bad, good));
    differences.extend(only_in(
        "network failures",
        &bad.events.network_failures,
        &good.events.network_failures,
        bad.number,
        good.number,
    ));
    differences.extend(only_in(
        "console errors",
        &bad.events.console_errors,
        &good.events.console_errors,
        bad.number,
        good.number,
    ));
    if bad.recording.is_none() || good.recording.is_none() {
        differences.push(
            "one attempt has no trace or recording, so its steps and screen could not be compared"
                .into(),
        );
    }
    FlakyAnalysis {
        test: title.to_string(),
        attempts: format!(
            "attempt {} failed, attempt {} passed",
            bad.number, good.number
        ),
        diverged_at: diverged.map(StepOnClock::label),
        differences,
        failed_attempt: None,
        passed_attempt_screen: None,
        cost_usd: 0.0,
    }
}

/// The steps both attempts ran whose time differs most, as sentences. Steps are matched by
/// title and by how many steps of that title came before.
fn timings(bad: &Side, good: &Side) -> Vec<String> {
    let keyed = |steps: &[StepOnClock]| -> Vec<((String, usize), f64, StepOnClock)> {
        let mut seen: Vec<String> = Vec::new();
        steps
            .iter()
            .filter_map(|s| {
                let count = seen.iter().filter(|t| **t == s.title).count();
                seen.push(s.title.clone());
                Some(((s.title.clone(), count), s.end? - s.start, s.clone()))
            })
            .collect()
    };
    let good_steps = keyed(good.steps());
    let mut differing: Vec<(f64, String)> = keyed(bad.steps())
        .into_iter()
        .filter_map(|(key, took, step)| {
            let (_, other, _) = good_steps.iter().find(|(k, _, _)| *k == key)?;
            let gap = (took - other).abs();
            (gap >= TIMING_SECONDS && gap >= took.max(*other) / 2.0).then(|| {
                let text = format!(
                    "{} took {:.1} s in attempt {} and {:.1} s in attempt {}",
                    step.label(),
                    took,
                    bad.number,
                    other,
                    good.number
                );
                (gap, text)
            })
        })
        .collect();
    differing.sort_by(|a, b| b.0.total_cmp(&a.0));
    differing
        .into_iter()
        .take(MAX_TIMINGS)
        .map(|(_, t)| t)
        .collect()
}

/// What one attempt logged and the other did not, a sentence each way.
fn only_in(what: &str, bad: &[String], good: &[String], b: u32, g: u32) -> Vec<String> {
    let missing = |of: &[String], from: &[String]| -> Vec<String> {
        of.iter().filter(|m| !from.contains(m)).cloned().collect()
    };
    let mut out = Vec::new();
    for (attempt, list, other) in [(b, missing(bad, good), g), (g, missing(good, bad), b)] {
        if !list.is_empty() {
            out.push(format!(
                "attempt {attempt} had {what} that attempt {other} did not: {}",
                list.iter()
                    .take(3)
                    .map(|m| format!("\"{m}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    out
}

/// The step of `other` that is `step` of `steps`: the same title, as many times over (a test
/// checks the same thing more than once).
fn matching<'a>(
    steps: &[StepOnClock],
    step: &StepOnClock,
    other: &'a [StepOnClock],
) -> Option<&'a StepOnClock> {
    let before = steps
        .iter()
        .take_while(|s| s.number != step.number)
        .filter(|s| s.title == step.title)
        .count();
    other.iter().filter(|s| s.title == step.title).nth(before)
}

fn first_line(text: &str) -> String {
    trace::cut(text.lines().next().unwrap_or_default().trim())
}

/// The screen at the step where they parted: the failed attempt's failing step watched
/// closely, and the passing attempt over the same step.
async fn watch_both(
    engine: &Vaider,
    asker: &Asker,
    sides: Sides<'_>,
    analysis: &mut FlakyAnalysis,
    progress: &dyn ProgressSink,
) {
    let Sides {
        title,
        error,
        bad,
        good,
    } = sides;
    let (Some(bad_rec), Some(good_rec)) = (&bad.recording, &good.recording) else {
        return;
    };
    let Some(failing) = bad_rec.failing else {
        return;
    };
    let run = FailedRun {
        title,
        error,
        steps: &bad_rec.steps,
        failing,
        video: &bad_rec.video,
    };
    match failure::watch(engine, asker, run, progress).await {
        Ok(seen) => {
            analysis.cost_usd += seen.cost_usd;
            analysis.failed_attempt = Some(seen);
        }
        Err(e) => analysis.differences.push(format!(
            "the failed attempt's screen could not be watched ({e})"
        )),
    }
    let Some(step) = bad_rec.steps.iter().find(|s| s.number == failing) else {
        return;
    };
    let Some(same) = matching(&bad_rec.steps, step, &good_rec.steps) else {
        return;
    };
    match watch_passing(engine, asker, title, good_rec, same, progress).await {
        Ok((screen, cost)) => {
            analysis.cost_usd += cost;
            if let Some(seen) = &analysis.failed_attempt {
                analysis.differences.push(format!(
                    "at {}: in attempt {} the screen showed {}; in attempt {} it showed {}",
                    same.title,
                    bad.number,
                    trace::cut(&seen.screen_at_failure),
                    good.number,
                    trace::cut(&screen)
                ));
            }
            analysis.passed_attempt_screen = Some(screen);
        }
        Err(e) => analysis.differences.push(format!(
            "the passing attempt's screen could not be watched ({e})"
        )),
    }
}

/// The passing attempt over the stretch of its step matching the failing one.
async fn watch_passing(
    engine: &Vaider,
    asker: &Asker,
    title: &str,
    recording: &Recording,
    step: &StepOnClock,
    progress: &dyn ProgressSink,
) -> Result<(String, f64), String> {
    let stretch = failure::stretch_for(&recording.steps, step);
    let prompt = format!(
        "This is the recording of the attempt of the Playwright test \"{}\" that passed, from \
         {} to {}. Its steps, on the recording's clock:\n{}\n\nDescribe what the screen shows \
         during step {} '{}', quoting its visible text.",
        title,
        crate::timeline::clock(stretch.start),
        crate::timeline::clock(stretch.end),
        failure::step_lines(&recording.steps, step),
        step.number,
        step.title
    );
    let mut request = asker.request(tools::ANALYZE_VIDEO, &recording.video, Some(prompt));
    request.stretch = Some(stretch);
    let result = asker.ask(engine, request, progress).await?;
    Ok((result.description.trim().to_string(), result.cost_usd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(number: u32, steps: Vec<StepOnClock>, console: &[&str]) -> Side {
        Side {
            number,
            recording: Some(Recording {
                video: PathBuf::from("v.webm"),
                from_screencast: false,
                failing: steps.iter().find(|s| s.error.is_some()).map(|s| s.number),
                steps,
            }),
            events: PageEvents {
                console_errors: console.iter().map(|c| c.to_string()).collect(),
                network_failures: Vec::new(),
            },
        }
    }

    fn step(number: usize, title: &str, start: f64, end: f64, error: Option<&str>) -> StepOnClock {
        StepOnClock {
            number,
            title: title.into(),
            start,
            end: Some(end),
            depth: 0,
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_attempts_are_told_apart_by_step_time_and_what_the_page_logged() {
        let bad = side(
            1,
            vec![
                step(1, "open the shop", 0.1, 0.6, None),
                step(2, "add the chair", 0.6, 2.4, Some("Timed out 1500ms")),
            ],
            &["stock service slow"],
        );
        let good = side(
            2,
            vec![
                step(1, "open the shop", 0.1, 0.7, None),
                step(2, "add the chair", 0.7, 0.9, None),
            ],
            &[],
        );
        let analysis = compare("adds the chair", &bad, &good);
        assert_eq!(analysis.attempts, "attempt 1 failed, attempt 2 passed");
        assert_eq!(
            analysis.diverged_at.as_deref(),
            Some("step 2 'add the chair', 00:00.6")
        );
        let text = analysis.differences.join("\n");
        assert!(
            text.contains("took 1.8 s in attempt 1 and 0.2 s in attempt 2"),
            "{text}"
        );
        assert!(!text.contains("'open the shop', 00:00.1 took"), "{text}");
        assert!(
            text.contains(
                "attempt 1 had console errors that attempt 2 did not: \"stock service slow\""
            ),
            "{text}"
        );
    }

    #[test]
    fn a_step_is_matched_by_its_title_and_how_many_came_before() {
        let steps = |offset: f64| {
            vec![
                step(1, "Expect", offset, offset + 0.1, None),
                step(2, "Click", offset + 0.2, offset + 0.3, None),
                step(3, "Expect", offset + 0.4, offset + 0.5, None),
            ]
        };
        let (a, b) = (steps(0.0), steps(5.0));
        assert_eq!(matching(&a, &a[2], &b).unwrap().start, 5.4);
        assert_eq!(matching(&a, &a[0], &b).unwrap().start, 5.0);
        assert!(matching(&a, &a[2], &b[..2]).is_none());
    }
}
