//! `validate_test` as every door runs it (MCP, REST, CLI): run the project's Playwright test,
//! read its report and trace, find its screenshots, have the model watch its video when the
//! agent gave expectations, judge it by the rubric, and answer contracts.md §2's
//! `AgentResult`. Each validation is one history entry (a job) with its model call under it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use vaider_core::analysis::Door;
use vaider_core::job::{Job, JobStart, Verdict};
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use crate::report::{Report, TestReport};
use crate::rubric::{self, Extra, Limits, RubricValidation, ValidationResult};
use crate::runner::{self, RunOutput, RunPlan};
use crate::snapshots::SnapshotChange;
use crate::trace::{self, PageEvents};
use crate::video::{Asker, VideoAnalysis};
use crate::{resolve, screenshots};

/// The run's time limit when the agent gives none: browser start, the tests, and teardown.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest run an agent may ask for.
pub const MAX_RUN_TIMEOUT: Duration = Duration::from_secs(3600);
/// The most of the runner's stderr read for the text rules.
const MAX_STDERR_BYTES: u64 = 1024 * 1024;

/// What a validation is asked.
#[derive(Debug, Clone)]
pub struct ValidateRequest {
    /// The spec file: absolute, or relative to the workspace.
    pub test_path: String,
    /// Where `playwright.config.*` lives; None: the nearest one above the test.
    pub project_dir: Option<String>,
    pub grep: Option<String>,
    /// What the recording must show; each becomes a rubric criterion.
    pub expectations: Vec<String>,
    pub limits: Limits,
    /// The run's time limit; None: [`DEFAULT_RUN_TIMEOUT`].
    pub timeout: Option<Duration>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub door: Door,
    /// Folders a relative path may be relative to (the client's roots, its `cwd`).
    pub base_dirs: Vec<PathBuf>,
}

/// contracts.md §2's `AgentResult`, field for field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    pub success: bool,
    /// `{}` when the test file does not exist, else [`ValidateData`].
    pub data: Value,
    pub error: Option<String>,
    /// Everything, browser start and video analysis included.
    pub execution_time_ms: u64,
    pub cost_usd: f64,
    pub metadata: Value,
}

/// `data` of a validation that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidateData {
    pub validation_result: ValidationResult,
    pub rubric_validation: RubricValidation,
    /// Absolute.
    pub test_path: String,
    pub screenshots: Vec<String>,
    /// This run's folder: the report, test-results (videos, traces), the runner's logs.
    pub artifacts_dir: String,
    /// Per test: title, status, duration, error and location, retries, attachments.
    pub report: Vec<TestReport>,
    /// What the model saw in the recording, when expectations were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_analysis: Option<VideoAnalysis>,
    /// Each failed test's failing step as the model saw it: the step, the screen then, the
    /// first moment it went wrong (the first few failed tests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_analysis: Vec<crate::failure::FailureAnalysis>,
    /// A test that failed and passed on retry: what differed between its attempts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<crate::flaky::FlakyAnalysis>,
    /// The run's failed `toHaveScreenshot`s, now pending review.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_changes: Vec<SnapshotChange>,
}

/// Runs and judges one test file.
pub async fn validate_test(
    engine: &Vaider,
    request: ValidateRequest,
    progress: &dyn ProgressSink,
) -> AgentResult {
    validate_test_as(engine, request, vaider_core::job::new_id(), progress).await
}

