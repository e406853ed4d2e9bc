//! `visual_capture`: a screenshot taken by the first adapter that works, kept in the store as
//! the next phase.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::CompareError;
use crate::store::Store;

/// `visual_capture`'s `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureData {
    pub path: String,
    pub timestamp: String,
    pub phase: u32,
    pub dimensions: crate::store::Dimensions,
    /// Beyond the contract: where the shot came from ("web", "linux", "ios-simulator", ...).
    pub platform: String,
    /// The ignore selectors' rectangles in this image's pixels, kept with it for comparisons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_regions: Vec<crate::store::SelectorRegion>,
    /// The ignore selectors that matched no drawn element.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched_selectors: Vec<String>,
    /// The capture compared with its baseline in `.vaider/baselines/` (`vaider capture`,
    /// `visual_capture`): new, unchanged or changed, with the pending change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<crate::review::BaselineCheck>,
}

/// Takes a screenshot with the first adapter that works (or the one `target` names) and
/// keeps it in the project's store as the next phase.
pub async fn capture_screenshot(
    project: &Path,
    name: &str,
    description: &str,
    target: &vaider_capture::Target,
) -> Result<CaptureData, CompareError> {
    // A name that cannot be kept is refused before anything is captured.
    crate::store::check_name(name).map_err(|e| CompareError(e.to_string()))?;
    let shot = vaider_capture::capture(target)
        .await
        .map_err(|e| CompareError(e.to_string()))?;
    keep_shot(project, name, description, shot).await
}

/// Keeps a shot in the project's store as the next phase.
pub async fn keep_shot(
    project: &Path,
    name: &str,
    description: &str,
    shot: vaider_capture::Shot,
) -> Result<CaptureData, CompareError> {
    let store = Store::in_project(project);
    let (name, description) = (name.to_string(), description.to_string());
    let timestamp = vaider_core::pipeline::now_rfc3339();
    let unmatched_selectors = shot.unmatched_selectors.clone();
    let kept = tokio::task::spawn_blocking(move || {
        let screenshot = store.add(crate::store::NewScreenshot {
            name: &name,
            description: &description,
            platform: shot.platform,
            png: &shot.png,
            timestamp,
            ignore_regions: shot.ignored,
        })?;
        Ok::<_, crate::VisualError>((store.png_path(&screenshot), screenshot))
    })
    .await
    .map_err(|e| CompareError(format!("keeping the screenshot stopped: {e}")))?
    .map_err(|e| CompareError(e.to_string()))?;
    let (path, shot) = kept;
    Ok(CaptureData {
        path: path.display().to_string(),
        timestamp: shot.timestamp,
        phase: shot.phase,
        dimensions: shot.dimensions,
        platform: shot.platform,
        ignore_regions: shot.ignore_regions,
        unmatched_selectors,
        baseline: None,
    })
}
