//! Where the elements that CSS selectors match are on the page, read in the page right before
//! its shot: what a web capture leaves out of later comparisons (a clock, an ad box). The
//! selectors reach the page as JSON values, so a crafted one cannot run script.

use chromiumoxide::Page;
use serde::Deserialize;

use crate::{cdp, BrowserError};

/// Finds every element of each selector and returns its box (`{bad}` for an invalid one).
const BOXES_JS: &str = include_str!("boxes.js");

/// The most element boxes one shot reports: a comparison checks each on every changed row.
pub const MAX_BOXES: usize = 1000;

/// The most selectors one shot takes.
pub const MAX_SELECTORS: usize = 100;

/// An element's box in CSS pixels of the shot (the document's for a full-page shot).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct CssBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// One selector and the boxes of the drawn elements it matched (none: it matched nothing drawn).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Matched {
    pub selector: String,
    pub boxes: Vec<CssBox>,
}

/// A page shot with where the selectors' elements were when it was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct PageShot {
    pub png: Vec<u8>,
    /// Image pixels per CSS pixel.
    pub device_pixel_ratio: f64,
    pub matched: Vec<Matched>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    #[serde(default)]
    bad: Option<String>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    too_many: bool,
    #[serde(default)]
    ratio: Option<f64>,
    #[serde(default)]
    matched: Vec<Matched>,
}

/// Refuses a selector list the page should not be asked about.
pub(crate) fn check_selectors(selectors: &[String]) -> Result<(), BrowserError> {
    if selectors.len() > MAX_SELECTORS {
        return Err(BrowserError::TooManySelectors {
            count: selectors.len(),
        });
    }
    match selectors.iter().find(|s| s.trim().is_empty()) {
        Some(empty) => Err(BrowserError::BadSelector {
            selector: empty.clone(),
            reason: "it is empty".into(),
        }),
        None => Ok(()),
    }
}

/// The boxes of each selector's elements on `page` now, and the page's device pixel ratio.
pub(crate) async fn element_boxes(
    page: &Page,
    selectors: &[String],
    full_page: bool,
) -> Result<(f64, Vec<Matched>), BrowserError> {
    if selectors.is_empty() {
        return Ok((1.0, Vec::new()));
    }
    // Arguments as JSON literals, the way the tab passes its selectors: data, never code.
    let list = serde_json::to_string(selectors).unwrap_or_else(|_| "[]".into());
    let result = page
        .evaluate(format!("({BOXES_JS})({list}, {full_page}, {MAX_BOXES})"))
        .await
        .map_err(cdp("finding the ignored elements"))?;
    let answer = result.into_value::<Answer>().unwrap_or_default();
    if let Some(selector) = answer.bad {
        return Err(BrowserError::BadSelector {
            selector,
            reason: answer.reason,
        });
    }
    if answer.too_many {
        return Err(BrowserError::TooManyBoxes);
    }
    if answer.matched.len() != selectors.len() {
        // The page's own script replaced what the finder relies on.
        return Err(BrowserError::BoxesUnread);
    }
    let ratio = answer.ratio.filter(|r| r.is_finite() && *r > 0.0);
    Ok((ratio.unwrap_or(1.0), answer.matched))
}