/// [`validate_test`] under an id chosen before it starts (from `vaider_core::job::new_id`), so
/// a caller that answers at once (the UI's "Run again") can point to its history entry.
pub async fn validate_test_as(
    engine: &Vaider,
    request: ValidateRequest,
    id: String,
    progress: &dyn ProgressSink,
) -> AgentResult {
    let started = Instant::now();
    let test_file = resolve(&request.test_path, &request.base_dirs);
    if !test_file.is_file() {
        let error = format!("Test file not found: {}", test_file.display());
        record_refusal(engine, (&id, &request), &test_file, &error).await;
        return failure(error, started, json!({}));
    }
    let (project_dir, config) = project_of(&request, &test_file);
    let run_dir = run_folder(engine, &id);
    let job = match start_job(engine, &request, id, &test_file, &run_dir, &project_dir).await {
        Ok(job) => job,
        Err(e) => return failure(e.to_string(), started, json!({})),
    };
    let ffmpeg = runner::playwright_ffmpeg(&project_dir);
    let plan = RunPlan {
        recorder: ffmpeg.as_deref().is_some_and(Path::is_file),
        test_file,
        project_dir,
        config,
        grep: request.grep.clone(),
        run_dir,
        timeout: request
            .timeout
            .unwrap_or(DEFAULT_RUN_TIMEOUT)
            .min(MAX_RUN_TIMEOUT),
    };
    let since = SystemTime::now() - Duration::from_secs(1);
    let output = match runner::run(&plan).await {
        Ok(output) => output,
        Err(e) => {
            let result = failure(e.to_string(), started, json!({}));
            let verdict = Verdict::Error(e.to_string());
            finish(job, &result, format!("could not run: {e}"), verdict, None).await;
            return result;
        }
    };
    let ran = Ran {
        plan,
        output,
        ffmpeg,
        since,
        started,
    };
    judge_run(engine, &request, job, ran, progress).await
}

/// The validation's history entry, `running` until [`finish`] closes it.
async fn start_job(
    engine: &Vaider,
    request: &ValidateRequest,
    id: String,
    test_file: &Path,
    run_dir: &Path,
    project_dir: &Path,
) -> vaider_core::error::Result<Job> {
    engine
        .start_job(JobStart {
            id,
            tool: "validate_test",
            door: request.door,
            source: &test_file.display().to_string(),
            expectations: &request.expectations,
            log_dir: Some(run_dir),
            project: Some(project_dir),
        })
        .await
}

/// The project's folder and config: those the agent named, else the nearest above the test.
fn project_of(request: &ValidateRequest, test_file: &Path) -> (PathBuf, Option<PathBuf>) {
    match request.project_dir.as_deref().map(str::trim) {
        Some(dir) if !dir.is_empty() => {
            let dir = resolve(dir, &request.base_dirs);
            let config = runner::config_in(&dir);
            (dir, config)
        }
        _ => runner::find_project(test_file),
    }
}

/// A run that finished (or was stopped), with what judging it needs.
struct Ran {
    plan: RunPlan,
    output: RunOutput,
    /// Playwright's video recorder, if the project has one.
    ffmpeg: Option<PathBuf>,
    /// A little before the run: screenshots older than this are not the run's.
    since: SystemTime,
    started: Instant,
}

/// Reads what the run left, has the model watch its video for the expectations, judges it by
/// the rubric, keeps the answer in the run's folder and closes the job with it.
async fn judge_run(
    engine: &Vaider,
    request: &ValidateRequest,
    job: Job,
    ran: Ran,
    progress: &dyn ProgressSink,
) -> AgentResult {
    let (plan, output) = (&ran.plan, &ran.output);
    let read = Report::read(&output.report);
    let no_report = read.is_none() && !output.timed_out;
    let report = read.unwrap_or_default();
    let mut validation = read_run(plan, output, &report, ran.since);
    let stderr = read_capped(&output.stderr_log);
    let verdict = crate::verdict::read(&report, &stderr, &plan.project_dir, no_report);
    validation.console_errors.truncate(100);
    let asker = Asker {
        door: request.door,
        parent_id: Some(job.id().to_string()),
        provider: request.provider.clone(),
        model: request.model.clone(),
        timeout: None,
        base_dirs: vec![plan.project_dir.clone()],
    };
    let watched = crate::watch::watch_run(
        engine,
        &asker,
        &report,
        &request.expectations,
        &plan.run_dir,
        progress,
    )
    .await;
    let run = crate::snapshots::Run {
        project: &plan.project_dir,
        config: plan.config.as_deref(),
        report: &output.report,
        door: request.door,
        model: request.model.clone(),
        parent_id: Some(job.id().to_string()),
    };
    let snapshots = crate::snapshots::review(engine, &report, run).await;
    let mut notes = recording_notes(&report, output, ran.ffmpeg.as_deref());
    notes.extend(watched.notes.iter().cloned());
    notes.extend(crate::snapshots::sentence(&snapshots.changes));
    notes.extend(snapshots.note);
    let extra = Extra {
        timed_out_after_sec: output.timed_out.then_some(plan.timeout.as_secs()),
        not_shown: watched
            .video_analysis
            .as_ref()
            .map(VideoAnalysis::not_shown)
            .unwrap_or_default(),
        unclear: watched
            .video_analysis
            .as_ref()
            .map(VideoAnalysis::unclear)
            .unwrap_or_default(),
        video_problem: watched.video_problem.clone(),
        causes: verdict.causes,
        setup_failed: verdict.setup_failed,
        notes,
    };
    let rubric = rubric::judge(&validation, &request.limits, &extra);
    let judged = Judged {
        validation,
        rubric,
        report,
        watched,
        snapshot_changes: snapshots.changes,
        snapshot_cost_usd: snapshots.cost_usd,
    };
    answer(job, &ran, judged, extra.setup_failed).await
}

