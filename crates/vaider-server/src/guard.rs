//! The checks in front of every route: the Host must be a loopback name (DNS rebinding), a
//! present Origin must be a loopback or app origin (403 otherwise), and the bearer token must
//! match on every route but health, the OpenAPI document and the UI's static pages (401
//! otherwise). The UI's session cookie (a random session secret, never the token: see
//! [`crate::auth`]) stands in for the token only where the page cannot send a header (its
//! `<video>` and `EventSource` loads), only on GET, and only on requests from the server's
//! own pages: never on `/mcp`, `/v1` or any request that changes something.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;
use crate::AppState;

/// Origins a browser or webview may call from: loopback pages and the tray app's webview.
pub const ALLOWED_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "tauri://localhost:*",
    "http://tauri.localhost:*",
    "https://tauri.localhost:*",
];

/// The tray app's webview, whose pages may call with credentials.
const APP_WEBVIEW_ORIGINS: &[&str] = &[
    "tauri://localhost",
    "http://tauri.localhost",
    "https://tauri.localhost",
];

/// Routes any local process may call without the token: they hold no data.
const OPEN_PATHS: &[&str] = &["/", "/v1/health", "/v1/openapi.json"];
/// The UI's static files.
const OPEN_PREFIX: &str = "/ui/";

pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !host_allowed(headers) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN_HOST",
            "The Host header must be localhost, 127.0.0.1 or [::1]: Vaider only answers local clients.",
        )
        .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !origin.to_str().is_ok_and(origin_allowed) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN_ORIGIN",
                "Requests from this web origin are refused: only local pages and the Vaider app may call Vaider.",
            )
            .into_response();
        }
    }
    let path = request.uri().path();
    let open = OPEN_PATHS.contains(&path) || path.starts_with(OPEN_PREFIX);
    let cookie_counts = cookie_may_count(headers, request.method(), path);
    let auth = &state.auth;
    let has_session = || session_cookies(headers).any(|secret| auth.session_ok(secret));
    let authorised = bearer_matches(headers, auth) || (cookie_counts && has_session());
    if !open && !authorised {
        let message = if !cookie_counts && has_session() {
            "The UI's session cookie counts only for the media and live events of Vaider's own pages (never on /mcp, /v1 or a change). \
             Send `Authorization: Bearer <token>`; `vaider token` prints it."
        } else {
            "Missing or wrong token. Send `Authorization: Bearer <token>`; `vaider token` prints it."
        };
        let mut response =
            ApiError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message).into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response;
    }
    next.run(request).await
}

fn host_allowed(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        // HTTP/1.0 and some local tools send no Host; they cannot be a rebinding browser.
        return true;
    };
    is_loopback_name(strip_port(host))
}

fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                host
            } else {
                authority
            }
        })
}

fn is_loopback_name(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

pub fn origin_allowed(origin: &str) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    if APP_WEBVIEW_ORIGINS.contains(&origin.as_str()) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    // An origin has no path; anything after the authority makes it malformed.
    if rest.contains('/') {
        return false;
    }
    is_loopback_name(strip_port(rest))
}

/// Fetch metadata: where the browser says the request comes from.
const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// Whether the UI's cookie may stand in for the token on this request. Cookies are not
/// port-scoped and `SameSite=Strict` counts every loopback port as the same site, so the
/// browser also attaches the cookie to what another local page (the app under test on
/// `http://127.0.0.1:5173`, say) sends here, and that page's server sees its value. So the
/// cookie opens only what the page cannot load with its bearer header, `GET` of an
/// interaction's media and of the live events, which change nothing; every other UI call
/// sends the header. A present `Origin` must be the server's own, and where the browser says
/// where a request comes from (`Sec-Fetch-Site`), it must be `same-origin` or `none`.
fn cookie_may_count(headers: &HeaderMap, method: &Method, path: &str) -> bool {
    if method != Method::GET && method != Method::HEAD {
        return false;
    }
    if !cookie_route(path) {
        return false;
    }
    let origin_is_own = match headers.get(header::ORIGIN) {
        None => true,
        Some(origin) => origin
            .to_str()
            .is_ok_and(|origin| is_own_origin(origin, headers)),
    };
    let site_is_own = match headers.get(SEC_FETCH_SITE) {
        None => true,
        Some(site) => matches!(site.to_str(), Ok("same-origin" | "none")),
    };
    origin_is_own && site_is_own
}

/// `/api/events` and `/api/interactions/{id}/media`: what `EventSource` and `<video>`/`<img>`
/// load.
fn cookie_route(path: &str) -> bool {
    if path == "/api/events" {
        return true;
    }
    path.strip_prefix("/api/interactions/")
        .and_then(|rest| rest.strip_suffix("/media"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// Whether `origin` is the server's own: `http://` and the authority the request was sent to
/// (its Host header), so `http://127.0.0.1:3456` for a page loaded from there.
fn is_own_origin(origin: &str, headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let Some(authority) = origin.trim().strip_prefix("http://") else {
        return false;
    };
    let normalise = |authority: &str| {
        let authority = authority.trim().to_ascii_lowercase();
        // A browser leaves the default port out of an Origin; a client may write it in Host.
        match authority.strip_suffix(":80") {
            Some(bare) => bare.to_string(),
            None => authority,
        }
    };
    normalise(authority) == normalise(host)
}

/// Credentialed CORS only for the server's own origin and the tray app's webview: any other
/// loopback page may call with the bearer token, but its requests carry no cookie that counts.
fn credentials_allowed(origin: &str, headers: &HeaderMap) -> bool {
    APP_WEBVIEW_ORIGINS.contains(&origin.trim().to_ascii_lowercase().as_str())
        || is_own_origin(origin, headers)
}

/// CORS for the app's own origins only (the same list the Origin check allows); any other
/// origin gets no CORS headers, and the guard refuses it. Credentials only as
/// [`credentials_allowed`] says.
pub fn cors() -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowCredentials, AllowOrigin, CorsLayer};
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(|origin, _| {
            origin.to_str().is_ok_and(origin_allowed)
        }))
        .allow_methods([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::PUT,
            axum::http::Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::RANGE,
            header::HeaderName::from_static("mcp-session-id"),
            header::HeaderName::from_static("mcp-protocol-version"),
            header::HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::CONTENT_RANGE,
            header::ACCEPT_RANGES,
            header::CONTENT_LENGTH,
            header::HeaderName::from_static("mcp-session-id"),
        ])
        .allow_credentials(AllowCredentials::predicate(|origin, parts| {
            origin
                .to_str()
                .is_ok_and(|origin| credentials_allowed(origin, &parts.headers))
        }))
}

