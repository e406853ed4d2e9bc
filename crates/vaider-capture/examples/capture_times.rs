//! How long a capture takes here: a web page (browser launch included) and, when a display is
//! set, the desktop screen. `cargo run -p vaider-capture --example capture_times`, under
//! `xvfb-run -a -s "-screen 0 1280x800x24"` for the screen.

use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vaider_capture::{capture, Target, Viewport, WebPage};

const PAGE: &str = "<!doctype html><html><body style=\"margin:0\">\
<h1 style=\"font:32px sans-serif\">Vaider capture timing</h1>\
<div style=\"width:200px;height:100px;background:#36c\"></div></body></html>";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0u8; 2048];
            let _ = socket.read(&mut request).await;
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    let web = Target::Web(WebPage {
        url,
        viewport: Viewport {
            width: 1280,
            height: 800,
        },
        full_page: false,
        ignore_selectors: Vec::new(),
        device: None,
    });
    for run in 1..=3 {
        let started = Instant::now();
        let shot = capture(&web).await?;
        println!(
            "web page {}x{} (launch, settle, shot, close), run {run}: {:?}",
            shot.width,
            shot.height,
            started.elapsed()
        );
    }
    if std::env::var_os("DISPLAY").is_some() {
        for run in 1..=3 {
            let started = Instant::now();
            let shot = capture(&Target::Desktop { window: None }).await?;
            println!(
                "desktop screen {}x{} (capture and PNG encode), run {run}: {:?}",
                shot.width,
                shot.height,
                started.elapsed()
            );
        }
    }
    Ok(())
}
