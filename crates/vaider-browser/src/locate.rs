//! Finding a Chromium or Chrome already installed on this machine. Nothing is downloaded: the
//! user's own browser renders the page, and the error says how to install one when none is found.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::BrowserError;

/// The environment variable that names the browser to use, before any standard place.
pub const CHROME_ENV: &str = "VAIDER_CHROME";

/// Program names looked up on `PATH`, in order of preference.
const NAMES_ON_PATH: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Where the installers put the browser when it is not on `PATH` (macOS apps, Windows).
fn standard_places() -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
        "/usr/bin/google-chrome-stable",
        "/snap/bin/chromium",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
        r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    // A per-user Chrome install on Windows lives under the local app data folder.
    if let Some(local) = std::env::var_os("LOCALAPPDATA") {
        places.push(Path::new(&local).join(r"Google\Chrome\Application\chrome.exe"));
    }
    places
}

/// Finds the browser to launch: `VAIDER_CHROME` first, then the standard places, then `PATH`.
pub fn find_chrome() -> Result<PathBuf, BrowserError> {
    find_chrome_in(std::env::var_os(CHROME_ENV), std::env::var_os("PATH"))
}

/// [`find_chrome`] with the environment passed in, so tests need not touch the process's.
pub fn find_chrome_in(
    chosen: Option<OsString>,
    path_var: Option<OsString>,
) -> Result<PathBuf, BrowserError> {
    if let Some(chosen) = chosen.filter(|c| !c.is_empty()) {
        let chosen = PathBuf::from(chosen);
        // A wrong override is an error, not a reason to quietly pick another browser.
        return if chosen.is_file() {
            Ok(chosen)
        } else {
            Err(BrowserError::ChosenChromeMissing { path: chosen })
        };
    }
    let mut looked = Vec::new();
    for place in standard_places() {
        if place.is_file() {
            return Ok(place);
        }
        looked.push(place.display().to_string());
    }
    if let Some(path_var) = path_var {
        for dir in std::env::split_paths(&path_var) {
            for name in NAMES_ON_PATH {
                for file in [dir.join(name), dir.join(format!("{name}.exe"))] {
                    if file.is_file() {
                        return Ok(file);
                    }
                }
            }
        }
        looked.push(format!("{} on PATH", NAMES_ON_PATH.join(", ")));
    }
    Err(BrowserError::NoChrome {
        looked: looked.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_browser_that_is_not_there_is_an_error_naming_it() {
        let err = find_chrome_in(Some("/nowhere/chrome".into()), None).unwrap_err();
        assert!(err.to_string().contains("/nowhere/chrome"), "{err}");
        assert!(err.to_string().contains(CHROME_ENV), "{err}");
    }

    #[test]
    fn a_chosen_browser_that_exists_wins() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("my-chrome");
        std::fs::write(&fake, b"").unwrap();
        assert_eq!(
            find_chrome_in(Some(fake.clone().into()), None).unwrap(),
            fake
        );
    }
}
