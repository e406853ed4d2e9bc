//! Vaider's history: what was asked, when, by which door, and how it ended. It holds the
//! SQLite store of every call and job (this file, with the rows' shapes in `records` and the
//! table in `schema`), the jobs that group calls (`job`), the interaction files beside the
//! media (`interaction_log`), each process's claim on the rows it runs (`lease`), and the
//! closing of rows a dead process left running (`recovery`), and the MCP door's tasks, whose
//! results outlive the connection that asked for them (`tasks`).
//!
//! The SQLite history of every analysis. A row is written before the provider is called
//! (status `running`) and completed after, so a crash leaves a trace, not a hole. The same
//! table answers cache look-ups and the history views of the CLI and the tray app.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::broadcast;

pub mod interaction_log;
pub mod job;
mod jobs;
pub mod lease;
mod records;
pub mod recovery;
mod schema;
mod search;
pub mod tasks;
pub use jobs::{JobEnd, NewJob};
pub use records::{
    now_rfc3339, Answered, Change, Door, Interaction, NewInteraction, Outcome, RunningCall, Status,
    Totals,
};
use records::{row_to_interaction, COLUMNS};
pub use search::{Facets, Page, Query};

use vaider_base::error::{Result, VaiderError};

/// The history database. Cheap to clone; calls block briefly on SQLite, so async callers run
/// them on a blocking thread ([`History::run`]).
#[derive(Clone)]
pub struct History {
    conn: Arc<Mutex<Connection>>,
    changes: broadcast::Sender<Change>,
}

