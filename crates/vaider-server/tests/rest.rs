//! The `/v1` REST contract, case by case over real HTTP, with every error code; the guard
//! (token, Origin, Host); retries and timeouts against the fake Gemini; and the rule that no
//! secret reaches an interaction file or the history.

mod common;

use std::time::{Duration, Instant};

use common::*;
use fake_gemini::{Endpoint, FakeGemini, Fault};
use serde_json::{json, Value};

#[tokio::test]
async fn health_and_openapi_need_no_token() {
    let server = TestServer::start().await;
    let health: Value = reqwest::get(format!("{}/v1/health", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], vaider_core::VERSION);
    assert!(chrono::DateTime::parse_from_rfc3339(health["timestamp"].as_str().unwrap()).is_ok());

    let doc: Value = reqwest::get(format!("{}/v1/openapi.json", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let responses = &doc["paths"]["/v1/analyse"]["post"]["responses"];
    for code in ["200", "400", "401", "408", "422", "500"] {
        assert!(responses[code].is_object(), "OpenAPI lacks {code}");
    }
}

#[tokio::test]
async fn analyse_returns_the_contract_fields() {
    let server = TestServer::start().await;
    let path = server.media_path("login-flow.webm");
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "timeoutSec": 30, "sampling": "full"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&path)));
    // The recording lasts 5.52 s (Gemini reports videoDuration); one frame a second makes 6.
    assert_eq!(body["framesAnalysed"], 6);
    assert!(body["model"].as_str().unwrap().starts_with("gemini-"));
    assert!(body["durationMs"].is_u64());
    let row = server
        .engine
        .history()
        .get(body["interactionId"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(row.door, "rest");
}

#[tokio::test]
async fn bad_paths_are_400_invalid_path_and_nothing_leaves() {
    let server = TestServer::start().await;
    let text = server.write_media("readme.mp4", b"# not a video\n");
    let empty = server.write_media("empty.mp4", b"");
    let mp4 = std::fs::read(server.media_path("login-flow.mp4")).unwrap();
    let cut = server.write_media("cut.mp4", &mp4[..mp4.len() / 2]);
    for path in [
        server.media_path("nope.webm"),
        server.media.path().to_path_buf(),
        text,
        empty,
        cut,
    ] {
        let (status, body) = server.post_analyse(json!({"videoPath": path})).await;
        assert_eq!(status, 400, "{path:?}: {body}");
        assert_eq!(body["error"]["code"], "INVALID_PATH");
        assert!(body["error"]["message"].as_str().unwrap().len() > 20);
    }
    assert!(server.fake.requests().is_empty());
}

#[tokio::test]
async fn malformed_bodies_are_422() {
    let server = TestServer::start().await;
    let url = format!("{}/v1/analyse", server.url);
    let bodies: [&[u8]; 7] = [
        b"",
        b"{not json",
        b"[]",
        br#"{"videoPath": 42}"#,
        br#"{"timeoutSec": 30}"#,
        br#"{"videoPath": "/x.webm", "timeoutSec": -1}"#,
        // Over the pipeline's one-hour limit, whichever door it came by.
        br#"{"videoPath": "/x.webm", "timeoutSec": 5000}"#,
    ];
    for body in bodies {
        let response = server
            .http()
            .post(&url)
            .bearer_auth(TOKEN)
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 422, "{}", String::from_utf8_lossy(body));
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "INVALID_REQUEST");
        assert!(error["error"]["message"].is_string());
    }
    let response = server
        .http()
        .post(format!("{}/v1/nothing", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn token_origin_and_host_are_enforced_on_every_door() {
    let server = TestServer::start().await;
    let http = server.http();
    let analyse = format!("{}/v1/analyse", server.url);
    let mcp = format!("{}/mcp", server.url);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    for url in [&analyse, &mcp] {
        let none = http
            .post(url)
            .json(&init)
            .header("accept", "application/json, text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(none.status(), 401, "{url}");
        assert_eq!(none.headers()["www-authenticate"], "Bearer");
        let wrong = http
            .post(url)
            .bearer_auth("wrong")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{url}");
        let foreign = http
            .post(url)
            .bearer_auth(TOKEN)
            .header("origin", "http://evil.example")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), 403, "{url}");
        let rebinding = http
            .post(url)
            .bearer_auth(TOKEN)
            .header("host", "evil.example:3456")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(rebinding.status(), 403, "{url}");
    }
    // A loopback page may call in.
    let local = http
        .post(&mcp)
        .bearer_auth(TOKEN)
        .header("origin", "http://localhost:5173")
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
    assert!(server.fake.requests().is_empty());
}

#[tokio::test]
async fn a_slow_model_gives_408_with_the_duration_and_the_upload_is_cleaned_up() {
    let server = TestServer::start().await;
    server.fake.set_generate_delay(Duration::from_secs(5));
    let started = Instant::now();
    let (status, body) = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm"), "timeoutSec": 0.8}))
        .await;
    assert_eq!(status, 408, "{body}");
    assert_eq!(body["error"]["code"], "TIMEOUT");
    let duration = body["error"]["durationMs"].as_u64().unwrap();
    assert!((800..4000).contains(&duration), "{duration}");
    assert!(started.elapsed() < Duration::from_secs(4));
    // The uploaded file does not outlive the timed-out call.
    assert!(eventually(|| server.fake.files().iter().all(|f| f.deleted)).await);
    let row = server
        .engine
        .history()
        .get(body["error"]["interactionId"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(row.status, vaider_core::history::Status::Timeout);
}

#[tokio::test]
async fn upstream_failures_are_500_with_the_upstream_response() {
    let server = TestServer::start().await;
    let path = server.media_path("login-flow.webm");

    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(400));
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["error"]["code"], "UPSTREAM_ERROR");
    assert_eq!(body["error"]["upstreamResponse"]["status"], 400);
    assert!(body["error"]["upstreamResponse"]["body"]
        .as_str()
        .unwrap()
        .contains("INVALID_ARGUMENT"));

    server.fake.set_fail_processing(true);
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not process"),
        "{body}"
    );
    server.fake.set_fail_processing(false);

    // A wrong key: Gemini's API_KEY_INVALID, and the key itself appears nowhere.
    server.engine.set_api_key(
        vaider_core::secrets::ApiKey::new("AIzaWRONG-KEY-123"),
        vaider_core::secrets::KeySource::Keychain,
    );
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 500);
    assert!(body.to_string().contains("API_KEY_INVALID"), "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("vaider key set"));
    assert!(!body.to_string().contains("AIzaWRONG"));
}

