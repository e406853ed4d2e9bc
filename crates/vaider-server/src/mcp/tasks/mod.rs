//! Long tool calls as MCP tasks: `validate_test`, `run_test_plan` and long `analyze_video`
//! calls may run in the background while the client polls, instead of holding a request open
//! for minutes. The client asks as its revision says (2026-07-28: the
//! `io.modelcontextprotocol/tasks` extension in its capabilities, and Vaider decides; 2025-11-25:
//! a `task` parameter on `tools/call`, translated in [`legacy`]), gets a task id at once, then
//! polls it, answers its questions, cancels it, or fetches its result. A client that asks for
//! no task gets today's answer within the request.
//!
//! A task is the same tool call run by the same router, in its own tokio task: when the tool
//! answers `input_required` (roots, a person's approval), the task goes `input_required` with
//! those requests, and the answers (`tasks/update`) are given to the tool as a retry's
//! `inputResponses`, exactly as a client would retry the call. Cancelling drops the call's
//! future, which kills what it started (the validation's Playwright process group, the plan
//! run's browser). The id is random (122 bits) and bound to who made it (a hash of the bearer
//! token; `stdio` for `vaider stdio`'s one client): another credential is told the task is
//! unknown. Every status change is written to the history (`vaider_history::tasks`), which
//! answers for the task once it is over, from any later session.

mod door;
pub mod legacy;
mod run;

pub(super) use run::while_asking;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, DetailedTask, InputRequests, InputResponses, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;
use vaider_core::history::{now_rfc3339, tasks::TaskRow, tasks::TaskUpdate, History};

use super::workspace::is_stateless;

/// The tools a client may run as tasks: the ones that can take minutes.
pub const TASK_TOOLS: [&str; 3] = ["analyze_video", "run_test_plan", "validate_test"];
/// How long a task and its result are kept when the client names no time (a day).
const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The longest a client may ask a task to be kept (a week), and the shortest (a minute).
const MAX_TTL_MS: u64 = 7 * DEFAULT_TTL_MS;
const MIN_TTL_MS: u64 = 60 * 1000;
/// How often a client is asked to poll.
const POLL_INTERVAL_MS: u64 = 1000;
/// An `analyze_video` call becomes a task on its own (2026-07-28, where Vaider decides) when
/// its video is at least this big or its time limit this long: below, it answers in seconds.
const LONG_VIDEO_BYTES: u64 = 16 * 1024 * 1024;
const LONG_TIMEOUT_SEC: u64 = 120;
/// At most this many tasks in one `tasks/list` page.
pub const LIST_PAGE: usize = 50;

/// Whether `tool` may run as a task.
pub fn may_be_task(tool: &str) -> bool {
    TASK_TOOLS.contains(&tool)
}

/// Who a request comes from, as tasks are bound to it: a hash of its bearer token (never the
/// token itself), or `stdio` for `vaider stdio`'s one client.
pub fn principal_of(headers: Option<&axum::http::HeaderMap>) -> String {
    let bearer = headers
        .and_then(|h| h.get(axum::http::header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or(v.strip_prefix("bearer ")));
    match (headers, bearer) {
        (_, Some(token)) => hex::encode(Sha256::digest(format!("vaider-task:{}", token.trim()))),
        (None, None) => "stdio".into(),
        (Some(_), None) => "anonymous".into(),
    }
}

/// The principal of an MCP request.
pub(super) fn principal(ctx: &RequestContext<RoleServer>) -> String {
    let parts = ctx.extensions.get::<axum::http::request::Parts>();
    principal_of(parts.map(|p| &p.headers))
}

/// How a client asked for a task, if it did.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked {
    /// The 2025-11-25 way (the `task` parameter), answered in that revision's shapes.
    pub legacy: bool,
    pub ttl_ms: Option<u64>,
}

