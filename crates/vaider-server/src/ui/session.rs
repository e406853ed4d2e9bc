//! `POST /api/session`: the cookie that lets `<video>` and `EventSource` in, since they
//! cannot send the bearer header.

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The name of the cookie that lets `<video>` and `EventSource` in (they cannot send headers).
pub const SESSION_COOKIE: &str = "vaider_session";

/// Gives the page a cookie for the requests that cannot carry the bearer header. The guard
/// has already checked the header, so the cookie holds nothing the page did not have.
pub(super) async fn session(State(state): State<AppState>) -> Response {
    let cookie = format!(
        "{SESSION_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        state.token
    );
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
