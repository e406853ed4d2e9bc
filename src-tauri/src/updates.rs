//! The tray's word on a newer release: the release feed is read at start and once a day
//! (`vaider_core::updates`, the same check as `vaider doctor`), and a newer version shows as a
//! tray item that opens its download. Installing it is the user's package manager's job (or
//! the installer's on macOS and Windows): the tray tells, it does not replace files.

use std::sync::Mutex;
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime};
use vaider_core::updates::{self, Check};
use vaider_core::{Config, VERSION};

/// Releases come out weeks apart; a day between checks is prompt enough.
const CHECK_EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// What the tray knows about releases.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Known {
    /// No feed (a source build), or not checked yet, or the feed could not be read.
    #[default]
    Nothing,
    UpToDate,
    Newer {
        version: String,
        url: String,
    },
}

impl Known {
    pub fn text(&self) -> String {
        match self {
            Known::Nothing => format!("Vaider {VERSION}"),
            Known::UpToDate => format!("Vaider {VERSION} is up to date"),
            Known::Newer { version, .. } => format!("Update available: Vaider {version}…"),
        }
    }

    pub fn is_newer(&self) -> bool {
        matches!(self, Known::Newer { .. })
    }

    fn of(check: &Check) -> Known {
        if check.newer {
            Known::Newer {
                version: check.latest.clone(),
                url: check.url.clone(),
            }
        } else {
            Known::UpToDate
        }
    }
}

#[derive(Default)]
struct Latest(Mutex<Known>);

/// What is known now.
pub fn known<R: Runtime>(app: &AppHandle<R>) -> Known {
    app.try_state::<Latest>()
        .map(|latest| latest.0.lock().unwrap_or_else(|e| e.into_inner()).clone())
        .unwrap_or_default()
}

/// Starts the checks when this build knows a feed; the last answer kept in the data folder
/// shows until the first one returns.
pub fn start<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Latest::default());
    let Some(feed) = updates::feed() else {
        return;
    };
    let data_dir = Config::load().unwrap_or_default().data_dir();
    if let Some(check) = updates::last_check(&data_dir) {
        set(app, Known::of(&check));
    }
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match updates::check(&feed).await {
                Ok(check) => {
                    updates::remember(&data_dir, &check);
                    if check.newer {
                        tracing::info!("Vaider {} is available: {}", check.latest, check.url);
                    }
                    set(&handle, Known::of(&check));
                }
                Err(e) => tracing::info!("{e}"),
            }
            tokio::time::sleep(CHECK_EVERY).await;
        }
    });
}

fn set<R: Runtime>(app: &AppHandle<R>, known: Known) {
    if let Some(latest) = app.try_state::<Latest>() {
        *latest.0.lock().unwrap_or_else(|e| e.into_inner()) = known;
    }
    crate::tray::refresh(app);
}

/// Opens the newer release's download in the user's browser.
pub fn open_download<R: Runtime>(app: &AppHandle<R>) {
    let Known::Newer { url, .. } = known(app) else {
        return;
    };
    // Only a web address is handed to the system's opener: a feed must not make the tray
    // open a local file or program.
    if !url.starts_with("https://") && !url.starts_with("http://") {
        tracing::warn!("the release feed's download is not a web address: {url}");
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(&url).spawn() {
        tracing::warn!("could not open {url}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_says_what_is_known() {
        assert_eq!(Known::Nothing.text(), format!("Vaider {VERSION}"));
        assert!(!Known::UpToDate.is_newer());
        let newer = Known::Newer {
            version: "9.0.0".into(),
            url: "https://example.invalid/v".into(),
        };
        assert_eq!(newer.text(), "Update available: Vaider 9.0.0…");
        assert!(newer.is_newer());
    }
}
