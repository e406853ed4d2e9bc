//! The vision toolset on every provider: each of the eight tools over MCP against the fake
//! Gemini, a fake OpenAI-compatible server and a fake Anthropic, checking what each provider
//! received (format, parts, sizes) and what the tool answered; media fitted to each provider
//! (keyframes, downscaling, conversion); URL sources; and errors mapped to the same codes.

mod common;

use std::process::Command;

use common::*;
use fake_vision::{FakeAnthropic, FakeBedrock, FakeOpenAi, Fault, OpenAiOptions};
use serde_json::{json, Value};
use vaider_core::config::ProviderSettings;
use vaider_core::secrets::{ApiKey, KeySource};
use vaider_test_support::loopback::files_containing;

struct Fakes {
    openai: FakeOpenAi,
    zai: FakeOpenAi,
    anthropic: FakeAnthropic,
}

async fn start(adjust: impl FnOnce(&mut vaider_core::Config)) -> (TestServer, Fakes) {
    let fakes = Fakes {
        openai: FakeOpenAi::start().await,
        zai: FakeOpenAi::start_with(OpenAiOptions::zai()).await,
        anthropic: FakeAnthropic::start().await,
    };
    let (openai, zai, anthropic) = (
        fakes.openai.base_url(),
        fakes.zai.base_url().trim_end_matches("/v1").to_string() + "/api/paas/v4",
        fakes.anthropic.base_url(),
    );
    let server = TestServer::start_with(move |config| {
        for (name, url) in [("openai", openai), ("zai", zai), ("anthropic", anthropic)] {
            config.providers.insert(
                name.to_string(),
                ProviderSettings {
                    base_url: Some(url),
                    ..Default::default()
                },
            );
        }
        adjust(config);
    })
    .await;
    for (name, key) in [
        ("openai", FakeOpenAi::API_KEY),
        ("zai", FakeOpenAi::API_KEY),
        ("anthropic", FakeAnthropic::API_KEY),
    ] {
        server.engine.set_provider_key(
            name,
            ApiKey::new(key),
            KeySource::Environment("test".into()),
        );
    }
    (server, fakes)
}

/// The image parts a chat-completions request carried, with the label before each.
fn openai_images(request: &Value) -> Vec<(Option<String>, String)> {
    let parts = request["messages"][1]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if part["type"] == "image_url" {
            let label = i
                .checked_sub(1)
                .and_then(|j| parts[j]["text"].as_str())
                .map(str::to_string);
            out.push((
                label,
                part["image_url"]["url"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ));
        }
    }
    out
}

