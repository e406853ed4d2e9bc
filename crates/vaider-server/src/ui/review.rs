//! The review page's API (docs/review.md): a project's pending changes newest first with
//! signed links to their pictures, the decisions log, and approve, reject and undo. Only a
//! page signed in through a login code decides (`vaider_core::person`): the token alone gets
//! 403 `PERSON_REQUIRED`. The decisions are `vaider_visual::review`'s; this is translation.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use vaider_core::analysis::Door;
use vaider_core::person::Decision;
use vaider_core::source::percent_encode;
use vaider_visual::review::{self, picture, Changes, PendingChange, PICTURES};

use crate::api_error::ApiError;
use crate::auth::Caller;
use crate::signed_url::MEDIA_TTL;
use crate::AppState;

#[derive(Debug, Deserialize)]
pub(super) struct ReviewQuery {
    #[serde(default)]
    project: Option<String>,
}

/// `GET /api/review?project=DIR`: the projects the history knows with a `.vaider/` folder,
/// and for `project` its pending changes (newest first, with their pictures' signed links)
/// and every decision (newest first).
pub(super) async fn review(
    State(state): State<AppState>,
    Query(query): Query<ReviewQuery>,
) -> Result<Json<Value>, ApiError> {
    let history = state.engine.history().clone();
    let facets = super::blocking(move || history.facets()).await?;
    let projects: Vec<String> = facets
        .projects
        .into_iter()
        .filter(|p| Path::new(p).join(".vaider").is_dir())
        .collect();
    let Some(project) = query.project.filter(|p| !p.trim().is_empty()) else {
        return Ok(Json(
            json!({ "projects": projects, "changes": [], "decisions": [] }),
        ));
    };
    let dir = project_dir(&project)?;
    let listed = tokio::task::spawn_blocking(move || {
        let changes: Vec<Value> = Changes::in_project(&dir)
            .pending()
            .iter()
            .map(|change| with_pictures(&dir, change))
            .collect();
        let mut decisions = review::decisions(&dir);
        decisions.reverse();
        (changes, decisions)
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(json!({
        "projects": projects,
        "project": project,
        "changes": listed.0,
        "decisions": listed.1,
    })))
}

#[derive(Debug, Deserialize)]
pub(super) struct DecideBody {
    project: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    ids: Vec<String>,
    #[serde(default)]
    reason: String,
}

/// `POST /api/review/approve`: the person approves one change (`id`) or several (`ids`).
pub(super) async fn approve(
    state: State<AppState>,
    caller: Extension<Caller>,
    body: Json<DecideBody>,
) -> Result<Json<Value>, ApiError> {
    decide(state, caller, body, true).await
}

/// `POST /api/review/reject`: the person rejects one change or several.
pub(super) async fn reject(
    state: State<AppState>,
    caller: Extension<Caller>,
    body: Json<DecideBody>,
) -> Result<Json<Value>, ApiError> {
    decide(state, caller, body, false).await
}

async fn decide(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Json(body): Json<DecideBody>,
    approve: bool,
) -> Result<Json<Value>, ApiError> {
    let decision = person(caller)?;
    let project = project_dir(&body.project)?;
    let ids: Vec<String> = body.id.into_iter().chain(body.ids).collect();
    if ids.is_empty() {
        return Err(ApiError::bad_request(
            "Give the change to decide on as `id`, or several as `ids`.",
        ));
    }
    let mut decided = Vec::new();
    let mut failed = Vec::new();
    for id in ids {
        let outcome = if approve {
            review::approve(&project, &id, &decision, &body.reason)
        } else {
            review::reject(&project, &id, &decision, &body.reason)
        };
        match outcome {
            Ok(record) => {
                remember(&state, &project, &record).await;
                decided.push(record);
            }
            Err(e) => failed.push(json!({ "id": id, "message": e.to_string() })),
        }
    }
    if decided.is_empty() {
        let message = failed[0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        return Err(ApiError::bad_request(message));
    }
    Ok(Json(json!({ "decided": decided, "failed": failed })))
}

#[derive(Debug, Deserialize)]
pub(super) struct UndoBody {
    project: String,
    #[serde(default)]
    reason: String,
}

/// `POST /api/review/undo`: the person reverts the last decision.
pub(super) async fn undo(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Json(body): Json<UndoBody>,
) -> Result<Json<Value>, ApiError> {
    let decision = person(caller)?;
    let project = project_dir(&body.project)?;
    let record = review::undo(&project, &decision, &body.reason)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    remember(&state, &project, &record).await;
    Ok(Json(json!({ "undone": record })))
}

/// The decision of a signed-in page; the token alone decides nothing.
fn person(caller: Caller) -> Result<Decision, ApiError> {
    if caller != Caller::SignedInUi {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "PERSON_REQUIRED",
            "Deciding on a visual change is your decision: decide in Vaider's review page (`vaider ui`, #/review) or at a terminal (`vaider review approve ID`). The token alone approves nothing.",
        ));
    }
    Ok(Decision::signed_in_ui())
}

