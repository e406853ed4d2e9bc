//! What a user meets when a server dies mid-call: a real `vaider serve` killed with SIGKILL
//! while the model is still answering leaves its row `running` only until the next start,
//! which marks it `interrupted` (history and response.json), while a second live Vaider
//! sharing the same history leaves it alone. Also: every log line of a call carries its
//! interaction id, and a setting out of range stops the server with a clear error.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use fake_gemini::FakeGemini;
use serde_json::{json, Value};

const TOKEN: &str = "recovery-test-token";

fn history(sandbox: &Sandbox) -> Value {
    let mut command = sandbox.vaider();
    command.args(["history", "--json"]);
    serde_json::from_str(&stdout(&run(command))).unwrap()
}

fn row_status(sandbox: &Sandbox) -> Option<String> {
    history(sandbox)["interactions"][0]["status"]
        .as_str()
        .map(str::to_string)
}

/// Polls the history until the newest row has `status`, for at most 30 s.
async fn wait_for_status(sandbox: &Sandbox, status: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while row_status(sandbox).as_deref() != Some(status) {
        assert!(
            Instant::now() < deadline,
            "the row never became {status}: {}",
            history(sandbox)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn server(sandbox: &Sandbox, fake: &FakeGemini) -> Served {
    let mut command = sandbox.vaider();
    command
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url())
        .env("VAIDER_TOKEN", TOKEN);
    serve(command)
}

/// Starts an analysis that waits on the slow fake; its answer never comes.
fn start_slow_call(url: &str, video: &std::path::Path) {
    let request = reqwest::Client::new()
        .post(format!("{url}/v1/analyse"))
        .bearer_auth(TOKEN)
        .json(&json!({"videoPath": video, "timeoutSec": 300}))
        .send();
    tokio::spawn(request);
}

#[tokio::test]
async fn a_call_left_running_by_a_killed_server_is_interrupted_at_the_next_start_only() {
    let fake = FakeGemini::start().await;
    fake.set_generate_delay(Duration::from_secs(600));
    let sandbox = Sandbox::new();
    let video = sandbox.media("login-flow.webm");

    let mut first = server(&sandbox, &fake);
    start_slow_call(&first.url, &video);
    wait_for_status(&sandbox, "running").await;

    // A second live Vaider on the same history must not touch the first one's call.
    let second = server(&sandbox, &fake);
    assert_eq!(row_status(&sandbox).as_deref(), Some("running"));
    drop(second);

    first.child.kill().unwrap(); // SIGKILL: no chance to clean up
    first.child.wait().unwrap();
    assert_eq!(row_status(&sandbox).as_deref(), Some("running"));

    let _restarted = server(&sandbox, &fake);
    let row = history(&sandbox)["interactions"][0].clone();
    assert_eq!(row["status"], "interrupted", "{row}");
    assert_eq!(row["errorCode"], "INTERRUPTED");
    let message = row["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("stopped while this call was running"),
        "{message}"
    );
    assert!(row["finishedAt"].is_string());
    let log_dir = std::path::PathBuf::from(row["logDir"].as_str().unwrap());
    assert!(log_dir.join("request.json").exists());
    let response: Value =
        serde_json::from_slice(&std::fs::read(log_dir.join("response.json")).unwrap()).unwrap();
    assert_eq!(response["status"], "interrupted");
    assert_eq!(response["error"]["code"], "INTERRUPTED");
    assert_eq!(response["interactionId"], row["id"]);

    let mut table = sandbox.vaider();
    table.arg("history");
    assert!(stdout(&run(table)).contains("interrupted"));
}

#[tokio::test]
async fn every_log_line_of_a_call_carries_its_interaction_id() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let video = sandbox.media("login-flow.webm");
    let log = sandbox.root.path().join("serve.log");
    let mut command = sandbox.vaider();
    command
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url())
        .env("VAIDER_TOKEN", TOKEN)
        .env("VAIDER_LOG", "debug")
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = command.spawn().unwrap();
    let line = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    let served = Served { child, url };
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/v1/analyse", served.url))
        .bearer_auth(TOKEN)
        .json(&json!({"videoPath": video, "prompt": "describe"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    drop(served);
    let id = answer["interactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string();
    let text = std::fs::read_to_string(&log).unwrap();
    let started: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("analysis started"))
        .collect();
    let done: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("analysis done"))
        .collect();
    assert_eq!((started.len(), done.len()), (1, 1), "{text}");
    // The upload and the model's call are made deep inside the provider, on the call's behalf:
    // their lines must lead back to the call too.
    let upstream: Vec<&str> = text.lines().filter(|l| l.contains("reqwest")).collect();
    assert!(!upstream.is_empty(), "{text}");
    for line in started.iter().chain(&done).chain(&upstream) {
        assert!(
            line.contains(&id),
            "a line of the call without its id: {line}"
        );
    }
}

#[test]
fn a_setting_out_of_range_stops_the_server_with_the_field_and_the_range() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command
        .env("VAIDER_MAX_CONCURRENT", "0")
        .args(["serve", "--port", "0"]);
    let output = run(command);
    assert!(!output.status.success());
    let text = stderr(&output);
    assert!(
        text.contains("max_concurrent")
            && text.contains("VAIDER_MAX_CONCURRENT")
            && text.contains("between 1 and 64"),
        "{text}"
    );
}
