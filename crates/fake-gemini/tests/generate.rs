//! generateContent protocol tests: answers that prove the bytes, file states, validation,
//! snake_case, inline base64, JSON schema answers, streaming, usage and auth.

mod common;

use base64::Engine;
use common::*;
use fake_gemini::FakeGemini;
use reqwest::Client;
use serde_json::{json, Value};

fn b64_url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn default_answer_proves_the_bytes_arrived() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let video = data(40_000);
    let file = active_file(&fake, &client, &video, "video/webm").await;
    let image = data(777);
    let prompt = "Describe the login flow step by step. ".repeat(10);
    let body = json!({
        "systemInstruction": {"parts": [{"text": "You are a QA engineer."}]},
        "contents": [{"role": "user", "parts": [
            file_part(&file),
            {"inlineData": {"mimeType": "image/png", "data": base64::engine::general_purpose::STANDARD.encode(&image)}},
            {"text": prompt}
        ]}],
        "generationConfig": {"temperature": 0.2, "maxOutputTokens": 2048}
    });
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
    assert_eq!(r.status(), 200);
    let resp: Value = r.json().await.expect("json");
    let text = answer_text(&resp);
    assert!(
        text.contains(&format!(
            "media 1: video/webm, 40000 bytes, sha256 {}",
            sha_hex(&video)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "media 2: image/png, 777 bytes, sha256 {}",
            sha_hex(&image)
        )),
        "{text}"
    );
    let echo: String = prompt.chars().take(200).collect();
    assert!(text.contains(echo.trim_end()), "{text}");
    assert!(text.contains("00:00 "), "{text}");

    let c = &resp["candidates"][0];
    assert_eq!(c["finishReason"], "STOP");
    assert_eq!(c["index"], 0);
    assert_eq!(c["content"]["role"], "model");
    assert_eq!(resp["modelVersion"], "gemini-3.5-flash-lite");
    assert!(resp["responseId"].as_str().is_some_and(|s| !s.is_empty()));

    // Usage on a Gemini 3 model: 6 s of video at 1 fps (70/frame at the default resolution; no
    // sound track, so no audio tokens), one image (1120 at the default), text chars / 4.
    let u = &resp["usageMetadata"];
    let p = u["promptTokenCount"].as_u64().expect("prompt");
    let c = u["candidatesTokenCount"].as_u64().expect("candidates");
    let t = u["thoughtsTokenCount"].as_u64().unwrap_or(0);
    assert_eq!(u["totalTokenCount"].as_u64(), Some(p + c + t));
    assert_eq!(c, (text.chars().count() as u64).div_ceil(4));
    let details = u["promptTokensDetails"].as_array().expect("details");
    let count = |m: &str| {
        details
            .iter()
            .find(|d| d["modality"] == m)
            .and_then(|d| d["tokenCount"].as_u64())
    };
    assert_eq!(count("VIDEO"), Some(6 * 70));
    assert_eq!(count("IMAGE"), Some(1120));
    let text_tokens =
        ("You are a QA engineer.".len() as u64).div_ceil(4) + (prompt.len() as u64).div_ceil(4);
    assert_eq!(count("TEXT"), Some(text_tokens));
    assert_eq!(p, 6 * 70 + 1120 + text_tokens);

    assert_eq!(fake.generate_requests(), vec![body]);
}

#[tokio::test]
async fn file_must_be_active_and_exist() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let file = upload(&fake, &client, &data(1000), "video/webm").await;
    assert_eq!(file["state"], "PROCESSING");
    let body = json!({"contents": [{"parts": [file_part(&file), {"text": "Describe"}]}]});
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
    let e = expect_error(r, 400, "FAILED_PRECONDITION").await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("not in an ACTIVE state"));

    // FAILED files are refused the same way.
    fake.set_fail_processing(true);
    let failed = upload(&fake, &client, &data(10), "video/webm").await;
    let failed = wait_processed(&fake, &client, failed["name"].as_str().expect("name")).await;
    let r = generate(
        &fake,
        &client,
        "gemini-3.5-flash-lite",
        &json!({"contents": [{"parts": [file_part(&failed)]}]}),
    )
    .await;
    expect_error(r, 400, "FAILED_PRECONDITION").await;

    // Deleted or unknown: 403.
    let name = file["name"].as_str().expect("name");
    client
        .delete(format!("{}/v1beta/{name}", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("delete");
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
    let e = expect_error(r, 403, "PERMISSION_DENIED").await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("You do not have permission to access the File"));
}

