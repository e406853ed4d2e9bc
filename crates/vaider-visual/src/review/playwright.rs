//! Playwright's own baselines in the same loop: a failed `toHaveScreenshot` (its
//! `*-expected.png`, `*-actual.png`, `*-diff.png`, in the JSON report's attachments, a merged
//! report's, or a test-results folder) becomes a pending change whose approval writes the
//! actual picture to exactly the snapshot file `npx playwright test --update-snapshots` would
//! write: the path the project's own config gives (`snapshot_file`), read from the JSON
//! report's tests (their file, titles and project) or a test-results folder's names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use vaider_core::{Door, Vaider};
use vaider_validate::snapshot_paths::SnapshotConfig;
use vaider_validate::snapshots::{ReviewFuture, Reviewed, Reviewer, Run, SnapshotChange};

use super::changes::{BaselineStatus, ChangeSource, Changes};
use super::check::{compare_with_baseline, BaselineCheck, ChangeSpec};
use super::snapshot_file;
use super::{io_error, Result, ReviewError};

/// One snapshot a test failed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedSnapshot {
    /// The test's title path ("shot.spec.mjs › home page"), or its results folder's name.
    pub test: String,
    pub project: Option<String>,
    /// The snapshot's name without extension ("home").
    pub name: String,
    pub expected: PathBuf,
    pub actual: PathBuf,
    /// The snapshot file in the project that an update would write.
    pub snapshot: PathBuf,
    /// Every attempt's actual picture (a test's retries), the last one last.
    pub attempts: Vec<PathBuf>,
}

/// The failed snapshots of a run: `results` is Playwright's JSON report (also a merged one) or
/// a test-results folder; `layout` is the project's Playwright config, where it could be
/// loaded. A snapshot failed in several retries counts once (its last actual).
pub fn read_results(
    project: &Path,
    results: &Path,
    layout: Option<&SnapshotConfig>,
) -> Result<Vec<FailedSnapshot>> {
    let found = if results.is_file() {
        from_report(project, results, layout)?
    } else if results.is_dir() {
        from_folder(project, results, layout)?
    } else {
        return Err(ReviewError(format!(
            "{} is neither Playwright's JSON report nor a test-results folder: run `npx playwright test --reporter=json > report.json` and give that file, or give the test-results folder",
            results.display()
        )));
    };
    let mut last: BTreeMap<PathBuf, FailedSnapshot> = BTreeMap::new();
    for mut snapshot in found {
        if let Some(earlier) = last.remove(&snapshot.snapshot) {
            snapshot.attempts = [earlier.attempts, snapshot.attempts].concat();
        }
        last.insert(snapshot.snapshot.clone(), snapshot);
    }
    Ok(last.into_values().collect())
}

/// A run's failed snapshots, compared with their files.
#[derive(Debug, Default)]
pub struct Imported {
    pub checks: Vec<BaselineCheck>,
    /// What the model's verdicts cost.
    pub cost_usd: f64,
    /// Why the project's Playwright config was not used, when it was not: the snapshot files
    /// were then found from the expected pictures.
    pub layout_note: Option<String>,
}

/// Each failed snapshot compared with its file, as pending changes; `config` is the project's
/// Playwright config when the caller knows it (else it is looked for).
pub async fn import(project: &Path, results: &Path, config: Option<&Path>) -> Result<Imported> {
    let (layout, layout_note) = match snapshot_file::load_layout(project, results, config).await {
        Ok(layout) => (Some(layout), None),
        Err(why) => (
            None,
            Some(format!(
                "The project's Playwright config was not used ({why}): each snapshot file was found by its expected picture instead."
            )),
        ),
    };
    let mut checks = Vec::new();
    for failed in read_results(project, results, layout.as_ref())? {
        let png = std::fs::read(&failed.actual).map_err(|e| io_error("read", &failed.actual, e))?;
        let proposed_ignore = noise_over_retries(&failed.attempts);
        let spec = ChangeSpec {
            project: project.to_path_buf(),
            source: ChangeSource::Playwright {
                test: failed.test.clone(),
                project: failed.project.clone(),
            },
            name: failed.name.clone(),
            variant: failed
                .project
                .clone()
                .unwrap_or_else(|| "playwright".into()),
            baseline: failed.snapshot.clone(),
            png,
            ignored: Vec::new(),
            proposed_ignore,
            expected_changes: Vec::new(),
        };
        checks.push(compare_with_baseline(spec).await?);
    }
    Ok(Imported {
        checks,
        cost_usd: 0.0,
        layout_note,
    })
}

/// A Playwright run to put in the loop: its JSON report (also a merged one) or test-results
/// folder, the project's config when known, and the model for the verdicts (None: the
/// configured one).
pub struct PlaywrightRun<'a> {
    pub project: &'a Path,
    pub results: &'a Path,
    pub config: Option<&'a Path>,
    pub model: Option<String>,
    /// The history entry the verdicts are part of (a validation), if any.
    pub parent_id: Option<String>,
}

