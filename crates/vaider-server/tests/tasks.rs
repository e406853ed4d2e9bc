//! Long calls as MCP tasks, over real HTTP: rmcp's own client on 2026-07-28 (the
//! `io.modelcontextprotocol/tasks` extension) and the 2025-11-25 wire as that revision defines
//! it (`task` parameter, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`). A task is
//! created, polled to its result, read again from a new connection, cancelled (and its
//! Playwright run is gone), and asks its question through `tasks/update`; a client that asks
//! for no task gets today's answer.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{sha256_hex, TestServer, TOKEN};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{json, Value};

/// A 2026-07-28 client that may declare the tasks extension and the chat views' (MCP Apps),
/// and elicitation.
#[derive(Clone, Default)]
struct Client {
    tasks: bool,
    views: bool,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = match self.tasks {
            true => ClientCapabilities::builder().enable_tasks().build(),
            false => ClientCapabilities::default(),
        };
        capabilities.elicitation = Some(Default::default());
        if self.views {
            let settings = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
            let settings = settings.as_object().cloned().unwrap_or_default();
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert("io.modelcontextprotocol/ui".to_string(), settings);
        }
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "1.0"))
    }
}

async fn connect(server: &TestServer, tasks: bool) -> RunningService<RoleClient, Client> {
    let client = Client {
        tasks,
        ..Client::default()
    };
    connect_as(server, client).await
}

async fn connect_as(server: &TestServer, client: Client) -> RunningService<RoleClient, Client> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url))
            .auth_header(TOKEN),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    client
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("2026-07-28 discovery")
}

fn params(tool: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

/// Polls `tasks/get` until the task leaves `working` (at most a minute).
async fn settled(client: &RunningService<RoleClient, Client>, id: &str) -> TaskPayload {
    for _ in 0..1200 {
        let got = client
            .get_task(GetTaskParams::new(id))
            .await
            .expect("tasks/get");
        assert_eq!(got.task.task.task_id, id);
        if got.task.status() != TaskStatus::Working {
            return got.task.payload;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} still working after a minute");
}

fn structured(payload: &TaskPayload) -> Value {
    match payload {
        TaskPayload::Completed { result } => result["structuredContent"].clone(),
        other => panic!("not completed: {other:?}"),
    }
}

#[tokio::test]
async fn a_long_video_analysis_runs_as_a_task_and_its_result_outlives_the_connection() {
    let server = TestServer::start().await;
    let video = server.media_path("login-flow.webm");
    // A long time limit makes the analysis a long call: Vaider makes it a task.
    let arguments = json!({"video_source": video, "timeout_sec": 300});
    let client = connect(&server, true).await;
    let created = client
        .call_tool_once(params("analyze_video", arguments.clone()))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = created else {
        panic!("not a task: {created:?}");
    };
    let id = created.task.task_id.clone();
    assert_eq!(id.len(), 32, "{id}: 128 random bits in hex");
    assert!(created.task.ttl_ms.is_some_and(|ttl| ttl > 0));
    assert!(created.task.poll_interval_ms.is_some());

    let result = structured(&settled(&client, &id).await);
    let description = result["description"].as_str().unwrap();
    assert!(description.contains(&sha256_hex(&video)), "{result}");
    client.cancel().await.unwrap();

    // Another connection with the same token reads the same result (the history holds it).
    let again = connect(&server, true).await;
    let read = again.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(read.task.status(), TaskStatus::Completed);
    assert_eq!(structured(&read.task.payload), result);
    // A cancel of a task that is over is acknowledged, and changes nothing.
    again.cancel_task(CancelTaskParams::new(&id)).await.unwrap();
    let read = again.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(read.task.status(), TaskStatus::Completed);
    // An id no one made is unknown.
    let unknown = again.get_task(GetTaskParams::new("0".repeat(32))).await;
    assert!(format!("{unknown:?}").contains("-32602"), "{unknown:?}");

    // Without the extension: today's answer, within the request.
    let plain = connect(&server, false).await;
    let answered = plain
        .call_tool_once(params("analyze_video", arguments))
        .await
        .unwrap();
    let CallToolResponse::Complete(answered) = answered else {
        panic!("a client without tasks got {answered:?}");
    };
    assert_eq!(
        answered.structured_content.unwrap()["description"],
        result["description"]
    );
    // And the task methods are not for it (-32021: it did not declare the extension).
    let refused = plain.get_task(GetTaskParams::new(&id)).await;
    assert!(format!("{refused:?}").contains("-32021"), "{refused:?}");
}

/// A task's result is the answer a call gets at once: for a client that shows chat views, with
/// the view's data (docs/chat-views.md), made when it is read.
#[tokio::test]
async fn a_task_result_carries_its_chat_views_data_as_an_answer_at_once_does() {
    let server = TestServer::start().await;
    let video = server.media_path("login-flow.webm");
    let client = Client {
        tasks: true,
        views: true,
    };
    let client = connect_as(&server, client).await;
    let arguments = json!({"video_source": video, "timeout_sec": 300});
    let created = client
        .call_tool_once(params("analyze_video", arguments))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = created else {
        panic!("not a task: {created:?}");
    };
    let TaskPayload::Completed { result } = settled(&client, &created.task.task_id).await else {
        panic!("the task did not complete");
    };
    let view = &result["_meta"]["vaider/view"];
    let path = view["media"]["video"].as_str().unwrap_or_default();
    assert!(
        path.contains("/media"),
        "no video for the view in {result:?}"
    );
    assert_eq!(view["origin"], server.url.as_str(), "{view}");

    // The view's data is made for each reader: a client that shows no views reads the same
    // result without it.
    let plain = connect(&server, true).await;
    let read = plain
        .get_task(GetTaskParams::new(&created.task.task_id))
        .await
        .unwrap();
    let TaskPayload::Completed { result: plain } = read.task.payload else {
        panic!("not completed for the second reader");
    };
    let view = plain.get("_meta").and_then(|meta| meta.get("vaider/view"));
    assert!(view.is_none(), "{plain:?}");
    assert_eq!(plain["structuredContent"], result["structuredContent"]);
}

#[tokio::test]
async fn a_short_call_is_answered_at_once_even_from_a_client_with_tasks() {
    let server = TestServer::start().await;
    let client = connect(&server, true).await;
    let video = server.media_path("login-flow.webm");
    let answered = client
        .call_tool_once(params("analyze_video", json!({"video_source": video})))
        .await
        .unwrap();
    assert!(
        matches!(answered, CallToolResponse::Complete(_)),
        "{answered:?}"
    );
    let status = client
        .call_tool_once(params("vaider_status", json!({})))
        .await
        .unwrap();
    assert!(
        matches!(status, CallToolResponse::Complete(_)),
        "{status:?}"
    );
}

/// A copy of the fixture Playwright project with one spec of our own, that needs no browser.
fn project(spec: &str) -> tempfile::TempDir {
    let source = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/playwright-project"
    ));
    assert!(
        source
            .join("node_modules/@playwright/test/cli.js")
            .is_file(),
        "run `npm ci` in tests/playwright-project (bash scripts/test.sh does it)"
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["package.json", "playwright.config.mjs"] {
        std::fs::copy(source.join(name), dir.path().join(name)).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/task.spec.mjs"), spec).unwrap();
    std::os::unix::fs::symlink(source.join("node_modules"), dir.path().join("node_modules"))
        .unwrap();
    dir
}

/// The processes whose command line names `folder` (the Playwright run in it).
fn processes_in(folder: &Path) -> Vec<String> {
    let folder = folder.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&folder) {
            found.push(cmdline);
        }
    }
    found
}

