//! The history list, its filters and one interaction's detail: `GET /api/history`,
//! `/api/history/facets` and `/api/interactions/{id}`, answered with the `Summary` and
//! `Detail` shapes of docs/ui-api.md.

use std::path::Path;

use axum::extract::{Path as UrlPath, Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use vaider_core::analysis::ExpectationVerdict;
use vaider_core::history::{self, Facets, Interaction, Status};

use super::{blocking, find, read_log_file};
use crate::api_error::ApiError;
use crate::AppState;

#[derive(Debug, Deserialize)]
pub(super) struct HistoryParams {
    q: Option<String>,
    status: Option<String>,
    tool: Option<String>,
    project: Option<String>,
    before: Option<String>,
    /// Text, so a wrong value gets this API's JSON error rather than the framework's.
    limit: Option<String>,
}

/// One history row as the list shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    id: String,
    created_at: String,
    finished_at: Option<String>,
    tool: String,
    door: String,
    source: String,
    file_name: String,
    project: Option<String>,
    provider: String,
    model: String,
    status: Status,
    cached: bool,
    duration_ms: Option<u64>,
    cost_usd: f64,
    error_code: Option<String>,
    error_message: Option<String>,
    media_type: Option<String>,
}

impl Summary {
    fn of(row: &Interaction) -> Summary {
        let shown = row.media_path.as_deref().unwrap_or(&row.source);
        let file_name = Path::new(shown)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.to_string());
        Summary {
            id: row.id.clone(),
            created_at: row.created_at.clone(),
            finished_at: row.finished_at.clone(),
            tool: row.tool.clone(),
            door: row.door.clone(),
            source: row.source.clone(),
            file_name,
            project: row.project.clone(),
            provider: row.provider.clone(),
            model: row.model.clone(),
            status: row.status,
            cached: row.cached,
            duration_ms: row.duration_ms,
            cost_usd: row.cost_usd,
            error_code: row.error_code.clone(),
            error_message: row.error_message.clone(),
            media_type: row.media_type.clone(),
        }
    }
}

/// `GET /api/history`: one page, newest first.
#[derive(Debug, Serialize)]
pub(super) struct HistoryPage {
    items: Vec<Summary>,
    /// The `before` of the next page; none on the last.
    next: Option<String>,
    /// Every match, not only this page.
    total: u64,
    /// Sums over the whole history, unfiltered: tokens used, and what Gemini's default video
    /// sampling would have used.
    totals: history::Totals,
}

/// `GET /api/interactions/{id}`: the summary and everything the detail view shows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Detail {
    #[serde(flatten)]
    summary: Summary,
    prompt: String,
    expectations: Vec<String>,
    description: Option<String>,
    verdicts: Vec<ExpectationVerdict>,
    all_expectations_met: Option<bool>,
    usage: Usage,
    details: Option<Value>,
    adaptations: Vec<String>,
    /// How a video went to a model that takes video, with the default sampling's tokens.
    sampling: Option<vaider_core::sampling::SamplingReport>,
    frames_analysed: Option<u64>,
    log_dir: Option<String>,
    media_path: Option<String>,
    media_url: Option<String>,
    expected_media_url: Option<String>,
    request_json: Option<Value>,
    response_json: Option<Value>,
    size_bytes: Option<u64>,
    media_sha256: Option<String>,
    /// A visual comparison's other pictures, regions and findings.
    comparison: Option<super::comparison::ComparisonView>,
    /// A job's answer (a test validation's rubric, report, screenshots) and its model calls.
    job: Option<super::job::JobView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
    /// Vaider's estimate before the call, shown beside what the provider counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_input_tokens: Option<u64>,
}

pub(super) async fn history_page(
    State(state): State<AppState>,
    Query(params): Query<HistoryParams>,
) -> Result<Json<HistoryPage>, ApiError> {
    let status = match params.status.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(name) => Some(Status::from_name(name).ok_or_else(|| {
            ApiError::bad_request(format!(
                "Unknown status {name:?}: use running, ok, error, timeout or rejected."
            ))
        })?),
    };
    let limit = match params.limit.as_deref().filter(|l| !l.is_empty()) {
        None => 100,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=500).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "limit must be a number from 1 to 500, not {text:?}."
                ))
            })?,
    };
    let before = params.before.filter(|b| !b.is_empty());
    if before.as_deref().is_some_and(|b| !b.contains('|')) {
        return Err(ApiError::bad_request(
            "before must be the `next` value of an earlier page; start again without it.",
        ));
    }
    let query = history::Query {
        text: params.q,
        status,
        tool: params.tool,
        project: params.project,
        before,
        limit,
    };
    let history = state.engine.history().clone();
    let (page, totals) = blocking(move || Ok((history.search(&query)?, history.totals()?))).await?;
    Ok(Json(HistoryPage {
        items: page.items.iter().map(Summary::of).collect(),
        next: page.next,
        total: page.total,
        totals,
    }))
}

pub(super) async fn facets(State(state): State<AppState>) -> Result<Json<Facets>, ApiError> {
    let history = state.engine.history().clone();
    Ok(Json(blocking(move || history.facets()).await?))
}

pub(super) async fn detail(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Detail>, ApiError> {
    let row = find(&state, &id).await?;
    let history = state.engine.history().clone();
    let key = id.clone();
    let result = blocking(move || history.result::<vaider_core::AnalysisResult>(&key)).await?;
    let log_dir = row.log_dir.clone();
    let compared = row.clone();
    let jobs = state.engine.history().clone();
    let (request_json, response_json, comparison, job) = tokio::task::spawn_blocking(move || {
        (
            read_log_file(log_dir.as_deref(), "request.json"),
            read_log_file(log_dir.as_deref(), "response.json"),
            super::comparison::view(&compared),
            super::job::view(&jobs, &compared),
        )
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(Detail {
        summary: Summary::of(&row),
        prompt: row.prompt,
        expectations: row.expectations,
        description: row.description,
        verdicts: result
            .as_ref()
            .map(|r| r.expectations.clone())
            .unwrap_or_default(),
        all_expectations_met: result.as_ref().and_then(|r| r.all_expectations_met),
        usage: Usage {
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            estimated_input_tokens: result.as_ref().and_then(|r| r.usage.estimated_input_tokens),
        },
        details: result.as_ref().and_then(|r| r.details.clone()),
        adaptations: result
            .as_ref()
            .map(|r| r.adaptations.clone())
            .unwrap_or_default(),
        sampling: result.as_ref().and_then(|r| r.sampling.clone()),
        frames_analysed: result.as_ref().map(|r| r.frames_analysed),
        log_dir: row.log_dir,
        media_url: row
            .media_path
            .as_ref()
            .map(|_| format!("/api/interactions/{id}/media")),
        media_path: row.media_path,
        expected_media_url: row
            .expected_path
            .as_ref()
            .map(|_| format!("/api/interactions/{id}/media?which=expected")),
        request_json,
        response_json,
        size_bytes: row.size_bytes,
        media_sha256: row.media_sha256,
        comparison,
        job,
    }))
}
