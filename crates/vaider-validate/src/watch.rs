//! What the model watches of a validation's run: the first recording against the agent's
//! expectations (its description naming the test's steps with their times), and each failed
//! test's failing step, closely (`failure`). A test without a video is watched through its
//! trace's screencast (`recording`). Every call goes through the one pipeline, under the
//! validation's history entry.

use std::collections::HashMap;
use std::path::Path;

use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use crate::failure::{self, FailedRun, FailureAnalysis};
use crate::flaky::FlakyAnalysis;
use crate::recording::{self, Recording};
use crate::report::Report;
use crate::video::{self, Asker, VideoAnalysis};

/// Failed tests whose failing step is watched in one validation, at most (a model call each):
/// a run where many tests fail usually fails for one reason, and the first tests show it.
pub const MAX_FAILURES_WATCHED: usize = 3;

/// What the model saw.
#[derive(Debug, Default)]
pub struct Watched {
    pub video_analysis: Option<VideoAnalysis>,
    /// Why the expectations could not be checked.
    pub video_problem: Option<String>,
    pub failures: Vec<FailureAnalysis>,
    /// The first flaky test explained (its two attempts compared).
    pub flaky: Vec<FlakyAnalysis>,
    /// Sentences for the rubric's warnings: a screencast watched, a failure not watched.
    pub notes: Vec<String>,
}

impl Watched {
    pub fn cost_usd(&self) -> f64 {
        let video = self.video_analysis.as_ref().map_or(0.0, |v| v.cost_usd);
        let failures: f64 = self.failures.iter().map(|f| f.cost_usd).sum();
        video + failures + self.flaky.iter().map(|f| f.cost_usd).sum::<f64>()
    }
}

/// The recordings of a run, each made once (a screencast is encoded by ffmpeg).
struct Recordings<'a> {
    report: &'a Report,
    out_dir: &'a Path,
    made: HashMap<usize, Result<Recording, String>>,
}

impl Recordings<'_> {
    async fn of(&mut self, index: usize) -> Result<Recording, String> {
        if let Some(made) = self.made.get(&index) {
            return made.clone();
        }
        let made = match self.report.tests.get(index) {
            Some(test) => recording::of_test(test, self.out_dir, index).await,
            None => Err("no such test".into()),
        };
        self.made.insert(index, made.clone());
        made
    }
}

pub async fn watch_run(
    engine: &Vaider,
    asker: &Asker,
    report: &Report,
    expectations: &[String],
    out_dir: &Path,
    progress: &dyn ProgressSink,
) -> Watched {
    let mut recordings = Recordings {
        report,
        out_dir,
        made: HashMap::new(),
    };
    let mut watched = Watched::default();
    if !expectations.is_empty() {
        watch_expectations(
            engine,
            asker,
            &mut recordings,
            expectations,
            progress,
            &mut watched,
        )
        .await;
    }
    let failed: Vec<usize> = (0..report.tests.len())
        .filter(|&i| report.tests[i].failed())
        .collect();
    // Within the request's model calls (max_model_calls), the expectations' call first.
    let spent = usize::from(watched.video_analysis.is_some());
    let cap = engine.config().max_model_calls.max(1) as usize;
    let watchable = MAX_FAILURES_WATCHED.min(cap.saturating_sub(spent));
    for &index in failed.iter().take(watchable) {
        watch_failure(
            engine,
            asker,
            &mut recordings,
            index,
            progress,
            &mut watched,
        )
        .await;
    }
    let spent = spent + watched.failures.len();
    if let Some(test) = report.tests.iter().find(|t| t.outcome == "flaky") {
        // Two calls: the failed attempt's failing step and the passing attempt's.
        if cap >= spent + 2 {
            watched
                .flaky
                .extend(crate::flaky::explain(engine, asker, test, out_dir, progress).await);
        } else {
            watched.notes.push(format!(
                "'{}' is flaky; its attempts were not compared: that takes 2 more model calls than max_model_calls ({cap}) left",
                test.title
            ));
        }
    }
    if failed.len() > watchable {
        watched.notes.push(format!(
            "{} tests failed: the failing step of the first {watchable} was watched (at most \
             {MAX_FAILURES_WATCHED}, within max_model_calls, {cap})",
            failed.len()
        ));
    }
    watched
}

/// The first test's recording that can be had, against the expectations.
async fn watch_expectations(
    engine: &Vaider,
    asker: &Asker,
    recordings: &mut Recordings<'_>,
    expectations: &[String],
    progress: &dyn ProgressSink,
    watched: &mut Watched,
) {
    let mut problem = "the run recorded no video".to_string();
    for index in 0..recordings.report.tests.len() {
        let recording = match recordings.of(index).await {
            Ok(recording) => recording,
            Err(why) => {
                problem = why;
                continue;
            }
        };
        let prompt = failure::steps_prompt(&recording.steps);
        match video::analyse(
            engine,
            asker,
            &recording.video,
            prompt,
            expectations,
            progress,
        )
        .await
        {
            Ok(analysis) => watched.video_analysis = Some(analysis),
            Err(e) => watched.video_problem = Some(format!("the video analysis failed ({e})")),
        }
        if recording.from_screencast {
            watched.notes.push(format!(
                "the expectations were checked on the trace's screencast, made into {} (no video was recorded)",
                recording.video.display()
            ));
        }
        return;
    }
    watched.video_problem = Some(problem);
}

/// One failed test's failing step, watched closely; a note when it cannot be.
async fn watch_failure(
    engine: &Vaider,
    asker: &Asker,
    recordings: &mut Recordings<'_>,
    index: usize,
    progress: &dyn ProgressSink,
    watched: &mut Watched,
) {
    let test = &recordings.report.tests[index];
    let title = test.title.clone();
    let error = test.error.clone();
    let recording = match recordings.of(index).await {
        Ok(recording) => recording,
        Err(why) => {
            watched
                .notes
                .push(format!("the failure of '{title}' was not watched: {why}"));
            return;
        }
    };
    let Some(failing) = recording.failing else {
        watched.notes.push(format!(
            "the failure of '{title}' was not watched closely: its trace names no failed step"
        ));
        return;
    };
    let run = FailedRun {
        title: &title,
        error: error.as_ref(),
        steps: &recording.steps,
        failing,
        video: &recording.video,
    };
    match failure::watch(engine, asker, run, progress).await {
        Ok(analysis) => watched.failures.push(analysis),
        Err(e) => watched.notes.push(format!(
            "the failing step of '{title}' could not be watched ({e})"
        )),
    }
}
