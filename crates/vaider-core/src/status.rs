//! What `vaider_status`, `vaider doctor`, the UI and the tray report about the engine: the
//! version, the default provider and model, whether keys are set, and every provider's state.

use std::future::Future;
use std::path::Path;

use serde::Serialize;

use crate::config::Config;
use crate::engine::Vaider;
use crate::pipeline::{now_rfc3339, VERSION};
use crate::secrets::{ApiKey, KeySource};

/// What `vaider_status` and `vaider doctor` report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub version: String,
    pub provider: String,
    pub model: String,
    pub key_configured: bool,
    /// Where the key comes from (environment variable, .env file, OS keychain), never the key.
    pub key_source: Option<String>,
    pub server_time: String,
    pub max_concurrent: usize,
    pub timeout_sec: u64,
    pub cache: bool,
    /// Paused from the tray or the UI: analyses are refused with PAUSED until resumed.
    pub paused: bool,
    pub data_dir: String,
    /// Every provider Vaider can use, whether it is ready, and which tools it serves.
    pub providers: Vec<ProviderStatus>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    pub name: String,
    pub adapter: String,
    pub model: String,
    pub base_url: String,
    /// A key is configured, or the provider needs none (local servers).
    pub ready: bool,
    pub key_source: Option<String>,
    /// "video" when whole videos go to the model, "keyframes" when they are turned into frames.
    pub video_as: String,
    pub tools: Vec<String>,
}

/// Bedrock is ready when the AWS chain finds credentials and a region; the source says where
/// (never the keys themselves).
fn aws_status(provider: &crate::config::ProviderConfig) -> (bool, Option<String>) {
    let choice = crate::aws::AwsChoice {
        profile: provider.aws_profile.clone(),
        region: provider.region.clone(),
    };
    match crate::aws::resolve(&|name| std::env::var(name).ok(), &choice) {
        Ok(setup) => (true, Some(setup.credentials.source)),
        Err(_) => (false, None),
    }
}

impl Vaider {
    pub async fn status(&self) -> StatusReport {
        let config = self.config();
        let providers =
            provider_statuses(&config, |name| async move { self.api_key(&name).await }).await;
        report(&config, providers, self.is_paused(), &self.data_dir)
    }
}

impl StatusReport {
    /// The status a config gives without opening the engine, so a read-only look (`vaider
    /// doctor`) creates no history in the data folder. Keys are looked up where the engine
    /// looks (the keychain, the environment, the .env files); nothing is paused, as nothing
    /// runs. A config the engine would refuse is refused here too.
    pub async fn of_config(config: &Config) -> crate::error::Result<StatusReport> {
        config.validate()?;
        let cwd = std::env::current_dir().ok();
        let dirs = crate::secrets::dotenv_dirs(&Config::dir(), cwd.as_deref());
        let providers = provider_statuses(config, |name| {
            let dirs = dirs.clone();
            async move {
                tokio::task::spawn_blocking(move || crate::secrets::find_api_key(&name, &dirs))
                    .await
                    .ok()
                    .flatten()
            }
        })
        .await;
        Ok(report(config, providers, false, &config.data_dir()))
    }
}

/// Every provider the config knows, with its key looked up by `api_key` (Bedrock's by the AWS
/// chain).
async fn provider_statuses<F, Fut>(config: &Config, api_key: F) -> Vec<ProviderStatus>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Option<(ApiKey, KeySource)>>,
{
    let mut providers = Vec::new();
    for name in config.provider_names() {
        let Ok(provider) = config.provider(&name) else {
            continue;
        };
        let (ready, key_source) = if provider.adapter == crate::config::Adapter::Bedrock {
            aws_status(&provider)
        } else {
            let key = api_key(name.clone()).await;
            (
                key.is_some() || !provider.needs_key,
                key.map(|(_, source)| source.to_string()),
            )
        };
        providers.push(ProviderStatus {
            adapter: format!("{:?}", provider.adapter).to_lowercase(),
            ready,
            key_source,
            video_as: if provider.accepts_video {
                "video"
            } else {
                "keyframes"
            }
            .to_string(),
            tools: crate::task::catalog()
                .iter()
                .map(|t| t.as_str().to_string())
                .collect(),
            model: provider.model,
            base_url: provider.base_url,
            name,
        });
    }
    providers
}

/// The report: the default provider's model and key, the config's limits, every provider.
fn report(
    config: &Config,
    providers: Vec<ProviderStatus>,
    paused: bool,
    data_dir: &Path,
) -> StatusReport {
    let default = providers.iter().find(|p| p.name == config.provider);
    StatusReport {
        version: VERSION.to_string(),
        provider: config.provider.clone(),
        model: default
            .map(|p| p.model.clone())
            .unwrap_or_else(|| config.model.clone()),
        key_configured: default.is_some_and(|p| p.ready),
        key_source: default.and_then(|p| p.key_source.clone()),
        server_time: now_rfc3339(),
        max_concurrent: config.max_concurrent,
        timeout_sec: config.timeout_sec,
        cache: config.cache,
        paused,
        data_dir: data_dir.display().to_string(),
        providers,
    }
}
