//! Which file of the project a failed Playwright snapshot is: the path the project's own
//! config gives it (`vaider_validate::snapshot_paths`, Playwright's template filled in for the
//! test's file, titles and project), the one holding the expected picture's bytes when
//! several fit. Without a config Vaider can load, Playwright's own path for the expected
//! picture when the JSON report gives it, else the project file with the expected picture's
//! very bytes (Playwright copies it unchanged).

use std::path::{Path, PathBuf};

use serde_json::Value;
use vaider_validate::snapshot_paths::{
    sanitize_for_file_path, test_name, Screenshot, SnapshotConfig, SnapshotProject,
};

/// The project's Playwright config, loaded by its own Playwright: `config` when the caller
/// knows it, else the one the JSON report names when it is on this machine, else the
/// `playwright.config.*` in the project. When it cannot be loaded (no config, no Node, no
/// Playwright installed), why: the snapshot files are then found from the pictures, and the
/// user is told so.
pub(super) async fn load_layout(
    project: &Path,
    results: &Path,
    config: Option<&Path>,
) -> std::result::Result<SnapshotConfig, String> {
    let named = results
        .is_file()
        .then(|| std::fs::read(results).ok())
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| v["config"]["configFile"].as_str().map(PathBuf::from))
        .filter(|c| c.is_file());
    let known = config.map(Path::to_path_buf);
    let found = known
        .or(named)
        .or_else(|| vaider_validate::runner::config_in(project));
    let Some(config) = found else {
        return Err(format!("no playwright.config.* in {}", project.display()));
    };
    let dir = config.parent().unwrap_or(project).to_path_buf();
    SnapshotConfig::load(&dir, Some(&config))
        .await
        .map_err(|e| format!("{} could not be loaded: {e}", config.display()))
}

/// The snapshot paths of a JSON report's test: its file is relative to the config's top
/// `testDir`; `stem` is the snapshot's name as its attachments give it.
pub(super) fn of_test(
    layout: &SnapshotConfig,
    project_id: Option<&str>,
    file: &str,
    titles: &[String],
    stem: &str,
) -> Vec<PathBuf> {
    let Some(project) = layout.project(project_id) else {
        return Vec::new();
    };
    let test_file = layout.root_dir.join(file);
    let name = test_name(titles);
    paths_for(layout, project, &test_file, &name, stem)
}

/// The snapshot paths of a test-results folder's snapshot. Playwright names the folder
/// `<file without .spec.ts, '/' as '-'>-<sanitized titles>-<project id>[-retryN][-repeatN]`:
/// each test file of each project that fits the name gives a path. Also the project's name.
pub(super) fn of_results_folder(
    layout: &SnapshotConfig,
    folder: &str,
    stem: &str,
) -> (Vec<PathBuf>, Option<String>) {
    let folder = strip_counter(strip_counter(folder, "-repeat"), "-retry");
    let mut paths = Vec::new();
    let mut project_name = None;
    for project in &layout.projects {
        let rest = match project.id.is_empty() {
            true => Some(folder),
            false => folder.strip_suffix(&format!("-{}", sanitize_for_file_path(&project.id))),
        };
        let Some(rest) = rest else { continue };
        for file in test_files(&project.test_dir) {
            let Some(title) = folder_title(&project.test_dir, &file, rest) else {
                continue;
            };
            project_name.get_or_insert_with(|| project.name.clone());
            paths.extend(paths_for(layout, project, &file, title, stem));
        }
    }
    (paths, project_name.filter(|n| !n.is_empty()))
}

/// The titles part of a results folder's name, when `file` is the test file it names.
fn folder_title<'a>(test_dir: &Path, file: &Path, rest: &'a str) -> Option<&'a str> {
    let relative = file
        .strip_prefix(test_dir)
        .ok()?
        .to_string_lossy()
        .into_owned();
    let without = strip_spec_extension(&relative).replace('/', "-");
    rest.strip_prefix(&without)?.strip_prefix('-')
}

/// Playwright's `\.(spec|test)\.(js|ts|jsx|tsx|mjs|mts|cjs|cts)$` taken off.
fn strip_spec_extension(path: &str) -> &str {
    for kind in [".spec.", ".test."] {
        if let Some(at) = path.rfind(kind) {
            let ext = &path[at + kind.len()..];
            if ["js", "ts", "jsx", "tsx", "mjs", "mts", "cjs", "cts"].contains(&ext) {
                return &path[..at];
            }
        }
    }
    path
}

/// `name` without a trailing `<marker><digits>`.
fn strip_counter<'a>(name: &'a str, marker: &str) -> &'a str {
    match name.rfind(marker) {
        Some(at)
            if name.len() > at + marker.len()
                && name[at + marker.len()..]
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            &name[..at]
        }
        _ => name,
    }
}

