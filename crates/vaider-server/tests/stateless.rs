//! The 2026-07-28 surface over raw HTTP, as the spec describes each request, beside the 2025
//! sessions on the same endpoint: discovery of what Vaider handles, the headers checked
//! (HeaderMismatch), versions it does not speak, cache hints, relative paths resolved through
//! an `input_required` roots request, progress on the request's own stream, the `?tools=` set,
//! and SSE streams without events a client cannot parse.

mod common;

use common::*;
use serde_json::{json, Value};

const V2026: &str = "2026-07-28";

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// A 2026-07-28 POST: the body, with the standard headers the spec asks for unless `headers`
/// overrides them. Returns the status and the raw body.
async fn post(
    server: &TestServer,
    path: &str,
    body: Value,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let method = body["method"].as_str().unwrap_or_default().to_string();
    let name = body["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut standard = vec![
        ("mcp-protocol-version", V2026.to_string()),
        ("mcp-method", method),
    ];
    if !name.is_empty() {
        standard.push(("mcp-name", name));
    }
    let mut request = server
        .http()
        .post(format!("{}{path}", server.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream");
    for (header, value) in standard {
        if !headers.iter().any(|(h, _)| *h == header) {
            request = request.header(header, value);
        }
    }
    for (header, value) in headers {
        request = request.header(*header, *value);
    }
    let response = request.json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The JSON-RPC messages of a body (a JSON body, or the `data:` of each SSE event).
fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

fn answer(body: &str) -> Value {
    messages(body)
        .into_iter()
        .find(|m| m.get("id").is_some())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn discovery_declares_what_vaider_handles_and_lists_carry_cache_hints() {
    let server = TestServer::start().await;
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": meta(json!({}))}});
    let (status, body) = post(&server, "/mcp", discover, &[]).await;
    assert_eq!(status, 200, "{body}");
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete");
    let capabilities = result["capabilities"].as_object().unwrap();
    assert!(capabilities.contains_key("tools"), "{result}");
    // Resources: the chat views (tests/chat_views.rs); and the views' extension.
    assert!(capabilities.contains_key("resources"), "{result}");
    assert!(
        capabilities["extensions"]
            .as_object()
            .is_some_and(|e| e.contains_key("io.modelcontextprotocol/ui")),
        "{result}"
    );
    for undeclared in ["prompts", "completions"] {
        assert!(!capabilities.contains_key(undeclared), "{result}");
    }
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "vaider"
    );
    // What is not declared is not answered.
    let prompts = json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
        "params": {"_meta": meta(json!({}))}});
    let (_, body) = post(&server, "/mcp", prompts, &[]).await;
    assert_eq!(answer(&body)["error"]["code"], -32601, "{body}");

    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": meta(json!({}))}});
    let (_, body) = post(&server, "/mcp", list, &[]).await;
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["ttlMs"].as_u64().is_some_and(|ttl| ttl > 0),
        "{result}"
    );
    assert_eq!(result["cacheScope"], "public");
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "deterministic order");
    assert_eq!(names.len(), 23);
    // Short descriptions: the detail is in the arguments' docs.
    for tool in result["tools"].as_array().unwrap() {
        let description = tool["description"].as_str().unwrap();
        assert!(description.len() <= 100, "{description}");
    }
}

#[tokio::test]
async fn headers_and_versions_are_checked() {
    let server = TestServer::start().await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "vaider_status", "arguments": {}, "_meta": meta(json!({}))}});
    let (status, body) = post(
        &server,
        "/mcp",
        call.clone(),
        &[("mcp-name", "analyze_video")],
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        answer(&body)["error"]["code"],
        -32020,
        "HeaderMismatch: {body}"
    );

    let mut old = call.clone();
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (_, body) = post(
        &server,
        "/mcp",
        old,
        &[("mcp-protocol-version", "2099-01-01")],
    )
    .await;
    let error = &answer(&body)["error"];
    assert_eq!(error["code"], -32022, "UnsupportedProtocolVersion: {body}");
    assert!(
        error["data"]["supported"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(V2026))),
        "{body}"
    );

    let (status, body) = post(&server, "/mcp", call, &[]).await;
    assert_eq!(status, 200, "{body}");
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete");
    // The sentences of the text block are in the structured result too.
    assert_eq!(
        result["structuredContent"]["summary"],
        result["content"][0]["text"]
    );
}

