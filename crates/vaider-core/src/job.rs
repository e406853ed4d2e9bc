//! A job: one history entry for work that is not a model call itself (a test validation, a
//! test-plan run) but may ask the pipeline for some. Its model calls name it as their parent
//! (`AnalysisRequest::parent_id`), so the history shows them under it and its cost is theirs.
//! A job dropped before it is finished (a panic, a cancelled request) closes its row as
//! interrupted, like a call.

use crate::analysis::Door;
use crate::engine::Vaider;
use crate::error::Result;
use crate::history::{History, JobEnd, NewJob, Outcome, Status};
use crate::pipeline::now_rfc3339;

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

/// An open job. Finish it with [`Job::finish`]; dropped unfinished, its row says interrupted.
pub struct Job {
    history: History,
    id: String,
    started: std::time::Instant,
    ended: bool,
}

impl Vaider {
    /// Opens a job's history row (status `running`), as this process's.
    pub async fn start_job(&self, start: JobStart<'_>) -> Result<Job> {
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
            owner: Some(self.owner().to_string()),
        };
        self.history().run(move |h| h.start_job(&row)).await?;
        Ok(Job {
            history: self.history().clone(),
            id,
            started: std::time::Instant::now(),
            ended: false,
        })
    }
}

impl Job {
    /// The id its model calls give as `parent_id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Closes the row: `ok` when the job's own verdict passed, else `error` with `error`;
    /// `media` (path, MIME type) is what the history shows beside the description.
    pub async fn finish(
        mut self,
        description: String,
        result: serde_json::Value,
        error: Option<String>,
        media: Option<(String, &'static str)>,
    ) -> Result<()> {
        self.ended = true;
        let (id, duration_ms) = (self.id.clone(), self.elapsed_ms());
        self.history
            .run(move |h| {
                h.finish_job(
                    &id,
                    &now_rfc3339(),
                    JobEnd {
                        status: if error.is_some() {
                            Status::Error
                        } else {
                            Status::Ok
                        },
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
