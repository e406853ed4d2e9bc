//! The one analysis pipeline behind every door (MCP, REST, CLI, UI) and every tool: resolve
//! the sources, check the files, look up the cache, fit the media to the chosen provider
//! (keyframes for a video it cannot take, downscaled or converted images), call it within the
//! concurrency limit and the timeout, and record request and answer in the interaction files
//! and the history.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::analysis::{AnalysisRequest, AnalysisResult, ExpectationVerdict, Tool, Verdict};
use crate::config::{Adapter, Config, ProviderConfig};
use crate::error::{ErrorCode, Result, UpstreamResponse, VaiderError};
use crate::history::{History, NewInteraction, Outcome, Status};
use crate::interaction_log::InteractionLog;
use crate::media::{self, MediaInfo, MediaKind};
use crate::progress::{Progress, ProgressSink};
use crate::provider::{Capabilities, MediaPart, ProviderAnswer, ProviderJob, UpstreamCall};
use crate::secrets::{self, ApiKey, KeySource};
use crate::{cost, image_fit, keyframes, prompts, source};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The longest time limit a caller may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// A failed analysis, with what the doors need to report it.
#[derive(Debug)]
pub struct AnalysisFailure {
    pub error: VaiderError,
    pub duration_ms: u64,
    /// Set once the request was recorded.
    pub interaction_id: Option<String>,
    pub log_dir: Option<String>,
}

impl std::fmt::Display for AnalysisFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

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

/// The engine. One per process, shared by every door.
pub struct Vaider {
    /// Replaced whole when settings change; each analysis keeps the one it started with.
    config: RwLock<Arc<Config>>,
    history: History,
    http: reqwest::Client,
    /// Replaced when the concurrency limit changes; running analyses keep their old permits.
    upstream_slots: RwLock<Arc<Semaphore>>,
    /// Paused from the tray or the UI: analyses are refused until resumed.
    paused: AtomicBool,
    /// Settings and pause changes, for the UI's live view.
    changes: tokio::sync::broadcast::Sender<EngineChange>,
    data_dir: PathBuf,
    dotenv_dirs: Vec<PathBuf>,
    /// Keys found so far, by provider.
    keys: Mutex<HashMap<String, (ApiKey, KeySource)>>,
    /// (path, size, mtime) → sha256, so a file seen before is not read twice for the cache key.
    fingerprints: Mutex<HashMap<(PathBuf, u64, SystemTime), String>>,
}

