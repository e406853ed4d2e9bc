//! The MCP door's tasks: a long tool call (a validation, a plan's run) that a client asked to
//! run in the background and polls. Each row says who made it (a hash of the token, never the
//! token), its status and, once it is over, its result, so that a client that reconnects (a
//! new session with the same token) still gets it. The door keeps the running ones in memory;
//! this table is what outlives a connection, and a restart.

use rusqlite::{params, OptionalExtension, Row};
use vaider_base::error::Result;

use crate::History;

/// One task as the history keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    /// Random and unguessable (the door makes it).
    pub id: String,
    /// Who may see it: a hash of the credential that made it.
    pub principal: String,
    /// The tool the task runs.
    pub tool: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub status_message: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// How long after its creation the task is kept; none: as long as the history.
    pub ttl_ms: Option<u64>,
    /// The tool's result (JSON), once completed.
    pub result_json: Option<String>,
    /// The protocol error (JSON), once failed.
    pub error_json: Option<String>,
}

/// What changes as a task goes on.
#[derive(Debug, Clone, Default)]
pub struct TaskUpdate<'a> {
    pub status: &'a str,
    pub status_message: Option<&'a str>,
    pub result_json: Option<&'a str>,
    pub error_json: Option<&'a str>,
}

const COLUMNS: &str = "id, principal, tool, status, status_message, created_at, updated_at, \
                       ttl_ms, result_json, error_json";

fn row_to_task(r: &Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        id: r.get(0)?,
        principal: r.get(1)?,
        tool: r.get(2)?,
        status: r.get(3)?,
        status_message: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        ttl_ms: r.get::<_, Option<i64>>(7)?.map(|ms| ms.max(0) as u64),
        result_json: r.get(8)?,
        error_json: r.get(9)?,
    })
}

impl History {
    /// Records a new task; it can be read back as soon as this returns.
    pub fn create_task(&self, row: &TaskRow) -> Result<()> {
        self.with(
            |c| {
                c.execute(
                    &format!("INSERT INTO tasks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
                    params![
                        row.id,
                        row.principal,
                        row.tool,
                        row.status,
                        row.status_message,
                        row.created_at,
                        row.updated_at,
                        row.ttl_ms.map(|ms| ms.min(i64::MAX as u64) as i64),
                        row.result_json,
                        row.error_json,
                    ],
                )
                .map(|_| ())
            },
            "record a task",
        )
    }

    /// A task's new status (and its result or error once it is over), at `updated_at`.
    pub fn update_task(&self, id: &str, updated_at: &str, update: TaskUpdate<'_>) -> Result<()> {
        self.with(
            |c| {
                c.execute(
                    "UPDATE tasks SET status = ?2, status_message = ?3, result_json = ?4,
                        error_json = ?5, updated_at = ?6 WHERE id = ?1",
                    params![
                        id,
                        update.status,
                        update.status_message,
                        update.result_json,
                        update.error_json,
                        updated_at
                    ],
                )
                .map(|_| ())
            },
            "update a task",
        )
    }

    /// The task `id` if `principal` made it: another's task is as absent as an unknown one.
    pub fn task(&self, id: &str, principal: &str) -> Result<Option<TaskRow>> {
        self.with(
            |c| {
                c.query_row(
                    &format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1 AND principal = ?2"),
                    params![id, principal],
                    row_to_task,
                )
                .optional()
            },
            "read a task",
        )
    }

    /// `principal`'s tasks, newest first, at most `limit`, skipping the first `offset`.
    pub fn tasks_of(&self, principal: &str, limit: usize, offset: usize) -> Result<Vec<TaskRow>> {
        self.with(
            |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM tasks WHERE principal = ?1
                     ORDER BY created_at DESC, id LIMIT ?2 OFFSET ?3"
                ))?;
                let rows =
                    stmt.query_map(params![principal, limit as i64, offset as i64], row_to_task)?;
                rows.collect()
            },
            "list the tasks",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, principal: &str, created_at: &str) -> TaskRow {
        TaskRow {
            id: id.into(),
            principal: principal.into(),
            tool: "validate_test".into(),
            status: "working".into(),
            status_message: None,
            created_at: created_at.into(),
            updated_at: created_at.into(),
            ttl_ms: Some(60_000),
            result_json: None,
            error_json: None,
        }
    }

    #[test]
    fn a_task_is_kept_with_its_result_and_shown_only_to_its_maker() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("h.db")).unwrap();
        history
            .create_task(&row("t1", "alice", "2026-01-01T00:00:00Z"))
            .unwrap();
        history
            .create_task(&row("t2", "alice", "2026-01-02T00:00:00Z"))
            .unwrap();
        history
            .create_task(&row("t3", "bob", "2026-01-03T00:00:00Z"))
            .unwrap();
        assert!(history.task("t1", "bob").unwrap().is_none());
        let update = TaskUpdate {
            status: "completed",
            result_json: Some(r#"{"content":[]}"#),
            ..Default::default()
        };
        history
            .update_task("t1", "2026-01-01T00:01:00Z", update)
            .unwrap();
        let t1 = history.task("t1", "alice").unwrap().unwrap();
        assert_eq!(t1.status, "completed");
        assert_eq!(t1.result_json.as_deref(), Some(r#"{"content":[]}"#));
        assert_eq!(t1.updated_at, "2026-01-01T00:01:00Z");
        let ids: Vec<String> = history
            .tasks_of("alice", 10, 0)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, ["t2", "t1"]);
        assert_eq!(history.tasks_of("alice", 1, 1).unwrap()[0].id, "t1");
    }
}
