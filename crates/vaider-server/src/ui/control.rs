//! Pausing the server and the tray app's own settings: `POST /api/server/pause|resume` and
//! `GET|PUT /api/desktop` (start at login, only inside the tray app).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::api_error::ApiError;
use crate::AppState;

/// Whether analyses are paused: the answer to pause and resume, and the `server` event.
#[derive(Debug, Serialize)]
pub(super) struct PauseState {
    pub paused: bool,
}

/// What the tray app offers; `autostart` only when `available`.
#[derive(Debug, Serialize)]
pub(super) struct DesktopState {
    available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    autostart: Option<bool>,
}

pub(super) async fn pause(State(state): State<AppState>) -> Json<PauseState> {
    state.engine.pause();
    Json(PauseState { paused: true })
}

pub(super) async fn resume(State(state): State<AppState>) -> Json<PauseState> {
    state.engine.resume();
    Json(PauseState { paused: false })
}

pub(super) async fn desktop(State(state): State<AppState>) -> Result<Json<DesktopState>, ApiError> {
    let Some(desktop) = state.desktop.clone() else {
        return Ok(Json(DesktopState {
            available: false,
            autostart: None,
        }));
    };
    let autostart = tokio::task::spawn_blocking(move || desktop.autostart())
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|why| {
            ApiError::internal(format!("Could not read the start-at-login setting: {why}"))
        })?;
    Ok(Json(DesktopState {
        available: true,
        autostart: Some(autostart),
    }))
}

#[derive(Deserialize)]
pub(super) struct DesktopBody {
    autostart: bool,
}

pub(super) async fn set_desktop(
    State(state): State<AppState>,
    Json(body): Json<DesktopBody>,
) -> Result<Json<DesktopState>, ApiError> {
    let Some(desktop) = state.desktop.clone() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_IN_APP",
            "Start at login is a setting of the Vaider tray app; this server runs without it.",
        ));
    };
    let on = body.autostart;
    tokio::task::spawn_blocking(move || {
        desktop.set_autostart(on)?;
        desktop.autostart()
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map(|autostart| {
        Json(DesktopState {
            available: true,
            autostart: Some(autostart),
        })
    })
    .map_err(|why| ApiError::internal(format!("Could not change start at login: {why}")))
}
