//! Page shots in the real headless Chromium of this machine, of pages served on loopback by the
//! test itself: the pixels land where the page put them, and a moving page shoots the same
//! bytes twice.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vaider_browser::{Browser, Viewport};

const BLOCK_PAGE: &str = r#"<!doctype html><html><head><style>
html,body{margin:0;background:#ffffff}
#block{position:absolute;left:30px;top:40px;width:100px;height:50px;background:#ff0000}
</style></head><body><div id="block"></div></body></html>"#;

const TALL_PAGE: &str = r#"<!doctype html><html><head><style>
html,body{margin:0;background:#ffffff}
#foot{position:absolute;left:0;top:1400px;width:100%;height:100px;background:#0000ff}
</style></head><body><div id="foot"></div></body></html>"#;

const MOVING_PAGE: &str = r#"<!doctype html><html><head><style>
html,body{margin:0;background:#ffffff}
@keyframes spin{from{transform:rotate(0deg)}to{transform:rotate(360deg)}}
#spinner{position:absolute;left:50px;top:50px;width:80px;height:80px;background:#00aa00;
  animation:spin 0.7s linear infinite}
#slider{position:absolute;left:200px;top:50px;width:80px;height:80px;background:#0000ff;
  transition:left 5s linear}
input{position:absolute;left:50px;top:200px;font-size:24px}
</style></head><body><div id="spinner"></div><div id="slider"></div><input id="field" value="caret here">
<script>
  document.getElementById('field').focus();
  requestAnimationFrame(() => { document.getElementById('slider').style.left = '600px'; });
</script></body></html>"#;

/// Serves the pages above by path on 127.0.0.1 and returns the base URL.
async fn serve_pages() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let (status, body) = match path {
                    "/block" => ("200 OK", BLOCK_PAGE),
                    "/tall" => ("200 OK", TALL_PAGE),
                    "/moving" => ("200 OK", MOVING_PAGE),
                    _ => ("404 Not Found", "not here"),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}

fn rgb(png: &[u8]) -> image::RgbImage {
    image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .expect("the shot is a PNG")
        .to_rgb8()
}

#[tokio::test]
async fn a_red_block_is_where_the_page_put_it_and_the_shot_is_the_viewport_size() {
    let base = serve_pages().await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let viewport = Viewport {
        width: 400,
        height: 300,
    };
    let started = Instant::now();
    let png = browser
        .page_screenshot(&format!("{base}/block"), viewport, false)
        .await
        .expect("page shot");
    println!(
        "web page shot (viewport 400x300) took {:?}",
        started.elapsed()
    );
    let image = rgb(&png);
    assert_eq!(image.dimensions(), (400, 300));
    let red = [255, 0, 0];
    let white = [255, 255, 255];
    for (x, y) in [(30, 40), (129, 40), (30, 89), (129, 89), (80, 65)] {
        assert_eq!(image.get_pixel(x, y).0, red, "inside the block at {x},{y}");
    }
    for (x, y) in [(29, 40), (130, 40), (30, 39), (30, 90), (0, 0), (399, 299)] {
        assert_eq!(
            image.get_pixel(x, y).0,
            white,
            "outside the block at {x},{y}"
        );
    }
    browser.close().await;
}

#[tokio::test]
async fn a_full_page_shot_is_as_tall_as_the_page_and_the_next_shot_is_the_viewport_again() {
    let base = serve_pages().await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let viewport = Viewport {
        width: 320,
        height: 240,
    };
    let url = format!("{base}/tall");
    let whole = rgb(&browser.page_screenshot(&url, viewport, true).await.unwrap());
    assert_eq!(whole.dimensions(), (320, 1500));
    assert_eq!(whole.get_pixel(10, 1450).0, [0, 0, 255]);
    assert_eq!(whole.get_pixel(10, 1399).0, [255, 255, 255]);
    let visible = rgb(&browser
        .page_screenshot(&url, viewport, false)
        .await
        .unwrap());
    assert_eq!(visible.dimensions(), (320, 240));
    browser.close().await;
}

#[tokio::test]
async fn a_page_with_an_animation_a_transition_and_a_caret_shoots_the_same_bytes_twice() {
    let base = serve_pages().await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let viewport = Viewport {
        width: 800,
        height: 400,
    };
    let url = format!("{base}/moving");
    let first = browser
        .page_screenshot(&url, viewport, false)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = browser
        .page_screenshot(&url, viewport, false)
        .await
        .unwrap();
    assert!(first == second, "two shots 300 ms apart differ");
    // The page did render: the stopped spinner is green somewhere.
    let image = rgb(&first);
    assert_eq!(image.get_pixel(90, 90).0, [0, 170, 0]);
    browser.close().await;
}

#[tokio::test]
async fn a_page_that_cannot_be_reached_is_an_error_naming_the_url() {
    // A port nobody listens on: bind one, then let it go.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", free.local_addr().unwrap());
    drop(free);
    let browser = Browser::launch().await.expect("Chromium starts");
    let err = browser
        .page_screenshot(&url, Viewport::default(), false)
        .await
        .unwrap_err();
    assert!(err.to_string().contains(&url), "{err}");
    browser.close().await;
}
