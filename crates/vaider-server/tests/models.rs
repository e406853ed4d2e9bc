//! Current models through the HTTP doors, against a fake Gemini serving only today's models:
//! a fresh configuration's first call succeeds; a shut-down model is 404 MODEL_NOT_FOUND on
//! REST (and MODEL_NOT_FOUND over MCP) naming the current choices; `GET /api/models` lists
//! the provider's models for the settings page.

mod common;

use common::*;
use serde_json::{json, Value};

async fn get(server: &TestServer, path: &str) -> (u16, Value) {
    let response = server
        .http()
        .get(format!("{}{path}", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_fresh_configuration_first_rest_call_succeeds_on_todays_models() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["model"], vaider_core::config::DEFAULT_GEMINI_MODEL);
    assert_eq!(body["model"], "gemini-3.5-flash-lite");
}

#[tokio::test]
async fn a_shut_down_model_is_404_model_not_found_with_the_current_choices() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post_analyse(json!({
            "videoPath": server.media_path("login-flow.webm"),
            "model": "gemini-2.5-flash"
        }))
        .await;
    assert_eq!(status, 404, "{body}");
    let error = &body["error"];
    assert_eq!(error["code"], "MODEL_NOT_FOUND");
    let choices: Vec<&str> = error["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(choices, fake_gemini::served_models());
    let message = error["message"].as_str().unwrap();
    for needle in [
        "gemini-2.5-flash",
        "2026-12-01",
        "gemini-3.5-flash-lite",
        "gemini-3.8-flash",
        "VAIDER_MODEL",
        "vaider models",
    ] {
        assert!(message.contains(needle), "{needle} missing: {message}");
    }
    // Google's own answer is kept for the caller.
    assert_eq!(body["upstreamResponse"]["status"], 404);
    // The list was asked for on the error path, once.
    let lists = server
        .fake
        .requests()
        .iter()
        .filter(|r| r.path == "/v1beta/models")
        .count();
    assert_eq!(lists, 1);

    // Over MCP the same code leads the text.
    let client = server.mcp().await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": server.media_path("login-flow.webm"), "model": "gemini-2.5-pro"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.starts_with("MODEL_NOT_FOUND"), "{text}");
    assert!(
        text.contains("gemini-2.5-pro") && text.contains("gemini-3.8-flash"),
        "{text}"
    );
}

#[tokio::test]
async fn the_settings_page_gets_the_providers_models_marked() {
    let server = TestServer::start().await;
    server.fake.set_models_page_cap(2);
    let (status, body) = get(&server, "/api/models").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["provider"], "gemini");
    assert_eq!(body["defaultModel"], "gemini-3.5-flash-lite");
    let ids: Vec<&str> = body["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, fake_gemini::served_models());
    assert!(body.get("listError").is_none(), "{body}");

    let (status, body) = get(&server, "/api/models?provider=nonesuch").await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nonesuch"));

    // Without the token: refused like every other route.
    let response = server
        .http()
        .get(format!("{}/api/models", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
}
