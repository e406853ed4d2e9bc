//! Chat views (MCP Apps, docs/chat-views.md) over real MCP on loopback: a client that declares
//! the UI extension gets the views linked and the view's data beside the result; a client that
//! does not gets exactly what it got before; resources carry each revision's caching hints;
//! media open only through unexpired, unaltered signed paths; and only the view's click, with
//! its one-time grant, approves a change: the model's own call never does.

mod common;

use base64::Engine as _;
use common::review::{baseline, pending_change};
use common::{call, text_of, TestClient, TestServer, TOKEN};
use rmcp::model::Tool;
use serde_json::{json, Value};
use vaider_visual::review::Changes;

const UI: &str = "io.modelcontextprotocol/ui";

fn views() -> TestClient {
    TestClient {
        views: true,
        ..TestClient::default()
    }
}

/// The tools as JSON, each without its `_meta.ui`, and without the views' own tools.
fn without_views(tools: &[Tool]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .filter(|tool| tool["_meta"]["ui"]["visibility"] != json!(["app"]))
        .map(|mut tool| {
            if let Some(meta) = tool.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.remove("ui");
                if meta.is_empty() {
                    tool.as_object_mut().unwrap().remove("_meta");
                }
            }
            tool
        })
        .collect()
}

#[tokio::test]
async fn a_client_without_the_extension_sees_no_view_and_gets_the_same_results() {
    let server = TestServer::start().await;
    let plain = server.mcp().await;
    let shows = server.mcp_with(views()).await;

    let plain_tools = plain.list_all_tools().await.unwrap();
    let view_tools = shows.list_all_tools().await.unwrap();
    let plain_json = serde_json::to_string(&plain_tools).unwrap();
    assert!(!plain_json.contains("ui://"), "a plain client sees views");
    assert!(
        !plain_json.contains("vaider_view_"),
        "a plain client sees the views' tools"
    );
    let names: Vec<&str> = plain_tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, vaider_server::mcp::tool_names());
    // The client with views sees the same tools, plus the links and the views' own two.
    let by_name = |name: &str| view_tools.iter().find(|t| t.name == name).unwrap().clone();
    let linked = serde_json::to_value(by_name("analyze_video")).unwrap();
    assert_eq!(
        linked["_meta"]["ui"]["resourceUri"],
        "ui://vaider/recording"
    );
    let media = serde_json::to_value(by_name("vaider_view_media")).unwrap();
    assert_eq!(media["_meta"]["ui"]["visibility"], json!(["app"]));
    assert_eq!(view_tools.len(), plain_tools.len() + 2);
    assert_eq!(without_views(&view_tools), without_views(&plain_tools));

    // The same analysis: nothing of the view's reaches the plain client's result.
    let video = server.media_path("login-flow.webm");
    let args = json!({"video_source": video, "expectations": ["the login form is shown"]});
    let plain_result = call(&plain, "analyze_video", args.clone()).await;
    assert_eq!(
        plain_result.is_error,
        Some(false),
        "{}",
        text_of(&plain_result)
    );
    let plain_json = serde_json::to_value(&plain_result).unwrap();
    assert!(plain_json.get("_meta").is_none(), "{plain_json}");
    let shown = call(&shows, "analyze_video", args).await;
    let view = &serde_json::to_value(&shown).unwrap()["_meta"]["vaider/view"];
    let path = view["media"]["video"].as_str().unwrap();
    assert!(
        path.starts_with("/api/interactions/") && path.contains("&sig="),
        "{view}"
    );
    assert_eq!(view["origin"], json!(server.url));
    // Apart from `_meta` and what a cached answer says of itself, the results are one.
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("_meta");
        v["content"] = Value::Null;
        for field in [
            "cached",
            "durationMs",
            "costUsd",
            "usage",
            "summary",
            "interactionId",
            "logDir",
        ] {
            v["structuredContent"]
                .as_object_mut()
                .unwrap()
                .remove(field);
        }
        v
    };
    assert_eq!(
        strip(&plain_json),
        strip(&serde_json::to_value(&shown).unwrap())
    );

    // The views' tools do not exist for the plain client.
    let refused = plain
        .call_tool(
            rmcp::model::CallToolRequestParams::new("vaider_view_media").with_arguments(
                json!({"path": path})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");
}

/// Posts one 2026-07-28 request and returns the JSON-RPC answer.
async fn stateless(server: &TestServer, method: &str, name: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    });
    let mut request = server
        .http()
        .post(format!("{}/mcp", server.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if !name.is_empty() {
        request = request.header("mcp-name", name);
    }
    let text = request
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn resources_are_the_views_with_each_revisions_caching_hints() {
    let server = TestServer::start().await;
    // 2025-11-25 (a session): the views, no hints (that revision defines none).
    let client = server.mcp().await;
    let listed = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"ui://vaider/recording"), "{uris:?}");
    assert!(uris.contains(&"ui://vaider/review"), "{uris:?}");
    let page = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "ui://vaider/recording",
        ))
        .await
        .unwrap();
    let page = serde_json::to_value(&page).unwrap();
    assert!(page.get("ttlMs").is_none(), "{page}");
    let contents = &page["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert!(contents["text"]
        .as_str()
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert_eq!(
        contents["_meta"]["ui"]["csp"]["resourceDomains"],
        json!([server.url])
    );

    // 2026-07-28: hints on the list, the templates and the page.
    let list = stateless(&server, "resources/list", "", json!({})).await;
    assert_eq!(list["result"]["ttlMs"], 300000, "{list}");
    assert_eq!(list["result"]["cacheScope"], "public");
    let templates = stateless(&server, "resources/templates/list", "", json!({})).await;
    assert_eq!(templates["result"]["resourceTemplates"], json!([]));
    assert!(templates["result"]["ttlMs"].is_u64(), "{templates}");
    let uri = "ui://vaider/review";
    let read = stateless(&server, "resources/read", uri, json!({"uri": uri})).await;
    assert!(read["result"]["ttlMs"].is_u64(), "{read}");
    assert_eq!(read["result"]["cacheScope"], "private");
    assert_eq!(read["result"]["contents"][0]["uri"], uri);
    // An address that is no resource: -32602 with the address, not an empty page.
    let missing = "ui://vaider/nothing";
    let read = stateless(&server, "resources/read", missing, json!({"uri": missing})).await;
    assert_eq!(read["error"]["code"], -32602, "{read}");
    assert_eq!(read["error"]["data"]["uri"], missing);
}

