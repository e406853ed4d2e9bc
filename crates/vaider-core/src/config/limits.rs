//! The allowed range of every numeric setting, checked in one place whichever way the settings
//! arrived (the config file, `VAIDER_*` variables, the UI's settings form, the tray app), so a
//! value out of range is refused with the field's name, where to change it and what is allowed.

use super::Config;
use crate::error::{Result, VaiderError};

/// One numeric setting: its names in each place a user meets it, and its allowed range.
struct Limit {
    /// The key in config.toml.
    key: &'static str,
    /// The name in the UI's settings and its JSON API.
    ui_name: &'static str,
    env: &'static str,
    low: u64,
    high: u64,
    value: fn(&Config) -> u64,
}

/// The longest time limit a call or the default may have (one hour).
pub const MAX_TIMEOUT_SEC: u64 = 3600;

const LIMITS: &[Limit] = &[
    Limit {
        key: "max_model_calls",
        ui_name: "maxModelCalls",
        env: "VAIDER_MAX_MODEL_CALLS",
        low: 1,
        high: 1000,
        value: |c| c.max_model_calls as u64,
    },
    Limit {
        key: "qa.parallel_runs",
        ui_name: "qa.parallelRuns",
        env: "VAIDER_QA_PARALLEL_RUNS",
        low: 1,
        high: 16,
        value: |c| c.qa.parallel_runs as u64,
    },
    Limit {
        key: "qa.browse_max_actions",
        ui_name: "qa.browseMaxActions",
        env: "VAIDER_QA_BROWSE_MAX_ACTIONS",
        low: 1,
        high: 100,
        value: |c| c.qa.browse_max_actions as u64,
    },
    Limit {
        key: "qa.step_timeout_ms",
        ui_name: "qa.stepTimeoutMs",
        env: "VAIDER_QA_STEP_TIMEOUT_MS",
        low: 100,
        high: 600_000,
        value: |c| c.qa.step_timeout_ms,
    },
    Limit {
        key: "timeout_sec",
        ui_name: "timeoutSec",
        env: "VAIDER_TIMEOUT_SEC",
        low: 1,
        high: MAX_TIMEOUT_SEC,
        value: |c| c.timeout_sec,
    },
    Limit {
        key: "max_concurrent",
        ui_name: "maxConcurrent",
        env: "VAIDER_MAX_CONCURRENT",
        low: 1,
        high: 64,
        value: |c| c.max_concurrent as u64,
    },
    Limit {
        key: "max_attempts",
        ui_name: "maxAttempts",
        env: "VAIDER_MAX_ATTEMPTS",
        low: 1,
        high: 10,
        value: |c| c.max_attempts as u64,
    },
    Limit {
        key: "max_calls_per_minute",
        ui_name: "maxCallsPerMinute",
        env: "VAIDER_MAX_CALLS_PER_MINUTE",
        low: 0,
        high: 100_000,
        value: |c| c.max_calls_per_minute as u64,
    },
    Limit {
        key: "download_limit_mb",
        ui_name: "downloadLimitMb",
        env: "VAIDER_DOWNLOAD_LIMIT_MB",
        low: 1,
        high: 2048,
        value: |c| c.download_limit_mb,
    },
    Limit {
        key: "gemini.upload_chunk_mib",
        ui_name: "gemini.uploadChunkMib",
        env: "VAIDER_GEMINI_UPLOAD_CHUNK_MIB",
        low: 1,
        high: 1024,
        value: |c| c.gemini.upload_chunk_mib as u64,
    },
    Limit {
        key: "gemini.poll_interval_ms",
        ui_name: "gemini.pollIntervalMs",
        env: "VAIDER_GEMINI_POLL_INTERVAL_MS",
        low: 10,
        high: 60_000,
        value: |c| c.gemini.poll_interval_ms,
    },
    Limit {
        key: "gemini.retry_base_ms",
        ui_name: "gemini.retryBaseMs",
        env: "VAIDER_GEMINI_RETRY_BASE_MS",
        low: 1,
        high: 60_000,
        value: |c| c.gemini.retry_base_ms,
    },
];

impl Config {
    /// Refuses the first setting that is out of its range, naming it as the config file, the
    /// environment and the UI call it, with the allowed range.
    pub fn validate(&self) -> Result<()> {
        for limit in LIMITS {
            let value = (limit.value)(self);
            if value < limit.low || value > limit.high {
                return Err(VaiderError::InvalidRequest(format!(
                    "The setting {} ({} in the environment, {} in the UI) must be between {} and {}, not {value}. Change it in {} or the environment.",
                    limit.key,
                    limit.env,
                    limit.ui_name,
                    limit.low,
                    limit.high,
                    Config::file_path().display()
                )));
            }
        }
        if let Some(dir) = &self.data_dir {
            if dir.as_os_str().is_empty() {
                return Err(VaiderError::InvalidRequest(
                    "The setting data_dir (VAIDER_DATA_DIR) is empty: remove it for the default folder, or give a folder.".into(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid() {
        Config::default().validate().unwrap();
    }

    #[test]
    fn each_limit_refuses_just_outside_its_range_and_names_the_field() {
        for limit in LIMITS {
            for outside in [limit.low.checked_sub(1), limit.high.checked_add(1)]
                .into_iter()
                .flatten()
            {
                let mut config = Config::default();
                let text = outside.to_string();
                config
                    .apply_env(|n| (n == limit.env).then(|| text.clone()))
                    .unwrap();
                let error = config.validate().unwrap_err().to_string();
                assert!(
                    error.contains(limit.key) && error.contains(limit.env),
                    "{error}"
                );
                assert!(
                    error.contains(&format!("between {} and {}", limit.low, limit.high)),
                    "{error}"
                );
            }
            let mut config = Config::default();
            let text = limit.high.to_string();
            config
                .apply_env(|n| (n == limit.env).then(|| text.clone()))
                .unwrap();
            config.validate().unwrap();
        }
    }

    #[test]
    fn a_file_value_out_of_range_is_refused_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "max_concurrent = 0\n").unwrap();
        let config = Config::load_file(&path).unwrap();
        let error = config.validate().unwrap_err().to_string();
        assert!(error.contains("max_concurrent"), "{error}");
    }
}
