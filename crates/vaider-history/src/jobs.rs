//! Jobs in the history: an entry for work that is not itself a model call (a test validation,
//! later a test-plan run) but may make some. The job's row is written like a call's (started
//! `running`, finished with its outcome); the model calls it makes carry its id as
//! `parent_id`, so the history can show them under it and the job's cost is theirs.

use rusqlite::params;

use super::{History, Interaction, NewInteraction, Status, COLUMNS};
use vaider_base::error::Result;

/// What is known when a job starts.
#[derive(Debug, Clone, Default)]
pub struct NewJob {
    pub id: String,
    pub created_at: String,
    /// The tool that started it, e.g. "validate_test".
    pub tool: &'static str,
    pub door: &'static str,
    /// What it is about, e.g. the test file.
    pub source: String,
    pub expectations: Vec<String>,
    /// The job's own folder (runner logs, report, artifacts).
    pub log_dir: Option<String>,
    pub project: Option<String>,
    /// The lease of the process running it, so a crash leaves it `interrupted`, not `running`.
    pub owner: Option<String>,
}

/// How a job ended.
#[derive(Debug, Clone)]
pub struct JobEnd<'a> {
    pub status: Status,
    /// One sentence for the history list.
    pub description: &'a str,
    /// The job's whole answer (its own shape, not an analysis result).
    pub result: &'a serde_json::Value,
    pub error: Option<&'a str>,
    pub duration_ms: u64,
    /// What the history's detail shows beside the description (e.g. the run's recording):
    /// its path and MIME type.
    pub media: Option<(&'a str, &'static str)>,
}

impl History {
    /// Opens a job's row; the model calls it makes give its id as their `parent_id`.
    pub fn start_job(&self, job: &NewJob) -> Result<()> {
        self.start(&NewInteraction {
            id: job.id.clone(),
            created_at: job.created_at.clone(),
            tool: job.tool,
            door: job.door,
            source: job.source.clone(),
            expectations: job.expectations.clone(),
            log_dir: job.log_dir.clone(),
            project: job.project.clone(),
            owner: job.owner.clone(),
            ..NewInteraction::default()
        })
    }

    /// Closes a job's row with its outcome; its cost and tokens are the sum of its calls'.
    pub fn finish_job(&self, id: &str, finished_at: &str, end: JobEnd<'_>) -> Result<()> {
        let result = serde_json::to_string(end.result).ok();
        let error_code = end.error.map(|_| match end.status {
            Status::Failed => "TEST_FAILED",
            _ => "JOB_FAILED",
        });
        self.with(
            |c| {
                c.execute(
                    "UPDATE interactions SET finished_at = ?2, status = ?3, description = ?4,
                        result_json = ?5, error_code = ?6, error_message = ?7, duration_ms = ?8,
                        media_path = COALESCE(?9, media_path), media_type = COALESCE(?10, media_type),
                        cost_usd = (SELECT COALESCE(SUM(cost_usd), 0) FROM interactions WHERE parent_id = ?1),
                        input_tokens = (SELECT COALESCE(SUM(input_tokens), 0) FROM interactions WHERE parent_id = ?1),
                        output_tokens = (SELECT COALESCE(SUM(output_tokens), 0) FROM interactions WHERE parent_id = ?1)
                     WHERE id = ?1",
                    params![
                        id,
                        finished_at,
                        end.status.as_str(),
                        end.description,
                        result,
                        error_code,
                        end.error,
                        end.duration_ms as i64,
                        end.media.map(|(path, _)| path),
                        end.media.map(|(_, mime)| mime),
                    ],
                )
            },
            "record the job's end in history",
        )?;
        self.announce(id, end.status, "finished");
        Ok(())
    }

    /// The model calls a job made, oldest first.
    pub fn children(&self, parent_id: &str) -> Result<Vec<Interaction>> {
        self.with(
            |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM interactions WHERE parent_id = ?1
                     ORDER BY created_at, rowid"
                ))?;
                let rows = stmt.query_map([parent_id], super::row_to_interaction)?;
                rows.collect()
            },
            "read the job's calls",
        )
    }

    /// A job's stored answer, in its own shape.
    pub fn job_result(&self, id: &str) -> Result<Option<serde_json::Value>> {
        self.stored_answer(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Outcome;

    #[test]
    fn a_job_sums_the_cost_of_its_calls_and_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("h.sqlite3")).unwrap();
        history
            .start_job(&NewJob {
                id: "job".into(),
                created_at: "2026-11-22T20:00:00.000Z".into(),
                tool: "validate_test",
                door: "mcp",
                source: "/p/tests/login.spec.ts".into(),
                ..NewJob::default()
            })
            .unwrap();
        for (id, cost) in [("a", 0.25), ("b", 0.5)] {
            history
                .start(&NewInteraction {
                    id: id.into(),
                    created_at: format!("2026-11-22T20:00:0{}.000Z", id.len()),
                    tool: "analyze_video",
                    door: "mcp",
                    parent_id: Some("job".into()),
                    ..NewInteraction::default()
                })
                .unwrap();
            let failed = Outcome::Failed {
                status: Status::Error,
                code: "X",
                message: "x",
                duration_ms: 1,
            };
            history
                .finish(id, "2026-11-22T20:00:05.000Z", failed)
                .unwrap();
            history
                .with(
                    |c| {
                        c.execute(
                            "UPDATE interactions SET cost_usd = ?2 WHERE id = ?1",
                            params![id, cost],
                        )
                    },
                    "set",
                )
                .unwrap();
        }
        let result = serde_json::json!({"success": true});
        history
            .finish_job(
                "job",
                "2026-11-22T20:00:06.000Z",
                JobEnd {
                    status: Status::Ok,
                    description: "passed",
                    result: &result,
                    error: None,
                    duration_ms: 6000,
                    media: Some(("/p/video.webm", "video/webm")),
                },
            )
            .unwrap();
        let job = history.get("job").unwrap().unwrap();
        assert_eq!(job.tool, "validate_test");
        assert_eq!(job.status, Status::Ok);
        assert!((job.cost_usd - 0.75).abs() < 1e-9);
        assert_eq!(job.parent_id, None);
        assert_eq!(job.media_path.as_deref(), Some("/p/video.webm"));
        assert_eq!(job.media_type.as_deref(), Some("video/webm"));
        let children = history.children("job").unwrap();
        assert_eq!(children.len(), 2);
        assert!(children
            .iter()
            .all(|c| c.parent_id.as_deref() == Some("job")));
        assert_eq!(history.job_result("job").unwrap(), Some(result));
        // The history's totals count each call's cost once, not again through its job.
        let totals = history.totals().unwrap();
        assert_eq!(totals.interactions, 3);
        assert!((totals.cost_usd - 0.75).abs() < 1e-9, "{}", totals.cost_usd);
    }
}
