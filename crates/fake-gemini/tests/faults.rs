//! Fault injection: Google error bodies per status, 429 with RetryInfo / QuotaFailure,
//! delays, blocked answers; each fault used once, in order, by its own endpoint.

mod common;

use std::time::{Duration, Instant};

use common::*;
use fake_gemini::{Endpoint, FakeGemini, Fault};
use reqwest::Client;
use serde_json::{json, Value};

fn hello() -> Value {
    json!({"contents": [{"parts": [{"text": "hello"}]}]})
}

#[tokio::test]
async fn rate_limit_has_retry_info_and_quota_failure() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.push_fault(
        Endpoint::Generate,
        Fault::RateLimited {
            retry_delay: "45.837906927s".into(),
            per_day: true,
        },
    );
    fake.push_fault(
        Endpoint::Generate,
        Fault::RateLimited {
            retry_delay: "1.5s".into(),
            per_day: false,
        },
    );

    let find = |body: &Value, ty: &str| -> Value {
        body["error"]["details"]
            .as_array()
            .and_then(|d| d.iter().find(|x| x["@type"] == ty).cloned())
            .unwrap_or(Value::Null)
    };
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    let body = expect_error(r, 429, "RESOURCE_EXHAUSTED").await;
    assert_eq!(
        find(&body, "type.googleapis.com/google.rpc.RetryInfo")["retryDelay"],
        "45.837906927s"
    );
    let quota = find(&body, "type.googleapis.com/google.rpc.QuotaFailure");
    assert!(
        quota["violations"][0]["quotaId"]
            .as_str()
            .is_some_and(|q| q.contains("PerDay")),
        "{quota}"
    );

    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    let body = expect_error(r, 429, "RESOURCE_EXHAUSTED").await;
    assert_eq!(
        find(&body, "type.googleapis.com/google.rpc.RetryInfo")["retryDelay"],
        "1.5s"
    );
    let quota = find(&body, "type.googleapis.com/google.rpc.QuotaFailure");
    let id = quota["violations"][0]["quotaId"].as_str().unwrap_or("");
    assert!(id.contains("PerMinute") && !id.contains("PerDay"), "{id}");

    // Each fault is used once.
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn status_faults_use_google_status_names() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let table = [
        (400, "INVALID_ARGUMENT"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (429, "RESOURCE_EXHAUSTED"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
        (504, "DEADLINE_EXCEEDED"),
    ];
    for (code, _) in table {
        fake.push_fault(Endpoint::Generate, Fault::Status(code));
    }
    for (code, status) in table {
        let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
        expect_error(r, code, status).await;
    }
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn faults_apply_to_their_own_endpoint_before_anything_else() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.set_processing_polls(0);
    fake.push_fault(Endpoint::UploadStart, Fault::Status(503));
    fake.push_fault(Endpoint::UploadChunk, Fault::Status(500));
    fake.push_fault(Endpoint::GetFile, Fault::Status(504));
    fake.push_fault(Endpoint::DeleteFile, Fault::Status(503));

    // A fault comes before the key check.
    let r = client
        .post(format!("{}/upload/v1beta/files", fake.base_url()))
        .send()
        .await
        .expect("send");
    expect_error(r, 503, "UNAVAILABLE").await;

    let bytes = data(KIB256 + 5);
    let url = session(&fake, &client, bytes.len() as u64, "video/webm").await;
    let r = chunk(&client, &url, 0, "upload", bytes[..KIB256].to_vec()).await;
    expect_error(r, 500, "INTERNAL").await;
    // The failed chunk left nothing behind; sending it again works.
    let r = chunk(&client, &url, 0, "upload", bytes[..KIB256].to_vec()).await;
    assert_eq!(r.status(), 200);
    let r = chunk(
        &client,
        &url,
        KIB256 as u64,
        "upload, finalize",
        bytes[KIB256..].to_vec(),
    )
    .await;
    let file: Value = r.json().await.expect("json");
    let name = file["file"]["name"].as_str().expect("name").to_string();

    expect_error(
        get_file(&fake, &client, &name).await,
        504,
        "DEADLINE_EXCEEDED",
    )
    .await;
    assert_eq!(get_file(&fake, &client, &name).await.status(), 200);

    let del = |client: &Client| {
        client
            .delete(format!("{}/v1beta/{name}", fake.base_url()))
            .header("x-goog-api-key", KEY)
            .send()
    };
    expect_error(del(&client).await.expect("send"), 503, "UNAVAILABLE").await;
    assert_eq!(del(&client).await.expect("send").status(), 200);
}

#[tokio::test]
async fn delays_slow_the_answer() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.push_fault(Endpoint::Generate, Fault::Delay(Duration::from_millis(300)));
    let t = Instant::now();
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    assert_eq!(r.status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    fake.set_generate_delay(Duration::from_millis(200));
    let t = Instant::now();
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    assert_eq!(r.status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn blocked_prompt_and_safety_finish() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.push_fault(
        Endpoint::Generate,
        Fault::Blocked("PROHIBITED_CONTENT".into()),
    );
    fake.push_fault(Endpoint::Generate, Fault::FinishReason("SAFETY".into()));

    let resp: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &hello())
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(resp["promptFeedback"]["blockReason"], "PROHIBITED_CONTENT");
    assert!(resp.get("candidates").is_none());

    let resp: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &hello())
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(resp["candidates"][0]["finishReason"], "SAFETY");
    assert!(resp["candidates"][0].get("content").is_none());
}

#[tokio::test]
async fn every_request_is_recorded() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let _ = generate(&fake, &client, "gemini-3.5-flash-lite", &hello()).await;
    let _ = client
        .get(format!("{}/no/such/path", fake.base_url()))
        .send()
        .await
        .expect("send");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(
        reqs[0].path,
        "/v1beta/models/gemini-3.5-flash-lite:generateContent"
    );
    assert_eq!(reqs[0].header("x-goog-api-key"), Some(KEY));
    assert_eq!(reqs[0].body_len, hello().to_string().len() as u64);
    assert_eq!(reqs[1].path, "/no/such/path");
}
