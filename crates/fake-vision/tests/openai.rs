//! The OpenAI-compatible fake over real HTTP: key checks, the proof of an image sent as a data
//! URL, format / size / side limits per server preset, video parts, JSON answers, request
//! checks and faults.

mod common;

use std::time::{Duration, Instant};

use common::*;
use fake_vision::{FakeOpenAi, Fault, OpenAiOptions};
use reqwest::Client;
use serde_json::{json, Value};

async fn chat(fake: &FakeOpenAi, body: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
    let resp = Client::new()
        .post(format!("{}/chat/completions", fake.base_url()))
        .bearer_auth(FakeOpenAi::API_KEY)
        .json(body)
        .send()
        .await
        .expect("chat request");
    json_of(resp).await
}

/// One user message: a label, an image (by URL), and the prompt.
fn with_image(model: &str, url: &str) -> Value {
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": "You review GUI screenshots."},
            {"role": "user", "content": [
                {"type": "text", "text": "Frame at 00:03.0:"},
                {"type": "image_url", "image_url": {"url": url, "detail": "auto"}},
                {"type": "text", "text": "Is the login form visible?"},
            ]},
        ],
    })
}

fn content(answer: &Value) -> &str {
    answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_else(|| panic!("no content in {answer}"))
}

fn assert_error(status: u16, body: &Value, want_status: u16, want_code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"]["code"], want_code, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
}

#[tokio::test]
async fn api_key_is_checked_unless_the_server_is_local() {
    let fake = FakeOpenAi::start().await;
    let url = format!("{}/chat/completions", fake.base_url());
    let body = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]});
    let client = Client::new();

    let (status, _, missing) =
        json_of(client.post(&url).json(&body).send().await.expect("send")).await;
    assert_eq!(status, 401);
    assert_eq!(missing["error"]["type"], "invalid_request_error");
    assert!(missing["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("You didn't provide an API key")));

    let resp = client
        .post(&url)
        .bearer_auth("sk-wrong-key-123456")
        .json(&body)
        .send()
        .await
        .expect("send");
    let (status, _, wrong) = json_of(resp).await;
    assert_error(status, &wrong, 401, "invalid_api_key");
    let message = wrong["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("Incorrect API key provided: sk-"),
        "{message}"
    );
    assert!(
        !message.contains("wrong-key"),
        "the key is redacted: {message}"
    );

    let (status, _, ok) = chat(&fake, &body).await;
    assert_eq!(status, 200, "{ok}");
    let recorded = fake.recorded();
    assert_eq!(recorded.len(), 3);
    assert_eq!(recorded[0].header("authorization"), None);
    assert_eq!(
        recorded[2].header("Authorization"),
        Some(format!("Bearer {}", FakeOpenAi::API_KEY).as_str())
    );
    assert_eq!(recorded[2].path, "/v1/chat/completions");
    assert_eq!(fake.requests().len(), 3, "refused bodies are kept too");

    // Ollama ignores the header entirely.
    let local = FakeOpenAi::start_with(OpenAiOptions::ollama()).await;
    let resp = client
        .post(format!("{}/chat/completions", local.base_url()))
        .json(&body)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn png_data_url_answer_proves_what_arrived() {
    let fake = FakeOpenAi::start().await;
    let png = media("login.png");
    let (status, headers, answer) =
        chat(&fake, &with_image("gpt-4o", &data_url("image/png", &png))).await;
    assert_eq!(status, 200, "{answer}");
    assert!(headers.get("x-request-id").is_some());
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "gpt-4o");
    assert!(answer["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("chatcmpl-")));
    assert!(answer["created"]
        .as_u64()
        .is_some_and(|t| t > 1_700_000_000));
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["choices"][0]["message"]["role"], "assistant");

    let text = content(&answer);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "label: Frame at 00:03.0:");
    assert_eq!(
        lines[1],
        format!(
            "image 1: image/png, 800x500 px, {} bytes, sha256 {}",
            png.len(),
            sha_hex(&png)
        )
    );
    assert_eq!(lines[2], "prompt: Is the login form visible?");

    // 800x500 is two 512 px tiles: 85 + 2 * 170 tokens, plus text and framing.
    let usage = &answer["usage"];
    let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
    let completion = usage["completion_tokens"].as_u64().unwrap_or(0);
    assert!(prompt > 425 && prompt < 500, "{usage}");
    assert_eq!(completion, (text.chars().count() as u64).div_ceil(4));
    assert_eq!(usage["total_tokens"].as_u64(), Some(prompt + completion));

    // The same request again gives the same answer and usage (deterministic).
    let (_, _, again) = chat(&fake, &with_image("gpt-4o", &data_url("image/png", &png))).await;
    assert_eq!(content(&again), text);
    assert_eq!(again["usage"], answer["usage"]);

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0]["messages"][1]["content"][1]["image_url"]["detail"],
        "auto"
    );

    fake.set_reply_text(Some("The login form is visible.".into()));
    let (_, _, replaced) = chat(&fake, &with_image("gpt-4o", &data_url("image/png", &png))).await;
    assert_eq!(content(&replaced), "The login form is visible.");
    assert_eq!(replaced["usage"]["completion_tokens"], 7);
}

