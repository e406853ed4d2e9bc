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
    let mut command = opener(target, std::env::consts::OS);
    let program = command.get_program().to_string_lossy().into_owned();
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("{program} could not be started ({e})"))
}

/// The command that opens `target` on `os`: the desktop's opener with the path as its one
/// argument, never a shell (`cmd /C start` would run a command hidden in a path with `&`).
/// Its environment is the scrubbed one every child gets.
fn opener(target: &std::ffi::OsStr, os: &str) -> std::process::Command {
    let program = match os {
        "macos" => "open",
        "windows" => "explorer.exe",
        _ => "xdg-open",
    };
    let mut command = vaider_core::child_env::command(program);
    command.arg(target);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_one_argument_of_the_file_manager_and_no_shell_is_involved() {
        let path = std::ffi::OsStr::new(r"C:\work\a & calc.exe\run");
        for (os, program) in [
            ("windows", "explorer.exe"),
            ("macos", "open"),
            ("linux", "xdg-open"),
        ] {
            let command = opener(path, os);
            assert_eq!(command.get_program(), program);
            let args: Vec<_> = command.get_args().collect();
            assert_eq!(args, [path], "{os}");
        }
    }

    #[test]
    fn the_file_manager_gets_no_secret() {
        let command = opener(std::ffi::OsStr::new("/tmp"), "linux");
        for (name, _) in command.get_envs() {
            let name = name.to_string_lossy();
            assert!(!vaider_core::child_env::is_secret(&name), "{name}");
        }
    }
}
