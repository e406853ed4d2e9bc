//! The history UI: its pages (`ui/`, built into the binary) and the JSON API they call
//! (docs/ui-api.md), one module per area. Handlers read the history, settings and keys
//! through the engine; "Run again" goes through the same pipeline as every other door.

mod assets;
mod comparison;
mod control;
mod detail;
mod evals;
mod events;
mod history;
mod job;
mod keys;
pub(crate) mod media;
mod models;
mod open_folder;
mod qa;
pub(crate) mod review;
mod run_again;
mod session;
mod settings;

use axum::routing::{delete, get, post, put};
use axum::Router;
use vaider_core::history::Interaction;

use crate::api_error::ApiError;
use crate::AppState;

pub use open_folder::open_with_default_app;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(assets::index))
        .route("/ui/{*file}", get(assets::asset))
        .route("/api/login-code", post(session::login_code))
        .route("/api/login", post(session::login))
        .route("/api/session", delete(session::sign_out))
        .route("/api/history", get(history::history_page))
        .route("/api/history/facets", get(history::facets))
        .route("/api/interactions/{id}", get(detail::detail))
        .route("/api/interactions/{id}/media", get(media::media))
        .route(
            "/api/interactions/{id}/run-again",
            post(run_again::run_again),
        )
        .route(
            "/api/interactions/{id}/open-folder",
            post(open_folder::open_folder),
        )
        .route("/api/events", get(events::events))
        .route("/api/qa/workspaces", get(qa::workspaces))
        .route("/api/qa/plans", get(qa::plans))
        .route("/api/qa/plans/approve", post(qa::approve))
        .route("/api/qa/runs", post(qa::run))
        .route("/api/review", get(review::review))
        .route("/api/review/picture", get(review::picture_file))
        .route("/api/review/approve", post(review::approve))
        .route("/api/review/reject", post(review::reject))
        .route("/api/review/undo", post(review::undo))
        .route("/api/models", get(models::models))
        .route("/api/evals", get(evals::evals))
        .route(
            "/api/settings",
            get(settings::settings).put(settings::save_settings),
        )
        .route(
            "/api/keys/{provider}",
            put(keys::set_key).delete(keys::clear_key),
        )
        .route("/api/server/pause", post(control::pause))
        .route("/api/server/resume", post(control::resume))
        .route(
            "/api/desktop",
            get(control::desktop).put(control::set_desktop),
        )
}

/// Runs blocking work (SQLite, the keychain, files) on a blocking thread; a failure is a 500.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> vaider_core::error::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// The history row of `id`, or 404.
async fn find(state: &AppState, id: &str) -> Result<Interaction, ApiError> {
    let history = state.engine.history().clone();
    let key = id.to_string();
    blocking(move || history.get(&key))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No interaction {id:?} in the history.")))
}

/// An interaction file as written, when it is still there and not huge.
fn read_log_file(log_dir: Option<&str>, name: &str) -> Option<serde_json::Value> {
    let path = std::path::Path::new(log_dir?).join(name);
    let meta = std::fs::metadata(&path).ok()?;
    if meta.len() > 8 * 1024 * 1024 {
        return Some(serde_json::json!({
            "note": format!("{} is too large to show here; open the log folder.", path.display())
        }));
    }
    serde_json::from_slice(&std::fs::read(&path).ok()?).ok()
}