#[tokio::test]
async fn zai_path_and_remote_urls() {
    let fake = FakeOpenAi::start_with(OpenAiOptions::zai()).await;
    let origin = fake.base_url().trim_end_matches("/v1").to_string();
    let body = with_image("glm-4.6v", "https://example.com/shot.png");
    let resp = Client::new()
        .post(format!("{origin}/api/paas/v4/chat/completions"))
        .bearer_auth(FakeOpenAi::API_KEY)
        .json(&body)
        .send()
        .await
        .expect("send");
    let (status, _, answer) = json_of(resp).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        content(&answer).contains("image 1: remote https://example.com/shot.png (not fetched)"),
        "{answer}"
    );
    assert_eq!(fake.recorded()[0].path, "/api/paas/v4/chat/completions");
}

#[tokio::test]
async fn image_formats_are_checked_by_their_bytes() {
    let fake = FakeOpenAi::start().await;
    for (url, why) in [
        (data_url("image/bmp", &bmp()), "bmp is not supported"),
        (data_url("image/png", &bmp()), "bmp bytes labelled png"),
        (
            data_url("image/png", &jpeg(800, 500)),
            "jpeg bytes labelled png",
        ),
    ] {
        let (status, _, body) = chat(&fake, &with_image("gpt-4o", &url)).await;
        assert_error(status, &body, 400, "invalid_image_format");
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.starts_with("Invalid image format"),
            "{why}: {message}"
        );
        assert!(
            message.contains("supported formats are"),
            "{why}: {message}"
        );
    }
    // Declared and real format agree: accepted, with the header's dimensions.
    for (mime, bytes) in [
        ("image/jpeg", jpeg(1280, 720)),
        ("image/jpg", jpeg(1280, 720)),
        ("image/webp", webp(640, 480)),
    ] {
        let (status, _, body) = chat(&fake, &with_image("gpt-4o", &data_url(mime, &bytes))).await;
        assert_eq!(status, 200, "{mime}: {body}");
        assert!(
            content(&body).contains(&format!("{} bytes", bytes.len())),
            "{body}"
        );
    }
    let (_, _, body) = chat(
        &fake,
        &with_image("gpt-4o", &data_url("image/webp", &webp(640, 480))),
    )
    .await;
    assert!(
        content(&body).contains("image 1: image/webp, 640x480 px"),
        "{body}"
    );

    let (status, _, body) = chat(
        &fake,
        &with_image("gpt-4o", "data:image/png;base64,!!not base64!!"),
    )
    .await;
    assert_error(status, &body, 400, "invalid_image");
    let (status, _, body) = chat(
        &fake,
        &with_image("gpt-4o", &data_url("video/mp4", &media("login-flow.mp4"))),
    )
    .await;
    assert_error(status, &body, 400, "invalid_value");
    let (status, _, body) = chat(&fake, &with_image("gpt-4o", "ftp://example.com/a.png")).await;
    assert_error(status, &body, 400, "invalid_value");

    // z.ai takes png and jpeg only.
    let zai = FakeOpenAi::start_with(OpenAiOptions::zai()).await;
    let (status, _, body) = chat(
        &zai,
        &with_image("glm-4.6v", &data_url("image/webp", &webp(64, 64))),
    )
    .await;
    assert_error(status, &body, 400, "invalid_image_format");
    let (status, _, body) = chat(
        &zai,
        &with_image("glm-4.6v", &data_url("image/png", &media("login.png"))),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn image_bytes_and_sides_are_limited() {
    // 20 MiB decoded per image on OpenAI.
    let fake = FakeOpenAi::start().await;
    let big = png(1000, 1000, 20 * 1024 * 1024);
    let (status, _, body) = chat(&fake, &with_image("gpt-4o", &data_url("image/png", &big))).await;
    assert_error(status, &body, 400, "image_too_large");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("Image too large")));

    // z.ai: 5 MiB.
    let zai = FakeOpenAi::start_with(OpenAiOptions::zai()).await;
    let (status, _, body) = chat(
        &zai,
        &with_image(
            "glm-4.6v",
            &data_url("image/png", &png(100, 100, 5 * 1024 * 1024)),
        ),
    )
    .await;
    assert_error(status, &body, 400, "image_too_large");
    let (status, _, _) = chat(
        &zai,
        &with_image(
            "glm-4.6v",
            &data_url("image/png", &png(100, 100, 4 * 1024 * 1024)),
        ),
    )
    .await;
    assert_eq!(status, 200);

    // A pixel limit, when set, is read from the header.
    let small_side = FakeOpenAi::start_with(OpenAiOptions {
        max_image_side: 640,
        ..OpenAiOptions::default()
    })
    .await;
    let (status, _, body) = chat(
        &small_side,
        &with_image("gpt-4o", &data_url("image/png", &media("login.png"))),
    )
    .await;
    assert_error(status, &body, 400, "image_too_large");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("800x500")),
        "{body}"
    );
    let (status, _, _) = chat(
        &small_side,
        &with_image("gpt-4o", &data_url("image/png", &png(640, 400, 0))),
    )
    .await;
    assert_eq!(status, 200);
}

