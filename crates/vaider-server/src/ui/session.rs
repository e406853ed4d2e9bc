//! Signing the UI in and out. `POST /api/login-code` (the bearer token and the data folder's
//! login key, `X-Vaider-Login-Key`) mints a one-time
//! code for `vaider ui` to put in the page's address; `POST /api/login` trades it for a UI
//! session, which the page sends in the `X-Vaider-Session` header from then on;
//! `DELETE /api/session` signs that session out. The rules live in [`crate::auth`].

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use crate::api_error::ApiError;
use crate::auth::{LOGIN_CODE_TTL, LOGIN_KEY_HEADER, SESSION_IDLE};
use crate::AppState;

/// A code for one browser page; the guard has checked the bearer token (a session cannot
/// mint one), and the caller shows the data folder's login key too: the token alone signs no
/// page in, so an agent holding only the token cannot pass for a person in Vaider's window.
pub(super) async fn login_code(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let key = headers
        .get(LOGIN_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !state.auth.login_key_ok(key) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "LOGIN_KEY_REQUIRED",
            "A login code is made only for `vaider ui` or the tray app on this machine, which read a key from Vaider's data folder: the token alone signs no page in. Run `vaider ui`.",
        )
        .into_response();
    }
    Json(json!({
        "code": state.auth.mint_login_code(),
        "expiresInSec": LOGIN_CODE_TTL.as_secs(),
    }))
    .into_response()
}

#[derive(Deserialize)]
pub(super) struct Login {
    code: String,
}

/// Trades a login code for a session. Open to any local caller: the code is the credential,
/// spent on first use, and wrong guesses are counted.
pub(super) async fn login(
    State(state): State<AppState>,
    body: Result<Json<Login>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(Login { code })) = body else {
        return ApiError::bad_request(
            "Send {\"code\": \"…\"}, the login code from the page's address.",
        )
        .into_response();
    };
    match state.auth.sign_in_with_code(&code) {
        Ok(session) => Json(json!({
            "session": session,
            "idleLimitSec": SESSION_IDLE.as_secs(),
        }))
        .into_response(),
        Err(refused) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "LOGIN_CODE_REFUSED",
            refused.to_string(),
        )
        .into_response(),
    }
}

/// Signs the page's session out.
pub(super) async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> StatusCode {
    if let Some(secret) = crate::guard::session_header(&headers) {
        state.auth.end_session(secret);
    }
    StatusCode::NO_CONTENT
}
