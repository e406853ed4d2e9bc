//! The server inside the app: started at launch through `vaider_server::embedded` (same port,
//! token, config and data as `vaider serve`), restarted on another port when the user picks
//! one, and stopped on Quit. Its state drives the tray's status line and which page the
//! window shows. The token is read from the running server each time (it follows
//! `vaider token --rotate`), never kept from the start.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};
use vaider_core::client_setup::Client;
use vaider_core::{Config, Vaider};
use vaider_server::embedded::{self, RunningServer, StartError, StartOptions};

use crate::{autostart, tray, window};

/// What the server is doing, as the tray and the fallback page show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Status {
    Starting,
    #[serde(rename_all = "camelCase")]
    Running {
        addr: SocketAddr,
        paused: bool,
    },
    #[serde(rename_all = "camelCase")]
    PortInUse {
        port: u16,
        by_vaider: bool,
        next_free: Option<u16>,
        message: String,
    },
    #[serde(rename_all = "camelCase")]
    Failed {
        message: String,
    },
}

impl Status {
    /// The tray's first, disabled line.
    pub fn line(&self) -> String {
        match self {
            Status::Starting => "Starting…".to_string(),
            Status::Running {
                addr,
                paused: false,
            } => format!("Running on {addr}"),
            Status::Running { addr, paused: true } => format!("Paused on {addr}"),
            Status::PortInUse {
                port, by_vaider, ..
            } => {
                let by = if *by_vaider { " by another Vaider" } else { "" };
                format!("Error: port {port} is in use{by}")
            }
            Status::Failed { message } => format!("Error: {}", first_line(message, 60)),
        }
    }
}

fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= max_chars {
        return line.to_string();
    }
    let cut: String = line.chars().take(max_chars - 1).collect();
    format!("{cut}…")
}

/// How to reach the running server.
#[derive(Clone)]
pub struct Links {
    pub base_url: String,
    pub mcp_url: String,
    pub token: String,
    pub engine: Arc<Vaider>,
    /// The server's sign-in: the window's links carry a one-time login code minted here, in
    /// process, never the token.
    pub auth: Arc<vaider_server::auth::Auth>,
}

impl Links {
    /// The UI on `route` (`#/`, `#/settings`) with a fresh one-time login code: make it just
    /// before the window opens it (a code lasts a minute and works once).
    pub fn sign_in_url(&self, route: &str) -> String {
        vaider_server::embedded::sign_in_url(&self.base_url, &self.auth.mint_login_code(), route)
    }

    /// The MCP config snippet for one client, as pretty JSON for the clipboard.
    pub fn mcp_config(&self, client: Client) -> String {
        let snippet = client.snippet(&self.mcp_url, &self.token);
        serde_json::to_string_pretty(&snippet).unwrap_or_else(|_| snippet.to_string())
    }
}

enum Slot {
    Starting,
    Running(RunningServer),
    Problem(Status),
}

/// The app's one server, shared by the tray, the window, the commands and the exit handler.
pub struct Server {
    slot: Mutex<Slot>,
}

impl Default for Server {
    fn default() -> Self {
        Server {
            slot: Mutex::new(Slot::Starting),
        }
    }
}

impl Server {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        // A panic while the lock was held leaves a usable value: every write replaces it whole.
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn status(&self) -> Status {
        match &*self.slot() {
            Slot::Starting => Status::Starting,
            Slot::Running(running) => Status::Running {
                addr: running.addr,
                paused: running.engine.is_paused(),
            },
            Slot::Problem(status) => status.clone(),
        }
    }

    pub fn links(&self) -> Option<Links> {
        match &*self.slot() {
            Slot::Running(running) => Some(Links {
                base_url: running.base_url(),
                mcp_url: running.mcp_url(),
                token: running.token(),
                engine: running.engine.clone(),
                auth: running.auth(),
            }),
            _ => None,
        }
    }

    fn take_running(&self) -> Option<RunningServer> {
        let mut slot = self.slot();
        match std::mem::replace(&mut *slot, Slot::Starting) {
            Slot::Running(running) => Some(running),
            other => {
                *slot = other;
                None
            }
        }
    }
}

/// Starts the server in the background at launch; opens the window when it is up, or with the
/// problem when it could not start (even when launched hidden: nothing works until it is fixed).
pub fn launch<R: Runtime>(app: AppHandle<R>, open_window: bool) {
    tauri::async_runtime::spawn(async move {
        let started = start(&app, None).await;
        if open_window || started.is_err() {
            window::show(&app, window::Page::History);
        }
    });
}

