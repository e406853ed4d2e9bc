//! Where a run's screenshots are looked for, in the design's order: the test's own
//! `artifacts/{test_name}/**/*.png` in the project, then `test-results/**/*{test_name}*/*.png`
//! (Playwright's output of this run). Absolute paths, oldest first by modification time.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A folder tree deeper than this is not searched further (a symlink loop, a huge tree).
const MAX_DEPTH: usize = 12;

/// The test's name as the design uses it: the file name without `.spec.ts`, `.test.js`, ...
pub fn test_name(test_file: &Path) -> String {
    let name = test_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"] {
        if let Some(s) = stem.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    for kind in [".spec", ".test"] {
        if let Some(s) = stem.strip_suffix(kind) {
            stem = s;
            break;
        }
    }
    stem.to_string()
}

/// The screenshots of a run that started at `since`: the project's `artifacts/{test_name}`
/// first (only files written during this run, so an old one cannot stand in for a new one),
/// else the run's `test-results`.
pub fn find(project_dir: &Path, test_results: &Path, name: &str, since: SystemTime) -> Vec<String> {
    let mut artifacts = Vec::new();
    collect_png(&project_dir.join("artifacts").join(name), 0, &mut artifacts);
    artifacts.retain(|(_, modified)| *modified >= since);
    if !artifacts.is_empty() {
        return ordered(artifacts);
    }
    let mut results = Vec::new();
    for dir in dirs_named_like(test_results, name) {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                push_png(&entry.path(), &mut results);
            }
        }
    }
    ordered(results)
}

fn ordered(mut files: Vec<(PathBuf, SystemTime)>) -> Vec<String> {
    files.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    files
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect()
}

fn push_png(path: &Path, out: &mut Vec<(PathBuf, SystemTime)>) {
    push_file(path, "png", out);
}

fn push_file(path: &Path, extension: &str, out: &mut Vec<(PathBuf, SystemTime)>) {
    let matches = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension));
    if !matches {
        return;
    }
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_file() {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push((path.to_path_buf(), modified));
        }
    }
}

fn collect_png(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, SystemTime)>) {
    collect(dir, "png", depth, out);
}

/// Every file with this extension under `dir`, at any depth.
pub fn collect_files(dir: &Path, extension: &str, out: &mut Vec<(PathBuf, SystemTime)>) {
    collect(dir, extension, 0, out);
}

fn collect(dir: &Path, extension: &str, depth: usize, out: &mut Vec<(PathBuf, SystemTime)>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(&path, extension, depth + 1, out),
            _ => push_file(&path, extension, out),
        }
    }
}

/// The folders under `root` (at any depth) whose name contains `name`.
fn dirs_named_like(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) && depth < MAX_DEPTH {
                let path = entry.path();
                if entry.file_name().to_string_lossy().contains(name) {
                    found.push(path.clone());
                }
                stack.push((path, depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_the_spec_suffix() {
        assert_eq!(test_name(Path::new("/p/e2e/login.spec.ts")), "login");
        assert_eq!(test_name(Path::new("cart.test.mjs")), "cart");
        assert_eq!(test_name(Path::new("plain.js")), "plain");
        assert_eq!(test_name(Path::new("")), "");
    }

    #[test]
    fn artifacts_come_first_then_test_results() {
        let dir = tempfile::tempdir().unwrap();
        let (project, results) = (dir.path().join("p"), dir.path().join("r"));
        let run = results.join("login-signs-in-chromium");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::create_dir_all(results.join("other-test-chromium")).unwrap();
        std::fs::write(run.join("test-finished-1.png"), b"png").unwrap();
        std::fs::write(run.join("video.webm"), b"webm").unwrap();
        std::fs::write(results.join("other-test-chromium/x.png"), b"png").unwrap();
        let since = SystemTime::UNIX_EPOCH;
        let shots = find(&project, &results, "login", since);
        assert_eq!(
            shots,
            [run.join("test-finished-1.png").display().to_string()]
        );
        let artifacts = project.join("artifacts/login/step");
        std::fs::create_dir_all(&artifacts).unwrap();
        std::fs::write(artifacts.join("a.png"), b"png").unwrap();
        let shots = find(&project, &results, "login", since);
        assert_eq!(shots, [artifacts.join("a.png").display().to_string()]);
        // An old artifact does not count for a later run: that run's own results do.
        let later = SystemTime::now() + std::time::Duration::from_secs(60);
        assert_eq!(
            find(&project, &results, "login", later),
            [run.join("test-finished-1.png").display().to_string()]
        );
    }
}