/// A Playwright run in the loop: each failed snapshot compared with its file and, when it
/// changed and there is an `engine`, judged region by region by the model (when the model
/// cannot judge it, the pixels still tell the change and the summary says why); kept as
/// pending changes. What `vaider check --playwright` and a validation's run share.
pub async fn review_run(
    engine: Option<&Vaider>,
    run: PlaywrightRun<'_>,
    door: Door,
) -> Result<Imported> {
    let mut imported = import(run.project, run.results, run.config).await?;
    let Some(engine) = engine else {
        return Ok(imported);
    };
    for change in imported.checks.iter_mut().filter_map(|c| c.change.as_mut()) {
        if change.status == BaselineStatus::Changed {
            let (model, parent) = (run.model.clone(), run.parent_id.clone());
            match super::verdict::ask_verdicts(engine, change, door, model, parent).await {
                Ok(cost) => imported.cost_usd += cost,
                Err(e) => change.summary = Some(e.to_string()),
            }
            Changes::in_project(run.project).save(change)?;
        }
    }
    Ok(imported)
}

/// Hands the loop to this process's validations: a validation's failed `toHaveScreenshot`s
/// become pending changes. Whatever builds the service (the server, the CLI) calls it once.
pub fn review_validations() {
    vaider_validate::snapshots::set_reviewer(std::sync::Arc::new(ValidationSnapshots));
}

struct ValidationSnapshots;

impl Reviewer for ValidationSnapshots {
    fn review<'a>(&'a self, engine: &'a Vaider, run: Run<'a>) -> ReviewFuture<'a> {
        Box::pin(async move {
            let playwright = PlaywrightRun {
                project: run.project,
                results: run.report,
                config: run.config,
                model: run.model,
                parent_id: run.parent_id,
            };
            let imported = review_run(Some(engine), playwright, run.door)
                .await
                .map_err(|e| e.0)?;
            Ok(reviewed(&imported))
        })
    }
}

/// A validation's view of the imported snapshots: the changes a person decides, and a note
/// for those Playwright failed where Vaider sees nothing to decide.
fn reviewed(imported: &Imported) -> Reviewed {
    let mut changes = Vec::new();
    let mut same = Vec::new();
    for check in &imported.checks {
        match &check.change {
            Some(change) if change.status != BaselineStatus::Unchanged => {
                changes.push(SnapshotChange {
                    id: change.id.clone(),
                    name: change.name.clone(),
                    snapshot: change.baseline.display().to_string(),
                    status: change.status.as_str().to_string(),
                    changed_pixels: change.changed_pixels,
                    summary: change.summary.clone(),
                })
            }
            _ => same.push(check.baseline.display().to_string()),
        }
    }
    let same = (!same.is_empty()).then(|| {
        format!(
            "Playwright failed {} on toHaveScreenshot, but Vaider sees no difference beyond noise (what changed between the test's retries, or fewer pixels than its tolerance): nothing to review; a `mask` or `maxDiffPixels` in the test keeps Playwright from failing on it.",
            same.join(", ")
        )
    });
    let note = [imported.layout_note.clone(), same]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    Reviewed {
        changes,
        cost_usd: imported.cost_usd,
        note: (!note.is_empty()).then(|| note.join(" ")),
    }
}

/// What differed between a test's retries of the same screen, proposed as ignore regions (a
/// reviewer sees them with the change; Playwright itself would need a `mask` for them).
fn noise_over_retries(attempts: &[PathBuf]) -> Vec<super::IgnoredArea> {
    if attempts.len() < 2 {
        return Vec::new();
    }
    let images: Vec<image::RgbaImage> = attempts
        .iter()
        .filter_map(|path| crate::read_screenshot("retry", path).ok())
        .collect();
    let reason = format!("differed between {} retries of the test", images.len());
    super::noise::learn_noise(&images)
        .into_iter()
        .map(|area| super::IgnoredArea {
            reason: reason.clone(),
            ..area
        })
        .collect()
}

fn from_report(
    project: &Path,
    report: &Path,
    layout: Option<&SnapshotConfig>,
) -> Result<Vec<FailedSnapshot>> {
    let text = std::fs::read_to_string(report).map_err(|e| io_error("read", report, e))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        ReviewError(format!(
            "{} is not Playwright's JSON report ({e}); write one with `--reporter=json`",
            report.display()
        ))
    })?;
    let mut found = Vec::new();
    // A top-level suite is a test file (its title the file's path); those below it are its
    // describe blocks, whose titles are part of the test's.
    let mut suites: Vec<(Vec<String>, bool, &Value)> = value["suites"]
        .as_array()
        .map(|s| s.iter().map(|s| (Vec::new(), true, s)).collect())
        .unwrap_or_default();
    while let Some((mut titles, is_file, suite)) = suites.pop() {
        if !is_file {
            titles.extend(
                suite["title"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
            );
        }
        for child in suite["suites"].as_array().into_iter().flatten() {
            suites.push((titles.clone(), false, child));
        }
        for spec in suite["specs"].as_array().into_iter().flatten() {
            let mut titles = titles.clone();
            titles.push(spec["title"].as_str().unwrap_or_default().to_string());
            let file = spec["file"].as_str().unwrap_or_default();
            for test in spec["tests"].as_array().into_iter().flatten() {
                let at = TestAt {
                    file,
                    titles: &titles,
                };
                found.extend(from_test(project, &at, test, layout));
            }
        }
    }
    Ok(found)
}

