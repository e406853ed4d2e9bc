//! `visual_capture`, `visual_compare`, `visual_prepare` and `visual_cleanup` as every door runs
//! them (MCP, CLI). A capture is kept in the project's store as the next phase. A comparison:
//! the free pixel diff first; the pictures kept in the store's `comparisons/`; and only when
//! pixels really changed, the vision model's explanation through Vaider's one pipeline (so it
//! is in the history, cached and costed), matched against the changes the agent expected.
//! Results have the shapes of contracts.md §1. The pictures nobody reads before the answer
//! (the diff image, the heat map; the annotation too when no model is asked) are written on
//! another thread while the answer goes out; `pictures_settled` waits for them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use vaider_core::analysis::{AnalysisRequest, Door};
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use crate::store::{write_atomic, Store};
use crate::{compare, CompareOptions, Comparison, LaterPictures, Region};

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

/// What a comparison is asked.
pub struct CompareRequest<'a> {
    pub project: &'a Path,
    pub before: &'a Path,
    pub after: &'a Path,
    /// Empty: the list declared with `visual_prepare`, if any.
    pub expected_changes: Vec<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub door: Door,
    /// The noise tolerance: checked with `CompareOptions::with_noise_tolerance`.
    pub options: CompareOptions,
}

/// A comparison that could not be made, with what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CompareError(pub String);

/// Compares two screenshots, explains the change when there is one, and keeps the pictures
/// and the result in the store.
pub async fn compare_screenshots(
    engine: &Vaider,
    request: CompareRequest<'_>,
    progress: &dyn ProgressSink,
) -> Result<CompareData, CompareError> {
    let store = Store::in_project(request.project);
    let (before, after) = (
        resolve(request.project, request.before),
        resolve(request.project, request.after),
    );
    let declared = request.expected_changes.is_empty();
    let expected = match declared {
        true => read_declared(&store),
        false => request.expected_changes.clone(),
    };
    let (b, a, mut options) = (before.clone(), after.clone(), request.options.clone());
    let kept = store.clone();
    let (comparison, ignored) = tokio::task::spawn_blocking(move || {
        let ignored = ignored_regions(&kept, &b, &a, &options.diff.ignore);
        options.diff.ignore = ignored
            .iter()
            .map(|r| crate::IgnoreRegion {
                x: r.x,
                y: r.y,
                width: r.width,
                height: r.height,
            })
            .collect();
        compare(&b, &a, &options).map(|comparison| (comparison, ignored))
    })
    .await
    .map_err(|e| CompareError(format!("the comparison stopped: {e}")))?
    .map_err(|e| CompareError(e.to_string()))?;
    let dir = store.comparisons_dir();
    std::fs::create_dir_all(&dir).map_err(|e| {
        CompareError(format!(
            "cannot create {}: {e}; check that the project folder is writable",
            dir.display()
        ))
    })?;
    let mut reserved = Reserved::take(&dir, &comparison_stem(&store, &before, &after))?;
    let stem = reserved.stem.clone();
    // Only a model call reads the annotation before the answer.
    let annotation_now = comparison.total_changes() > 0;
    let (comparison, pictures, later) = {
        let (mut comparison, dir, stem) = (comparison, dir.clone(), stem.clone());
        tokio::task::spawn_blocking(move || {
            let (images, later) = comparison.write_images_split(&dir, &stem, annotation_now)?;
            Ok::<_, crate::VisualError>((comparison, images, later))
        })
        .await
        .map_err(|e| CompareError(format!("drawing the pictures stopped: {e}")))?
        .map_err(|e| CompareError(e.to_string()))?
    };
    write_later(later);
    let mut data = CompareData {
        annotated_screenshot: pictures.annotation.display().to_string(),
        pixel_diff: PixelDiffData {
            total_changes: comparison.total_changes(),
            changed_pixels: comparison.changed_pixels(),
            diff_percentage: comparison.diff_percentage(),
        },
        agentic_analysis: AgenticAnalysis {
            summary: String::new(),
            found_changes: Vec::new(),
            unexpected_changes: Vec::new(),
        },
        validation: Validation::default(),
        diff_image: pictures.diff.map(|p| p.display().to_string()),
        heat_map: pictures.heat_map.display().to_string(),
        close_ups: pictures.close_ups.as_ref().map(|p| p.display().to_string()),
        regions: comparison.regions.iter().map(region_data).collect(),
        ignored_regions: ignored,
        size_change: comparison.size_changed().map(|s| {
            format!(
                "the size changed from {}x{} to {}x{} (a layout change); the overlap was compared",
                s.before.0, s.before.1, s.after.0, s.after.1
            )
        }),
        interaction_id: None,
        cost_usd: 0.0,
    };
    if comparison.total_changes() == 0 {
        // Identical, or only rendering noise: no model call, nothing to pay.
        data.agentic_analysis.summary = no_change_summary(&comparison);
        data.validation.expected_missed = expected;
    } else {
        explain(
            engine,
            &request,
            &before,
            &pictures.annotation,
            &comparison,
            &expected,
            progress,
            &mut data,
        )
        .await?;
    }
    let json = serde_json::to_vec_pretty(&data).unwrap_or_default();
    let path = dir.join(format!("{stem}-diff.json"));
    write_atomic(&path, &json).map_err(|e| CompareError(e.to_string()))?;
    reserved.kept = true;
    if declared {
        // Used by this comparison, which is done: the next one starts with none.
        let _ = std::fs::remove_file(declared_path(&store));
    }
    Ok(data)
}

