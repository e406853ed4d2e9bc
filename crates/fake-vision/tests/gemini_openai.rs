//! Gemini's OpenAI-compatible endpoint (`/v1beta/openai/chat/completions`, the
//! [`OpenAiOptions::gemini`] preset): images yes, video no, errors as a one-element array of
//! Google error bodies, and streamed answers that end with `data: [DONE]`.

mod common;

use common::*;
use fake_vision::{FakeOpenAi, OpenAiOptions};
use reqwest::Client;
use serde_json::{json, Value};

async fn chat(fake: &FakeOpenAi, client: &Client, key: &str, body: &Value) -> reqwest::Response {
    client
        .post(format!("{}/chat/completions", fake.base_url()))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .expect("chat")
}

#[tokio::test]
async fn images_are_answered_and_video_is_refused() {
    let fake = FakeOpenAi::start_with(OpenAiOptions::gemini()).await;
    assert!(
        fake.base_url().ends_with("/v1beta/openai"),
        "{}",
        fake.base_url()
    );
    let client = Client::new();
    let image = png(64, 48, 500);
    let body = json!({
        "model": "gemini-3.5-flash-lite",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is shown?"},
                {"type": "image_url", "image_url": {"url": data_url("image/png", &image), "detail": "auto"}}
            ]}
        ]
    });
    let r = chat(&fake, &client, FakeOpenAi::API_KEY, &body).await;
    assert_eq!(r.status(), 200);
    let resp: Value = r.json().await.expect("json");
    let text = resp["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");
    assert!(text.contains(&sha_hex(&image)), "{text}");
    assert_eq!(resp["choices"][0]["finish_reason"], "stop");
    let u = &resp["usage"];
    assert_eq!(
        u["total_tokens"].as_u64(),
        Some(
            u["prompt_tokens"].as_u64().unwrap_or(0) + u["completion_tokens"].as_u64().unwrap_or(0)
        )
    );

    let video = json!({
        "model": "gemini-3.5-flash-lite",
        "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": data_url("video/webm", &media("login-flow.webm"))}}
        ]}]
    });
    let r = chat(&fake, &client, FakeOpenAi::API_KEY, &video).await;
    assert_eq!(r.status(), 400);
    let err: Value = r.json().await.expect("json");
    assert_eq!(err[0]["error"]["status"], "INVALID_ARGUMENT", "{err}");
    assert_eq!(err[0]["error"]["code"], 400, "{err}");

    let video_url = json!({
        "model": "gemini-3.5-flash-lite",
        "messages": [{"role": "user", "content": [
            {"type": "video_url", "video_url": {"url": data_url("video/mp4", &media("login-flow.mp4"))}}
        ]}]
    });
    assert_eq!(
        chat(&fake, &client, FakeOpenAi::API_KEY, &video_url)
            .await
            .status(),
        400
    );

    let r = chat(&fake, &client, "wrong", &body).await;
    assert_eq!(r.status(), 400);
    let err: Value = r.json().await.expect("json");
    assert_eq!(err[0]["error"]["details"][0]["reason"], "API_KEY_INVALID");
}

#[tokio::test]
async fn streaming_ends_with_done() {
    let fake = FakeOpenAi::start_with(OpenAiOptions::gemini()).await;
    let client = Client::new();
    let body = json!({
        "model": "gemini-2.5-flash-lite",
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Say something long enough to be split into pieces."}]
    });
    let r = chat(&fake, &client, FakeOpenAi::API_KEY, &body).await;
    assert_eq!(
        r.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let raw = r.text().await.expect("text");
    let data: Vec<&str> = raw
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).expect("chunk json"))
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert!(text.contains("prompt: Say something"), "{text}");
    assert!(chunks
        .last()
        .is_some_and(|c| c["usage"]["total_tokens"].is_u64()));
}

#[tokio::test]
async fn images_are_billed_by_the_gemini_family_of_the_model() {
    let fake = FakeOpenAi::start_with(OpenAiOptions::gemini()).await;
    let client = Client::new();
    let image = png(64, 48, 501);
    let prompt_tokens = |model: &str| {
        let body = json!({
            "model": model,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is shown?"},
                {"type": "image_url", "image_url": {"url": data_url("image/png", &image)}}
            ]}]
        });
        let (fake, client) = (&fake, &client);
        async move {
            let r = chat(fake, client, FakeOpenAi::API_KEY, &body).await;
            assert_eq!(r.status(), 200);
            let resp: Value = r.json().await.expect("json");
            resp["usage"]["prompt_tokens"]
                .as_u64()
                .expect("prompt_tokens")
        }
    };
    let two = prompt_tokens("gemini-2.5-flash-lite").await;
    let three = prompt_tokens("gemini-3.5-flash-lite").await;
    // One image: 258 tokens on Gemini 2.x, 1120 on Gemini 3 at the default resolution; the
    // text is the same.
    assert_eq!(three - two, 1120 - 258, "2.x {two}, 3 {three}");
}
