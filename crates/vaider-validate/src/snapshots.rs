//! A validation's failed `toHaveScreenshot`s enter the review loop: each becomes a pending
//! change that a person approves (which writes the snapshot file `--update-snapshots` would)
//! or rejects. The loop lives above this crate (vaider-visual, which reads snapshot paths from
//! here), so whoever builds the service hands it in once with [`set_reviewer`]; without one, a
//! validation reports the failures as Playwright did, and nothing more.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use vaider_core::analysis::Door;
use vaider_core::Vaider;

use crate::report::Report;

/// One failed snapshot, now a pending change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotChange {
    /// The change's id, for `vaider review` and the review page.
    pub id: String,
    /// The snapshot's name ("home").
    pub name: String,
    /// The snapshot file an approval writes.
    pub snapshot: String,
    /// "changed", or "new" when the project has no such snapshot file yet.
    pub status: String,
    pub changed_pixels: u64,
    /// The model's verdict in a line, or why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// What the review loop made of a run's failed snapshots.
#[derive(Debug, Clone, Default)]
pub struct Reviewed {
    pub changes: Vec<SnapshotChange>,
    /// What the model's verdicts cost.
    pub cost_usd: f64,
    /// Said when the project's Playwright config could not be loaded, so the snapshot files
    /// were found another way.
    pub note: Option<String>,
}

pub type ReviewFuture<'a> = Pin<Box<dyn Future<Output = Result<Reviewed, String>> + Send + 'a>>;

/// What a validation hands the review loop.
pub struct Run<'a> {
    pub project: &'a Path,
    /// The project's own Playwright config (the run used one Vaider wrote beside it).
    pub config: Option<&'a Path>,
    /// The run's JSON report: which tests failed in the end, on which snapshots.
    pub report: &'a Path,
    pub door: Door,
    /// The model the validation was asked to use, for the verdicts too.
    pub model: Option<String>,
    /// The validation's history entry: the verdicts are part of it.
    pub parent_id: Option<String>,
}

/// The review loop, as a validation calls it.
pub trait Reviewer: Send + Sync {
    /// Turns the run's failed snapshots into pending changes.
    fn review<'a>(&'a self, engine: &'a Vaider, run: Run<'a>) -> ReviewFuture<'a>;
}

static REVIEWER: OnceLock<Arc<dyn Reviewer>> = OnceLock::new();

/// Hands the review loop to every validation of this process (the first one handed in stays).
pub fn set_reviewer(reviewer: Arc<dyn Reviewer>) {
    let _ = REVIEWER.set(reviewer);
}

/// Whether a test of the run failed on a screenshot: Playwright attaches the snapshot's
/// `-actual.png` (beside its `-expected.png` and `-diff.png`) only then.
fn failed_on_a_snapshot(report: &Report) -> bool {
    report.tests.iter().any(|test| {
        test.attachments
            .iter()
            .any(|a| a.name.ends_with("-actual.png"))
    })
}

/// The run's failed snapshots as pending changes (what judging them cost), with a sentence for
/// anything that went wrong (the validation's result stands either way).
pub(crate) async fn review(engine: &Vaider, report: &Report, run: Run<'_>) -> Reviewed {
    let Some(reviewer) = REVIEWER.get() else {
        return Reviewed::default();
    };
    if !failed_on_a_snapshot(report) || !run.report.is_file() {
        return Reviewed::default();
    }
    let (project, report_file) = (run.project, run.report);
    match reviewer.review(engine, run).await {
        Ok(reviewed) => reviewed,
        Err(e) => Reviewed {
            note: Some(format!(
                "The failed screenshots could not be put up for review: {e}. In {}, `vaider check --playwright {}` tries again.",
                project.display(),
                report_file.display()
            )),
            ..Reviewed::default()
        },
    }
}

/// "2 screenshots differ from their snapshots: pending review (…)", for the result's notes.
pub fn sentence(changes: &[SnapshotChange]) -> Option<String> {
    let names: Vec<&str> = changes.iter().map(|c| c.name.as_str()).collect();
    let (count, verb) = match names.len() {
        0 => return None,
        1 => ("1 screenshot".to_string(), "differs from its snapshot"),
        n => (format!("{n} screenshots"), "differ from their snapshots"),
    };
    Some(format!(
        "{count} ({}) {verb}: pending review. A person approves (the snapshot file is written, as with --update-snapshots) or rejects each on Vaider's review page or with `vaider review`; an agent cannot.",
        names.join(", ")
    ))
}