/// Pictures being written off the answer's path, in this process.
static PICTURES_PENDING: AtomicUsize = AtomicUsize::new(0);
static PICTURES_SETTLED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Writes the pictures on a blocking thread, not awaited. A failure (a full disk) leaves that
/// picture missing, never half written; the answer has already gone.
fn write_later(later: LaterPictures) {
    PICTURES_PENDING.fetch_add(1, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || {
        let _ = later.write();
        PICTURES_PENDING.fetch_sub(1, Ordering::SeqCst);
        PICTURES_SETTLED.notify_waiters();
    });
}

/// Waits until every picture that comparisons in this process left to be written is written
/// (or failed): the CLI calls it before it exits, tests before they look at the files.
pub async fn pictures_settled() {
    loop {
        let settled = PICTURES_SETTLED.notified();
        tokio::pin!(settled);
        // Registered before the check, so a notification in between is not lost.
        settled.as_mut().enable();
        if PICTURES_PENDING.load(Ordering::SeqCst) == 0 {
            return;
        }
        settled.await;
    }
}

fn no_change_summary(comparison: &Comparison) -> String {
    match comparison.changed_pixels() {
        0 => "No change: the two screenshots are identical.".into(),
        n => format!("No visible change: {n} changed pixels were rendering noise, below the smallest region counted."),
    }
}

fn region_data(region: &Region) -> RegionData {
    RegionData {
        number: region.number,
        x: region.x,
        y: region.y,
        width: region.width,
        height: region.height,
        changed_pixels: region.changed_pixels,
    }
}

/// The union of the rectangles given and those kept with either screenshot when it was
/// captured with ignore selectors (only for the store's own, unchanged files). A rectangle both
/// captures matched with the same selector is listed once, as "both".
fn ignored_regions(
    store: &Store,
    before: &Path,
    after: &Path,
    given: &[crate::IgnoreRegion],
) -> Vec<IgnoredRegionData> {
    let mut all: Vec<IgnoredRegionData> = given
        .iter()
        .map(|r| IgnoredRegionData {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
            source: "given".into(),
            selector: None,
            screenshot: None,
        })
        .collect();
    let captured = [("before", before), ("after", after)]
        .into_iter()
        .filter_map(|(side, path)| Some((side, store.find_kept(path)?.ignore_regions)));
    for (side, regions) in captured {
        for r in regions {
            let same = |o: &IgnoredRegionData| {
                (o.x, o.y, o.width, o.height) == (r.x, r.y, r.width, r.height)
                    && o.selector.as_deref() == Some(r.selector.as_str())
            };
            match all.iter_mut().find(|o| same(o)) {
                Some(seen) => seen.screenshot = Some("both".into()),
                None => all.push(IgnoredRegionData {
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                    source: "selector".into(),
                    selector: Some(r.selector),
                    screenshot: Some(side.into()),
                }),
            }
        }
    }
    all
}

