//! The commands of the bundled fallback page (`fallback/`), shown when the server is not
//! running: what went wrong, and starting it again on a free port or the same one.

use tauri::{AppHandle, Runtime, State};

use crate::server::{self, Server, Status};

#[tauri::command]
pub fn server_status(server: State<'_, Server>) -> Status {
    server.status()
}

/// Saves `port` as the configured port and starts the server there.
#[tauri::command]
pub async fn use_port<R: Runtime>(app: AppHandle<R>, port: u16) -> Result<(), String> {
    server::use_port(&app, port).await
}

/// Tries the configured port again (after the other program was stopped).
#[tauri::command]
pub async fn retry<R: Runtime>(app: AppHandle<R>) -> Result<(), String> {
    server::start(&app, None).await
}
