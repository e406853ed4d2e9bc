//! An edit of the settings, as the settings page (and any door that edits them) sends it: the
//! values a person may change, each checked here, by the config's own rules, before it reaches
//! the file. The door only reads the body and shows the refusal.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Config, DEFAULT_GEMINI_MODEL};
use crate::error::{Result, VaiderError};
use crate::sampling::VideoSampling;

/// The editable settings, each optional: what is left out stays as it is.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsEdit {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub port: Option<u16>,
    pub max_concurrent: Option<usize>,
    pub timeout_sec: Option<u64>,
    pub max_attempts: Option<u32>,
    pub max_calls_per_minute: Option<u32>,
    pub max_model_calls: Option<u32>,
    pub cache: Option<bool>,
    pub data_dir: Option<String>,
    pub download_limit_mb: Option<u64>,
    pub video_sampling: Option<String>,
    pub child_env_pass: Option<Vec<String>>,
}

fn refused(message: String) -> VaiderError {
    VaiderError::InvalidRequest(message)
}

impl Config {
    /// Puts the edited values into these settings, refusing any that is not valid or out of
    /// range (by `validate`, the same ranges as the file and the environment).
    pub fn apply_edit(&mut self, edit: SettingsEdit) -> Result<()> {
        if let Some(provider) = &edit.provider {
            self.switch_provider(provider, edit.model.is_none())?;
        }
        if let Some(model) = &edit.model {
            self.model = model_name(model)?;
        }
        if let Some(port) = edit.port {
            if port == 0 {
                return Err(refused("port must be between 1 and 65535, not 0.".into()));
            }
            self.port = port;
        }
        self.apply_numbers(&edit);
        if let Some(names) = edit.child_env_pass {
            self.child_env_pass = pass_through(names)?;
        }
        if let Some(sampling) = edit.video_sampling {
            self.video_sampling = VideoSampling::parse(&sampling).ok_or_else(|| {
                refused(format!(
                    "videoSampling {sampling:?} is not known: use {}.",
                    VideoSampling::NAMES
                ))
            })?;
        }
        if let Some(dir) = edit.data_dir {
            self.data_dir = data_dir(&dir)?;
        }
        self.validate()
    }

    /// A known provider; a new one starts on its own default model, not the old one's,
    /// unless the same edit names a model.
    fn switch_provider(&mut self, provider: &str, keeps_no_model: bool) -> Result<()> {
        let provider = provider.trim().to_ascii_lowercase();
        if !self.provider_names().contains(&provider) {
            return Err(refused(format!(
                "provider {provider:?} is not known: use one of {}.",
                self.provider_names().join(", ")
            )));
        }
        if provider != self.provider && keeps_no_model {
            self.model = DEFAULT_GEMINI_MODEL.to_string();
            self.provider = provider.clone();
            if let Ok(resolved) = self.provider(&provider) {
                self.model = resolved.model;
            }
        }
        self.provider = provider;
        Ok(())
    }

    /// The plain numbers and switches: their ranges are checked by `validate`.
    fn apply_numbers(&mut self, edit: &SettingsEdit) {
        if let Some(n) = edit.max_concurrent {
            self.max_concurrent = n;
        }
        if let Some(t) = edit.timeout_sec {
            self.timeout_sec = t;
        }
        if let Some(n) = edit.max_attempts {
            self.max_attempts = n;
        }
        if let Some(n) = edit.max_calls_per_minute {
            self.max_calls_per_minute = n;
        }
        if let Some(n) = edit.max_model_calls {
            self.max_model_calls = n;
        }
        if let Some(cache) = edit.cache {
            self.cache = cache;
        }
        if let Some(mb) = edit.download_limit_mb {
            self.download_limit_mb = mb;
        }
    }
}

fn model_name(model: &str) -> Result<String> {
    let model = model.trim();
    if model.is_empty() || model.contains(char::is_whitespace) {
        return Err(refused(format!(
            "model must be a model name like {DEFAULT_GEMINI_MODEL}, not {model:?}."
        )));
    }
    Ok(model.to_string())
}

/// An absolute folder, or empty for the default.
fn data_dir(dir: &str) -> Result<Option<PathBuf>> {
    let dir = dir.trim();
    if dir.is_empty() {
        Ok(None)
    } else if Path::new(dir).is_absolute() {
        Ok(Some(PathBuf::from(dir)))
    } else {
        Err(refused(format!(
            "dataDir must be an absolute folder path (or empty for the default), not {dir:?}."
        )))
    }
}

/// The variables to pass to child processes: variable names, each once; a secret (a key, a
/// token, a password, anything Vaider reads a credential from) is refused, since it would
/// never pass anyway and the user should know.
fn pass_through(names: Vec<String>) -> Result<Vec<String>> {
    let mut kept: Vec<String> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let valid = name.len() <= 128
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            let shown: String = name.chars().take(60).collect();
            return Err(refused(format!(
                "childEnvPass: {shown:?} is not an environment variable name (letters, digits and _, not starting with a digit)."
            )));
        }
        if crate::child_env::is_secret(name) {
            return Err(refused(format!(
                "childEnvPass: {name} holds a secret, and secrets never reach the programs Vaider starts (see SECURITY.md). Remove it from the list."
            )));
        }
        if !kept.iter().any(|k| k == name) {
            kept.push(name.to_string());
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(json: &str) -> Result<Config> {
        let mut config = Config::default();
        config.apply_edit(serde_json::from_str(json).expect("an edit"))?;
        Ok(config)
    }

    #[test]
    fn a_secret_or_a_bad_name_is_refused_and_names_are_kept_once() {
        let kept = edit(r#"{"childEnvPass": ["PATH", " PATH ", "LANG"]}"#).unwrap();
        assert_eq!(kept.child_env_pass, ["PATH", "LANG"]);
        let secret = edit(r#"{"childEnvPass": ["GEMINI_API_KEY"]}"#).unwrap_err();
        assert!(secret.to_string().contains("holds a secret"), "{secret}");
        let bad = edit(r#"{"childEnvPass": ["1X"]}"#).unwrap_err();
        assert!(
            bad.to_string().contains("not an environment variable name"),
            "{bad}"
        );
    }

    #[test]
    fn a_new_provider_starts_on_its_own_model_unless_one_is_named() {
        let switched = edit(r#"{"provider": "OpenAI"}"#).unwrap();
        assert_eq!(switched.provider, "openai");
        assert_ne!(switched.model, Config::default().model);
        let named = edit(r#"{"provider": "openai", "model": "gpt-test"}"#).unwrap();
        assert_eq!(named.model, "gpt-test");
        assert!(edit(r#"{"provider": "nobody"}"#).is_err());
    }

    #[test]
    fn out_of_range_and_relative_values_are_refused() {
        assert!(edit(r#"{"port": 0}"#).is_err());
        assert!(edit(r#"{"dataDir": "relative/dir"}"#).is_err());
        assert_eq!(edit(r#"{"dataDir": " "}"#).unwrap().data_dir, None);
        assert!(edit(r#"{"videoSampling": "sometimes"}"#).is_err());
        assert!(edit(r#"{"model": "two words"}"#).is_err());
        assert!(edit(r#"{"timeoutSec": 0}"#).is_err());
    }
}