#[tokio::test]
async fn a_relative_path_asks_for_roots_then_resolves_against_them() {
    let server = TestServer::start().await;
    let video = server.media_path("login-flow.webm");
    let arguments = json!({"video_source": "login-flow.webm", "no_cache": true});
    let with_roots = meta(json!({"roots": {}}));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "analyze_video", "arguments": arguments, "_meta": with_roots}});
    let (status, body) = post(&server, "/mcp", call.clone(), &[]).await;
    assert_eq!(status, 200, "{body}");
    let asked = &answer(&body)["result"];
    assert_eq!(asked["resultType"], "input_required", "{body}");
    assert_eq!(asked["inputRequests"]["roots"]["method"], "roots/list");

    // The retry carries the roots; the call completes, with progress on its own stream.
    let root = format!("file://{}", server.media.path().display());
    let mut retry = call.clone();
    retry["id"] = json!(2);
    retry["params"]["inputResponses"] = json!({"roots": {"roots": [{"uri": root}]}});
    retry["params"]["_meta"]["progressToken"] = json!("p1");
    let (status, body) = post(&server, "/mcp", retry, &[]).await;
    assert_eq!(status, 200, "{body}");
    let all = messages(&body);
    let progress = all
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert!(progress >= 1, "progress on the request's stream: {body}");
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete", "{body}");
    assert_eq!(
        result["structuredContent"]["mediaPath"],
        video.display().to_string()
    );
    assert!(result["structuredContent"]["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&video)));

    // A client without the roots capability is not asked: the error says to pass cwd.
    let mut no_roots = call;
    no_roots["params"]["_meta"] = meta(json!({}));
    let (_, body) = post(&server, "/mcp", no_roots, &[]).await;
    let result = &answer(&body)["result"];
    assert_eq!(result["isError"], true, "{body}");
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("cwd"));
}

/// Whether a message is a request of the server's own (a method that is not a notification).
fn is_server_request(message: &Value) -> bool {
    message["method"]
        .as_str()
        .is_some_and(|method| !method.starts_with("notifications/"))
}

/// What the conformance suite's server-stateless checks probe with the reference server's
/// diagnostic tools (test_streaming_elicitation, test_logging_tool, test_missing_capability),
/// which Vaider does not have, shown with Vaider's own: a 2026-07-28 call's stream carries no
/// request of the server's (roots are asked with `input_required` instead), log messages only
/// when the request sets a log level, and an undeclared capability is never relied on.
#[tokio::test]
async fn a_stateless_call_streams_no_server_request_and_logs_only_when_asked() {
    let server = TestServer::start().await;
    let root = format!("file://{}", server.media.path().display());
    let call = |id: u64, meta: Value, answers: Option<Value>| {
        let mut call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "analyze_video",
                       "arguments": {"video_source": "login-flow.webm", "no_cache": true},
                       "_meta": meta}});
        if let Some(answers) = answers {
            call["params"]["inputResponses"] = answers;
        }
        call
    };
    let roots = json!({"roots": {"roots": [{"uri": root}]}});
    let with_level = |level: &str| {
        let mut meta = meta(json!({"roots": {}, "elicitation": {}}));
        meta["progressToken"] = json!("p");
        if !level.is_empty() {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        meta
    };

    // Asking for roots is an answer on the call's own stream, not a roots/list request.
    let (_, body) = post(&server, "/mcp", call(1, with_level(""), None), &[]).await;
    assert_eq!(answer(&body)["result"]["resultType"], "input_required");
    assert!(!messages(&body).iter().any(is_server_request), "{body}");

    // No log level: progress, but no log message and no request of the server's.
    let (_, body) = post(
        &server,
        "/mcp",
        call(2, with_level(""), Some(roots.clone())),
        &[],
    )
    .await;
    let all = messages(&body);
    assert_eq!(answer(&body)["result"]["resultType"], "complete", "{body}");
    assert!(
        all.iter().any(|m| m["method"] == "notifications/progress"),
        "{body}"
    );
    assert!(
        !all.iter().any(|m| m["method"] == "notifications/message"),
        "{body}"
    );
    assert!(!all.iter().any(is_server_request), "{body}");

    // The same call with a log level hears the pipeline's steps as log messages.
    let (_, body) = post(
        &server,
        "/mcp",
        call(3, with_level("info"), Some(roots.clone())),
        &[],
    )
    .await;
    let logs: Vec<Value> = messages(&body)
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(!logs.is_empty(), "{body}");
    assert!(
        logs.iter().all(|m| m["params"]["logger"] == "vaider"),
        "{body}"
    );
    // A level above info keeps them back.
    let (_, body) = post(
        &server,
        "/mcp",
        call(4, with_level("error"), Some(roots)),
        &[],
    )
    .await;
    assert!(
        !messages(&body)
            .iter()
            .any(|m| m["method"] == "notifications/message"),
        "{body}"
    );
}

