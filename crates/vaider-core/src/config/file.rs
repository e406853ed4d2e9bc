//! Where the config comes from: the TOML file in the config folder, then the `VAIDER_*`
//! environment variables over it; and where the data folder is.

use std::path::{Path, PathBuf};

use super::*;
use crate::error::{Result, VaiderError};

impl Config {
    /// The config folder: `VAIDER_CONFIG_DIR`, else the OS config folder for Vaider.
    pub fn dir() -> PathBuf {
        if let Some(dir) = env_path("VAIDER_CONFIG_DIR") {
            return dir;
        }
        directories::ProjectDirs::from("dev", "Vaider", "vaider")
            .map(|d| d.config_dir().to_path_buf())
            .unwrap_or_else(|| project_fallback(Path::new(".")))
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
        // The variables and their order come from the one table (env_vars.rs).
        let overrides = crate::env_vars::settings().map(|v| v.name);
        for (name, value) in overrides.filter_map(|n| lookup(n).map(|v| (n, v))) {
            if !value.is_empty() {
                self.apply_env_setting(name, value)?;
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

    /// One `VAIDER_*` setting from the environment (a non-empty value) over the file's.
    fn apply_env_setting(&mut self, name: &str, value: String) -> Result<()> {
        fn parse<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
            value.trim().parse().map_err(|_| {
                VaiderError::InvalidRequest(format!(
                    "The environment variable {name}={value:?} is not a valid value."
                ))
            })
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
            "VAIDER_GEMINI_UPLOAD_CHUNK_MIB" => self.gemini.upload_chunk_mib = parse(name, &value)?,
            "VAIDER_GEMINI_POLL_INTERVAL_MS" => self.gemini.poll_interval_ms = parse(name, &value)?,
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
        Ok(())
    }

    /// The data folder: config, else `VAIDER_DATA_DIR` (applied into config), else the OS one.
    pub fn data_dir(&self) -> PathBuf {
        if let Some(dir) = &self.data_dir {
            return dir.clone();
        }
        directories::ProjectDirs::from("dev", "Vaider", "vaider")
            .map(|d| d.data_dir().to_path_buf())
            .unwrap_or_else(|| project_fallback(Path::new(".")))
    }
}

/// The config and data folder when the machine gives no home folder: `.vaider/local/` in the
/// current folder, apart from `.vaider/baselines/`, which is meant to be committed (so it never
/// holds a secret). `.vaider/.gitignore` keeps `local/` out of git. An older Vaider kept its
/// files in `.vaider/` itself: when `.vaider/` holds them (its config or history) they stay
/// there and are still used.
pub fn project_fallback(folder: &Path) -> PathBuf {
    let vaider = folder.join(".vaider");
    let older = ["config.toml", "history.sqlite3", "token"]
        .iter()
        .any(|name| vaider.join(name).exists());
    if older {
        return vaider;
    }
    // Written before anything else lands there, so a secret never shows up in `git status`.
    let _ = write_project_gitignore(&vaider);
    vaider.join("local")
}

/// What `.vaider/.gitignore` says: everything but the baselines, their decision log and the
/// check file stays out of git (the local folder, an older Vaider's config and history).
pub const PROJECT_GITIGNORE: &str = "# Written by Vaider: only the baselines and the check file are meant to be committed.\n*\n!.gitignore\n!baselines/\n!baselines/**\n!check.toml\n";

/// Writes `.vaider/.gitignore` when it is missing (a user's own edits are kept).
pub fn write_project_gitignore(vaider: &Path) -> std::io::Result<()> {
    let path = vaider.join(".gitignore");
    if path.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(vaider)?;
    std::fs::write(path, PROJECT_GITIGNORE)
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

    #[test]
    fn the_fallback_is_kept_apart_from_the_baselines_and_out_of_git() {
        let project = tempfile::tempdir().unwrap();
        let dir = project_fallback(project.path());
        assert_eq!(dir, project.path().join(".vaider/local"));
        let ignore = std::fs::read_to_string(project.path().join(".vaider/.gitignore")).unwrap();
        assert!(ignore.contains("!baselines/**"), "{ignore}");
        // An older Vaider's files in `.vaider/` itself stay where they are.
        let older = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(older.path().join(".vaider")).unwrap();
        std::fs::write(older.path().join(".vaider/config.toml"), "").unwrap();
        assert_eq!(project_fallback(older.path()), older.path().join(".vaider"));
    }

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
