//! Vaider's settings: one TOML file in the config folder, every field overridable by a
//! `VAIDER_*` environment variable. The CLI, the server and the tray app read the same file.

mod limits;
pub use limits::MAX_TIMEOUT_SEC;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Result, VaiderError};

// Re-exports of the crate that owns them (vaider-providers): a provider's resolved settings.
pub use vaider_providers::settings::{
    Adapter, GeminiConfig, ProviderConfig, BEDROCK_BASE_URL, DEFAULT_GEMINI_BASE_URL,
};

pub const DEFAULT_PORT: u16 = 3456;
/// A current, inexpensive Gemini model that understands video: the replacement Google names
/// for gemini-2.5-flash, in the same price class. Retiring models are listed in models.rs.
pub const DEFAULT_GEMINI_MODEL: &str = "gemini-3.5-flash-lite";

/// USD per million tokens, input and output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

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

/// Late-2026 list prices (https://ai.google.dev/gemini-api/docs/pricing and the other
/// providers' price lists); users update them in the config file.
pub fn default_prices() -> BTreeMap<String, Price> {
    [
        ("gemini-2.5-flash-lite", 0.10, 0.40),
        ("gemini-3.5-flash", 1.50, 9.00),
        ("gemini-3.5-flash-lite", 0.30, 2.50),
        ("gpt-4.1-mini", 0.40, 1.60),
        ("gpt-4.1", 2.00, 8.00),
        ("glm-4.6v", 0.30, 0.90),
        ("claude-sonnet-4-5", 3.00, 15.00),
        ("claude-haiku-4-5", 1.00, 5.00),
        // Bedrock ids are priced by the model after their prefixes (see `price_of`).
        ("claude-3-5-sonnet", 3.00, 15.00),
        ("claude-3-7-sonnet", 3.00, 15.00),
        ("claude-sonnet-4", 3.00, 15.00),
        ("claude-3-haiku", 0.25, 1.25),
        ("nova-pro", 0.80, 3.20),
        ("nova-lite", 0.06, 0.24),
    ]
    .into_iter()
    .map(|(model, input, output)| {
        (
            model.to_string(),
            Price {
                input_per_million: input,
                output_per_million: output,
            },
        )
    })
    .collect()
}

/// A provider's settings as written in the config file; every field is optional and falls
/// back to the built-in value for that name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<Adapter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// False for local servers that need no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_key: Option<bool>,
    /// OpenAI-compatible servers that take whole videos as `video_url` data URLs (vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepts_video: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_image_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_image_side: Option<u32>,
    /// Image types it takes, e.g. ["image/png", "image/jpeg"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_formats: Option<Vec<String>>,
    /// Bedrock: the AWS region (else AWS_REGION, AWS_DEFAULT_REGION, the profile's region).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Bedrock: the AWS profile to sign with (else AWS_PROFILE, else `default`); when set,
    /// it wins over keys in the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_profile: Option<String>,
}

/// The providers Vaider knows without configuration.
pub const BUILT_IN_PROVIDERS: &[&str] = &[
    "gemini",
    "openai",
    "zai",
    "anthropic",
    "ollama",
    "lmstudio",
    "vllm",
    "bedrock",
];

