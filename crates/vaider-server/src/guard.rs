//! The checks in front of every route: the Host must be a loopback name (DNS rebinding), a
//! present Origin must be a loopback or app origin (403 otherwise), and the bearer token (or
//! the UI's session cookie) must match on every route but health, the OpenAPI document and
//! the UI's static pages (401 otherwise).

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
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
    if !open && !token_matches(headers, &state.token) {
        let mut response = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "Missing or wrong token. Send `Authorization: Bearer <token>`; `vaider token` prints it.",
        )
        .into_response();
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
    match origin.as_str() {
        "tauri://localhost" | "http://tauri.localhost" | "https://tauri.localhost" => return true,
        _ => {}
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

/// CORS for the app's own origins only (the same list the Origin check allows); any other
/// origin gets no CORS headers, and the guard refuses it.
pub fn cors() -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowOrigin, CorsLayer};
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
        .allow_credentials(true)
}

fn token_matches(headers: &HeaderMap, token: &str) -> bool {
    bearer_matches(headers, token) || session_cookie_matches(headers, token)
}

/// The UI's cookie (set by `POST /api/session`), for `<video>` and `EventSource`.
fn session_cookie_matches(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .any(|(name, value)| {
            name == crate::ui::SESSION_COOKIE
                && constant_time_eq(value.as_bytes(), token.as_bytes())
        })
}

fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
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
    constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

/// Compares without an early exit, so response time does not reveal how much of a guess matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
