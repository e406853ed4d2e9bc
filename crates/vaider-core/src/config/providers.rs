//! The providers the config knows: the built-in ones with their defaults, and a provider's
//! settings from the file resolved over them (`Config::provider`).

use serde::{Deserialize, Serialize};

use super::*;
use crate::error::{Result, VaiderError};

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
        let mut config = self.provider_defaults(&name)?;
        if let Some(settings) = self.providers.get(&name) {
            settings.apply_to(&mut config);
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

    /// What provider `name` is before the file's settings for it: Gemini, a built-in one, or
    /// one added in the file with its `adapter`.
    fn provider_defaults(&self, name: &str) -> Result<ProviderConfig> {
        if name == "gemini" {
            return Ok(self.gemini_defaults());
        }
        if let Some(found) = built_in(name) {
            return Ok(found);
        }
        if let Some(adapter) = self.providers.get(name).and_then(|s| s.adapter) {
            return Ok(added_provider(name, adapter));
        }
        Err(VaiderError::InvalidRequest(format!(
            "Unknown provider {name:?}. Known: {}. Add others under [providers.NAME] with an `adapter` in {}.",
            self.provider_names().join(", "),
            Self::file_path().display()
        )))
    }

    fn gemini_defaults(&self) -> ProviderConfig {
        ProviderConfig {
            name: "gemini".to_string(),
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
    }
}

/// A provider added in the config file: its adapter, and cautious limits until the file
/// says more (no video, 5 MB images, PNG and JPEG).
fn added_provider(name: &str, adapter: Adapter) -> ProviderConfig {
    ProviderConfig {
        name: name.to_string(),
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
}

impl ProviderSettings {
    /// The file's settings over a provider's defaults: each one given replaces its default.
    fn apply_to(&self, config: &mut ProviderConfig) {
        if let Some(v) = &self.base_url {
            config.base_url = v.trim_end_matches('/').to_string();
        }
        if let Some(v) = &self.model {
            config.model = v.clone();
        }
        if let Some(v) = self.needs_key {
            config.needs_key = v;
        }
        if let Some(v) = self.accepts_video {
            config.accepts_video = v;
        }
        if let Some(v) = self.max_image_mb {
            config.max_image_bytes = (v * 1024.0 * 1024.0) as u64;
        }
        if let Some(v) = self.max_image_side {
            config.max_image_side = v;
        }
        if let Some(v) = &self.image_formats {
            config.image_formats = v.clone();
        }
        config.region = self.region.clone().filter(|r| !r.trim().is_empty());
        config.aws_profile = self.aws_profile.clone().filter(|p| !p.trim().is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
