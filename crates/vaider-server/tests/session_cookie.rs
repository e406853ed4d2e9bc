//! The UI's session cookie over real HTTP: a random session secret, never the token, that
//! stands in for the token only for the media and live events of the server's own pages.
//! Another loopback page (the app under test on another port) whose browser attaches the
//! cookie gets 401 on every route, cannot replay the value as a bearer, and gets no
//! credentialed CORS; with the bearer token it may still call, as before. Signing out and
//! rotating the token end sessions.

mod common;

use common::*;
use reqwest::Method;
use serde_json::json;

/// The cookie pair (`vaider_session=…`) that `POST /api/session` hands the history page.
async fn session_cookie(server: &TestServer) -> String {
    mint(&server.http(), &server.url, TOKEN).await
}

async fn mint(http: &reqwest::Client, url: &str, token: &str) -> String {
    let response = http
        .post(format!("{url}/api/session"))
        .bearer_auth(token)
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
        (Method::GET, format!("{}/api/events", server.url), None),
        (
            Method::GET,
            format!("{}/api/interactions/x/media", server.url),
            None,
        ),
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

/// The status of `GET path` with the cookie, as the server's own page's `<video>` sends it.
async fn with_cookie(http: &reqwest::Client, url: &str, path: &str, cookie: &str) -> u16 {
    http.get(format!("{url}{path}"))
        .header("cookie", cookie)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// A media route that passes the guard answers 404 (no such interaction), one that does not 401.
const MEDIA: &str = "/api/interactions/none/media";

#[tokio::test]
async fn the_servers_own_pages_use_the_cookie_for_media_and_events_only() {
    let server = TestServer::start().await;
    let cookie = session_cookie(&server).await;
    let http = server.http();
    let own_origin = server.url.clone();
    // The page's <video> and EventSource loads: no Origin, same-origin or no metadata.
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
            .get(format!("{}{MEDIA}", server.url))
            .header("cookie", &cookie);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        assert_eq!(request.send().await.unwrap().status(), 404, "{headers:?}");
    }
    assert_eq!(
        with_cookie(&http, &server.url, "/api/events", &cookie).await,
        200
    );
    // Everything else the page calls with its bearer header: the cookie alone opens nothing.
    assert_eq!(
        with_cookie(&http, &server.url, "/api/settings", &cookie).await,
        401
    );
    let paused = http
        .post(format!("{}/api/server/pause", server.url))
        .header("cookie", &cookie)
        .header("origin", &own_origin)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(paused.status(), 401);
    assert!(!server.engine.is_paused());

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
async fn the_cookie_is_a_session_secret_not_the_token() {
    let server = TestServer::start().await;
    let response = server
        .http()
        .post(format!("{}/api/session", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(!set_cookie.contains(TOKEN), "{set_cookie}");
    let attributes: Vec<&str> = set_cookie.split(';').map(str::trim).collect();
    for wanted in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(attributes.contains(&wanted), "{set_cookie}");
    }
    assert!(
        !set_cookie.to_ascii_lowercase().contains("domain"),
        "{set_cookie}"
    );
    let cookie = attributes[0].to_string();
    let secret = cookie.split_once('=').unwrap().1;
    assert!(secret.len() >= 32, "{secret}");
    // A second sign-in gets another secret.
    assert_ne!(session_cookie(&server).await, cookie);

    // The page on another port that saw the cookie cannot send its value as the token.
    let http = server.http();
    for path in ["/api/settings", "/v1/validate", MEDIA] {
        let replayed = http
            .get(format!("{}{path}", server.url))
            .bearer_auth(secret)
            .send()
            .await
            .unwrap();
        assert_eq!(replayed.status(), 401, "{path}");
    }
    // Nor the token as a cookie: only a minted session counts.
    let token_cookie = format!("vaider_session={TOKEN}");
    assert_eq!(
        with_cookie(&http, &server.url, MEDIA, &token_cookie).await,
        401
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let server = TestServer::start().await;
    let http = server.http();
    let cookie = session_cookie(&server).await;
    let other_tab = session_cookie(&server).await;
    assert_eq!(with_cookie(&http, &server.url, MEDIA, &cookie).await, 404);
    let out = http
        .delete(format!("{}/api/session", server.url))
        .bearer_auth(TOKEN)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    assert!(out.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    assert_eq!(with_cookie(&http, &server.url, MEDIA, &cookie).await, 401);
    assert_eq!(
        with_cookie(&http, &server.url, MEDIA, &other_tab).await,
        404
    );
}

#[tokio::test]
async fn rotating_the_token_ends_every_session_and_the_old_token() {
    let server = TestServer::start().await;
    let data = tempfile::tempdir().unwrap();
    let old = vaider_core::secrets::server_token(data.path()).unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let app = vaider_server::router_with(vaider_server::Doors {
        engine: server.engine.clone(),
        token: &old,
        token_file: Some(data.path().join("token")),
        shutdown: shutdown.clone(),
        desktop: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let http = server.http();
    let cookie = mint(&http, &url, &old).await;
    assert_eq!(with_cookie(&http, &url, MEDIA, &cookie).await, 404);

    let new = vaider_core::secrets::rotate_token(data.path()).unwrap();
    assert_ne!(new, old);
    assert_eq!(with_cookie(&http, &url, MEDIA, &cookie).await, 401);
    let settings = |token: String| {
        http.get(format!("{url}/api/settings"))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(settings(old.clone()).await.unwrap().status(), 401);
    assert_eq!(settings(new.clone()).await.unwrap().status(), 200);
    let fresh = mint(&http, &url, &new).await;
    assert_eq!(with_cookie(&http, &url, MEDIA, &fresh).await, 404);
    shutdown.cancel();
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

/// The tray app asks its embedded server for the token each time it shows the UI or copies a
/// client's config, and watches it: after `vaider token --rotate` it must hand out the new
/// token (the old one is refused), without a restart.
#[tokio::test]
async fn the_embedded_server_hands_its_shell_the_rotated_token() {
    let config = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // This test owns its process (nextest), so the environment is its own.
    std::env::remove_var("VAIDER_TOKEN");
    std::env::set_var("VAIDER_CONFIG_DIR", config.path());
    std::env::set_var("VAIDER_DATA_DIR", data.path());
    let running = vaider_server::embedded::start(vaider_server::embedded::StartOptions {
        port: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    let old = running.token();
    let mut changes = running.token_changes();
    assert_eq!(*changes.borrow_and_update(), old);
    assert!(running.ui_url().ends_with(&format!("#token={old}")));

    let new = vaider_core::secrets::rotate_token(data.path()).unwrap();
    assert_ne!(new, old);
    assert_eq!(running.token(), new);
    assert!(running.ui_url().ends_with(&format!("#token={new}")));
    tokio::time::timeout(std::time::Duration::from_secs(30), changes.changed())
        .await
        .expect("the rotation is announced")
        .unwrap();
    assert_eq!(*changes.borrow(), new);
    // What the shell hands out is what the server accepts.
    let http = reqwest::Client::new();
    let settings = |token: String| {
        http.get(format!("{}/api/settings", running.base_url()))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(settings(running.token()).await.unwrap().status(), 200);
    assert_eq!(settings(old).await.unwrap().status(), 401);
    running.stop().await;
}
