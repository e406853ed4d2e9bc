//! The update check against a release feed served on loopback, as a release would publish it
//! (Tauri's latest.json): a newer version is found, an equal or older one is not, and a feed
//! that is not one (an HTML page, a 404, a body far too large) gives a sentence, not a panic.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vaider_core::updates;
use vaider_core::VERSION;

/// Serves `status` and `body` to every request on a loopback port; returns the feed's URL.
async fn feed(status: &'static str, body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
            });
        }
    });
    format!("http://{addr}/latest.json")
}

fn release(version: &str) -> Vec<u8> {
    format!(
        r#"{{"version": "{version}", "notes": "Faster comparisons", "pub_date": "2026-11-20T10:00:00Z",
            "platforms": {{"linux-x86_64": {{"signature": "c2ln", "url": "https://example.invalid/Vaider_{version}_amd64.deb"}},
                           "darwin-aarch64": {{"signature": "c2ln", "url": "https://example.invalid/Vaider.app.tar.gz"}}}}}}"#
    )
    .into_bytes()
}

#[tokio::test]
async fn a_newer_release_is_found_and_an_equal_one_is_not() {
    let newer = updates::check(&feed("200 OK", release("99.1.0")).await)
        .await
        .unwrap();
    assert!(newer.newer);
    assert_eq!(newer.latest, "99.1.0");
    assert_eq!(newer.current, VERSION);
    assert_eq!(newer.notes.as_deref(), Some("Faster comparisons"));
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        assert_eq!(newer.url, "https://example.invalid/Vaider_99.1.0_amd64.deb");
    }

    let equal = updates::check(&feed("200 OK", release(VERSION)).await)
        .await
        .unwrap();
    assert!(!equal.newer, "{equal:?}");
    let older = updates::check(&feed("200 OK", release("0.0.1")).await)
        .await
        .unwrap();
    assert!(!older.newer);
}

#[tokio::test]
async fn a_feed_that_is_not_one_says_so() {
    let page = feed("200 OK", b"<html>not a feed</html>".to_vec()).await;
    let e = updates::check(&page).await.unwrap_err();
    assert!(e.contains("is not a release feed"), "{e}");

    let missing = feed("404 Not Found", b"{}".to_vec()).await;
    let e = updates::check(&missing).await.unwrap_err();
    assert!(e.contains("answered 404"), "{e}");

    let huge = feed("200 OK", vec![b' '; 2 * 1024 * 1024]).await;
    let e = updates::check(&huge).await.unwrap_err();
    assert!(e.contains("larger than"), "{e}");

    // Nothing listens on this port (bound, then closed).
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let e = updates::check(&format!("http://{closed}/latest.json"))
        .await
        .unwrap_err();
    assert!(e.contains("could not read the release feed"), "{e}");
}