fn built_in(name: &str) -> Option<ProviderConfig> {
    let p = |adapter,
             base_url: &str,
             model: &str,
             needs_key,
             accepts_video,
             mb: f64,
             side,
             formats: &[&str]| ProviderConfig {
        name: name.to_string(),
        adapter,
        base_url: base_url.to_string(),
        model: model.to_string(),
        needs_key,
        accepts_video,
        max_image_bytes: (mb * 1024.0 * 1024.0) as u64,
        max_image_side: side,
        image_formats: formats.iter().map(|f| f.to_string()).collect(),
        region: None,
        aws_profile: None,
    };
    const ALL: &[&str] = &["image/png", "image/jpeg", "image/webp", "image/gif"];
    const PNG_JPEG: &[&str] = &["image/png", "image/jpeg"];
    Some(match name {
        "openai" => p(
            Adapter::Openai,
            "https://api.openai.com/v1",
            "gpt-4.1-mini",
            true,
            false,
            20.0,
            2048,
            ALL,
        ),
        // z.ai takes video only by public URL, which a local file is not: frames are sent.
        "zai" => p(
            Adapter::Openai,
            "https://api.z.ai/api/paas/v4",
            "glm-4.6v",
            true,
            false,
            5.0,
            0,
            PNG_JPEG,
        ),
        // Anthropic counts its 5 MB limit on the base64 text: 3.75 MB of image.
        "anthropic" => p(
            Adapter::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            true,
            false,
            3.75,
            8000,
            ALL,
        ),
        "ollama" => p(
            Adapter::Openai,
            "http://127.0.0.1:11434/v1",
            "qwen2.5vl",
            false,
            false,
            20.0,
            0,
            PNG_JPEG,
        ),
        "lmstudio" => p(
            Adapter::Openai,
            "http://127.0.0.1:1234/v1",
            "qwen2.5-vl-7b-instruct",
            false,
            false,
            20.0,
            0,
            PNG_JPEG,
        ),
        "vllm" => p(
            Adapter::Openai,
            "http://127.0.0.1:8000/v1",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            false,
            true,
            20.0,
            0,
            ALL,
        ),
        // Credentials come from the AWS chain, not Vaider's key store. Bedrock takes images up
        // to 3.75 MB and 8000 px for Claude; video only for some models (Nova): opt in with
        // `accepts_video`.
        "bedrock" => p(
            Adapter::Bedrock,
            BEDROCK_BASE_URL,
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            false,
            false,
            3.75,
            8000,
            ALL,
        ),
        _ => return None,
    })
}

impl Config {
    /// The config folder: `VAIDER_CONFIG_DIR`, else the OS config folder for Vaider.
    pub fn dir() -> PathBuf {
        if let Some(dir) = env_path("VAIDER_CONFIG_DIR") {
            return dir;
        }
        directories::ProjectDirs::from("dev", "Vaider", "vaider")
            .map(|d| d.config_dir().to_path_buf())
            .unwrap_or_else(|| PathBuf::from(".vaider"))
    }

    pub fn file_path() -> PathBuf {
        Self::dir().join("config.toml")
    }

    /// Reads the config file (if any), applies the environment, and checks every range.
    pub fn load() -> Result<Config> {
        let mut config = Self::load_file(&Self::file_path())?;
        config.apply_env(|name| std::env::var(name).ok())?;
        config.validate()?;
        crate::child_env::declare_pass_through(&config.child_env_pass);
        Ok(config)
    }