/// The `_meta` key [`legacy`] moves a 2025-11-25 `task` parameter to, since the MCP library
/// keeps no parameter it does not know.
pub const LEGACY_TASK_META: &str = "io.github.vaider/task";

/// Whether this call is to run as a task: a 2025-11-25 client asked with `task` (any task
/// tool), or a 2026-07-28 client declared the extension and Vaider judges the call long.
pub(super) fn asked(
    ctx: &RequestContext<RoleServer>,
    request: &CallToolRequestParams,
) -> Option<Asked> {
    if !may_be_task(&request.name) {
        return None;
    }
    if let Some(hint) = ctx.meta.0 .0.get(LEGACY_TASK_META) {
        return Some(Asked {
            legacy: true,
            ttl_ms: hint.get("ttl").and_then(Value::as_u64),
        });
    }
    let declared = ctx
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks());
    (declared && is_long(request)).then_some(Asked {
        legacy: false,
        ttl_ms: None,
    })
}

/// Validations and plan runs take minutes; a video analysis only when the video is big or the
/// client gave it a long time limit.
fn is_long(request: &CallToolRequestParams) -> bool {
    if request.name != "analyze_video" {
        return true;
    }
    let arguments = request.arguments.as_ref();
    let argument = |name: &str| arguments.and_then(|a| a.get(name));
    let timeout = argument("timeout_sec").and_then(Value::as_u64).unwrap_or(0);
    let size = argument("video_source")
        .and_then(Value::as_str)
        .filter(|source| std::path::Path::new(source).is_absolute())
        .and_then(|source| std::fs::metadata(source).ok())
        .map_or(0, |meta| meta.len());
    timeout >= LONG_TIMEOUT_SEC || size >= LONG_VIDEO_BYTES
}

/// Why a task could not be acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No such task for this principal (or it expired).
    Unknown,
    /// It is over already (2025-11-25 refuses to cancel it; 2026-07-28 acknowledges).
    Over,
}

impl Refusal {
    pub fn message(self, id: &str) -> String {
        match self {
            Refusal::Unknown => format!(
                "no task {id} for this token: it never existed, expired, or another token made it"
            ),
            Refusal::Over => format!("task {id} is over already; its result stays readable"),
        }
    }
}

/// Every task of this server: the running ones in memory, all of them in the history.
#[derive(Clone)]
pub struct Tasks {
    history: History,
    running: Arc<Mutex<HashMap<String, Arc<Running>>>>,
}

/// A task that has not ended yet in this process.
struct Running {
    principal: String,
    /// The tool called: its result's chat view is made when the result is read.
    tool: String,
    created_at: String,
    ttl_ms: u64,
    cancel: CancellationToken,
    state: Mutex<State>,
    /// Bumped on every change, for `tasks/result` (which waits for the end) and notifications.
    changed: watch::Sender<u64>,
    /// Rung when answers arrive.
    answered: Notify,
}

struct State {
    payload: TaskPayload,
    message: Option<String>,
    updated_at: String,
    /// Answers given by `tasks/update` and not yet handed to the tool.
    answers: InputResponses,
}

impl Tasks {
    pub fn new(history: History) -> Tasks {
        Tasks {
            history,
            running: Arc::default(),
        }
    }

    fn running(&self, id: &str, principal: &str) -> Option<Arc<Running>> {
        let running = self.running.lock().ok()?;
        running
            .get(id)
            .filter(|task| task.principal == principal)
            .cloned()
    }

    /// The task as `tasks/get` shows it, if `principal` may see it and it has not expired.
    pub async fn get(&self, id: &str, principal: &str) -> Result<DetailedTask, Refusal> {
        self.read(id, principal).await.map(|(task, _)| task)
    }

