//! The small web app the QA plan tests drive (`tests/qa-app/shop.html`, which the QA
//! benchmark serves too): a login form, a list, and variants with a deliberate bug.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The app's page; `__BUG__` picks a variant.
pub const APP: &str = include_str!("../../../tests/qa-app/shop.html");

/// Serves the app on loopback at `/`, and its buggy variants at `/dead-button` and
/// `/wrong-greeting`; returns the base URL.
pub async fn serve_app() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let bug = match path {
                    "/dead-button" => "dead-button",
                    "/wrong-greeting" => "wrong-greeting",
                    _ => "none",
                };
                let body = APP.replace("__BUG__", bug);
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}