#[tokio::test]
async fn snake_case_request_and_url_safe_base64() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let video = data(3000);
    let file = active_file(&fake, &client, &video, "video/mp4").await;
    let image: Vec<u8> = (0..=255u8).cycle().take(3000).collect(); // has '+' and '/' in standard base64
    let body = json!({
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [
            {"file_data": {"file_uri": file["uri"], "mime_type": "video/mp4"},
             "video_metadata": {"start_offset": "1s", "end_offset": "4s", "fps": 2.0}},
            {"inline_data": {"mime_type": "image/jpeg", "data": b64_url(&image)}},
            {"text": "What happens?"}
        ]}],
        "generation_config": {"max_output_tokens": 4096, "response_mime_type": "text/plain",
                               "thinking_config": {"thinking_budget": 0}}
    });
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
    assert_eq!(r.status(), 200);
    let resp: Value = r.json().await.expect("json");
    let text = answer_text(&resp);
    assert!(text.contains(&sha_hex(&video)), "{text}");
    assert!(text.contains(&sha_hex(&image)), "{text}");
    // 3 s clip at 2 fps: 6 frames, 70 each on a Gemini 3 model.
    let details = resp["usageMetadata"]["promptTokensDetails"]
        .as_array()
        .expect("details")
        .clone();
    let video_tokens = details
        .iter()
        .find(|d| d["modality"] == "VIDEO")
        .and_then(|d| d["tokenCount"].as_u64());
    assert_eq!(video_tokens, Some(6 * 70));
    assert!(resp["usageMetadata"].get("thoughtsTokenCount").is_none());
}

