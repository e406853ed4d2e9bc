//! Vaider's settings: one TOML file in the config folder, every field overridable by a
//! `VAIDER_*` environment variable. The CLI, the server and the tray app read the same file.
//! Here: the settings and their defaults. Beside it: reading them from the file and the
//! environment (`file.rs`), their ranges (`limits.rs`), the providers (`providers.rs`) and
//! the prices (`prices.rs`).

mod edit;
mod file;
pub use file::{project_fallback, write_project_gitignore, PROJECT_GITIGNORE};
mod limits;
mod prices;
mod providers;
pub use edit::SettingsEdit;
pub use limits::MAX_TIMEOUT_SEC;
pub use prices::{bedrock_base_model, default_prices, Price};
pub use providers::{ProviderSettings, BUILT_IN_PROVIDERS};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

// Re-exports of the crate that owns them (vaider-providers): a provider's resolved settings.
pub use vaider_providers::settings::{
    Adapter, GeminiConfig, ProviderConfig, BEDROCK_BASE_URL, DEFAULT_GEMINI_BASE_URL,
};

pub const DEFAULT_PORT: u16 = 3456;
/// A current, inexpensive Gemini model that understands video: the replacement Google names
/// for gemini-2.5-flash, in the same price class. Retiring models are listed in models/mod.rs.
pub const DEFAULT_GEMINI_MODEL: &str = "gemini-3.5-flash-lite";

/// How QA test plans run (`[qa]` in config.toml).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QaConfig {
    /// Plan runs at once, each with its own browser; more wait their turn. Two fit a small
    /// machine: each browser takes about a core while a page loads.
    pub parallel_runs: usize,
    /// The most actions an `agentic_browsing` step may take before it counts as stuck.
    pub browse_max_actions: u32,
    /// How long each scripted command waits for its element.
    pub step_timeout_ms: u64,
    /// Record each run as a WebM (with ffmpeg), played beside the steps in the run's detail.
    pub record_video: bool,
    /// Hosts every plan's browser may reach besides its base URL's origin (`host`,
    /// `host:port`, `*.domain`, an origin, or `*` for any public host).
    pub allowed_hosts: Vec<String>,
    /// Let pages reach private-network addresses (10/8, 172.16/12, 192.168/16, fc00::/7)
    /// named by the base URL or the allow-list.
    pub allow_private_network: bool,
}

impl Default for QaConfig {
    fn default() -> Self {
        QaConfig {
            parallel_runs: 2,
            browse_max_actions: 10,
            step_timeout_ms: 5000,
            record_video: true,
            allowed_hosts: Vec::new(),
            allow_private_network: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Which provider answers by default ("gemini").
    pub provider: String,
    /// The default model of that provider.
    pub model: String,
    pub port: u16,
    /// Default time limit of one analysis, upload included.
    pub timeout_sec: u64,
    /// How many analyses may talk to the provider at once; the rest wait their turn.
    pub max_concurrent: usize,
    /// Answer a repeated request (same media bytes, prompt and model) from history.
    pub cache: bool,
    /// Tries per upstream request for retryable errors (429 with a wait, 500, 503, 504).
    pub max_attempts: u32,
    /// The user's own cap on model calls a minute per provider, key and model (0: none, the
    /// default). The provider's quota is learned from its 429s without it (see `quota`).
    pub max_calls_per_minute: u32,
    /// Where history and downloads live; empty means the OS data folder.
    pub data_dir: Option<PathBuf>,
    /// Largest file fetched from an http(s) URL source.
    pub download_limit_mb: u64,
    /// How a video goes to a model that takes video: "auto" (the moments where the screen
    /// changes, when cheaper), "full" (the whole video at the model's own sampling) or
    /// "keyframes" (still frames). A call may ask otherwise (`sampling`).
    pub video_sampling: crate::sampling::VideoSampling,
    pub gemini: GeminiConfig,
    /// How QA test plans run.
    pub qa: QaConfig,
    /// The other providers, by the name users pick them with (`provider` argument or
    /// `provider` above). Built in: openai, zai, anthropic, ollama, lmstudio, vllm; a field
    /// given here overrides the built-in value, and a new name with an `adapter` adds one.
    pub providers: BTreeMap<String, ProviderSettings>,
    /// Model name to price; a model missing here is reported with cost 0 and a warning.
    pub prices: BTreeMap<String, Price>,
    /// Environment variables passed to the processes Vaider starts (Playwright, ffmpeg,
    /// Chromium), beyond the allow-list of SECURITY.md. A secret never passes, listed or not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub child_env_pass: Vec<String>,
    /// Model calls one request may make, at most (`analyse_test_results`: one per failed
    /// test); the answer says which were skipped and why.
    pub max_model_calls: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            provider: "gemini".to_string(),
            model: DEFAULT_GEMINI_MODEL.to_string(),
            port: DEFAULT_PORT,
            timeout_sec: 30,
            max_concurrent: 5,
            cache: true,
            max_attempts: 3,
            max_calls_per_minute: 0,
            data_dir: None,
            download_limit_mb: 2048,
            video_sampling: Default::default(),
            gemini: GeminiConfig::default(),
            qa: QaConfig::default(),
            providers: BTreeMap::new(),
            prices: default_prices(),
            child_env_pass: Vec::new(),
            max_model_calls: 10,
        }
    }
}

impl Config {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_sec.max(1))
    }
}
