//! `POST /api/interactions/{id}/run-again`: the entry run again through the core
//! (`vaider_core::again`): a model call with the same media (door `ui`, cache off) and the same
//! or an edited prompt and expectations; a job (a plan's run, a validation) through the
//! capability that registered it. This door only reads the body and maps the errors.

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use vaider_core::again::{self, AgainError, Edits};
use vaider_core::VaiderError;
use vaider_qa::QaError;

use super::find;
use crate::api_error::{ApiError, Mapped};
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
    let edits = Edits {
        prompt: body.prompt,
        expectations: body.expectations,
    };
    let engine = state.engine.clone();
    let started = tokio::task::spawn_blocking(move || again::run_again(&engine, &row, edits))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let id = started.map_err(api_error)?;
    Ok((StatusCode::ACCEPTED, Json(RunAgainStarted { id })))
}

/// A refusal as the API answers it: nothing to run again is a 400; a capability's own error
/// keeps its code and status (a plan gone is a 404 `PLAN_NOT_FOUND`).
fn api_error(error: AgainError) -> ApiError {
    match error {
        AgainError::Cannot(message) => ApiError::bad_request(message),
        AgainError::Refused(error) => {
            if let Some(qa) = error.downcast_ref::<QaError>() {
                Mapped::from(qa).into()
            } else if let Some(engine) = error.downcast_ref::<VaiderError>() {
                Mapped::from(engine).into()
            } else {
                ApiError::internal(error.to_string())
            }
        }
    }
}
