//! The Anthropic fake over real HTTP: headers, required and unknown fields, the proof of an
//! image block, media type / size / side / count limits, the request size limit and faults.

mod common;

use std::time::{Duration, Instant};

use common::*;
use fake_vision::{FakeAnthropic, Fault};
use reqwest::{Client, RequestBuilder};
use serde_json::{json, Value};

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn post(fake: &FakeAnthropic) -> RequestBuilder {
    Client::new().post(format!("{}/v1/messages", fake.base_url()))
}

async fn send(fake: &FakeAnthropic, body: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
    let resp = post(fake)
        .header("x-api-key", FakeAnthropic::API_KEY)
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .expect("messages request");
    json_of(resp).await
}

fn image_block(media_type: &str, bytes: &[u8]) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": b64(bytes)}})
}

fn with_blocks(blocks: Vec<Value>) -> Value {
    json!({"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": blocks}]})
}

fn with_image(media_type: &str, bytes: &[u8]) -> Value {
    with_blocks(vec![
        json!({"type": "text", "text": "Frame at 00:03.0:"}),
        image_block(media_type, bytes),
        json!({"type": "text", "text": "Is the login form visible?"}),
    ])
}

/// The error's type and message, after checking the envelope.
fn error_of(status: u16, body: &Value, want_status: u16, want_type: &str) -> String {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["type"], "error", "{body}");
    assert_eq!(body["error"]["type"], want_type, "{body}");
    assert!(body["request_id"]
        .as_str()
        .is_some_and(|r| r.starts_with("req_")));
    body["error"]["message"].as_str().unwrap_or("").to_string()
}

#[tokio::test]
async fn key_and_version_headers_are_required() {
    let fake = FakeAnthropic::start().await;
    let body = with_blocks(vec![json!({"type": "text", "text": "hi"})]);

    let resp = post(&fake)
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .expect("send");
    let (status, _, b) = json_of(resp).await;
    assert_eq!(
        error_of(status, &b, 401, "authentication_error"),
        "x-api-key header is required"
    );

    let resp = post(&fake)
        .header("x-api-key", "sk-ant-wrong")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .expect("send");
    let (status, _, b) = json_of(resp).await;
    assert_eq!(
        error_of(status, &b, 401, "authentication_error"),
        "invalid x-api-key"
    );

    let resp = post(&fake)
        .header("x-api-key", FakeAnthropic::API_KEY)
        .json(&body)
        .send()
        .await
        .expect("send");
    let (status, _, b) = json_of(resp).await;
    assert_eq!(
        error_of(status, &b, 400, "invalid_request_error"),
        "anthropic-version: header is required"
    );

    let resp = post(&fake)
        .header("x-api-key", FakeAnthropic::API_KEY)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "text/plain")
        .body(body.to_string())
        .send()
        .await
        .expect("send");
    let (status, _, b) = json_of(resp).await;
    error_of(status, &b, 400, "invalid_request_error");

    let (status, headers, b) = send(&fake, &body).await;
    assert_eq!(status, 200, "{b}");
    assert!(headers.get("request-id").is_some());
    let recorded = fake.recorded();
    assert_eq!(recorded.len(), 5);
    assert_eq!(
        recorded[4].header("x-api-key"),
        Some(FakeAnthropic::API_KEY)
    );
    assert_eq!(recorded[4].header("anthropic-version"), Some("2023-06-01"));
}

