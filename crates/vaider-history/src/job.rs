//! A job: one history entry for work that is not a model call itself (a test validation, a
//! test-plan run) but may ask the pipeline for some. Its model calls name it as their parent
//! (`AnalysisRequest::parent_id`), so the history shows them under it and its cost is theirs.
//! A job dropped before it is finished (a panic, a cancelled request) closes its row as
//! interrupted, like a call.

use vaider_base::error::Result;

use crate::{now_rfc3339, Door, History, JobEnd, NewJob, Outcome, Status};

/// A fresh job id (time-ordered, like a call's), for a caller that names the job's folder
/// before the job starts.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// What a job is about, for its history row.
pub struct JobStart<'a> {
    /// From [`new_id`].
    pub id: String,
    pub tool: &'static str,
    pub door: Door,
    pub source: &'a str,
    pub expectations: &'a [String],
    pub log_dir: Option<&'a std::path::Path>,
    pub project: Option<&'a std::path::Path>,
}

/// A duration the way Playwright's reporters print it: `850ms`, `5.1s`, `2.5m`, `1.2h`.
pub fn duration_text(ms: u64) -> String {
    const SECOND: u64 = 1000;
    const MINUTE: u64 = 60 * SECOND;
    const HOUR: u64 = 60 * MINUTE;
    let one_decimal = |unit: u64| format!("{:.1}", ms as f64 / unit as f64);
    match ms {
        ms if ms < SECOND => format!("{ms}ms"),
        ms if ms < MINUTE => format!("{}s", one_decimal(SECOND)),
        ms if ms < HOUR => format!("{}m", one_decimal(MINUTE)),
        _ => format!("{}h", one_decimal(HOUR)),
    }
}

/// An open job. Finish it with [`Job::finish`]; dropped unfinished, its row says interrupted.
pub struct Job {
    history: History,
    id: String,
    started: std::time::Instant,
    ended: bool,
}

impl Job {
    /// Opens a job's history row (status `running`), as `owner`'s (the process's lease);
    /// the engine's `Vaider::start_job` calls it with its own history and lease.
    pub async fn start(history: &History, owner: &str, start: JobStart<'_>) -> Result<Job> {
        let id = start.id.clone();
        let row = NewJob {
            id: start.id,
            created_at: now_rfc3339(),
            tool: start.tool,
            door: start.door.as_str(),
            source: start.source.to_string(),
            expectations: start.expectations.to_vec(),
            log_dir: start.log_dir.map(|d| d.display().to_string()),
            project: start.project.map(|d| d.display().to_string()),
            owner: Some(owner.to_string()),
        };
        history.run(move |h| h.start_job(&row)).await?;
        Ok(Job {
            history: history.clone(),
            id,
            started: std::time::Instant::now(),
            ended: false,
        })
    }

    /// The id its model calls give as `parent_id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Closes the row with its verdict; `media` (path, MIME type) is what the history shows
    /// beside the description.
    pub async fn finish(
        mut self,
        description: String,
        result: serde_json::Value,
        verdict: Verdict,
        media: Option<(String, &'static str)>,
    ) -> Result<()> {
        self.ended = true;
        let (id, duration_ms) = (self.id.clone(), self.elapsed_ms());
        let (status, error) = verdict.into_parts();
        self.history
            .run(move |h| {
                h.finish_job(
                    &id,
                    &now_rfc3339(),
                    JobEnd {
                        status,
                        description: &description,
                        result: &result,
                        error: error.as_deref(),
                        duration_ms,
                        media: media.as_ref().map(|(path, mime)| (path.as_str(), *mime)),
                    },
                )
            })
            .await
    }
}

/// How a job ended. A test that failed is the job's result (`failed`, code TEST_FAILED),
/// kept apart from Vaider not being able to do the job (`error`, code JOB_FAILED).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The app failed the test: what failed (the step or the test, and why).
    Failed(String),
    /// Vaider could not do its job: what went wrong.
    Error(String),
}

impl Verdict {
    fn into_parts(self) -> (Status, Option<String>) {
        match self {
            Verdict::Passed => (Status::Ok, None),
            Verdict::Failed(what) => (Status::Failed, Some(what)),
            Verdict::Error(what) => (Status::Error, Some(what)),
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if !self.ended {
            let outcome = Outcome::Interrupted {
                message: "the job stopped before it ended (cancelled or failed half-way)",
            };
            if let Err(e) = self.history.finish(&self.id, &now_rfc3339(), outcome) {
                tracing::error!("{e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_playwright_prints_them() {
        assert_eq!(duration_text(0), "0ms");
        assert_eq!(duration_text(850), "850ms");
        assert_eq!(duration_text(999), "999ms");
        assert_eq!(duration_text(1000), "1.0s");
        assert_eq!(duration_text(5064), "5.1s");
        assert_eq!(duration_text(90_000), "1.5m");
        assert_eq!(duration_text(5_400_000), "1.5h");
    }

    #[test]
    fn a_failed_test_is_a_result_and_an_error_is_vaiders() {
        assert_eq!(Verdict::Passed.into_parts(), (Status::Ok, None));
        let (status, what) = Verdict::Failed("Step 2 failed".into()).into_parts();
        assert_eq!(
            (status.as_str(), what.as_deref()),
            ("failed", Some("Step 2 failed"))
        );
        assert_eq!(
            Verdict::Error("no browser".into()).into_parts().0,
            Status::Error
        );
        assert_eq!(Status::from_name("failed"), Some(Status::Failed));
    }
}