/// The keys of a JSON object, sorted, to compare a body's whole shape.
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn timeout_and_upstream_errors_have_the_specs_shape() {
    let server = TestServer::start().await;
    let path = server.media_path("login-flow.webm");

    // 408: `durationMs` beside `error`, as the spec puts it (and inside, as before).
    server.fake.set_generate_delay(Duration::from_secs(5));
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "timeoutSec": 0.8, "noCache": true}))
        .await;
    assert_eq!(status, 408, "{body}");
    assert_eq!(keys(&body), ["durationMs", "error"], "{body}");
    assert_eq!(
        keys(&body["error"]),
        ["code", "durationMs", "interactionId", "message"],
        "{body}"
    );
    assert_eq!(body["error"]["code"], "TIMEOUT");
    let duration = body["durationMs"].as_u64().expect("durationMs is a number");
    assert!(duration >= 800, "{body}");
    assert_eq!(body["error"]["durationMs"], body["durationMs"]);
    server.fake.set_generate_delay(Duration::ZERO);

    // 500: `upstreamResponse {status, body}` beside `error`.
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(400));
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(keys(&body), ["error", "upstreamResponse"], "{body}");
    assert_eq!(keys(&body["upstreamResponse"]), ["body", "status"]);
    assert_eq!(body["upstreamResponse"]["status"], 400);
    assert!(body["upstreamResponse"]["body"]
        .as_str()
        .is_some_and(|b| b.contains("INVALID_ARGUMENT")));
    assert_eq!(body["error"]["code"], "UPSTREAM_ERROR");
    assert_eq!(body["error"]["upstreamResponse"], body["upstreamResponse"]);

    // The OpenAPI document says the same.
    let doc: Value = reqwest::get(format!("{}/v1/openapi.json", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schema = |code: &str| {
        doc["paths"]["/v1/analyse"]["post"]["responses"][code]["content"]["application/json"]
            ["schema"]
            .clone()
    };
    let timeout = schema("408");
    assert_eq!(timeout["required"], json!(["error", "durationMs"]));
    assert_eq!(timeout["properties"]["durationMs"]["type"], "integer");
    let upstream = schema("500");
    assert_eq!(upstream["required"], json!(["error"]));
    assert_eq!(
        upstream["properties"]["upstreamResponse"]["required"],
        json!(["status", "body"])
    );
    assert!(schema("400")["properties"].get("durationMs").is_none());
}

#[tokio::test]
async fn retries_follow_googles_rules() {
    let server = TestServer::start().await;
    let path = server.media_path("login-flow.webm");
    let generates = |s: &TestServer| {
        s.fake
            .requests()
            .iter()
            .filter(|r| r.path.contains(":generateContent"))
            .count()
    };

    // 429 with RetryInfo: wait the given delay, then succeed.
    server.fake.push_fault(
        Endpoint::Generate,
        Fault::RateLimited {
            retry_delay: "0.3s".into(),
            per_day: false,
        },
    );
    let started = Instant::now();
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(generates(&server), 2);

    // A daily quota: no retry.
    server.fake.push_fault(
        Endpoint::Generate,
        Fault::RateLimited {
            retry_delay: "1s".into(),
            per_day: true,
        },
    );
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], "QUOTA_EXHAUSTED", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("daily"),
        "{body}"
    );
    assert_eq!(generates(&server), 3);

    // 503 twice, then an answer: three tries in all.
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(503));
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(503));
    let (status, _) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(generates(&server), 6);

    // 500, 503, 504: three tries and no more.
    for code in [500, 503, 504] {
        server
            .fake
            .push_fault(Endpoint::Generate, Fault::Status(code));
    }
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["upstreamResponse"]["status"], 504);
    assert_eq!(generates(&server), 9);

    // A failed chunk is retried too, and the bytes still arrive whole.
    server
        .fake
        .push_fault(Endpoint::UploadChunk, Fault::Status(503));
    let (status, body) = server
        .post_analyse(json!({"videoPath": path, "noCache": true}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&path)));
}

