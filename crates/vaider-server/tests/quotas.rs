//! Quotas learned from the provider, through the REST door: a burst of agents on a key with a
//! per-minute quota all get their answer (they queue, their wait not counted against their
//! time limit), a key with no quota is not slowed by a limit of Vaider's own, a daily quota
//! fails at once with its own error, absurd retry hints end in a clear error or a clamped
//! wait, and a caller that gives up leaves the queue.

mod common;

use common::*;
use fake_gemini::{Endpoint, Fault};
use serde_json::{json, Value};

/// `n` analyses of a recording sent at once, each a new question (no cache): their statuses and bodies.
async fn burst(server: &TestServer, n: usize) -> Vec<(u16, Value)> {
    let video = server.media_path("login-flow.webm");
    let calls = (0..n).map(|i| {
        let body = json!({"videoPath": video, "prompt": format!("Call {i}: what is shown?"), "noCache": true, "sampling": "full"});
        async move { server.post_analyse(body).await }
    });
    futures_util::future::join_all(calls).await
}

/// The error message of each call that failed.
fn failures(outcomes: &[(u16, Value)]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|(status, _)| *status != 200)
        .map(|(status, body)| format!("{status}: {}", body["error"]["message"]))
        .collect()
}

/// Takes about a minute of real time: the quota's second minute is the point.
#[tokio::test]
async fn forty_agents_at_once_on_a_twenty_a_minute_quota_all_get_their_answer() {
    let server = TestServer::start().await;
    server.fake.set_quota_per_minute(Some(20));
    let outcomes = burst(&server, 40).await;
    assert_eq!(failures(&outcomes), Vec::<String>::new());
    assert_eq!(server.fake.generate_answered_at().len(), 40);
    // Vaider learned the quota from the first 429 and queued the rest: only the calls already
    // under way when that 429 came (at most one per upstream slot) were refused.
    assert_eq!(
        server.engine.quotas().learned(),
        [(
            "gemini".to_string(),
            server.engine.config().model.clone(),
            20
        )]
    );
    let refused = server.fake.quota_refusals().len();
    assert!(
        (1..=server.engine.config().max_concurrent).contains(&refused),
        "{refused} refusals"
    );
    assert_eq!(server.engine.quotas().waiting(), 0);
}

#[tokio::test]
async fn fifty_agents_at_once_with_no_quota_all_get_their_answer() {
    let server = TestServer::start_with(|config| {
        // The shipped default: no per-minute limit of Vaider's own.
        config.max_calls_per_minute = vaider_core::Config::default().max_calls_per_minute;
    })
    .await;
    assert_eq!(server.engine.config().max_calls_per_minute, 0);
    let outcomes = burst(&server, 50).await;
    assert_eq!(failures(&outcomes), Vec::<String>::new());
    assert_eq!(server.fake.generate_answered_at().len(), 50);
    assert!(server.fake.quota_refusals().is_empty());
    assert!(server.engine.quotas().learned().is_empty());
}

#[tokio::test]
async fn a_daily_quota_fails_at_once_with_its_own_error() {
    let server = TestServer::start().await;
    server.fake.set_quota_per_day(Some(1));
    let video = server.media_path("login-flow.webm");
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "noCache": true, "sampling": "full"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "noCache": true, "sampling": "full"}))
        .await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "QUOTA_EXHAUSTED", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("daily quota") && message.contains("GenerateRequestsPerDay"),
        "{message}"
    );
    assert_eq!(body["upstreamResponse"]["status"], 429);
    // Not retried: one refusal, one generate request for it.
    assert_eq!(server.fake.quota_refusals().len(), 1);
    assert_eq!(
        server
            .fake
            .requests()
            .iter()
            .filter(|r| r.path.ends_with(":generateContent"))
            .count(),
        2
    );
}