/// What the run showed and the rubric made of it.
struct Judged {
    validation: ValidationResult,
    rubric: RubricValidation,
    report: Report,
    watched: crate::watch::Watched,
    snapshot_changes: Vec<SnapshotChange>,
    /// What the model's verdicts on the failed snapshots cost.
    snapshot_cost_usd: f64,
}

/// The `AgentResult` with its verdict, kept as the run's `agent-result.json` and in the job.
async fn answer(job: Job, ran: &Ran, judged: Judged, setup_failed: bool) -> AgentResult {
    let plan = &ran.plan;
    // The history shows the run's recording beside the validation's description: the one the
    // model watched (a screencast, when no video was recorded), else the first.
    let video = judged
        .watched
        .video_analysis
        .as_ref()
        .map(|v| v.video.clone())
        .or_else(|| judged.watched.failures.first().map(|f| f.video.clone()))
        .or_else(|| {
            judged
                .report
                .attachments_named("video")
                .find(|p| Path::new(p).is_file())
                .map(str::to_string)
        });
    let cost_usd = judged.watched.cost_usd() + judged.snapshot_cost_usd;
    let data = ValidateData {
        screenshots: judged.validation.screenshots.clone(),
        validation_result: judged.validation,
        rubric_validation: judged.rubric,
        test_path: plan.test_file.display().to_string(),
        artifacts_dir: plan.run_dir.display().to_string(),
        report: judged.report.tests,
        video_analysis: judged.watched.video_analysis,
        failure_analysis: judged.watched.failures,
        flaky: judged.watched.flaky,
        snapshot_changes: judged.snapshot_changes,
    };
    let metadata = metadata(
        job.id(),
        &plan.project_dir,
        plan.config.as_deref(),
        &ran.output,
        &data,
    );
    let mut result = AgentResult {
        success: data.rubric_validation.passed,
        error: data.rubric_validation.error(),
        data: serde_json::to_value(&data).unwrap_or_default(),
        execution_time_ms: ran.started.elapsed().as_millis() as u64,
        cost_usd,
        metadata,
    };
    let verdict = verdict_of(&result, &data, setup_failed);
    result.metadata["verdict"] = json!(verdict_name(&verdict));
    let _ = std::fs::write(
        plan.run_dir.join("agent-result.json"),
        serde_json::to_vec_pretty(&result).unwrap_or_default(),
    );
    let verdict = verdict_of(&result, &data, setup_failed);
    let sentence = sentence(&plan.test_file, &data);
    finish(job, &result, sentence, verdict, video.as_deref()).await;
    result
}

/// `metadata.verdict`: "passed", "failed" (the tests ran and failed: a result) or "error"
/// (Vaider could not get them running). The CLI's exit code and MCP's `isError` follow it.
fn verdict_name(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Failed(_) => "failed",
        Verdict::Error(_) => "error",
    }
}

/// Whether Vaider could not do its job: `metadata.verdict` is "error", or absent (a result
/// refused before it ran, `data: {}`).
pub fn could_not_run(result: &AgentResult) -> bool {
    !result.success && result.metadata.get("verdict").and_then(Value::as_str) != Some("failed")
}

