//! `analyse_test_results`: for a Playwright run that already finished (its `test-results/`
//! folder or its JSON report), nothing is run: each failed test's failing step (or, when its trace
//! names none, its whole video) goes to the model with
//! the test's error as context, and one summary says, test by test, what the screen showed
//! when it failed. One history entry (a job), with each model call under it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;
use vaider_core::analysis::Door;
use vaider_core::job::JobStart;
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use crate::failure::{self, FailedRun, FailureAnalysis};
use crate::recording;
use crate::report::{Report, TestError, TestReport};
use crate::service::{failure, finish, AgentResult};
use crate::video::{self, Asker, VideoAnalysis};

/// The most of an `error-context.md` taken as the error, when there is no report.
const MAX_CONTEXT_CHARS: usize = 1000;

/// What is asked.
#[derive(Debug, Clone)]
pub struct ResultsRequest {
    /// A `test-results/` folder, or a JSON report file.
    pub path: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Each video analysis's time limit; None: the configured one.
    pub timeout: Option<Duration>,
    pub door: Door,
    pub base_dirs: Vec<PathBuf>,
}

/// `data` of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsData {
    pub source: String,
    pub failed_tests: Vec<FailedTest>,
    /// Test by test, what the screen showed when it failed.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedTest {
    pub title: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TestError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<String>,
    /// Its last attempt's trace, which places its steps on the video's clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The whole recording, watched with the error as context (when its trace names no
    /// failed step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<VideoAnalysis>,
    /// The failing step watched closely (when its trace names it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureAnalysis>,
    /// Why there is no analysis (no video, the model failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

pub async fn analyse_test_results(
    engine: &Vaider,
    request: ResultsRequest,
    progress: &dyn ProgressSink,
) -> AgentResult {
    let started = Instant::now();
    let path = crate::resolve(&request.path, &request.base_dirs);
    let failed = match failed_tests(&path) {
        Ok(failed) => failed,
        Err(error) => return failure(error, started, json!({})),
    };
    let job = engine
        .start_job(JobStart {
            id: vaider_core::job::new_id(),
            tool: "analyse_test_results",
            door: request.door,
            source: &path.display().to_string(),
            expectations: &[],
            log_dir: None,
            project: request.base_dirs.first().map(PathBuf::as_path),
        })
        .await;
    let job = match job {
        Ok(job) => job,
        Err(e) => return failure(e.to_string(), started, json!({})),
    };
    let asker = Asker {
        door: request.door,
        parent_id: Some(job.id().to_string()),
        provider: request.provider.clone(),
        model: request.model.clone(),
        timeout: request.timeout,
        base_dirs: request.base_dirs.clone(),
    };
    // Where a screencast is made for a test without video: Vaider's own folder, not the
    // user's test results.
    let out_dir = engine
        .data_dir()
        .join("validations")
        .join(crate::folder_name(job.id()));
    let tests = watch_all(engine, &asker, failed, &out_dir, progress).await;
    let data = ResultsData {
        source: path.display().to_string(),
        summary: summary(&tests),
        failed_tests: tests,
    };
    let result = AgentResult {
        success: true,
        error: None,
        data: serde_json::to_value(&data).unwrap_or_default(),
        execution_time_ms: started.elapsed().as_millis() as u64,
        cost_usd: cost_of(&data.failed_tests),
        metadata: json!({"vaider_version": vaider_core::VERSION, "interaction_id": job.id()}),
    };
    let description = format!("{} failed tests analysed.", data.failed_tests.len());
    let video = data.failed_tests.iter().find_map(|t| {
        let failure = t.failure.as_ref().map(|f| f.video.clone());
        failure.or_else(|| t.analysis.as_ref().map(|a| a.video.clone()))
    });
    let verdict = vaider_core::job::Verdict::Passed;
    finish(job, &result, description, verdict, video.as_deref()).await;
    result
}

/// The failed tests of a report file, of a folder's report, or of its test folders.
fn failed_tests(path: &Path) -> Result<Vec<FailedTest>, String> {
    if path.is_file() {
        let report = Report::read(path).ok_or_else(|| {
            format!(
                "{} is not a Playwright JSON report (run with --reporter=json)",
                path.display()
            )
        })?;
        return Ok(from_report(&report));
    }
    if !path.is_dir() {
        return Err(format!("Test results not found: {}", path.display()));
    }
    if let Some(report) = report_beside(path) {
        return Ok(from_report(&report));
    }
    Ok(from_folders(path))
}

