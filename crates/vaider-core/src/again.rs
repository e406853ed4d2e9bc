//! Running a recorded call again (the history's "Run again"): a model call is rebuilt from its
//! history row and its `request.json` (the pipeline's own file), a job (a test plan's run, a
//! test validation) by the capability that registered how to start its jobs again. The doors
//! call [`run_again`] and know no capability by name.

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::analysis::{AnalysisRequest, Door};
use crate::history::Interaction;
use crate::progress::NoProgress;
use crate::Vaider;

/// What a history entry lets a person run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Offer {
    /// A model call: the same media, with the prompt and expectations editable.
    EditPrompt,
    /// A job: the same inputs (the plan, the test file), nothing to edit.
    SameInputs,
}

/// A person's changes to a model call run again; None keeps the recorded value.
#[derive(Debug, Clone, Default)]
pub struct Edits {
    pub prompt: Option<String>,
    pub expectations: Option<Vec<String>>,
}

/// Why an entry was not run again.
#[derive(Debug, thiserror::Error)]
pub enum AgainError {
    /// The entry holds nothing to run again; the message says what to do instead.
    #[error("{0}")]
    Cannot(String),
    /// The capability refused with its own error (a plan gone), which the doors map as they
    /// map that capability's errors.
    #[error(transparent)]
    Refused(Box<dyn std::error::Error + Send + Sync>),
}

/// A capability's kind of history job, and how to start one again from its row.
pub trait JobAgain: Send + Sync {
    /// The tool name its jobs' rows carry in the history.
    fn tool(&self) -> &'static str;
    /// The job's kind as the history's detail names it (`test_plan_run`).
    fn kind(&self) -> &'static str;
    /// Starts the job again from its row and its stored answer and answers the new row's id
    /// at once; the work goes on in a task of its own. Called inside the async runtime.
    fn start_again(
        &self,
        engine: Arc<Vaider>,
        row: &Interaction,
        stored: Option<Value>,
    ) -> Result<String, AgainError>;
}

static JOBS: RwLock<Vec<&'static dyn JobAgain>> = RwLock::new(Vec::new());

/// Makes a capability's jobs known by their tool name; registering one twice changes nothing.
pub fn register_job(job: &'static dyn JobAgain) {
    let mut jobs = JOBS.write().unwrap_or_else(|e| e.into_inner());
    if !jobs.iter().any(|j| j.tool() == job.tool()) {
        jobs.push(job);
    }
}

/// The registered job kind of a history row's tool, if the row is such a job.
pub fn job_of(tool: &str) -> Option<&'static dyn JobAgain> {
    let jobs = JOBS.read().unwrap_or_else(|e| e.into_inner());
    jobs.iter().copied().find(|j| j.tool() == tool)
}

/// What the entry lets a person run again, if anything.
pub fn offer(row: &Interaction) -> Option<Offer> {
    if job_of(&row.tool).is_some() {
        Some(Offer::SameInputs)
    } else if crate::task::by_name(&row.tool).is_some() && row.media_path.is_some() {
        Some(Offer::EditPrompt)
    } else {
        None
    }
}

/// Runs the entry again and answers the new row's id at once; its outcome lands in the
/// history. Reads the history and files: call it on a blocking thread inside the runtime.
pub fn run_again(
    engine: &Arc<Vaider>,
    row: &Interaction,
    edits: Edits,
) -> Result<String, AgainError> {
    if let Some(job) = job_of(&row.tool) {
        let stored = engine.history().job_result(&row.id).ok().flatten();
        return job.start_again(engine.clone(), row, stored);
    }
    let mut request = AnalysisRequest::again(row, edits)?;
    let id = uuid::Uuid::now_v7().simple().to_string();
    request.id = Some(id.clone());
    let engine = engine.clone();
    tokio::spawn(async move {
        let _ = engine.analyse(request, &NoProgress).await;
    });
    Ok(id)
}

impl AnalysisRequest {
    /// The recorded model call, asked again from the UI with the cache off: the same checked
    /// file, provider, model, options and time limit, with the person's edits.
    pub fn again(row: &Interaction, edits: Edits) -> Result<AnalysisRequest, AgainError> {
        let tool = crate::task::by_name(&row.tool)
            .ok_or_else(|| AgainError::Cannot(format!("{} cannot be run again.", row.tool)))?;
        // The file that was checked, so a relative path or a URL is not resolved a second time.
        let source = row.media_path.clone().ok_or_else(|| {
            AgainError::Cannot(
                "This request was refused before any file was read, so there is nothing to run again. Fix the path in the agent's call instead.".into(),
            )
        })?;
        let mut request = AnalysisRequest::new(tool, Door::Ui, source);
        request.compare_with = row.expected_path.clone();
        request.prompt = Some(edits.prompt.unwrap_or_else(|| row.prompt.clone()));
        request.expectations = edits
            .expectations
            .unwrap_or_else(|| row.expectations.clone());
        request.provider = Some(row.provider.clone());
        request.model = Some(row.model.clone());
        request.no_cache = true;
        if let Some(recorded) = row.log_dir.as_deref().and_then(recorded_request) {
            if let Some(options) = recorded.get("options") {
                request.options = serde_json::from_value(options.clone()).unwrap_or_default();
            }
            request.timeout = recorded
                .get("timeoutSec")
                .and_then(Value::as_f64)
                .and_then(|t| Duration::try_from_secs_f64(t).ok());
        }
        Ok(request)
    }
}

