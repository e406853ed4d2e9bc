//! Small loopback servers and data-folder searches that tests of several crates need: a
//! listener that answers every request and counts connections (to prove that a refused
//! address was never reached), and a search of every file under a folder for a value that
//! must not have been kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A loopback listener answering every request with `answer(path)` (a whole HTTP response);
/// returns its port and the count of connections it accepted.
pub async fn listen(
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let (counted, answer) = (hits.clone(), Arc::new(answer));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let _ = socket.write_all(answer(&path).as_bytes()).await;
            });
        }
    });
    (port, hits)
}

/// A 200 response with an HTML body, the connection closed after it.
pub fn html(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Every file under `dir` whose bytes hold `needle`, whatever its kind (text, JSON, SQLite,
/// PNG); none when `dir` does not exist.
pub fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                folders.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}