/// A run whose tests ran and did not pass the rubric is a result (`failed`, the failing tests
/// named in the error); one that never got its tests running (config, browser, missing
/// dependency) is Vaider's `error`.
fn verdict_of(result: &AgentResult, data: &ValidateData, setup_failed: bool) -> Verdict {
    let error = || {
        result
            .error
            .clone()
            .unwrap_or_else(|| "failed the rubric".into())
    };
    if result.success {
        Verdict::Passed
    } else if data.validation_result.test_executed && !setup_failed {
        Verdict::Failed(error())
    } else {
        Verdict::Error(error())
    }
}

/// What the run showed, before the video and the rubric.
fn read_run(
    plan: &RunPlan,
    output: &RunOutput,
    report: &Report,
    since: SystemTime,
) -> ValidationResult {
    let ran: Vec<&TestReport> = report
        .tests
        .iter()
        .filter(|t| t.status != "skipped")
        .collect();
    let messages = report.errors.iter().map(String::as_str).chain(
        report
            .tests
            .iter()
            .filter_map(|t| t.error.as_ref())
            .map(|e| e.message.as_str()),
    );
    let launch_failed = messages.into_iter().any(is_launch_failure);
    // A run killed at its timeout writes no report: a recording it had started shows that the
    // browser was up and a test was running.
    let recording_started = report.tests.is_empty() && output.timed_out && {
        let mut videos = Vec::new();
        crate::screenshots::collect_files(&output.output_dir, "webm", &mut videos);
        !videos.is_empty()
    };
    let browser_launched = !launch_failed && (!ran.is_empty() || recording_started);
    let test_executed = browser_launched
        && (recording_started
            || ran
                .iter()
                .any(|t| matches!(t.status.as_str(), "passed" | "failed" | "timedOut")));
    let test_passed = test_executed
        && !output.timed_out
        && output.exit_code == Some(0)
        && ran.iter().all(|t| !t.failed());
    let name = screenshots::test_name(&plan.test_file);
    ValidationResult {
        browser_launched,
        test_executed,
        test_passed,
        screenshots: screenshots::find(&plan.project_dir, &output.output_dir, &name, since),
        execution_time_ms: ran.iter().map(|t| t.duration_ms).sum(),
        ..page_events(report, output).into_validation()
    }
}

impl PageEvents {
    fn into_validation(self) -> ValidationResult {
        ValidationResult {
            console_errors: self.console_errors,
            network_failures: self.network_failures,
            ..ValidationResult::default()
        }
    }
}

/// Playwright's words when the browser does not start.
fn is_launch_failure(message: &str) -> bool {
    !message.contains("ffmpeg")
        && [
            "browserType.launch",
            "Failed to launch",
            "Executable doesn't exist",
        ]
        .iter()
        .any(|mark| message.contains(mark))
}

/// From the traces when the run has any (zipped, or not yet for a run stopped at its
/// timeout), else the text rules on the runner's stderr.
fn page_events(report: &Report, output: &RunOutput) -> PageEvents {
    let mut events = PageEvents::default();
    let mut traces = 0;
    for path in report.attachments_named("trace") {
        match trace::read_trace(Path::new(path)) {
            Ok(found) => {
                traces += 1;
                events.extend(found);
            }
            // A refused trace counts as none: the unzipped files or stderr are read instead.
            Err(e) => tracing::warn!("{e}"),
        }
    }
    if traces == 0 {
        events = trace::read_unfinished(&output.output_dir)
            .unwrap_or_else(|| trace::from_stderr(&read_capped(&output.stderr_log)));
    }
    events
}

fn read_capped(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(MAX_STDERR_BYTES).read_to_string(&mut text);
    }
    text
}

/// The run's folder, in the data folder: nothing of Vaider's is written among the user's
/// tests (their test folder is theirs, and Playwright would collect from it).
fn run_folder(engine: &Vaider, id: &str) -> PathBuf {
    engine
        .data_dir()
        .join("validations")
        .join(crate::folder_name(id))
}

