//! A `visual_compare` entry's other pictures and its result, for the comparison viewer: the
//! diff image, the heat map and the close-ups, and the regions with their findings. They lie
//! beside the annotated after-image the history recorded (`<stem>-annotation.png`), named by
//! the screenshot store's rules, so their paths are derived from the recorded one and never
//! read from a file in the project.

use std::path::{Path, PathBuf};

use serde::Serialize;
use vaider_core::history::Interaction;
use vaider_visual::service::CompareData;
use vaider_visual::task::VISUAL_COMPARE;

const ANNOTATION_SUFFIX: &str = "-annotation.png";

/// The pictures a comparison's detail may show besides BEFORE and AFTER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Picture {
    Diff,
    HeatMap,
    CloseUps,
}

impl Picture {
    pub fn from_name(name: &str) -> Option<Picture> {
        match name {
            "diff" => Some(Picture::Diff),
            "heatmap" => Some(Picture::HeatMap),
            "zoom" => Some(Picture::CloseUps),
            _ => None,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Picture::Diff => "-diff.png",
            Picture::HeatMap => "-heatmap.png",
            Picture::CloseUps => "-zoom.png",
        }
    }
}

/// The comparison's stem path (`…/comparisons/01-vs-02`), for a visual_compare entry only.
fn stem(row: &Interaction) -> Option<String> {
    if row.tool != VISUAL_COMPARE.as_str() {
        return None;
    }
    row.media_path
        .as_deref()
        .and_then(|path| path.strip_suffix(ANNOTATION_SUFFIX))
        .map(str::to_string)
}

/// Where one of the entry's pictures is, if the entry is a comparison.
pub(super) fn picture_path(row: &Interaction, picture: Picture) -> Option<PathBuf> {
    stem(row).map(|stem| PathBuf::from(format!("{stem}{}", picture.suffix())))
}

/// What the detail view shows of a comparison: the pictures there are, and the result with
/// its regions and findings (written when the comparison finished).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ComparisonView {
    diff_url: Option<String>,
    heat_map_url: Option<String>,
    close_ups_url: Option<String>,
    /// `<stem>-diff.json`: visual_compare's `data`, as the agent got it; null until the
    /// comparison finished (or when the file is gone or not one the comparison wrote).
    result: Option<CompareData>,
}

/// Reads the comparison's files from disk (call off the async threads).
pub(super) fn view(row: &Interaction) -> Option<ComparisonView> {
    let stem = stem(row)?;
    let url = |picture: Picture| {
        let path = format!("{stem}{}", picture.suffix());
        let which = match picture {
            Picture::Diff => "diff",
            Picture::HeatMap => "heatmap",
            Picture::CloseUps => "zoom",
        };
        Path::new(&path)
            .is_file()
            .then(|| super::media::url(&row.id, Some(&format!("which={which}"))))
    };
    let result = std::fs::read(format!("{stem}-diff.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<CompareData>(&bytes).ok());
    Some(ComparisonView {
        diff_url: url(Picture::Diff),
        heat_map_url: url(Picture::HeatMap),
        close_ups_url: url(Picture::CloseUps),
        result,
    })
}
