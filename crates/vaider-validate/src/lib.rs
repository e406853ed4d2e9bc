//! Vaider's test-run validation: runs a project's own Playwright test
//! (`validate_test`), reads its JSON report and its traces (the page's console errors and
//! failed requests), finds its screenshots, has the vision model watch its recording through
//! the one pipeline, and judges it by the rubric of contracts.md §2. `analyse_test_results`
//! does the watching for a run that already finished: each failed test's failing step, with its
//! error as context.
//!
//! One module per job: `runner` (the Playwright process), `report` (its JSON report),
//! `trace` (trace.zip and the stderr rules), `trace_zip` (its limits), `timeline` (the
//! test's steps and screencast frames on its video's clock), `screencast` (a video of those
//! frames when Playwright recorded none), `screenshots` (the design's search order),
//! `rubric` (the criteria and their texts), `video` (the pipeline call), `recording` (what
//! the model watches of a test: its video or screencast, and its steps), `watch` (what a
//! validation has the model watch), `failure` (the failing step watched closely), `flaky` (a
//! flaky test's attempts compared), `service` and `results` (the two entry points every door
//! calls).

pub mod again;
pub mod failure;
pub mod flaky;
pub mod recording;
pub mod report;
pub mod results;
pub mod rubric;
pub mod runner;
pub mod screencast;
pub mod screenshots;
pub mod service;
pub mod snapshot_paths;
pub mod snapshots;
pub mod timeline;
pub mod trace;
pub mod trace_zip;
pub mod verdict;
pub mod video;
pub mod watch;

use std::path::{Path, PathBuf};

pub use again::register_jobs;
pub use results::{analyse_test_results, ResultsRequest};
pub use rubric::Limits;
pub use service::{validate_test, validate_test_as, AgentResult, ValidateRequest};

/// Makes the validation's model tasks known by name (`vaider status`, "Run again").
pub fn register_tasks() {
    vaider_core::task::register(&[failure::WATCH_FAILING_STEP]);
}

/// A path as the agent gave it: absolute as is; relative, the first of the workspace folders
/// where it exists, else the first folder's (or the working folder's) join, for the error.
/// An existing path is made canonical (no `..`, no symlinks), as Playwright names its files.
pub fn resolve(path: &str, base_dirs: &[PathBuf]) -> PathBuf {
    let found = find(path, base_dirs);
    std::fs::canonicalize(&found).unwrap_or(found)
}

fn find(path: &str, base_dirs: &[PathBuf]) -> PathBuf {
    let given = Path::new(path.trim());
    if given.is_absolute() {
        return given.to_path_buf();
    }
    let cwd = std::env::current_dir().ok();
    let mut candidates = base_dirs.iter().cloned().chain(cwd).map(|d| d.join(given));
    let first = candidates.next();
    first
        .clone()
        .filter(|p| p.exists())
        .or_else(|| candidates.find(|p| p.exists()))
        .or(first)
        .unwrap_or_else(|| given.to_path_buf())
}

/// A run folder's name: the time, then the id's last characters (like an analysis's).
fn folder_name(id: &str) -> String {
    let tail: String = id
        .chars()
        .rev()
        .take(8)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let now = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    format!("{now}-validate-{tail}")
}
