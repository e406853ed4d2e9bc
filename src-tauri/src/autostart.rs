//! Start at login, through tauri-plugin-autostart (a `.desktop` file in ~/.config/autostart on
//! Linux, a Launch Agent on macOS, the `Run` registry key on Windows). It is switched on the
//! first time the app runs, and toggled from the tray and from the web UI's settings.

use std::path::Path;

use tauri::{AppHandle, Runtime};
use tauri_plugin_autostart::ManagerExt;
use vaider_server::embedded::DesktopIntegration;

use crate::tray;

/// The name of the login entry (`Vaider.desktop` on Linux).
const ENTRY_NAME: &str = "Vaider";

/// Passed by the login entry: start in the tray without opening the window.
pub const HIDDEN_ARG: &str = "--hidden";

/// Written in the config folder once the first launch has switched autostart on, so that a
/// user who turns it off is not overruled at the next launch.
const FIRST_RUN_MARKER: &str = "desktop-autostart-initialised";

pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_autostart::Builder::new()
        .app_name(ENTRY_NAME)
        .arg(HIDDEN_ARG)
        .build()
}

pub fn is_enabled<R: Runtime>(app: &AppHandle<R>) -> Result<bool, String> {
    app.autolaunch().is_enabled().map_err(|e| e.to_string())
}

/// Switches start at login on or off and updates the tray's check mark.
pub fn set_enabled<R: Runtime>(app: &AppHandle<R>, on: bool) -> Result<(), String> {
    let manager = app.autolaunch();
    let result = if on {
        manager.enable()
    } else {
        manager.disable()
    }
    .map_err(|e| format!("could not turn start at login {}: {e}", on_off(on)));
    tray::refresh(app);
    result
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// On the first launch (no marker in `config_dir`), turns start at login on and leaves the
/// marker. Later launches leave the user's choice alone.
pub fn enable_on_first_run<R: Runtime>(app: &AppHandle<R>, config_dir: &Path) {
    first_run(config_dir, || set_enabled(app, true));
}

fn first_run(config_dir: &Path, enable: impl FnOnce() -> Result<(), String>) -> bool {
    let marker = config_dir.join(FIRST_RUN_MARKER);
    if marker.exists() {
        return false;
    }
    // The marker is written even when enabling fails: the tray and the settings page show the
    // real state, and a warning at every launch would not help.
    match enable() {
        Ok(()) => tracing::info!("first launch: start at login is on"),
        Err(e) => tracing::warn!("first launch: {e}"),
    }
    let note = "The Vaider app turned on start at login at its first launch; it does not do it again while this file exists.\n";
    if let Err(e) = std::fs::create_dir_all(config_dir).and_then(|()| std::fs::write(&marker, note))
    {
        tracing::warn!("could not write {}: {e}", marker.display());
    }
    true
}

/// What the web UI's settings reach through `GET/PUT /api/desktop`.
pub struct Integration<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> Integration<R> {
    pub fn new(app: AppHandle<R>) -> Self {
        Integration { app }
    }
}

impl<R: Runtime> DesktopIntegration for Integration<R> {
    fn autostart(&self) -> Result<bool, String> {
        is_enabled(&self.app)
    }

    fn set_autostart(&self, on: bool) -> Result<(), String> {
        set_enabled(&self.app, on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_run_enables() {
        let dir = tempfile::tempdir().unwrap();
        let config_dir = dir.path().join("vaider");
        let mut calls = 0;
        assert!(first_run(&config_dir, || {
            calls += 1;
            Ok(())
        }));
        assert!(config_dir.join(FIRST_RUN_MARKER).exists());
        assert!(!first_run(&config_dir, || {
            calls += 1;
            Ok(())
        }));
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_failed_enable_still_counts_as_the_first_run() {
        let dir = tempfile::tempdir().unwrap();
        assert!(first_run(dir.path(), || Err("no session".into())));
        assert!(!first_run(dir.path(), || panic!("asked twice")));
    }
}
