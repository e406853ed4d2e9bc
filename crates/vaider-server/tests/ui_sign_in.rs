//! The UI's credentials over real HTTP, attacked the way another local program would: the
//! page signs in with a one-time login code (never the token) and sends its session in a
//! header that counts on the UI's own routes only; its media load through short-lived signed
//! URLs; no cookie counts for anything. A code used twice, guessed or expired, a session on
//! `/mcp` or `/v1`, a cookie replayed by another local server, a media URL altered or past
//! its time: each is refused. The health endpoint proves the token to a client that holds it.

mod common;

use common::*;
use reqwest::Method;
use serde_json::{json, Value};

/// The data folder's login key, which `vaider ui` reads to have a code minted.
fn key_of(server: &TestServer) -> String {
    vaider_core::secrets::ui_login_key(server.engine.data_dir()).unwrap()
}

async fn login_code(http: &reqwest::Client, url: &str, token: &str, key: &str) -> String {
    let answer: Value = http
        .post(format!("{url}/api/login-code"))
        .bearer_auth(token)
        .header("x-vaider-login-key", key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["code"].as_str().unwrap().to_string()
}

/// `POST /api/login` with `code`: the status and the answer.
async fn login(http: &reqwest::Client, url: &str, code: &str) -> (u16, Value) {
    let response = http
        .post(format!("{url}/api/login"))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The status of `GET path` with the session header.
async fn with_session(http: &reqwest::Client, url: &str, path: &str, session: &str) -> u16 {
    http.get(format!("{url}{path}"))
        .header("x-vaider-session", session)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// A media route that passes the guard answers 404 (no such interaction), one that does not 401.
const MEDIA: &str = "/api/interactions/none/media";

#[tokio::test]
async fn a_login_code_signs_one_page_in_once() {
    let server = TestServer::start().await;
    let http = server.http();
    let code = login_code(&http, &server.url, TOKEN, &key_of(&server)).await;
    assert!(!code.contains(TOKEN) && code.len() >= 32, "{code}");
    let (status, answer) = login(&http, &server.url, &code).await;
    assert_eq!(status, 200, "{answer}");
    let session = answer["session"].as_str().unwrap().to_string();
    assert!(!session.contains(TOKEN) && session.len() >= 64);
    assert!(!answer.to_string().contains(TOKEN));
    assert_eq!(
        with_session(&http, &server.url, "/api/settings", &session).await,
        200
    );
    // Whoever read the code (another user's `ps`, the browser's history) comes too late.
    let (status, again) = login(&http, &server.url, &code).await;
    assert_eq!(status, 401);
    assert_eq!(again["error"]["code"], "LOGIN_CODE_REFUSED");
    assert!(again["error"]["message"]
        .as_str()
        .unwrap()
        .contains("vaider ui"));
    // The token and the session are not codes; a session cannot mint codes.
    assert_eq!(login(&http, &server.url, TOKEN).await.0, 401);
    assert_eq!(login(&http, &server.url, &session).await.0, 401);
    let minted_by_session = http
        .post(format!("{}/api/login-code", server.url))
        .header("x-vaider-session", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(minted_by_session.status(), 401);
    // No answer sets a cookie.
    let code = login_code(&http, &server.url, TOKEN, &key_of(&server)).await;
    let response = http
        .post(format!("{}/api/login", server.url))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    assert!(response.headers().get("set-cookie").is_none());
}

#[tokio::test]
async fn guessing_codes_is_cut_short() {
    let server = TestServer::start().await;
    let http = server.http();
    let code = login_code(&http, &server.url, TOKEN, &key_of(&server)).await;
    for guess in 0..10 {
        let (status, _) = login(&http, &server.url, &format!("{guess:032x}")).await;
        assert_eq!(status, 401);
    }
    // Ten wrong guesses burnt the waiting code: even the right one is refused now.
    assert_eq!(login(&http, &server.url, &code).await.0, 401);
    let fresh = login_code(&http, &server.url, TOKEN, &key_of(&server)).await;
    assert_eq!(login(&http, &server.url, &fresh).await.0, 200);
}

#[tokio::test]
async fn the_session_counts_on_the_uis_routes_only() {
    let server = TestServer::start().await;
    let http = server.http();
    let session = sign_in(&server).await;
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}});
    let mcp = http
        .post(format!("{}/mcp", server.url))
        .header("x-vaider-session", &session)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401);
    let answer: Value = mcp.json().await.unwrap();
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("never on /mcp or /v1"));
    let rest = http
        .post(format!("{}/v1/analyse", server.url))
        .header("x-vaider-session", &session)
        .json(&json!({"videoPath": server.media_path("login-flow.webm")}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 401);
    // Nor as a bearer token.
    for path in ["/api/settings", "/v1/validate"] {
        let replayed = http
            .get(format!("{}{path}", server.url))
            .bearer_auth(&session)
            .send()
            .await
            .unwrap();
        assert_eq!(replayed.status(), 401, "{path}");
    }
    assert!(server.fake.requests().is_empty());
}

