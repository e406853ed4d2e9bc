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

/// The real project (`tests/real-project`): the TodoMVC React app (npm `todomvc-react`) and
/// its own published Playwright suite (npm `todomvc-tests`), set up as `npm init playwright`
/// makes a project (CommonJS package, `playwright.config.ts`). The suite is copied from the
/// package into the project's `tests/` folder, as a user copies a published suite.
pub fn real_project_dir() -> PathBuf {
    let dir = crate::repo_root().join("tests/real-project");
    let suite = dir.join("node_modules/todomvc-tests/tests");
    assert!(
        suite.is_dir(),
        "{}: run `npm ci` in tests/real-project (bash scripts/test.sh does it)",
        suite.display()
    );
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    for name in ["app.spec.ts", "fixtures.ts"] {
        let from = std::fs::read(suite.join(name)).unwrap();
        let to = dir.join("tests").join(name);
        if std::fs::read(&to).ok().as_ref() != Some(&from) {
            // Another test may copy it at the same time: a whole file appears at once.
            let part = dir
                .join("tests")
                .join(format!(".{name}.{}", std::process::id()));
            std::fs::write(&part, &from).unwrap();
            std::fs::rename(&part, &to).unwrap();
        }
    }
    dir
}

/// Serves the TodoMVC app (`todomvc-react`'s build) on loopback; returns its base URL.
/// `broken`: a completed todo no longer gets its `completed` class (no longer shown struck
/// through): the suite's "should allow me to mark items as complete" then fails, as on a real
/// regression.
pub async fn serve_todomvc(broken: bool) -> String {
    let dist = real_project_dir().join("node_modules/todomvc-react/dist");
    let read = |name: &str| std::fs::read_to_string(dist.join(name)).unwrap();
    let (index, css) = (read("index.html"), read("todomvc.css"));
    let mut js = read("todomvc.js");
    if broken {
        let class = "f()({completed:n.completed,editing";
        assert!(js.contains(class), "todomvc-react's build changed");
        js = js.replace(class, "f()({done:n.completed,editing");
    }
    let (port, _) = crate::loopback::listen(move |path| {
        let (body, kind) = match path.split(['?', '#']).next().unwrap_or("/") {
            "/todomvc.js" => (js.as_str(), "application/javascript"),
            "/todomvc.css" => (css.as_str(), "text/css"),
            _ => (index.as_str(), "text/html"),
        };
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    })
    .await;
    format!("http://127.0.0.1:{port}")
}
