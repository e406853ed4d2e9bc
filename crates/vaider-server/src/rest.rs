//! The `/v1` REST contract: `POST /v1/analyse`, `POST /v1/validate`, `POST /v1/compare`,
//! `GET /v1/health`, `GET /v1/openapi.json`.
//! Handlers only translate JSON to an [`AnalysisRequest`] and back; everything else is the
//! pipeline's. Errors become the contract's JSON in one place, [`ApiError`].

use std::time::Duration;
use vaider_core::analysis::tools;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use vaider_core::progress::NoProgress;
use vaider_core::sampling::VideoSampling;
use vaider_core::workspace::Workspace;
use vaider_core::{AnalysisRequest, Door};

/// Kept here too: code written before the error type had its own module imports it from `rest`.
pub use crate::api_error::ApiError;
use crate::AppState;

/// The request's workspace by the one rule every door follows (`vaider_core::workspace`):
/// its `cwd`, blank meaning none. A REST client has no roots.
fn workspace_of(cwd: Option<&str>) -> Workspace {
    Workspace::of(cwd, [])
}

/// A body the contract cannot read: 422 `INVALID_REQUEST`.
fn malformed(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_REQUEST", message)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnalyseBody {
    video_path: String,
    #[serde(default)]
    timeout_sec: Option<f64>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    expectations: Vec<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    no_cache: bool,
    /// auto, full or keyframes; default: the config's `video_sampling`.
    #[serde(default)]
    sampling: Option<VideoSampling>,
    /// The folder a relative `videoPath` is relative to.
    #[serde(default)]
    cwd: Option<String>,
}

/// `POST /v1/analyse`. The body is parsed here rather than by `Json<T>` so that every
/// malformed body (empty, not JSON, wrong types, no Content-Type) gets the contract's 422.
pub async fn analyse(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    if body.is_empty() {
        return Err(malformed(
            "The body is empty. Send JSON like {\"videoPath\": \"/abs/path/video.webm\", \"timeoutSec\": 30}.",
        ));
    }
    let body: AnalyseBody = serde_json::from_slice(&body).map_err(|e| {
        malformed(format!(
            "The body is not valid: {e}. Expected {{\"videoPath\": string, \"timeoutSec\"?: number, \"prompt\"?: string, \"expectations\"?: [string], \"sampling\"?: \"auto\" | \"full\" | \"keyframes\"}}."
        ))
    })?;
    // Only what JSON cannot express is checked here; the limits are the pipeline's.
    let timeout = match body.timeout_sec {
        None => None,
        Some(t) => Some(Duration::try_from_secs_f64(t).map_err(|_| {
            malformed(format!(
                "timeoutSec must be a positive number of seconds, not {t}."
            ))
        })?),
    };
    let mut request = AnalysisRequest::new(tools::ANALYZE_VIDEO, Door::Rest, body.video_path);
    request.timeout = timeout;
    request.prompt = body.prompt;
    request.expectations = body.expectations;
    request.model = body.model;
    request.no_cache = body.no_cache;
    request.sampling = body.sampling;
    request.base_dirs = workspace_of(body.cwd.as_deref()).folders().to_vec();
    let result = state.engine.analyse(request, &NoProgress).await?;
    // The contract's four fields (description, framesAnalysed, model, durationMs) and the
    // rest of what MCP clients also get.
    Ok(Json(result).into_response())
}

/// `POST /v1/validate`: runs a Playwright test and answers the `AgentResult` (a failed rubric
/// is an answer too: `success: false`, 200). Same fields as the MCP tool `validate_test`.
pub async fn validate(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let args: crate::mcp::validate::ValidateTestArgs =
        serde_json::from_slice(&body).map_err(|e| {
            malformed(format!(
                "The body is not valid: {e}. Expected {{\"test_path\": string, \"project_dir\"?: string, \"grep\"?: string, \"expectations\"?: [string], \"max_test_duration_ms\"?: integer, \"min_screenshots\"?: integer, \"timeout_sec\"?: integer, \"cwd\"?: string}}."
            ))
        })?;
    let cwd = workspace_of(Some(&args.cwd)).folders().to_vec();
    let request = crate::mcp::validate::validate_request(args, Door::Rest, cwd);
    let result = vaider_validate::validate_test(&state.engine, request, &NoProgress).await;
    Ok(Json(result).into_response())
}