/// Starts the server (stopping a running one first) on `port`, or on the configured one.
/// Afterwards the tray shows the new status and an open window the matching page.
pub async fn start<R: Runtime>(app: &AppHandle<R>, port: Option<u16>) -> Result<(), String> {
    let server = app.state::<Server>();
    if let Some(previous) = server.take_running() {
        previous.stop().await;
    }
    *server.slot() = Slot::Starting;
    tray::refresh(app);
    let options = StartOptions {
        port,
        desktop: Some(Arc::new(autostart::Integration::new(app.clone()))),
        ..StartOptions::default()
    };
    let result = match embedded::start(options).await {
        Ok(running) => {
            tracing::info!(
                "Vaider {} listening on {}",
                vaider_core::VERSION,
                running.base_url()
            );
            // `vaider token --rotate` while the app runs: the open window takes the new token.
            let mut tokens = running.token_changes();
            let follower = app.clone();
            tauri::async_runtime::spawn(async move {
                while tokens.changed().await.is_ok() {
                    window::take_new_token(&follower);
                }
            });
            *server.slot() = Slot::Running(running);
            Ok(())
        }
        Err(error) => {
            let message = error.to_string();
            tracing::error!("the server could not start: {message}");
            let status = match error {
                StartError::PortInUse {
                    port,
                    by_vaider,
                    next_free,
                } => Status::PortInUse {
                    port,
                    by_vaider,
                    next_free,
                    message: message.clone(),
                },
                StartError::Other(_) => Status::Failed {
                    message: message.clone(),
                },
            };
            *server.slot() = Slot::Problem(status);
            Err(message)
        }
    };
    tray::refresh(app);
    window::follow_server(app);
    result
}

/// Saves `port` in the config file (so `vaider serve`, `vaider init` and later launches use it
/// too) and starts the server there.
pub async fn use_port<R: Runtime>(app: &AppHandle<R>, port: u16) -> Result<(), String> {
    save_port(&Config::file_path(), port)?;
    start(app, Some(port)).await
}

fn save_port(path: &std::path::Path, port: u16) -> Result<(), String> {
    let mut config = Config::load_file(path).map_err(|e| e.to_string())?;
    config.port = port;
    config.save(path).map_err(|e| e.to_string())
}

/// Stops the server on Quit, letting running requests end (bounded, so Quit never hangs).
pub fn stop<R: Runtime>(app: &AppHandle<R>) {
    let Some(running) = app.state::<Server>().take_running() else {
        return;
    };
    tauri::async_runtime::block_on(async {
        if tokio::time::timeout(Duration::from_secs(5), running.stop())
            .await
            .is_err()
        {
            tracing::warn!("the server did not stop within 5 s; quitting anyway");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_say_where_and_what() {
        let addr: SocketAddr = "127.0.0.1:3456".parse().unwrap();
        assert_eq!(
            Status::Running {
                addr,
                paused: false
            }
            .line(),
            "Running on 127.0.0.1:3456"
        );
        assert_eq!(
            Status::Running { addr, paused: true }.line(),
            "Paused on 127.0.0.1:3456"
        );
        let in_use = Status::PortInUse {
            port: 3456,
            by_vaider: true,
            next_free: Some(3457),
            message: String::new(),
        };
        assert_eq!(
            in_use.line(),
            "Error: port 3456 is in use by another Vaider"
        );
        let failed = Status::Failed {
            message: format!("{}\nsecond line", "x".repeat(100)),
        };
        let line = failed.line();
        assert!(
            line.starts_with("Error: xxx") && line.ends_with('…'),
            "{line}"
        );
        assert_eq!(line.chars().count(), "Error: ".len() + 60);
    }

    #[test]
    fn status_serialises_for_the_fallback_page() {
        let status = Status::PortInUse {
            port: 3456,
            by_vaider: false,
            next_free: Some(3457),
            message: "busy".into(),
        };
        assert_eq!(
            serde_json::to_value(&status).unwrap(),
            serde_json::json!({"state": "portInUse", "port": 3456, "byVaider": false,
                               "nextFree": 3457, "message": "busy"})
        );
    }

    #[test]
    fn saving_a_port_keeps_the_rest_of_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let config = Config {
            model: "some-model".into(),
            ..Config::default()
        };
        config.save(&path).unwrap();
        save_port(&path, 4567).unwrap();
        let saved = Config::load_file(&path).unwrap();
        assert_eq!(saved.port, 4567);
        assert_eq!(saved.model, "some-model");
    }

    #[test]
    fn saving_a_port_creates_a_missing_config() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config.toml");
        save_port(&path, 4568).unwrap();
        assert_eq!(Config::load_file(&path).unwrap().port, 4568);
    }
}