impl Vaider {
    pub fn open(config: Config) -> Result<Arc<Vaider>> {
        let data_dir = config.data_dir();
        let history = History::open(&data_dir.join("history.sqlite3"))?;
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
        let mut dotenv_dirs = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            dotenv_dirs.push(cwd);
        }
        dotenv_dirs.push(Config::dir());
        Ok(Arc::new(Vaider {
            upstream_slots: RwLock::new(Arc::new(Semaphore::new(config.max_concurrent.max(1)))),
            config: RwLock::new(Arc::new(config)),
            paused: AtomicBool::new(false),
            changes: tokio::sync::broadcast::channel(64).0,
            history,
            http,
            data_dir,
            dotenv_dirs,
            keys: Mutex::new(HashMap::new()),
            fingerprints: Mutex::new(HashMap::new()),
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

    fn upstream_slots(&self) -> Arc<Semaphore> {
        match self.upstream_slots.read() {
            Ok(slots) => slots.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
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

    pub async fn status(&self) -> StatusReport {
        let config = self.config();
        let mut providers = Vec::new();
        for name in config.provider_names() {
            let Ok(provider) = config.provider(&name) else {
                continue;
            };
            let key = self.api_key(&name).await;
            providers.push(ProviderStatus {
                adapter: format!("{:?}", provider.adapter).to_lowercase(),
                ready: key.is_some() || !provider.needs_key,
                key_source: key.map(|(_, source)| source.to_string()),
                video_as: if provider.accepts_video {
                    "video"
                } else {
                    "keyframes"
                }
                .to_string(),
                tools: Tool::ALL.iter().map(|t| t.as_str().to_string()).collect(),
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

    /// Runs one analysis from request to recorded answer.
    pub async fn analyse(
        &self,
        request: AnalysisRequest,
        progress: &dyn ProgressSink,
    ) -> std::result::Result<AnalysisResult, AnalysisFailure> {
        let started = Instant::now();
        // The settings in force when the analysis starts apply to all of it.
        let config = self.config();
        let timeout = request.timeout.unwrap_or_else(|| config.timeout());
        let deadline = started + timeout;
        let id = request
            .id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string());
        let created_at = chrono::Utc::now();
        let provider_name = request
            .provider
            .clone()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| config.provider.clone())
            .trim()
            .to_ascii_lowercase();
        let provider_config = config.provider(&provider_name);
        let model = request
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| provider_config.as_ref().ok().map(|c| c.model.clone()))
            .unwrap_or_else(|| config.model.clone());
        let prompt = request
            .prompt
            .clone()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| prompts::default_prompt(request.tool).to_string());
        let fail = |error: VaiderError, recorded: Option<&InteractionLog>| AnalysisFailure {
            duration_ms: started.elapsed().as_millis() as u64,
            interaction_id: Some(id.clone()),
            log_dir: recorded.map(|l| l.dir().display().to_string()),
            error,
        };
        let reject = |error: VaiderError| {
            self.record_rejection(
                &id,
                &created_at,
                &request,
                &provider_name,
                &model,
                &prompt,
                &error,
                started,
            );
            fail(error, None)
        };

        // 1. Check everything that can be checked before anything leaves the machine.
        if self.is_paused() {
            return Err(reject(VaiderError::Paused));
        }
        let provider_config = provider_config.map_err(reject)?;
        let checked = tokio::time::timeout_at(
            deadline.into(),
            self.check(&request, &config, &provider_config, &model, deadline),
        )
        .await
        .unwrap_or_else(|_| {
            Err(VaiderError::Timeout {
                limit: timeout,
                elapsed: started.elapsed(),
            })
        });
        let (media, key) = checked.map_err(reject)?;
        // The last checked file is the one the interaction is about (for a diff: the actual).
        let Some((path, info)) = media.last().cloned() else {
            return Err(fail(
                VaiderError::internal("check the media", "nothing to analyse"),
                None,
            ));
        };

        // 2. The cache key: the media's bytes, the question and who answers it.
        // A file seen before is known by its fingerprint at once; a new one is hashed beside the
        // upload (step 5), so the first upload byte never waits for a whole-file hash.
        let use_cache = config.cache && !request.no_cache;
        let known: Option<Vec<String>> = if use_cache {
            media
                .iter()
                .map(|(file, _)| self.known_sha256(file))
                .collect()
        } else {
            None
        };
        let hash_beside_upload = use_cache && known.is_none();
        let shas = known.unwrap_or_default();
        let media_sha256 = shas.last().cloned();
        let system_prompt = prompts::system(request.tool);
        let base_prompt = prompts::user_prompt(
            request.tool,
            &prompt,
            &request.options,
            None,
            &request.expectations,
        );
        let key_for = |shas: &[String]| {
            cache_key(&[
                &shas.join("+"),
                request.tool.as_str(),
                &provider_name,
                &model,
                &system_prompt,
                &base_prompt,
            ])
        };
        let cache_key = (!shas.is_empty()).then(|| key_for(&shas));

        // 3. Record the request before anything else can fail or crash.
        let folder = format!(
            "{}-{}",
            created_at.format("%Y%m%dT%H%M%S%.3fZ"),
            &id[id.len() - 8..]
        );
        let log =
            InteractionLog::create(&path, &folder, &self.data_dir).map_err(|e| fail(e, None))?;
        let created = created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let media_json: Vec<serde_json::Value> = media
            .iter()
            .enumerate()
            .map(|(i, (p, m))| json!({
                "path": p, "type": m.mime_type, "format": m.format, "sizeBytes": m.size_bytes, "sha256": shas.get(i)
            }))
            .collect();
        let request_file = json!({
            "interactionId": id,
            "createdAt": created,
            "vaiderVersion": VERSION,
            "door": request.door,
            "tool": request.tool,
            "source": request.source,
            "compareWith": request.compare_with,
            "resolvedPath": path,
            "media": media_json,
            "provider": provider_name,
            "baseUrl": provider_config.base_url,
            "model": model,
            "systemPrompt": system_prompt,
            "prompt": prompt,
            "options": request.options,
            "expectations": request.expectations,
            "timeoutSec": timeout.as_secs_f64(),
            "noCache": request.no_cache,
        });
        let path_text = path.display().to_string();
        let log_dir_text = log.dir().display().to_string();
        let row = NewInteraction {
            id: &id,
            created_at: &created,
            tool: request.tool.as_str(),
            door: request.door.as_str(),
            source: &request.source,
            media_path: Some(&path_text),
            media_type: Some(info.mime_type),
            media_sha256: media_sha256.as_deref(),
            size_bytes: Some(info.size_bytes),
            provider: &provider_name,
            model: &model,
            prompt: &prompt,
            expectations: &request.expectations,
            cache_key: cache_key.as_deref(),
            log_dir: Some(&log_dir_text),
            project: Some(&project_of(&path, &request.base_dirs)),
        };
        if let Err(error) = log
            .write_request(&request_file)
            .and_then(|_| self.history.start(&row))
        {
            return Err(fail(error, Some(&log)));
        }
        tracing::info!(interaction_id = %id, tool = request.tool.as_str(), door = request.door.as_str(), provider = %provider_name, media = %path.display(), "analysis started");

        // 4. A cached answer, when the same bytes were asked the same thing before.
        let from_cache = |key: &str| {
            let mut cached = self.history.cached_result(key).ok().flatten()?;
            cached.cached = true;
            cached.cost_usd = 0.0;
            cached.duration_ms = started.elapsed().as_millis() as u64;
            cached.interaction_id = id.clone();
            cached.log_dir = log_dir_text.clone();
            cached.media_path = path_text.clone();
            self.finish_ok(&log, &id, &cached, &[], None, None);
            Some(cached)
        };
        if let Some(cached) = cache_key.as_deref().and_then(from_cache) {
            return Ok(cached);
        }

        // 5. Fit the media to the provider and ask it, within the concurrency limit and the
        // deadline (keyframe extraction included).
        let upstream = async {
            let slots = self.upstream_slots();
            let permit = match slots.clone().try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    progress.report(Progress::Queued);
                    slots
                        .acquire_owned()
                        .await
                        .map_err(|e| VaiderError::internal("wait for a free slot", e))?
                }
            };
            let prepared = self
                .prepare(&media, &provider_config, request.tool, log.dir())
                .await?;
            let user_prompt = prompts::user_prompt(
                request.tool,
                &prompt,
                &request.options,
                prepared.note.as_deref(),
                &request.expectations,
            );
            let provider =
                crate::provider::build(&provider_config, self.http.clone(), key, &config);
            let job = ProviderJob {
                parts: &prepared.parts,
                model: &model,
                system_prompt: &system_prompt,
                user_prompt: &user_prompt,
                response_schema: prompts::response_schema(
                    request.tool,
                    !request.expectations.is_empty(),
                ),
                progress,
                deadline,
                interaction_id: &id,
            };
            let answer = provider.describe(job).await;
            drop(permit);
            answer.map(|a| (a, prepared, user_prompt))
        };
        // A new file is hashed while it uploads; if its bytes were answered before, the upload
        // is dropped (its guard deletes what was sent) and the stored answer returned.
        let hashing = async {
            let mut shas = Vec::new();
            for (file, _) in &media {
                shas.push(self.media_sha256(file).await?);
            }
            Ok::<_, VaiderError>(shas)
        };
        let hashed_late = Mutex::new(Vec::new());
        let record_key = |shas: &[String]| {
            if let Ok(mut late) = hashed_late.lock() {
                *late = shas.to_vec();
            }
            let key = key_for(shas);
            if let Err(e) = self
                .history
                .set_cache_key(&id, &key, shas.last().map(String::as_str))
            {
                tracing::error!("{e}");
            }
            key
        };
        let raced = async {
            if !hash_beside_upload {
                return Ok(upstream.await);
            }
            tokio::pin!(upstream);
            tokio::pin!(hashing);
            tokio::select! {
                answer = &mut upstream => {
                    if let Ok(shas) = hashing.await {
                        record_key(&shas);
                    }
                    Ok(answer)
                }
                shas = &mut hashing => {
                    if let Ok(shas) = shas {
                        if let Some(cached) = from_cache(&record_key(&shas)) {
                            return Err(cached);
                        }
                    }
                    Ok(upstream.await)
                }
            }
        };
        let answer = match tokio::time::timeout_at(deadline.into(), raced).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(cached)) => return Ok(cached),
            Err(_) => Err(VaiderError::Timeout {
                limit: timeout,
                elapsed: started.elapsed(),
            }),
        };
        match answer {
            Ok((answer, prepared, user_prompt)) => {
                let result = self.result_from(
                    &answer,
                    &request,
                    &config,
                    &provider_name,
                    &model,
                    &info,
                    &prepared,
                    &id,
                    &log,
                    &path_text,
                    started,
                );
                let hashes = if shas.is_empty() {
                    hashed_late.lock().map(|l| l.clone()).unwrap_or_default()
                } else {
                    shas.clone()
                };
                let sent = json!({"userPrompt": user_prompt, "parts": prepared.describe_parts(), "mediaSha256": hashes});
                self.finish_ok(
                    &log,
                    &id,
                    &result,
                    &answer.calls,
                    Some(&answer.raw_response),
                    Some(&sent),
                );
                tracing::info!(interaction_id = %id, duration_ms = result.duration_ms, cost_usd = result.cost_usd, "analysis done");
                Ok(result)
            }
            Err(error) => {
                let failure = fail(error, Some(&log));
                self.finish_failed(&log, &failure);
                tracing::warn!(interaction_id = %id, code = failure.error.code().as_str(), "analysis failed: {}", failure.error);
                Err(failure)
            }
        }
    }

    /// Resolves and checks every source (for a diff: expected first, then actual) and finds
    /// the provider's key.
    async fn check(
        &self,
        request: &AnalysisRequest,
        config: &Config,
        provider: &ProviderConfig,
        model: &str,
        deadline: Instant,
    ) -> Result<(Vec<(PathBuf, MediaInfo)>, Option<ApiKey>)> {
        if request
            .timeout
            .is_some_and(|t| t.is_zero() || t > MAX_TIMEOUT)
        {
            return Err(VaiderError::InvalidRequest(format!(
                "The timeout must be more than 0 and at most {} seconds.",
                MAX_TIMEOUT.as_secs()
            )));
        }
        if model.trim().is_empty()
            || model.contains(char::is_whitespace)
            || (provider.adapter == Adapter::Gemini && model.contains('/'))
        {
            return Err(VaiderError::InvalidRequest(format!(
                "{model:?} is not a model name for {}; use one like {:?}.",
                provider.name, provider.model
            )));
        }
        let mut sources = Vec::new();
        if request.tool == Tool::UiDiffCheck {
            let expected = request
                .compare_with
                .as_deref()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| {
                    VaiderError::InvalidRequest(
                        "ui_diff_check needs both expected_image_source and actual_image_source."
                            .into(),
                    )
                })?;
            sources.push(expected.to_string());
        }
        sources.push(request.source.clone());
        let expected_kind = if request.tool.takes_video() {
            MediaKind::Video
        } else {
            MediaKind::Image
        };
        let limit = config.download_limit_mb.saturating_mul(1024 * 1024);
        let mut checked = Vec::new();
        for source in sources {
            let path = source::resolve(
                &source,
                &request.base_dirs,
                &self.http,
                &self.data_dir.join("downloads"),
                limit,
                deadline,
            )
            .await?;
            let check_path = path.clone();
            let media = tokio::task::spawn_blocking(move || {
                media::inspect(&check_path, media::MAX_MEDIA_BYTES, Some(expected_kind))
            })
            .await
            .map_err(|e| VaiderError::internal("check the file", e))??;
            checked.push((path, media));
        }
        let key = if provider.needs_key {
            let (key, _) =
                self.api_key(&provider.name)
                    .await
                    .ok_or_else(|| VaiderError::NoApiKey {
                        provider: provider.name.clone(),
                    })?;
            Some(key)
        } else {
            // Local servers need none, but one set for them is still sent.
            self.api_key(&provider.name).await.map(|(key, _)| key)
        };
        Ok((checked, key))
    }