    pub fn load_file(path: &Path) -> Result<Config> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
                VaiderError::InvalidRequest(format!(
                    "The config file {} is not valid TOML: {e}. Fix it or delete it to go back to the defaults.",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(VaiderError::internal(
                format!("read the config file {}", path.display()),
                e,
            )),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(self)
            .map_err(|e| VaiderError::internal("write the config", e))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| VaiderError::internal(format!("create {}", parent.display()), e))?;
        }
        std::fs::write(path, text)
            .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))
    }

    /// Applies `VAIDER_*` overrides; `lookup` is the environment (injectable for tests).
    pub fn apply_env(&mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<()> {
        fn parse<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
            value.trim().parse().map_err(|_| {
                VaiderError::InvalidRequest(format!(
                    "The environment variable {name}={value:?} is not a valid value."
                ))
            })
        }
        // The variables and their order come from the one table (env_vars.rs).
        let overrides = crate::env_vars::settings().map(|v| v.name);
        for (name, value) in overrides.filter_map(|n| lookup(n).map(|v| (n, v))) {
            if value.is_empty() {
                continue;
            }
            match name {
                "VAIDER_PROVIDER" => self.provider = value,
                "VAIDER_MODEL" | "VAIDER_GEMINI_MODEL" => self.model = value,
                "VAIDER_PORT" => self.port = parse(name, &value)?,
                "VAIDER_TIMEOUT_SEC" => self.timeout_sec = parse(name, &value)?,
                "VAIDER_MAX_CONCURRENT" => self.max_concurrent = parse(name, &value)?,
                "VAIDER_CACHE" => self.cache = parse_bool(name, &value)?,
                "VAIDER_MAX_ATTEMPTS" => self.max_attempts = parse(name, &value)?,
                "VAIDER_MAX_CALLS_PER_MINUTE" => self.max_calls_per_minute = parse(name, &value)?,
                "VAIDER_DATA_DIR" => self.data_dir = Some(PathBuf::from(value)),
                "VAIDER_DOWNLOAD_LIMIT_MB" => self.download_limit_mb = parse(name, &value)?,
                "VAIDER_VIDEO_SAMPLING" => {
                    self.video_sampling =
                        crate::sampling::VideoSampling::parse(&value).ok_or_else(|| {
                            VaiderError::InvalidRequest(format!(
                            "The environment variable {name}={value:?} is not a sampling: use {}.",
                            crate::sampling::VideoSampling::NAMES
                        ))
                        })?
                }
                "VAIDER_GEMINI_BASE_URL" => {
                    self.gemini.base_url = value.trim_end_matches('/').to_string()
                }
                "VAIDER_GEMINI_UPLOAD_CHUNK_MIB" => {
                    self.gemini.upload_chunk_mib = parse(name, &value)?
                }
                "VAIDER_GEMINI_POLL_INTERVAL_MS" => {
                    self.gemini.poll_interval_ms = parse(name, &value)?
                }
                "VAIDER_GEMINI_RETRY_BASE_MS" => self.gemini.retry_base_ms = parse(name, &value)?,
                "VAIDER_QA_PARALLEL_RUNS" => self.qa.parallel_runs = parse(name, &value)?,
                "VAIDER_QA_BROWSE_MAX_ACTIONS" => self.qa.browse_max_actions = parse(name, &value)?,
                "VAIDER_QA_STEP_TIMEOUT_MS" => self.qa.step_timeout_ms = parse(name, &value)?,
                "VAIDER_MAX_MODEL_CALLS" => self.max_model_calls = parse(name, &value)?,
                "VAIDER_CHILD_ENV_PASS" => {
                    self.child_env_pass = value
                        .split(',')
                        .map(|n| n.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .collect()
                }
                _ => {}
            }
        }
        // VAIDER_OPENAI_BASE_URL, VAIDER_ANTHROPIC_BASE_URL, ...: point a provider elsewhere.
        for name in BUILT_IN_PROVIDERS.iter().filter(|n| **n != "gemini") {
            let var = format!("VAIDER_{}_BASE_URL", name.to_ascii_uppercase());
            if let Some(url) = lookup(&var).filter(|u| !u.is_empty()) {
                self.providers.entry(name.to_string()).or_default().base_url =
                    Some(url.trim_end_matches('/').to_string());
            }
        }
        Ok(())
    }

    /// The data folder: config, else `VAIDER_DATA_DIR` (applied into config), else the OS one.
    pub fn data_dir(&self) -> PathBuf {
        if let Some(dir) = &self.data_dir {
            return dir.clone();
        }
        directories::ProjectDirs::from("dev", "Vaider", "vaider")
            .map(|d| d.data_dir().to_path_buf())
            .unwrap_or_else(|| PathBuf::from(".vaider"))
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_sec.max(1))
    }

    /// Every provider: the built-in ones and those added in the config, resolved.
    pub fn provider_names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILT_IN_PROVIDERS.iter().map(|n| n.to_string()).collect();
        for name in self.providers.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The resolved settings of provider `name`, or an error listing the known ones.
    pub fn provider(&self, name: &str) -> Result<ProviderConfig> {
        let name = name.trim().to_ascii_lowercase();
        let mut config = if name == "gemini" {
            ProviderConfig {
                name: name.clone(),
                adapter: Adapter::Gemini,
                base_url: self.gemini.base_url.clone(),
                model: if self.provider == "gemini" {
                    self.model.clone()
                } else {
                    DEFAULT_GEMINI_MODEL.to_string()
                },
                needs_key: true,
                accepts_video: true,
                max_image_bytes: 14 * 1024 * 1024,
                max_image_side: 0,
                image_formats: ["image/png", "image/jpeg", "image/webp"]
                    .iter()
                    .map(|f| f.to_string())
                    .collect(),
                region: None,
                aws_profile: None,
            }
        } else if let Some(found) = built_in(&name) {
            found
        } else if let Some(adapter) = self.providers.get(&name).and_then(|s| s.adapter) {
            ProviderConfig {
                name: name.clone(),
                adapter,
                base_url: String::new(),
                model: String::new(),
                needs_key: true,
                accepts_video: false,
                max_image_bytes: 5 * 1024 * 1024,
                max_image_side: 0,
                image_formats: ["image/png", "image/jpeg"]
                    .iter()
                    .map(|f| f.to_string())
                    .collect(),
                region: None,
                aws_profile: None,
            }
        } else {
            return Err(VaiderError::InvalidRequest(format!(
                "Unknown provider {name:?}. Known: {}. Add others under [providers.NAME] with an `adapter` in {}.",
                self.provider_names().join(", "),
                Self::file_path().display()
            )));
        };
        if let Some(s) = self.providers.get(&name) {
            if let Some(v) = &s.base_url {
                config.base_url = v.trim_end_matches('/').to_string();
            }
            if let Some(v) = &s.model {
                config.model = v.clone();
            }
            if let Some(v) = s.needs_key {
                config.needs_key = v;
            }
            if let Some(v) = s.accepts_video {
                config.accepts_video = v;
            }
            if let Some(v) = s.max_image_mb {
                config.max_image_bytes = (v * 1024.0 * 1024.0) as u64;
            }
            if let Some(v) = s.max_image_side {
                config.max_image_side = v;
            }
            if let Some(v) = &s.image_formats {
                config.image_formats = v.clone();
            }
            config.region = s.region.clone().filter(|r| !r.trim().is_empty());
            config.aws_profile = s.aws_profile.clone().filter(|p| !p.trim().is_empty());
        }
        // The top-level model is the default provider's model (not a Gemini default left in
        // a config file written by an earlier version, such as gemini-2.5-flash).
        if name == self.provider
            && name != "gemini"
            && !self.model.is_empty()
            && self.model != DEFAULT_GEMINI_MODEL
            && crate::models::retirement(&self.model).is_none()
        {
            config.model = self.model.clone();
        }
        if config.base_url.is_empty() || config.model.is_empty() {
            return Err(VaiderError::InvalidRequest(format!(
                "Provider {name:?} needs `base_url` and `model` under [providers.{name}] in {}.",
                Self::file_path().display()
            )));
        }
        Ok(config)
    }

    pub fn price_of(&self, model: &str) -> Option<Price> {
        // "models/gemini-3.5-flash" and "gemini-3.5-flash-001" are priced as the base model.
        let model = model.strip_prefix("models/").unwrap_or(model);
        self.price_by_prefix(model).or_else(|| {
            // Bedrock: "us.anthropic.claude-sonnet-4-5-...-v1:0" is priced as claude-sonnet-4-5
            // unless the config prices the full id.
            let base = bedrock_base_model(model);
            (base != model)
                .then(|| self.price_by_prefix(base))
                .flatten()
        })
    }

    fn price_by_prefix(&self, model: &str) -> Option<Price> {
        self.prices.get(model).copied().or_else(|| {
            self.prices
                .iter()
                .filter(|(name, _)| model.starts_with(name.as_str()))
                .max_by_key(|(name, _)| name.len())
                .map(|(_, price)| *price)
        })
    }
}