/// `POST /v1/compare`: the MCP tool `visual_compare` with the same fields and options, checked
/// by the same rule; `cwd` is the project whose `.screenshots` store keeps the pictures.
/// Answers `{"success": true, "data": ...}`, or `{"success": false, "error": ...}` when the
/// screenshots could not be compared; an option out of range is a 422.
pub async fn compare(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let args: crate::mcp::visual::VisualCompareArgs = serde_json::from_slice(&body).map_err(|e| {
        malformed(format!(
            "The body is not valid: {e}. Expected {{\"before\": string, \"after\": string, \"cwd\": string, \"expected_changes\"?: [string], \"threshold\"?: number, \"include_anti_aliasing\"?: boolean, \"alpha\"?: number, \"diff_color\"?: \"#rrggbb\", \"diff_color_alt\"?: \"#rrggbb\", \"aa_color\"?: \"#rrggbb\", \"ignore_regions\"?: [{{\"x\", \"y\", \"width\", \"height\"}}], \"min_region_pixels\"?: integer, \"blur\"?: number}}."
        ))
    })?;
    let project = workspace_of(Some(&args.cwd))
        .project()
        .ok()
        .filter(|project| project.is_absolute())
        .ok_or_else(|| {
            malformed(
                "cwd must be the project's absolute path: the comparison's pictures are kept in its .screenshots folder.",
            )
        })?;
    let options = args.compare_options().map_err(malformed)?;
    let request = vaider_visual::service::CompareRequest {
        project: &project,
        before: args.before.as_ref(),
        after: args.after.as_ref(),
        expected_changes: args.expected_changes,
        provider: Some(args.provider).filter(|p| !p.trim().is_empty()),
        model: Some(args.model).filter(|m| !m.trim().is_empty()),
        door: Door::Rest,
        options,
    };
    let answer = match vaider_visual::service::compare_screenshots(
        &state.engine,
        request,
        &NoProgress,
    )
    .await
    {
        Ok(data) => json!({"success": true, "data": data}),
        Err(e) => json!({"success": false, "error": e.to_string()}),
    };
    Ok(Json(answer).into_response())
}

#[derive(Deserialize)]
pub struct HealthQuery {
    challenge: Option<String>,
}

/// `GET /v1/health`, open to any local client. With `?challenge=<nonce>` (16 to 128 letters,
/// digits, `-` or `_`) it also answers `proof`, which a client holding the token checks before
/// it hands this server anything ([`crate::running`]): it proves the token without showing
/// it. No proof when the server cannot tell which port the request came in on.
pub async fn health(
    State(state): State<AppState>,
    Query(query): Query<HealthQuery>,
    parts: axum::http::request::Parts,
) -> Json<Value> {
    let mut answer = json!({
        "status": "ok",
        "timestamp": vaider_core::pipeline::now_rfc3339(),
        "version": vaider_core::VERSION,
    });
    let port = parts
        .extensions
        .get::<ConnectInfo<crate::running::LocalPort>>()
        .and_then(|info| info.0 .0);
    let nonce = query.challenge.filter(|n| {
        (16..=128).contains(&n.len())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if let (Some(port), Some(nonce)) = (port, nonce) {
        answer["proof"] = Value::String(state.auth.proof(port, &nonce));
    }
    Json(answer)
}

pub async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

/// Any other path: the contract's error shape rather than an empty 404.
pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        "No such endpoint. See /v1/openapi.json for the REST API; MCP clients connect to /mcp.",
    )
}
