//! What the model watches of one test: its video, or, when Playwright recorded none (its own
//! ffmpeg is missing on many machines), its trace's screencast made into one; and its steps
//! on that recording's clock, read from the same attempt's trace. Both come from the test's
//! last attempt, whose video and trace the report lists.

use std::path::{Path, PathBuf};

use crate::failure::StepOnClock;
use crate::report::TestReport;
use crate::timeline::{self, Timeline};

/// A test's recording and its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub video: PathBuf,
    /// Made from the trace's screencast frames: no video was recorded.
    pub from_screencast: bool,
    /// The test's own steps (no hooks or fixtures), on the video's clock; empty without a trace.
    pub steps: Vec<StepOnClock>,
    /// The step the failure belongs to, when the test failed and its trace says where.
    pub failing: Option<usize>,
}

/// The test's recording, or why it has none. `out_dir` is where a screencast video is made,
/// named after `index` (the test's place in the report).
pub async fn of_test(test: &TestReport, out_dir: &Path, index: usize) -> Result<Recording, String> {
    let file = |name| {
        test.attachment(name)
            .map(PathBuf::from)
            .find(|p| p.is_file())
    };
    let screencast = out_dir.join(format!("screencast-{}.webm", index + 1));
    of_files(file("video"), file("trace"), &screencast).await
}

/// The recording of a test whose video and trace are these files, if it has them; a
/// screencast is made at `screencast` when there is no video.
pub async fn of_files(
    video: Option<PathBuf>,
    trace: Option<PathBuf>,
    screencast: &Path,
) -> Result<Recording, String> {
    let video = video.filter(|p| p.is_file());
    let trace = trace.filter(|p| p.is_file());
    let timeline = match trace.clone() {
        // Reading the zip is blocking I/O.
        Some(t) => tokio::task::spawn_blocking(move || timeline::read_timeline(&t).ok())
            .await
            .ok()
            .flatten(),
        None => None,
    };
    let (steps, failing) = timeline.as_ref().map(steps_of).unwrap_or_default();
    if let Some(video) = video {
        return Ok(Recording {
            video,
            from_screencast: false,
            steps,
            failing,
        });
    }
    let (Some(trace), Some(timeline)) = (trace, timeline) else {
        return Err(
            "no video was recorded, and there is no trace whose screencast could stand in for it"
                .into(),
        );
    };
    let made = crate::screencast::write_screencast(&trace, &timeline, screencast)
        .await
        .map_err(|e| {
            format!(
                "no video was recorded, and the trace's screencast could not stand in for it: {e}"
            )
        })?;
    Ok(Recording {
        video: made.path,
        from_screencast: true,
        steps,
        failing,
    })
}

/// The test's own steps with a number and a time, and which of them failed (the innermost
/// step the error belongs to).
pub fn steps_of(timeline: &Timeline) -> (Vec<StepOnClock>, Option<usize>) {
    let failing = timeline.failing_step().and_then(|f| f.step.number);
    let steps = timeline
        .steps
        .iter()
        .filter(|s| !s.setup)
        .filter_map(|s| {
            Some(StepOnClock {
                number: s.number?,
                title: s.title.clone(),
                start: s.start?,
                end: s.end,
                depth: s.depth,
                error: s.error.clone(),
            })
        })
        .collect();
    (steps, failing)
}