#[tokio::test]
async fn every_image_tool_works_on_every_provider() {
    let (server, fakes) = start(|_| {}).await;
    let client = server.mcp().await;
    let login = server.media_path("login.png");
    let error = server.media_path("login-error.png");
    let sha = sha256_hex(&login);
    let calls: Vec<(&str, Value)> = vec![
        (
            "analyze_image",
            json!({"image_source": login, "prompt": "What is shown?"}),
        ),
        (
            "ui_to_artifact",
            json!({"image_source": login, "output_type": "spec"}),
        ),
        (
            "extract_text_from_screenshot",
            json!({"image_source": login, "programming_language": "html"}),
        ),
        (
            "diagnose_error_screenshot",
            json!({"image_source": login, "context": "logging in"}),
        ),
        (
            "understand_technical_diagram",
            json!({"image_source": login, "diagram_type": "flowchart"}),
        ),
        (
            "analyze_data_visualization",
            json!({"image_source": login, "analysis_focus": "trends"}),
        ),
        (
            "ui_diff_check",
            json!({"expected_image_source": error, "actual_image_source": login}),
        ),
    ];
    for provider in ["gemini", "openai", "anthropic"] {
        for (tool, args) in &calls {
            let mut args = args.clone();
            args["provider"] = json!(provider);
            let result = call(&client, tool, args).await;
            assert_ne!(
                result.is_error,
                Some(true),
                "{provider} {tool}: {}",
                text_of(&result)
            );
            let s = result.structured_content.clone().unwrap();
            assert_eq!(s["provider"], provider, "{tool}");
            // Every fake answers with the sha256 of the image bytes it received.
            assert!(
                text_of(&result).contains(&sha),
                "{provider} {tool}: {}",
                text_of(&result)
            );
            let row = server
                .engine
                .history()
                .get(s["interactionId"].as_str().unwrap())
                .unwrap()
                .unwrap();
            assert_eq!(
                (row.tool.as_str(), row.provider.as_str()),
                (*tool, provider)
            );
        }
    }

    // What OpenAI received for the diff: two PNG data URLs, EXPECTED first, its task prompt,
    // and a strict JSON schema with the differences; the answer's details follow it.
    let request = fakes.openai.requests().pop().unwrap();
    let images = openai_images(&request);
    assert_eq!(images.len(), 2);
    assert!(images[0].0.as_deref().unwrap().starts_with("EXPECTED"));
    assert!(images[1].0.as_deref().unwrap().starts_with("ACTUAL"));
    assert!(images
        .iter()
        .all(|(_, url)| url.starts_with("data:image/png;base64,")));
    assert!(request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("compare two screenshots"));
    let schema = &request["response_format"]["json_schema"];
    assert_eq!(schema["strict"], true);
    assert!(schema["schema"]["properties"]["differences"].is_object());
    let diff = call(&client, "ui_diff_check", json!({"expected_image_source": error, "actual_image_source": login, "provider": "openai", "no_cache": true})).await;
    let details = &diff.structured_content.unwrap()["details"];
    assert!(details["differences"].is_array(), "{details}");

    // Anthropic: base64 image blocks with their media type, the x-api-key and version headers.
    let request = fakes.anthropic.requests().pop().unwrap();
    let blocks = request["messages"][0]["content"].as_array().unwrap();
    let images: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "image").collect();
    assert_eq!(images.len(), 2);
    assert_eq!(images[0]["source"]["media_type"], "image/png");
    let recorded = fakes.anthropic.recorded().pop().unwrap();
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded.header("x-api-key"), Some(FakeAnthropic::API_KEY));

    // The tool options reached the model.
    let extract = fakes
        .openai
        .requests()
        .iter()
        .find(|r| {
            r.to_string()
                .contains("Programming language of any code: html")
        })
        .cloned();
    assert!(extract.is_some());
    client.cancel().await.unwrap();
}

/// A video whose screen changes at 2, 4 and 6 s and is still in between.
fn make_changing_video(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("changes.mp4");
    let filter = "drawbox=enable='gte(t,2)':x=20:y=20:w=120:h=40:color=black:t=fill,\
drawbox=enable='gte(t,4)':x=180:y=100:w=100:h=50:color=red:t=fill,\
drawbox=enable='gte(t,6)':x=20:y=140:w=280:h=20:color=blue:t=fill";
    let status = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=white:s=320x180:r=10:d=8",
            "-vf",
            filter,
        ])
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        .arg(&path)
        .status()
        .expect("ffmpeg (scripts/test.sh installs it)");
    assert!(status.success());
    path
}