#[tokio::test]
async fn a_validation_task_completes_and_a_cancelled_one_stops_its_playwright_run() {
    let server = TestServer::start().await;
    let client = connect(&server, true).await;

    let quick = project("import { test, expect } from '@playwright/test';\ntest('adds', () => { expect(1 + 1).toBe(2); });\n");
    let root = std::fs::canonicalize(quick.path()).unwrap();
    let arguments = json!({"test_path": "tests/task.spec.mjs", "cwd": root, "min_screenshots": 0});
    let created = client
        .call_tool_once(params("validate_test", arguments.clone()))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = created else {
        panic!("validate_test was not made a task: {created:?}");
    };
    let result = structured(&settled(&client, &created.task.task_id).await);
    let validation = &result["data"]["validation_result"];
    assert_eq!(validation["test_executed"], true, "{result}");
    assert_eq!(validation["test_passed"], true, "{result}");
    // The same AgentResult as the call gives without a task.
    let plain = connect(&server, false).await;
    let CallToolResponse::Complete(answered) = plain
        .call_tool_once(params("validate_test", arguments))
        .await
        .unwrap()
    else {
        panic!("no plain answer");
    };
    let answered = answered.structured_content.unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&answered), keys(&result));
    assert_eq!(answered["data"]["validation_result"]["test_passed"], true);

    let slow = project("import { test } from '@playwright/test';\ntest('waits', async () => { test.setTimeout(120000); await new Promise((r) => setTimeout(r, 90000)); });\n");
    let root = std::fs::canonicalize(slow.path()).unwrap();
    let arguments = json!({"test_path": "tests/task.spec.mjs", "cwd": root, "timeout_sec": 100});
    let CallToolResponse::Task(created) = client
        .call_tool_once(params("validate_test", arguments))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    let id = created.task.task_id;
    assert!(
        common::eventually(|| !processes_in(&root).is_empty()).await,
        "Playwright never started in {}",
        root.display()
    );
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let got = client.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
    assert!(
        common::eventually(|| processes_in(&root).is_empty()).await,
        "still running after the cancel: {:?}",
        processes_in(&root)
    );
}

