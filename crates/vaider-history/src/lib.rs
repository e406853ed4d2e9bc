//! Vaider's history: what was asked, when, by which door, and how it ended. It holds the
//! SQLite store of every call and job (this file), the jobs that group calls (`job`), the
//! interaction files beside the media (`interaction_log`), each process's claim on the rows it
//! runs (`lease`), and the closing of rows a dead process left running (`recovery`).
//!
//! The SQLite history of every analysis. A row is written before the provider is called
//! (status `running`) and completed after, so a crash leaves a trace, not a hole. The same
//! table answers cache look-ups and the history views of the CLI and the tray app.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

pub mod interaction_log;
pub mod job;
mod jobs;
pub mod lease;
pub mod recovery;
mod search;
pub use jobs::{JobEnd, NewJob};
pub use search::{Facets, Page, Query};

use vaider_base::error::{Result, VaiderError};

/// Which door a request came in by, for the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    Mcp,
    Rest,
    Cli,
    Ui,
}

impl Door {
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Mcp => "mcp",
            Door::Rest => "rest",
            Door::Cli => "cli",
            Door::Ui => "ui",
        }
    }
}

/// The time a row records: UTC, RFC 3339, to the millisecond.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Where an interaction stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Running,
    Ok,
    /// A job that did its work and found the app at fault: a test or a plan's step failed.
    /// A result, not an error (Vaider did its job).
    Failed,
    Error,
    Timeout,
    /// Refused before anything left the machine (bad path, not a video, no key).
    Rejected,
    /// The process running the call stopped before it ended (a crash, a kill, a power cut),
    /// or the call was dropped half-way; closed at the next start or when dropped.
    Interrupted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Rejected => "rejected",
            Status::Interrupted => "interrupted",
        }
    }
    /// The status named by a filter; none for an unknown name.
    pub fn from_name(s: &str) -> Option<Status> {
        match s {
            "running" => Some(Status::Running),
            "ok" => Some(Status::Ok),
            "failed" => Some(Status::Failed),
            "error" => Some(Status::Error),
            "timeout" => Some(Status::Timeout),
            "rejected" => Some(Status::Rejected),
            "interrupted" => Some(Status::Interrupted),
            _ => None,
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "running" => Status::Running,
            "ok" => Status::Ok,
            "failed" => Status::Failed,
            "timeout" => Status::Timeout,
            "rejected" => Status::Rejected,
            "interrupted" => Status::Interrupted,
            _ => Status::Error,
        }
    }
}

/// One row of the history, as listed by `vaider history` and the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interaction {
    pub id: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub tool: String,
    pub door: String,
    pub source: String,
    pub media_path: Option<String>,
    pub media_type: Option<String>,
    pub media_sha256: Option<String>,
    pub size_bytes: Option<u64>,
    pub provider: String,
    pub model: String,
    pub prompt: String,
    pub expectations: Vec<String>,
    pub status: Status,
    pub cached: bool,
    pub description: Option<String>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub duration_ms: Option<u64>,
    pub log_dir: Option<String>,
    /// The project folder the media belongs to (the client's root or working folder, else the
    /// media's folder), for the history's filter.
    pub project: Option<String>,
    /// ui_diff_check: the expected image, which the UI shows beside the actual one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_path: Option<String>,
    /// For a video sampled by Vaider: the input tokens Gemini's default sampling would have
    /// used (compare with `input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_sampling_input_tokens: Option<u64>,
    /// The job (e.g. a test validation) this model call was made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

/// What is known when a row is opened, before the provider is called. Owned, so a call can
/// build it once and hand it to a blocking thread.
#[derive(Debug, Clone, Default)]
pub struct NewInteraction {
    pub id: String,
    pub created_at: String,
    pub tool: &'static str,
    pub door: &'static str,
    pub source: String,
    pub media_path: Option<String>,
    pub media_type: Option<&'static str>,
    pub media_sha256: Option<String>,
    pub size_bytes: Option<u64>,
    pub provider: String,
    pub model: String,
    pub prompt: String,
    pub expectations: Vec<String>,
    pub cache_key: Option<String>,
    pub log_dir: Option<String>,
    pub project: Option<String>,
    pub expected_path: Option<String>,
    /// The lease of the process running the call (see `lease`).
    pub owner: Option<String>,
    /// The job this call is part of, if any (see `jobs`).
    pub parent_id: Option<String>,
}

/// A row started or ended: what the history views listen to, so they update without polling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub id: String,
    pub status: Status,
    /// "started" or "finished".
    pub kind: &'static str,
}

/// What a successful call stores: its whole result as JSON, and the columns the history
/// lists and sums, taken from it by the caller (vaider-core's `AnalysisResult`).
#[derive(Debug, Clone)]
pub struct Answered<'a> {
    pub cached: bool,
    pub description: &'a str,
    pub result_json: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub duration_ms: u64,
    pub model: &'a str,
    /// What Gemini's default sampling of the video would have cost, when it was a video.
    pub default_sampling_input_tokens: Option<u64>,
}