fn with_video(model: &str, mime: &str, bytes: &[u8]) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": [
            {"type": "video_url", "video_url": {"url": data_url(mime, bytes)}},
            {"type": "text", "text": "Describe the login flow."},
        ]}],
    })
}

#[tokio::test]
async fn video_parts_only_where_the_server_takes_them() {
    let mp4 = media("login-flow.mp4");
    let webm = media("login-flow.webm");

    for options in [OpenAiOptions::openai(), OpenAiOptions::ollama()] {
        let fake = FakeOpenAi::start_with(options).await;
        let (status, _, body) = chat(&fake, &with_video("gpt-4o", "video/mp4", &mp4)).await;
        assert_error(status, &body, 400, "invalid_value");
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.starts_with("Invalid content type. video_url is not supported"),
            "{message}"
        );
    }

    let vllm = FakeOpenAi::start_with(OpenAiOptions::vllm()).await;
    for (mime, bytes) in [("video/mp4", &mp4), ("video/webm", &webm)] {
        let (status, _, body) = chat(
            &vllm,
            &with_video("Qwen/Qwen2.5-VL-7B-Instruct", mime, bytes),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let text = content(&body);
        assert!(
            text.starts_with(&format!(
                "video 1: {mime}, {} bytes, sha256 {}",
                bytes.len(),
                sha_hex(bytes)
            )),
            "{text}"
        );
        assert!(text.ends_with("prompt: Describe the login flow."), "{text}");
    }
    // Labelled mp4 but the bytes are WebM.
    let (status, _, body) = chat(&vllm, &with_video("qwen", "video/mp4", &webm)).await;
    assert_error(status, &body, 400, "invalid_video_format");

    // z.ai lists mp4, mkv and mov, not webm.
    let zai = FakeOpenAi::start_with(OpenAiOptions::zai()).await;
    let (status, _, body) = chat(&zai, &with_video("glm-4.6v", "video/webm", &webm)).await;
    assert_error(status, &body, 400, "invalid_video_format");
    let (status, _, body) = chat(&zai, &with_video("glm-4.6v", "video/mp4", &mp4)).await;
    assert_eq!(status, 200, "{body}");
}

fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "passed": {"type": "boolean"},
            "issues": {"type": "array", "items": {
                "type": "object",
                "properties": {"at": {"type": "string"}, "severity": {"enum": ["low", "high"]}},
                "required": ["at", "severity"],
                "additionalProperties": false,
            }},
        },
        "required": ["summary", "passed", "issues"],
        "additionalProperties": false,
    })
}

