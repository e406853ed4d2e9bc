//! The UI's session cookie over real HTTP: it stands in for the token only on requests from
//! the server's own pages. Another loopback page (the app under test on another port) whose
//! browser attaches the cookie gets 401 on the UI's API and on `/mcp`, and no credentialed
//! CORS; with the bearer token it may still call, as before.

mod common;

use common::*;
use reqwest::Method;
use serde_json::json;

/// The cookie pair (`vaider_session=…`) that `POST /api/session` hands the history page.
async fn session_cookie(server: &TestServer) -> String {
    let response = server
        .http()
        .post(format!("{}/api/session", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

/// What a page could send with the cookie alone, as its browser would.
fn requests(server: &TestServer) -> Vec<(Method, String, Option<serde_json::Value>)> {
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}});
    vec![
        (Method::GET, format!("{}/api/settings", server.url), None),
        (Method::GET, format!("{}/api/history", server.url), None),
        (
            Method::POST,
            format!("{}/api/server/pause", server.url),
            None,
        ),
        (
            Method::PUT,
            format!("{}/api/keys/gemini", server.url),
            Some(json!({"key": "attacker-key"})),
        ),
        (Method::POST, format!("{}/mcp", server.url), Some(init)),
    ]
}

#[tokio::test]
async fn another_loopback_page_cannot_use_the_cookie() {
    let server = TestServer::start().await;
    let cookie = session_cookie(&server).await;
    let http = server.http();
    // The app under test on another port, as Chromium labels its requests: a fetch or a form
    // carries its Origin; an <img> or a navigation carries only Sec-Fetch-Site.
    let foreign: [&[(&str, &str)]; 4] = [
        &[
            ("origin", "http://127.0.0.1:5173"),
            ("sec-fetch-site", "same-site"),
        ],
        &[("origin", "http://127.0.0.1:5173")],
        &[("origin", "http://localhost:5173")],
        &[("sec-fetch-site", "same-site")],
    ];
    for (method, url, body) in requests(&server) {
        for headers in foreign {
            let mut request = http
                .request(method.clone(), &url)
                .header("cookie", &cookie)
                .header("accept", "application/json, text/event-stream");
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            if let Some(body) = &body {
                request = request.json(body);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "{method} {url} {headers:?}");
            let answer: serde_json::Value = response.json().await.unwrap();
            assert_eq!(answer["error"]["code"], "UNAUTHORIZED", "{answer}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("own pages"),
                "{answer}"
            );
        }
    }
    assert!(
        !server.engine.is_paused(),
        "a foreign page paused the server"
    );
    assert!(server.fake.requests().is_empty());
}

#[tokio::test]
async fn the_servers_own_pages_use_the_cookie_but_never_on_mcp() {
    let server = TestServer::start().await;
    let cookie = session_cookie(&server).await;
    let http = server.http();
    let own_origin = server.url.clone();
    // The page's own fetch (Origin and same-origin), and its <video> and EventSource loads
    // (no Origin).
    let own: [&[(&str, &str)]; 3] = [
        &[
            ("origin", own_origin.as_str()),
            ("sec-fetch-site", "same-origin"),
        ],
        &[("sec-fetch-site", "same-origin")],
        &[],
    ];
    for headers in own {
        let mut request = http
            .get(format!("{}/api/settings", server.url))
            .header("cookie", &cookie);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        assert_eq!(request.send().await.unwrap().status(), 200, "{headers:?}");
    }
    let paused = http
        .post(format!("{}/api/server/pause", server.url))
        .header("cookie", &cookie)
        .header("origin", &own_origin)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(paused.status(), 200);
    assert!(server.engine.is_paused());

    // /mcp is for agents, which have the token: the cookie never opens it.
    let (_, _, init) = requests(&server).pop().unwrap();
    let mcp = http
        .post(format!("{}/mcp", server.url))
        .header("cookie", &cookie)
        .header("origin", &own_origin)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401);
}

#[tokio::test]
async fn credentialed_cors_only_for_the_own_origin_and_the_app() {
    let server = TestServer::start().await;
    let http = server.http();
    let preflight = |origin: String| {
        http.request(Method::OPTIONS, format!("{}/api/settings", server.url))
            .header("origin", origin)
            .header("access-control-request-method", "PUT")
            .header("access-control-request-headers", "content-type")
            .send()
    };
    for origin in [server.url.clone(), "tauri://localhost".into()] {
        let answer = preflight(origin.clone()).await.unwrap();
        assert_eq!(answer.headers()["access-control-allow-origin"], &origin);
        assert_eq!(
            answer.headers()["access-control-allow-credentials"],
            "true",
            "{origin}"
        );
    }
    let other = "http://127.0.0.1:5173".to_string();
    let answer = preflight(other.clone()).await.unwrap();
    // Still allowed to call (with the token), but the browser sends it no cookie.
    assert_eq!(answer.headers()["access-control-allow-origin"], &other);
    assert!(answer
        .headers()
        .get("access-control-allow-credentials")
        .is_none());

    // With the bearer token, another loopback page keeps working as before.
    let with_token = http
        .get(format!("{}/api/settings", server.url))
        .bearer_auth(TOKEN)
        .header("origin", &other)
        .header("sec-fetch-site", "same-site")
        .send()
        .await
        .unwrap();
    assert_eq!(with_token.status(), 200);
    assert_eq!(with_token.headers()["access-control-allow-origin"], &other);
    assert!(with_token
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
}