/// A relative path is relative to the project.
fn resolve(project: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        project.join(path)
    }
}

/// `01-vs-02` for two stored phases, else the files' own names.
fn comparison_stem(store: &Store, before: &Path, after: &Path) -> String {
    let name = |path: &Path| match store.find(path) {
        Some(shot) => format!("{:02}", shot.phase),
        None => path
            .file_stem()
            .map(|s| {
                s.to_string_lossy()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                    .collect()
            })
            .filter(|s: &String| !s.is_empty())
            .unwrap_or_else(|| "image".into()),
    };
    format!("{}-vs-{}", name(before), name(after))
}

/// A comparison's name, taken for it alone: `<base>`, else `<base>-2`, `<base>-3`, ... The
/// first free one is claimed by creating its `-diff.json` (create-new is atomic), so two
/// comparisons of `a/home.png` and `b/home.png`, even at once, never write the same pictures,
/// and a history entry keeps showing its own. Released again if the comparison fails.
struct Reserved {
    marker: PathBuf,
    stem: String,
    kept: bool,
}

impl Reserved {
    fn take(dir: &Path, base: &str) -> Result<Reserved, CompareError> {
        for n in 1..=10_000u32 {
            let stem = match n {
                1 => base.to_string(),
                n => format!("{base}-{n}"),
            };
            let marker = dir.join(format!("{stem}-diff.json"));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&marker)
            {
                Ok(_) => {
                    return Ok(Reserved {
                        marker,
                        stem,
                        kept: false,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(CompareError(format!(
                        "cannot create {}: {e}",
                        marker.display()
                    )))
                }
            }
        }
        Err(CompareError(format!(
            "{} holds 10000 comparisons named {base}: run visual_cleanup",
            dir.display()
        )))
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.marker);
        }
    }
}

/// The file `visual_prepare` keeps the declared changes in, for the next comparison.
fn declared_path(store: &Store) -> PathBuf {
    store.root().join("expected-changes.json")
}

/// `visual_prepare`: keeps the changes the next comparison should find.
pub fn declare_expected(project: &Path, changes: &[String]) -> Result<Vec<String>, CompareError> {
    let store = Store::in_project(project);
    let path = declared_path(&store);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CompareError(format!("cannot create {}: {e}", dir.display())))?;
    }
    let kept: Vec<String> = changes
        .iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    let json = serde_json::to_vec_pretty(&kept).unwrap_or_default();
    write_atomic(&path, &json).map_err(|e| CompareError(e.to_string()))?;
    Ok(kept)
}