fn from_report(report: &Report) -> Vec<FailedTest> {
    report
        .tests
        .iter()
        .filter(|t| t.failed())
        .map(|t: &TestReport| FailedTest {
            title: t.title.clone(),
            status: t.status.clone(),
            error: t.error.clone(),
            video: t.attachment("video").next().map(str::to_string),
            trace: t.attachment("trace").next().map(str::to_string),
            analysis: None,
            failure: None,
            problem: None,
        })
        .collect()
}

/// A JSON report in the folder or its parent (where a run with the JSON reporter leaves it)
/// whose attachments lie in this folder.
fn report_beside(folder: &Path) -> Option<Report> {
    let prefix = folder.display().to_string();
    let dirs = [Some(folder), folder.parent()];
    for dir in dirs.into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            if let Some(report) = Report::read(&path) {
                let ours = report
                    .tests
                    .iter()
                    .flat_map(|t| t.attachments.iter())
                    .filter_map(|a| a.path.as_deref())
                    .any(|p| p.starts_with(&prefix));
                if ours {
                    return Some(report);
                }
            }
        }
    }
    None
}

/// Without a report: each test's folder where Playwright left a failure's traces
/// (`test-failed-*.png`, `error-context.md`), its error from `error-context.md`.
fn from_folders(folder: &Path) -> Vec<FailedTest> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return found;
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|e| e.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        let named = |f: &dyn Fn(&str) -> bool| {
            files
                .iter()
                .find(|p| p.file_name().is_some_and(|n| f(&n.to_string_lossy())))
                .cloned()
        };
        let context = named(&|n| n == "error-context.md");
        let failed_shot = named(&|n| n.starts_with("test-failed-") && n.ends_with(".png"));
        if context.is_none() && failed_shot.is_none() {
            continue;
        }
        let message = context
            .and_then(|c| read_start(&c, 4 * MAX_CONTEXT_CHARS as u64))
            .map(|t| t.chars().take(MAX_CONTEXT_CHARS).collect::<String>());
        found.push(FailedTest {
            title: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            status: "failed".into(),
            error: message.map(|message| TestError {
                message,
                location: None,
            }),
            video: named(&|n| n.ends_with(".webm")).map(|p| p.display().to_string()),
            trace: named(&|n| n == "trace.zip").map(|p| p.display().to_string()),
            analysis: None,
            failure: None,
            problem: None,
        });
    }
    found
}

/// Watches each failed test in turn, as long as the request's model calls last; the
/// tests past the cap say why they were not watched.
async fn watch_all(
    engine: &Vaider,
    asker: &Asker,
    failed: Vec<FailedTest>,
    out_dir: &Path,
    progress: &dyn ProgressSink,
) -> Vec<FailedTest> {
    let mut tests = Vec::new();
    let cap = engine.config().max_model_calls.max(1) as usize;
    let mut calls = 0;
    for (index, mut test) in failed.into_iter().enumerate() {
        let has_video = [&test.video, &test.trace]
            .into_iter()
            .flatten()
            .any(|v| Path::new(v).is_file());
        if has_video && calls >= cap {
            test.problem = Some(format!(
                "not analysed: this request may make {cap} model calls (max_model_calls, VAIDER_MAX_MODEL_CALLS), and they were spent on the tests before"
            ));
            tests.push(test);
            continue;
        }
        calls += usize::from(has_video);
        tests.push(watch(engine, asker, test, index, out_dir, progress).await);
    }
    tests
}

/// What the model calls for the tests' videos cost in all.
fn cost_of(tests: &[FailedTest]) -> f64 {
    let whole: f64 = tests
        .iter()
        .filter_map(|t| t.analysis.as_ref())
        .map(|a| a.cost_usd)
        .sum();
    let failing: f64 = tests
        .iter()
        .filter_map(|t| t.failure.as_ref())
        .map(|a| a.cost_usd)
        .sum();
    whole + failing
}

