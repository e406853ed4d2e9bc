//! `POST /api/interactions/{id}/run-again`: the same media through the same pipeline (door
//! `ui`, cache off), with the same or an edited prompt and expectations.

use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use vaider_core::progress::NoProgress;
use vaider_core::{AnalysisRequest, Door};

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
    tokio::spawn(async move {
        // The outcome lands in the history, which the page follows through /api/events.
        let _ = engine.analyse(request, &NoProgress).await;
    });
    Ok((StatusCode::ACCEPTED, Json(RunAgainStarted { id: new_id })))
}