impl History {
    pub fn open(path: &Path) -> Result<History> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                VaiderError::internal(format!("create the data folder {}", parent.display()), e)
            })?;
        }
        let conn = Connection::open(path).map_err(|e| {
            VaiderError::internal(format!("open the history {}", path.display()), e)
        })?;
        // Its WAL and shared-memory files take the database's permissions.
        vaider_base::atomic_file::make_private(path).map_err(|e| {
            VaiderError::internal(format!("make the history {} private", path.display()), e)
        })?;
        // WAL lets the CLI and the server write to one history at once.
        conn.pragma_update(None, "journal_mode", "WAL")
            .and_then(|_| conn.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|_| conn.busy_timeout(std::time::Duration::from_secs(5)))
            .and_then(|_| schema::create_or_upgrade(&conn))
            .map_err(|e| db_error("prepare the history", e))?;
        Ok(History {
            conn: Arc::new(Mutex::new(conn)),
            changes: broadcast::channel(256).0,
        })
    }

    /// Runs `f` on a blocking thread: SQLite calls block, and the async runtime's threads
    /// must not.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&History) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let history = self.clone();
        tokio::task::spawn_blocking(move || f(&history))
            .await
            .map_err(|e| VaiderError::internal("use the history", e))?
    }

    /// Every row still `running`, with the lease of the process that runs it.
    pub fn running_calls(&self) -> Result<Vec<RunningCall>> {
        self.with(
            |c| {
                let mut stmt = c.prepare(
                    "SELECT id, owner, log_dir FROM interactions WHERE status = 'running'",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok(RunningCall {
                        id: r.get(0)?,
                        owner: r.get(1)?,
                        log_dir: r.get(2)?,
                    })
                })?;
                rows.collect()
            },
            "read the running calls",
        )
    }

    /// Started and finished rows, as they happen in this process.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn announce(&self, id: &str, status: Status, kind: &'static str) {
        // No listener is the normal case for the CLI: nothing to do then.
        let _ = self.changes.send(Change {
            id: id.to_string(),
            status,
            kind,
        });
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>, what: &str) -> Result<T> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| VaiderError::internal(what, "the history lock was poisoned"))?;
        f(&conn).map_err(|e| db_error(what, e))
    }

    pub fn start(&self, row: &NewInteraction) -> Result<()> {
        let expectations = serde_json::to_string(&row.expectations).unwrap_or_else(|_| "[]".into());
        self.with(
            |c| {
                c.execute(
                    "INSERT INTO interactions (id, created_at, tool, door, source, media_path,
                        media_type, media_sha256, size_bytes, provider, model, prompt,
                        expectations_json, status, cache_key, log_dir, project, expected_path, owner,
                        parent_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'running', ?14, ?15, ?16, ?17, ?18, ?19)",
                    params![
                        row.id,
                        row.created_at,
                        row.tool,
                        row.door,
                        row.source,
                        row.media_path,
                        row.media_type,
                        row.media_sha256,
                        row.size_bytes.map(|s| s as i64),
                        row.provider,
                        row.model,
                        row.prompt,
                        expectations,
                        row.cache_key,
                        row.log_dir,
                        row.project,
                        row.expected_path,
                        row.owner,
                        row.parent_id,
                    ],
                )
            },
            "record the request in history",
        )?;
        self.announce(&row.id, Status::Running, "started");
        Ok(())
    }

    pub fn finish(&self, id: &str, finished_at: &str, outcome: Outcome<'_>) -> Result<()> {
        let status = match &outcome {
            Outcome::Ok(_) => Status::Ok,
            Outcome::Failed { status, .. } => *status,
            Outcome::Interrupted { .. } => Status::Interrupted,
        };
        self.with(
            |c| match outcome {
                Outcome::Ok(result) => c.execute(
                    "UPDATE interactions SET finished_at = ?2, status = 'ok', cached = ?3,
                        description = ?4, result_json = ?5, input_tokens = ?6, output_tokens = ?7,
                        cost_usd = ?8, duration_ms = ?9, model = ?10,
                        default_sampling_input_tokens = ?11
                     WHERE id = ?1",
                    params![
                        id,
                        finished_at,
                        result.cached,
                        result.description,
                        result.result_json,
                        result.input_tokens as i64,
                        result.output_tokens as i64,
                        result.cost_usd,
                        result.duration_ms as i64,
                        result.model,
                        result.default_sampling_input_tokens.map(|t| t as i64),
                    ],
                ),
                Outcome::Failed {
                    status,
                    code,
                    message,
                    duration_ms,
                } => c.execute(
                    "UPDATE interactions SET finished_at = ?2, status = ?3, error_code = ?4,
                        error_message = ?5, duration_ms = ?6
                     WHERE id = ?1",
                    params![
                        id,
                        finished_at,
                        status.as_str(),
                        code,
                        message,
                        duration_ms as i64
                    ],
                ),
                // Only a row still running: a call that ended meanwhile keeps its outcome.
                Outcome::Interrupted { message } => c.execute(
                    "UPDATE interactions SET finished_at = ?2, status = 'interrupted',
                        error_code = 'INTERRUPTED', error_message = ?3
                     WHERE id = ?1 AND status = 'running'",
                    params![id, finished_at, message],
                ),
            },
            "record the answer in history",
        )?;
        self.announce(id, status, "finished");
        Ok(())
    }

    /// Records the media's hash and cache key once known (hashing runs beside the upload).
    pub fn set_cache_key(
        &self,
        id: &str,
        cache_key: &str,
        media_sha256: Option<&str>,
    ) -> Result<()> {
        self.with(
            |c| {
                c.execute(
                    "UPDATE interactions SET cache_key = ?2, media_sha256 = COALESCE(?3, media_sha256) WHERE id = ?1",
                    params![id, cache_key, media_sha256],
                )
            },
            "record the cache key",
        )?;
        Ok(())
    }

    /// The stored result of an earlier successful, uncached call with this cache key.
    pub fn cached_result<T: serde::de::DeserializeOwned>(
        &self,
        cache_key: &str,
    ) -> Result<Option<T>> {
        let json: Option<String> = self.with(
            |c| {
                c.query_row(
                    "SELECT result_json FROM interactions
                     WHERE cache_key = ?1 AND status = 'ok' AND cached = 0 AND result_json IS NOT NULL
                     ORDER BY created_at DESC LIMIT 1",
                    [cache_key],
                    |r| r.get(0),
                )
                .optional()
            },
            "look up the cache",
        )?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    pub fn get(&self, id: &str) -> Result<Option<Interaction>> {
        self.with(
            |c| {
                c.query_row(
                    &format!("SELECT {COLUMNS} FROM interactions WHERE id = ?1"),
                    [id],
                    row_to_interaction,
                )
                .optional()
            },
            "read the history",
        )
    }

    /// Newest first.
    pub fn list(&self, limit: usize, offset: usize) -> Result<Vec<Interaction>> {
        self.with(
            |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM interactions ORDER BY created_at DESC, rowid DESC
                     LIMIT ?1 OFFSET ?2"
                ))?;
                let rows =
                    stmt.query_map(params![limit as i64, offset as i64], row_to_interaction)?;
                rows.collect()
            },
            "read the history",
        )
    }

    /// The full stored answer of a successful row.
    pub fn result<T: serde::de::DeserializeOwned>(&self, id: &str) -> Result<Option<T>> {
        self.stored_answer(id)
    }

    /// A row's stored answer read as `T`: an analysis result, or a job's own shape (`jobs`).
    /// None when there is none, or it is not a `T`.
    fn stored_answer<T: serde::de::DeserializeOwned>(&self, id: &str) -> Result<Option<T>> {
        let json: Option<Option<String>> = self.with(
            |c| {
                c.query_row(
                    "SELECT result_json FROM interactions WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .optional()
            },
            "read the history",
        )?;
        Ok(json.flatten().and_then(|j| serde_json::from_str(&j).ok()))
    }

    pub fn totals(&self) -> Result<Totals> {
        self.with(
            |c| {
                c.query_row(
                    // A job's row carries the sum of its calls (see `jobs`): its calls are
                    // counted once, on their own rows.
                    "SELECT COUNT(*),
                        COALESCE(SUM(CASE WHEN p.parent_id IS NULL THEN i.cost_usd END), 0),
                        COALESCE(SUM(CASE WHEN p.parent_id IS NULL THEN i.input_tokens END), 0),
                        COALESCE(SUM(CASE WHEN p.parent_id IS NULL THEN i.output_tokens END), 0),
                        COALESCE(SUM(CASE WHEN p.parent_id IS NULL
                            THEN COALESCE(i.default_sampling_input_tokens, i.input_tokens) END), 0)
                     FROM interactions i
                     LEFT JOIN (SELECT DISTINCT parent_id FROM interactions
                                WHERE parent_id IS NOT NULL) p ON p.parent_id = i.id",
                    [],
                    |r| {
                        Ok(Totals {
                            interactions: r.get::<_, i64>(0)? as u64,
                            cost_usd: r.get(1)?,
                            input_tokens: r.get::<_, i64>(2)? as u64,
                            output_tokens: r.get::<_, i64>(3)? as u64,
                            default_sampling_input_tokens: r.get::<_, i64>(4)? as u64,
                        })
                    },
                )
            },
            "sum the history",
        )
    }
}

fn db_error(what: &str, e: rusqlite::Error) -> VaiderError {
    VaiderError::internal(what, e)
}
