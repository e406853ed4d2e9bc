//! Shots of a web page: a fresh headless Chromium per capture, through `vaider-browser`, which
//! waits until the page is still.

use vaider_browser::{Browser, Viewport};

use crate::{shot_from_png, CaptureError, Shot};

/// The page to shoot and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPage {
    pub url: String,
    pub viewport: Viewport,
    /// The whole scrollable page rather than only the viewport.
    pub full_page: bool,
}

impl WebPage {
    /// The page at `url` in the default 1280x800 viewport.
    pub fn new(url: impl Into<String>) -> WebPage {
        WebPage {
            url: url.into(),
            viewport: Viewport::default(),
            full_page: false,
        }
    }
}

pub(crate) async fn capture_page(page: &WebPage) -> Result<Shot, CaptureError> {
    let browser = Browser::launch().await?;
    let shot = browser
        .page_screenshot(&page.url, page.viewport, page.full_page)
        .await;
    browser.close().await;
    shot_from_png(shot?, "web", "Chromium")
}
