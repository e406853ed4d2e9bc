//! The Playwright fixture project (`tests/playwright-project`) that the validation tests run.

use std::path::{Path, PathBuf};

/// The fixture project's folder.
pub fn project_dir() -> PathBuf {
    crate::repo_root().join("tests/playwright-project")
}

/// Playwright records video with its own ffmpeg build, which cannot be downloaded here; the
/// Debian one works in its place. scripts/lib.sh links it for the test run
/// (`PLAYWRIGHT_BROWSERS_PATH`) and the real HOME; a test run by hand may have neither, so the
/// link is made where Playwright will look, when missing.
pub fn ensure_playwright_ffmpeg(project: &Path) {
    let browsers = project.join("node_modules/playwright-core/browsers.json");
    let text = std::fs::read_to_string(&browsers).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: run `npm ci` in tests/playwright-project (bash scripts/test.sh does it)",
            browsers.display()
        )
    });
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let revision = value["browsers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ffmpeg")
        .and_then(|b| b["revision"].as_str())
        .unwrap()
        .to_string();
    let root = std::env::var_os("PLAYWRIGHT_BROWSERS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/ms-playwright")
        });
    let dir = root.join(format!("ffmpeg-{revision}"));
    let link = dir.join("ffmpeg-linux");
    if !link.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::os::unix::fs::symlink("/usr/bin/ffmpeg", &link);
    }
}
