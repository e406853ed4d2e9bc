//! The shapes of the history's rows: the door and status of a call, a row as listed
//! (`Interaction`) and as opened (`NewInteraction`), how a row ends (`Outcome`), the totals,
//! and the reading of a row from the columns the queries select.

use serde::{Deserialize, Serialize};

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

    /// The status a row holds; an unknown one reads as an error.
    pub(crate) fn parse(s: &str) -> Status {
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

/// The columns every query that lists rows selects, in the order `row_to_interaction` reads.
pub(crate) const COLUMNS: &str =
    "id, created_at, finished_at, tool, door, source, media_path, media_type,
    media_sha256, size_bytes, provider, model, prompt, expectations_json, status, cached,
    description, error_code, error_message, input_tokens, output_tokens, cost_usd, duration_ms,
    log_dir, project, expected_path, default_sampling_input_tokens, parent_id";

pub(crate) fn row_to_interaction(r: &rusqlite::Row<'_>) -> rusqlite::Result<Interaction> {
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
