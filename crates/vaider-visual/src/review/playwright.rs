//! Playwright's own baselines in the same loop: a failed `toHaveScreenshot` (its
//! `*-expected.png`, `*-actual.png`, `*-diff.png`, in the JSON report's attachments or in a
//! test-results folder) becomes a pending change whose approval writes the actual picture to
//! exactly the snapshot file `npx playwright test --update-snapshots` would write. That path is
//! the expected attachment's own when it points at the snapshot (Playwright's JSON report
//! does); otherwise (a test-results folder, a merged report's copies) it is the project's
//! file with the expected picture's very bytes, since Playwright copies it unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::changes::ChangeSource;
use super::check::{compare_with_baseline, BaselineCheck, ChangeSpec};
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
/// a test-results folder. A snapshot failed in several retries counts once (its last actual).
pub fn read_results(project: &Path, results: &Path) -> Result<Vec<FailedSnapshot>> {
    let found = if results.is_file() {
        from_report(project, results)?
    } else if results.is_dir() {
        from_folder(project, results)?
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

/// Each failed snapshot compared with its file, as pending changes.
pub async fn import(project: &Path, results: &Path) -> Result<Vec<BaselineCheck>> {
    let mut checks = Vec::new();
    for failed in read_results(project, results)? {
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
    Ok(checks)
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

fn from_report(project: &Path, report: &Path) -> Result<Vec<FailedSnapshot>> {
    let text = std::fs::read_to_string(report).map_err(|e| io_error("read", report, e))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        ReviewError(format!(
            "{} is not Playwright's JSON report ({e}); write one with `--reporter=json`",
            report.display()
        ))
    })?;
    let mut found = Vec::new();
    let mut suites: Vec<(String, &Value)> = value["suites"]
        .as_array()
        .map(|s| s.iter().map(|s| (String::new(), s)).collect())
        .unwrap_or_default();
    while let Some((path, suite)) = suites.pop() {
        let title = join_title(&path, suite["title"].as_str().unwrap_or_default());
        for child in suite["suites"].as_array().into_iter().flatten() {
            suites.push((title.clone(), child));
        }
        for spec in suite["specs"].as_array().into_iter().flatten() {
            let test_title = join_title(&title, spec["title"].as_str().unwrap_or_default());
            for test in spec["tests"].as_array().into_iter().flatten() {
                let file = spec["file"].as_str().unwrap_or_default();
                found.extend(from_test(project, &test_title, file, test));
            }
        }
    }
    Ok(found)
}

fn join_title(path: &str, title: &str) -> String {
    match (path.is_empty(), title.is_empty()) {
        (true, _) => title.to_string(),
        (_, true) => path.to_string(),
        _ => format!("{path} › {title}"),
    }
}

/// A test's snapshot failures, unless its last attempt passed (a flaky one).
fn from_test(project: &Path, title: &str, file: &str, test: &Value) -> Vec<FailedSnapshot> {
    let results = test["results"].as_array().cloned().unwrap_or_default();
    if results.last().is_some_and(|r| r["status"] == "passed") {
        return Vec::new();
    }
    let project_name = test["projectName"].as_str().filter(|n| !n.is_empty());
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
            let Some(snapshot) = snapshot_path(project, &expected, stem, file) else {
                continue;
            };
            found.push(FailedSnapshot {
                test: title.to_string(),
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

/// Triplets in a test-results folder (`<name>-actual.png` beside `<name>-expected.png`).
fn from_folder(project: &Path, folder: &Path) -> Result<Vec<FailedSnapshot>> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| io_error("read", &dir, e))?;
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
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
            let Some(snapshot) = snapshot_path(project, &expected, stem, "") else {
                continue;
            };
            found.push(FailedSnapshot {
                test: dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                project: None,
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

/// The snapshot file: the expected attachment itself when it is one (a file of the project
/// named after the snapshot, outside any results folder: Playwright's own JSON report), else
/// the project's file named like the snapshot with the same bytes (a test-results folder's
/// `-expected.png` copy, a merged report's resource named by its hash).
fn snapshot_path(project: &Path, expected: &Path, stem: &str, test_file: &str) -> Option<PathBuf> {
    let in_results = expected.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("test-results" | "blob-report" | "playwright-report" | "resources")
        )
    });
    let file = expected.file_name()?.to_str()?;
    let named_as_snapshot = file.starts_with(stem) && !file.ends_with("-expected.png");
    if !in_results && named_as_snapshot && expected.starts_with(project) && expected.is_file() {
        return Some(expected.to_path_buf());
    }
    let bytes = std::fs::read(expected).ok()?;
    let same = same_files(project, stem, &bytes);
    // Two snapshots may hold the same picture: the one beside the test's file comes first.
    let file_name = Path::new(test_file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("\0");
    let beside_test = same
        .iter()
        .find(|p| p.to_string_lossy().contains(file_name));
    beside_test.or(same.first()).cloned()
}

/// The files under `project` (not in node_modules, .git or a results folder) whose name
/// starts with `stem` and ends with `.png` and whose bytes are `bytes`, in path order.
fn same_files(project: &Path, stem: &str, bytes: &[u8]) -> Vec<PathBuf> {
    let mut same = Vec::new();
    let skip = [
        "node_modules",
        ".git",
        "test-results",
        "blob-report",
        "playwright-report",
        ".vaider",
    ];
    let mut folders = vec![project.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            if path.is_dir() {
                if !skip.contains(&name.as_str()) {
                    folders.push(path);
                }
            } else if name.starts_with(stem)
                && name.ends_with(".png")
                && std::fs::read(&path).ok().as_deref() == Some(bytes)
            {
                same.push(path);
            }
        }
    }
    same.sort();
    same
}

/// Playwright's `snapshotPathTemplate` filled in, for a project whose config sets one: the
/// tokens Playwright documents (`{testDir}`, `{snapshotDir}`, `{testFileDir}`,
/// `{testFileName}`, `{testFilePath}`, `{testName}`, `{arg}`, `{ext}`, `{projectName}`,
/// `{platform}`, `{snapshotSuffix}`, with `{-projectName}` style tokens adding a dash only
/// when the value is not empty).
pub fn fill_template(template: &str, tokens: &BTreeMap<&str, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let token = &rest[open + 1..open + close];
        let (prefix, name) = match token.chars().next() {
            Some(c @ ('-' | '/' | '.' | '_')) => (Some(c), &token[1..]),
            _ => (None, token),
        };
        let value = tokens.get(name).cloned().unwrap_or_default();
        if !value.is_empty() {
            out.extend(prefix);
            out.push_str(&value);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Playwright's default template.
pub const DEFAULT_TEMPLATE: &str =
    "{snapshotDir}/{testFileDir}/{testFileName}-snapshots/{arg}{-projectName}{-snapshotSuffix}{ext}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_template_gives_playwrights_path() {
        let tokens: BTreeMap<&str, String> = [
            ("snapshotDir", "/p/tests"),
            ("testFileDir", ""),
            ("testFileName", "shot.spec.mjs"),
            ("arg", "home"),
            ("projectName", "chromium"),
            ("snapshotSuffix", "linux"),
            ("ext", ".png"),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        assert_eq!(
            fill_template(DEFAULT_TEMPLATE, &tokens).replace("//", "/"),
            "/p/tests/shot.spec.mjs-snapshots/home-chromium-linux.png"
        );
        assert_eq!(
            fill_template("{testDir}/__s__/{arg}{ext}{-none", &tokens),
            "/__s__/home.png{-none"
        );
    }

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
        let found = read_results(root, &root.join("test-results")).unwrap();
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
        let err = read_results(project.path(), &project.path().join("nope")).unwrap_err();
        assert!(err.to_string().contains("--reporter=json"), "{err}");
    }
}
