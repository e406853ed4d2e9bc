//! The Plans page's API: the workspaces whose `.qa-agent/` the history knows, the plans in one
//! (with each plan's last run), and "Run", which starts `run_test_plan` through the same service
//! the MCP tool calls and answers at once with the run's id, whose history page then shows it
//! running and, when it ends, its steps and video. A plan Vaider did not write shows what it
//! reaches, and a signed-in page (a person, `vaider_core::person`) may approve it.

use std::path::{Path, PathBuf};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Extension;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use vaider_core::analysis::Door;
use vaider_core::workspace::Workspace;
use vaider_qa::service::{self, RunRequest};
use vaider_qa::QaStore;

use crate::api_error::ApiError;
use crate::auth::Caller;
use crate::AppState;

/// `GET /api/qa/workspaces`: the projects in the history that hold a `.qa-agent/` folder.
pub(super) async fn workspaces(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let history = state.engine.history().clone();
    let facets = super::blocking(move || history.facets()).await?;
    let known: Vec<String> = facets
        .projects
        .into_iter()
        .filter(|p| Path::new(p).join(".qa-agent").is_dir())
        .collect();
    Ok(Json(json!({ "workspaces": known })))
}

#[derive(Debug, Deserialize)]
pub(super) struct PlansQuery {
    workspace: String,
    project: Option<String>,
}

/// `GET /api/qa/plans?workspace=…`: the plans, newest first, each with its last run and,
/// for one that needs a person's approval to run, what it reaches (`approval`).
pub(super) async fn plans(
    State(state): State<AppState>,
    Query(query): Query<PlansQuery>,
) -> Result<Json<Value>, ApiError> {
    let workspace = workspace(&query.workspace)?;
    let engine = state.engine.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let mut listed = service::list_test_plans(&workspace, query.project.as_deref());
        let runs = QaStore::in_project(&workspace).runs(None, None);
        for plan in listed["plans"].as_array_mut().into_iter().flatten() {
            let last = runs.iter().find(|r| plan["id"] == r.plan_id.as_str());
            plan["lastRun"] = last.map_or(Value::Null, |r| {
                json!({"id": r.id, "status": r.status, "startedAt": r.started_at, "duration": r.duration})
            });
            let id = plan["id"].as_str().unwrap_or_default().to_string();
            let unapproved = service::needs_approval(&engine, &workspace, &id).ok().flatten();
            plan["approval"] = json!(unapproved);
        }
        listed
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(answer))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunBody {
    workspace: String,
    plan_id: String,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    headless: Option<bool>,
}

/// `POST /api/qa/runs`: starts the run and answers 202 `{runId}` at once; a plan that is not
/// there is a 404, one that cannot run or a bad base URL a 400, with the contract's codes
/// (mapped where every error is, `api_error`).
pub(super) async fn run(
    State(state): State<AppState>,
    Json(body): Json<RunBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let workspace = workspace(&body.workspace)?;
    let request = RunRequest {
        plan_id: body.plan_id,
        base_url: body.base_url,
        workspace,
        door: Door::Ui,
        headless: body.headless.unwrap_or(true),
        run_id: None,
        // The page asks for no approval yet: a plan nobody approved is refused, saying how.
        approval: None,
    };
    // What can be refused is refused here, before the answer: a plan that is not there or
    // cannot run, a bad base URL.
    let ready = service::prepare_run(&state.engine, request)?;
    let run_id = ready.run_id.clone();
    let engine = state.engine.clone();
    tokio::spawn(async move {
        // The outcome is in the history (the run's page) and in .qa-agent/runs/.
        if let Err(error) = service::run_prepared(&engine, ready).await {
            tracing::warn!(%error, "a run started from the UI could not run");
        }
    });
    Ok((StatusCode::ACCEPTED, Json(json!({ "runId": run_id }))))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApproveBody {
    workspace: String,
    plan_id: String,
}

/// `POST /api/qa/plans/approve`: a person approves what a plan reaches, from a page signed in
/// through a login code; the token alone approves nothing (403 `PERSON_REQUIRED`).
pub(super) async fn approve(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Json(body): Json<ApproveBody>,
) -> Result<Json<Value>, ApiError> {
    if caller != Caller::SignedInUi {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "PERSON_REQUIRED",
            "Approving a plan is your decision: approve it in Vaider's window (`vaider ui`) or at a terminal (`vaider plan approve`). The token alone approves nothing.",
        ));
    }
    let workspace = workspace(&body.workspace)?;
    let decision = vaider_core::person::Decision::signed_in_ui();
    let approved = service::approve_plan(&state.engine, &workspace, &body.plan_id, decision)?;
    Ok(Json(json!({ "approved": approved })))
}

/// The workspace folder, or a 400 that says what to give.
fn workspace(path: &str) -> Result<PathBuf, ApiError> {
    Ok(service::workspace(&Workspace::of(Some(path), []))?)
}
