//! `visual_capture`, `visual_compare`, `visual_prepare` and `visual_cleanup` as every door runs
//! them (MCP, CLI). A capture is kept in the project's store as the next phase. A comparison:
//! the free pixel diff first; the pictures kept in the store's `comparisons/`; and only when
//! pixels really changed, the vision model's explanation through Vaider's one pipeline (so it
//! is in the history, cached and costed), matched against the changes the agent expected.
//! Results have the shapes of contracts.md §1. The pictures nobody reads before the answer
//! (the diff image, the heat map; the annotation too when no model is asked) are written on
//! another thread while the answer goes out; `pictures_settled` waits for them. One file per
//! concern: the answer's shape (`data`), the comparison's steps (`compare`), the regions it
//! leaves out (`ignored`), the model's explanation (`explain`), the pictures written later
//! (`pictures`), the declared changes (`expected`), the cleanup and the capture.

mod capture;
mod cleanup;
mod compare;
mod data;
mod expected;
mod explain;
mod ignored;
mod pictures;

pub use capture::{capture_screenshot, keep_shot, CaptureData};
pub use cleanup::{remove_screenshots, Removal};
pub use compare::{compare_screenshots, CompareRequest};
pub use data::{
    AgenticAnalysis, CompareData, FoundChange, IgnoredRegionData, PixelDiffData, RegionData,
    UnexpectedChange, Validation,
};
pub use expected::declare_expected;
pub use pictures::pictures_settled;

/// A comparison that could not be made, with what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CompareError(pub String);
