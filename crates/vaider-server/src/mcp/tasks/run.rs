//! Running one task: the tool call, by the same router as any call, in its own tokio task. When
//! the tool answers `input_required`, the task waits in `input_required` for `tasks/update`
//! and then calls the tool again with the answers, as a client retrying the call would. On a
//! 2025 session, where questions go to the client as requests on the session, the task is
//! `input_required` while one is waiting for its answer ([`while_asking`]), and each status
//! change is also told to the client (`notifications/tasks/status`).

use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomNotification, DetailedTask, InputRequests,
    InputResponses, JsonObject, ServerNotification, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{watch, Notify};
use vaider_core::history::{now_rfc3339, tasks::TaskRow};

use super::{
    legacy, principal, stateless, status_name, waiting_for, Asked, Running, State, Tasks,
    DEFAULT_TTL_MS, MAX_TTL_MS, MIN_TTL_MS,
};
use crate::mcp::VaiderMcp;

tokio::task_local! {
    /// The task the current tool call runs in, for [`while_asking`].
    static CURRENT: (Tasks, String, Arc<Running>);
}

impl Tasks {
    /// Starts `request` as a task and returns it as created: readable by `tasks/get` already.
    pub(in crate::mcp) async fn start(
        &self,
        mcp: &VaiderMcp,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        asked: Asked,
    ) -> Result<DetailedTask, ErrorData> {
        // 122 random bits: a task id cannot be guessed, and it is bound to its maker anyway.
        let id = uuid::Uuid::new_v4().simple().to_string();
        let ttl_ms = asked
            .ttl_ms
            .unwrap_or(DEFAULT_TTL_MS)
            .clamp(MIN_TTL_MS, MAX_TTL_MS);
        let now = now_rfc3339();
        let message = format!("{} is running.", request.name);
        let row = TaskRow {
            id: id.clone(),
            principal: principal(&ctx),
            tool: request.name.to_string(),
            status: "working".into(),
            status_message: Some(message.clone()),
            created_at: now.clone(),
            updated_at: now.clone(),
            ttl_ms: Some(ttl_ms),
            result_json: None,
            error_json: None,
        };
        let task = Arc::new(Running {
            principal: row.principal.clone(),
            tool: row.tool.clone(),
            created_at: now.clone(),
            ttl_ms,
            cancel: tokio_util::sync::CancellationToken::new(),
            state: Mutex::new(State {
                payload: TaskPayload::Working,
                message: Some(message),
                updated_at: now,
                answers: InputResponses::new(),
            }),
            changed: watch::channel(0).0,
            answered: Notify::new(),
        });
        let history = self.history.clone();
        history
            .run(move |h| h.create_task(&row))
            .await
            .map_err(|error| {
                ErrorData::internal_error(format!("could not record the task: {error}"), None)
            })?;
        if let Ok(mut running) = self.running.lock() {
            running.insert(id.clone(), task.clone());
        }
        // Only a 2025 session has a channel to tell the client of changes on.
        let peer = (asked.legacy && !stateless(&ctx)).then(|| ctx.peer.clone());
        let created = task.detailed(&id);
        let run = self
            .clone()
            .drive(mcp.clone(), id.clone(), task.clone(), request, ctx, peer);
        tokio::spawn(CURRENT.scope((self.clone(), id, task), run));
        Ok(created)
    }