    /// Turns checked files into what the provider takes: whole files where it can, else
    /// keyframes of a video and images fitted to its limits.
    async fn prepare(
        &self,
        media: &[(PathBuf, MediaInfo)],
        provider: &ProviderConfig,
        tool: Tool,
        work_dir: &Path,
    ) -> Result<Prepared> {
        let caps = Capabilities::of(provider);
        let mut prepared = Prepared::default();
        for (index, (path, info)) in media.iter().enumerate() {
            let label = (tool == Tool::UiDiffCheck).then(|| {
                if index == 0 {
                    "EXPECTED (the first image):"
                } else {
                    "ACTUAL (the second image):"
                }
                .to_string()
            });
            match info.kind {
                MediaKind::Video if caps.video => {
                    prepared.parts.push(MediaPart::File {
                        path: path.clone(),
                        media: info.clone(),
                    });
                }
                MediaKind::Video => {
                    let frames = keyframes::extract(
                        path,
                        &work_dir.join("frames"),
                        &keyframes::KeyframeOptions::default(),
                    )
                    .await?;
                    let count = frames.len();
                    for frame in frames {
                        let bytes = tokio::fs::read(&frame.path).await.map_err(|e| {
                            VaiderError::internal(format!("read {}", frame.path.display()), e)
                        })?;
                        let limits = caps.image.clone();
                        let image = tokio::task::spawn_blocking(move || {
                            image_fit::fit(bytes, "image/jpeg", &limits)
                        })
                        .await
                        .map_err(|e| VaiderError::internal("fit a frame", e))??;
                        prepared.parts.push(MediaPart::Image {
                            image,
                            label: Some(format!(
                                "Frame at {}:",
                                keyframes::timestamp(frame.at_seconds)
                            )),
                        });
                    }
                    prepared.keyframes = Some(count as u64);
                    prepared.note = Some(format!(
                        "The video was sent as {count} still frames, taken where the screen changes plus the first and the last; \
each is labelled with its time. Describe it as a timeline using those times."
                    ));
                    prepared.adaptations.push(format!(
                        "video sent as {count} keyframes (where the screen changes, plus first and last): {} takes no video",
                        provider.name
                    ));
                }
                MediaKind::Image => {
                    if caps.files_for_large_images
                        && info.size_bytes > caps.image.max_bytes
                        && caps.image.takes(info.mime_type)
                    {
                        prepared.parts.push(MediaPart::File {
                            path: path.clone(),
                            media: info.clone(),
                        });
                        continue;
                    }
                    let bytes = tokio::fs::read(path).await.map_err(|e| {
                        VaiderError::internal(format!("read {}", path.display()), e)
                    })?;
                    let mime = info.mime_type;
                    let limits = caps.image.clone();
                    let image =
                        tokio::task::spawn_blocking(move || image_fit::fit(bytes, mime, &limits))
                            .await
                            .map_err(|e| VaiderError::internal("fit the image", e))??;
                    if let Some(adapted) = &image.adapted {
                        prepared
                            .adaptations
                            .push(format!("image {}: {adapted}", index + 1));
                    }
                    prepared.parts.push(MediaPart::Image { image, label });
                }
            }
        }
        Ok(prepared)
    }

