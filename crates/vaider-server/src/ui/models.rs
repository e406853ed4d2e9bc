//! `GET /api/models?provider=NAME`: the models a provider serves today, listed from its API
//! and marked (default, configured, deprecated with the shutdown day), for the settings
//! page's model choice. A listing that fails still answers, with `listError` and the
//! configured and default models only, so the page can always offer a typed name.

use axum::extract::{Query, State};
use axum::Json;
use serde::Deserialize;
use vaider_core::models::Catalogue;

use crate::api_error::ApiError;
use crate::AppState;

#[derive(Debug, Deserialize)]
pub(super) struct ModelsQuery {
    /// Default: the configured provider.
    provider: Option<String>,
}

pub(super) async fn models(
    State(state): State<AppState>,
    Query(query): Query<ModelsQuery>,
) -> Result<Json<Catalogue>, ApiError> {
    let provider = query.provider.filter(|p| !p.trim().is_empty());
    state
        .engine
        .models(provider.as_deref())
        .await
        .map(Json)
        .map_err(|e| ApiError::bad_request(e.to_string()))
}
