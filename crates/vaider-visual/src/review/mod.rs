//! The review loop: approved pictures (baselines) kept in the project, each new capture or
//! failed Playwright screenshot compared with its baseline, the differences kept as pending
//! changes, and a person's decision (approve, reject, undo) logged beside the baselines and in
//! the history. Agents ask; people decide: every function that decides takes a
//! `vaider_core::person::Decision`, which only a door holding a person's proof can make.
//!
//! One file per concern: where baselines live and what is kept with them (`baselines`), the
//! pending changes (`changes`), the decisions and their log (`decide`), a capture checked
//! against its baseline (`check`), the model's verdict per region (`verdict`), noise learned
//! from repeated captures (`noise`), Playwright's own snapshots (`playwright`), the project's
//! list of pages to check (`check_file`) and what a CI run writes (`report`).

pub mod baselines;
pub mod capture;
pub mod changes;
pub mod check;
pub mod check_file;
pub mod decide;
pub mod noise;
pub mod pictures;
pub mod playwright;
pub mod report;
mod snapshot_file;
pub mod verdict;

use std::path::Path;

pub use baselines::{BaselineKey, BaselineMeta, Baselines, IgnoredArea};
pub use capture::{baseline_sentence, capture_and_check, CaptureCheck};
pub use changes::{
    BaselineStatus, ChangeSource, ChangeState, Changes, PendingChange, RegionVerdict,
};
pub use check::{check_capture, BaselineCheck, CheckRequest};
pub use decide::{approve, decisions, reject, undo, Action, DecisionRecord};
pub use pictures::{picture, PICTURES};

/// What went wrong in the review loop; each message says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReviewError(pub String);

impl From<crate::VisualError> for ReviewError {
    fn from(error: crate::VisualError) -> Self {
        ReviewError(error.to_string())
    }
}

pub type Result<T> = std::result::Result<T, ReviewError>;

/// `<project>/.vaider`, the folder of the review loop's files.
pub(crate) fn vaider_dir(project: &Path) -> std::path::PathBuf {
    project.join(".vaider")
}

/// An I/O failure as a sentence naming the file and what to check.
pub(crate) fn io_error(doing: &str, path: &Path, error: std::io::Error) -> ReviewError {
    ReviewError(format!(
        "cannot {doing} {}: {error}; check that the folder exists and is writable",
        path.display()
    ))
}

/// "sha256:<hex>" of some bytes.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}
