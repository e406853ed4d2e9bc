//! Shots of a web page: a fresh headless Chromium per capture, through `vaider-browser`, which
//! waits until the page is still. The page's ignore selectors are resolved there, right before
//! the shot, and turned here into rectangles of the image's pixels.

use serde::{Deserialize, Serialize};
use vaider_browser::{Browser, CssBox, Device, Matched, PageShot, Viewport};

use crate::{shot_from_png, CaptureError, Shot};

/// The page to shoot and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPage {
    pub url: String,
    pub viewport: Viewport,
    /// The whole scrollable page rather than only the viewport.
    pub full_page: bool,
    /// CSS selectors whose elements later comparisons ignore.
    pub ignore_selectors: Vec<String>,
    /// The device the page is shown as (its scale, mobile layout, touch and user agent);
    /// `viewport` is then the device's, unless the caller chose another.
    pub device: Option<Device>,
}

impl WebPage {
    /// The page at `url` in the default 1280x800 viewport.
    pub fn new(url: impl Into<String>) -> WebPage {
        WebPage {
            url: url.into(),
            viewport: Viewport::default(),
            full_page: false,
            ignore_selectors: Vec::new(),
            device: None,
        }
    }
}

/// A rectangle of a shot, in its pixels, that an ignore selector matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorRegion {
    pub selector: String,
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

pub(crate) async fn capture_page(page: &WebPage) -> Result<Shot, CaptureError> {
    let browser = Browser::launch().await?;
    let shot = browser
        .page_screenshot_ignoring(
            &page.url,
            page.viewport,
            page.device.as_ref(),
            page.full_page,
            &page.ignore_selectors,
        )
        .await;
    browser.close().await;
    let PageShot {
        png,
        device_pixel_ratio,
        matched,
    } = shot?;
    let mut shot = shot_from_png(png, "web", "Chromium")?;
    let (ignored, unmatched) =
        regions_in_pixels(&matched, device_pixel_ratio, shot.width, shot.height);
    shot.ignored = ignored;
    shot.unmatched_selectors = unmatched;
    Ok(shot)
}

/// Each selector's element boxes as image rectangles (times the device pixel ratio, widened to
/// whole pixels, clipped to the image); a box outside the image gives none. Also the selectors
/// that gave no rectangle at all.
pub(crate) fn regions_in_pixels(
    matched: &[Matched],
    ratio: f64,
    width: u32,
    height: u32,
) -> (Vec<SelectorRegion>, Vec<String>) {
    let mut regions = Vec::new();
    let mut unmatched = Vec::new();
    for entry in matched {
        let before = regions.len();
        regions.extend(
            entry
                .boxes
                .iter()
                .filter_map(|b| in_pixels(b, ratio, width, height))
                .map(|(x, y, w, h)| SelectorRegion {
                    selector: entry.selector.clone(),
                    x,
                    y,
                    width: w,
                    height: h,
                }),
        );
        if regions.len() == before {
            unmatched.push(entry.selector.clone());
        }
    }
    (regions, unmatched)
}

fn in_pixels(b: &CssBox, ratio: f64, width: u32, height: u32) -> Option<(u32, u32, u32, u32)> {
    // Widened outwards: a pixel the element partly covers is one it may change.
    let clip = |v: f64, limit: u32| v.clamp(0.0, f64::from(limit));
    let x0 = clip((b.x * ratio).floor(), width);
    let y0 = clip((b.y * ratio).floor(), height);
    let x1 = clip(((b.x + b.width) * ratio).ceil(), width);
    let y1 = clip(((b.y + b.height) * ratio).ceil(), height);
    (x1 > x0 && y1 > y0).then_some((x0 as u32, y0 as u32, (x1 - x0) as u32, (y1 - y0) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(selector: &str, boxes: &[(f64, f64, f64, f64)]) -> Matched {
        Matched {
            selector: selector.into(),
            boxes: boxes
                .iter()
                .map(|&(x, y, width, height)| CssBox {
                    x,
                    y,
                    width,
                    height,
                })
                .collect(),
        }
    }

    #[test]
    fn boxes_become_device_pixels_widened_and_clipped_to_the_image() {
        let found = [
            matched("#clock", &[(30.0, 40.0, 100.0, 50.0)]),
            // Half pixels widen outwards; the part past the image is cut.
            matched(
                ".ad",
                &[(10.5, 0.25, 20.0, 10.0), (290.0, 190.0, 40.0, 40.0)],
            ),
            // Entirely outside the image: no rectangle, so it counts as matching nothing.
            matched("#gone", &[(400.0, 10.0, 10.0, 10.0)]),
            matched("#none", &[]),
        ];
        let (regions, unmatched) = regions_in_pixels(&found, 2.0, 600, 400);
        let boxes: Vec<_> = regions
            .iter()
            .map(|r| (r.selector.as_str(), r.x, r.y, r.width, r.height))
            .collect();
        assert_eq!(
            boxes,
            [
                ("#clock", 60, 80, 200, 100),
                (".ad", 21, 0, 40, 21),
                (".ad", 580, 380, 20, 20),
            ]
        );
        assert_eq!(unmatched, ["#gone", "#none"]);
    }
}
