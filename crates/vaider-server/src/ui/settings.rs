//! `GET|PUT /api/settings`: the values of `config.toml` with what overrides them, the
//! keychain's state and every provider; edits are range-checked, saved and applied at once.

use std::path::PathBuf;

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use vaider_core::config::{Config, SettingsEdit};
use vaider_core::sampling::VideoSampling;
use vaider_core::secrets::{self, KeychainStatus};

use crate::api_error::ApiError;
use crate::AppState;

/// The form's fields, each with its name in config.toml; the variables that override each
/// come from the one table (vaider_core::env_vars).
const FORM_FIELDS: &[(&str, &str)] = &[
    ("provider", "provider"),
    ("model", "model"),
    ("port", "port"),
    ("maxConcurrent", "max_concurrent"),
    ("timeoutSec", "timeout_sec"),
    ("maxAttempts", "max_attempts"),
    ("maxCallsPerMinute", "max_calls_per_minute"),
    ("maxModelCalls", "max_model_calls"),
    ("cache", "cache"),
    ("dataDir", "data_dir"),
    ("downloadLimitMb", "download_limit_mb"),
    ("videoSampling", "video_sampling"),
    ("childEnvPass", "child_env_pass"),
];

/// `GET /api/settings` (the `Settings` of docs/ui-api.md).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Settings {
    config_path: PathBuf,
    values: Values,
    data_dir_in_use: PathBuf,
    env_overrides: Vec<EnvOverride>,
    keychain: Keychain,
    providers: Vec<ProviderSettings>,
    paused: bool,
}

/// The editable values, as the form shows them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Values {
    provider: String,
    model: String,
    port: u16,
    max_concurrent: usize,
    timeout_sec: u64,
    max_attempts: u32,
    max_calls_per_minute: u32,
    max_model_calls: u32,
    cache: bool,
    /// Empty for the default folder.
    data_dir: String,
    download_limit_mb: u64,
    video_sampling: VideoSampling,
    /// Variables passed to the programs Vaider starts, beyond the allow-list.
    child_env_pass: Vec<String>,
}

/// A field whose value comes from an environment variable rather than the file.
#[derive(Debug, Serialize)]
struct EnvOverride {
    field: &'static str,
    variable: &'static str,
}

#[derive(Debug, Serialize)]
struct Keychain {
    available: bool,
    message: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProviderSettings {
    name: String,
    model: String,
    adapter: String,
    needs_key: bool,
    key_set: bool,
    /// Where the key comes from, never the key.
    key_source: Option<String>,
    ready: bool,
    env_names: Vec<String>,
}

/// `PUT /api/settings`: the new settings and the fields that apply only after a restart.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SavedSettings {
    #[serde(flatten)]
    settings: Settings,
    restart_needed: Vec<&'static str>,
}

fn env_overrides() -> Vec<EnvOverride> {
    FORM_FIELDS
        .iter()
        .filter_map(|(field, setting)| {
            let variable = vaider_core::env_vars::for_setting(setting)
                .find(|v| std::env::var(v).is_ok_and(|value| !value.is_empty()))?;
            Some(EnvOverride { field, variable })
        })
        .collect()
}

/// Whether keys go to the OS keychain here, and if not, where Vaider reads them instead.
async fn keychain() -> Keychain {
    let keychain = tokio::task::spawn_blocking(secrets::keychain_status)
        .await
        .unwrap_or(KeychainStatus::Unavailable(
            "the keychain check failed".into(),
        ));
    match keychain {
        KeychainStatus::Available => Keychain {
            available: true,
            message: "Keys are kept in the OS keychain.".into(),
        },
        KeychainStatus::Unavailable(why) => Keychain {
            available: false,
            message: format!(
                "No OS keychain is available here: {why}. Vaider reads keys from the environment instead: set GEMINI_API_KEY (or <PROVIDER>_API_KEY) where Vaider starts, or put it in a .env file in {}.",
                Config::dir().display()
            ),
        },
    }
}

async fn current(state: &AppState) -> Settings {
    let config = state.engine.config();
    let status = state.engine.status().await;
    let providers = status
        .providers
        .iter()
        .map(|p| ProviderSettings {
            name: p.name.clone(),
            model: p.model.clone(),
            adapter: p.adapter.clone(),
            needs_key: config
                .provider(&p.name)
                .map(|c| c.needs_key)
                .unwrap_or(true),
            key_set: p.key_source.is_some(),
            key_source: p.key_source.clone(),
            ready: p.ready,
            env_names: secrets::env_names(&p.name),
        })
        .collect();
    Settings {
        config_path: Config::file_path(),
        values: Values {
            provider: config.provider.clone(),
            model: status.model,
            port: config.port,
            max_concurrent: config.max_concurrent,
            timeout_sec: config.timeout_sec,
            max_attempts: config.max_attempts,
            max_calls_per_minute: config.max_calls_per_minute,
            max_model_calls: config.max_model_calls,
            cache: config.cache,
            data_dir: config
                .data_dir
                .as_ref()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            download_limit_mb: config.download_limit_mb,
            video_sampling: config.video_sampling,
            child_env_pass: config.child_env_pass.clone(),
        },
        data_dir_in_use: state.engine.data_dir().to_path_buf(),
        env_overrides: env_overrides(),
        keychain: keychain().await,
        providers,
        paused: state.engine.is_paused(),
    }
}

pub(super) async fn settings(State(state): State<AppState>) -> Json<Settings> {
    Json(current(&state).await)
}

pub(super) async fn save_settings(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<Json<SavedSettings>, ApiError> {
    let body: SettingsEdit = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("The settings are not valid: {e}.")))?;
    let path = Config::file_path();
    // Only the file's own values are edited and saved: environment overrides stay out of it.
    let mut file = Config::load_file(&path).map_err(|e| ApiError::bad_request(e.to_string()))?;
    // The rules of each setting are the config's own (`Config::apply_edit`).
    file.apply_edit(body)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    file.save(&path)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mut effective = file;
    effective
        .apply_env(|name| std::env::var(name).ok())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let restart_needed = state.engine.apply_config(effective);
    Ok(Json(SavedSettings {
        settings: current(&state).await,
        restart_needed,
    }))
}
