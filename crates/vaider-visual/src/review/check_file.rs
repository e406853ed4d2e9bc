//! The pages `vaider check` captures, from the project's `.vaider/check.toml` (committed with
//! the baselines): each page's name, URL, viewport or device (one of Playwright's: "iPhone
//! 13", "Pixel 7"), and ignore selectors. `vaider check --init` writes a commented one.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use vaider_capture::{Target, Viewport, WebPage};

use super::{io_error, Result, ReviewError};

/// `.vaider/check.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckFile {
    #[serde(default)]
    pub page: Vec<CheckPage>,
}

/// One page to capture and check.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckPage {
    pub name: String,
    pub url: String,
    /// WIDTHxHEIGHT; the device's, or 1280x800, when not given.
    #[serde(default)]
    pub viewport: Option<String>,
    /// A device by Playwright's name for it ("iPhone 13", "Pixel 7"): its viewport, scale,
    /// mobile layout, touch and user agent. The baseline is kept under its name.
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub full_page: bool,
    /// CSS selectors of elements never compared (a clock, an ad).
    #[serde(default)]
    pub ignore: Vec<String>,
}

impl CheckPage {
    /// What to capture: the page at its viewport, shown as its device when it names one (from
    /// the project's installed Playwright's descriptors, else Vaider's copy of them).
    pub async fn target(&self, project: &Path) -> Result<Target> {
        let device = match self.device.as_deref() {
            Some(name) => Some(
                vaider_capture::find_device(name, Some(project))
                    .await
                    .map_err(|e| ReviewError(format!("page {:?}: {e}", self.name)))?,
            ),
            None => None,
        };
        let viewport = match (&self.viewport, &device) {
            (Some(text), _) => parse_viewport(text)
                .map_err(|e| ReviewError(format!("page {:?}: {e}", self.name)))?,
            (None, Some(device)) => device.viewport,
            (None, None) => Viewport::default(),
        };
        Ok(Target::Web(WebPage {
            url: self.url.clone(),
            viewport,
            full_page: self.full_page,
            ignore_selectors: self.ignore.clone(),
            device,
        }))
    }
}

/// `WIDTHxHEIGHT` as a viewport.
pub fn parse_viewport(text: &str) -> std::result::Result<Viewport, String> {
    let wrong = || format!("{text:?} is not WIDTHxHEIGHT, e.g. 1280x800");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(wrong)?;
    match (w.trim().parse(), h.trim().parse()) {
        (Ok(width), Ok(height)) if width > 0 && height > 0 => Ok(Viewport { width, height }),
        _ => Err(wrong()),
    }
}

/// `<project>/.vaider/check.toml`.
pub fn path(project: &Path) -> PathBuf {
    super::vaider_dir(project).join("check.toml")
}

/// Reads the check file, with a sentence saying how to make one when it is missing.
pub fn read(project: &Path) -> Result<CheckFile> {
    let path = path(project);
    let text = std::fs::read_to_string(&path).map_err(|_| {
        ReviewError(format!(
            "no {}: write one with `vaider check --init`, or check a Playwright run with `vaider check --playwright test-results`",
            path.display()
        ))
    })?;
    let file: CheckFile = toml::from_str(&text)
        .map_err(|e| ReviewError(format!("{} is not a check file: {e}", path.display())))?;
    if file.page.is_empty() {
        return Err(ReviewError(format!(
            "{} lists no [[page]]: add one (see the comments `vaider check --init` writes)",
            path.display()
        )));
    }
    Ok(file)
}

/// The commented check file `--init` writes.
pub const TEMPLATE: &str = r##"# The pages `vaider check` captures and compares with their baselines in
# .vaider/baselines/ (commit this file and that folder). Each [[page]] is captured in
# headless Chromium; a page without a baseline is "new", one that differs is "changed":
# both wait for `vaider review` (or `vaider check --update`) to approve them.

[[page]]
# The capture's name: the baseline is .vaider/baselines/<name>@<viewport>.png
name = "home"
url = "http://localhost:3000/"
# WIDTHxHEIGHT (default 1280x800)
viewport = "1280x800"
# Or a device by Playwright's name for it ("iPhone 13", "Pixel 7"): its viewport, scale,
# mobile layout and user agent; the baseline is then .vaider/baselines/<name>@<device>.png
# device = "iPhone 13"
# The whole scrollable page rather than the viewport.
full_page = false
# CSS selectors of elements never compared (a clock, an ad, a random avatar).
ignore = []
"##;

/// Writes the commented check file; refuses to replace one.
pub fn write_template(project: &Path) -> Result<PathBuf> {
    let path = path(project);
    if path.exists() {
        return Err(ReviewError(format!(
            "{} already exists: edit it, or move it away to start again",
            path.display()
        )));
    }
    let dir = super::vaider_dir(project);
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
    let _ = vaider_core::config::write_project_gitignore(&dir);
    std::fs::write(&path, TEMPLATE).map_err(|e| io_error("write", &path, e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_a_check_file_and_a_missing_one_says_what_to_do() {
        let project = tempfile::tempdir().unwrap();
        let err = read(project.path()).unwrap_err();
        assert!(err.to_string().contains("vaider check --init"), "{err}");
        write_template(project.path()).unwrap();
        let file = read(project.path()).unwrap();
        assert_eq!(file.page[0].name, "home");
        assert_eq!(file.page[0].viewport.as_deref(), Some("1280x800"));
        assert!(write_template(project.path()).is_err());
    }
}
