//! The checks in front of every route: the Host must be a loopback name (DNS rebinding), a
//! present Origin must be a loopback or app origin (403 otherwise), and a credential must
//! match on every route but health, the OpenAPI document, the UI's static pages and the
//! UI's sign-in (401 otherwise). Three credentials count, each where it is meant to:
//! - the bearer token, everywhere ([`Caller::Token`]);
//! - the UI's session in the [`SESSION_HEADER`], on the UI's own routes `/api/...` only,
//!   never on `/mcp` or `/v1` ([`Caller::SignedInUi`]);
//! - a signed URL ([`crate::signed_url`]) on a `GET`, for what the page loads without a
//!   header (`<video>`, `<img>`): it opens that one address for a few minutes and names no
//!   caller.
//!
//! No cookie counts: browsers send a cookie to every port of 127.0.0.1, so another local
//! server would receive it and could replay it. The [`Caller`] goes into the request's
//! extensions for the handlers that must know whether a person decided.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;
use crate::auth::{Auth, Caller, SESSION_HEADER};
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

/// Routes any local process may call without a credential: they hold no data, and the
/// sign-in takes a one-time code in its body.
const OPEN_PATHS: &[&str] = &["/", "/v1/health", "/v1/openapi.json", "/api/login"];
/// The UI's static files.
const OPEN_PREFIX: &str = "/ui/";
/// Where the UI's session counts: the UI's own JSON API.
const SESSION_PREFIX: &str = "/api/";
/// Bearer only: a signed-in page does not mint codes for other pages.
const TOKEN_ONLY_PATHS: &[&str] = &["/api/login-code"];

pub async fn check(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
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
    match admit(&state.auth, &request) {
        Admission::As(caller) => {
            request.extensions_mut().insert(caller);
        }
        Admission::Open | Admission::SignedUrl => {}
        Admission::Refused(response) => return response,
    }
    next.run(request).await
}

/// What let a request in, or the answer that refuses it.
enum Admission {
    As(Caller),
    SignedUrl,
    Open,
    Refused(Response),
}

fn admit(auth: &Auth, request: &Request) -> Admission {
    let headers = request.headers();
    let path = request.uri().path();
    if bearer_matches(headers, auth) {
        return Admission::As(Caller::Token);
    }
    let session = session_header(headers);
    let session_route = session_counts_on(path);
    if session_route && session.is_some_and(|secret| auth.session_ok(secret)) {
        return Admission::As(Caller::SignedInUi);
    }
    let query = request.uri().query();
    let read = request.method() == Method::GET || request.method() == Method::HEAD;
    if read && crate::signed_url::is_signed(query) {
        return match crate::signed_url::verify(path, query) {
            Ok(()) => Admission::SignedUrl,
            Err(refusal) => Admission::Refused(
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    "SIGNED_LINK_REFUSED",
                    refusal.to_string(),
                )
                .into_response(),
            ),
        };
    }
    if OPEN_PATHS.contains(&path) || path.starts_with(OPEN_PREFIX) {
        return Admission::Open;
    }
    let message = match session {
        Some(_) if !session_route => {
            "The UI's session counts only on the UI's own routes (/api/...), never on /mcp or /v1. \
             Send `Authorization: Bearer <token>`; `vaider token` prints it."
        }
        Some(_) => {
            "This UI session has ended (signed out, idle for 12 hours, the token was rotated or the server restarted). \
             Open the page again with `vaider ui` or from the tray menu."
        }
        None => "Missing or wrong token. Send `Authorization: Bearer <token>`; `vaider token` prints it.",
    };
    let mut response =
        ApiError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    Admission::Refused(response)
}

/// Whether the UI's session may stand in for the token on `path`: the UI's JSON API, but
/// not the minting of login codes.
fn session_counts_on(path: &str) -> bool {
    path.starts_with(SESSION_PREFIX) && !TOKEN_ONLY_PATHS.contains(&path)
}

/// The UI's session secret, from its header.
pub(crate) fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
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
/// loopback page may call with the bearer token. (No cookie counts any more; this keeps a
/// browser from sending anything else ambient along with another page's calls.)
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

    #[test]
    fn the_session_counts_on_the_uis_own_routes_only() {
        for ui in [
            "/api/history",
            "/api/events",
            "/api/interactions/x/media",
            "/api/session",
        ] {
            assert!(session_counts_on(ui), "{ui}");
        }
        for not_ui in [
            "/mcp",
            "/mcp/",
            "/MCP",
            "//api/history",
            "/v1/analyse",
            "/v1/health",
            "/api/login-code",
            "/apix",
            "/",
        ] {
            assert!(!session_counts_on(not_ui), "{not_ui}");
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