/// How a row ends.
#[derive(Debug, Clone)]
pub enum Outcome<'a> {
    Ok(Answered<'a>),
    Failed {
        status: Status,
        code: &'a str,
        message: &'a str,
        duration_ms: u64,
    },
    /// The call never ended: its process died, or it was dropped half-way.
    Interrupted {
        message: &'a str,
    },
}

/// Totals over the whole history.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub interactions: u64,
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The input tokens had every video gone at Gemini's default sampling: the saving is
    /// this less `input_tokens`.
    pub default_sampling_input_tokens: u64,
}

/// A row left `running`, with what is needed to close it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningCall {
    pub id: String,
    pub owner: Option<String>,
    pub log_dir: Option<String>,
}

/// The history database. Cheap to clone; calls block briefly on SQLite, so async callers run
/// them on a blocking thread ([`History::run`]).
#[derive(Clone)]
pub struct History {
    conn: Arc<Mutex<Connection>>,
    changes: broadcast::Sender<Change>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS interactions (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    tool TEXT NOT NULL,
    door TEXT NOT NULL,
    source TEXT NOT NULL,
    media_path TEXT,
    media_type TEXT,
    media_sha256 TEXT,
    size_bytes INTEGER,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    expectations_json TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    cached INTEGER NOT NULL DEFAULT 0,
    description TEXT,
    result_json TEXT,
    error_code TEXT,
    error_message TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    duration_ms INTEGER,
    log_dir TEXT,
    cache_key TEXT
);
CREATE INDEX IF NOT EXISTS interactions_created ON interactions(created_at DESC);
CREATE INDEX IF NOT EXISTS interactions_cache ON interactions(cache_key, status);
CREATE INDEX IF NOT EXISTS interactions_status ON interactions(status, created_at DESC);
";

/// Added after the first release: applied to older databases when they are opened.
const MIGRATIONS: &[(&str, &str)] = &[
    (
        "project",
        "ALTER TABLE interactions ADD COLUMN project TEXT;",
    ),
    ("owner", "ALTER TABLE interactions ADD COLUMN owner TEXT;"),
    (
        "expected_path",
        "ALTER TABLE interactions ADD COLUMN expected_path TEXT;",
    ),
    (
        "default_sampling_input_tokens",
        "ALTER TABLE interactions ADD COLUMN default_sampling_input_tokens INTEGER;",
    ),
    (
        "parent_id",
        "ALTER TABLE interactions ADD COLUMN parent_id TEXT;",
    ),
];

/// Indexes on migrated columns, created after the migrations.
const LATE_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS interactions_project ON interactions(project, created_at DESC);
CREATE INDEX IF NOT EXISTS interactions_tool ON interactions(tool, created_at DESC);
CREATE INDEX IF NOT EXISTS interactions_parent ON interactions(parent_id);
";

const COLUMNS: &str = "id, created_at, finished_at, tool, door, source, media_path, media_type,
    media_sha256, size_bytes, provider, model, prompt, expectations_json, status, cached,
    description, error_code, error_message, input_tokens, output_tokens, cost_usd, duration_ms,
    log_dir, project, expected_path, default_sampling_input_tokens, parent_id";

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
            .and_then(|_| conn.execute_batch(SCHEMA))
            .and_then(|_| migrate(&conn))
            .and_then(|_| conn.execute_batch(LATE_INDEXES))
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

fn row_to_interaction(r: &rusqlite::Row<'_>) -> rusqlite::Result<Interaction> {
    let expectations: String = r.get(13)?;
    let status: String = r.get(14)?;
    Ok(Interaction {
        id: r.get(0)?,
        created_at: r.get(1)?,
        finished_at: r.get(2)?,
        tool: r.get(3)?,
        door: r.get(4)?,
        source: r.get(5)?,
        media_path: r.get(6)?,
        media_type: r.get(7)?,
        media_sha256: r.get(8)?,
        size_bytes: r.get::<_, Option<i64>>(9)?.map(|s| s as u64),
        provider: r.get(10)?,
        model: r.get(11)?,
        prompt: r.get(12)?,
        expectations: serde_json::from_str(&expectations).unwrap_or_default(),
        status: Status::parse(&status),
        cached: r.get(15)?,
        description: r.get(16)?,
        error_code: r.get(17)?,
        error_message: r.get(18)?,
        input_tokens: r.get::<_, i64>(19)? as u64,
        output_tokens: r.get::<_, i64>(20)? as u64,
        cost_usd: r.get(21)?,
        duration_ms: r.get::<_, Option<i64>>(22)?.map(|d| d as u64),
        log_dir: r.get(23)?,
        project: r.get(24)?,
        expected_path: r.get(25)?,
        default_sampling_input_tokens: r.get::<_, Option<i64>>(26)?.map(|t| t as u64),
        parent_id: r.get(27)?,
    })
}

/// Adds the columns an older database lacks.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('interactions')")?;
    let present: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for (column, statement) in MIGRATIONS {
        if !present.iter().any(|p| p == column) {
            conn.execute_batch(statement)?;
        }
    }
    Ok(())
}

fn db_error(what: &str, e: rusqlite::Error) -> VaiderError {
    VaiderError::internal(what, e)
}