#[tokio::test]
async fn bad_inline_base64_fps_and_mime_are_refused() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let file = active_file(&fake, &client, &data(100), "video/webm").await;
    let cases = [
        json!({"contents": [{"parts": [{"inlineData": {"mimeType": "image/png", "data": "not base64!!"}}]}]}),
        json!({"contents": [{"parts": [file_part(&file).as_object().cloned().map(|mut o| { o.insert("videoMetadata".into(), json!({"fps": 30})); Value::Object(o) }).unwrap_or_default()]}]}),
        json!({"contents": [{"parts": [file_part(&file).as_object().cloned().map(|mut o| { o.insert("videoMetadata".into(), json!({"fps": 0})); Value::Object(o) }).unwrap_or_default()]}]}),
        json!({"contents": [{"parts": [file_part(&file).as_object().cloned().map(|mut o| { o.insert("videoMetadata".into(), json!({"startOffset": "2"})); Value::Object(o) }).unwrap_or_default()]}]}),
        json!({"contents": [{"parts": [{"inlineData": {"mimeType": "application/x-foo", "data": "AAAA"}}]}]}),
        json!({"contents": [{"parts": [{"fileData": {"fileUri": "files/abc", "mimeType": "video/webm"}}]}]}),
    ];
    for body in cases {
        let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
        expect_error(r, 400, "INVALID_ARGUMENT").await;
    }
    // fps 24 is the upper bound and allowed.
    let mut part = file_part(&file);
    part["videoMetadata"] = json!({"fps": 24});
    let r = generate(
        &fake,
        &client,
        "gemini-3.5-flash-lite",
        &json!({"contents": [{"parts": [part]}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn request_shape_is_validated() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let bad = [
        (json!({"contents": []}), "contents is not specified"),
        (json!({}), "contents is not specified"),
        (
            json!({"contents": [{"role": "user", "parts": []}]}),
            "must not be empty",
        ),
        (
            json!({"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]}),
            "valid role",
        ),
        (json!({"contents": [{"parts": [{}]}]}), "oneof field 'data'"),
        (
            json!({"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"thinkingBudget": 0}}),
            "Unknown name \"thinkingBudget\" at 'generation_config'",
        ),
        (
            json!({"contents": [{"parts": [{"text": "hi"}]}], "generation_config": {"temperature": 3}}),
            "temperature",
        ),
        (
            json!({"contents": [{"parts": [{"text": "hi"}]}], "prompt": "x"}),
            "Unknown name \"prompt\"",
        ),
    ];
    for (body, message) in bad {
        let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
        let e = expect_error(r, 400, "INVALID_ARGUMENT").await;
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains(message),
            "{e}"
        );
    }
    let r = client
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash-lite:generateContent",
            fake.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .body("{not json")
        .send()
        .await
        .expect("send");
    expect_error(r, 400, "INVALID_ARGUMENT").await;

    let ok = json!({"contents": [{"parts": [{"text": "hi"}]}]});
    let r = generate(&fake, &client, "gpt-4o", &ok).await;
    expect_error(r, 404, "NOT_FOUND").await;
    let r = generate(&fake, &client, "gemini-9.9-anything", &ok).await;
    expect_error(r, 404, "NOT_FOUND").await;
    // Both prefixes.
    let r = client
        .post(format!(
            "{}/v1/models/gemini-3.1-pro-preview:generateContent",
            fake.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .json(&ok)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn api_key_is_checked() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let url = format!(
        "{}/v1beta/models/gemini-3.5-flash-lite:generateContent",
        fake.base_url()
    );
    let ok = json!({"contents": [{"parts": [{"text": "hi"}]}]});

    let r = client
        .post(&url)
        .header("x-goog-api-key", "nope")
        .json(&ok)
        .send()
        .await
        .expect("send");
    let e = expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert_eq!(
        e["error"]["message"],
        "API key not valid. Please pass a valid API key."
    );
    let info = &e["error"]["details"][0];
    assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(info["reason"], "API_KEY_INVALID");
    assert_eq!(info["domain"], "googleapis.com");

    let r = client
        .post(&url)
        .query(&[("key", "nope")])
        .json(&ok)
        .send()
        .await
        .expect("send");
    expect_error(r, 400, "INVALID_ARGUMENT").await;
    let r = client
        .post(&url)
        .query(&[("key", KEY)])
        .json(&ok)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    // No key at all: Google answers 403 PERMISSION_DENIED.
    let r = client.post(&url).json(&ok).send().await.expect("send");
    expect_error(r, 403, "PERMISSION_DENIED").await;
}

#[tokio::test]
async fn streaming_sse_sends_whole_json_chunks() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let video = data(5000);
    let file = active_file(&fake, &client, &video, "video/webm").await;
    let body = json!({"contents": [{"parts": [file_part(&file), {"text": "Describe"}]}]});
    let unary: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &body)
        .await
        .json()
        .await
        .expect("json");

    let r = client
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent",
            fake.base_url()
        ))
        .query(&[("alt", "sse")])
        .header("x-goog-api-key", KEY)
        .json(&body)
        .send()
        .await
        .expect("stream");
    assert_eq!(r.status(), 200);
    assert!(header(&r, "content-type")
        .unwrap_or_default()
        .starts_with("text/event-stream"));
    let raw = r.text().await.expect("text");
    let chunks: Vec<Value> = raw
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).expect("each data line is a whole JSON response"))
        .collect();
    assert!(chunks.len() >= 2, "{raw}");
    let text: String = chunks.iter().map(answer_text).collect();
    assert_eq!(text, answer_text(&unary));
    assert!(text.contains(&sha_hex(&video)));
    let last = chunks.last().expect("last");
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"], unary["usageMetadata"]);
    for c in &chunks[..chunks.len() - 1] {
        assert!(c["candidates"][0].get("finishReason").is_none());
        assert!(c["usageMetadata"].get("candidatesTokenCount").is_none());
    }

    // Without alt=sse the stream is a JSON array of responses.
    let r = client
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent",
            fake.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .json(&body)
        .send()
        .await
        .expect("stream");
    let arr: Vec<Value> = r.json().await.expect("json array");
    assert_eq!(arr.iter().map(answer_text).collect::<String>(), text);
}

#[tokio::test]
async fn json_schema_answer_validates() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let video = data(2048);
    let file = active_file(&fake, &client, &video, "video/webm").await;
    let schema = json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "passed": {"type": "boolean"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}},
            "verdict": {"type": "string", "enum": ["pass", "fail", "unclear"]},
            "bug": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        },
        "required": ["summary", "passed", "steps", "verdict"],
        "$defs": {"Step": {"type": "object", "properties": {"t": {"type": "integer"}, "what": {"type": "string"}}, "required": ["t", "what"]}}
    });
    let body = json!({
        "contents": [{"parts": [file_part(&file), {"text": "Report"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema}
    });
    let resp: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &body)
        .await
        .json()
        .await
        .expect("json");
    let answer: Value = serde_json::from_str(&answer_text(&resp)).expect("answer is JSON");
    assert!(
        answer["summary"]
            .as_str()
            .is_some_and(|s| s.contains(&sha_hex(&video))),
        "{answer}"
    );
    assert_eq!(answer["passed"], true);
    assert_eq!(answer["confidence"], 1);
    assert_eq!(answer["verdict"], "pass");
    assert_eq!(answer["steps"][0]["t"], 1);
    assert!(answer["steps"][0]["what"].is_string());
    assert!(answer["bug"].is_string());

    // Gemini's OpenAPI-style responseSchema.
    let body = json!({
        "contents": [{"parts": [{"text": "Report"}]}],
        "generation_config": {"response_mime_type": "application/json",
            "response_schema": {"type": "OBJECT", "properties": {"ok": {"type": "BOOLEAN"}, "notes": {"type": "ARRAY", "items": {"type": "STRING"}}}, "required": ["ok"]}}
    });
    let resp: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &body)
        .await
        .json()
        .await
        .expect("json");
    let answer: Value = serde_json::from_str(&answer_text(&resp)).expect("answer is JSON");
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["notes"].as_array().map(Vec::len), Some(1));

    // responseSchema refuses JSON-Schema-only keywords; a schema needs the JSON mime type.
    let bad = [
        json!({"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "additionalProperties": false}}),
        json!({"responseJsonSchema": {"type": "object"}}),
        json!({"responseMimeType": "text/html"}),
    ];
    for gc in bad {
        let body = json!({"contents": [{"parts": [{"text": "x"}]}], "generationConfig": gc});
        let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
        expect_error(r, 400, "INVALID_ARGUMENT").await;
    }
}

#[tokio::test]
async fn reply_text_override_and_output_limits() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    fake.set_reply_text(Some("Exactly this.".into()));
    // Thinking off (budget 0): no thoughts.
    let body = json!({"contents": [{"parts": [{"text": "hi"}]}],
        "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}});
    let resp: Value = generate(&fake, &client, "gemini-2.5-flash-lite", &body)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(answer_text(&resp), "Exactly this.");
    assert_eq!(resp["usageMetadata"]["candidatesTokenCount"], 4);
    // Thinking off: no thoughts.
    assert!(resp["usageMetadata"].get("thoughtsTokenCount").is_none());
    assert_eq!(resp["usageMetadata"]["totalTokenCount"], 1 + 4);

    // Thinking uses the output budget: a tiny maxOutputTokens leaves no text at all.
    let body = json!({"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 50}});
    let resp: Value = generate(&fake, &client, "gemini-3.5-flash-lite", &body)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(resp["candidates"][0]["finishReason"], "MAX_TOKENS");
    assert!(resp["candidates"][0]["content"].get("parts").is_none());
    assert_eq!(resp["usageMetadata"]["thoughtsTokenCount"], 50);

    // includeThoughts: the thought is a separate part flagged `thought: true`.
    fake.set_reply_text(None);
    let body = json!({"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"thinkingConfig": {"includeThoughts": true}}});
    let resp: Value = generate(&fake, &client, "gemini-3.1-pro-preview", &body)
        .await
        .json()
        .await
        .expect("json");
    let parts = resp["candidates"][0]["content"]["parts"]
        .as_array()
        .expect("parts");
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["thought"], true);
    assert!(answer_text(&resp).contains("prompt: hi"));
}

#[tokio::test]
async fn count_tokens_matches_usage() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let file = active_file(&fake, &client, &data(100), "video/webm").await;
    let contents = json!([{"parts": [file_part(&file), {"text": "Describe"}]}]);
    let resp: Value = generate(
        &fake,
        &client,
        "gemini-3.5-flash-lite",
        &json!({"contents": contents}),
    )
    .await
    .json()
    .await
    .expect("json");
    let r = client
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash-lite:countTokens",
            fake.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .json(&json!({"contents": contents}))
        .send()
        .await
        .expect("count");
    let ct: Value = r.json().await.expect("json");
    assert_eq!(ct["totalTokens"], resp["usageMetadata"]["promptTokenCount"]);
}

#[tokio::test]
async fn request_payload_is_limited_to_20_mib() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let big = base64::engine::general_purpose::STANDARD.encode(data(16 * 1024 * 1024));
    let body =
        json!({"contents": [{"parts": [{"inlineData": {"mimeType": "video/mp4", "data": big}}]}]});
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &body).await;
    let e = expect_error(r, 400, "INVALID_ARGUMENT").await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("20971520"));
}

/// Prompt tokens by modality, from `usageMetadata.promptTokensDetails`.
fn tokens_of(resp: &Value, modality: &str) -> u64 {
    resp["usageMetadata"]["promptTokensDetails"]
        .as_array()
        .expect("details")
        .iter()
        .filter(|d| d["modality"] == modality)
        .filter_map(|d| d["tokenCount"].as_u64())
        .sum()
}

#[tokio::test]
async fn media_is_billed_by_model_family_and_resolution() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    // No header: Gemini's 6 s are assumed.
    let file = active_file(&fake, &client, &data(30_000), "video/webm").await;
    let image = base64::engine::general_purpose::STANDARD.encode(data(500));
    let body = |config: Value| {
        let mut clip = file_part(&file);
        clip["videoMetadata"] = json!({"startOffset": "0s", "endOffset": "2s", "fps": 1.0});
        clip["mediaResolution"] = json!({"level": "MEDIA_RESOLUTION_HIGH"});
        json!({
            "contents": [{"role": "user", "parts": [
                file_part(&file),
                clip,
                {"inlineData": {"mimeType": "image/png", "data": image},
                 "mediaResolution": {"level": "MEDIA_RESOLUTION_MEDIUM"}},
                {"inlineData": {"mimeType": "image/png", "data": image}},
                {"text": "Describe"}]}],
            "generationConfig": config
        })
    };
    let ask = |model: &'static str, body: Value| {
        let (fake, client) = (&fake, &client);
        async move {
            let r = generate(fake, client, model, &body).await;
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.expect("json")
        }
    };
    // Gemini 2.x: 258 a frame and an image; a part's own setting is not taken.
    let two = ask("gemini-2.5-flash-lite", body(json!({}))).await;
    assert_eq!(tokens_of(&two, "VIDEO"), (6 + 2) * 258);
    assert_eq!(tokens_of(&two, "IMAGE"), 2 * 258);
    let two_low = ask(
        "gemini-2.5-flash-lite",
        body(json!({"mediaResolution": "MEDIA_RESOLUTION_LOW"})),
    )
    .await;
    assert_eq!(tokens_of(&two_low, "VIDEO"), (6 + 2) * 66);
    assert_eq!(tokens_of(&two_low, "IMAGE"), 2 * 66);
    // Gemini 3: 70 a frame by default, 280 at HIGH; images 560 at MEDIUM, 1120 by default.
    let three = ask("gemini-3.5-flash-lite", body(json!({}))).await;
    assert_eq!(tokens_of(&three, "VIDEO"), 6 * 70 + 2 * 280);
    assert_eq!(tokens_of(&three, "IMAGE"), 560 + 1120);
    // The request's setting applies where a part sets none.
    let three_low = ask(
        "gemini-3.5-flash-lite",
        body(json!({"mediaResolution": "MEDIA_RESOLUTION_LOW"})),
    )
    .await;
    assert_eq!(tokens_of(&three_low, "VIDEO"), 6 * 70 + 2 * 280);
    assert_eq!(tokens_of(&three_low, "IMAGE"), 560 + 280);
    // ULTRA_HIGH is per part only; a part's level must be one of the enum's.
    let r = generate(
        &fake,
        &client,
        "gemini-3.5-flash-lite",
        &body(json!({"mediaResolution": "MEDIA_RESOLUTION_ULTRA_HIGH"})),
    )
    .await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;
    let mut wrong = body(json!({}));
    wrong["contents"][0]["parts"][2]["mediaResolution"] = json!({"level": "SHARP"});
    let r = generate(&fake, &client, "gemini-3.5-flash-lite", &wrong).await;
    expect_error(r, 400, "INVALID_ARGUMENT").await;
    let mut ultra = body(json!({}));
    ultra["contents"][0]["parts"][2]["mediaResolution"] =
        json!({"level": "MEDIA_RESOLUTION_ULTRA_HIGH"});
    let three_ultra = ask("gemini-3.5-flash-lite", ultra).await;
    assert_eq!(tokens_of(&three_ultra, "IMAGE"), 2240 + 1120);
}