#[tokio::test]
async fn json_schema_answers_parse_and_fit_the_schema() {
    let fake = FakeOpenAi::start().await;
    let png = media("login.png");
    let mut body = with_image("gpt-4o", &data_url("image/png", &png));
    body["response_format"] = json!({"type": "json_schema", "json_schema": {
        "name": "gui_verdict", "strict": true, "schema": verdict_schema(),
    }});
    let (status, _, answer) = chat(&fake, &body).await;
    assert_eq!(status, 200, "{answer}");
    let v: Value = serde_json::from_str(content(&answer)).expect("content is JSON");
    let summary = v["summary"].as_str().expect("summary string");
    assert!(summary.contains(&sha_hex(&png)), "{summary}");
    assert!(summary.contains("800x500 px"), "{summary}");
    assert!(v["passed"].is_boolean());
    let issues = v["issues"].as_array().expect("issues array");
    assert!(!issues.is_empty());
    assert!(issues[0]["at"].is_string());
    assert!(matches!(
        issues[0]["severity"].as_str(),
        Some("low" | "high")
    ));

    // Strict mode: every object closed, every property required.
    let mut loose = verdict_schema();
    loose["required"] = json!(["summary"]);
    body["response_format"]["json_schema"]["schema"] = loose;
    let (status, _, error) = chat(&fake, &body).await;
    assert_eq!(status, 400, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("'required' is required to be supplied")),
        "{error}"
    );
    // vLLM ignores `strict`.
    let vllm = FakeOpenAi::start_with(OpenAiOptions::vllm()).await;
    let (status, _, _) = chat(&vllm, &body).await;
    assert_eq!(status, 200);

    // json_object needs the word "json" in the messages.
    body["response_format"] = json!({"type": "json_object"});
    let (status, _, error) = chat(&fake, &body).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["param"], "messages");
    body["messages"][0]["content"] = json!("Answer in JSON.");
    let (status, _, answer) = chat(&fake, &body).await;
    assert_eq!(status, 200, "{answer}");
    let v: Value = serde_json::from_str(content(&answer)).expect("content is JSON");
    assert_eq!(v["media"][0]["sha256"], sha_hex(&png));
    assert_eq!(v["media"][0]["width"], 800);
}