/// The values of the UI's cookies (set by `POST /api/session`); they count only where
/// [`cookie_may_count`] says so.
pub(crate) fn session_cookies(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| *name == crate::ui::SESSION_COOKIE)
        .map(|(_, value)| value)
}

/// Whether the request carries the token in its Authorization header (never in a cookie).
pub(crate) fn bearer_matches(headers: &HeaderMap, auth: &crate::auth::Auth) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
    else {
        return false;
    };
    auth.bearer_ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_and_others_do_not() {
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1:3456",
            "http://[::1]:8080",
            "http://localhost",
            "tauri://localhost",
        ] {
            assert!(origin_allowed(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "null",
            "file://",
            "http://192.168.1.5:3456",
        ] {
            assert!(!origin_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn hosts_are_checked_without_their_port() {
        assert_eq!(strip_port("127.0.0.1:3456"), "127.0.0.1");
        assert_eq!(strip_port("[::1]:3456"), "::1");
        assert_eq!(strip_port("localhost"), "localhost");
        assert!(is_loopback_name("127.0.0.2"));
        assert!(!is_loopback_name("evil.example"));
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, header::HeaderValue::from_static(value));
        }
        map
    }

    const MEDIA: &str = "/api/interactions/abc/media";

    #[test]
    fn the_cookie_counts_only_on_the_servers_own_pages() {
        let own = [("host", "127.0.0.1:3456")];
        // The page's <video>, <img> and EventSource loads: no Origin, same-origin or no metadata.
        for ok in [
            headers(&own),
            headers(&[own[0], ("sec-fetch-site", "same-origin")]),
            headers(&[own[0], ("sec-fetch-site", "none")]),
            headers(&[own[0], ("origin", "http://127.0.0.1:3456")]),
            headers(&[
                own[0],
                ("origin", "http://127.0.0.1:3456"),
                ("sec-fetch-site", "same-origin"),
            ]),
            headers(&[("host", "[::1]:3456"), ("origin", "http://[::1]:3456")]),
            headers(&[
                ("host", "LocalHost:3456"),
                ("origin", "http://localhost:3456"),
            ]),
            headers(&[("host", "localhost:80"), ("origin", "http://localhost")]),
        ] {
            assert!(cookie_may_count(&ok, &Method::GET, MEDIA), "{ok:?}");
            assert!(cookie_may_count(&ok, &Method::GET, "/api/events"), "{ok:?}");
        }
        for refused in [
            // Another loopback port: a fetch, a form POST, an <img> or a no-cors fetch.
            headers(&[own[0], ("origin", "http://127.0.0.1:5173")]),
            headers(&[own[0], ("origin", "http://localhost:3456")]),
            headers(&[own[0], ("origin", "https://127.0.0.1:3456")]),
            headers(&[own[0], ("origin", "tauri://localhost")]),
            headers(&[own[0], ("origin", "null")]),
            headers(&[own[0], ("sec-fetch-site", "same-site")]),
            headers(&[own[0], ("sec-fetch-site", "cross-site")]),
            headers(&[
                own[0],
                ("origin", "http://127.0.0.1:3456"),
                ("sec-fetch-site", "same-site"),
            ]),
            // No Host: no own origin to compare with.
            headers(&[("origin", "http://127.0.0.1:3456")]),
        ] {
            assert!(
                !cookie_may_count(&refused, &Method::GET, MEDIA),
                "{refused:?}"
            );
        }
        // Everything the page can send its bearer header with, and every change.
        for not_for_the_cookie in [
            "/mcp",
            "/mcp/",
            "/MCP",
            "//mcp",
            "/v1/analyse",
            "/api/history",
            "/api/settings",
            "/api/session",
            "/api/interactions/x",
            "/api/interactions/x/y/media",
            "/api/interactions//media",
            "/api/events/x",
        ] {
            assert!(
                !cookie_may_count(&headers(&own), &Method::GET, not_for_the_cookie),
                "{not_for_the_cookie}"
            );
        }
        for change in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            let own_page = headers(&[
                own[0],
                ("origin", "http://127.0.0.1:3456"),
                ("sec-fetch-site", "same-origin"),
            ]);
            assert!(!cookie_may_count(&own_page, &change, MEDIA), "{change}");
        }
    }

    #[test]
    fn credentials_go_to_the_own_origin_and_the_app_only() {
        let own = headers(&[("host", "127.0.0.1:3456")]);
        for ok in [
            "http://127.0.0.1:3456",
            "tauri://localhost",
            "http://tauri.localhost",
            "https://tauri.localhost",
        ] {
            assert!(credentials_allowed(ok, &own), "{ok}");
        }
        for refused in [
            "http://127.0.0.1:5173",
            "http://localhost:3456",
            "http://[::1]:3456",
        ] {
            assert!(!credentials_allowed(refused, &own), "{refused}");
        }
    }
}
