//! A picture checked against its baseline: `new` when there is none (a pending change whose
//! approval makes it), `unchanged` when the pixel diff finds no region outside the ignored
//! ones, `changed` otherwise (a pending change with its regions, the diff pictures, and the
//! model's verdict per region unless the check is pixels only). The same steps serve Vaider's
//! captures (baselines in `.vaider/baselines/`) and Playwright's failed snapshots.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vaider_core::{Door, Vaider};

use super::baselines::{BaselineKey, Baselines, IgnoredArea};
use super::changes::{
    change_id, BaselineStatus, ChangeSource, ChangeState, Changes, PendingChange,
};
use super::{io_error, Result, ReviewError};
use crate::service::RegionData;
use crate::store::write_atomic;
use crate::{compare_images, CompareOptions};

/// A Vaider capture to check against its baseline.
pub struct CheckRequest<'a> {
    pub project: &'a Path,
    pub key: BaselineKey,
    pub png: &'a [u8],
    /// What the capture's ignore selectors matched, left out of this comparison.
    pub ignored: Vec<IgnoredArea>,
    /// Regions learned as noise now, proposed to be kept with the baseline.
    pub proposed_ignore: Vec<IgnoredArea>,
    /// The changes the developer meant to make (`--expect`).
    pub expected_changes: Vec<String>,
    /// Ask the model for a verdict per region (the engine must be given).
    pub ask_model: bool,
    pub door: Door,
    pub model: Option<String>,
}

/// The outcome: the status, where the baseline is, and the pending change when there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineCheck {
    pub status: BaselineStatus,
    pub baseline: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PendingChange>,
}

/// Checks a Vaider capture against its baseline in `.vaider/baselines/`.
pub async fn check_capture(
    engine: Option<&Vaider>,
    request: CheckRequest<'_>,
) -> Result<BaselineCheck> {
    let baselines = Baselines::in_project(request.project);
    let baseline = baselines.png_path(&request.key);
    let mut ignored = baselines
        .meta(&request.key)
        .map(|m| m.ignore_regions)
        .unwrap_or_default();
    ignored.extend(request.ignored);
    let spec = ChangeSpec {
        project: request.project.to_path_buf(),
        source: ChangeSource::Vaider,
        name: request.key.name.clone(),
        variant: request.key.variant.clone(),
        baseline,
        png: request.png.to_vec(),
        ignored,
        proposed_ignore: request.proposed_ignore,
        expected_changes: request.expected_changes,
    };
    let mut checked = compare_with_baseline(spec).await?;
    if let (Some(change), Some(engine), true) = (&mut checked.change, engine, request.ask_model) {
        if change.status == BaselineStatus::Changed {
            // Without the model's word the pixels still tell a change: it stays pending, and
            // the summary says why there is no verdict.
            if let Err(e) =
                super::verdict::ask_verdicts(engine, change, request.door, request.model, None)
                    .await
            {
                change.summary = Some(e.to_string());
            }
            Changes::in_project(request.project).save(change)?;
        }
    }
    Ok(checked)
}

/// Everything a pending change is made from.
pub struct ChangeSpec {
    pub project: PathBuf,
    pub source: ChangeSource,
    pub name: String,
    pub variant: String,
    /// The baseline's path, absolute; it may not exist yet.
    pub baseline: PathBuf,
    pub png: Vec<u8>,
    pub ignored: Vec<IgnoredArea>,
    pub proposed_ignore: Vec<IgnoredArea>,
    pub expected_changes: Vec<String>,
}

/// The pixel comparison with the baseline, and the pending change it leaves (none when
/// unchanged). A newer pending change of the same baseline replaces an older one.
pub async fn compare_with_baseline(spec: ChangeSpec) -> Result<BaselineCheck> {
    tokio::task::spawn_blocking(move || compare_now(spec))
        .await
        .map_err(|e| ReviewError(format!("the comparison with the baseline stopped: {e}")))?
}

fn compare_now(spec: ChangeSpec) -> Result<BaselineCheck> {
    let changes = Changes::in_project(&spec.project);
    let hash = super::sha256(&spec.png);
    let id = change_id(&spec.baseline, &hash);
    let actual = decode(&spec.png)?;
    let mut change = new_change(&spec, &id);
    if !spec.baseline.is_file() {
        let dir = changes.create_dir(&id)?;
        write_atomic(&dir.join("actual.png"), &spec.png)?;
        changes.drop_pending_of(&spec.baseline, Some(&id));
        changes.save(&change)?;
        return Ok(BaselineCheck {
            status: BaselineStatus::New,
            baseline: spec.baseline,
            change: Some(change),
        });
    }
    let expected = crate::read_screenshot("baseline", &spec.baseline).map_err(|e| {
        ReviewError(format!(
            "{e}; approve a new capture to replace the baseline"
        ))
    })?;
    let mut options = CompareOptions::default();
    options.diff.ignore = spec
        .ignored
        .iter()
        .chain(&spec.proposed_ignore)
        .map(IgnoredArea::as_ignore_region)
        .collect();
    let mut comparison = compare_images(expected, actual, &options);
    if comparison.total_changes() == 0 {
        return unchanged(&changes, spec, change, &id);
    }
    let dir = changes.create_dir(&id)?;
    write_atomic(&dir.join("actual.png"), &spec.png)?;
    let (images, later) = comparison.write_images_split(&dir, "change", true)?;
    later.write()?;
    change.status = BaselineStatus::Changed;
    change.changed_pixels = comparison.changed_pixels();
    change.regions = comparison.regions.iter().map(region_data).collect();
    change.diff_image = images.diff;
    change.annotated = Some(images.annotation);
    change.heat_map = Some(images.heat_map);
    change.close_ups = images.close_ups;
    changes.drop_pending_of(&spec.baseline, Some(&id));
    changes.save(&change)?;
    Ok(BaselineCheck {
        status: BaselineStatus::Changed,
        baseline: spec.baseline,
        change: Some(change),
    })
}