#[tokio::test]
async fn a_task_asks_for_the_plan_approval_and_the_answer_comes_by_tasks_update() {
    let server = TestServer::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    let folder = root.join(".qa-agent/plans/cloned");
    std::fs::create_dir_all(&folder).unwrap();
    // A plan Vaider did not write: it runs only once the user approves it.
    let plan = json!({"id": "cloned", "name": "Cloned", "project": {"name": "cloned"},
        "baseUrl": "http://127.0.0.1:9", "allowedHosts": ["*"], "steps": [
            {"id": "open", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]}],
        "createdAt": "2026-11-28T10:00:00.000Z", "updatedAt": "2026-11-28T10:00:00.000Z"});
    std::fs::write(folder.join("cloned.json"), plan.to_string()).unwrap();
    let client = connect(&server, true).await;
    let arguments = json!({"planId": "cloned", "cwd": root});
    let CallToolResponse::Task(created) = client
        .call_tool_once(params("run_test_plan", arguments))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    let id = created.task.task_id;
    let TaskPayload::InputRequired { input_requests } = settled(&client, &id).await else {
        panic!("the task did not ask");
    };
    let question = serde_json::to_value(&input_requests["approve_plan"]).unwrap();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert!(!server.data.path().join("plan-approvals.json").exists());

    let answer = json!({"approve_plan": {"action": "decline"}});
    let answers = serde_json::from_value(answer).unwrap();
    client
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    let result = structured(&settled_terminal(&client, &id).await);
    assert_eq!(result["error"]["code"], "PLAN_NOT_APPROVED", "{result}");
    assert!(!server.data.path().join("plan-approvals.json").exists());
}

/// Polls until the task is over (`settled` stops at `input_required` too).
async fn settled_terminal(client: &RunningService<RoleClient, Client>, id: &str) -> TaskPayload {
    for _ in 0..1200 {
        let got = client.get_task(GetTaskParams::new(id)).await.unwrap();
        if got.task.status().is_terminal() {
            return got.task.payload;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} not over after a minute");
}

/// A 2025-11-25 POST on `session` (none for `initialize`): status, session id, the answer.
async fn post_2025(
    server: &TestServer,
    session: Option<&str>,
    body: Value,
) -> (u16, String, Value) {
    let mut request = server
        .http()
        .post(format!("{}/mcp", server.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let answer = serde_json::from_str::<Value>(&text)
        .ok()
        .unwrap_or_else(|| {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|m| m.get("id").is_some())
                .unwrap_or(Value::Null)
        });
    (status, id, answer)
}

#[tokio::test]
async fn a_2025_11_25_client_creates_polls_lists_and_reads_a_task_as_that_revision_says() {
    let server = TestServer::start().await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "raw-2025", "version": "1"},
        "capabilities": {"tasks": {"list": {}, "cancel": {}}}}});
    let (status, session, answer) = post_2025(&server, None, init).await;
    assert_eq!(status, 200, "{answer}");
    let tasks = &answer["result"]["capabilities"]["tasks"];
    assert!(tasks["requests"]["tools"]["call"].is_object(), "{answer}");
    assert!(
        tasks["list"].is_object() && tasks["cancel"].is_object(),
        "{answer}"
    );
    let session = session.as_str();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post_2025(&server, Some(session), initialized).await;

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, _, answer) = post_2025(&server, Some(session), list).await;
    let support = |name: &str| {
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone())
            .unwrap()
    };
    for tool in ["validate_test", "run_test_plan", "analyze_video"] {
        assert_eq!(support(tool), "optional", "{tool}");
    }
    assert_eq!(support("vaider_status"), Value::Null);

    let video = server.media_path("login-flow.webm");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "analyze_video", "arguments": {"video_source": video}, "task": {"ttl": 60000}}});
    let (_, _, answer) = post_2025(&server, Some(session), call).await;
    let task = &answer["result"]["task"];
    assert_eq!(task["status"], "working", "{answer}");
    assert_eq!(task["ttl"], 60000, "{answer}");
    assert!(task["createdAt"].is_string() && task["lastUpdatedAt"].is_string());
    let id = task["taskId"].as_str().unwrap().to_string();

    // tasks/result waits for the end, and answers what the call would have.
    let result =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": id}});
    let (_, _, answer) = post_2025(&server, Some(session), result).await;
    let result = &answer["result"];
    let description = result["structuredContent"]["description"].as_str().unwrap();
    assert!(description.contains(&sha256_hex(&video)), "{answer}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    assert!(result.get("resultType").is_none(), "{answer}");

    let get = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {"taskId": id}});
    let (_, _, answer) = post_2025(&server, Some(session), get).await;
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(answer["result"]["pollInterval"], 1000, "{answer}");
    let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/list", "params": {}});
    let (_, _, answer) = post_2025(&server, Some(session), list).await;
    assert_eq!(answer["result"]["tasks"][0]["taskId"], id, "{answer}");
    // 2025-11-25 refuses to cancel a task that is over.
    let cancel =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/cancel", "params": {"taskId": id}});
    let (_, _, answer) = post_2025(&server, Some(session), cancel).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // Without the task parameter, today's answer.
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "analyze_video", "arguments": {"video_source": video}}});
    let (_, _, answer) = post_2025(&server, Some(session), call).await;
    assert!(answer["result"].get("task").is_none(), "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["description"],
        description
    );
}