/// The decision in the history too; the log beside the baselines already has it.
async fn remember(state: &AppState, project: &Path, record: &review::DecisionRecord) {
    if let Err(error) =
        review::decide::record_in_history(&state.engine, project, record, Door::Ui).await
    {
        tracing::warn!(%error, "a review decision is not in the history");
    }
}

/// The project folder: an absolute folder that exists.
fn project_dir(project: &str) -> Result<PathBuf, ApiError> {
    let path = PathBuf::from(project.trim());
    if !path.is_absolute() || !path.is_dir() {
        return Err(ApiError::bad_request(format!(
            "{project:?} is not a project folder: give the absolute path of a folder that holds .vaider/."
        )));
    }
    Ok(path)
}

/// A change as the page shows it: its fields and a signed link to each picture it has.
fn with_pictures(project: &Path, change: &PendingChange) -> Value {
    let mut value = serde_json::to_value(change).unwrap_or_default();
    let mut pictures = serde_json::Map::new();
    for which in PICTURES {
        let url = picture(project, change, which)
            .filter(|p| p.is_file())
            .map(|_| picture_url(project, &change.id, which));
        pictures.insert(which.to_string(), json!(url));
    }
    value["pictures"] = Value::Object(pictures);
    value
}

fn picture_url(project: &Path, id: &str, which: &str) -> String {
    crate::signed_url::sign(&picture_path(project, id, which), MEDIA_TTL)
}

/// The unsigned path of a change's picture.
pub(crate) fn picture_path(project: &Path, id: &str, which: &str) -> String {
    format!(
        "/api/review/picture?project={}&id={}&which={}",
        percent_encode(&project.display().to_string()),
        percent_encode(id),
        percent_encode(which)
    )
}

#[derive(Debug, Deserialize)]
pub(crate) struct PictureQuery {
    pub project: String,
    pub id: String,
    pub which: String,
}

/// The file of a change's picture `which`, where the review loop keeps it: for the page and
/// for a chat view's media tool alike.
pub(crate) fn picture_of(project: &str, id: &str, which: &str) -> Result<PathBuf, ApiError> {
    let project = project_dir(project)?;
    let change = Changes::in_project(&project)
        .get(id)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    picture(&project, &change, which).ok_or_else(|| {
        ApiError::not_found(format!(
            "The change {} has no {which:?} picture (use baseline, actual, diff, annotated, heatmap or closeups).",
            change.id
        ))
    })
}

/// `GET /api/review/picture?project=&id=&which=`: one of a change's pictures (loaded by the
/// page through a signed link), marked so that it never runs as a page.
pub(super) async fn picture_file(
    Query(query): Query<PictureQuery>,
    request: Request,
) -> Result<Response, ApiError> {
    use tower::ServiceExt;

    let path = picture_of(&query.project, &query.id, &query.which)?;
    let mut response = tower_http::services::ServeFile::new(&path)
        .oneshot(request)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map(Body::new);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    Ok(response)
}
