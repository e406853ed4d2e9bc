//! Tasks as 2025-11-25 defines them (experimental, SEP-1686), which the MCP library (rmcp 3.11)
//! no longer speaks: it implements the 2026-07-28 extension only. So this middleware on `/mcp`
//! translates, for requests of 2025-11-25 sessions:
//!
//! - `initialize`: the result declares `capabilities.tasks` (`list`, `cancel`,
//!   `requests.tools.call`);
//! - `tools/list`: the task tools say `execution.taskSupport: "optional"`;
//! - `tools/call` with a `task` parameter: the parameter goes to `_meta`
//!   ([`LEGACY_TASK_META`]) for the door to see, and the door's answer becomes
//!   `{"task": {...}}`;
//! - `tasks/get`, `tasks/result` (waits for the end), `tasks/list` and `tasks/cancel` are
//!   answered here from [`Tasks`], in that revision's shapes (`ttl`, `pollInterval`).
//!
//! Everything else passes untouched, and so does every request of the other revisions.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::{DetailedTask, TaskPayload, TaskStatus};
use serde_json::{json, Map, Value};

use super::{principal_of, status_name, Refusal, Tasks, LEGACY_TASK_META, LIST_PAGE, TASK_TOOLS};

/// The revision this module speaks for.
const V2025_11_25: &str = "2025-11-25";
/// Where the door puts the task it created, for [`translate`] to make it `{"task": ...}`.
pub const CREATED_TASK_META: &str = "io.github.vaider/created-task";
/// The largest request body looked into (a task call is small; bigger bodies pass untouched).
const MAX_BODY: u64 = 1024 * 1024;
/// The largest answer rewritten (`initialize`, `tools/list`, a created task).
const MAX_ANSWER: usize = 8 * 1024 * 1024;
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A task as 2025-11-25 shows it (`Task`): `ttl` and `pollInterval`, no payload. A tool
/// result with `isError` is `failed` there.
pub fn task_json(task: &DetailedTask) -> Value {
    let status = match &task.payload {
        TaskPayload::Completed { result } if result.get("isError") == Some(&json!(true)) => {
            TaskStatus::Failed
        }
        _ => task.status(),
    };
    let mut out = json!({
        "taskId": task.task.task_id,
        "status": status_name(status),
        "createdAt": task.task.created_at,
        "lastUpdatedAt": task.task.last_updated_at,
        "ttl": task.task.ttl_ms,
    });
    if let Some(poll) = task.task.poll_interval_ms {
        out["pollInterval"] = json!(poll);
    }
    if let Some(message) = &task.task.status_message {
        out["statusMessage"] = json!(message);
    }
    out
}

/// Middleware for `/mcp`: see the module's description.
pub async fn translate(State(tasks): State<Tasks>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !worth_reading(request.headers()) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY as usize).await else {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
    };
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(&bytes) else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let session = parts.headers.contains_key("mcp-session-id");
    match method.as_str() {
        "initialize" => {
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            rewrite(response, &id, declare_tasks).await
        }
        "tools/list" if session => {
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            rewrite(response, &id, mark_task_tools).await
        }
        "tools/call" if session && has_task_param(&message) => {
            move_task_param(&mut message);
            let body = Body::from(Value::Object(message).to_string());
            let response = next.run(Request::from_parts(parts, body)).await;
            rewrite(response, &id, created_task).await
        }
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" if session => {
            let principal = principal_of(Some(&parts.headers));
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let answer = answer(&tasks, &method, &params, &principal).await;
            json_rpc(&id, answer)
        }
        _ => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// Requests of a 2025-11-25 session, and `initialize` (which has no version header yet).
fn worth_reading(headers: &HeaderMap) -> bool {
    let small = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|length| length <= MAX_BODY);
    let version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    let initializing = version.is_none() && !headers.contains_key("mcp-session-id");
    small && (initializing || version == Some(V2025_11_25))
}

fn has_task_param(message: &Map<String, Value>) -> bool {
    let params = message.get("params");
    let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    params
        .and_then(|p| p.get("task"))
        .is_some_and(Value::is_object)
        && tool.is_some_and(|tool| TASK_TOOLS.contains(&tool))
}

fn move_task_param(message: &mut Map<String, Value>) {
    let Some(Value::Object(params)) = message.get_mut("params") else {
        return;
    };
    let task = params.remove("task").unwrap_or(Value::Null);
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.insert(LEGACY_TASK_META.into(), task);
    }
}

/// `initialize`'s result, on 2025-11-25, declares what tasks Vaider takes.
fn declare_tasks(result: &mut Value) {
    if result["protocolVersion"] != V2025_11_25 {
        return;
    }
    if let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        capabilities.insert(
            "tasks".into(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
    }
}

fn mark_task_tools(result: &mut Value) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    for tool in tools {
        if tool["name"]
            .as_str()
            .is_some_and(|n| TASK_TOOLS.contains(&n))
        {
            tool["execution"] = json!({"taskSupport": "optional"});
        }
    }
}