/// The attack of issue 32, as another local server runs it: the browser sent it the Cookie
/// header it holds for 127.0.0.1 (any port), and it replays that to Vaider with no Origin.
/// Before, the UI's session cookie opened /api/events (every interaction, live) and media.
/// Now no cookie is ever set, and a session secret in a cookie opens nothing.
#[tokio::test]
async fn a_cookie_replayed_by_another_local_server_opens_nothing() {
    let server = TestServer::start().await;
    let http = server.http();
    let session = sign_in(&server).await;
    for cookie in [
        format!("vaider_session={session}"),
        format!("vaider_session={TOKEN}"),
        format!("x-vaider-session={session}"),
    ] {
        for path in ["/api/events", MEDIA, "/api/history", "/api/settings"] {
            let replayed = http
                .get(format!("{}{path}", server.url))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(replayed.status(), 401, "{path} {cookie}");
        }
    }
    // The live events need the session in its header (the page reads them with fetch()).
    assert_eq!(
        with_session(&http, &server.url, "/api/events", &session).await,
        200
    );
    assert_eq!(
        http.get(format!("{}/api/events", server.url))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
}

#[tokio::test]
async fn media_load_through_signed_urls_that_expire_and_cannot_be_altered() {
    let server = TestServer::start().await;
    let http = server.http();
    let (status, body) = server
        .post_analyse(json!({
            "videoPath": server.media_path("login-flow.webm"),
            "noCache": true,
        }))
        .await;
    assert_eq!(status, 200, "{body}");
    let id = body["interactionId"].as_str().unwrap();
    let session = sign_in(&server).await;
    let detail: Value = http
        .get(format!("{}/api/interactions/{id}", server.url))
        .header("x-vaider-session", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = detail["mediaUrl"].as_str().unwrap();
    assert!(url.contains("exp=") && url.contains("&sig="), "{url}");
    // As the page's <video> loads it: no header, no cookie.
    let media = http
        .get(format!("{}{url}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(media.status(), 200);
    assert_eq!(media.headers()["x-content-type-options"], "nosniff");
    let csp = media.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("sandbox") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    // Altered: another interaction, another file, a later expiry, a flipped signature.
    let (path, query) = url.split_once('?').unwrap();
    let altered = [
        format!("/api/interactions/other/media?{query}"),
        format!("{path}?which=expected&{query}"),
        url.replacen("exp=", "exp=9", 1),
        {
            let last = if url.ends_with('0') { '1' } else { '0' };
            format!("{}{last}", &url[..url.len() - 1])
        },
    ];
    for altered in altered {
        let refused = http
            .get(format!("{}{altered}", server.url))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "{altered}");
        let answer: Value = refused.json().await.unwrap();
        assert_eq!(answer["error"]["code"], "SIGNED_LINK_REFUSED", "{answer}");
    }
    // Past its time: replayed later, it is refused with a message that says so.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = vaider_server::signed_url::sign_until(path, now - 1);
    let refused = http
        .get(format!("{}{expired}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let answer: Value = refused.json().await.unwrap();
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expired"));
    // A signature opens a GET only, and only the path it was made for.
    let post = http
        .post(format!("{}{url}", server.url))
        .send()
        .await
        .unwrap();
    assert_ne!(post.status(), 200);
    let signed_settings =
        vaider_server::signed_url::sign("/api/history", std::time::Duration::from_secs(60));
    let other_path = signed_settings.replace("/api/history", "/api/settings");
    assert_eq!(
        http.get(format!("{}{other_path}", server.url))
            .send()
            .await
            .unwrap()
            .status(),
        403
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let server = TestServer::start().await;
    let http = server.http();
    let session = sign_in(&server).await;
    let other_tab = sign_in(&server).await;
    assert_eq!(with_session(&http, &server.url, MEDIA, &session).await, 404);
    let out = http
        .delete(format!("{}/api/session", server.url))
        .header("x-vaider-session", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    assert_eq!(with_session(&http, &server.url, MEDIA, &session).await, 401);
    assert_eq!(
        with_session(&http, &server.url, MEDIA, &other_tab).await,
        404
    );
}

#[tokio::test]
async fn rotating_the_token_ends_every_session_and_code() {
    let server = TestServer::start().await;
    let data = tempfile::tempdir().unwrap();
    let old = vaider_core::secrets::server_token(data.path()).unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let auth = vaider_server::auth::Auth::following(&old, data.path().join("token"))
        .with_login_key(vaider_server::login_key(&server.engine));
    let app = vaider_server::router_with(vaider_server::Doors {
        engine: server.engine.clone(),
        auth: std::sync::Arc::new(auth),
        shutdown: shutdown.clone(),
        desktop: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let http = server.http();
    let (_, answer) = login(
        &http,
        &url,
        &login_code(&http, &url, &old, &key_of(&server)).await,
    )
    .await;
    let session = answer["session"].as_str().unwrap().to_string();
    let waiting = login_code(&http, &url, &old, &key_of(&server)).await;
    assert_eq!(with_session(&http, &url, MEDIA, &session).await, 404);

    let new = vaider_core::secrets::rotate_token(data.path()).unwrap();
    assert_ne!(new, old);
    assert_eq!(with_session(&http, &url, MEDIA, &session).await, 401);
    assert_eq!(login(&http, &url, &waiting).await.0, 401);
    let settings = |token: String| {
        http.get(format!("{url}/api/settings"))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(settings(old.clone()).await.unwrap().status(), 401);
    assert_eq!(settings(new.clone()).await.unwrap().status(), 200);
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
    // Still allowed to call (with the token), without credentials.
    assert_eq!(answer.headers()["access-control-allow-origin"], &other);
    assert!(answer
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
    // Another page cannot even send the session header: it is not an allowed CORS header.
    let with_session_header = http
        .request(Method::OPTIONS, format!("{}/api/settings", server.url))
        .header("origin", &other)
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "x-vaider-session")
        .send()
        .await
        .unwrap();
    let allowed = with_session_header
        .headers()
        .get("access-control-allow-headers")
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .unwrap_or_default();
    assert!(!allowed.contains("x-vaider-session"), "{allowed}");

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
}

#[tokio::test]
async fn health_proves_the_token_without_showing_it() {
    use vaider_server::running::{find, Found};
    let server = TestServer::start().await;
    let addr: std::net::SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();
    let nonce = "0123456789abcdef0123";
    let answer: Value = server
        .http()
        .get(format!("{}/v1/health?challenge={nonce}", server.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["status"], "ok");
    assert_eq!(
        answer["proof"],
        vaider_server::auth::proof(TOKEN, addr.port(), nonce)
    );
    assert!(!answer.to_string().contains(TOKEN));
    let plain: Value = server
        .http()
        .get(format!("{}/v1/health", server.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(plain.get("proof").is_none());
    let (right, wrong) =
        tokio::task::spawn_blocking(move || (find(addr, TOKEN), find(addr, "vdr_someone_elses")))
            .await
            .unwrap();
    assert_eq!(right, Found::Vaider);
    assert!(matches!(wrong, Found::Other { .. }), "{wrong:?}");
}

/// The tray app embeds the server and signs its window in with a code minted in-process; after
/// `vaider token --rotate` it hands out the new token, and its sign-in link never holds one.
#[tokio::test]
async fn the_embedded_server_signs_its_window_in_with_a_code() {
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
    let link = running.ui_url("#/settings");
    assert!(!link.contains(&old), "{link}");
    let code = link
        .strip_prefix(&format!("{}/#/settings?code=", running.base_url()))
        .expect("the code in the fragment");
    let http = reqwest::Client::new();
    let (status, _) = login(&http, &running.base_url(), code).await;
    assert_eq!(status, 200);
    assert_eq!(login(&http, &running.base_url(), code).await.0, 401);

    let new = vaider_core::secrets::rotate_token(data.path()).unwrap();
    assert_ne!(new, old);
    assert_eq!(running.token(), new);
    tokio::time::timeout(std::time::Duration::from_secs(30), changes.changed())
        .await
        .expect("the rotation is announced")
        .unwrap();
    assert_eq!(*changes.borrow(), new);
    let settings = |token: String| {
        http.get(format!("{}/api/settings", running.base_url()))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(settings(running.token()).await.unwrap().status(), 200);
    assert_eq!(settings(old).await.unwrap().status(), 401);
    running.stop().await;
}