    /// The sha256 of a file seen before (same path, size and modification time), without
    /// reading it.
    fn known_sha256(&self, path: &Path) -> Option<String> {
        let fingerprint = fingerprint(path).ok()?;
        self.fingerprints.lock().ok()?.get(&fingerprint).cloned()
    }

    async fn media_sha256(&self, path: &Path) -> Result<String> {
        if let Some(sha) = self.known_sha256(path) {
            return Ok(sha);
        }
        let fingerprint = fingerprint(path)?;
        let owned = path.to_path_buf();
        let sha = tokio::task::spawn_blocking(move || sha256_file(&owned))
            .await
            .map_err(|e| VaiderError::internal("hash the file", e))??;
        if let Ok(mut memo) = self.fingerprints.lock() {
            memo.insert(fingerprint, sha.clone());
        }
        Ok(sha)
    }

    #[allow(clippy::too_many_arguments)]
    fn result_from(
        &self,
        answer: &ProviderAnswer,
        request: &AnalysisRequest,
        config: &Config,
        provider: &str,
        model: &str,
        media: &MediaInfo,
        prepared: &Prepared,
        id: &str,
        log: &InteractionLog,
        path_text: &str,
        started: Instant,
    ) -> AnalysisResult {
        let (description, expectations, details) =
            read_answer(request.tool, &answer.text, &request.expectations);
        let all_met = (!expectations.is_empty())
            .then(|| expectations.iter().all(|e| e.verdict == Verdict::Met));
        let images = prepared
            .parts
            .iter()
            .filter(|p| matches!(p, MediaPart::Image { .. }))
            .count() as u64;
        let frames = match (media.kind, prepared.keyframes) {
            (MediaKind::Video, Some(keyframes)) => keyframes,
            // Gemini samples one frame a second; without a duration, about 300 tokens a second.
            (MediaKind::Video, None) => answer
                .video_seconds
                .map(|s| s.ceil().max(1.0) as u64)
                .unwrap_or_else(|| (answer.usage.input_tokens / 300).max(1)),
            (MediaKind::Image, _) => images.max(prepared.parts.len() as u64),
        };
        AnalysisResult {
            description,
            all_expectations_met: all_met,
            expectations,
            provider: provider.to_string(),
            model: answer
                .model_version
                .clone()
                .unwrap_or_else(|| model.to_string()),
            duration_ms: started.elapsed().as_millis() as u64,
            cost_usd: cost::cost_usd(config, model, answer.usage),
            usage: answer.usage,
            cached: false,
            interaction_id: id.to_string(),
            log_dir: log.dir().display().to_string(),
            media_path: path_text.to_string(),
            media_type: media.mime_type.to_string(),
            frames_analysed: frames,
            details,
            adaptations: prepared.adaptations.clone(),
        }
    }

