//! The UI's JSON API (docs/ui-api.md) over real HTTP against a real server and the fake
//! Gemini: the token and the UI's session, history search and pages, the detail with its interaction
//! files, media with Range requests, live events, settings saved and applied, Run again,
//! pause, keys and the desktop-only settings.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use vaider_server::embedded::DesktopIntegration;

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

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .http()
        .request(method, format!("{}{path}", server.url))
        .bearer_auth(TOKEN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Runs one video analysis through REST and returns its interaction id.
async fn analyse_video(
    server: &TestServer,
    cwd: &std::path::Path,
    expectations: &[&str],
) -> String {
    let (status, body) = server
        .post_analyse(json!({
            "videoPath": server.media_path("login-flow.webm"),
            "expectations": expectations,
            "cwd": cwd,
            "noCache": true,
        }))
        .await;
    assert_eq!(status, 200, "{body}");
    body["interactionId"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_pages_are_open_but_the_api_needs_the_token_or_a_ui_session() {
    let server = TestServer::start().await;
    let client = server.http();
    let page = client.get(format!("{}/", server.url)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(page.text().await.unwrap().contains("<"));
    for asset in ["app.js", "style.css", "icon.svg"] {
        let r = client
            .get(format!("{}/ui/{asset}", server.url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{asset}");
    }
    assert_eq!(
        client
            .get(format!("{}/ui/secrets.txt", server.url))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    let api = format!("{}/api/history", server.url);
    assert_eq!(client.get(&api).send().await.unwrap().status(), 401);
    let wrong_session = client
        .get(&api)
        .header("x-vaider-session", "guess")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_session.status(), 401);
    // A signed-in page: a login code traded for a session, sent in its header.
    let session = sign_in(&server).await;
    let with_session = |path: &str| {
        client
            .get(format!("{}{path}", server.url))
            .header("x-vaider-session", &session)
            .send()
    };
    assert_eq!(with_session("/api/history").await.unwrap().status(), 200);
    assert_eq!(with_session("/api/events").await.unwrap().status(), 200);
    assert_eq!(
        with_session("/api/interactions/none/media")
            .await
            .unwrap()
            .status(),
        404
    );

    // Another web origin is refused even with the token; the app's own origins get CORS.
    let foreign = client
        .get(&api)
        .bearer_auth(TOKEN)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let preflight = |origin: &'static str| {
        client
            .request(reqwest::Method::OPTIONS, &api)
            .header("origin", origin)
            .header("access-control-request-method", "GET")
            .header("access-control-request-headers", "authorization")
            .send()
    };
    let app = preflight("tauri://localhost").await.unwrap();
    assert_eq!(
        app.headers()["access-control-allow-origin"],
        "tauri://localhost"
    );
    let evil = preflight("http://evil.example").await.unwrap();
    assert!(evil.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn history_is_searched_filtered_and_paged_newest_first() {
    let server = TestServer::start().await;
    let project = server.media.path().to_path_buf();
    let first = analyse_video(&server, &project, &[]).await;
    let second = analyse_video(&server, &project, &[]).await;
    // A refused request is in the history too.
    let (status, _) = server
        .post_analyse(json!({"videoPath": "/nowhere/missing.webm"}))
        .await;
    assert_eq!(status, 400);

    let (_, all) = get(&server, "/api/history").await;
    assert_eq!(all["total"], 3, "{all}");
    let items = all["items"].as_array().unwrap();
    assert_eq!(items[1]["id"], second);
    assert_eq!(items[2]["id"], first);
    assert_eq!(items[1]["fileName"], "login-flow.webm");
    assert_eq!(items[1]["project"], project.display().to_string());
    assert_eq!(items[1]["status"], "ok");
    assert_eq!(items[0]["status"], "rejected");

    let (_, ok) = get(&server, "/api/history?status=ok").await;
    assert_eq!(ok["total"], 2);
    let (_, searched) = get(&server, "/api/history?q=MISSING.webm").await;
    assert_eq!(
        searched["total"], 1,
        "search is case-insensitive: {searched}"
    );
    let (_, by_text) = get(&server, "/api/history?q=login%20page%20is%20shown").await;
    assert_eq!(
        by_text["total"], 2,
        "the description is searched: {by_text}"
    );
    let (_, literal) = get(&server, "/api/history?q=%25").await;
    assert_eq!(literal["total"], 0, "% is taken literally: {literal}");
    for wrong in [
        "status=fine",
        "limit=abc",
        "limit=0",
        "limit=501",
        "before=garbage",
    ] {
        let (status, bad) = get(&server, &format!("/api/history?{wrong}")).await;
        assert_eq!(status, 400, "{wrong}: {bad}");
        assert_eq!(bad["error"]["code"], "INVALID_REQUEST", "{wrong}: {bad}");
    }

    // Pages: each cursor continues where the last page ended, without repeats.
    let mut seen = Vec::new();
    let mut path = "/api/history?limit=1".to_string();
    loop {
        let (_, page) = get(&server, &path).await;
        assert_eq!(page["total"], 3);
        seen.push(page["items"][0]["id"].as_str().unwrap().to_string());
        match page["next"].as_str() {
            Some(next) => path = format!("/api/history?limit=1&before={next}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[1], second);
    assert_eq!(seen[2], first);

    let (_, facets) = get(&server, "/api/history/facets").await;
    assert_eq!(facets["tools"], json!(["analyze_video"]));
    assert!(facets["projects"]
        .as_array()
        .unwrap()
        .contains(&json!(project.display().to_string())));
    let (_, in_project) = get(
        &server,
        &format!(
            "/api/history?project={}",
            urlencode(&project.display().to_string())
        ),
    )
    .await;
    assert_eq!(in_project["total"], 2);
}

/// Whether a program Vaider starts now would get the variable `name`.
fn passes_to_children(name: &str) -> bool {
    vaider_core::child_env::environment()
        .iter()
        .any(|(n, _)| n.to_str() == Some(name))
}

/// One provider's entry in the settings.
fn provider(settings: &Value, name: &str) -> Value {
    settings["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider {name} in {settings}"))
        .clone()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn the_detail_has_the_answer_verdicts_and_interaction_files_but_no_key() {
    let server = TestServer::start().await;
    let id = analyse_video(&server, server.media.path(), &["The dashboard appears"]).await;
    let (status, detail) = get(&server, &format!("/api/interactions/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        detail["verdicts"][0]["expectation"],
        "The dashboard appears"
    );
    assert!(detail["description"].as_str().unwrap().len() > 10);
    assert_eq!(detail["requestJson"]["tool"], "analyze_video");
    assert_eq!(detail["requestJson"]["interactionId"], id);
    assert!(detail["responseJson"].is_object(), "{detail}");
    let media_url = detail["mediaUrl"].as_str().unwrap();
    assert!(
        media_url.starts_with(&format!("/api/interactions/{id}/media?exp=")),
        "{media_url}"
    );
    assert!(detail["usage"]["inputTokens"].as_u64().unwrap() > 0);
    assert!(std::path::Path::new(detail["logDir"].as_str().unwrap()).is_dir());
    assert!(!detail
        .to_string()
        .contains(fake_gemini::FakeGemini::API_KEY));
    let (status, _) = get(&server, "/api/interactions/nope").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn media_is_served_with_ranges_and_only_for_recorded_interactions() {
    let server = TestServer::start().await;
    let id = analyse_video(&server, server.media.path(), &[]).await;
    let url = format!("{}/api/interactions/{id}/media", server.url);
    let video = server.media_path("login-flow.webm");
    let size = std::fs::metadata(&video).unwrap().len();

    let whole = server
        .http()
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(whole.status(), 200);
    assert_eq!(whole.headers()["content-type"], "video/webm");
    assert_eq!(whole.headers()["accept-ranges"], "bytes");
    assert_eq!(whole.bytes().await.unwrap(), std::fs::read(&video).unwrap());

    let part = server
        .http()
        .get(&url)
        .bearer_auth(TOKEN)
        .header("range", "bytes=100-199")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(
        part.headers()["content-range"],
        format!("bytes 100-199/{size}").as_str()
    );
    assert_eq!(
        part.bytes().await.unwrap().as_ref(),
        &std::fs::read(&video).unwrap()[100..200]
    );

    assert_eq!(server.http().get(&url).send().await.unwrap().status(), 401);
    let unknown = server
        .http()
        .get(format!(
            "{}/api/interactions/..%2F..%2Fetc%2Fpasswd/media",
            server.url
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);

    std::fs::remove_file(&video).unwrap();
    let gone = server
        .http()
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let body: Value = gone.json().await.unwrap();
    assert_eq!(body["error"]["code"], "MEDIA_GONE");
}

#[tokio::test]
async fn events_announce_each_row_as_it_starts_and_ends() {
    let server = TestServer::start().await;
    let response = server
        .http()
        .get(format!("{}/api/events", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut stream = response.bytes_stream();
    let id = analyse_video(&server, server.media.path(), &[]).await;
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !(text.contains("\"kind\":\"finished\"") && text.contains("\"kind\":\"started\"")) {
        let chunk = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("events within 10 s")
            .expect("stream open")
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("event: interaction"), "{text}");
    assert!(text.contains(&format!("\"id\":\"{id}\"")), "{text}");
    assert!(text.contains("\"status\":\"ok\""), "{text}");
}

#[tokio::test]
async fn settings_are_checked_saved_to_the_config_file_and_applied_at_once() {
    let server = TestServer::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    // This test owns its process (nextest), so the environment is its own.
    std::env::set_var("VAIDER_CONFIG_DIR", config_dir.path());
    std::env::set_var("VAIDER_GEMINI_BASE_URL", server.fake.base_url());
    std::env::set_var("VAIDER_DATA_DIR", server.data.path());

    let (status, settings) = get(&server, "/api/settings").await;
    assert_eq!(status, 200);
    assert_eq!(settings["values"]["cache"], true);
    assert!(settings["envOverrides"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["variable"] == "VAIDER_DATA_DIR"));
    let gemini = provider(&settings, "gemini");
    assert_eq!(gemini["keySet"], true);
    assert!(!settings
        .to_string()
        .contains(fake_gemini::FakeGemini::API_KEY));

    let (status, refused) = send(
        &server,
        reqwest::Method::PUT,
        "/api/settings",
        Some(json!({"timeoutSec": 0})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("timeoutSec"));
    assert!(
        !config_dir.path().join("config.toml").exists(),
        "nothing saved"
    );

    // The per-request model call cap and the child environment's pass-through list are
    // checked like the rest: a bad value names its field and why, and nothing is saved.
    for (body, field, why) in [
        (json!({"maxModelCalls": 0}), "maxModelCalls", "1"),
        (json!({"maxModelCalls": 5000}), "maxModelCalls", "1000"),
        (
            json!({"childEnvPass": ["GEMINI_API_KEY"]}),
            "childEnvPass",
            "secret",
        ),
        (
            json!({"childEnvPass": ["VAIDER_TOKEN"]}),
            "childEnvPass",
            "secret",
        ),
        (
            json!({"childEnvPass": ["MY VAR"]}),
            "childEnvPass",
            "not an environment variable name",
        ),
        (
            json!({"childEnvPass": "MY_VAR"}),
            "childEnvPass",
            "not valid",
        ),
    ] {
        let (status, refused) = send(
            &server,
            reqwest::Method::PUT,
            "/api/settings",
            Some(body.clone()),
        )
        .await;
        assert_eq!(status, 400, "{body}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(field) || field == "childEnvPass" && why == "not valid",
            "{body}: {message}"
        );
        assert!(message.contains(why), "{body}: {message}");
        assert!(
            !config_dir.path().join("config.toml").exists(),
            "nothing saved"
        );
    }

    std::env::set_var("VAIDER_TEST_APP_MODE", "staging");
    assert!(!passes_to_children("VAIDER_TEST_APP_MODE"));
    let (status, saved) = send(
        &server,
        reqwest::Method::PUT,
        "/api/settings",
        Some(json!({"cache": false, "model": "gemini-3.5-flash", "port": 4567, "maxAttempts": 2,
                    "maxModelCalls": 7, "childEnvPass": [" VAIDER_TEST_APP_MODE", "VAIDER_TEST_APP_MODE", ""]})),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["restartNeeded"], json!(["port"]));
    assert_eq!(saved["values"]["model"], "gemini-3.5-flash");
    let file = std::fs::read_to_string(config_dir.path().join("config.toml")).unwrap();
    let on_disk: vaider_core::Config = toml::from_str(&file).unwrap();
    assert!(!on_disk.cache);
    assert_eq!(on_disk.model, "gemini-3.5-flash");
    assert_eq!(on_disk.port, 4567);
    assert_eq!(on_disk.max_attempts, 2);
    assert_eq!(on_disk.max_model_calls, 7);
    assert_eq!(
        on_disk.child_env_pass,
        vec!["VAIDER_TEST_APP_MODE".to_string()]
    );
    assert_eq!(saved["values"]["maxModelCalls"], 7);
    assert_eq!(
        saved["values"]["childEnvPass"],
        json!(["VAIDER_TEST_APP_MODE"])
    );
    // The pass-through list is in force for the next child process, without a restart.
    assert!(passes_to_children("VAIDER_TEST_APP_MODE"));
    // Environment values are applied but not written into the file.
    assert_eq!(on_disk.data_dir, None);

    // Applied without a restart: the next analyses use the new model, and the cache is off.
    for _ in 0..2 {
        let (status, body) = server
            .post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["model"], "gemini-3.5-flash");
        assert_eq!(body["cached"], false);
    }
}

#[tokio::test]
async fn run_again_asks_the_same_media_again_with_the_edited_prompt() {
    let server = TestServer::start().await;
    let id = analyse_video(&server, server.media.path(), &["A login form is shown"]).await;
    let (status, started) = send(
        &server,
        reqwest::Method::POST,
        &format!("/api/interactions/{id}/run-again"),
        Some(json!({"prompt": "Only describe the error message."})),
    )
    .await;
    assert_eq!(status, 202);
    let new_id = started["id"].as_str().unwrap().to_string();
    assert_ne!(new_id, id);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let detail = loop {
        let (status, detail) = get(&server, &format!("/api/interactions/{new_id}")).await;
        if status == 200 && detail["status"] != "running" {
            break detail;
        }
        assert!(tokio::time::Instant::now() < deadline, "{detail}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(detail["status"], "ok", "{detail}");
    assert_eq!(detail["door"], "ui");
    assert_eq!(detail["prompt"], "Only describe the error message.");
    assert_eq!(detail["expectations"], json!(["A login form is shown"]));
    assert_eq!(
        detail["mediaPath"],
        server.media_path("login-flow.webm").display().to_string()
    );
    assert_eq!(detail["cached"], false);
    let generated = server.fake.generate_requests();
    assert_eq!(generated.len(), 2);
    assert!(generated[1]
        .to_string()
        .contains("Only describe the error message."));
}

/// Polls the detail of `id` until it has finished (the run-again answers before it ends).
async fn finished_detail(server: &TestServer, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, detail) = get(server, &format!("/api/interactions/{id}")).await;
        if status == 200 && detail["status"] != "running" {
            return detail;
        }
        assert!(tokio::time::Instant::now() < deadline, "{detail}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn run_again_with_an_edited_prompt_keeps_the_recorded_options_and_time_limit() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let context = "signing in with a wrong password";
    let result = call(
        &client,
        "diagnose_error_screenshot",
        json!({"image_source": server.media_path("login-error.png"), "context": context,
               "timeout_sec": 45}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let id = result.structured_content.unwrap()["interactionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, first) = get(&server, &format!("/api/interactions/{id}")).await;
    assert_eq!(first["runAgain"], "edit_prompt", "{first}");
    let (status, started) = send(
        &server,
        reqwest::Method::POST,
        &format!("/api/interactions/{id}/run-again"),
        Some(json!({"prompt": "Only name the error."})),
    )
    .await;
    assert_eq!(status, 202, "{started}");
    let again = finished_detail(&server, started["id"].as_str().unwrap()).await;
    assert_eq!(again["status"], "ok", "{again}");
    assert_eq!(
        (&again["tool"], &again["door"], &again["prompt"]),
        (
            &json!("diagnose_error_screenshot"),
            &json!("ui"),
            &json!("Only name the error.")
        )
    );
    // What the first call was asked with, recorded in the new call's request.json.
    assert_eq!(again["requestJson"]["options"], json!({"context": context}));
    assert_eq!(again["requestJson"]["timeoutSec"], json!(45.0));
    assert_eq!(again["requestJson"]["noCache"], true);
    assert_eq!(
        (&again["provider"], &again["model"]),
        (&first["provider"], &first["model"])
    );
    // The model was told the context again, with the edited prompt.
    let generated = server.fake.generate_requests();
    assert_eq!(generated.len(), 2);
    let asked = generated[1].to_string();
    assert!(
        asked.contains(context) && asked.contains("Only name the error."),
        "{asked}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_analysis_detail_is_typed_with_every_field_present() {
    let server = TestServer::start().await;
    let id = analyse_video(&server, server.media.path(), &["A login form is shown"]).await;
    let (_, detail) = get(&server, &format!("/api/interactions/{id}")).await;
    assert_eq!(detail["kind"], "analysis", "{detail}");
    assert_eq!(detail["runAgain"], "edit_prompt");
    assert_eq!(detail["verdicts"].as_array().map(Vec::len), Some(1));
    assert!(detail["adaptations"].is_array(), "{detail}");
    assert!(detail["framesAnalysed"].is_u64(), "{detail}");
    assert!(detail["sampling"]["moments"].is_array(), "{detail}");
    assert!(detail["expectations"].is_array());
    assert!(detail["allExpectationsMet"].is_boolean());
    // The model's own answer is an object with something in it, or null: never `{}`.
    let details = &detail["details"];
    assert!(
        details.is_null() || details.as_object().is_some_and(|o| !o.is_empty()),
        "{details}"
    );
    // A model call has no job and no comparison.
    assert!(
        detail.get("job").is_none() && detail.get("comparison").is_none(),
        "{detail}"
    );

    // A refused request: the same fields, empty; nothing to run again.
    let (status, body) = server
        .post_analyse(json!({"videoPath": "/nowhere/missing.webm"}))
        .await;
    assert_eq!(status, 400, "{body}");
    let refused = body["error"]["interactionId"].as_str().unwrap();
    let (_, detail) = get(&server, &format!("/api/interactions/{refused}")).await;
    assert_eq!(
        (&detail["kind"], &detail["status"], &detail["runAgain"]),
        (&json!("analysis"), &json!("rejected"), &Value::Null),
        "{detail}"
    );
    assert_eq!(detail["verdicts"], json!([]));
    assert_eq!(detail["adaptations"], json!([]));
    assert_eq!(detail["framesAnalysed"], 0);
    assert_eq!(detail["mediaUrl"], Value::Null);
    let (status, refusal) = send(
        &server,
        reqwest::Method::POST,
        &format!("/api/interactions/{refused}/run-again"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (status, &refusal["error"]["code"]),
        (400, &json!("INVALID_REQUEST"))
    );
}

#[tokio::test]
async fn a_paused_server_refuses_analyses_until_resumed() {
    let server = TestServer::start().await;
    let (status, paused) = send(&server, reqwest::Method::POST, "/api/server/pause", None).await;
    assert_eq!((status, paused["paused"].clone()), (200, json!(true)));
    let (status, body) = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}))
        .await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "PAUSED");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Resume"));
    assert!(server.fake.generate_requests().is_empty());
    let (_, settings) = get(&server, "/api/settings").await;
    assert_eq!(settings["paused"], true);

    send(&server, reqwest::Method::POST, "/api/server/resume", None).await;
    let (status, _) = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}))
        .await;
    assert_eq!(status, 200);
}

/// Start at login as the tray app would offer it, kept in memory.
struct RememberedAutostart(AtomicBool);

impl DesktopIntegration for RememberedAutostart {
    fn autostart(&self) -> Result<bool, String> {
        Ok(self.0.load(Ordering::SeqCst))
    }
    fn set_autostart(&self, on: bool) -> Result<(), String> {
        self.0.store(on, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn start_at_login_is_offered_only_inside_the_app() {
    let server = TestServer::start().await;
    let (_, headless) = get(&server, "/api/desktop").await;
    assert_eq!(headless, json!({"available": false}));
    let (status, refused) = send(
        &server,
        reqwest::Method::PUT,
        "/api/desktop",
        Some(json!({"autostart": true})),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(refused["error"]["code"], "NOT_IN_APP");

    let desktop = Arc::new(RememberedAutostart(AtomicBool::new(true)));
    let shutdown = CancellationToken::new();
    let app = vaider_server::router_with(vaider_server::Doors {
        engine: server.engine.clone(),
        auth: Arc::new(vaider_server::auth::Auth::fixed(TOKEN)),
        shutdown: shutdown.clone(),
        desktop: Some(desktop.clone()),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api/desktop", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();
    let answer: Value = client
        .put(&url)
        .bearer_auth(TOKEN)
        .json(&json!({"autostart": false}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer, json!({"available": true, "autostart": false}));
    assert!(!desktop.0.load(Ordering::SeqCst));
    shutdown.cancel();
}

fn secret_tool_lookup(provider: &str) -> Option<String> {
    let out = std::process::Command::new("secret-tool")
        .args(["lookup", "service", "vaider", "username", provider])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

#[tokio::test]
async fn keys_go_to_the_keychain_and_never_come_back() {
    let server = TestServer::start().await;
    let (_, settings) = get(&server, "/api/settings").await;
    if settings["keychain"]["available"] != true {
        assert!(
            std::env::var("VAIDER_REQUIRE_KEYCHAIN").is_err(),
            "VAIDER_REQUIRE_KEYCHAIN is set but the server sees no keychain: {settings}"
        );
        eprintln!("no Secret Service on this session: run scripts/test.sh to test the keychain");
        return;
    }
    let secret = "sk-ui-keychain-test-51c3";
    let (status, _) = send(
        &server,
        reqwest::Method::PUT,
        "/api/keys/openai",
        Some(json!({"key": secret})),
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(secret_tool_lookup("openai").as_deref(), Some(secret));
    let (_, settings) = get(&server, "/api/settings").await;
    let openai = provider(&settings, "openai");
    assert_eq!(openai["keySet"], true, "{openai}");
    assert!(!settings.to_string().contains(secret));

    let (status, _) = send(&server, reqwest::Method::DELETE, "/api/keys/openai", None).await;
    assert_eq!(status, 204);
    assert_eq!(secret_tool_lookup("openai"), None);
    let (status, unknown) = send(
        &server,
        reqwest::Method::PUT,
        "/api/keys/nosuch",
        Some(json!({"key": secret})),
    )
    .await;
    assert_eq!(status, 404);
    assert!(!unknown.to_string().contains(secret));
}

#[tokio::test]
async fn without_a_keychain_the_settings_explain_the_environment_fallback() {
    // No session bus: the Secret Service cannot be reached, as on a bare headless box.
    std::env::remove_var("DBUS_SESSION_BUS_ADDRESS");
    std::env::remove_var("XDG_RUNTIME_DIR");
    let server = TestServer::start().await;
    let (_, settings) = get(&server, "/api/settings").await;
    assert_eq!(settings["keychain"]["available"], false, "{settings}");
    let message = settings["keychain"]["message"].as_str().unwrap();
    assert!(
        message.contains("GEMINI_API_KEY") && message.contains(".env"),
        "{message}"
    );

    let secret = "sk-no-keychain-test-9e2a";
    let (status, refused) = send(
        &server,
        reqwest::Method::PUT,
        "/api/keys/openai",
        Some(json!({"key": secret})),
    )
    .await;
    assert_eq!(status, 503);
    assert_eq!(refused["error"]["code"], "KEYCHAIN_UNAVAILABLE");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("OPENAI_API_KEY"));
    assert!(!refused.to_string().contains(secret));
    // The server goes on: analyses with the environment's key still work.
    let (status, _) = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_diffs_expected_image_is_served_from_the_history_not_from_request_json() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let expected = server.media_path("login-error.png");
    let actual = server.media_path("login.png");
    let result = call(
        &client,
        "ui_diff_check",
        json!({"expected_image_source": expected, "actual_image_source": actual}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let s = result.structured_content.unwrap();
    let id = s["interactionId"].as_str().unwrap();
    // request.json lives in the project's folder, where anything may rewrite it: a path put
    // there must not decide what the media route serves.
    let request_file = std::path::Path::new(s["logDir"].as_str().unwrap()).join("request.json");
    let mut request: Value =
        serde_json::from_slice(&std::fs::read(&request_file).unwrap()).unwrap();
    let secret = server.write_media("private.png", b"not for the page");
    request["media"][0]["path"] = json!(secret);
    std::fs::write(&request_file, serde_json::to_vec(&request).unwrap()).unwrap();

    let (status, detail) = get(&server, &format!("/api/interactions/{id}")).await;
    assert_eq!(status, 200);
    let url = detail["expectedMediaUrl"].as_str().unwrap().to_string();
    let served = server
        .http()
        .get(format!("{}{url}", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(served.status().as_u16(), 200);
    assert_eq!(
        served.bytes().await.unwrap().as_ref(),
        std::fs::read(&expected).unwrap().as_slice()
    );
    let row = server.engine.history().get(id).unwrap().unwrap();
    assert_eq!(row.expected_path.as_deref(), expected.to_str());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn eval_runs_are_listed_for_the_eval_page_and_need_the_token() {
    let server = TestServer::start().await;
    let (status, body) = get(&server, "/api/evals").await;
    assert_eq!(status, 200);
    assert_eq!(body["runs"], json!([]));
    let evals = server.engine.data_dir().join("evals");
    std::fs::create_dir_all(&evals).unwrap();
    let report = json!({"finished_at": "2026-11-27T10:00:00Z", "provider": "gemini",
        "model": "gemini-3.5-flash-lite", "sampling": "full",
        "scores": {"items": 93, "errors": 0,
            "detection": {"balanced_accuracy": 0.5, "recall": 1.0, "specificity": 0.0},
            "verdicts": {"rate": 0.25}, "localisation": {"rate": null},
            "spend": {"cost_usd": 0.18, "mean_latency_ms": 900.0}, "classes": []}});
    std::fs::write(evals.join("20261127T100000Z.json"), report.to_string()).unwrap();
    let (status, body) = get(&server, "/api/evals").await;
    assert_eq!(status, 200);
    assert_eq!(body["runs"][0]["balancedAccuracy"], 0.5, "{body}");
    assert_eq!(body["runs"][0]["model"], "gemini-3.5-flash-lite");
    let anonymous = server
        .http()
        .get(format!("{}/api/evals", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}