/// Where a test of the JSON report is: its file (relative to the config's top `testDir`) and
/// its titles below the file.
struct TestAt<'a> {
    file: &'a str,
    titles: &'a [String],
}

/// A test's snapshot failures, unless its last attempt passed (a flaky one).
fn from_test(
    project: &Path,
    at: &TestAt,
    test: &Value,
    layout: Option<&SnapshotConfig>,
) -> Vec<FailedSnapshot> {
    let results = test["results"].as_array().cloned().unwrap_or_default();
    if results.last().is_some_and(|r| r["status"] == "passed") {
        return Vec::new();
    }
    let project_name = test["projectName"].as_str().filter(|n| !n.is_empty());
    let project_id = test["projectId"].as_str().or(project_name);
    let mut found = Vec::new();
    for result in &results {
        let attachments = result["attachments"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let path_of = |name: &str| {
            attachments
                .iter()
                .find(|a| a["name"] == name)
                .and_then(|a| a["path"].as_str())
                .map(PathBuf::from)
        };
        for attachment in &attachments {
            let Some(stem) = attachment["name"]
                .as_str()
                .and_then(|n| n.strip_suffix("-actual.png"))
            else {
                continue;
            };
            let (Some(actual), Some(expected)) = (
                path_of(&format!("{stem}-actual.png")),
                path_of(&format!("{stem}-expected.png")),
            ) else {
                continue;
            };
            let computed = layout
                .map(|l| snapshot_file::of_test(l, project_id, at.file, at.titles, stem))
                .unwrap_or_default();
            let Some(snapshot) =
                snapshot_file::choose(project, &computed, &expected, stem, at.file)
            else {
                continue;
            };
            found.push(FailedSnapshot {
                test: [at.file.to_string()]
                    .iter()
                    .chain(at.titles)
                    .filter(|t| !t.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" › "),
                project: project_name.map(str::to_string),
                name: stem.to_string(),
                expected,
                attempts: vec![actual.clone()],
                actual,
                snapshot,
            });
        }
    }
    found
}

/// Triplets in a test-results folder (`<name>-actual.png` beside `<name>-expected.png`), each
/// in the folder Playwright named after its test.
fn from_folder(
    project: &Path,
    folder: &Path,
    layout: Option<&SnapshotConfig>,
) -> Result<Vec<FailedSnapshot>> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| io_error("read", &dir, e))?;
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        let test = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for path in paths {
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let file = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let Some(stem) = file.strip_suffix("-actual.png") else {
                continue;
            };
            let expected = dir.join(format!("{stem}-expected.png"));
            let (computed, project_name) = match layout {
                Some(l) => snapshot_file::of_results_folder(l, &test, stem),
                None => (Vec::new(), None),
            };
            let Some(snapshot) = snapshot_file::choose(project, &computed, &expected, stem, "")
            else {
                continue;
            };
            found.push(FailedSnapshot {
                test: test.clone(),
                project: project_name,
                name: stem.to_string(),
                expected,
                actual: path.clone(),
                attempts: vec![path.clone()],
                snapshot,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(clock: u32) -> Vec<u8> {
        let mut image = image::RgbaImage::from_pixel(60, 40, image::Rgba([255, 255, 255, 255]));
        for x in 10..10 + clock {
            for y in 5..10 {
                image.put_pixel(x, y, image::Rgba([0, 0, 0, 255]));
            }
        }
        let mut bytes = Vec::new();
        image
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .unwrap();
        bytes
    }

    #[test]
    fn retries_of_one_snapshot_in_a_results_folder_are_one_change_with_their_noise() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        let snapshots = root.join("tests/a.spec.mjs-snapshots");
        std::fs::create_dir_all(&snapshots).unwrap();
        std::fs::write(snapshots.join("home-chromium-linux.png"), png(1)).unwrap();
        for (folder, clock) in [("a-home-chromium", 5), ("a-home-chromium-retry1", 9)] {
            let dir = root.join("test-results").join(folder);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("home-expected.png"), png(1)).unwrap();
            std::fs::write(dir.join("home-actual.png"), png(clock)).unwrap();
        }
        let found = read_results(root, &root.join("test-results"), None).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].snapshot, snapshots.join("home-chromium-linux.png"));
        assert_eq!(found[0].attempts.len(), 2);
        let noise = noise_over_retries(&found[0].attempts);
        assert_eq!(noise.len(), 1, "{noise:?}");
        assert!(noise[0].reason.contains("2 retries"));
    }

    #[test]
    fn a_missing_results_path_says_what_to_give() {
        let project = tempfile::tempdir().unwrap();
        let err = read_results(project.path(), &project.path().join("nope"), None).unwrap_err();
        assert!(err.to_string().contains("--reporter=json"), "{err}");
    }
}