/// The video's signed path from a view client's analysis.
async fn video_path(server: &TestServer) -> (common::McpClient, String) {
    let client = server.mcp_with(views()).await;
    let video = server.media_path("login-flow.webm");
    let result = call(&client, "analyze_video", json!({"video_source": video})).await;
    let result = serde_json::to_value(&result).unwrap();
    let path = result["_meta"]["vaider/view"]["media"]["video"]
        .as_str()
        .unwrap()
        .to_string();
    (client, path)
}

#[tokio::test]
async fn media_open_only_through_an_unexpired_unaltered_signed_path() {
    let server = TestServer::start().await;
    let (client, path) = video_path(&server).await;
    let file = std::fs::read(server.media_path("login-flow.webm")).unwrap();

    // Over loopback, as the view's <video> loads it: no token, the signature alone.
    let got = server
        .http()
        .get(format!("{}{path}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.bytes().await.unwrap().as_ref(), file.as_slice());
    // As data, through the view's own tool: the same bytes.
    let data = call(&client, "vaider_view_media", json!({"path": path})).await;
    assert_eq!(data.is_error, Some(false), "{}", text_of(&data));
    let s = data.structured_content.clone().unwrap();
    assert_eq!(s["mimeType"], "video/webm");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(s["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, file);
    // The data's text block, the part a model could read, holds no picture.
    assert!(text_of(&data).len() < 100);

    // Altered (another interaction, a later expiry) or expired: refused both ways.
    let (unsigned, _) = path.split_once("?exp=").unwrap();
    let expired = vaider_server::signed_url::sign_until(unsigned, 1_000);
    let altered = path.replacen("/api/interactions/", "/api/interactions/0", 1);
    let later = path.replacen("exp=", "exp=9", 1);
    for bad in [expired, altered, later] {
        let got = server
            .http()
            .get(format!("{}{bad}", server.url))
            .send()
            .await
            .unwrap();
        assert_eq!(got.status(), 403, "{bad}");
        let refused = call(&client, "vaider_view_media", json!({"path": bad})).await;
        assert_eq!(refused.is_error, Some(true), "{bad}");
        assert!(
            text_of(&refused).contains("signed link"),
            "{}",
            text_of(&refused)
        );
    }
}

#[tokio::test]
async fn only_the_views_click_with_its_grant_approves_never_the_models_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let server = TestServer::start().await;
    let change = pending_change(&root, "home").await;
    let cwd = root.display().to_string();

    // The model's client: no view data, and the views' decide tool does not exist for it.
    let model = server.mcp().await;
    let listed = call(&model, "review_pending", json!({"cwd": cwd})).await;
    assert!(serde_json::to_value(&listed)
        .unwrap()
        .get("_meta")
        .is_none());
    let forged = json!({"id": change.id, "decision": "approve", "grant": "x.y"});
    let refused = model
        .call_tool(
            rmcp::model::CallToolRequestParams::new("vaider_view_decide")
                .with_arguments(forged.as_object().cloned().unwrap()),
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");

    // A host that shows views: without the grant (what the model could put in a call), or
    // with one for another change, nothing changes.
    let host = server.mcp_with(views()).await;
    let listed = call(&host, "review_pending", json!({"cwd": cwd})).await;
    let listed = serde_json::to_value(&listed).unwrap();
    let own = &listed["_meta"]["vaider/view"]["changes"][&change.id];
    let grant = own["grant"].as_str().unwrap().to_string();
    assert!(own["pictures"]["actual"]
        .as_str()
        .unwrap()
        .contains("&sig="));
    // The grant is in the view's `_meta` only, never in what the model reads.
    let read = format!("{}{}", listed["content"], listed["structuredContent"]);
    assert!(!read.contains(&grant));
    for args in [
        json!({"id": change.id, "decision": "approve", "grant": ""}),
        json!({"id": change.id, "decision": "approve", "grant": grant.replacen('.', "x.", 1)}),
        json!({"id": "another", "decision": "approve", "grant": grant}),
    ] {
        let refused = call(&host, "vaider_view_decide", args).await;
        assert_eq!(refused.is_error, Some(true), "{}", text_of(&refused));
        assert!(text_of(&refused).starts_with("Nothing changed"));
    }
    assert!(!baseline(&root, "home").exists());
    assert_eq!(Changes::in_project(&root).pending().len(), 1);

    // The click: approved as the user's, once.
    let approve = json!({"id": change.id, "decision": "approve", "grant": grant});
    let approved = call(&host, "vaider_view_decide", approve.clone()).await;
    assert_eq!(approved.is_error, Some(false), "{}", text_of(&approved));
    assert!(baseline(&root, "home").exists());
    let record = &approved.structured_content.unwrap()["data"];
    assert_eq!(record["proof"]["kind"], "clickedInChatView", "{record}");
    assert_eq!(record["proof"]["client"], "vaider-tests");
    let again = call(&host, "vaider_view_decide", approve).await;
    assert_eq!(again.is_error, Some(true));
    assert!(
        text_of(&again).contains("already used"),
        "{}",
        text_of(&again)
    );
}