/// A Bedrock model id without its cross-region inference prefix ("us.", "eu.", "apac.",
/// "global.") and vendor ("anthropic.", "amazon.", "meta."): the name prices are kept by.
pub fn bedrock_base_model(model: &str) -> &str {
    let mut rest = model;
    for prefix in [
        "us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "ca.", "global.",
    ] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r;
            break;
        }
    }
    const VENDORS: [&str; 9] = [
        "anthropic",
        "amazon",
        "meta",
        "mistral",
        "cohere",
        "ai21",
        "deepseek",
        "writer",
        "qwen",
    ];
    match rest.split_once('.') {
        Some((vendor, model)) if VENDORS.contains(&vendor) && !model.is_empty() => model,
        _ => rest,
    }
}

fn parse_bool(name: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(VaiderError::InvalidRequest(format!(
            "The environment variable {name}={value:?} must be true or false."
        ))),
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_overrides_file_values() {
        let mut config: Config =
            toml::from_str("model = \"gemini-3.5-flash\"\nport = 4000\n").unwrap();
        let env = |name: &str| match name {
            "VAIDER_PORT" => Some("5000".to_string()),
            "VAIDER_CACHE" => Some("off".to_string()),
            "VAIDER_GEMINI_BASE_URL" => Some("http://127.0.0.1:9/".to_string()),
            _ => None,
        };
        config.apply_env(env).unwrap();
        assert_eq!(config.model, "gemini-3.5-flash");
        assert_eq!(config.port, 5000);
        assert!(!config.cache);
        assert_eq!(config.gemini.base_url, "http://127.0.0.1:9");
    }

    #[test]
    fn a_bad_env_value_is_named_in_the_error() {
        let mut config = Config::default();
        let err = config
            .apply_env(|n| (n == "VAIDER_PORT").then(|| "http".to_string()))
            .unwrap_err();
        assert!(err.to_string().contains("VAIDER_PORT"), "{err}");
    }

    #[test]
    fn video_sampling_comes_from_the_file_or_the_environment() {
        let mut config: Config = toml::from_str("video_sampling = \"full\"\n").unwrap();
        assert_eq!(config.video_sampling, crate::sampling::VideoSampling::Full);
        config
            .apply_env(|n| (n == "VAIDER_VIDEO_SAMPLING").then(|| "Keyframes".to_string()))
            .unwrap();
        assert_eq!(
            config.video_sampling,
            crate::sampling::VideoSampling::Keyframes
        );
        let err = config
            .apply_env(|n| (n == "VAIDER_VIDEO_SAMPLING").then(|| "some".to_string()))
            .unwrap_err();
        assert!(err.to_string().contains("auto, full or keyframes"), "{err}");
        assert!(toml::from_str::<Config>("video_sampling = \"some\"\n").is_err());
    }

    #[test]
    fn versioned_model_names_use_the_base_price() {
        let config = Config::default();
        let flash = config.price_of("gemini-3.5-flash-001").unwrap();
        assert_eq!(flash.input_per_million, 1.50);
        let lite = config.price_of("models/gemini-2.5-flash-lite").unwrap();
        assert_eq!(lite.input_per_million, 0.10);
        assert!(config.price_of("gpt-4o").is_none());
    }

    #[test]
    fn provider_settings_override_the_built_in_values() {
        let mut config: Config = toml::from_str(
            "[providers.openai]\nmodel = \"gpt-4.1\"\n[providers.mine]\nadapter = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\n",
        )
        .unwrap();
        config
            .apply_env(|n| (n == "VAIDER_ZAI_BASE_URL").then(|| "http://127.0.0.1:7/".to_string()))
            .unwrap();
        let openai = config.provider("openai").unwrap();
        assert_eq!(openai.model, "gpt-4.1");
        assert_eq!(openai.base_url, "https://api.openai.com/v1");
        assert_eq!(
            config.provider("zai").unwrap().base_url,
            "http://127.0.0.1:7"
        );
        assert_eq!(config.provider("mine").unwrap().adapter, Adapter::Anthropic);
        assert!(!config.provider("ollama").unwrap().needs_key);
        let err = config.provider("nope").unwrap_err().to_string();
        assert!(err.contains("openai") && err.contains("mine"), "{err}");
    }

    #[test]
    fn bedrock_is_built_in_with_its_region_and_profile_from_the_file() {
        let config: Config = toml::from_str(
            "[providers.bedrock]\nmodel = \"anthropic.claude-3-5-sonnet-20241022-v2:0\"\nregion = \"eu-west-1\"\naws_profile = \"work\"\n",
        )
        .unwrap();
        let bedrock = config.provider("bedrock").unwrap();
        assert_eq!(bedrock.adapter, Adapter::Bedrock);
        assert_eq!(bedrock.base_url, BEDROCK_BASE_URL);
        assert!(!bedrock.needs_key);
        assert_eq!(bedrock.region.as_deref(), Some("eu-west-1"));
        assert_eq!(bedrock.aws_profile.as_deref(), Some("work"));
        assert_eq!(bedrock.model, "anthropic.claude-3-5-sonnet-20241022-v2:0");
    }

    #[test]
    fn bedrock_model_ids_are_priced_as_their_base_model() {
        let config = Config::default();
        let sonnet = config
            .price_of("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .unwrap();
        assert_eq!(sonnet.input_per_million, 3.00);
        let old = config
            .price_of("anthropic.claude-3-5-sonnet-20241022-v2:0")
            .unwrap();
        assert_eq!(old.output_per_million, 15.00);
        assert_eq!(
            config
                .price_of("amazon.nova-lite-v1:0")
                .unwrap()
                .input_per_million,
            0.06
        );
        assert_eq!(bedrock_base_model("gemini-3.5-flash"), "gemini-3.5-flash");
        assert_eq!(
            bedrock_base_model("Qwen/Qwen2.5-VL-7B-Instruct"),
            "Qwen/Qwen2.5-VL-7B-Instruct"
        );
        assert!(config.price_of("meta.llama-unknown").is_none());
    }

    #[test]
    fn config_round_trips_through_toml() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let config = Config {
            max_concurrent: 2,
            ..Config::default()
        };
        config.save(&path).unwrap();
        assert_eq!(Config::load_file(&path).unwrap(), config);
    }
}