/// The JavaScript and TypeScript files under a test folder (not node_modules or results).
fn test_files(dir: &Path) -> Vec<PathBuf> {
    const MOST: usize = 5000;
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if !SKIPPED.contains(&name) && !name.ends_with("-snapshots") {
                    folders.push(path);
                }
            } else if [".js", ".ts", ".jsx", ".tsx", ".mjs", ".mts", ".cjs", ".cts"]
                .iter()
                .any(|e| name.ends_with(e))
            {
                files.push(path);
            }
            if files.len() >= MOST {
                return files;
            }
        }
    }
    files.sort();
    files
}

/// The folders no snapshot or test file is looked for in.
const SKIPPED: [&str; 6] = [
    "node_modules",
    ".git",
    "test-results",
    "blob-report",
    "playwright-report",
    ".vaider",
];

/// The template's path for the snapshot `stem` names; a stem ending in `-N` may also be the
/// N+1th screenshot of that name in the test (Playwright numbers the attachments, not the
/// snapshot file), so the name without it is a candidate too.
fn paths_for(
    layout: &SnapshotConfig,
    project: &SnapshotProject,
    test_file: &Path,
    test_name: &str,
    stem: &str,
) -> Vec<PathBuf> {
    let mut args = vec![stem];
    if let Some((base, n)) = stem.rsplit_once('-') {
        if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            args.push(base);
        }
    }
    args.into_iter()
        .map(|arg| {
            let shot = Screenshot {
                test_file,
                test_name,
                arg,
                ext: ".png",
            };
            layout.screenshot_path(project, &shot)
        })
        .collect()
}

/// Where an approval writes: of the computed paths, the one holding the expected picture;
/// else Playwright's own path for the expected picture (a project file outside the results
/// folders, as its JSON report gives it); else the first computed path; else a project file
/// with the expected picture's bytes.
pub(super) fn choose(
    project: &Path,
    computed: &[PathBuf],
    expected: &Path,
    stem: &str,
    test_file: &str,
) -> Option<PathBuf> {
    let bytes = std::fs::read(expected).ok();
    if let Some(path) = computed
        .iter()
        .find(|p| bytes.is_some() && std::fs::read(p).ok() == bytes)
    {
        return Some(path.clone());
    }
    if is_project_snapshot(project, expected, stem) {
        return Some(expected.to_path_buf());
    }
    if let Some(first) = computed.first() {
        return Some(first.clone());
    }
    let same = same_files(project, stem, bytes.as_deref()?);
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

/// Whether the expected attachment is the snapshot itself: a file of the project named after
/// the snapshot, outside any results folder (Playwright's own JSON report points there).
fn is_project_snapshot(project: &Path, expected: &Path, stem: &str) -> bool {
    let in_results = expected.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("test-results" | "blob-report" | "playwright-report" | "resources")
        )
    });
    let file = expected
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let named_as_snapshot = file.starts_with(stem) && !file.ends_with("-expected.png");
    !in_results && named_as_snapshot && expected.starts_with(project) && expected.is_file()
}

/// The files under `project` (not in node_modules, .git or a results folder) whose name
/// starts with `stem` and ends with `.png` and whose bytes are `bytes`, in path order.
fn same_files(project: &Path, stem: &str, bytes: &[u8]) -> Vec<PathBuf> {
    let mut same = Vec::new();
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
                if !SKIPPED.contains(&name.as_str()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_folder_name_gives_its_test_file_and_titles() {
        let root = tempfile::tempdir().unwrap();
        let tests = root.path().join("tests");
        std::fs::create_dir_all(tests.join("shop")).unwrap();
        std::fs::write(tests.join("shop/cart.spec.ts"), "").unwrap();
        std::fs::write(tests.join("home.spec.ts"), "").unwrap();
        let layout = SnapshotConfig {
            config_dir: root.path().to_path_buf(),
            root_dir: tests.clone(),
            platform: "linux".into(),
            projects: vec![SnapshotProject {
                name: "chromium".into(),
                id: "chromium".into(),
                test_dir: tests.clone(),
                snapshot_dir: tests.clone(),
                template: "{testDir}/__s__/{testFilePath}/{testName}/{arg}{ext}".into(),
            }],
        };
        let (paths, project) = of_results_folder(
            &layout,
            "shop-cart-the-cart-shows-the-total-chromium-retry1",
            "total",
        );
        assert_eq!(project.as_deref(), Some("chromium"));
        assert_eq!(
            paths,
            [tests.join("__s__/shop/cart.spec.ts/the-cart-shows-the-total/total.png")]
        );
        assert!(of_results_folder(&layout, "shop-cart-x-firefox", "total")
            .0
            .is_empty());
        assert_eq!(strip_counter("a-retry12", "-retry"), "a");
        assert_eq!(strip_counter("a-retry", "-retry"), "a-retry");
    }
}