/// The declared changes, for the next comparison (which removes them once it succeeded).
fn read_declared(store: &Store) -> Vec<String> {
    std::fs::read(declared_path(store))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Asks the model, through the pipeline, what changed in each numbered region and whether the
/// expected changes are there.
#[allow(clippy::too_many_arguments)]
async fn explain(
    engine: &Vaider,
    request: &CompareRequest<'_>,
    before: &Path,
    annotated: &Path,
    comparison: &Comparison,
    expected: &[String],
    progress: &dyn ProgressSink,
    data: &mut CompareData,
) -> Result<(), CompareError> {
    let mut analysis = AnalysisRequest::new(
        crate::task::VISUAL_COMPARE,
        request.door,
        annotated.display().to_string(),
    );
    analysis.compare_with = Some(before.display().to_string());
    analysis.close_ups = data.close_ups.iter().cloned().collect();
    let zoomed = comparison
        .close_ups
        .as_ref()
        .map(|c| c.regions.as_slice())
        .unwrap_or_default();
    analysis.prompt = Some(explain_prompt(
        &comparison.regions,
        zoomed,
        expected,
        data.size_change.as_deref(),
    ));
    analysis.provider = request.provider.clone();
    analysis.model = request.model.clone();
    analysis.base_dirs = vec![request.project.to_path_buf()];
    let result = engine
        .analyse(analysis, progress)
        .await
        .map_err(|failure| {
            CompareError(format!(
                "the model could not explain the change ({}: {}); the pictures are in {}",
                failure.error.code().as_str(),
                failure.error,
                data.annotated_screenshot
            ))
        })?;
    data.interaction_id = Some(result.interaction_id.clone());
    data.cost_usd = result.cost_usd;
    let details = result.details.unwrap_or_default();
    data.agentic_analysis = read_analysis(&details, &result.description);
    data.validation = validate(&details, expected, &data.agentic_analysis);
    Ok(())
}

fn explain_prompt(
    regions: &[Region],
    zoomed: &[u32],
    expected: &[String],
    size_change: Option<&str>,
) -> String {
    let mut text = String::from("The pixel diff found these changed regions, drawn as numbered boxes on the AFTER image (x, y, width, height in pixels):\n");
    for r in regions {
        text.push_str(&format!(
            "- region {}: {}, {}, {}x{} ({} changed pixels)\n",
            r.number, r.x, r.y, r.width, r.height, r.changed_pixels
        ));
    }
    if !zoomed.is_empty() {
        let list: Vec<String> = zoomed.iter().map(u32::to_string).collect();
        text.push_str(&format!(
            "The last image has close-ups of region{} {}, cut from the screenshots' own pixels and magnified: one row each, its number, then BEFORE, then AFTER, the changed pixels framed. Read small text and exact colours there.\n",
            if zoomed.len() == 1 { "" } else { "s" },
            list.join(", ")
        ));
    }
    if let Some(size) = size_change {
        text.push_str(&format!("Also: {size}.\n"));
    }
    if expected.is_empty() {
        text.push_str("No changes were announced: every change found is unexpected.\n");
    } else {
        text.push_str("The changes the developer expected:\n");
        for change in expected {
            text.push_str(&format!("- {change}\n"));
        }
    }
    text
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn read_analysis(details: &serde_json::Value, description: &str) -> AgenticAnalysis {
    let changes = |key: &str| details[key].as_array().cloned().unwrap_or_default();
    let text = |v: &serde_json::Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    AgenticAnalysis {
        summary: details["summary"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| description.to_string()),
        found_changes: changes("found_changes")
            .iter()
            .map(|c| FoundChange {
                region: text(c, "region"),
                change: text(c, "change"),
            })
            .collect(),
        unexpected_changes: changes("unexpected_changes")
            .iter()
            .map(|c| UnexpectedChange {
                region: text(c, "region"),
                change: text(c, "change"),
                severity: match c["severity"].as_str() {
                    Some(s @ ("info" | "warning" | "error")) => s.to_string(),
                    _ => "warning".to_string(),
                },
            })
            .collect(),
    }
}

/// Which expected changes were found: the model's word for each, and every expected change it
/// did not name counts as missed.
fn validate(
    details: &serde_json::Value,
    expected: &[String],
    analysis: &AgenticAnalysis,
) -> Validation {
    let matched_by_model = strings(&details["expected_matched"]);
    let matched: Vec<String> = expected
        .iter()
        .filter(|e| {
            matched_by_model
                .iter()
                .any(|m| m.trim().eq_ignore_ascii_case(e.trim()))
        })
        .cloned()
        .collect();
    Validation {
        expected_missed: expected
            .iter()
            .filter(|e| !matched.contains(e))
            .cloned()
            .collect(),
        expected_matched: matched,
        unexpected_found: analysis
            .unexpected_changes
            .iter()
            .map(|c| format!("{}: {}", c.region, c.change))
            .collect(),
        regressions: analysis
            .unexpected_changes
            .iter()
            .any(|c| c.severity == "error"),
    }
}

/// `visual_cleanup`: what is removed.
pub use crate::store::Removal;

impl Removal {
    /// The cleanup's arguments as a removal: a phase number (0: none) wins; otherwise all but
    /// the newest `keep_last` (0: the default, 3).
    pub fn of(phase_to_remove: u32, keep_last: u32) -> Removal {
        match (phase_to_remove, keep_last) {
            (0, 0) => Removal::AllButLast(3),
            (0, n) => Removal::AllButLast(n as usize),
            (phase, _) => Removal::Phase(phase),
        }
    }
}

/// `visual_cleanup`: removes phases from the project's store, off the async threads; returns
/// what was removed.
pub async fn remove_screenshots(
    project: &Path,
    which: Removal,
) -> Result<Vec<crate::store::Screenshot>, CompareError> {
    let store = Store::in_project(project);
    tokio::task::spawn_blocking(move || store.remove(which))
        .await
        .map_err(|e| CompareError(format!("the cleanup stopped: {e}")))?
        .map_err(|e| CompareError(e.to_string()))
}

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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewScreenshot, SelectorRegion};

    fn png(width: u32, height: u32, shade: u8) -> Vec<u8> {
        let mut bytes = Vec::new();
        image::RgbaImage::from_pixel(width, height, image::Rgba([shade, shade, shade, 255]))
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .unwrap();
        bytes
    }

    fn keep(store: &Store, name: &str, shade: u8, regions: &[(&str, u32)]) -> PathBuf {
        let shot = store
            .add(NewScreenshot {
                name,
                description: "",
                platform: "web",
                png: &png(40, 30, shade),
                timestamp: "2026-11-27T19:00:00.000Z".into(),
                ignore_regions: regions
                    .iter()
                    .map(|&(selector, x)| SelectorRegion {
                        selector: selector.into(),
                        x,
                        y: 2,
                        width: 5,
                        height: 4,
                    })
                    .collect(),
            })
            .unwrap();
        store.png_path(&shot)
    }

    #[test]
    fn ignored_regions_are_the_given_ones_and_both_captures_selectors_once_each() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let before = keep(&store, "before", 10, &[("#clock", 1), (".ad", 20)]);
        let after = keep(&store, "after", 20, &[("#clock", 1), ("#clock", 30)]);
        let given = [crate::IgnoreRegion {
            x: 0,
            y: 0,
            width: 3,
            height: 3,
        }];
        let ignored = ignored_regions(&store, &before, &after, &given);
        let seen: Vec<_> = ignored
            .iter()
            .map(|r| {
                (
                    r.x,
                    r.source.as_str(),
                    r.selector.as_deref(),
                    r.screenshot.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (0, "given", None, None),
                (1, "selector", Some("#clock"), Some("both")),
                (20, "selector", Some(".ad"), Some("before")),
                (30, "selector", Some("#clock"), Some("after")),
            ]
        );
    }

    #[test]
    fn a_copy_or_a_changed_file_does_not_carry_the_captures_regions() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let kept = keep(&store, "shot", 10, &[("#clock", 1)]);
        // The same name in another folder is not the store's file.
        let elsewhere = project.path().join("copy");
        std::fs::create_dir(&elsewhere).unwrap();
        let copy = elsewhere.join(kept.file_name().unwrap());
        std::fs::copy(&kept, &copy).unwrap();
        assert!(ignored_regions(&store, &copy, &copy, &[]).is_empty());
        assert_eq!(ignored_regions(&store, &kept, &copy, &[]).len(), 1);
        // The store's file, overwritten since it was kept, no longer matches its metadata.
        std::fs::write(&kept, png(40, 30, 99)).unwrap();
        assert!(ignored_regions(&store, &kept, &kept, &[]).is_empty());
    }
}