#[tokio::test]
async fn the_url_may_ask_for_a_smaller_tool_set() {
    let server = TestServer::start().await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": meta(json!({}))}});
    let (_, body) = post(&server, "/mcp?tools=core", list.clone(), &[]).await;
    let names: Vec<String> = answer(&body)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "analyze_image",
            "analyze_video",
            "ui_diff_check",
            "vaider_status",
            "validate_test",
            "visual_capture",
            "visual_compare"
        ]
    );
    let outside = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "visual_cleanup", "arguments": {}, "_meta": meta(json!({}))}});
    let (_, body) = post(&server, "/mcp?tools=core", outside, &[]).await;
    assert!(
        answer(&body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not offered"),
        "{body}"
    );
    let (status, body) = post(&server, "/mcp?tools=core,nope", list, &[]).await;
    assert_eq!(status, 400);
    assert!(body.contains("nope") && body.contains("vision"), "{body}");
}

#[tokio::test]
async fn no_sse_event_without_data_and_retry_hints_only_where_streams_resume() {
    let server = TestServer::start().await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let response = server
        .http()
        .post(format!("{}/mcp", server.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let mut bodies = vec![response.text().await.unwrap()];
    for (id, method) in [(2, "tools/list"), (3, "tools/call")] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"name": "vaider_status", "arguments": {}}});
        let text = server
            .http()
            .post(format!("{}/mcp", server.url))
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        bodies.push(text);
    }
    let stateless = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
        "params": {"_meta": meta(json!({}))}});
    let (_, body) = post(&server, "/mcp", stateless, &[]).await;
    bodies.push(body);
    for body in &bodies {
        for event in body.split("\n\n").filter(|e| !e.trim().is_empty()) {
            let lines: Vec<&str> = event.lines().collect();
            if lines.iter().all(|l| l.starts_with(':')) {
                continue;
            }
            let data: String = lines
                .iter()
                .filter_map(|l| l.strip_prefix("data:"))
                .collect();
            assert!(
                serde_json::from_str::<Value>(data.trim()).is_ok(),
                "event without JSON data: {event:?}"
            );
            if lines.iter().any(|l| l.starts_with("retry:")) {
                assert!(
                    lines.iter().any(|l| l.starts_with("id:")),
                    "a retry hint without an id: {event:?}"
                );
            }
        }
    }
    // The stateless stream has nothing to resume: no hint at all.
    assert!(!bodies[3].contains("retry:"), "{}", bodies[3]);
}

