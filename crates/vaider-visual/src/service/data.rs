//! `visual_compare`'s answer, in the shape of contracts.md §1, with what Vaider adds.

use serde::{Deserialize, Serialize};

/// `visual_compare`'s `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareData {
    /// The after-image with the changed regions boxed and numbered.
    pub annotated_screenshot: String,
    pub pixel_diff: PixelDiffData,
    pub agentic_analysis: AgenticAnalysis,
    pub validation: Validation,
    /// Beyond the contract: the other pictures, the regions, and the model call, if any.
    pub diff_image: Option<String>,
    pub heat_map: String,
    /// Close-ups of the largest changed regions (the zoom pass), as the model saw them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_ups: Option<String>,
    pub regions: Vec<RegionData>,
    /// The rectangles left out of the diff: those given (`ignore_regions`) and those the
    /// screenshots' ignore selectors matched when they were captured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_regions: Vec<IgnoredRegionData>,
    /// Set when the two screenshots differ in size: a layout change, compared on the overlap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_change: Option<String>,
    /// The history entry of the model's explanation; none when no pixels changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_id: Option<String>,
    pub cost_usd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PixelDiffData {
    /// Changed regions (noise dropped).
    pub total_changes: usize,
    pub changed_pixels: u64,
    /// Of all pixels, in percent (0.08 means 0.08 %).
    pub diff_percentage: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgenticAnalysis {
    pub summary: String,
    pub found_changes: Vec<FoundChange>,
    pub unexpected_changes: Vec<UnexpectedChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundChange {
    pub region: String,
    pub change: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnexpectedChange {
    pub region: String,
    pub change: String,
    /// "info", "warning" or "error".
    pub severity: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Validation {
    pub expected_matched: Vec<String>,
    pub expected_missed: Vec<String>,
    pub unexpected_found: Vec<String>,
    pub regressions: bool,
}

/// A region as the result lists it: its number on the annotated image and its box.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionData {
    pub number: u32,
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub changed_pixels: u64,
}

/// A rectangle a comparison ignored and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredRegionData {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// "given" (the comparison's `ignore_regions`) or "selector" (a capture's ignore selector).
    pub source: String,
    /// The selector, for "selector".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Which capture it was resolved in, for "selector": "before", "after" or "both".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}
