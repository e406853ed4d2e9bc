//! The one analysis pipeline behind every door (MCP, REST, CLI, UI): resolve the source,
//! check the file, look up the cache, call the provider within the concurrency limit and the
//! timeout, and record the request and answer in the interaction files and the history.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::analysis::{AnalysisRequest, AnalysisResult, ExpectationVerdict, Tool, Verdict};
use crate::config::Config;
use crate::error::{ErrorCode, Result, UpstreamResponse, VaiderError};
use crate::history::{History, NewInteraction, Outcome, Status};
use crate::interaction_log::InteractionLog;
use crate::media::{self, MediaInfo, MediaKind};
use crate::progress::{Progress, ProgressSink};
use crate::provider::gemini::GeminiProvider;
use crate::provider::{ProviderAnswer, ProviderJob, UpstreamCall, VisionProvider};
use crate::secrets::{self, ApiKey, KeySource};
use crate::{cost, prompts, source};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Providers this build can talk to.
pub const PROVIDERS: &[&str] = &["gemini"];

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
    pub data_dir: String,
    pub providers: Vec<String>,
}

/// The engine. One per process, shared by every door.
pub struct Vaider {
    config: Config,
    history: History,
    http: reqwest::Client,
    upstream_slots: Arc<Semaphore>,
    data_dir: PathBuf,
    dotenv_dirs: Vec<PathBuf>,
    key: Mutex<Option<(ApiKey, KeySource)>>,
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
            .build()
            .map_err(|e| VaiderError::internal("start the HTTP client", e))?;
        let mut dotenv_dirs = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            dotenv_dirs.push(cwd);
        }
        dotenv_dirs.push(Config::dir());
        Ok(Arc::new(Vaider {
            upstream_slots: Arc::new(Semaphore::new(config.max_concurrent.max(1))),
            config,
            history,
            http,
            data_dir,
            dotenv_dirs,
            key: Mutex::new(None),
            fingerprints: Mutex::new(HashMap::new()),
        }))
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The provider's key, looked up once and then kept; a missing key is looked up again on
    /// the next call, so `vaider key set` works without a restart.
    pub async fn api_key(&self) -> Option<(ApiKey, KeySource)> {
        if let Some(found) = self.key.lock().ok().and_then(|k| k.clone()) {
            return Some(found);
        }
        let provider = self.config.provider.clone();
        let dirs = self.dotenv_dirs.clone();
        let found = tokio::task::spawn_blocking(move || secrets::find_api_key(&provider, &dirs))
            .await
            .ok()
            .flatten();
        if let (Some(found), Ok(mut slot)) = (&found, self.key.lock()) {
            *slot = Some(found.clone());
        }
        found
    }

    /// Uses this key from now on (the tray app's settings, or an embedding program).
    pub fn set_api_key(&self, key: ApiKey, source: KeySource) {
        if let Ok(mut slot) = self.key.lock() {
            *slot = Some((key, source));
        }
    }

    /// Forgets the remembered key, after it was changed or removed.
    pub fn forget_key(&self) {
        if let Ok(mut slot) = self.key.lock() {
            *slot = None;
        }
    }

    pub async fn status(&self) -> StatusReport {
        let key = self.api_key().await;
        StatusReport {
            version: VERSION.to_string(),
            provider: self.config.provider.clone(),
            model: self.config.model.clone(),
            key_configured: key.is_some(),
            key_source: key.map(|(_, source)| source.to_string()),
            server_time: now_rfc3339(),
            max_concurrent: self.config.max_concurrent,
            timeout_sec: self.config.timeout_sec,
            cache: self.config.cache,
            data_dir: self.data_dir.display().to_string(),
            providers: PROVIDERS.iter().map(|p| p.to_string()).collect(),
        }
    }

    /// Runs one analysis from request to recorded answer.
    pub async fn analyse(
        &self,
        request: AnalysisRequest,
        progress: &dyn ProgressSink,
    ) -> std::result::Result<AnalysisResult, AnalysisFailure> {
        let started = Instant::now();
        let timeout = request.timeout.unwrap_or_else(|| self.config.timeout());
        let deadline = started + timeout;
        let id = uuid::Uuid::now_v7().simple().to_string();
        let created_at = chrono::Utc::now();
        let model = request
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| self.config.model.clone());
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

        // 1. Check everything that can be checked before anything leaves the machine.
        let checked =
            tokio::time::timeout_at(deadline.into(), self.check(&request, &model, deadline))
                .await
                .unwrap_or_else(|_| {
                    Err(VaiderError::Timeout {
                        limit: timeout,
                        elapsed: started.elapsed(),
                    })
                });
        let (path, media, key) = match checked {
            Ok(checked) => checked,
            Err(error) => {
                self.record_rejection(&id, &created_at, &request, &model, &prompt, &error, started);
                return Err(fail(error, None));
            }
        };

        // 2. The cache key: the media's bytes, the question and who answers it.
        let use_cache = self.config.cache && !request.no_cache;
        let media_sha256 = if use_cache {
            match self.media_sha256(&path).await {
                Ok(sha) => Some(sha),
                Err(error) => return Err(fail(error, None)),
            }
        } else {
            None
        };
        let user_prompt = prompts::user_prompt(&prompt, &request.expectations);
        let cache_key = media_sha256.as_ref().map(|sha| {
            cache_key(
                sha,
                &self.config.provider,
                &model,
                &user_prompt,
                &request.expectations,
            )
        });

        // 3. Record the request before anything else can fail or crash.
        let folder = format!(
            "{}-{}",
            created_at.format("%Y%m%dT%H%M%S%.3fZ"),
            &id[id.len() - 8..]
        );
        let log = match InteractionLog::create(&path, &folder, &self.data_dir) {
            Ok(log) => log,
            Err(error) => return Err(fail(error, None)),
        };
        let request_file = json!({
            "interactionId": id,
            "createdAt": created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "vaiderVersion": VERSION,
            "door": request.door,
            "tool": request.tool,
            "source": request.source,
            "resolvedPath": path,
            "media": {"type": media.mime_type, "format": media.format, "sizeBytes": media.size_bytes, "sha256": media_sha256},
            "provider": self.config.provider,
            "model": model,
            "systemPrompt": prompts::SYSTEM,
            "prompt": prompt,
            "expectations": request.expectations,
            "userPrompt": user_prompt,
            "timeoutSec": timeout.as_secs_f64(),
            "noCache": request.no_cache,
        });
        let path_text = path.display().to_string();
        let log_dir_text = log.dir().display().to_string();
        let row = NewInteraction {
            id: &id,
            created_at: &created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            tool: request.tool.as_str(),
            door: request.door.as_str(),
            source: &request.source,
            media_path: Some(&path_text),
            media_type: Some(media.mime_type),
            media_sha256: media_sha256.as_deref(),
            size_bytes: Some(media.size_bytes),
            provider: &self.config.provider,
            model: &model,
            prompt: &prompt,
            expectations: &request.expectations,
            cache_key: cache_key.as_deref(),
            log_dir: Some(&log_dir_text),
        };
        if let Err(error) = log
            .write_request(&request_file)
            .and_then(|_| self.history.start(&row))
        {
            return Err(fail(error, Some(&log)));
        }
        tracing::info!(interaction_id = %id, tool = request.tool.as_str(), door = request.door.as_str(), media = %path.display(), "analysis started");

        // 4. A cached answer, when the same bytes were asked the same thing before.
        if let Some(key) = cache_key.as_deref() {
            if let Ok(Some(mut cached)) = self.history.cached_result(key) {
                cached.cached = true;
                cached.cost_usd = 0.0;
                cached.duration_ms = started.elapsed().as_millis() as u64;
                cached.interaction_id = id.clone();
                cached.log_dir = log_dir_text.clone();
                cached.media_path = path_text.clone();
                self.finish_ok(&log, &id, &cached, &[], None);
                return Ok(cached);
            }
        }

        // 5. The provider, within the concurrency limit and the deadline.
        let upstream = async {
            let permit = match self.upstream_slots.clone().try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    progress.report(Progress::Queued);
                    self.upstream_slots
                        .clone()
                        .acquire_owned()
                        .await
                        .map_err(|e| VaiderError::internal("wait for a free slot", e))?
                }
            };
            let provider = self.provider(key);
            let job = ProviderJob {
                media_path: &path,
                media: &media,
                model: &model,
                system_prompt: prompts::SYSTEM,
                user_prompt: &user_prompt,
                response_schema: (!request.expectations.is_empty())
                    .then(prompts::expectations_schema),
                progress,
                deadline,
                interaction_id: &id,
            };
            let answer = provider.describe(job).await;
            drop(permit);
            answer
        };
        let answer = tokio::time::timeout_at(deadline.into(), upstream)
            .await
            .unwrap_or_else(|_| {
                Err(VaiderError::Timeout {
                    limit: timeout,
                    elapsed: started.elapsed(),
                })
            });
        match answer {
            Ok(answer) => {
                let result = self.result_from(
                    answer.clone(),
                    &request,
                    &model,
                    &media,
                    &id,
                    &log,
                    &path_text,
                    started,
                );
                self.finish_ok(
                    &log,
                    &id,
                    &result,
                    &answer.calls,
                    Some(&answer.raw_response),
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

    async fn check(
        &self,
        request: &AnalysisRequest,
        model: &str,
        deadline: Instant,
    ) -> Result<(PathBuf, MediaInfo, ApiKey)> {
        if !PROVIDERS.contains(&self.config.provider.as_str()) {
            return Err(VaiderError::InvalidRequest(format!(
                "Unknown provider {:?} in the config; this build knows: {}.",
                self.config.provider,
                PROVIDERS.join(", ")
            )));
        }
        if model.contains('/') || model.contains(char::is_whitespace) {
            return Err(VaiderError::InvalidRequest(format!(
                "{model:?} is not a model name; use one like \"gemini-2.5-flash\"."
            )));
        }
        let path = source::resolve(
            &request.source,
            &request.base_dirs,
            &self.http,
            &self.data_dir.join("downloads"),
            deadline,
        )
        .await?;
        let expected = match request.tool {
            Tool::AnalyzeVideo => None,
            Tool::AnalyzeImage => Some(MediaKind::Image),
        };
        let check_path = path.clone();
        let media = tokio::task::spawn_blocking(move || {
            media::inspect(&check_path, media::MAX_MEDIA_BYTES, expected)
        })
        .await
        .map_err(|e| VaiderError::internal("check the file", e))??;
        let (key, _) = self.api_key().await.ok_or_else(|| VaiderError::NoApiKey {
            provider: self.config.provider.clone(),
        })?;
        Ok((path, media, key))
    }

    fn provider(&self, key: ApiKey) -> Box<dyn VisionProvider> {
        Box::new(GeminiProvider::new(
            self.http.clone(),
            &self.config.gemini,
            key,
            self.config.max_attempts,
        ))
    }

    async fn media_sha256(&self, path: &Path) -> Result<String> {
        let meta = std::fs::metadata(path)
            .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
        let fingerprint = (
            path.to_path_buf(),
            meta.len(),
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        );
        if let Some(sha) = self
            .fingerprints
            .lock()
            .ok()
            .and_then(|f| f.get(&fingerprint).cloned())
        {
            return Ok(sha);
        }
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
        answer: ProviderAnswer,
        request: &AnalysisRequest,
        model: &str,
        media: &MediaInfo,
        id: &str,
        log: &InteractionLog,
        path_text: &str,
        started: Instant,
    ) -> AnalysisResult {
        let (description, expectations) = read_verdicts(&answer.text, &request.expectations);
        let all_met = (!expectations.is_empty())
            .then(|| expectations.iter().all(|e| e.verdict == Verdict::Met));
        let frames = match media.kind {
            MediaKind::Image => 1,
            // Gemini samples one frame a second; without a duration, about 300 tokens a second.
            MediaKind::Video => answer
                .video_seconds
                .map(|s| s.ceil().max(1.0) as u64)
                .unwrap_or_else(|| (answer.usage.input_tokens / 300).max(1)),
        };
        AnalysisResult {
            description,
            all_expectations_met: all_met,
            expectations,
            provider: self.config.provider.clone(),
            model: answer
                .model_version
                .clone()
                .unwrap_or_else(|| model.to_string()),
            duration_ms: started.elapsed().as_millis() as u64,
            cost_usd: cost::cost_usd(&self.config, model, answer.usage),
            usage: answer.usage,
            cached: false,
            interaction_id: id.to_string(),
            log_dir: log.dir().display().to_string(),
            media_path: path_text.to_string(),
            media_type: media.mime_type.to_string(),
            frames_analysed: frames,
        }
    }

    fn finish_ok(
        &self,
        log: &InteractionLog,
        id: &str,
        result: &AnalysisResult,
        calls: &[UpstreamCall],
        raw: Option<&serde_json::Value>,
    ) {
        let finished_at = now_rfc3339();
        let response = json!({
            "interactionId": id,
            "finishedAt": finished_at,
            "status": "ok",
            "durationMs": result.duration_ms,
            "result": result,
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
            provider: &self.config.provider,
            model,
            prompt,
            expectations: &request.expectations,
            cache_key: None,
            log_dir: None,
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
        ErrorCode::InvalidPath | ErrorCode::InvalidRequest | ErrorCode::NoApiKey => {
            Status::Rejected
        }
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

/// Splits the model's answer into description and verdicts. With expectations the model was
/// asked for JSON; an answer that is not, still yields its text and "unclear" verdicts.
fn read_verdicts(text: &str, expectations: &[String]) -> (String, Vec<ExpectationVerdict>) {
    if expectations.is_empty() {
        return (text.trim().to_string(), Vec::new());
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        description: String,
        #[serde(default)]
        expectations: Vec<Item>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        #[serde(default)]
        verdict: String,
        #[serde(default)]
        evidence: String,
    }
    let trimmed = text
        .trim()
        .trim_start_matches("```json")
        .trim_start_matches("```")
        .trim_end_matches("```");
    let parsed: Option<Answer> = serde_json::from_str(trimmed.trim()).ok();
    let (description, items) = match parsed {
        Some(answer) => (answer.description, answer.expectations),
        None => (text.trim().to_string(), Vec::new()),
    };
    let verdicts = expectations
        .iter()
        .enumerate()
        .map(|(i, expectation)| {
            let item = items.get(i);
            let verdict = match item.map(|it| it.verdict.as_str()) {
                Some("met") => Verdict::Met,
                Some("not_met") => Verdict::NotMet,
                _ => Verdict::Unclear,
            };
            ExpectationVerdict {
                expectation: expectation.clone(),
                verdict,
                evidence: item
                    .map(|it| it.evidence.clone())
                    .filter(|e| !e.is_empty())
                    .unwrap_or_else(|| {
                        "The model gave no verdict for this expectation.".to_string()
                    }),
            }
        })
        .collect();
    (description, verdicts)
}

fn cache_key(
    sha: &str,
    provider: &str,
    model: &str,
    user_prompt: &str,
    expectations: &[String],
) -> String {
    let mut hasher = Sha256::new();
    for part in [
        sha,
        provider,
        model,
        &prompts::PROMPT_VERSION.to_string(),
        prompts::SYSTEM,
        user_prompt,
        &serde_json::to_string(expectations).unwrap_or_default(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
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
        let (description, verdicts) = read_verdicts(answer, &expectations);
        assert_eq!(description, "00:01 login");
        assert_eq!(verdicts[0].verdict, Verdict::Met);
        assert_eq!(verdicts[1].verdict, Verdict::NotMet);
        assert_eq!(verdicts[1].evidence, "no error");
    }

    #[test]
    fn a_non_json_answer_keeps_its_text_and_is_unclear() {
        let expectations = vec!["x".to_string()];
        let (description, verdicts) = read_verdicts("plain words", &expectations);
        assert_eq!(description, "plain words");
        assert_eq!(verdicts[0].verdict, Verdict::Unclear);
    }

    #[test]
    fn the_cache_key_changes_with_each_input() {
        let base = cache_key("sha", "gemini", "m", "p", &[]);
        assert_ne!(base, cache_key("sha2", "gemini", "m", "p", &[]));
        assert_ne!(base, cache_key("sha", "gemini", "m2", "p", &[]));
        assert_ne!(base, cache_key("sha", "gemini", "m", "p2", &[]));
        assert_ne!(base, cache_key("sha", "gemini", "m", "p", &["e".into()]));
        assert_eq!(base, cache_key("sha", "gemini", "m", "p", &[]));
    }
}
