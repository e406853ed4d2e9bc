//! The MCP door end to end: rmcp's client over real HTTP to a real server, which talks to the
//! fake Gemini over real HTTP. What agents rely on: the tool list and schemas, descriptions of
//! real Playwright recordings, verdicts, progress, roots, caching, and clear errors.

mod common;

use common::*;
use fake_gemini::{Endpoint, Fault};
use serde_json::{json, Value};

#[tokio::test]
async fn tools_are_listed_with_schemas_agents_can_use() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let info = client.peer_info().expect("initialize result");
    assert_eq!(info.server_info.as_ref().unwrap().name, "vaider");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in ["analyze_video", "analyze_image", "vaider_status"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let video = tools.iter().find(|t| t.name == "analyze_video").unwrap();
    let input = serde_json::to_value(&*video.input_schema).unwrap();
    assert_eq!(input["required"], json!(["video_source"]));
    for arg in [
        "prompt",
        "expectations",
        "model",
        "timeout_sec",
        "no_cache",
        "cwd",
        "sampling",
    ] {
        assert!(
            input["properties"][arg].is_object(),
            "argument {arg} missing"
        );
    }
    // Gemini-based clients reject the ["string","null"] dialect: optional arguments are plain.
    assert!(!input.to_string().contains("\"null\""), "{input}");
    let output =
        serde_json::to_value(video.output_schema.as_deref().expect("outputSchema")).unwrap();
    for field in [
        "description",
        "provider",
        "model",
        "durationMs",
        "usage",
        "costUsd",
        "cached",
        "interactionId",
        "logDir",
    ] {
        assert!(
            output["properties"][field].is_object(),
            "outputSchema lacks {field}"
        );
    }
    client.cancel().await.unwrap();
}

