//! A page cannot drop files on the machine: a download started by an `<a download>` click or
//! by a `Content-Disposition: attachment` response is denied, and no file holding what was
//! served appears in the browser's profile, the user's Downloads folder or the working folder.
//! Absence cannot be awaited: after the server has sent the file, the folders are watched for
//! a few seconds (a download of a few bytes is written within milliseconds when allowed).
//! Linux only: the Downloads folder watched is the one Linux desktops use.

#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use vaider_browser::{Browser, UrlPolicy, Viewport};
use vaider_test_support::loopback::{files_containing, html, listen};

const WAIT: Duration = Duration::from_secs(10);
const PAGE: &str = r#"<!doctype html><html><body>
<a id="save" href="/file" download="vaider-download-probe.txt">Save</a>
</body></html>"#;

#[tokio::test]
async fn a_page_cannot_download_a_file() {
    let mark = format!("VAIDER-DOWNLOAD-{}-{}", std::process::id(), nanos());
    let served = Arc::new(AtomicUsize::new(0));
    let (counted, body) = (served.clone(), mark.clone());
    let (port, _) = listen(move |path| match path {
        "/file" | "/attachment" => {
            counted.fetch_add(1, Ordering::SeqCst);
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"vaider-download-probe.txt\"\r\nCache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        _ => html(PAGE),
    })
    .await;
    let base = format!("http://127.0.0.1:{port}");
    let browser = Browser::launch().await.expect("Chromium starts");
    let profile = browser.profile_dir().to_path_buf();
    let tab = browser
        .open_tab(
            Viewport::default(),
            UrlPolicy::new(&base, &[], false).unwrap(),
        )
        .await
        .unwrap();
    tab.open(&base, WAIT).await.unwrap();
    tab.click("#save", WAIT).await.unwrap();
    // A navigation to an attachment becomes a download too (the navigation itself is aborted).
    let _ = tab.open(&format!("{base}/attachment"), WAIT).await;
    wait_until(|| served.load(Ordering::SeqCst) >= 2).await;

    let mut folders = vec![profile, std::env::current_dir().unwrap()];
    if let Some(home) = std::env::var_os("HOME") {
        folders.push(PathBuf::from(home).join("Downloads"));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while std::time::Instant::now() < deadline {
        for folder in &folders {
            let found = files_containing(folder, &mark);
            for file in &found {
                let _ = std::fs::remove_file(file);
            }
            assert!(found.is_empty(), "a page's download was written: {found:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tab.close().await;
    browser.close().await;
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Polls `done` for up to ten seconds.
async fn wait_until(done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + WAIT;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server was not asked for the file"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
