//! The reference pixelmatch (npm, in `tests/visual`) that Vaider's diff is held to: where it
//! is installed, and one node process that runs a list of comparisons and prints their counts.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `tests/visual`, where the reference packages and their runner live.
pub fn reference_dir() -> PathBuf {
    crate::repo_root().join("tests/visual")
}

/// The installed npm package's folder; a test without it fails saying how to install it.
pub fn installed(package: &str) -> PathBuf {
    let path = reference_dir().join("node_modules").join(package);
    assert!(
        path.exists(),
        "{package} is not installed: run `npm install --prefix tests/visual` at the repository \
         root (needs node and npm)"
    );
    path
}

/// Runs pixelmatch on every job (`pixelmatch-jobs.mjs`'s list of pairs, options and diff
/// outputs) in one node process, writing the list into `dir`; returns the counts in order.
pub fn run_jobs(jobs: &Value, dir: &Path) -> Vec<u64> {
    installed("pixelmatch");
    installed("pngjs");
    let jobs_path = dir.join("jobs.json");
    std::fs::write(&jobs_path, jobs.to_string()).expect("write the jobs");
    let output = Command::new("node")
        .arg(reference_dir().join("pixelmatch-jobs.mjs"))
        .arg(&jobs_path)
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run node ({error}): install Node.js, then `npm install --prefix tests/visual`"
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node pixelmatch-jobs.mjs failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("pixelmatch printed {stdout:?}, not the counts"))
}