/// An unchanged capture closes the baseline's pending changes; the noise it learned that the
/// baseline does not ignore yet is still offered, as a pending change that fails nothing
/// (its status stays `unchanged`) and whose approval keeps those regions with the baseline.
fn unchanged(
    changes: &Changes,
    spec: ChangeSpec,
    mut change: PendingChange,
    id: &str,
) -> Result<BaselineCheck> {
    change.status = BaselineStatus::Unchanged;
    change
        .proposed_ignore
        .retain(|area| !mostly_ignored(area, &spec.ignored));
    if change.proposed_ignore.is_empty() {
        changes.drop_pending_of(&spec.baseline, None);
        return Ok(BaselineCheck {
            status: BaselineStatus::Unchanged,
            baseline: spec.baseline,
            change: None,
        });
    }
    let dir = changes.create_dir(id)?;
    write_atomic(&dir.join("actual.png"), &spec.png)?;
    changes.drop_pending_of(&spec.baseline, Some(id));
    changes.save(&change)?;
    Ok(BaselineCheck {
        status: BaselineStatus::Unchanged,
        baseline: spec.baseline,
        change: Some(change),
    })
}

/// Whether the areas the baseline ignores already hold all but a sliver of `area`. A clock's
/// changing box is a pixel wider or narrower from one learning to the next (other digits):
/// offering it again for that pixel would ask the person the same question twice.
fn mostly_ignored(area: &IgnoredArea, known: &[IgnoredArea]) -> bool {
    let size = u64::from(area.width) * u64::from(area.height);
    let inside: u64 = known.iter().map(|k| overlap(area, k)).sum();
    size == 0 || inside * 10 >= size * 9
}

/// The pixels `a` and `b` share.
fn overlap(a: &IgnoredArea, b: &IgnoredArea) -> u64 {
    let span =
        |a0: u32, a1: u32, b0: u32, b1: u32| u64::from(a1.min(b1).saturating_sub(a0.max(b0)));
    // Saturating: a baseline's JSON is a file people edit.
    let end = |at: u32, len: u32| at.saturating_add(len);
    span(a.x, end(a.x, a.width), b.x, end(b.x, b.width))
        * span(a.y, end(a.y, a.height), b.y, end(b.y, b.height))
}

fn new_change(spec: &ChangeSpec, id: &str) -> PendingChange {
    PendingChange {
        id: id.to_string(),
        name: spec.name.clone(),
        variant: spec.variant.clone(),
        source: spec.source.clone(),
        status: BaselineStatus::New,
        state: ChangeState::Pending,
        baseline: spec.baseline.clone(),
        actual: Changes::in_project(&spec.project)
            .change_dir(id)
            .join("actual.png"),
        diff_image: None,
        annotated: None,
        heat_map: None,
        close_ups: None,
        changed_pixels: 0,
        regions: Vec::new(),
        verdicts: Vec::new(),
        summary: None,
        expected_changes: spec.expected_changes.clone(),
        proposed_ignore: spec.proposed_ignore.clone(),
        ignored: spec.ignored.clone(),
        interaction_id: None,
        created: vaider_core::history::now_rfc3339(),
        decided_by: None,
    }
}

fn decode(png: &[u8]) -> Result<image::RgbaImage> {
    image::load_from_memory(png)
        .map(|image| image.into_rgba8())
        .map_err(|e| {
            ReviewError(format!(
                "the capture is not a picture Vaider can read ({e})"
            ))
        })
}

fn region_data(region: &crate::Region) -> RegionData {
    RegionData {
        number: region.number,
        x: region.x,
        y: region.y,
        width: region.width,
        height: region.height,
        changed_pixels: region.changed_pixels,
    }
}

/// Reads a picture file for a change, with a sentence when it cannot.
pub fn read_png(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| io_error("read", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(x: u32, y: u32, width: u32, height: u32) -> IgnoredArea {
        IgnoredArea {
            x,
            y,
            width,
            height,
            reason: String::new(),
        }
    }

    #[test]
    fn a_box_a_pixel_wider_than_an_ignored_one_is_already_ignored_and_a_new_one_is_not() {
        let clock = [area(42, 23, 76, 22)];
        assert!(mostly_ignored(&area(42, 23, 77, 22), &clock));
        assert!(!mostly_ignored(&area(42, 23, 120, 22), &clock));
        assert!(!mostly_ignored(&area(300, 200, 20, 20), &clock));
        assert!(!mostly_ignored(&area(u32::MAX - 1, 0, 10, 10), &clock));
    }
}
