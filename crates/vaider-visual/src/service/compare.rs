//! One comparison, step by step: the pixel diff (leaving out the ignored regions), a name of
//! its own in the store's `comparisons/`, the pictures, the model's explanation when pixels
//! really changed, and the result kept beside the pictures.

use std::path::{Path, PathBuf};

use vaider_core::analysis::Door;
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use super::data::{
    AgenticAnalysis, CompareData, IgnoredRegionData, PixelDiffData, RegionData, Validation,
};
use super::expected::{declared_path, read_declared};
use super::explain::explain;
use super::ignored::ignored_regions;
use super::pictures::write_later;
use super::CompareError;
use crate::store::{write_atomic, Store};
use crate::{compare, CompareOptions, Comparison, ComparisonImages, Region};

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
    let (comparison, ignored) = diff(&store, &before, &after, request.options.clone()).await?;
    let dir = comparisons_dir(&store)?;
    let mut reserved = Reserved::take(&dir, &comparison_stem(&store, &before, &after))?;
    let stem = reserved.stem.clone();
    let (comparison, pictures) = draw_pictures(comparison, &dir, &stem).await?;
    let mut data = compare_data(&comparison, &pictures, ignored);
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

/// The pixel diff, off the async threads, leaving out the given rectangles and those the
/// screenshots' ignore selectors matched when they were captured.
async fn diff(
    store: &Store,
    before: &Path,
    after: &Path,
    mut options: CompareOptions,
) -> Result<(Comparison, Vec<IgnoredRegionData>), CompareError> {
    let (b, a, kept) = (before.to_path_buf(), after.to_path_buf(), store.clone());
    tokio::task::spawn_blocking(move || {
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
    .map_err(|e| CompareError(e.to_string()))
}

/// The store's `comparisons/`, created if need be.
fn comparisons_dir(store: &Store) -> Result<PathBuf, CompareError> {
    let dir = store.comparisons_dir();
    std::fs::create_dir_all(&dir).map_err(|e| {
        CompareError(format!(
            "cannot create {}: {e}; check that the project folder is writable",
            dir.display()
        ))
    })?;
    Ok(dir)
}

/// Draws the pictures the answer needs now, and leaves the others to be written while the
/// answer goes out.
async fn draw_pictures(
    comparison: Comparison,
    dir: &Path,
    stem: &str,
) -> Result<(Comparison, ComparisonImages), CompareError> {
    // Only a model call reads the annotation before the answer.
    let annotation_now = comparison.total_changes() > 0;
    let (comparison, pictures, later) = {
        let (mut comparison, dir, stem) = (comparison, dir.to_path_buf(), stem.to_string());
        tokio::task::spawn_blocking(move || {
            let (images, later) = comparison.write_images_split(&dir, &stem, annotation_now)?;
            Ok::<_, crate::VisualError>((comparison, images, later))
        })
        .await
        .map_err(|e| CompareError(format!("drawing the pictures stopped: {e}")))?
        .map_err(|e| CompareError(e.to_string()))?
    };
    write_later(later);
    Ok((comparison, pictures))
}

/// The answer as far as the pixel diff tells it: the model's part is still empty.
fn compare_data(
    comparison: &Comparison,
    pictures: &ComparisonImages,
    ignored: Vec<IgnoredRegionData>,
) -> CompareData {
    CompareData {
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
        diff_image: pictures.diff.as_ref().map(|p| p.display().to_string()),
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
