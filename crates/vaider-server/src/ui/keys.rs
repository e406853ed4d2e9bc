//! `PUT|DELETE /api/keys/{provider}`: API keys into and out of the OS keychain. No route
//! ever answers with a key; without a keychain the error explains the environment fallback.

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use serde::Deserialize;
use vaider_core::config::Config;
use vaider_core::secrets::{self, ApiKey, KeySource, KeychainStatus};

use crate::api_error::ApiError;
use crate::AppState;

fn known_provider(state: &AppState, provider: &str) -> Result<String, ApiError> {
    let name = provider.trim().to_ascii_lowercase();
    let config = state.engine.config();
    if config.provider_names().contains(&name) {
        Ok(name)
    } else {
        Err(ApiError::not_found(format!(
            "No provider {name:?}: use one of {}.",
            config.provider_names().join(", ")
        )))
    }
}

fn keychain_unavailable(provider: &str, why: &str) -> ApiError {
    let vars = secrets::env_names(provider).join(" or ");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "KEYCHAIN_UNAVAILABLE",
        format!("The key was not stored: {why}. Set {vars} in the environment Vaider starts in, or in a .env file in {}, instead.", Config::dir().display()),
    )
}

#[derive(Deserialize)]
struct KeyBody {
    key: String,
}

pub(super) async fn set_key(
    State(state): State<AppState>,
    UrlPath(provider): UrlPath<String>,
    body: axum::body::Bytes,
) -> Result<StatusCode, ApiError> {
    let provider = known_provider(&state, &provider)?;
    // The parse error must not echo the body: it holds the key.
    let body: KeyBody = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_request("Send {\"key\": \"...\"} as JSON."))?;
    let key = ApiKey::new(body.key.trim());
    if key.expose().is_empty() || key.expose().contains(char::is_whitespace) {
        return Err(ApiError::bad_request(
            "The key is empty or has spaces inside: paste the whole key as the provider shows it.",
        ));
    }
    let name = provider.clone();
    let stored = key.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        if let KeychainStatus::Unavailable(why) = secrets::keychain_status() {
            return Err(why);
        }
        secrets::keychain_set(&name, &stored).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    outcome.map_err(|why| keychain_unavailable(&provider, &why))?;
    state.engine.forget_keys();
    state
        .engine
        .set_provider_key(&provider, key, KeySource::Keychain);
    Ok(StatusCode::NO_CONTENT)
}

pub(super) async fn clear_key(
    State(state): State<AppState>,
    UrlPath(provider): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let provider = known_provider(&state, &provider)?;
    let name = provider.clone();
    tokio::task::spawn_blocking(move || secrets::keychain_delete(&name))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| keychain_unavailable(&provider, &e.to_string()))?;
    state.engine.forget_keys();
    Ok(StatusCode::NO_CONTENT)
}