#[tokio::test]
async fn the_concurrency_limit_queues_work_and_health_stays_responsive() {
    let server = TestServer::start_with(|c| c.max_concurrent = 1).await;
    server.fake.set_generate_delay(Duration::from_millis(600));
    let a = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.webm"), "noCache": true}));
    let b = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.mp4"), "noCache": true}));
    let health = async {
        // Once the fake holds the first model call, the one slot is taken and the second
        // analysis waits for it: that is when health must still answer.
        let model_is_busy = eventually(|| {
            server
                .fake
                .requests()
                .iter()
                .any(|r| r.path.contains(":generateContent"))
        })
        .await;
        let response = reqwest::get(format!("{}/v1/health", server.url))
            .await
            .unwrap();
        (model_is_busy, response.status().as_u16(), Instant::now())
    };
    let ((sa, _), (sb, _), (model_was_busy, sh, health_answered)) = tokio::join!(a, b, health);
    assert_eq!((sa, sb, sh), (200, 200, 200));
    assert!(model_was_busy, "the first analysis never reached the model");
    // Health answered before the model gave its first answer: it did not queue behind the
    // analyses.
    let first_answer = server.fake.generate_answered_at()[0];
    assert!(
        health_answered < first_answer,
        "health answered {:?} after the first model answer",
        health_answered - first_answer
    );
    // With one slot, the second upload starts only after the first answer.
    let requests = server.fake.requests();
    let starts: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.path.starts_with("/upload/")
                && r.query.as_deref().is_none_or(|q| !q.contains("upload_id"))
        })
        .map(|(i, _)| i)
        .collect();
    let first_generate = requests
        .iter()
        .position(|r| r.path.contains(":generateContent"))
        .unwrap();
    assert_eq!(starts.len(), 2);
    assert!(
        starts[1] > first_generate,
        "the second upload began before the first finished"
    );
}

#[tokio::test]
async fn no_secret_reaches_an_interaction_file_or_the_history() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post_analyse(
            json!({"videoPath": server.media_path("login-flow.webm"), "sampling": "full"}),
        )
        .await;
    assert_eq!(status, 200);
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(500));
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(500));
    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(500));
    let _ = server
        .post_analyse(json!({"videoPath": server.media_path("login-flow.mp4")}))
        .await;
    let mut files = Vec::new();
    for root in [server.media.path(), server.data.path()] {
        collect_files(root, &mut files);
    }
    assert!(files.iter().any(|f| f.ends_with("response.json")));
    assert!(files
        .iter()
        .any(|f| f.to_string_lossy().contains("history.sqlite3")));
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(FakeGemini::API_KEY), "key in {file:?}");
        assert!(
            !text.contains("upload_id"),
            "upload session URL in {file:?}"
        );
    }
    assert!(!body.to_string().contains(FakeGemini::API_KEY));
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[tokio::test]
async fn the_history_row_exists_while_the_model_is_still_answering() {
    let server = TestServer::start().await;
    server.fake.set_generate_delay(Duration::from_millis(800));
    let pending = server.post_analyse(json!({"videoPath": server.media_path("login-flow.webm")}));
    let watch = async {
        // Poll the history while the request is in flight: a crash now would leave this row.
        let mut seen_running = false;
        for _ in 0..100 {
            let rows = server.engine.history().list(5, 0).unwrap();
            if rows
                .iter()
                .any(|r| r.status == vaider_core::history::Status::Running)
            {
                seen_running = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        seen_running
    };
    let ((status, body), seen_running) = tokio::join!(pending, watch);
    assert_eq!(status, 200);
    assert!(
        seen_running,
        "no running row was written before the model answered"
    );
    let row = server
        .engine
        .history()
        .get(body["interactionId"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(row.status, vaider_core::history::Status::Ok);
    assert!(row.finished_at.is_some());
}