#[tokio::test]
async fn request_fields_are_checked() {
    let fake = FakeOpenAi::start().await;
    let (status, _, body) = chat(
        &fake,
        &json!({"messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "you must provide a model parameter"
    );
    let (status, _, body) = chat(&fake, &json!({"model": "gpt-4o"})).await;
    assert_error(status, &body, 400, "missing_required_parameter");
    let (status, _, body) = chat(&fake, &json!({"model": "gpt-4o", "messages": []})).await;
    assert_error(status, &body, 400, "empty_array");
    let (status, _, body) = chat(
        &fake,
        &json!({"model": "gpt-4o", "messages": [{"role": "robot", "content": "hi"}]}),
    )
    .await;
    assert_error(status, &body, 400, "invalid_value");
    let (status, _, body) = chat(&fake, &json!({"model": "gpt-4o", "temperature": 3, "messages": [{"role": "user", "content": "hi"}]})).await;
    assert_error(status, &body, 400, "decimal_above_max_value");

    // Images only in user messages; details are auto, low or high.
    let mut system_image = with_image("gpt-4o", "https://example.com/a.png");
    system_image["messages"][0]["content"] =
        json!([{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]);
    let (status, _, _) = chat(&fake, &system_image).await;
    assert_eq!(status, 400);
    let mut detail = with_image("gpt-4o", "https://example.com/a.png");
    detail["messages"][1]["content"][1]["image_url"]["detail"] = json!("ultra");
    let (status, _, body) = chat(&fake, &detail).await;
    assert_error(status, &body, 400, "invalid_value");

    // Reasoning models take max_completion_tokens and the default temperature only.
    let hi = json!([{"role": "user", "content": "hi"}]);
    let (status, _, body) = chat(
        &fake,
        &json!({"model": "gpt-5-mini", "max_tokens": 100, "messages": hi}),
    )
    .await;
    assert_error(status, &body, 400, "unsupported_parameter");
    let (status, _, body) = chat(
        &fake,
        &json!({"model": "o4-mini", "temperature": 0.2, "messages": hi}),
    )
    .await;
    assert_error(status, &body, 400, "unsupported_value");
    // `reasoning_effort` only on a reasoning model, with a value that model takes.
    for (model, effort, code) in [
        ("gpt-4.1", "high", "unsupported_parameter"),
        ("gpt-5.1", "minimal", "unsupported_value"),
        ("o3", "none", "unsupported_value"),
    ] {
        let (status, _, body) = chat(
            &fake,
            &json!({"model": model, "reasoning_effort": effort, "messages": hi}),
        )
        .await;
        assert_error(status, &body, 400, code);
    }
    for (model, effort) in [
        ("gpt-5.1", "none"),
        ("gpt-5-mini", "minimal"),
        ("o4-mini", "low"),
    ] {
        let (status, _, body) = chat(
            &fake,
            &json!({"model": model, "reasoning_effort": effort, "messages": hi}),
        )
        .await;
        assert_eq!(status, 200, "{model} {effort}: {body}");
    }
    // Their thinking shares the budget: a small one leaves no visible answer.
    let (status, _, body) = chat(
        &fake,
        &json!({"model": "gpt-5-mini", "max_completion_tokens": 50, "messages": hi}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(content(&body), "");
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(
        body["usage"]["completion_tokens_details"]["reasoning_tokens"],
        50
    );

    // A short limit cuts the answer.
    let (status, _, body) = chat(
        &fake,
        &json!({"model": "gpt-4o", "max_tokens": 3, "messages": hi}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(content(&body).chars().count(), 12);
    assert_eq!(body["usage"]["completion_tokens"], 3);

    let resp = Client::new()
        .post(format!("{}/chat/completions", fake.base_url()))
        .bearer_auth(FakeOpenAi::API_KEY)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("send");
    let (status, _, body) = json_of(resp).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("could not parse the JSON body")));
}

#[tokio::test]
async fn faults_are_used_once_in_order_before_the_key_check() {
    let fake = FakeOpenAi::start().await;
    let hi = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]});
    fake.push_fault(Fault::RateLimited {
        retry_after_secs: 7,
    });
    fake.push_fault(Fault::Status(503));
    fake.push_fault(Fault::Status(500));
    fake.push_fault(Fault::Status(429));

    // No key at all: the fault still comes first.
    let resp = Client::new()
        .post(format!("{}/chat/completions", fake.base_url()))
        .json(&hi)
        .send()
        .await
        .expect("send");
    let (status, headers, body) = json_of(resp).await;
    assert_error(status, &body, 429, "rate_limit_exceeded");
    assert_eq!(body["error"]["type"], "requests");
    assert_eq!(
        headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("7")
    );

    let (status, _, body) = chat(&fake, &hi).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["type"], "server_error");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("overloaded")));
    let (status, _, body) = chat(&fake, &hi).await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["type"], "server_error");
    let (status, headers, body) = chat(&fake, &hi).await;
    assert_error(status, &body, 429, "rate_limit_exceeded");
    assert!(
        headers.get("retry-after").is_none(),
        "a plain 429 has no retry-after"
    );
    let (status, _, _) = chat(&fake, &hi).await;
    assert_eq!(status, 200);
    assert_eq!(fake.requests().len(), 5, "every attempt is recorded");

    fake.push_fault(Fault::Delay(Duration::from_millis(300)));
    let started = Instant::now();
    let (status, _, _) = chat(&fake, &hi).await;
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn bodies_over_64_mb_are_refused() {
    let fake = FakeOpenAi::start().await;
    let huge = format!(
        r#"{{"model":"gpt-4o","messages":[{{"role":"user","content":"{}"}}]}}"#,
        "a".repeat(64 * 1024 * 1024)
    );
    let resp = Client::new()
        .post(format!("{}/chat/completions", fake.base_url()))
        .bearer_auth(FakeOpenAi::API_KEY)
        .header("content-type", "application/json")
        .body(huge.clone())
        .send()
        .await
        .expect("send");
    let (status, _, body) = json_of(resp).await;
    assert_error(status, &body, 413, "request_too_large");
    let recorded = fake.recorded();
    assert_eq!(recorded[0].body_len, huge.len() as u64);
    assert!(fake.requests().is_empty());
}
