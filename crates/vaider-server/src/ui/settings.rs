//! `GET|PUT /api/settings`: the values of `config.toml` with what overrides them, the
//! keychain's state and every provider; edits are range-checked, saved and applied at once.

use std::path::{Path, PathBuf};

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use vaider_core::config::{Config, DEFAULT_GEMINI_MODEL};
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

async fn current(state: &AppState) -> Settings {
    let config = state.engine.config();
    let status = state.engine.status().await;
    let keychain = tokio::task::spawn_blocking(secrets::keychain_status)
        .await
        .unwrap_or(KeychainStatus::Unavailable(
            "the keychain check failed".into(),
        ));
    let keychain = match keychain {
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
    };
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
        keychain,
        providers,
        paused: state.engine.is_paused(),
    }
}

pub(super) async fn settings(State(state): State<AppState>) -> Json<Settings> {
    Json(current(&state).await)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SettingsBody {
    provider: Option<String>,
    model: Option<String>,
    port: Option<u16>,
    max_concurrent: Option<usize>,
    timeout_sec: Option<u64>,
    max_attempts: Option<u32>,
    max_calls_per_minute: Option<u32>,
    max_model_calls: Option<u32>,
    cache: Option<bool>,
    data_dir: Option<String>,
    download_limit_mb: Option<u64>,
    video_sampling: Option<String>,
    child_env_pass: Option<Vec<String>>,
}

/// Puts the edited values into the config file's settings, refusing any that is out of range
/// (by `Config::validate`, as every door does).
fn edit(config: &mut Config, body: SettingsBody) -> Result<(), ApiError> {
    if let Some(provider) = body.provider {
        let provider = provider.trim().to_ascii_lowercase();
        if !config.provider_names().contains(&provider) {
            return Err(ApiError::bad_request(format!(
                "provider {provider:?} is not known: use one of {}.",
                config.provider_names().join(", ")
            )));
        }
        if provider != config.provider && body.model.is_none() {
            // A new provider starts on its own default model, not the old one's.
            config.model = DEFAULT_GEMINI_MODEL.to_string();
            config.provider = provider.clone();
            if let Ok(resolved) = config.provider(&provider) {
                config.model = resolved.model;
            }
        }
        config.provider = provider;
    }
    if let Some(model) = body.model {
        let model = model.trim().to_string();
        if model.is_empty() || model.contains(char::is_whitespace) {
            return Err(ApiError::bad_request(format!(
                "model must be a model name like {DEFAULT_GEMINI_MODEL}, not {model:?}."
            )));
        }
        config.model = model;
    }
    if let Some(port) = body.port {
        if port == 0 {
            return Err(ApiError::bad_request(
                "port must be between 1 and 65535, not 0.",
            ));
        }
        config.port = port;
    }
    if let Some(n) = body.max_concurrent {
        config.max_concurrent = n;
    }
    if let Some(t) = body.timeout_sec {
        config.timeout_sec = t;
    }
    if let Some(n) = body.max_attempts {
        config.max_attempts = n;
    }
    if let Some(n) = body.max_calls_per_minute {
        config.max_calls_per_minute = n;
    }
    if let Some(n) = body.max_model_calls {
        config.max_model_calls = n;
    }
    if let Some(names) = body.child_env_pass {
        config.child_env_pass = pass_through(names)?;
    }
    if let Some(cache) = body.cache {
        config.cache = cache;
    }
    if let Some(mb) = body.download_limit_mb {
        config.download_limit_mb = mb;
    }
    if let Some(sampling) = body.video_sampling {
        config.video_sampling = VideoSampling::parse(&sampling).ok_or_else(|| {
            ApiError::bad_request(format!(
                "videoSampling {sampling:?} is not known: use {}.",
                VideoSampling::NAMES
            ))
        })?;
    }
    if let Some(dir) = body.data_dir {
        let dir = dir.trim();
        config.data_dir = if dir.is_empty() {
            None
        } else if Path::new(dir).is_absolute() {
            Some(PathBuf::from(dir))
        } else {
            return Err(ApiError::bad_request(format!(
                "dataDir must be an absolute folder path (or empty for the default), not {dir:?}."
            )));
        };
    }
    // The ranges are the core's, the same for the file, the environment and this form.
    config
        .validate()
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// The variables to pass to child processes: variable names, each once; a secret (a key, a
/// token, a password, anything Vaider reads a credential from) is refused, since it would
/// never pass anyway and the user should know.
fn pass_through(names: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut kept: Vec<String> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let valid = name.len() <= 128
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            let shown: String = name.chars().take(60).collect();
            return Err(ApiError::bad_request(format!(
                "childEnvPass: {shown:?} is not an environment variable name (letters, digits and _, not starting with a digit)."
            )));
        }
        if vaider_core::child_env::is_secret(name) {
            return Err(ApiError::bad_request(format!(
                "childEnvPass: {name} holds a secret, and secrets never reach the programs Vaider starts (see SECURITY.md). Remove it from the list."
            )));
        }
        if !kept.iter().any(|k| k == name) {
            kept.push(name.to_string());
        }
    }
    Ok(kept)
}

pub(super) async fn save_settings(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<Json<SavedSettings>, ApiError> {
    let body: SettingsBody = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("The settings are not valid: {e}.")))?;
    let path = Config::file_path();
    // Only the file's own values are edited and saved: environment overrides stay out of it.
    let mut file = Config::load_file(&path).map_err(|e| ApiError::bad_request(e.to_string()))?;
    edit(&mut file, body)?;
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