/// Every `format` value anywhere in a schema, with the path to it.
fn formats(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                let path = format!("{at}/{key}");
                match (key.as_str(), inner) {
                    ("format", Value::String(format)) => out.push((path, format.clone())),
                    _ => formats(inner, &path, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                formats(inner, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn tool_schemas_are_standard_json_schema() {
    // Formats JSON Schema 2020-12 defines; clients warn about any other ("unknown format").
    const STANDARD: &[&str] = &[
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.len() >= 9, "{} tools", tools.len());
    let mut found = Vec::new();
    for tool in &tools {
        let input = serde_json::to_value(&*tool.input_schema).unwrap();
        formats(&input, &format!("{}/input", tool.name), &mut found);
        if let Some(output) = tool.output_schema.as_deref() {
            let output = serde_json::to_value(output).unwrap();
            formats(&output, &format!("{}/output", tool.name), &mut found);
        }
    }
    let unknown: Vec<_> = found
        .iter()
        .filter(|(_, format)| !STANDARD.contains(&format.as_str()))
        .collect();
    assert!(unknown.is_empty(), "non-standard formats: {unknown:?}");

    // Unsigned numbers are integers from 0, in the input and in the output.
    let video = tools.iter().find(|t| t.name == "analyze_video").unwrap();
    let input = serde_json::to_value(&*video.input_schema).unwrap();
    let timeout = &input["properties"]["timeout_sec"];
    assert_eq!(timeout["type"], "integer", "{timeout}");
    assert_eq!(timeout["minimum"], 0, "{timeout}");
    let output = serde_json::to_value(video.output_schema.as_deref().unwrap()).unwrap();
    for field in ["durationMs", "framesAnalysed"] {
        let schema = &output["properties"][field];
        assert_eq!(schema["type"], "integer", "{field}: {schema}");
        assert_eq!(schema["minimum"], 0, "{field}: {schema}");
    }
    assert_eq!(output["properties"]["costUsd"]["type"], "number");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn analyses_real_playwright_recordings_and_records_them() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    for name in ["login-flow.webm", "login-flow.mp4"] {
        let path = server.media_path(name);
        let result = call(&client, "analyze_video", json!({"video_source": path})).await;
        assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
        let s = result
            .structured_content
            .clone()
            .expect("structuredContent");

        // The fake answers with the sha256 of the bytes it received: they arrived whole.
        let sha = sha256_hex(&path);
        assert!(s["description"].as_str().unwrap().contains(&sha), "{s}");
        assert!(text_of(&result).contains(&sha));
        assert_eq!(s["provider"], "gemini");
        assert!(s["model"]
            .as_str()
            .unwrap()
            .starts_with("gemini-3.5-flash-lite"));
        assert_eq!(s["cached"], false);
        let input = s["usage"]["inputTokens"].as_u64().unwrap();
        let output = s["usage"]["outputTokens"].as_u64().unwrap();
        assert!(input > 0 && output > 0);
        let expected_cost = input as f64 * 0.30 / 1e6 + output as f64 * 2.50 / 1e6;
        assert!(
            (s["costUsd"].as_f64().unwrap() - expected_cost).abs() < 2e-6,
            "{s}"
        );

        // The video went up through the Files API and was deleted afterwards.
        let files = server.fake.files();
        let file = files
            .iter()
            .find(|f| f.sha256_hex == sha)
            .expect("uploaded file");
        assert!(file.deleted, "the upload must be deleted after the answer");
        assert_eq!(
            file.mime_type,
            if name.ends_with("webm") {
                "video/webm"
            } else {
                "video/mp4"
            }
        );

        // request.json and response.json beside the video, and a finished history row.
        let log_dir = std::path::PathBuf::from(s["logDir"].as_str().unwrap());
        assert!(log_dir.starts_with(server.media_path(&format!("{name}.VaiderInteractions"))));
        let request: Value =
            serde_json::from_slice(&std::fs::read(log_dir.join("request.json")).unwrap()).unwrap();
        assert_eq!(request["tool"], "analyze_video");
        assert_eq!(request["door"], "mcp");
        assert_eq!(
            request["media"][0]["sizeBytes"],
            std::fs::metadata(&path).unwrap().len()
        );
        assert_eq!(request["provider"], "gemini");
        let response: Value =
            serde_json::from_slice(&std::fs::read(log_dir.join("response.json")).unwrap()).unwrap();
        assert_eq!(response["status"], "ok");
        assert_eq!(response["result"]["description"], s["description"]);
        // A new file is hashed beside its upload; the hash is kept with the answer.
        assert_eq!(response["sent"]["mediaSha256"][0], sha);
        assert!(response["upstreamCalls"].as_array().unwrap().len() >= 4);
        let row = server
            .engine
            .history()
            .get(s["interactionId"].as_str().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(row.status, vaider_core::history::Status::Ok);
        assert_eq!(row.media_sha256.as_deref(), Some(sha.as_str()));
        assert_eq!(row.input_tokens, input);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn expectations_come_back_with_verdicts_and_evidence() {
    let server = TestServer::start().await;
    server.fake.set_reply_text(Some(
        json!({"description": "00:00 Login form. 00:03 Error 'Wrong password'.",
               "expectations": [
                 {"expectation": "the login form is shown", "verdict": "met", "evidence": "00:00 form visible"},
                 {"expectation": "the dashboard appears", "verdict": "not_met", "evidence": "00:03 an error shows instead"}]})
        .to_string(),
    ));
    let client = server.mcp().await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": server.media_path("login-flow.webm"),
               "expectations": ["the login form is shown", "the dashboard appears"]}),
    )
    .await;
    let s = result.structured_content.clone().unwrap();
    assert_eq!(s["allExpectationsMet"], false);
    assert_eq!(s["expectations"][0]["verdict"], "met");
    assert_eq!(s["expectations"][1]["verdict"], "not_met");
    assert_eq!(
        s["expectations"][1]["evidence"],
        "00:03 an error shows instead"
    );
    assert!(text_of(&result).contains("[NOT MET] the dashboard appears"));
    // The model was asked for JSON following the verdict schema, with both expectations.
    let request = server.fake.generate_requests().pop().unwrap();
    assert_eq!(
        request["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert!(
        request["generationConfig"]["responseJsonSchema"]["properties"]["expectations"].is_object()
    );
    assert!(request.to_string().contains("the dashboard appears"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_repeated_request_is_answered_from_the_cache_at_no_cost() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let args =
        json!({"video_source": server.media_path("login-flow.webm"), "prompt": "What is typed?"});
    let first = call(&client, "analyze_video", args.clone())
        .await
        .structured_content
        .unwrap();
    let uploads = server.fake.files().len();
    let second = call(&client, "analyze_video", args.clone())
        .await
        .structured_content
        .unwrap();
    assert_eq!(second["cached"], true);
    assert_eq!(second["costUsd"], 0.0);
    assert_eq!(second["description"], first["description"]);
    assert_ne!(second["interactionId"], first["interactionId"]);
    assert_eq!(
        server.fake.files().len(),
        uploads,
        "a cached answer uploads nothing"
    );

    // The same bytes under another name are unknown by fingerprint: a small file is hashed
    // before anything is sent, found in the cache, and nothing is uploaded.
    let copy = server.media_path("copy-of-login-flow.webm");
    std::fs::copy(server.media_path("login-flow.webm"), &copy).unwrap();
    let mut same_bytes = args.clone();
    same_bytes["video_source"] = json!(copy);
    let third = call(&client, "analyze_video", same_bytes)
        .await
        .structured_content
        .unwrap();
    assert_eq!(third["cached"], true, "{third}");
    assert_eq!(third["description"], first["description"]);
    assert!(eventually(|| server.fake.files().iter().all(|f| f.deleted)).await);
    let uploads = server.fake.files().len();

    // Another prompt, or no_cache, asks the model again.
    let mut other = args.clone();
    other["prompt"] = json!("Is there an error?");
    assert_eq!(
        call(&client, "analyze_video", other)
            .await
            .structured_content
            .unwrap()["cached"],
        false
    );
    let mut fresh = args;
    fresh["no_cache"] = json!(true);
    assert_eq!(
        call(&client, "analyze_video", fresh)
            .await
            .structured_content
            .unwrap()["cached"],
        false
    );
    assert_eq!(server.fake.files().len(), uploads + 2);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn progress_notifications_follow_upload_processing_and_generation() {
    let server = TestServer::start().await;
    server.fake.set_processing_polls(2);
    let handler = TestClient::default();
    let progress = handler.progress.clone();
    let client = server.mcp_with(handler).await;
    let path = server.media_path("login-flow.webm");
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    let result = call(&client, "analyze_video", json!({"video_source": path})).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    assert!(eventually(|| progress.lock().unwrap().len() >= 4).await);
    let seen = progress.lock().unwrap().clone();
    let values: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must grow: {values:?}"
    );
    assert!(
        seen.iter()
            .any(|p| p.total == Some(size) && p.progress == size),
        "{seen:?}"
    );
    let messages: Vec<String> = seen.iter().filter_map(|p| p.message.clone()).collect();
    assert!(
        messages.iter().any(|m| m.contains("uploading")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("process")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("describing")),
        "{messages:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn relative_paths_resolve_against_the_clients_roots_then_cwd() {
    let server = TestServer::start().await;
    let client = server
        .mcp_with(TestClient {
            roots: vec![server.media.path().to_path_buf()],
            ..Default::default()
        })
        .await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": "login-flow.webm"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    assert_eq!(
        result.structured_content.unwrap()["mediaPath"],
        json!(server.media_path("login-flow.webm"))
    );
    client.cancel().await.unwrap();

    // No roots: the explicit cwd argument.
    let client = server.mcp().await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": "login-flow.mp4", "cwd": server.media.path()}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));

    // Not found anywhere: the error names every place it looked.
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": "nope/video.webm", "cwd": server.media.path()}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.starts_with("INVALID_PATH"), "{text}");
    assert!(
        text.contains(
            &server
                .media
                .path()
                .join("nope/video.webm")
                .display()
                .to_string()
        ),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_input_gets_a_clear_error_and_nothing_is_uploaded() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let webm = std::fs::read(server.media_path("login-flow.webm")).unwrap();
    let cases = [
        (server.media_path("missing.webm"), "does not exist"),
        (server.media.path().to_path_buf(), "directory"),
        (server.write_media("notes.webm", b"just some text, not a video\n"), "not a video or image"),
        (server.write_media("id_rsa", b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"), "private key"),
        (server.write_media("empty.webm", b""), "empty"),
        (server.write_media("cut.webm", &webm[..webm.len() * 6 / 10]), "truncated"),
    ];
    for (path, expected) in &cases {
        let result = call(&client, "analyze_video", json!({"video_source": path})).await;
        assert_eq!(result.is_error, Some(true), "{path:?} was accepted");
        let text = text_of(&result);
        assert!(text.starts_with("INVALID_PATH"), "{text}");
        assert!(text.to_lowercase().contains(expected), "{path:?}: {text}");
        assert!(
            !text.contains("b3BlbnNzaC1rZXk"),
            "the file's content must not be echoed"
        );
    }
    // An image is not a video for analyze_image's counterpart, and vice versa.
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": server.media_path("login-flow.webm")}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));

    // The pipeline's limits hold on this door too.
    let long = call(
        &client,
        "analyze_video",
        json!({"video_source": server.media_path("login-flow.webm"), "timeout_sec": 5000}),
    )
    .await;
    assert!(
        text_of(&long).starts_with("INVALID_REQUEST"),
        "{}",
        text_of(&long)
    );

    // Wrong argument types and unknown tools are refused by the protocol layer.
    let wrong = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("analyze_video")
                .with_arguments(json!({"video_source": 5}).as_object().cloned().unwrap()),
        )
        .await;
    assert!(wrong.is_err() || wrong.unwrap().is_error == Some(true));
    let unknown = client
        .call_tool(rmcp::model::CallToolRequestParams::new("format_disk"))
        .await;
    assert!(unknown.is_err() || unknown.unwrap().is_error == Some(true));

    assert!(
        server.fake.requests().is_empty(),
        "nothing may leave the machine: {:?}",
        server.fake.requests()
    );
    // The server keeps serving.
    let ok = call(
        &client,
        "analyze_video",
        json!({"video_source": server.media_path("login-flow.webm")}),
    )
    .await;
    assert_ne!(ok.is_error, Some(true), "{}", text_of(&ok));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn screenshots_go_inline_and_upstream_errors_are_tool_errors() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let png = server.media_path("login-error.png");
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": png, "prompt": "What error is shown?"}),
    )
    .await;
    let s = result.structured_content.clone().unwrap();
    assert!(s["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&png)));
    assert_eq!(s["framesAnalysed"], 1);
    assert!(
        server.fake.files().is_empty(),
        "a small image is sent inline, not uploaded"
    );
    let request = server.fake.generate_requests().pop().unwrap();
    let parts = &request["contents"][0]["parts"];
    assert_eq!(parts[0]["inlineData"]["mimeType"], "image/png");
    assert_eq!(parts[1]["text"], "What error is shown?");

    server
        .fake
        .push_fault(Endpoint::Generate, Fault::Status(403));
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": png, "no_cache": true}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).starts_with("UPSTREAM_ERROR"),
        "{}",
        text_of(&result)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn status_says_hello_with_version_provider_model_and_key() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let result = call(&client, "vaider_status", json!({})).await;
    let s = result.structured_content.clone().unwrap();
    assert_eq!(s["version"], vaider_core::VERSION);
    assert_eq!(s["provider"], "gemini");
    assert_eq!(s["model"], "gemini-3.5-flash-lite");
    assert_eq!(s["keyConfigured"], true);
    assert!(chrono::DateTime::parse_from_rfc3339(s["serverTime"].as_str().unwrap()).is_ok());
    assert!(!result
        .structured_content
        .unwrap()
        .to_string()
        .contains(fake_gemini::FakeGemini::API_KEY));
    client.cancel().await.unwrap();
}
