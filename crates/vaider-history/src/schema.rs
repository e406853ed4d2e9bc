//! The history's tables (every call and job; the MCP door's tasks, `tasks.rs`): their schema, the columns added since the first release (applied to an
//! older database when it is opened) and the indexes on them.

use rusqlite::Connection;

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
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ttl_ms INTEGER,
    result_json TEXT,
    error_json TEXT
);
CREATE INDEX IF NOT EXISTS tasks_principal ON tasks(principal, created_at DESC);
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

/// Creates the table, or brings an older one up to date.
pub(crate) fn create_or_upgrade(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    migrate(conn)?;
    conn.execute_batch(LATE_INDEXES)
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