#[tokio::test]
async fn absurd_retry_hints_end_in_a_clear_error_or_a_clamped_wait() {
    let server = TestServer::start().await;
    let video = server.media_path("login-flow.webm");
    let ask = || json!({"videoPath": video, "noCache": true, "sampling": "full"});
    // 1e30 seconds: clamped, longer than Vaider waits, so reported at once.
    server.fake.push_fault(
        Endpoint::Generate,
        Fault::RateLimited {
            retry_delay: "1e30s".into(),
            per_day: false,
        },
    );
    let (status, body) = server.post_analyse(ask()).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1e30s") && message.contains("longer than"),
        "{message}"
    );
    // Negative or unreadable: Vaider's own backoff, then the answer.
    for delay in [
        "-5s",
        "soon",
        "NaNs",
        "99999999999999999999999999999999999999s",
    ] {
        server.fake.push_fault(
            Endpoint::Generate,
            Fault::RateLimited {
                retry_delay: delay.into(),
                per_day: false,
            },
        );
        let (status, body) = server.post_analyse(ask()).await;
        if delay.starts_with('9') {
            assert_eq!(body["error"]["code"], "RATE_LIMITED", "{delay}: {body}");
        } else {
            assert_eq!(status, 200, "{delay}: {body}");
        }
    }
    // Refused on every try: the provider's failure, named as such, with its wait.
    for _ in 0..server.engine.config().max_attempts {
        server.fake.push_fault(
            Endpoint::Generate,
            Fault::RateLimited {
                retry_delay: "0.05s".into(),
                per_day: false,
            },
        );
    }
    let (status, body) = server.post_analyse(ask()).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rate-limited"),
        "{body}"
    );
}

#[tokio::test]
async fn a_caller_that_gives_up_leaves_the_queue() {
    // The user's own cap: one call a minute.
    let server = TestServer::start_with(|config| config.max_calls_per_minute = 1).await;
    let video = server.media_path("login-flow.webm");
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "noCache": true, "sampling": "full"}))
        .await;
    assert_eq!(status, 200, "{body}");
    // The next turn is a minute away. The call waits for it instead of failing, although its
    // time limit is 1 s: the wait is not work.
    let waiting = server
        .http()
        .post(format!("{}/v1/analyse", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"videoPath": video, "noCache": true, "sampling": "full", "timeoutSec": 1}))
        .send();
    let engine = server.engine.clone();
    let watcher = tokio::spawn(async move {
        let queued = eventually(|| engine.quotas().waiting() == 1).await;
        (queued, engine)
    });
    tokio::select! {
        outcome = waiting => panic!("the queued call ended: {outcome:?}"),
        watched = watcher => {
            let (queued, engine) = watched.unwrap();
            assert!(queued, "the call was never queued");
            // Leaving the select dropped the request: the client gave up.
            drop(engine);
        }
    }
    assert!(eventually(|| server.engine.quotas().waiting() == 0).await);
    assert_eq!(server.fake.generate_answered_at().len(), 1);
}

/// The same over MCP: a client that cancels its call (rmcp sends notifications/cancelled when
/// the call's future is dropped) leaves the queue, whatever the tool.
#[tokio::test]
async fn an_mcp_client_that_cancels_leaves_the_queue() {
    let server = TestServer::start_with(|config| config.max_calls_per_minute = 1).await;
    let video = server.media_path("login-flow.webm");
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "noCache": true, "sampling": "full"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let client = server.mcp().await;
    let arguments = json!({"video_source": video, "no_cache": true, "sampling": "full",
        "timeout_sec": 1});
    let waiting = call(&client, "analyze_video", arguments);
    let engine = server.engine.clone();
    let watcher = tokio::spawn(async move {
        let queued = eventually(|| engine.quotas().waiting() == 1).await;
        (queued, engine)
    });
    tokio::select! {
        outcome = waiting => panic!("the queued call ended: {outcome:?}"),
        watched = watcher => {
            let (queued, engine) = watched.unwrap();
            assert!(queued, "the call was never queued");
            drop(engine);
        }
    }
    assert!(eventually(|| server.engine.quotas().waiting() == 0).await);
    assert_eq!(server.fake.generate_answered_at().len(), 1);
    client.cancel().await.unwrap();
}
