//! `vaider analyse` of an animated GIF, as a person at a terminal runs it: the recording is
//! watched (analyze_video) and reaches the fake Gemini as its frames, where a still image
//! beside it is still described as a picture.

mod common;

use common::*;
use fake_gemini::FakeGemini;
use serde_json::Value;
use vaider_test_support::animations::{gif, screen};

#[tokio::test]
async fn an_animated_gif_is_watched_as_a_recording_from_the_terminal() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let white = [255, 255, 255];
    let frames = vec![
        (screen(160, 90, white, None), 600),
        (screen(160, 90, white, Some((10, 10, 30))), 400),
    ];
    std::fs::write(sandbox.work().join("run.gif"), gif(&frames)).unwrap();
    let mut command = sandbox.vaider();
    command
        .args(["analyse", "run.gif", "--json"])
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["framesAnalysed"], 2, "{result}");
    let adapted = result["adaptations"].to_string();
    assert!(
        adapted.contains("animated GIF (2 frames, 1.0 s) sent as 2 frames"),
        "{adapted}"
    );
    let request = fake.generate_requests().pop().expect("a request");
    let labels: Vec<String> = request["contents"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .filter(|t| t.starts_with("Frame at "))
        .map(str::to_string)
        .collect();
    assert_eq!(labels, ["Frame at 00:00.0:", "Frame at 00:00.6:"]);
    // The history names the video tool.
    let mut command = sandbox.vaider();
    command.args(["history", "--json"]);
    let history: Value = serde_json::from_str(&stdout(&run(command))).unwrap();
    assert_eq!(
        history["interactions"][0]["tool"], "analyze_video",
        "{history}"
    );
}
