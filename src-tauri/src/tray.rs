//! The tray icon and its menu: the server's status, the window's pages, the MCP config for each
//! agent, pause/resume, start at login, a newer release when one is known, and Quit. The status line and the check marks follow
//! changes made elsewhere (the web UI, the login entry) by a refresh every two seconds and
//! right after each change made here.

use std::sync::Mutex;
use std::time::Duration;

use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_clipboard_manager::ClipboardExt;
use vaider_core::client_setup::Client;

use crate::autostart;
use crate::server::{Server, Status};
use crate::updates::{self, Known};
use crate::window::{self, Page};

const REFRESH_EVERY: Duration = Duration::from_secs(2);

mod id {
    pub const STATUS: &str = "status";
    pub const OPEN_HISTORY: &str = "open-history";
    pub const SETTINGS: &str = "settings";
    pub const COPY_CURSOR: &str = "copy-mcp-cursor";
    pub const COPY_CLAUDE: &str = "copy-mcp-claude-code";
    pub const COPY_VSCODE: &str = "copy-mcp-vscode";
    pub const PAUSE: &str = "pause";
    pub const AUTOSTART: &str = "autostart";
    pub const UPDATE: &str = "update";
    pub const QUIT: &str = "quit";
}

/// The items whose text or state changes, and what they last showed.
struct Items<R: Runtime> {
    status: MenuItem<R>,
    pause: MenuItem<R>,
    autostart: CheckMenuItem<R>,
    update: MenuItem<R>,
    shown: Mutex<Option<Shown>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    status: String,
    pause: PauseItem,
    autostart: bool,
    update: Known,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PauseItem {
    Pause,
    Resume,
    Unavailable,
}

impl PauseItem {
    fn of(status: &Status) -> PauseItem {
        match status {
            Status::Running { paused: false, .. } => PauseItem::Pause,
            Status::Running { paused: true, .. } => PauseItem::Resume,
            _ => PauseItem::Unavailable,
        }
    }

    fn text(self) -> &'static str {
        match self {
            PauseItem::Resume => "Resume server",
            PauseItem::Pause | PauseItem::Unavailable => "Pause server",
        }
    }
}

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let status = app.state::<Server>().status();
    let autostart_on = autostart::is_enabled(app).unwrap_or(false);
    let pause = PauseItem::of(&status);
    let known = updates::known(app);

    let status_item = MenuItem::with_id(app, id::STATUS, status.line(), false, None::<&str>)?;
    let pause_item = MenuItem::with_id(
        app,
        id::PAUSE,
        pause.text(),
        pause != PauseItem::Unavailable,
        None::<&str>,
    )?;
    let autostart_item = CheckMenuItem::with_id(
        app,
        id::AUTOSTART,
        "Start at login",
        true,
        autostart_on,
        None::<&str>,
    )?;
    let update_item = MenuItem::with_id(
        app,
        id::UPDATE,
        known.text(),
        known.is_newer(),
        None::<&str>,
    )?;
    let menu = Menu::with_items(
        app,
        &[
            &status_item,
            &update_item,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, id::OPEN_HISTORY, "Open history", true, None::<&str>)?,
            &MenuItem::with_id(app, id::SETTINGS, "Settings", true, None::<&str>)?,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(
                app,
                id::COPY_CURSOR,
                "Copy MCP config for Cursor",
                true,
                None::<&str>,
            )?,
            &MenuItem::with_id(
                app,
                id::COPY_CLAUDE,
                "Copy MCP config for Claude Code",
                true,
                None::<&str>,
            )?,
            &MenuItem::with_id(
                app,
                id::COPY_VSCODE,
                "Copy MCP config for VS Code",
                true,
                None::<&str>,
            )?,
            &PredefinedMenuItem::separator(app)?,
            &pause_item,
            &autostart_item,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, id::QUIT, "Quit Vaider", true, None::<&str>)?,
        ],
    )?;
    TrayIconBuilder::with_id("vaider")
        .icon(tauri::include_image!("../icons/tray.png"))
        .tooltip("Vaider")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu_event)
        .build(app)?;
    app.manage(Items {
        status: status_item,
        pause: pause_item,
        autostart: autostart_item,
        update: update_item,
        shown: Mutex::new(Some(Shown {
            status: status.line(),
            pause,
            autostart: autostart_on,
            update: known,
        })),
    });

    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            tokio::time::sleep(REFRESH_EVERY).await;
            refresh(&handle);
        }
    });
    Ok(())
}