#[tokio::test]
async fn thinking_levels_are_held_to_each_models_rules() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let asked = |level: &str| {
        json!({"contents": [{"parts": [{"text": "hi"}]}],
               "generationConfig": {"thinkingConfig": {"thinkingLevel": level}}})
    };
    // What Google refuses: a level before Gemini 3, a level the model does not have.
    for (model, level, message) in [
        (
            "gemini-2.5-flash-lite",
            "low",
            "Thinking level is not supported for this model.",
        ),
        (
            "gemini-3.8-flash",
            "minimal",
            "Thinking level MINIMAL is not supported for this model.",
        ),
        (
            "gemini-3.1-pro-preview",
            "minimal",
            "Thinking level MINIMAL is not supported for this model.",
        ),
    ] {
        let r = generate(&fake, &client, model, &asked(level)).await;
        let e = expect_error(r, 400, "INVALID_ARGUMENT").await;
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains(message),
            "{model}: {e}"
        );
    }
    for (model, level) in [
        ("gemini-3.5-flash-lite", "minimal"),
        ("gemini-3.8-flash", "medium"),
        ("gemini-3.1-pro-preview", "high"),
    ] {
        let r = generate(&fake, &client, model, &asked(level)).await;
        assert_eq!(r.status(), 200, "{model} {level}");
    }
    assert!(
        fake.guidance_notes().is_empty(),
        "{:?}",
        fake.guidance_notes()
    );
    // What Google accepts but advises against on Gemini 3 is noted, not refused.
    let lowered = json!({"contents": [{"parts": [{"text": "hi"}]}],
                         "generationConfig": {"temperature": 0.2}});
    let r = generate(&fake, &client, "gemini-3.5-flash", &lowered).await;
    assert_eq!(r.status(), 200);
    let notes = fake.guidance_notes();
    assert!(
        notes.iter().any(|n| n.contains("temperature 0.2")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("no thinkingLevel")),
        "{notes:?}"
    );
    // Gemini 2.x keeps its old knobs.
    let r = generate(&fake, &client, "gemini-2.5-flash-lite", &lowered).await;
    assert_eq!(r.status(), 200);
    assert_eq!(fake.guidance_notes().len(), notes.len());
}