/// The door's answer to a task call, as 2025-11-25's `CreateTaskResult`.
fn created_task(result: &mut Value) {
    let Some(task) = result
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove(CREATED_TASK_META))
    else {
        return;
    };
    *result = json!({
        "task": task,
        "_meta": {
            "io.modelcontextprotocol/model-immediate-response":
                "Started as a task: the result comes when it is done."
        }
    });
}

/// What a `tasks/*` request gets: its result, or a JSON-RPC error.
async fn answer(
    tasks: &Tasks,
    method: &str,
    params: &Value,
    principal: &str,
) -> Result<Value, (i64, String)> {
    let id = params["taskId"].as_str().unwrap_or_default();
    let refused = |refusal: Refusal| (-32602, refusal.message(id));
    match method {
        "tasks/get" => tasks
            .get(id, principal)
            .await
            .map(|t| task_json(&t))
            .map_err(refused),
        "tasks/cancel" => tasks
            .cancel(id, principal)
            .await
            .map(|t| task_json(&t))
            .map_err(refused),
        "tasks/result" => tasks
            .finished(id, principal)
            .await
            .map_err(refused)
            .and_then(result_of),
        _ => list(tasks, params, principal).await,
    }
}

/// What the call would have answered: its result (with the task it belongs to), or its error.
fn result_of(task: DetailedTask) -> Result<Value, (i64, String)> {
    let id = task.task.task_id.clone();
    match task.payload {
        TaskPayload::Completed { mut result } => {
            result.remove("resultType");
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            meta[RELATED_TASK] = json!({"taskId": id});
            Ok(Value::Object(result))
        }
        TaskPayload::Failed { error } => Err((
            error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the task failed")
                .into(),
        )),
        _ => Err((
            -32603,
            format!("task {id} was cancelled before it finished"),
        )),
    }
}

async fn list(tasks: &Tasks, params: &Value, principal: &str) -> Result<Value, (i64, String)> {
    let offset = match params.get("cursor").and_then(Value::as_str) {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            (
                -32602,
                format!("invalid cursor {cursor:?}: pass back the nextCursor given"),
            )
        })?,
    };
    let page = tasks.list(principal, offset).await;
    let mut out = json!({"tasks": page.iter().map(task_json).collect::<Vec<_>>()});
    if page.len() == LIST_PAGE {
        out["nextCursor"] = json!((offset + LIST_PAGE).to_string());
    }
    Ok(out)
}

fn json_rpc(id: &Value, answer: Result<Value, (i64, String)>) -> Response {
    let body = match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// Applies `edit` to the result of the answer to request `id`, in a JSON body or an SSE
/// stream's events. The answers rewritten here come at once, so the body is read whole.
async fn rewrite(response: Response, id: &Value, edit: fn(&mut Value)) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ANSWER).await else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "answer too large to translate",
        );
    };
    let edit_message = |message: &mut Value| {
        if message.get("id") == Some(id) {
            if let Some(result) = message.get_mut("result") {
                edit(result);
            }
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let rewritten = if let Ok(mut message) = serde_json::from_str::<Value>(&text) {
        edit_message(&mut message);
        message.to_string()
    } else {
        text.split_inclusive('\n')
            .map(|line| match line.strip_prefix("data:") {
                Some(data) => match serde_json::from_str::<Value>(data.trim()) {
                    Ok(mut message) => {
                        edit_message(&mut message);
                        let end = if line.ends_with('\n') { "\n" } else { "" };
                        format!("data: {message}{end}")
                    }
                    Err(_) => line.to_string(),
                },
                None => line.to_string(),
            })
            .collect()
    };
    let mut response = Response::from_parts(parts, Body::from(Bytes::from(rewritten)));
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_param_moves_to_meta_and_a_created_task_becomes_the_result() {
        let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "validate_test", "arguments": {}, "task": {"ttl": 60000}}});
        let object = message.as_object_mut().unwrap();
        assert!(has_task_param(object));
        move_task_param(object);
        assert_eq!(message["params"]["_meta"][LEGACY_TASK_META]["ttl"], 60000);
        assert!(message["params"].get("task").is_none());

        let mut result = json!({"content": [], "_meta": {CREATED_TASK_META: {"taskId": "t"}}});
        created_task(&mut result);
        assert_eq!(result["task"]["taskId"], "t");
        assert!(result.get("content").is_none());
    }

    #[test]
    fn only_task_tools_take_the_task_param() {
        let message = json!({"params": {"name": "vaider_status", "task": {}}});
        assert!(!has_task_param(message.as_object().unwrap()));
    }
}