/// The `request.json` the pipeline wrote for the call, when it is still there and readable.
fn recorded_request(log_dir: &str) -> Option<Value> {
    let path = Path::new(log_dir).join("request.json");
    // A request file is a few kilobytes; anything far larger is not one the pipeline wrote.
    if std::fs::metadata(&path).ok()?.len() > 8 * 1024 * 1024 {
        return None;
    }
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn row(tool: &str, media: Option<&str>, log_dir: Option<&str>) -> Interaction {
        serde_json::from_value(json!({
            "id": "a1", "createdAt": "2026-11-27T10:00:00Z", "finishedAt": null, "tool": tool,
            "door": "mcp", "source": "shot.png", "mediaPath": media, "mediaType": "image/png",
            "mediaSha256": null, "sizeBytes": null, "provider": "gemini", "model": "gemini-x",
            "prompt": "What failed?", "expectations": ["an error shows"], "status": "ok",
            "cached": false, "description": null, "errorCode": null, "errorMessage": null,
            "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0, "durationMs": null,
            "logDir": log_dir, "project": null
        }))
        .unwrap()
    }

    #[test]
    fn a_recorded_call_is_rebuilt_with_its_options_and_time_limit_and_the_edits() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = json!({"options": {"context": "signing in"}, "timeoutSec": 45.5});
        std::fs::write(dir.path().join("request.json"), recorded.to_string()).unwrap();
        let row = row(
            "diagnose_error_screenshot",
            Some("/abs/shot.png"),
            dir.path().to_str(),
        );
        let edits = Edits {
            prompt: Some("Only name the error.".into()),
            expectations: None,
        };
        let request = AnalysisRequest::again(&row, edits).unwrap();
        assert_eq!(request.tool.as_str(), "diagnose_error_screenshot");
        assert_eq!(
            (request.door, request.source.as_str()),
            (Door::Ui, "/abs/shot.png")
        );
        assert_eq!(request.prompt.as_deref(), Some("Only name the error."));
        assert_eq!(request.expectations, ["an error shows"]);
        assert_eq!(request.options.context.as_deref(), Some("signing in"));
        assert_eq!(request.timeout, Some(Duration::from_secs_f64(45.5)));
        assert_eq!(
            (request.provider.as_deref(), request.model.as_deref()),
            (Some("gemini"), Some("gemini-x"))
        );
        assert!(request.no_cache);
        assert_eq!(offer(&row), Some(Offer::EditPrompt));
    }

    #[test]
    fn without_its_file_or_its_task_there_is_nothing_to_run_again() {
        let refused = row("analyze_video", None, None);
        assert_eq!(offer(&refused), None);
        let error = AnalysisRequest::again(&refused, Edits::default()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("refused before any file was read"),
            "{error}"
        );
        let unknown = row("no_such_tool", Some("/abs/a.png"), None);
        assert_eq!(offer(&unknown), None);
        assert!(matches!(
            AnalysisRequest::again(&unknown, Edits::default()),
            Err(AgainError::Cannot(_))
        ));
    }

    struct Replay;

    impl JobAgain for Replay {
        fn tool(&self) -> &'static str {
            "replay_job_for_tests"
        }
        fn kind(&self) -> &'static str {
            "replay"
        }
        fn start_again(
            &self,
            _: Arc<Vaider>,
            _: &Interaction,
            _: Option<Value>,
        ) -> Result<String, AgainError> {
            Ok("new".into())
        }
    }

    #[test]
    fn a_registered_job_is_found_by_its_tool_once() {
        register_job(&Replay);
        register_job(&Replay);
        let jobs = JOBS.read().unwrap();
        assert_eq!(jobs.iter().filter(|j| j.tool() == Replay.tool()).count(), 1);
        drop(jobs);
        assert_eq!(
            job_of("replay_job_for_tests").map(|j| j.kind()),
            Some("replay")
        );
        assert_eq!(
            offer(&row("replay_job_for_tests", None, None)),
            Some(Offer::SameInputs)
        );
    }
}