    /// [`Tasks::get`], with the tool the task calls (its result's chat view is made from it).
    pub async fn read(&self, id: &str, principal: &str) -> Result<(DetailedTask, String), Refusal> {
        if let Some(task) = self.running(id, principal) {
            return Ok((task.detailed(id), task.tool.clone()));
        }
        let (history, key, who) = (self.history.clone(), id.to_string(), principal.to_string());
        let row = history
            .run(move |h| h.task(&key, &who))
            .await
            .ok()
            .flatten()
            .ok_or(Refusal::Unknown)?;
        if expired(&row) {
            return Err(Refusal::Unknown);
        }
        Ok((detailed_of_row(&row), row.tool))
    }

    /// Waits until the task is over, then shows it (2025-11-25's `tasks/result`).
    pub async fn finished(&self, id: &str, principal: &str) -> Result<DetailedTask, Refusal> {
        if let Some(task) = self.running(id, principal) {
            let mut changes = task.changed.subscribe();
            while !task.status().is_terminal() {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        }
        self.get(id, principal).await
    }

    /// Hands answers to a task waiting for them (`tasks/update`); extra or late ones are
    /// ignored, as the spec says.
    pub async fn answer(
        &self,
        id: &str,
        principal: &str,
        answers: InputResponses,
    ) -> Result<(), Refusal> {
        let Some(task) = self.running(id, principal) else {
            // An answer to a task that is over is ignored; one to no task at all is refused.
            return self.get(id, principal).await.map(|_| ());
        };
        if let Ok(mut state) = task.state.lock() {
            for (key, value) in answers.iter() {
                state.answers.insert(key.clone(), value.clone());
            }
        }
        task.answered.notify_one();
        Ok(())
    }

    /// Cancels a task: it is `cancelled` before this returns, and its work is stopped.
    pub async fn cancel(&self, id: &str, principal: &str) -> Result<DetailedTask, Refusal> {
        let Some(task) = self.running(id, principal) else {
            return match self.get(id, principal).await {
                Ok(_) => Err(Refusal::Over),
                Err(refusal) => Err(refusal),
            };
        };
        if !task.settle(TaskPayload::Cancelled, "Cancelled by the client.") {
            return Err(Refusal::Over);
        }
        task.cancel.cancel();
        self.record(id, &task).await;
        self.forget(id);
        Ok(task.detailed(id))
    }

    /// `principal`'s tasks, newest first, a page at a time (2025-11-25's `tasks/list`).
    pub async fn list(&self, principal: &str, offset: usize) -> Vec<DetailedTask> {
        let (history, who) = (self.history.clone(), principal.to_string());
        let rows = history
            .run(move |h| h.tasks_of(&who, LIST_PAGE, offset))
            .await
            .unwrap_or_default();
        let mut tasks = Vec::new();
        for row in rows.iter().filter(|row| !expired(row)) {
            tasks.push(match self.running(&row.id, principal) {
                Some(task) => task.detailed(&row.id),
                None => detailed_of_row(row),
            });
        }
        tasks
    }

    /// Writes the task's current state to the history.
    async fn record(&self, id: &str, task: &Running) {
        let (status, message, result, error, updated_at) = {
            let Ok(state) = task.state.lock() else { return };
            let (result, error) = match &state.payload {
                TaskPayload::Completed { result } => (Some(Value::Object(result.clone())), None),
                TaskPayload::Failed { error } => (None, Some(Value::Object(error.clone()))),
                _ => (None, None),
            };
            (
                status_name(state.payload.status()),
                state.message.clone(),
                result.map(|r| r.to_string()),
                error.map(|e| e.to_string()),
                state.updated_at.clone(),
            )
        };
        let (history, key) = (self.history.clone(), id.to_string());
        let written = history
            .run(move |h| {
                let update = TaskUpdate {
                    status,
                    status_message: message.as_deref(),
                    result_json: result.as_deref(),
                    error_json: error.as_deref(),
                };
                h.update_task(&key, &updated_at, update)
            })
            .await;
        if let Err(error) = written {
            tracing::warn!(task = id, %error, "could not record a task's status in the history");
        }
    }

    fn forget(&self, id: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(id);
        }
    }
}

