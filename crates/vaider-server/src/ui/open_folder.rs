//! `POST /api/interactions/{id}/open-folder`, and opening a folder or link with the
//! desktop's default program (also used by `vaider ui` to open the browser).

use std::path::PathBuf;

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;

use super::find;
use crate::api_error::ApiError;
use crate::AppState;

pub(super) async fn open_folder(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let row = find(&state, &id).await?;
    let dir = row
        .log_dir
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .ok_or_else(|| {
            ApiError::not_found("This interaction's log folder is not there any more.")
        })?;
    open_with_default_app(dir.as_os_str()).map_err(|why| {
        ApiError::internal(format!(
            "Could not open {} in the file manager: {why}. Open it yourself.",
            dir.display()
        ))
    })?;
    Ok(StatusCode::NO_CONTENT)
}

/// Opens a folder or a link with the desktop's default program (file manager, browser), the
/// way a double click would. Returns at once; the program runs on its own.
pub fn open_with_default_app(target: &std::ffi::OsStr) -> Result<(), String> {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(target_os = "windows") {
        // `start` takes a window title first: the empty string keeps a quoted path a path.
        let mut command = std::process::Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    let program = command.get_program().to_string_lossy().into_owned();
    command
        .arg(target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("{program} could not be started ({e})"))
}
