//! What the tab tests share: one page served on loopback, as a web app's server would.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves `page` for every request on a free loopback port; returns its base URL.
pub async fn serve(page: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let _ = socket.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}

/// The policy of a run on `base`: its origin only.
#[allow(dead_code)]
pub fn policy(base: &str) -> vaider_browser::UrlPolicy {
    vaider_browser::UrlPolicy::new(base, &[], false).unwrap()
}
