//! The views: one self-contained HTML page per kind of result (inline script and style, nothing
//! from a CDN), served as `ui://vaider/NAME` resources of type `text/html;profile=mcp-app`, and
//! which tool's result each shows. The pages live in `crates/vaider-server/views/`; the
//! script and style every view shares are put into each page when it is first served.

use std::sync::OnceLock;

/// One view.
pub struct View {
    /// The last part of its `ui://vaider/` address.
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The tools whose results it shows.
    pub tools: &'static [&'static str],
    page: &'static str,
}

impl View {
    pub fn uri(&self) -> String {
        format!("ui://vaider/{}", self.name)
    }

    /// The page, with the shared script and style in place.
    pub fn html(&self) -> &'static str {
        static PAGES: OnceLock<Vec<String>> = OnceLock::new();
        let pages = PAGES.get_or_init(|| VIEWS.iter().map(|view| assemble(view.page)).collect());
        VIEWS
            .iter()
            .position(|view| view.name == self.name)
            .and_then(|n| pages.get(n))
            .map_or("", String::as_str)
    }
}

const STYLE: &str = include_str!("../../../views/view.css");
const SCRIPT: &str = include_str!("../../../views/view.js");

fn assemble(page: &str) -> String {
    page.replace("/*VIEW_CSS*/", STYLE)
        .replace("/*VIEW_JS*/", SCRIPT)
}

pub const RECORDING: View = View {
    name: "recording",
    title: "Vaider: recording",
    description: "A test recording beside its timestamped description (a time seeks the video), \
                  with each expectation's verdict.",
    tools: &["analyze_video"],
    page: include_str!("../../../views/recording.html"),
};

pub const REVIEW: View = View {
    name: "review",
    title: "Vaider: pending visual changes",
    description: "The pending visual changes, baseline beside the new picture, with the model's \
                  verdicts; the user's own click approves or rejects.",
    tools: &["review_pending"],
    page: include_str!("../../../views/review.html"),
};

/// Every view, in the order `resources/list` gives them.
pub const VIEWS: &[View] = &[RECORDING, REVIEW];

/// The view that shows `tool`'s result, if one does.
pub fn of_tool(tool: &str) -> Option<&'static View> {
    VIEWS.iter().find(|view| view.tools.contains(&tool))
}

/// The view at `uri`.
pub fn at(uri: &str) -> Option<&'static View> {
    let name = uri.strip_prefix("ui://vaider/")?;
    VIEWS.iter().find(|view| view.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_is_a_whole_page_with_nothing_loaded_from_elsewhere() {
        for view in VIEWS {
            let html = view.html();
            assert!(html.starts_with("<!DOCTYPE html>"), "{}", view.name);
            assert!(!html.contains("/*VIEW_JS*/") && !html.contains("/*VIEW_CSS*/"));
            assert!(
                html.contains("ui/initialize"),
                "{}: no view script",
                view.name
            );
            for outside in ["<script src", "<link ", "https://", "@import"] {
                assert!(!html.contains(outside), "{} loads {outside}", view.name);
            }
            assert_eq!(at(&view.uri()).map(|v| v.name), Some(view.name));
        }
        assert_eq!(of_tool("analyze_video").map(|v| v.name), Some("recording"));
        assert!(of_tool("vaider_status").is_none());
        assert!(at("ui://other/recording").is_none());
    }
}