#[tokio::test]
async fn a_video_for_an_images_only_provider_arrives_as_timestamped_keyframes() {
    let (server, fakes) = start(|_| {}).await;
    let video = make_changing_video(server.media.path());
    let client = server.mcp().await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": video, "provider": "openai"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let s = result.structured_content.unwrap();
    let request = fakes.openai.requests().pop().unwrap();
    let frames = openai_images(&request);
    let times: Vec<f64> = frames
        .iter()
        .map(|(label, _)| {
            let label = label
                .as_deref()
                .expect("each frame is labelled with its time");
            let t = label.trim_start_matches("Frame at ").trim_end_matches(':');
            let (m, sec) = t.split_once(':').unwrap();
            m.parse::<f64>().unwrap() * 60.0 + sec.parse::<f64>().unwrap()
        })
        .collect();
    // The first frame, one per change, and the last: none for the still stretches.
    assert_eq!(times.len(), 5, "{times:?}");
    assert_eq!(times[0], 0.0);
    for (got, want) in times[1..4].iter().zip([2.0, 4.0, 6.0]) {
        assert!((got - want).abs() <= 0.3, "{times:?}");
    }
    assert!(times[4] > 7.0, "{times:?}");
    assert_eq!(s["framesAnalysed"], 5);
    assert!(s["adaptations"][0]
        .as_str()
        .unwrap()
        .contains("5 keyframes"));
    assert!(request.to_string().contains("still frames"));
    // The frames are kept with the interaction, for a person to look at.
    let frames_dir = std::path::Path::new(s["logDir"].as_str().unwrap()).join("frames");
    assert_eq!(std::fs::read_dir(frames_dir).unwrap().count(), 5);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn images_are_fitted_to_the_providers_limits() {
    let (server, fakes) = start(|config| {
        config
            .providers
            .entry("openai".into())
            .or_default()
            .max_image_side = Some(400);
    })
    .await;
    let client = server.mcp().await;
    // login.png is 800x500: OpenAI (as configured) takes at most 400 px a side.
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": server.media_path("login.png"), "provider": "openai"}),
    )
    .await;
    let s = result.structured_content.unwrap();
    assert!(
        s["description"].as_str().unwrap().contains("400x250"),
        "{s}"
    );
    assert!(s["adaptations"][0]
        .as_str()
        .unwrap()
        .contains("downscaled from 800x500 to 400x250"));

    // z.ai takes PNG and JPEG only: a WebP screenshot is converted.
    let webp = server.media.path().join("login.webp");
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(server.media_path("login.png"))
        .arg(&webp)
        .status()
        .unwrap();
    assert!(status.success());
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": webp, "provider": "zai"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let request = fakes.zai.requests().pop().unwrap();
    assert!(openai_images(&request)[0]
        .1
        .starts_with("data:image/png;base64,"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn url_and_data_sources() {
    use axum::routing::get;
    let (server, _fakes) = start(|config| config.download_limit_mb = 1).await;
    let png = std::fs::read(server.media_path("login.png")).unwrap();
    let small = png.clone();
    let app = axum::Router::new()
        .route("/login.png", get(move || async move { small }))
        .route("/big.png", get(|| async { vec![0u8; 3 * 1024 * 1024] }))
        .route(
            "/endless.png",
            get(|| async {
                let chunks = futures_util::StreamExt::take(
                    futures_util::stream::repeat_with(|| {
                        Ok::<_, std::io::Error>(vec![0u8; 64 * 1024])
                    }),
                    100,
                );
                axum::body::Body::from_stream(chunks)
            }),
        )
        .route(
            "/to-file",
            get(|| async {
                (
                    axum::http::StatusCode::FOUND,
                    [("location", "file:///etc/passwd")],
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let site = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = server.mcp().await;

    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": format!("{site}/login.png")}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let s = result.structured_content.unwrap();
    // The download is kept, with the interaction files beside it.
    let kept = std::path::Path::new(s["mediaPath"].as_str().unwrap());
    assert_eq!(std::fs::read(kept).unwrap(), png);
    assert!(std::path::Path::new(s["logDir"].as_str().unwrap()).starts_with(kept.parent().unwrap()));

    for (path, expected) in [
        ("/big.png", "nothing was downloaded"),
        ("/endless.png", "the download was stopped"),
        ("/to-file", "non-http(s)"),
    ] {
        let result = call(
            &client,
            "analyze_image",
            json!({"image_source": format!("{site}{path}"), "no_cache": true}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{path}");
        let text = text_of(&result);
        assert!(
            text.starts_with("INVALID_PATH") && text.contains(expected),
            "{path}: {text}"
        );
    }

    use base64::Engine as _;
    let data = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": data, "no_cache": true}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    assert!(text_of(&result).contains(&sha256_hex(&server.media_path("login.png"))));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn upstream_errors_map_to_the_same_codes_on_every_provider() {
    let (server, fakes) = start(|_| {}).await;
    let client = server.mcp().await;
    let image = server.media_path("login.png");
    let ask =
        |provider: &str| json!({"image_source": image, "provider": provider, "no_cache": true});

    // 429 with retry-after, then an answer.
    fakes.openai.push_fault(Fault::RateLimited {
        retry_after_secs: 0,
    });
    assert_ne!(
        call(&client, "analyze_image", ask("openai")).await.is_error,
        Some(true)
    );
    // Overloaded three times: the same UPSTREAM_ERROR as Gemini's.
    for _ in 0..3 {
        fakes.anthropic.push_fault(Fault::Status(529));
    }
    let result = call(&client, "analyze_image", ask("anthropic")).await;
    assert!(
        text_of(&result).starts_with("UPSTREAM_ERROR"),
        "{}",
        text_of(&result)
    );
    fakes.openai.push_fault(Fault::Status(400));
    let result = call(&client, "analyze_image", ask("openai")).await;
    assert!(
        text_of(&result).starts_with("UPSTREAM_ERROR"),
        "{}",
        text_of(&result)
    );
    // A wrong key is an upstream error that says how to set the right one.
    server
        .engine
        .set_provider_key("anthropic", ApiKey::new("wrong"), KeySource::Keychain);
    let result = call(&client, "analyze_image", ask("anthropic")).await;
    let text = text_of(&result);
    assert!(
        text.starts_with("UPSTREAM_ERROR") && text.contains("vaider key set --provider anthropic"),
        "{text}"
    );
    // An unknown provider is refused before anything is sent.
    let result = call(&client, "analyze_image", ask("nope")).await;
    assert!(
        text_of(&result).starts_with("INVALID_REQUEST"),
        "{}",
        text_of(&result)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn status_lists_providers_and_what_they_serve() {
    let (server, _fakes) = start(|_| {}).await;
    let client = server.mcp().await;
    let s = call(&client, "vaider_status", json!({}))
        .await
        .structured_content
        .unwrap();
    let providers = s["providers"].as_array().unwrap();
    let by_name = |name: &str| {
        providers
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("gemini")["videoAs"], "video");
    assert_eq!(by_name("openai")["videoAs"], "keyframes");
    assert_eq!(by_name("openai")["ready"], true);
    assert_eq!(
        by_name("ollama")["ready"],
        true,
        "local servers need no key"
    );
    // The eight vision tools, the explanation of a visual comparison, the review's verdict on a
    // changed capture, the judge of a page and the writer of test plans and the turn of a
    // browsing step, and the watcher of a failed test's failing step.
    assert_eq!(by_name("openai")["tools"].as_array().unwrap().len(), 14);
    assert!(by_name("openai")["tools"]
        .to_string()
        .contains("watch_failing_step"));
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        tools.len(),
        23,
        "eight vision tools, vaider_status, four visual tools, three review tools, two test-run tools and five QA tools: {names:?}"
    );
    for visual in [
        "visual_capture",
        "visual_compare",
        "visual_prepare",
        "visual_cleanup",
        "review_pending",
        "review_approve",
        "review_reject",
        "validate_test",
        "analyse_test_results",
        "generate_test_plan",
        "run_test_plan",
        "list_test_plans",
        "list_test_runs",
        "get_test_run",
    ] {
        assert!(names.contains(&visual), "{names:?}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_server_that_takes_video_gets_it_whole_as_a_streamed_data_url() {
    let vllm = FakeOpenAi::start_with(OpenAiOptions::vllm()).await;
    let base = vllm.base_url();
    let (server, _fakes) = start(move |config| {
        config.providers.entry("vllm".into()).or_default().base_url = Some(base);
    })
    .await;
    let client = server.mcp().await;
    let video = server.media_path("login-flow.mp4");
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": video, "provider": "vllm"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    // The fake decoded the data URL and hashed the bytes: the video arrived whole and intact.
    assert!(
        text_of(&result).contains(&sha256_hex(&video)),
        "{}",
        text_of(&result)
    );
    let request = vllm.requests().pop().unwrap();
    let part = &request["messages"][1]["content"][0];
    assert_eq!(part["type"], "video_url");
    assert!(part["video_url"]["url"]
        .as_str()
        .unwrap()
        .starts_with("data:video/mp4;base64,"));
    assert!(
        result.structured_content.unwrap()["adaptations"].is_null(),
        "sent as it is"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bedrock_gets_the_image_signed_with_aws_credentials_and_its_usage_is_costed() {
    const TOKEN: &str = "FwoGZXIvYXdzEFAKESESSIONTOKEN";
    // The adapter reads the AWS chain from the process environment, as the CLI does; this
    // test owns its process under nextest, and no other test reads these variables.
    for (name, value) in [
        ("AWS_ACCESS_KEY_ID", FakeBedrock::ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", FakeBedrock::SECRET_ACCESS_KEY),
        ("AWS_SESSION_TOKEN", TOKEN),
        ("AWS_REGION", "eu-west-1"),
    ] {
        std::env::set_var(name, value);
    }
    let bedrock = FakeBedrock::start_in("eu-west-1").await;
    let base = bedrock.base_url();
    let model = "anthropic.claude-3-5-sonnet-20241022-v2:0";
    let (server, _fakes) = start(move |config| {
        let settings = config.providers.entry("bedrock".into()).or_default();
        settings.base_url = Some(base);
        settings.model = Some(model.into());
    })
    .await;
    let client = server.mcp().await;
    let image = server.media_path("login.png");
    let ask = || json!({"image_source": image, "provider": "bedrock", "prompt": "What is shown?", "no_cache": true});
    let result = call(&client, "analyze_image", ask()).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    // The fake checked the signature with the secret and hashed the image bytes it decoded.
    assert!(
        text_of(&result).contains(&sha256_hex(&image)),
        "{}",
        text_of(&result)
    );

    let recorded = bedrock.recorded().pop().unwrap();
    assert_eq!(
        recorded.path,
        "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse"
    );
    let auth = recorded.header("authorization").unwrap();
    let date = &recorded.header("x-amz-date").unwrap()[..8];
    assert!(
        auth.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential={}/{date}/eu-west-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=",
            FakeBedrock::ACCESS_KEY_ID
        )),
        "{auth}"
    );
    assert_eq!(recorded.header("x-amz-security-token"), Some(TOKEN));
    let request = bedrock.requests().pop().unwrap();
    let blocks = request["messages"][0]["content"].as_array().unwrap();
    let images: Vec<&Value> = blocks.iter().filter(|b| b["image"].is_object()).collect();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0]["image"]["format"], "png");
    assert!(request["system"][0]["text"].as_str().is_some());

    // Usage and cost as for the other providers: Claude 3.5 Sonnet's price.
    let s = result.structured_content.clone().unwrap();
    assert_eq!(s["provider"], "bedrock");
    let row = server
        .engine
        .history()
        .get(s["interactionId"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert!(row.input_tokens >= 1000 && row.output_tokens > 0, "{row:?}");
    let expected = (row.input_tokens as f64 * 3.0 + row.output_tokens as f64 * 15.0) / 1e6;
    assert!((row.cost_usd - expected).abs() < 1e-9, "{row:?}");

    // Throttled once: retried with backoff, then answered.
    bedrock.push_fault(Fault::Status(429));
    let result = call(&client, "analyze_image", ask()).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    // Denied: a clear error saying what to do.
    bedrock.push_fault(Fault::Status(403));
    let text = text_of(&call(&client, "analyze_image", ask()).await);
    assert!(
        text.starts_with("UPSTREAM_ERROR") && text.contains("Model access"),
        "{text}"
    );
    // A wrong secret: the fake's recomputed signature differs.
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "not-the-secret");
    let text = text_of(&call(&client, "analyze_image", ask()).await);
    assert!(
        text.starts_with("UPSTREAM_ERROR") && text.contains("secret key does not match"),
        "{text}"
    );

    // vaider_status: ready, with where the credentials were found (never the keys).
    let status = call(&client, "vaider_status", json!({})).await;
    let status = status.structured_content.unwrap();
    let bedrock_status = status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "bedrock")
        .unwrap()
        .clone();
    assert_eq!(bedrock_status["ready"], true, "{bedrock_status}");
    assert!(
        bedrock_status["keySource"]
            .as_str()
            .unwrap()
            .contains("environment"),
        "{bedrock_status}"
    );
    assert!(!bedrock_status.to_string().contains("not-the-secret"));

    // Nothing secret was kept: not the secret, the token, nor a signature.
    let signature = auth.rsplit("Signature=").next().unwrap();
    for secret in [
        FakeBedrock::SECRET_ACCESS_KEY,
        TOKEN,
        signature,
        "not-the-secret",
    ] {
        for dir in [server.data.path(), server.media.path()] {
            let found = files_containing(dir, secret);
            assert!(found.is_empty(), "{secret:?} kept in {found:?}");
        }
    }

    // No credentials at all: the error names where Vaider looked.
    for name in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ] {
        std::env::remove_var(name);
    }
    let home = tempfile::tempdir().unwrap();
    std::env::set_var("HOME", home.path());
    std::env::remove_var("AWS_SHARED_CREDENTIALS_FILE");
    std::env::remove_var("AWS_CONFIG_FILE");
    std::env::remove_var("AWS_PROFILE");
    let text = text_of(&call(&client, "analyze_image", ask()).await);
    assert!(
        text.contains("No AWS credentials") && text.contains(".aws/credentials"),
        "{text}"
    );
    let status = call(&client, "vaider_status", json!({})).await;
    let providers = status.structured_content.unwrap()["providers"].clone();
    let bedrock_status = providers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "bedrock")
        .unwrap()
        .clone();
    assert_eq!(bedrock_status["ready"], false, "{bedrock_status}");
    client.cancel().await.unwrap();
}
