//! The protocol versions clients speak today: 2025-06-18 and 2025-11-25 with sessions, and
//! 2026-07-28 without. Raw JSON-RPC over HTTP, so each version's headers are what is tested.

mod common;

use common::*;
use serde_json::{json, Value};

/// Posts one JSON-RPC message and returns the status, headers and the JSON-RPC answer (from
/// a JSON body or the first `data:` event of an SSE stream).
async fn post(
    server: &TestServer,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = server
        .http()
        .post(format!("{}/mcp", server.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let answer = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (status, headers, answer)
}

#[tokio::test]
async fn sessions_for_2025_06_18_and_2025_11_25() {
    let server = TestServer::start().await;
    for version in ["2025-06-18", "2025-11-25"] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, headers, answer) = post(&server, &[], init).await;
        assert_eq!(status, 200);
        assert_eq!(answer["result"]["protocolVersion"], version);
        let session = headers["mcp-session-id"].to_str().unwrap().to_string();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = post(
            &server,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", version),
            ],
            initialized,
        )
        .await;
        assert_eq!(status, 202);

        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let (status, _, answer) = post(
            &server,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", version),
            ],
            list.clone(),
        )
        .await;
        assert_eq!(status, 200);
        assert!(answer["result"]["tools"].as_array().unwrap().len() >= 3);

        // Missing session: 400; unknown session: 404; a version that does not exist: 400.
        assert_eq!(
            post(&server, &[("mcp-protocol-version", version)], list.clone())
                .await
                .0,
            400
        );
        assert_eq!(
            post(
                &server,
                &[
                    ("mcp-session-id", "nope"),
                    ("mcp-protocol-version", version)
                ],
                list.clone()
            )
            .await
            .0,
            404
        );
        assert_eq!(
            post(
                &server,
                &[
                    ("mcp-session-id", &session),
                    ("mcp-protocol-version", "1999-01-01")
                ],
                list
            )
            .await
            .0,
            400
        );
    }
}

#[tokio::test]
async fn stateless_2026_07_28_discovers_and_calls_tools() {
    let server = TestServer::start().await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}});
    let (status, _, answer) = post(
        &server,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
        discover,
    )
    .await;
    assert_eq!(status, 200);
    let versions = answer["result"]["supportedVersions"].as_array().unwrap();
    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(versions.contains(&json!(version)), "{versions:?}");
    }

    let path = server.media_path("login-flow.webm");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "analyze_video", "arguments": {"video_source": path}, "_meta": meta}});
    let (status, headers, answer) = post(
        &server,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "analyze_video"),
        ],
        call,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        headers.get("mcp-session-id").is_none(),
        "2026-07-28 has no sessions"
    );
    let description = answer["result"]["structuredContent"]["description"]
        .as_str()
        .unwrap();
    assert!(description.contains(&sha256_hex(&path)));
}

#[tokio::test]
async fn deleting_a_session_answers_200_and_ends_it() {
    let server = TestServer::start().await;
    let version = "2025-06-18";
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, _) = post(&server, &[], init).await;
    assert_eq!(status, 200);
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let session_headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", version),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    // Notifications keep their 202: only the end of a session changes.
    assert_eq!(post(&server, &session_headers, initialized).await.0, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(&server, &session_headers, list.clone()).await.0, 200);

    // The official Python SDK logs "Session termination failed" for anything but 200 or 204.
    let mut delete = server
        .http()
        .delete(format!("{}/mcp", server.url))
        .bearer_auth(TOKEN);
    for (name, value) in session_headers {
        delete = delete.header(name, value);
    }
    let status = delete.send().await.unwrap().status().as_u16();
    assert_eq!(status, 200);

    // The session is gone.
    assert_eq!(post(&server, &session_headers, list).await.0, 404);
}
