//! What `vaider_status`, `vaider doctor`, the UI and the tray report about the engine: the
//! version, the default provider and model, whether keys are set, and every provider's state.

use serde::Serialize;

use crate::engine::Vaider;
use crate::pipeline::{now_rfc3339, VERSION};

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
        let mut providers = Vec::new();
        for name in config.provider_names() {
            let Ok(provider) = config.provider(&name) else {
                continue;
            };
            let (ready, key_source) = if provider.adapter == crate::config::Adapter::Bedrock {
                aws_status(&provider)
            } else {
                let key = self.api_key(&name).await;
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
            paused: self.is_paused(),
            data_dir: self.data_dir.display().to_string(),
            providers,
        }
    }
}
