//! The one window: the server's web UI (`http://127.0.0.1:PORT/#/?code=…`, a one-time login
//! code minted in-process, never the token) while the server runs, else the bundled fallback page that says why it does not and offers a free port.
//! Closing it destroys it, so the webview's processes exit and the app idles in the tray;
//! the tray and a second launch make it again.

use tauri::{AppHandle, Manager, Runtime, Url, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

use crate::server::{Links, Server};

pub const MAIN: &str = "main";

/// Where the window opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    History,
    Settings,
}

impl Page {
    /// The web UI's route (its router follows `location.hash`).
    fn route(self) -> &'static str {
        match self {
            Page::History => "#/",
            Page::Settings => "#/settings",
        }
    }

    /// The page's address with a fresh login code, which the UI trades for its session
    /// before it shows the route.
    fn url(self, ui: &Links) -> String {
        ui.sign_in_url(self.route())
    }
}

/// Shows the window on `page`, making it when it was closed. Failures are logged: this runs
/// from the tray and the single-instance callback, where nobody could be told otherwise.
pub fn show<R: Runtime>(app: &AppHandle<R>, page: Page) {
    if let Err(e) = show_or_create(app, Some(page)) {
        tracing::error!("could not open the window: {e}");
    }
}

/// Brings the window to the front as it is (a second launch), or makes it on the history.
pub fn focus<R: Runtime>(app: &AppHandle<R>) {
    if let Err(e) = show_or_create(app, None) {
        tracing::error!("could not open the window: {e}");
    }
}

fn show_or_create<R: Runtime>(app: &AppHandle<R>, page: Option<Page>) -> tauri::Result<()> {
    let ui = app.state::<Server>().links();
    let Some(window) = app.get_webview_window(MAIN) else {
        let url = match &ui {
            Some(ui) => WebviewUrl::External(parse(&page.unwrap_or(Page::History).url(ui))?),
            None => WebviewUrl::App("index.html".into()),
        };
        WebviewWindowBuilder::new(app, MAIN, url)
            .title("Vaider")
            .inner_size(1200.0, 800.0)
            .min_inner_size(640.0, 480.0)
            .center()
            .focused(true)
            .build()?;
        return Ok(());
    };
    window.unminimize()?;
    window.show()?;
    window.set_focus()?;
    match (ui, page) {
        (Some(ui), page) if !window.url()?.as_str().starts_with(&ui.base_url) => {
            window.navigate(parse(&page.unwrap_or(Page::History).url(&ui))?)
        }
        (Some(_), Some(page)) => go_to(&window, page),
        // The fallback page, or the UI left where the user was.
        _ => Ok(()),
    }
}

fn go_to<R: Runtime>(window: &WebviewWindow<R>, page: Page) -> tauri::Result<()> {
    window.eval(format!("location.hash = {:?};", page.route()))
}

fn parse(url: &str) -> tauri::Result<Url> {
    Url::parse(url).map_err(tauri::Error::InvalidUrl)
}

/// After `vaider token --rotate`: an open window on the UI signs in again with a fresh code (the
/// rotation ended the page's session).
pub fn take_new_token<R: Runtime>(app: &AppHandle<R>) {
    let (Some(window), Some(ui)) = (app.get_webview_window(MAIN), app.state::<Server>().links())
    else {
        return;
    };
    let showing_ui = window
        .url()
        .is_ok_and(|url| url.as_str().starts_with(&ui.base_url));
    if !showing_ui {
        return;
    }
    if let Err(e) = parse(&Page::History.url(&ui)).and_then(|url| window.navigate(url)) {
        tracing::warn!("could not sign the window in again: {e}");
    }
}

/// After the server started, stopped or failed: an open window shows the UI or the fallback
/// page to match. A server that (re)started holds no session (they live in memory), so the
/// window signs in again with a fresh code.
pub fn follow_server<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN) else {
        return;
    };
    let result = match app.state::<Server>().links() {
        Some(ui) => parse(&Page::History.url(&ui)).and_then(|url| window.navigate(url)),
        // The fallback page asks for the status again when told to.
        None => window.eval("window.vaiderRefresh && window.vaiderRefresh();"),
    };
    if let Err(e) = result {
        tracing::warn!("could not update the window: {e}");
    }
}
