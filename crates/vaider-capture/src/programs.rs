//! Running the platform tools the simulator adapters rely on (`xcrun`, `adb`): found on the
//! `PATH` the caller gives, run with that `PATH`, bounded in time, their output kept for the
//! error when they fail.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::CaptureError;

/// A simulator screenshot takes about a second; a tool stuck on a device prompt is cut off.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(30);

/// Finds `name` on `path` as an executable file.
pub(crate) fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path).find_map(|dir| {
        [dir.join(name), dir.join(format!("{name}.exe"))]
            .into_iter()
            .find(|file| is_executable(file))
    })
}

#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.is_file()
}

/// A finished program's stdout, or an error with its stderr when it exited with failure.
pub(crate) async fn run(
    program: &Path,
    args: &[&OsStr],
    path: Option<&OsString>,
    command: &'static str,
    hint: &'static str,
) -> Result<Vec<u8>, CaptureError> {
    let mut child = vaider_core::child_env::async_command(program);
    child
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The tool runs with the PATH it was found on (xcrun and adb call their own helpers).
    match path {
        Some(path) => child.env("PATH", path),
        None => child.env_remove("PATH"),
    };
    let output = tokio::time::timeout(PROGRAM_TIMEOUT, child.output())
        .await
        .map_err(|_| CaptureError::ProgramTimedOut {
            command,
            seconds: PROGRAM_TIMEOUT.as_secs(),
        })?
        .map_err(|source| CaptureError::ProgramIo { command, source })?;
    if output.status.success() {
        return Ok(output.stdout);
    }
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(CaptureError::ProgramFailed {
        command,
        status: output.status.to_string(),
        output: if said.is_empty() {
            "no message".into()
        } else {
            said
        },
        hint,
    })
}