/// One failed test: its failing step watched closely when its trace names it, else its whole
/// recording with the error as context. Without a video, the trace's screencast stands in.
async fn watch(
    engine: &Vaider,
    asker: &Asker,
    mut test: FailedTest,
    index: usize,
    out_dir: &Path,
    progress: &dyn ProgressSink,
) -> FailedTest {
    let file = |path: &Option<String>| path.as_deref().map(PathBuf::from);
    let screencast = out_dir.join(format!("screencast-{}.webm", index + 1));
    let recording =
        match recording::of_files(file(&test.video), file(&test.trace), &screencast).await {
            Ok(recording) => recording,
            Err(why) => {
                test.problem = Some(why);
                return test;
            }
        };
    if recording.from_screencast {
        test.video = Some(recording.video.display().to_string());
    }
    if let Some(failing) = recording.failing {
        let run = FailedRun {
            title: &test.title,
            error: test.error.as_ref(),
            steps: &recording.steps,
            failing,
            video: &recording.video,
        };
        match failure::watch(engine, asker, run, progress).await {
            Ok(analysis) => test.failure = Some(analysis),
            Err(problem) => {
                test.problem = Some(format!("the failing step could not be watched ({problem})"))
            }
        }
        return test;
    }
    let prompt = failure_prompt(&test);
    match video::analyse(engine, asker, &recording.video, Some(prompt), &[], progress).await {
        Ok(analysis) => test.analysis = Some(analysis),
        Err(problem) => test.problem = Some(format!("the video analysis failed ({problem})")),
    }
    test
}

/// The first `max` bytes of a text file, never more (a test's own file may be huge).
fn read_start(path: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(max)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn failure_prompt(test: &FailedTest) -> String {
    let error = test
        .error
        .as_ref()
        .map(|e| match &e.location {
            Some(at) => format!("{} (at {at})", e.message),
            None => e.message.clone(),
        })
        .unwrap_or_else(|| "no error message was recorded".into());
    format!(
        "This is the recording of the Playwright test \"{}\", which failed with:\n{}\n\n\
         Describe step by step, with timestamps, what the screen shows, then say what it \
         showed at the moment the test failed and what likely made it fail.",
        test.title, error
    )
}

/// Test by test: the title, the first line of the error, what the screen showed.
fn summary(tests: &[FailedTest]) -> String {
    if tests.is_empty() {
        return "No test failed.".into();
    }
    let mut lines = vec![format!("{} failed tests:", tests.len())];
    for (i, test) in tests.iter().enumerate() {
        let error = test
            .error
            .as_ref()
            .and_then(|e| e.message.lines().next())
            .unwrap_or("no error message");
        let seen = match (&test.failure, &test.analysis, &test.problem) {
            (Some(f), _, _) => f.sentence(),
            (None, Some(a), _) => format!(
                "the screen showed: {}",
                crate::trace::cut(a.description.trim())
            ),
            (None, None, Some(problem)) => format!("not watched: {problem}"),
            (None, None, None) => "not watched".into(),
        };
        lines.push(format!(
            "{}. {} — {}; {}",
            i + 1,
            test.title,
            error.trim(),
            seen
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_folders_are_found_without_a_report() {
        let dir = tempfile::tempdir().unwrap();
        let failed = dir.path().join("cart-adds-an-item-chromium");
        let passed = dir.path().join("cart-lists-items-chromium");
        std::fs::create_dir_all(&failed).unwrap();
        std::fs::create_dir_all(&passed).unwrap();
        std::fs::write(failed.join("error-context.md"), "Error: expected 2 items").unwrap();
        std::fs::write(failed.join("video.webm"), b"webm").unwrap();
        std::fs::write(passed.join("video.webm"), b"webm").unwrap();
        let tests = failed_tests(dir.path()).unwrap();
        assert_eq!(tests.len(), 1);
        assert_eq!(tests[0].title, "cart-adds-an-item-chromium");
        assert_eq!(
            tests[0].error.as_ref().unwrap().message,
            "Error: expected 2 items"
        );
        assert!(tests[0].video.as_ref().unwrap().ends_with("video.webm"));
        assert!(failed_tests(&dir.path().join("nope"))
            .unwrap_err()
            .starts_with("Test results not found"));
    }

    #[test]
    fn the_summary_goes_test_by_test() {
        let test = |title: &str, problem: Option<&str>| FailedTest {
            title: title.into(),
            status: "failed".into(),
            error: Some(TestError {
                message: "Error: timed out\nmore".into(),
                location: None,
            }),
            video: None,
            trace: None,
            analysis: None,
            failure: None,
            problem: problem.map(str::to_string),
        };
        let text = summary(&[test("a", Some("no video")), test("b", None)]);
        assert_eq!(
            text,
            "2 failed tests:\n1. a — Error: timed out; not watched: no video\n2. b — Error: timed out; not watched"
        );
    }
}
