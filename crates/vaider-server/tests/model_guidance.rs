//! Each capability names its job, and the job reaches the model: through the MCP tools to the
//! fake Gemini (the default model is Gemini 3), a description is asked at a medium thinking
//! level, the same asked with expectations (verdicts) at high, a comparison at medium; no
//! request carries a lowered temperature, and the fake notes no departure from Gemini 3's
//! guidance. (The QA plan's plan, judge and browse jobs are checked in tests/qa.rs.)

mod common;

use common::*;
use serde_json::{json, Value};

/// The thinking level and temperature of the fake's last generateContent request, and its
/// whole generationConfig for a failure's message.
fn last_asked(server: &TestServer) -> (Value, Option<Value>, Value) {
    let body = server.fake.generate_requests().pop().unwrap();
    let mut config = body["generationConfig"].clone();
    if let Some(c) = config.as_object_mut() {
        c.remove("responseJsonSchema");
    }
    (
        config["thinkingConfig"]["thinkingLevel"].clone(),
        config.get("temperature").cloned(),
        config,
    )
}

#[tokio::test]
async fn each_tool_asks_gemini_3_at_its_jobs_thinking_level() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let login = server.media_path("login.png");
    let error = server.media_path("login-error.png");
    let video = server.media_path("login-flow.webm");
    let calls = [
        (
            "analyze_image",
            json!({"image_source": login, "prompt": "What is shown?"}),
            "medium",
        ),
        (
            "analyze_image",
            json!({"image_source": login, "expectations": ["a Sign in button is shown"]}),
            "high",
        ),
        ("analyze_video", json!({"video_source": video}), "medium"),
        (
            "analyze_video",
            json!({"video_source": video, "expectations": ["the dashboard appears"]}),
            "high",
        ),
        (
            "diagnose_error_screenshot",
            json!({"image_source": error}),
            "medium",
        ),
        (
            "ui_diff_check",
            json!({"expected_image_source": error, "actual_image_source": login}),
            "medium",
        ),
    ];
    for (tool, args, level) in calls {
        let result = call(&client, tool, args.clone()).await;
        assert_ne!(result.is_error, Some(true), "{tool}: {}", text_of(&result));
        let (asked, temperature, config) = last_asked(&server);
        assert_eq!(asked, level, "{tool} {args}: {config}");
        assert_eq!(temperature, None, "{tool}: {config}");
    }
    assert_eq!(server.fake.guidance_notes(), Vec::<String>::new());
}