/// Says what the run did not record and why: no video when Playwright's recorder is missing
/// (Vaider then asks for none; the trace still has the screencast).
fn recording_notes(report: &Report, output: &RunOutput, ffmpeg: Option<&Path>) -> Vec<String> {
    let recorded = report.attachments_named("video").next().is_some();
    if output.video || recorded || report.tests.is_empty() {
        return Vec::new();
    }
    let place = ffmpeg.map_or_else(
        || "where Playwright looks for it".to_string(),
        |p| format!("at {}", p.display()),
    );
    vec![format!(
        "No video recorded: Playwright's video recorder (ffmpeg) is not installed {place}; run `npx playwright install ffmpeg` (or link a system ffmpeg there) for video. The trace (trace.zip, `npx playwright show-trace <file>`) has the run's screencast"
    )]
}

fn metadata(
    id: &str,
    project: &Path,
    config: Option<&Path>,
    output: &RunOutput,
    data: &ValidateData,
) -> Value {
    // Each trace with the command that opens it in Playwright's trace viewer.
    let traces: Vec<Value> = data
        .report
        .iter()
        .flat_map(|t| t.attachment("trace"))
        .map(|path| json!({"path": path, "open": format!("npx playwright show-trace {}", shell_quote(path))}))
        .collect();
    json!({
        "traces": traces,
        "vaider_version": vaider_core::VERSION,
        "interaction_id": id,
        "project_dir": project.display().to_string(),
        "playwright_config": config.map(|c| c.display().to_string()),
        "runner": {
            "exit_code": output.exit_code,
            "timed_out": output.timed_out,
            "duration_ms": output.duration_ms,
            "stdout_log": output.stdout_log.display().to_string(),
            "stderr_log": output.stderr_log.display().to_string(),
            "config": output.config.display().to_string(),
            "report": output.report.display().to_string(),
            "video": output.video,
        },
    })
}

/// A path as one shell word.
fn shell_quote(path: &str) -> String {
    if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

pub(crate) fn failure(error: String, started: Instant, metadata: Value) -> AgentResult {
    AgentResult {
        success: false,
        data: json!({}),
        error: Some(error),
        execution_time_ms: started.elapsed().as_millis() as u64,
        cost_usd: 0.0,
        metadata,
    }
}

/// One line for the history list.
fn sentence(test_file: &Path, data: &ValidateData) -> String {
    let name = test_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let v = &data.validation_result;
    let verdict = if data.rubric_validation.passed {
        "passed the rubric"
    } else {
        "failed the rubric"
    };
    format!(
        "{name} {verdict}: {} tests, {} screenshots, {} console errors, {} network failures, {} ms.",
        data.report.len(),
        v.screenshots.len(),
        v.console_errors.len(),
        v.network_failures.len(),
        v.execution_time_ms
    )
}

pub(crate) async fn finish(
    job: Job,
    result: &AgentResult,
    description: String,
    verdict: Verdict,
    video: Option<&str>,
) {
    let value = serde_json::to_value(result).unwrap_or_default();
    let media = video.map(|path| (path.to_string(), video_mime(path)));
    if let Err(e) = job.finish(description, value, verdict, media).await {
        tracing::error!("{e}");
    }
}

/// Playwright records WebM; a project's own recorder may not.
fn video_mime(path: &str) -> &'static str {
    if path.to_ascii_lowercase().ends_with(".mp4") {
        "video/mp4"
    } else {
        "video/webm"
    }
}

/// A validation refused before it ran is in the history too, already closed.
async fn record_refusal(
    engine: &Vaider,
    (id, request): (&str, &ValidateRequest),
    test: &Path,
    error: &str,
) {
    let start = JobStart {
        id: id.to_string(),
        tool: "validate_test",
        door: request.door,
        source: &test.display().to_string(),
        expectations: &request.expectations,
        log_dir: None,
        project: request.base_dirs.first().map(PathBuf::as_path),
    };
    if let Ok(job) = engine.start_job(start).await {
        let result = failure(error.to_string(), Instant::now(), json!({}));
        let verdict = Verdict::Error(error.to_string());
        finish(job, &result, error.to_string(), verdict, None).await;
    }
}