    /// Calls the tool until it answers, asking the client for input between calls.
    async fn drive(
        self,
        mcp: VaiderMcp,
        id: String,
        task: Arc<Running>,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        peer: Option<Peer<RoleServer>>,
    ) {
        let mut answers = request.input_responses.clone().unwrap_or_default();
        let mut state = request.request_state.clone();
        let outcome = loop {
            let mut params = request.clone();
            params.input_responses = (!answers.is_empty()).then(|| answers.clone());
            params.request_state = state.clone();
            let mut call_ctx = ctx.clone();
            call_ctx.ct = task.cancel.clone();
            // Kept without its chat view's data, which is made for each reader (`task_get`):
            // its media links last minutes, the result days.
            let called = mcp
                .call_tool_plain(params, call_ctx, task.cancel.clone())
                .await;
            if task.cancel.is_cancelled() {
                // `cancel` settled and recorded the task; the call's future is dropped, and
                // with it the work it started.
                return;
            }
            match called {
                Ok(CallToolResponse::Complete(result)) => {
                    break TaskPayload::Completed {
                        result: object_of(&result),
                    }
                }
                Ok(CallToolResponse::InputRequired(asking)) => {
                    state = asking.request_state;
                    let requests = asking.input_requests.unwrap_or_default();
                    if requests.is_empty() {
                        break failed("the tool asked for input without saying what");
                    }
                    match self
                        .wait_for_answers(&id, &task, requests, peer.as_ref())
                        .await
                    {
                        Some(given) => answers.extend(given),
                        None => return,
                    }
                }
                Ok(_) => break failed("the tool answered with a task of its own"),
                Err(error) => {
                    break TaskPayload::Failed {
                        error: object_of(&error),
                    }
                }
            }
        };
        let message = match outcome.status() {
            TaskStatus::Completed => "Done: the result is ready.",
            _ => "Failed: see the error.",
        };
        if task.settle(outcome, message) {
            self.record(&id, &task).await;
            tell(peer.as_ref(), &task.detailed(&id)).await;
        }
        self.forget(&id);
    }

    /// Puts the task in `input_required` with `requests` until `tasks/update` answers at
    /// least one of them; the answers, or none when the task was cancelled meanwhile.
    async fn wait_for_answers(
        &self,
        id: &str,
        task: &Running,
        requests: InputRequests,
        peer: Option<&Peer<RoleServer>>,
    ) -> Option<InputResponses> {
        let keys: Vec<String> = requests.keys().cloned().collect();
        let payload = TaskPayload::InputRequired {
            input_requests: requests,
        };
        if !task.settle(payload, "Waiting for your answer (tasks/update).") {
            return None;
        }
        self.record(id, task).await;
        tell(peer, &task.detailed(id)).await;
        loop {
            tokio::select! {
                _ = task.answered.notified() => {}
                _ = task.cancel.cancelled() => return None,
            }
            let given = take_answers(task, &keys);
            if !given.is_empty() {
                task.settle(TaskPayload::Working, "Working again with your answer.");
                self.record(id, task).await;
                tell(peer, &task.detailed(id)).await;
                return Some(given);
            }
        }
    }
}

/// The answers given so far to any of `keys`, taken out of the task's state.
fn take_answers(task: &Running, keys: &[String]) -> InputResponses {
    let Ok(mut state) = task.state.lock() else {
        return InputResponses::new();
    };
    let given: InputResponses = std::mem::take(&mut state.answers)
        .into_iter()
        .filter(|(key, _)| keys.contains(key))
        .collect();
    given
}

/// Runs `asking` (a question put to a 2025 client on its session) with the task it belongs
/// to, if any, in `input_required` meanwhile.
pub(in crate::mcp) async fn while_asking<T>(asking: impl Future<Output = T>) -> T {
    let current = CURRENT.try_with(|(tasks, id, task)| (tasks.clone(), id.clone(), task.clone()));
    let Ok((tasks, id, task)) = current else {
        return asking.await;
    };
    let waiting = TaskPayload::InputRequired {
        input_requests: InputRequests::new(),
    };
    if task.settle(waiting, "Waiting for your answer in your client.") {
        tasks.record(&id, &task).await;
    }
    let answer = asking.await;
    if waiting_for(
        &task
            .state
            .lock()
            .map(|s| s.payload.clone())
            .unwrap_or(TaskPayload::Working),
    )
    .is_some()
        && task.settle(TaskPayload::Working, "Working again with your answer.")
    {
        tasks.record(&id, &task).await;
    }
    answer
}

/// Tells a 2025 client of a status change (`notifications/tasks/status`), when it has a
/// session to hear it on. Optional in the spec: a client that missed one polls.
async fn tell(peer: Option<&Peer<RoleServer>>, task: &DetailedTask) {
    let Some(peer) = peer else { return };
    let notification =
        CustomNotification::new("notifications/tasks/status", Some(legacy::task_json(task)));
    let sent = peer
        .send_notification(ServerNotification::CustomNotification(notification))
        .await;
    if let Err(error) = sent {
        tracing::debug!(%error, status = status_name(task.status()), "task status not told");
    }
}

fn failed(message: &str) -> TaskPayload {
    TaskPayload::Failed {
        error: object_of(&ErrorData::internal_error(message.to_string(), None)),
    }
}

/// A result or error as the JSON object a task carries.
fn object_of(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}
