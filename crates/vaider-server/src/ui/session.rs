//! `POST /api/session` mints the UI's session, whose cookie lets `<video>` and `EventSource`
//! in (they cannot send the bearer header); `DELETE /api/session` signs it out. The cookie
//! holds a random secret of [`crate::auth`], never the token.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The name of the cookie that lets `<video>` and `EventSource` in (they cannot send headers).
pub const SESSION_COOKIE: &str = "vaider_session";

/// Gives the page a new session. The guard has checked the bearer header (the cookie never
/// counts here), so only a holder of the token can mint one. No `Domain`: the cookie goes
/// back to this host only; browsers still send it to its other ports, hence a secret that is
/// worth nothing there.
pub(super) async fn session(State(state): State<AppState>, headers: HeaderMap) -> Response {
    // A page that signs in again replaces its old session rather than piling them up.
    for old in crate::guard::session_cookies(&headers) {
        state.auth.end_session(old);
    }
    let secret = state.auth.mint_session();
    cookie_response(&format!(
        "{SESSION_COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/"
    ))
}

/// Signs the page's session out and clears its cookie.
pub(super) async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Response {
    for secret in crate::guard::session_cookies(&headers) {
        state.auth.end_session(secret);
    }
    cookie_response(&format!(
        "{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
    ))
}

fn cookie_response(cookie: &str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
