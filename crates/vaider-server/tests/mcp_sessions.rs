//! A client that opens MCP sessions in a loop: 10,000 `initialize` requests over real HTTP on
//! loopback. At most 256 sessions stay live (the least recently used is closed to make room),
//! seen from outside: the last 256 answer, every older one is gone (404), and the server's
//! memory stays bounded.

mod common;

use std::time::Instant;

use common::*;
use futures_util::StreamExt;
use serde_json::json;
use vaider_server::mcp::sessions::MAX_SESSIONS;

const OPENED: usize = 10_000;
/// The last ones are opened one by one, so their order of use is known exactly.
const IN_ORDER: usize = 400;

fn rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb / 1024)
}

/// Opens a session and returns its id.
async fn open(http: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "loop", "version": "1"}}});
    let response = http
        .post(format!("{url}/mcp"))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    // The answer's stream ends after the one message.
    response.bytes().await.unwrap();
    id
}

/// The status of a request on the session: 202 while it lives, 404 once it is closed.
async fn status_of(http: &reqwest::Client, url: &str, id: &str) -> u16 {
    http.post(format!("{url}/mcp"))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_sessions_leave_only_the_cap_live() {
    let server = TestServer::start().await;
    let (http, url) = (server.http(), server.url.clone());
    let before = rss_mb();
    let started = Instant::now();
    let first: Vec<String> = futures_util::stream::iter(0..OPENED - IN_ORDER)
        .map(|_| open(&http, &url))
        .buffer_unordered(8)
        .collect()
        .await;
    let mut last = Vec::new();
    for _ in 0..IN_ORDER {
        last.push(open(&http, &url).await);
    }
    let took = started.elapsed();
    let after = rss_mb();

    // Oldest first: checking a live session uses it, so the newest are checked first and
    // every check stays inside the newest 256.
    let (gone, live) = last.split_at(IN_ORDER - MAX_SESSIONS);
    for id in live.iter().rev() {
        assert_eq!(status_of(&http, &url, id).await, 202, "a live session");
    }
    for id in gone.iter().chain(first.iter().take(200)) {
        assert_eq!(status_of(&http, &url, id).await, 404, "a closed session");
    }
    println!(
        "{OPENED} sessions opened in {:.1} s; RSS {before} MB before, {after} MB after",
        took.as_secs_f64()
    );
    assert!(after < before + 300, "RSS grew from {before} to {after} MB");
}