impl Running {
    fn status(&self) -> TaskStatus {
        self.state
            .lock()
            .map_or(TaskStatus::Failed, |state| state.payload.status())
    }

    fn detailed(&self, id: &str) -> DetailedTask {
        let (payload, message, updated_at) = match self.state.lock() {
            Ok(state) => (
                state.payload.clone(),
                state.message.clone(),
                state.updated_at.clone(),
            ),
            Err(_) => (TaskPayload::Working, None, now_rfc3339()),
        };
        let mut task = Task::new(id, payload.status(), &self.created_at, updated_at)
            .with_ttl_ms(self.ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        task.status_message = message;
        DetailedTask::new(task, payload)
    }

    /// Moves the task on, unless it is over already; says whether it moved.
    fn settle(&self, payload: TaskPayload, message: &str) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if state.payload.status().is_terminal() {
            return false;
        }
        state.payload = payload;
        state.message = Some(message.to_string());
        state.updated_at = now_rfc3339();
        drop(state);
        self.changed.send_modify(|n| *n += 1);
        true
    }
}

/// Whether a task's time is up (`createdAt` + `ttlMs`).
fn expired(row: &TaskRow) -> bool {
    let Some(ttl) = row.ttl_ms else { return false };
    chrono::DateTime::parse_from_rfc3339(&row.created_at).is_ok_and(|created| {
        let age = chrono::Utc::now().signed_duration_since(created);
        age.num_milliseconds() > ttl.min(i64::MAX as u64) as i64
    })
}

/// A task as the history has it. One still marked running there that this process does not
/// run was left by a Vaider that stopped: it failed.
fn detailed_of_row(row: &TaskRow) -> DetailedTask {
    let object = |json: &Option<String>| {
        json.as_deref()
            .and_then(|j| serde_json::from_str::<JsonObject>(j).ok())
    };
    let stopped = || {
        let error = json!({"code": -32603, "message": "Vaider stopped before this task finished; call the tool again."});
        TaskPayload::Failed {
            error: error.as_object().cloned().unwrap_or_default(),
        }
    };
    let payload = match row.status.as_str() {
        "completed" => object(&row.result_json)
            .map_or_else(stopped, |result| TaskPayload::Completed { result }),
        "failed" => {
            object(&row.error_json).map_or_else(stopped, |error| TaskPayload::Failed { error })
        }
        "cancelled" => TaskPayload::Cancelled,
        _ => stopped(),
    };
    let mut task = Task::new(&row.id, payload.status(), &row.created_at, &row.updated_at)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.ttl_ms = row.ttl_ms;
    task.status_message = row.status_message.clone();
    DetailedTask::new(task, payload)
}

fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "failed",
    }
}

/// The inputs a task waits for, if it waits.
fn waiting_for(payload: &TaskPayload) -> Option<&InputRequests> {
    match payload {
        TaskPayload::InputRequired { input_requests } => Some(input_requests),
        _ => None,
    }
}

/// Whether this request is a 2026-07-28 one (no session to send notifications on).
fn stateless(ctx: &RequestContext<RoleServer>) -> bool {
    is_stateless(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(token: &str) -> axum::http::HeaderMap {
        let mut headers = axum::http::HeaderMap::new();
        let value = format!("Bearer {token}").parse().unwrap();
        headers.insert(axum::http::header::AUTHORIZATION, value);
        headers
    }

    #[test]
    fn a_task_is_bound_to_a_hash_of_its_token_never_the_token() {
        let first = principal_of(Some(&bearer("token-one")));
        let second = principal_of(Some(&bearer("token-two")));
        assert_ne!(first, second);
        assert_eq!(first, principal_of(Some(&bearer("token-one"))));
        assert!(!first.contains("token-one"));
        assert_eq!(principal_of(None), "stdio");
        assert_eq!(
            principal_of(Some(&axum::http::HeaderMap::new())),
            "anonymous"
        );
    }
}