#[tokio::test]
async fn required_and_unknown_fields_are_refused() {
    let fake = FakeAnthropic::start().await;
    let hi = json!([{"role": "user", "content": "hi"}]);
    let cases = [
        (
            json!({"max_tokens": 10, "messages": hi}),
            400,
            "model: Field required",
        ),
        (
            json!({"model": MODEL, "messages": hi}),
            400,
            "max_tokens: Field required",
        ),
        (
            json!({"model": MODEL, "max_tokens": 10}),
            400,
            "messages: Field required",
        ),
        (
            json!({"model": MODEL, "max_tokens": 10, "messages": hi, "response_format": {"type": "json_object"}}),
            400,
            "response_format: Extra inputs are not permitted",
        ),
        (
            json!({"model": MODEL, "max_tokens": 10, "messages": [{"role": "assistant", "content": "hi"}]}),
            400,
            "messages: first message must use the \"user\" role",
        ),
        (
            json!({"model": MODEL, "max_tokens": 10, "temperature": 1.5, "messages": hi}),
            400,
            "temperature: Input should be less than or equal to 1",
        ),
        (
            json!({"model": "gpt-4o", "max_tokens": 10, "messages": hi}),
            404,
            "model: gpt-4o",
        ),
        // Claude 4.7 and later: no sampling parameters, adaptive thinking only.
        (
            json!({"model": "claude-opus-4-7", "max_tokens": 10, "temperature": 0.2, "messages": hi}),
            400,
            "`temperature` is deprecated for this model.",
        ),
        (
            json!({"model": "claude-opus-4-7", "max_tokens": 4096, "messages": hi,
                   "thinking": {"type": "enabled", "budget_tokens": 2048}}),
            400,
            "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
        ),
        // Thinking allows no temperature but 1; a budget must leave room for the answer.
        (
            json!({"model": "claude-sonnet-4-6", "max_tokens": 4096, "temperature": 0.2,
                   "messages": hi, "thinking": {"type": "adaptive"}}),
            400,
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
        ),
        (
            json!({"model": MODEL, "max_tokens": 2048, "messages": hi,
                   "thinking": {"type": "enabled", "budget_tokens": 2048}}),
            400,
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
        ),
        (
            json!({"model": "claude-opus-4-7", "max_tokens": 4096, "messages": hi,
                   "thinking": {"type": "adaptive"}, "output_config": {"effort": "extreme"}}),
            400,
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
        ),
    ];
    for (body, want_status, want_message) in cases {
        let (status, _, b) = send(&fake, &body).await;
        let kind = if want_status == 404 {
            "not_found_error"
        } else {
            "invalid_request_error"
        };
        assert_eq!(error_of(status, &b, want_status, kind), want_message);
    }

    // An OpenAI-style part is not an Anthropic block.
    let body = with_blocks(vec![
        json!({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
    ]);
    let (status, _, b) = send(&fake, &body).await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(
        message.starts_with("messages.0.content.0: Input tag 'image_url'"),
        "{message}"
    );
    let (status, _, b) = send(
        &fake,
        &with_blocks(vec![json!({"type": "text", "text": ""})]),
    )
    .await;
    assert_eq!(
        error_of(status, &b, 400, "invalid_request_error"),
        "messages: text content blocks must be non-empty"
    );
}

#[tokio::test]
async fn png_block_answer_proves_what_arrived() {
    let fake = FakeAnthropic::start().await;
    let png = media("login.png");
    let mut body = with_image("image/png", &png);
    body["system"] = json!([{"type": "text", "text": "You review GUI screenshots."}]);
    let (status, _, answer) = send(&fake, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["model"], MODEL);
    assert!(answer["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("msg_")));
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(answer["stop_sequence"], Value::Null);
    assert_eq!(answer["content"][0]["type"], "text");
    let text = answer["content"][0]["text"].as_str().expect("text");
    assert_eq!(
        text,
        format!(
            "label: Frame at 00:03.0:\nimage 1: image/png, 800x500 px, {} bytes, sha256 {}\n\
             prompt: Is the login form visible?",
            png.len(),
            sha_hex(&png)
        )
    );
    // 800 x 500 / 750 = 534 image tokens, plus text and framing.
    let input = answer["usage"]["input_tokens"].as_u64().unwrap_or(0);
    assert!(input > 534 && input < 600, "{answer}");
    assert_eq!(
        answer["usage"]["output_tokens"].as_u64(),
        Some((text.chars().count() as u64).div_ceil(4))
    );
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(
        fake.requests()[0]["messages"][0]["content"][1]["source"]["media_type"],
        "image/png"
    );

    fake.set_reply_text(Some("Yes.".into()));
    let (_, _, answer) = send(&fake, &body).await;
    assert_eq!(answer["content"][0]["text"], "Yes.");

    // A short max_tokens cuts the answer.
    fake.set_reply_text(None);
    body["max_tokens"] = json!(5);
    let (_, _, answer) = send(&fake, &body).await;
    assert_eq!(answer["stop_reason"], "max_tokens");
    assert_eq!(answer["usage"]["output_tokens"], 5);
}

#[tokio::test]
async fn media_type_must_be_listed_and_match_the_bytes() {
    let fake = FakeAnthropic::start().await;
    let (status, _, b) = send(&fake, &with_image("image/jpg", &jpeg(800, 500))).await;
    assert_eq!(
        error_of(status, &b, 400, "invalid_request_error"),
        "messages.0.content.1.image.source.base64.media_type: Input should be 'image/jpeg', \
         'image/png', 'image/gif' or 'image/webp'"
    );
    let (status, _, b) = send(&fake, &with_image("image/png", &jpeg(800, 500))).await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(
        message.starts_with(
            "messages.0.content.1.image.source.base64.data: Image does not match the provided \
             media type image/png"
        ),
        "{message}"
    );
    for (mime, bytes) in [
        ("image/jpeg", jpeg(1280, 720)),
        ("image/webp", webp(640, 480)),
    ] {
        let (status, _, b) = send(&fake, &with_image(mime, &bytes)).await;
        assert_eq!(status, 200, "{mime}: {b}");
    }
    // A URL source is accepted without fetching.
    let body = with_blocks(vec![
        json!({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}),
        json!({"type": "text", "text": "What is this?"}),
    ]);
    let (status, _, b) = send(&fake, &body).await;
    assert_eq!(status, 200, "{b}");
    assert!(b["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.starts_with("image 1: remote https://example.com/a.png")));
}

#[tokio::test]
async fn image_size_side_and_count_limits() {
    let fake = FakeAnthropic::start().await;

    // 5 MB counts the base64 text: 4 MB of bytes is already over.
    let (status, _, b) = send(
        &fake,
        &with_image("image/png", &png(1000, 1000, 4 * 1024 * 1024)),
    )
    .await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(message.contains("image exceeds 5 MB maximum"), "{message}");
    assert!(message.ends_with("> 5242880 bytes"), "{message}");
    let (status, _, _) = send(
        &fake,
        &with_image("image/png", &png(1000, 1000, 3 * 1024 * 1024)),
    )
    .await;
    assert_eq!(status, 200);

    let (status, _, b) = send(&fake, &with_image("image/png", &png(8001, 100, 0))).await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(
        message.contains("exceed max allowed size: 8000 pixels"),
        "{message}"
    );
    let (status, _, _) = send(&fake, &with_image("image/png", &png(8000, 8000, 0))).await;
    assert_eq!(status, 200);

    // Over 20 images: 2000 px a side.
    let mut blocks: Vec<Value> = (0..21)
        .map(|_| image_block("image/png", &png(800, 500, 0)))
        .collect();
    blocks.push(image_block("image/png", &png(2500, 100, 0)));
    let (status, _, b) = send(&fake, &with_blocks(blocks)).await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(
        message.contains("many-image requests: 2000 pixels"),
        "{message}"
    );

    let login = media("login.png");
    let blocks: Vec<Value> = (0..101).map(|_| image_block("image/png", &login)).collect();
    let (status, _, b) = send(&fake, &with_blocks(blocks)).await;
    let message = error_of(status, &b, 400, "invalid_request_error");
    assert!(message.contains("too many images"), "{message}");
    let blocks: Vec<Value> = (0..100).map(|_| image_block("image/png", &login)).collect();
    let mut body = with_blocks(blocks);
    // A hundred proof lines need more than the 1024 tokens `with_blocks` allows.
    body["max_tokens"] = json!(8192);
    let (status, _, b) = send(&fake, &body).await;
    assert_eq!(status, 200);
    assert!(b["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("image 100: image/png")));
}

#[tokio::test]
async fn requests_over_32_mb_are_too_large() {
    let fake = FakeAnthropic::start().await;
    let body = with_blocks(vec![
        json!({"type": "text", "text": "a".repeat(33 * 1024 * 1024)}),
    ]);
    let (status, _, b) = send(&fake, &body).await;
    assert_eq!(
        error_of(status, &b, 413, "request_too_large"),
        "Request exceeds the maximum allowed number of bytes."
    );
}

#[tokio::test]
async fn faults_come_first_and_are_used_once() {
    let fake = FakeAnthropic::start().await;
    let hi = with_blocks(vec![json!({"type": "text", "text": "hi"})]);
    fake.push_fault(Fault::RateLimited {
        retry_after_secs: 12,
    });
    fake.push_fault(Fault::Status(529));
    fake.push_fault(Fault::Status(500));

    // Without headers: the fault still answers first.
    let resp = post(&fake).json(&hi).send().await.expect("send");
    let (status, headers, b) = json_of(resp).await;
    error_of(status, &b, 429, "rate_limit_error");
    assert_eq!(
        headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("12")
    );

    let (status, _, b) = send(&fake, &hi).await;
    assert_eq!(error_of(status, &b, 529, "overloaded_error"), "Overloaded");
    let (status, _, b) = send(&fake, &hi).await;
    error_of(status, &b, 500, "api_error");
    let (status, _, _) = send(&fake, &hi).await;
    assert_eq!(status, 200);

    fake.push_fault(Fault::Delay(Duration::from_millis(250)));
    let started = Instant::now();
    let (status, _, _) = send(&fake, &hi).await;
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(fake.requests().len(), 5);
}