/// Brings the status line, the pause item and the start-at-login mark up to date, on the main
/// thread (menus live there). Queued, never waited for: callers on other threads (the server's
/// handlers, the timer) must not block on the main thread, which may be waiting for them.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let handle = app.clone();
    if let Err(e) = app.run_on_main_thread(move || update(&handle)) {
        tracing::debug!("tray refresh not queued: {e}");
    }
}

fn update<R: Runtime>(app: &AppHandle<R>) {
    let Some(items) = app.try_state::<Items<R>>() else {
        return; // before the tray exists (first-run setup)
    };
    let status = app.state::<Server>().status();
    let now = Shown {
        status: status.line(),
        pause: PauseItem::of(&status),
        autostart: match autostart::is_enabled(app) {
            Ok(on) => on,
            Err(e) => {
                tracing::debug!("start at login unknown: {e}");
                false
            }
        },
        update: updates::known(app),
    };
    let mut shown = items.shown.lock().unwrap_or_else(|e| e.into_inner());
    let before = shown.take();
    let result = (|| -> tauri::Result<()> {
        if before.as_ref().is_none_or(|b| b.status != now.status) {
            items.status.set_text(&now.status)?;
        }
        if before.as_ref().is_none_or(|b| b.pause != now.pause) {
            items.pause.set_text(now.pause.text())?;
            items
                .pause
                .set_enabled(now.pause != PauseItem::Unavailable)?;
        }
        if before.as_ref().is_none_or(|b| b.update != now.update) {
            items.update.set_text(now.update.text())?;
            items.update.set_enabled(now.update.is_newer())?;
        }
        // Always: a click toggles the mark before its handler runs, whatever the outcome.
        if items.autostart.is_checked()? != now.autostart {
            items.autostart.set_checked(now.autostart)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => *shown = Some(now),
        Err(e) => tracing::warn!("could not update the tray menu: {e}"),
    }
}

fn on_menu_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    match event.id().as_ref() {
        id::OPEN_HISTORY => window::show(app, Page::History),
        id::SETTINGS => window::show(app, Page::Settings),
        id::COPY_CURSOR => copy_mcp_config(app, Client::Cursor),
        id::COPY_CLAUDE => copy_mcp_config(app, Client::ClaudeCode),
        id::COPY_VSCODE => copy_mcp_config(app, Client::VsCode),
        id::PAUSE => {
            if let Some(links) = app.state::<Server>().links() {
                if links.engine.is_paused() {
                    links.engine.resume();
                } else {
                    links.engine.pause();
                }
            }
            update(app);
        }
        id::AUTOSTART => {
            let want = !autostart::is_enabled(app).unwrap_or(false);
            if let Err(e) = autostart::set_enabled(app, want) {
                tracing::warn!("{e}");
            }
        }
        id::UPDATE => updates::open_download(app),
        id::QUIT => app.exit(0),
        _ => {}
    }
}

fn copy_mcp_config<R: Runtime>(app: &AppHandle<R>, client: Client) {
    let Some(links) = app.state::<Server>().links() else {
        tracing::warn!("the server is not running: no MCP config to copy");
        return;
    };
    if let Err(e) = app.clipboard().write_text(links.mcp_config(client)) {
        tracing::warn!("could not copy the MCP config: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_item_follows_the_server() {
        let addr = "127.0.0.1:3456".parse().unwrap();
        let running = |paused| Status::Running { addr, paused };
        assert_eq!(PauseItem::of(&running(false)).text(), "Pause server");
        assert_eq!(PauseItem::of(&running(true)).text(), "Resume server");
        assert_eq!(PauseItem::of(&Status::Starting), PauseItem::Unavailable);
    }
}