    fn finish_ok(
        &self,
        log: &InteractionLog,
        id: &str,
        result: &AnalysisResult,
        calls: &[UpstreamCall],
        raw: Option<&serde_json::Value>,
        sent: Option<&serde_json::Value>,
    ) {
        let finished_at = now_rfc3339();
        let response = json!({
            "interactionId": id,
            "finishedAt": finished_at,
            "status": "ok",
            "durationMs": result.duration_ms,
            "result": result,
            "sent": sent,
            "upstreamCalls": calls,
            "providerResponse": raw,
        });
        // The answer is already in hand: a failure to record it is logged, not returned.
        if let Err(e) = log.write_response(&response) {
            tracing::error!("{e}");
        }
        if let Err(e) = self.history.finish(id, &finished_at, Outcome::Ok(result)) {
            tracing::error!("{e}");
        }
    }

    fn finish_failed(&self, log: &InteractionLog, failure: &AnalysisFailure) {
        let Some(id) = failure.interaction_id.as_deref() else {
            return;
        };
        let finished_at = now_rfc3339();
        let status = status_of(&failure.error);
        let response = json!({
            "interactionId": id,
            "finishedAt": finished_at,
            "status": status.as_str(),
            "durationMs": failure.duration_ms,
            "error": error_json(&failure.error),
        });
        if let Err(e) = log.write_response(&response) {
            tracing::error!("{e}");
        }
        let message = failure.error.to_string();
        let outcome = Outcome::Failed {
            status,
            code: failure.error.code().as_str(),
            message: &message,
            duration_ms: failure.duration_ms,
        };
        if let Err(e) = self.history.finish(id, &finished_at, outcome) {
            tracing::error!("{e}");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_rejection(
        &self,
        id: &str,
        created_at: &chrono::DateTime<chrono::Utc>,
        request: &AnalysisRequest,
        provider: &str,
        model: &str,
        prompt: &str,
        error: &VaiderError,
        started: Instant,
    ) {
        let created = created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let row = NewInteraction {
            id,
            created_at: &created,
            tool: request.tool.as_str(),
            door: request.door.as_str(),
            source: &request.source,
            media_path: None,
            media_type: None,
            media_sha256: None,
            size_bytes: None,
            provider,
            model,
            prompt,
            expectations: &request.expectations,
            cache_key: None,
            log_dir: None,
            project: request.base_dirs.first().and_then(|d| d.to_str()),
        };
        let message = error.to_string();
        let outcome = Outcome::Failed {
            status: status_of(error),
            code: error.code().as_str(),
            message: &message,
            duration_ms: started.elapsed().as_millis() as u64,
        };
        if let Err(e) = self
            .history
            .start(&row)
            .and_then(|_| self.history.finish(id, &now_rfc3339(), outcome))
        {
            tracing::error!("{e}");
        }
    }
}

fn status_of(error: &VaiderError) -> Status {
    match error.code() {
        ErrorCode::Timeout => Status::Timeout,
        ErrorCode::InvalidPath
        | ErrorCode::InvalidRequest
        | ErrorCode::NoApiKey
        | ErrorCode::Paused => Status::Rejected,
        ErrorCode::UpstreamError | ErrorCode::Internal => Status::Error,
    }
}

/// The error as the interaction file keeps it.
pub fn error_json(error: &VaiderError) -> serde_json::Value {
    json!({
        "code": error.code().as_str(),
        "message": error.to_string(),
        "upstreamResponse": error.upstream_response().map(|UpstreamResponse { status, body }| json!({"status": status, "body": body})),
    })
}

/// What was sent for one call: the parts, the prompt note and what was adapted.
#[derive(Default)]
struct Prepared {
    parts: Vec<MediaPart>,
    /// Told to the model, e.g. that the video came as keyframes.
    note: Option<String>,
    keyframes: Option<u64>,
    adaptations: Vec<String>,
}

impl Prepared {
    /// The parts as the interaction file records them (no pixels).
    fn describe_parts(&self) -> Vec<serde_json::Value> {
        self.parts
            .iter()
            .map(|part| match part {
                MediaPart::File { path, media } => {
                    json!({"file": path, "type": media.mime_type, "sizeBytes": media.size_bytes})
                }
                MediaPart::Image { image, label } => json!({
                    "image": image.mime_type, "width": image.width, "height": image.height,
                    "sizeBytes": image.bytes.len(), "label": label, "adapted": image.adapted
                }),
            })
            .collect()
    }
}

/// Splits the model's answer into description, verdicts and the tool's structured details.
/// An answer that should be JSON but is not still yields its text and "unclear" verdicts.
fn read_answer(
    tool: Tool,
    text: &str,
    expectations: &[String],
) -> (String, Vec<ExpectationVerdict>, Option<serde_json::Value>) {
    if prompts::response_schema(tool, !expectations.is_empty()).is_none() {
        return (text.trim().to_string(), Vec::new(), None);
    }
    let trimmed = text
        .trim()
        .trim_start_matches("```json")
        .trim_start_matches("```")
        .trim_end_matches("```")
        .trim();
    let mut object = match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => serde_json::Map::new(),
    };
    let parsed = !object.is_empty();
    let description = match object.remove("description") {
        Some(serde_json::Value::String(d)) if !d.trim().is_empty() => d,
        _ if parsed => ["artifact", "text"]
            .iter()
            .find_map(|k| object.get(*k).and_then(|v| v.as_str()).map(str::to_string))
            .unwrap_or_default(),
        _ => text.trim().to_string(),
    };
    let items = match object.remove("expectations") {
        Some(serde_json::Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let verdicts = expectations
        .iter()
        .enumerate()
        .map(|(i, expectation)| {
            let item = items.get(i);
            let verdict = match item.and_then(|it| it["verdict"].as_str()) {
                Some("met") => Verdict::Met,
                Some("not_met") => Verdict::NotMet,
                _ => Verdict::Unclear,
            };
            ExpectationVerdict {
                expectation: expectation.clone(),
                verdict,
                evidence: item
                    .and_then(|it| it["evidence"].as_str())
                    .filter(|e| !e.is_empty())
                    .unwrap_or("The model gave no verdict for this expectation.")
                    .to_string(),
            }
        })
        .collect();
    let details = (!object.is_empty()).then_some(serde_json::Value::Object(object));
    (description, verdicts, details)
}

fn cache_key(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prompts::PROMPT_VERSION.to_le_bytes());
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
}

/// What identifies a file's bytes without reading them: path, size and modification time.
fn fingerprint(path: &Path) -> Result<(PathBuf, u64, SystemTime)> {
    let meta = std::fs::metadata(path)
        .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
    Ok((
        path.to_path_buf(),
        meta.len(),
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    ))
}

pub fn sha256_file(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)
        .map_err(|e| VaiderError::internal(format!("open {}", path.display()), e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The project a file belongs to, for the history's filter: the client's root or working
/// folder that holds it, else the first one given, else the file's own folder.
fn project_of(path: &Path, base_dirs: &[PathBuf]) -> String {
    base_dirs
        .iter()
        .find(|dir| path.starts_with(dir))
        .or(base_dirs.first())
        .map(PathBuf::as_path)
        .or(path.parent())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What the UI hears about the engine besides history rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChange {
    Settings,
    Paused(bool),
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_expectations_in_order() {
        let expectations = vec!["login succeeds".to_string(), "an error shows".to_string()];
        let answer = r#"{"description":"00:01 login","expectations":[
            {"expectation":"login succeeds","verdict":"met","evidence":"00:04 dashboard"},
            {"expectation":"an error shows","verdict":"not_met","evidence":"no error"}]}"#;
        let (description, verdicts, details) =
            read_answer(Tool::AnalyzeVideo, answer, &expectations);
        assert_eq!(description, "00:01 login");
        assert_eq!(verdicts[0].verdict, Verdict::Met);
        assert_eq!(verdicts[1].verdict, Verdict::NotMet);
        assert_eq!(verdicts[1].evidence, "no error");
        assert_eq!(details, None);
    }

    #[test]
    fn a_non_json_answer_keeps_its_text_and_is_unclear() {
        let expectations = vec!["x".to_string()];
        let (description, verdicts, _) =
            read_answer(Tool::AnalyzeVideo, "plain words", &expectations);
        assert_eq!(description, "plain words");
        assert_eq!(verdicts[0].verdict, Verdict::Unclear);
    }

    #[test]
    fn a_tools_structured_fields_become_details() {
        let answer = r#"{"description":"two differences","matches":false,"differences":[{"region":"header","description":"blue not red","severity":"high","suggested_fix":"set color"}]}"#;
        let (description, _, details) = read_answer(Tool::UiDiffCheck, answer, &[]);
        assert_eq!(description, "two differences");
        let details = details.unwrap();
        assert_eq!(details["matches"], false);
        assert_eq!(details["differences"][0]["severity"], "high");
    }

    #[test]
    fn the_cache_key_changes_with_each_input() {
        let base = cache_key(&["sha", "gemini", "m", "p"]);
        assert_ne!(base, cache_key(&["sha2", "gemini", "m", "p"]));
        assert_ne!(base, cache_key(&["sha", "openai", "m", "p"]));
        assert_ne!(base, cache_key(&["sha", "gemini", "m", "p2"]));
        assert_eq!(base, cache_key(&["sha", "gemini", "m", "p"]));
    }
}
