//! An upstream that answers without end: the fake Gemini streams a 1 GB body (made chunk by
//! chunk, never held) to a real analysis over REST. Vaider stops reading at its limit (8 MiB
//! for an answer, 1 MiB for an error answer) with an error naming the provider and the limit,
//! quickly and without the body in memory or in the error.

mod common;

use std::time::Instant;

use common::*;
use fake_gemini::{Endpoint, Fault};
use serde_json::json;

const GIGABYTE: u64 = 1_000_000_000;

/// The test process's resident memory, in MB (Linux; 0 elsewhere).
fn rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

#[tokio::test]
async fn a_gigabyte_answer_is_refused_at_the_limit() {
    let server = TestServer::start().await;
    let path = server.media_path("login-flow.webm");
    let before = rss_mb();
    let cases = [
        (200, "gemini's answer is larger than 8 MiB"),
        (
            400,
            "answered HTTP 400 with an error body larger than 1 MiB",
        ),
    ];
    for (status, says) in cases {
        server.fake.push_fault(
            Endpoint::Generate,
            Fault::Huge {
                status,
                bytes: GIGABYTE,
            },
        );
        let started = Instant::now();
        let (code, body) = server
            .post_analyse(json!({"videoPath": path, "noCache": true}))
            .await;
        let took = started.elapsed();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(code, 500, "{body}");
        assert_eq!(body["error"]["code"], "UPSTREAM_ERROR", "{body}");
        assert!(
            message.to_lowercase().contains(&says.to_lowercase()),
            "{message}"
        );
        // Never the body: not the filler, nor a kept upstream response.
        assert!(!message.contains("    "), "{message}");
        assert!(
            !body.to_string().contains("{\\\"candidates\\\": [  "),
            "{body}"
        );
        println!(
            "HTTP {status}: a 1 GB answer refused in {:.2} s, RSS {} MB (was {before} MB)",
            took.as_secs_f64(),
            rss_mb()
        );
    }
    // Both answers together stayed far below the gigabyte each would have cost.
    assert!(rss_mb() < before + 200, "RSS {} MB", rss_mb());
}
