//! `POST /api/interactions/{id}/run-again`: the same media through the same pipeline (door
//! `ui`, cache off), with the same or an edited prompt and expectations. A test plan's run or a
//! test validation is run again through its own service (the plan, or the test file), as the
//! tool that started it would.

use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use vaider_core::history::Interaction;
use vaider_core::progress::NoProgress;
use vaider_core::{AnalysisRequest, Door};
use vaider_qa::service::{self as qa_service, RunRequest};
use vaider_validate::{Limits, ValidateRequest};

use super::{find, read_log_file};
use crate::api_error::ApiError;
use crate::AppState;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RunAgainBody {
    prompt: Option<String>,
    expectations: Option<Vec<String>>,
}

/// The new interaction's id, answered at once; its row arrives through `/api/events`.
#[derive(Debug, Serialize)]
pub(super) struct RunAgainStarted {
    id: String,
}

pub(super) async fn run_again(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    body: Option<Json<RunAgainBody>>,
) -> Result<(StatusCode, Json<RunAgainStarted>), ApiError> {
    let body = body.map(|Json(b)| b).unwrap_or_default();
    let row = find(&state, &id).await?;
    match row.tool.as_str() {
        "run_test_plan" => return plan_again(&state, &row).await,
        "validate_test" => return validation_again(&state, &row).await,
        _ => {}
    }
    let request_json = read_log_file(row.log_dir.as_deref(), "request.json");
    let tool = vaider_core::task::by_name(&row.tool)
        .ok_or_else(|| ApiError::bad_request(format!("{} cannot be run again.", row.tool)))?;
    // The file that was checked, so a relative path or a URL is not resolved a second time.
    let source = row.media_path.clone().ok_or_else(|| {
        ApiError::bad_request(
            "This request was refused before any file was read, so there is nothing to run again. Fix the path in the agent's call instead.",
        )
    })?;
    let mut request = AnalysisRequest::new(tool, Door::Ui, source);
    request.compare_with = row.expected_path.clone();
    request.prompt = Some(body.prompt.unwrap_or(row.prompt));
    request.expectations = body.expectations.unwrap_or(row.expectations);
    request.provider = Some(row.provider);
    request.model = Some(row.model);
    request.no_cache = true;
    if let Some(request_json) = &request_json {
        if let Some(options) = request_json.get("options") {
            request.options = serde_json::from_value(options.clone()).unwrap_or_default();
        }
        request.timeout = request_json
            .get("timeoutSec")
            .and_then(Value::as_f64)
            .and_then(|t| Duration::try_from_secs_f64(t).ok());
    }
    let new_id = uuid::Uuid::now_v7().simple().to_string();
    request.id = Some(new_id.clone());
    let engine = state.engine.clone();
    Ok(started(new_id, async move {
        let _ = engine.analyse(request, &NoProgress).await;
    }))
}

/// Answers 202 with the new id at once and does the work after: its outcome lands in the
/// history, which the page follows through /api/events.
fn started(
    id: String,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> (StatusCode, Json<RunAgainStarted>) {
    tokio::spawn(work);
    (StatusCode::ACCEPTED, Json(RunAgainStarted { id }))
}

/// What the row's job kept as its result (a test run, a validation), if anything.
async fn stored_result(state: &AppState, row: &Interaction) -> Result<Option<Value>, ApiError> {
    let history = state.engine.history().clone();
    let id = row.id.clone();
    super::blocking(move || history.job_result(&id)).await
}

/// The plan of a run, run again against the same base URL, through the QA service.
async fn plan_again(
    state: &AppState,
    row: &Interaction,
) -> Result<(StatusCode, Json<RunAgainStarted>), ApiError> {
    let stored = stored_result(state, row).await?;
    let run = stored.as_ref().map(|r| &r["testRun"]);
    let (Some(plan_id), Some(workspace)) = (
        run.and_then(|r| r["planId"].as_str()),
        row.project.as_deref(),
    ) else {
        return Err(ApiError::bad_request(
            "This run did not record its plan, so it cannot be run again from here: run the plan from the Plans page.",
        ));
    };
    let request = RunRequest {
        plan_id: plan_id.to_string(),
        base_url: run.and_then(|r| r["baseUrl"].as_str()).map(str::to_string),
        workspace: PathBuf::from(workspace),
        door: Door::Ui,
        headless: true,
        run_id: None,
    };
    // The one mapping of a QA error to the API's (a plan gone is a 404, with its code).
    let ready = qa_service::prepare_run(request)?;
    let run_id = ready.run_id.clone();
    let engine = state.engine.clone();
    // The outcome is also in .qa-agent/runs/.
    Ok(started(run_id, async move {
        if let Err(error) = qa_service::run_prepared(&engine, ready).await {
            tracing::warn!(%error, "a run started again from the UI could not run");
        }
    }))
}

/// The test file of a validation, validated again with its expectations and project folder.
async fn validation_again(
    state: &AppState,
    row: &Interaction,
) -> Result<(StatusCode, Json<RunAgainStarted>), ApiError> {
    let stored = stored_result(state, row).await?;
    let project_dir = stored
        .as_ref()
        .and_then(|r| r["metadata"]["project_dir"].as_str())
        .map(str::to_string);
    let request = ValidateRequest {
        test_path: row.source.clone(),
        project_dir,
        grep: None,
        expectations: row.expectations.clone(),
        limits: Limits::default(),
        timeout: None,
        provider: None,
        model: None,
        door: Door::Ui,
        base_dirs: row.project.iter().map(PathBuf::from).collect(),
    };
    let new_id = vaider_core::job::new_id();
    let engine = state.engine.clone();
    let job_id = new_id.clone();
    Ok(started(new_id, async move {
        vaider_validate::validate_test_as(&engine, request, job_id, &NoProgress).await;
    }))
}
