//! The engine's long-lived state, one per process and shared by every door: the settings in
//! force, the keys found, pause, the change feed, the history and this process's lease on the
//! rows it runs. The per-call path is the pipeline's (`pipeline/`); this module only holds
//! what outlives a call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::config::Config;
use crate::error::{Result, VaiderError};
use crate::history::History;
use crate::lease::Lease;
use crate::secrets::{self, ApiKey, KeySource};

/// The engine. One per process, shared by every door.
pub struct Vaider {
    /// Replaced whole when settings change; each analysis keeps the one it started with.
    config: RwLock<Arc<Config>>,
    history: History,
    pub(crate) http: reqwest::Client,
    /// Replaced when the concurrency limit changes; running analyses keep their old permits.
    upstream_slots: RwLock<Arc<Semaphore>>,
    /// The providers' per-minute quotas, learned from their 429s, by provider, key and model.
    pub(crate) quotas: crate::quota::Quotas,
    /// Paused from the tray or the UI: analyses are refused until resumed.
    paused: AtomicBool,
    /// Settings and pause changes, for the UI's live view.
    changes: tokio::sync::broadcast::Sender<EngineChange>,
    pub(crate) data_dir: PathBuf,
    pub(crate) dotenv_dirs: Vec<PathBuf>,
    /// Keys found so far, by provider.
    pub(crate) keys: Mutex<HashMap<String, (ApiKey, KeySource)>>,
    /// (path, size, mtime) → sha256, so a file seen before is not read twice for the cache key.
    pub(crate) fingerprints: crate::pipeline::Fingerprints,
    /// Marks the history rows this process runs as its own while it lives, so a restart can
    /// tell the calls a dead process left `running` from those of another live Vaider.
    lease: Lease,
}

impl Vaider {
    /// Opens the history in the configured data folder, takes this process's lease, and
    /// closes the calls that a process which has since died left `running`.
    pub fn open(config: Config) -> Result<Arc<Vaider>> {
        config.validate()?;
        let data_dir = config.data_dir();
        crate::atomic_file::create_private_dir(&data_dir).map_err(|e| {
            VaiderError::internal(format!("create the data folder {}", data_dir.display()), e)
        })?;
        let history = History::open(&data_dir.join("history.sqlite3"))?;
        let lease = Lease::take(&data_dir)?;
        crate::recovery::close_abandoned_calls(&history, &data_dir, &lease);
        let http = reqwest::Client::builder()
            .user_agent(concat!("vaider/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            // A download may redirect, but only to http(s): never to file:// or another scheme.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                if !matches!(attempt.url().scheme(), "http" | "https") {
                    attempt.error("a redirect to a non-http(s) URL was refused")
                } else if attempt.previous().len() >= 5 {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }))
            .build()
            .map_err(|e| VaiderError::internal("start the HTTP client", e))?;
        crate::child_env::declare_pass_through(&config.child_env_pass);
        let cwd = std::env::current_dir().ok();
        let dotenv_dirs = crate::secrets::dotenv_dirs(&Config::dir(), cwd.as_deref());
        Ok(Arc::new(Vaider {
            upstream_slots: RwLock::new(Arc::new(Semaphore::new(config.max_concurrent.max(1)))),
            quotas: Default::default(),
            config: RwLock::new(Arc::new(config)),
            paused: AtomicBool::new(false),
            changes: tokio::sync::broadcast::channel(64).0,
            history,
            http,
            data_dir,
            dotenv_dirs,
            keys: Mutex::new(HashMap::new()),
            fingerprints: Default::default(),
            lease,
        }))
    }

    /// The settings in force now.
    pub fn config(&self) -> Arc<Config> {
        match self.config.read() {
            Ok(config) => config.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Puts new settings in force for the analyses that start from now on. Returns the
    /// settings that only a restart applies (the port is bound, the data folder holds the open
    /// history).
    pub fn apply_config(&self, new: Config) -> Vec<&'static str> {
        let old = self.config();
        let mut restart_needed = Vec::new();
        if new.port != old.port {
            restart_needed.push("port");
        }
        if new.data_dir() != old.data_dir() {
            restart_needed.push("dataDir");
        }
        if new.max_concurrent != old.max_concurrent {
            if let Ok(mut slots) = self.upstream_slots.write() {
                *slots = Arc::new(Semaphore::new(new.max_concurrent.max(1)));
            }
        }
        if new.provider != old.provider {
            // A key remembered for the old default must not answer for the new one.
            self.forget_keys();
        }
        crate::child_env::declare_pass_through(&new.child_env_pass);
        match self.config.write() {
            Ok(mut config) => *config = Arc::new(new),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(new),
        }
        let _ = self.changes.send(EngineChange::Settings);
        restart_needed
    }

    /// Refuses new analyses (with `PAUSED`) until [`Vaider::resume`]; running ones finish.
    pub fn pause(&self) {
        self.paused.store(true, Ordering::SeqCst);
        let _ = self.changes.send(EngineChange::Paused(true));
    }

    pub fn resume(&self) {
        self.paused.store(false, Ordering::SeqCst);
        let _ = self.changes.send(EngineChange::Paused(false));
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Settings and pause changes as they happen.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<EngineChange> {
        self.changes.subscribe()
    }

    pub(crate) fn upstream_slots(&self) -> Arc<Semaphore> {
        match self.upstream_slots.read() {
            Ok(slots) => slots.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The providers' quotas as learned so far.
    pub fn quotas(&self) -> &crate::quota::Quotas {
        &self.quotas
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// This process's mark on the rows it runs.
    pub(crate) fn owner(&self) -> &str {
        self.lease.owner()
    }

    /// Opens a job's history row (status `running`), as this process's.
    pub async fn start_job(&self, start: crate::job::JobStart<'_>) -> Result<crate::job::Job> {
        crate::job::Job::start(self.history(), self.owner(), start).await
    }

    /// A provider's key, looked up once and then kept; a missing key is looked up again on
    /// the next call, so `vaider key set` works without a restart.
    pub async fn api_key(&self, provider: &str) -> Option<(ApiKey, KeySource)> {
        if let Some(found) = self.keys.lock().ok().and_then(|k| k.get(provider).cloned()) {
            return Some(found);
        }
        let name = provider.to_string();
        let dirs = self.dotenv_dirs.clone();
        let found = tokio::task::spawn_blocking(move || secrets::find_api_key(&name, &dirs))
            .await
            .ok()
            .flatten();
        if let (Some(found), Ok(mut keys)) = (&found, self.keys.lock()) {
            keys.insert(provider.to_string(), found.clone());
        }
        found
    }

    /// Uses this key for the default provider from now on (the tray app's settings, tests).
    pub fn set_api_key(&self, key: ApiKey, source: KeySource) {
        let provider = self.config().provider.clone();
        self.set_provider_key(&provider, key, source);
    }

    pub fn set_provider_key(&self, provider: &str, key: ApiKey, source: KeySource) {
        if let Ok(mut keys) = self.keys.lock() {
            keys.insert(provider.to_string(), (key, source));
        }
    }

    /// Forgets the remembered keys, after one was changed or removed.
    pub fn forget_keys(&self) {
        if let Ok(mut keys) = self.keys.lock() {
            keys.clear();
        }
    }
}

/// What the UI hears about the engine besides history rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChange {
    Settings,
    Paused(bool),
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_data_folder_and_the_history_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = root.path().join("vaider-data");
        let _engine = Vaider::open(Config {
            data_dir: Some(data.clone()),
            ..Config::default()
        })
        .unwrap();
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("history.sqlite3")), 0o600);
    }
}
