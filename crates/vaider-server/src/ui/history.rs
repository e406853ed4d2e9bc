//! The history list and its filters: `GET /api/history` and `/api/history/facets`, answered
//! with the `Summary` shape of docs/ui-api.md (the detail, `detail.rs`, begins with it too).

use std::path::Path;

use axum::extract::{Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use vaider_core::history::{self, Facets, Interaction, Status};

use super::blocking;
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
pub(super) struct Summary {
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
    pub(super) fn of(row: &Interaction) -> Summary {
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
