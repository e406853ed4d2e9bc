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
        device: None,
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

/// A page of `height` CSS pixels: a red block, a blue ad box far down, a hidden element, and
/// a script that scrolls the page before the shot.
const SELECTOR_PAGE: &str = r#"<!doctype html><html><head><style>
html,body{margin:0;background:#ffffff}
body{height:1000px}
#block{position:absolute;left:30px;top:40px;width:100px;height:50px;background:#ff0000}
.ad{position:absolute;left:12.5px;top:600px;width:60px;height:40px;background:#0000ff}
#hidden{display:none;width:50px;height:50px}
</style></head><body><div id="block"></div><div class="ad"></div><div id="hidden"></div>
<script>window.scrollTo(0, 300)</script></body></html>"#;

async fn serve(body: &'static str) -> String {
    let (port, _) =
        vaider_test_support::loopback::listen(move |_| vaider_test_support::loopback::html(body))
            .await;
    format!("http://127.0.0.1:{port}/")
}

fn ignoring(url: String, full_page: bool, selectors: &[&str]) -> Target {
    Target::Web(WebPage {
        full_page,
        ignore_selectors: selectors.iter().map(|s| s.to_string()).collect(),
        device: None,
        ..page(url)
    })
}

#[tokio::test]
async fn ignore_selectors_become_each_drawn_elements_box_in_the_shots_pixels() {
    let url = serve(SELECTOR_PAGE).await;
    let target = ignoring(url, true, &["#block", ".ad", "#hidden", ".nowhere"]);
    let shot = capture_in(&target, &Environment::default()).await.unwrap();
    assert_eq!((shot.width, shot.height), (300, 1000));
    let boxes: Vec<_> = shot
        .ignored
        .iter()
        .map(|r| (r.selector.as_str(), r.x, r.y, r.width, r.height))
        .collect();
    // The page scrolled by 300 px: a full-page shot's boxes are where the document has them
    // (the half pixel at 12.5 widens the box outwards).
    assert_eq!(
        boxes,
        [("#block", 30, 40, 100, 50), (".ad", 12, 600, 61, 40)]
    );
    // The rectangles cover the elements' own pixels in the image.
    let image = image::load_from_memory(&shot.png).unwrap().to_rgb8();
    assert_eq!(image.get_pixel(30, 40).0, [255, 0, 0]);
    assert_eq!(image.get_pixel(13, 600).0, [0, 0, 255]);
    assert_eq!(image.get_pixel(71, 639).0, [0, 0, 255]);
    assert_eq!(image.get_pixel(74, 639).0, [255, 255, 255]);
    // Not drawn (display:none) and not on the page: reported, not refused.
    assert_eq!(shot.unmatched_selectors, ["#hidden", ".nowhere"]);
}

#[tokio::test]
async fn a_viewport_shot_keeps_only_the_visible_part_of_each_box() {
    let url = serve(SELECTOR_PAGE).await;
    let shot = capture_in(
        &ignoring(url, false, &["#block", ".ad"]),
        &Environment::default(),
    )
    .await
    .unwrap();
    assert_eq!((shot.width, shot.height), (300, 200));
    // Scrolled by 300: the block is above the viewport, the ad box at 300..340 below it.
    assert!(shot.ignored.is_empty(), "{:?}", shot.ignored);
    assert_eq!(shot.unmatched_selectors, ["#block", ".ad"]);
}

#[tokio::test]
async fn an_invalid_selector_is_refused_with_its_name_and_reaches_the_page_as_data() {
    let url = serve(PAGE).await;
    // A selector written to break out of a string or a call: it reaches the page as data.
    for bad in [
        "div[",
        "'); document.title = 'owned'; ('",
        "\"]) || alert(1) || ([",
    ] {
        let error = capture_in(
            &ignoring(url.clone(), false, &["#block", bad]),
            &Environment::default(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            error.contains(&format!("`{bad}` is not a valid CSS selector")),
            "{error}"
        );
    }
}