/// On 2026-07-28 a plan nobody approved is asked about with an `input_required` elicitation;
/// the retry carrying the user's yes runs it (and keeps the approval), a no is refused, and a
/// client without elicitation is refused with the command that approves it.
#[tokio::test(flavor = "multi_thread")]
async fn an_unapproved_plan_asks_the_user_through_an_input_required_elicitation() {
    let server = TestServer::start().await;
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    let folder = root.join(".qa-agent/plans/cloned");
    std::fs::create_dir_all(&folder).unwrap();
    // Its app is down: once approved, the run starts and ends `error` saying so.
    let plan = json!({"id": "cloned", "name": "Cloned", "project": {"name": "cloned"},
        "baseUrl": "http://127.0.0.1:9", "allowedHosts": ["*"], "steps": [
            {"id": "open", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]}],
        "createdAt": "2026-11-28T10:00:00.000Z", "updatedAt": "2026-11-28T10:00:00.000Z"});
    std::fs::write(folder.join("cloned.json"), plan.to_string()).unwrap();
    let arguments = json!({"planId": "cloned", "cwd": root.display().to_string()});
    let call = |id: u64, capabilities: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_test_plan", "arguments": arguments, "_meta": meta(capabilities)}})
    };

    let (_, body) = post(&server, "/mcp", call(1, json!({})), &[]).await;
    let refused = &answer(&body)["result"];
    assert_eq!(refused["isError"], true, "{body}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"],
        "PLAN_NOT_APPROVED"
    );

    let asking = call(2, json!({"elicitation": {}}));
    let (_, body) = post(&server, "/mcp", asking.clone(), &[]).await;
    let asked = &answer(&body)["result"];
    assert_eq!(asked["resultType"], "input_required", "{body}");
    let question = &asked["inputRequests"]["approve_plan"];
    assert_eq!(question["method"], "elicitation/create", "{body}");
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("may also go to: *"), "{message}");

    let mut declined = asking.clone();
    declined["params"]["inputResponses"] = json!({"approve_plan": {"action": "decline"}});
    let (_, body) = post(&server, "/mcp", declined, &[]).await;
    let result = &answer(&body)["result"];
    assert_eq!(
        result["structuredContent"]["error"]["code"], "PLAN_NOT_APPROVED",
        "{body}"
    );

    let mut approved = asking;
    approved["params"]["inputResponses"] =
        json!({"approve_plan": {"action": "accept", "content": {"approve": true}}});
    let (_, body) = post(&server, "/mcp", approved, &[]).await;
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete", "{body}");
    assert_eq!(result["structuredContent"]["status"], "error", "{body}");
    // Kept: the next call runs without asking.
    let (_, body) = post(&server, "/mcp", call(3, json!({})), &[]).await;
    let again = &answer(&body)["result"];
    assert_eq!(again["structuredContent"]["status"], "error", "{body}");
    let approvals =
        std::fs::read_to_string(server.data.path().join("plan-approvals.json")).unwrap();
    assert!(approvals.contains("\"client\": \"raw\""), "{approvals}");
}

#[tokio::test]
async fn a_proposed_review_decision_asks_the_user_through_an_input_required_elicitation() {
    use vaider_visual::review::{self, BaselineKey, Baselines, CheckRequest};
    let server = TestServer::start().await;
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(20, 10, image::Rgb([10, 200, 10]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let key = BaselineKey::new("home", "20x10").unwrap();
    let request = CheckRequest {
        project: &root,
        key: key.clone(),
        png: png.get_ref(),
        ignored: Vec::new(),
        proposed_ignore: Vec::new(),
        expected_changes: Vec::new(),
        ask_model: false,
        door: vaider_core::Door::Cli,
        model: None,
    };
    let change = review::check_capture(None, request)
        .await
        .unwrap()
        .change
        .unwrap();
    let arguments = json!({"id": change.id, "cwd": root.display().to_string()});
    let asking = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "review_approve", "arguments": arguments,
            "_meta": meta(json!({"elicitation": {}}))}});

    let (_, body) = post(&server, "/mcp", asking.clone(), &[]).await;
    let asked = &answer(&body)["result"];
    assert_eq!(asked["resultType"], "input_required", "{body}");
    let question = &asked["inputRequests"]["review_decision"];
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&change.id), "{message}");
    let baseline = Baselines::in_project(&root).png_path(&key);
    assert!(!baseline.exists());

    let mut approved = asking;
    approved["params"]["inputResponses"] =
        json!({"review_decision": {"action": "accept", "content": {"approve": true}}});
    let (_, body) = post(&server, "/mcp", approved, &[]).await;
    let result = &answer(&body)["result"];
    assert_eq!(result["resultType"], "complete", "{body}");
    assert_ne!(result["isError"], true, "{body}");
    assert!(baseline.exists());
    let proof = serde_json::to_value(&review::decisions(&root)[0].proof).unwrap();
    assert_eq!(
        proof,
        json!({"kind": "askedThroughClient", "client": "raw"})
    );
}
