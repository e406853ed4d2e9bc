//! The web adapter through `capture_in`, in the real headless Chromium of this machine, and the
//! automatic order reaching the web page when nothing else is available.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vaider_capture::{capture_in, Environment, Target, Viewport, WebPage};

const PAGE: &str = r#"<!doctype html><html><head><style>
html,body{margin:0;background:#ffffff}
#block{position:absolute;left:30px;top:40px;width:100px;height:50px;background:#ff0000}
</style></head><body><div id="block"></div></body></html>"#;

async fn serve_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
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
    url
}

fn page(url: String) -> WebPage {
    WebPage {
        url,
        viewport: Viewport {
            width: 300,
            height: 200,
        },
        full_page: false,
        ignore_selectors: Vec::new(),
    }
}

fn check_block(png: &[u8]) {
    let image = image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .unwrap()
        .to_rgb8();
    assert_eq!(image.dimensions(), (300, 200));
    assert_eq!(image.get_pixel(30, 40).0, [255, 0, 0]);
    assert_eq!(image.get_pixel(129, 89).0, [255, 0, 0]);
    assert_eq!(image.get_pixel(130, 90).0, [255, 255, 255]);
}

#[tokio::test]
async fn the_web_adapter_shoots_the_page_at_the_viewport_size() {
    let target = Target::Web(page(serve_page().await));
    let shot = capture_in(&target, &Environment::default()).await.unwrap();
    assert_eq!(shot.platform, "web");
    assert_eq!((shot.width, shot.height), (300, 200));
    check_block(&shot.png);
}

#[tokio::test]
async fn auto_with_a_url_and_nothing_else_available_shoots_the_web_page() {
    let empty = tempfile::tempdir().unwrap();
    let env = Environment {
        path: Some(empty.path().as_os_str().to_owned()),
        ..Environment::default()
    };
    let target = Target::Auto {
        web: Some(page(serve_page().await)),
    };
    let shot = capture_in(&target, &env).await.unwrap();
    assert_eq!(shot.platform, "web");
    check_block(&shot.png);
}
