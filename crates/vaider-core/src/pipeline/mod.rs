//! The one analysis pipeline behind every door (MCP, REST, CLI, UI) and every tool. A call is
//! worked out once ([`call::Call`]), then goes through small stages: check (sources, files,
//! key), record (request.json and the history row), cache, prepare (fit the media to the
//! provider), ask (within the concurrency limit and the deadline) and record the end.
//! The engine's long-lived state is in `engine`; this module is only the per-call path.

mod answer;
mod cache;
mod call;
mod check;
mod identity;
mod prepare;
mod record;
mod video;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::analysis::{AnalysisRequest, AnalysisResult};
use crate::error::VaiderError;
use crate::progress::{Progress, ProgressSink};
use crate::provider::{ProviderAnswer, ProviderJob};

pub use crate::engine::{EngineChange, Vaider};
pub use crate::status::{ProviderStatus, StatusReport};
pub use cache::{sha256_file, Fingerprints};
pub use record::error_json;

use call::Call;
use check::Checked;
use prepare::Prepared;
use record::{Record, Sent};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The longest time limit a caller may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(crate::config::MAX_TIMEOUT_SEC);

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

type Outcome = std::result::Result<AnalysisResult, AnalysisFailure>;

/// A fresh answer from the provider, with what was sent for it.
struct Fresh {
    answer: ProviderAnswer,
    prepared: Prepared,
    user_prompt: String,
}

impl Vaider {
    /// Runs one analysis from request to recorded answer. Every log line of the call carries
    /// its interaction id.
    pub async fn analyse(&self, request: AnalysisRequest, progress: &dyn ProgressSink) -> Outcome {
        let call = Call::new(self.config(), request);
        let span = call.span();
        self.run(&call, progress).instrument(span).await
    }

    async fn run(&self, call: &Call, progress: &dyn ProgressSink) -> Outcome {
        let checked = match self.check(call).await {
            Ok(checked) => checked,
            Err(error) => {
                self.record_rejection(call, &error).await;
                return Err(call.failure(error, None));
            }
        };
        // A file seen before is known by its fingerprint, and a small new one is hashed at once;
        // a large new one is hashed after its upload, so the upload never waits for the hash
        // nor shares the CPU with it.
        let known = if call.use_cache() {
            self.hashes_now(checked.media()).await
        } else {
            None
        };
        let hash_later = call.use_cache() && known.is_none();
        let shas = known.unwrap_or_default();
        let cache_key = (!shas.is_empty()).then(|| call.cache_key(&shas));
        let record = self
            .record(call, &checked, &shas, cache_key.as_deref())
            .await
            .map_err(|e| call.failure(e, None))?;
        if let Some(key) = cache_key {
            if let Some(cached) = self.cached(call, &record, &key).await {
                return Ok(finish_cached(record, cached).await);
            }
        }
        let hashed_late = Mutex::new(Vec::new());
        let asked = self
            .ask_within_deadline(call, &checked, &record, progress, hash_later, &hashed_late)
            .await;
        match asked {
            Ok(Asked::Cached(cached)) => Ok(finish_cached(record, cached).await),
            Ok(Asked::Fresh(fresh)) => {
                let hashes = if shas.is_empty() {
                    hashed_late.lock().map(|l| l.clone()).unwrap_or_default()
                } else {
                    shas
                };
                Ok(self
                    .finish_fresh(call, &checked, record, fresh, hashes)
                    .await)
            }
            Err(error) => {
                let failure = call.failure(error, Some(record.log_dir().display().to_string()));
                record.finish_failed(&failure).await;
                tracing::warn!(
                    code = failure.error.code().as_str(),
                    "analysis failed: {}",
                    failure.error
                );
                Err(failure)
            }
        }
    }

    /// The stored answer to the same bytes, question and provider, if there is one.
    async fn cached(&self, call: &Call, record: &Record, key: &str) -> Option<AnalysisResult> {
        let key = key.to_string();
        let found = self
            .history()
            .run(move |history| history.cached_result(&key))
            .await;
        let mut cached: AnalysisResult = found.ok().flatten()?;
        cached.cached = true;
        cached.cost_usd = 0.0;
        cached.duration_ms = call.elapsed_ms();
        cached.interaction_id = call.id.clone();
        cached.log_dir = record.log_dir().display().to_string();
        cached.media_path = record.media_path.display().to_string();
        Some(cached)
    }

    async fn ask_within_deadline(
        &self,
        call: &Call,
        checked: &Checked,
        record: &Record,
        progress: &dyn ProgressSink,
        hash_later: bool,
        hashed_late: &Mutex<Vec<String>>,
    ) -> std::result::Result<Asked, VaiderError> {
        let asking = async {
            // The last moment before anything leaves the machine.
            checked.unchanged()?;
            if !hash_later {
                let wanted = CancellationToken::new();
                return self
                    .ask(call, checked, record, progress, &wanted)
                    .await
                    .map(Asked::Fresh);
            }
            self.ask_then_hash(call, checked, record, progress, hashed_late)
                .await
        };
        // The time limit bounds the work, not the waits for a slot or the provider's quota.
        call.clock
            .run(asking)
            .await
            .unwrap_or_else(|| Err(call.timed_out()))
    }

    /// Asks the provider and hashes a large new file once its upload is done, while the model
    /// works. The answer never waits for the hash; if the hash comes first and the same bytes
    /// were answered before, the provider is told to stop (it deletes what it uploaded) and
    /// the stored answer returned.
    async fn ask_then_hash(
        &self,
        call: &Call,
        checked: &Checked,
        record: &Record,
        progress: &dyn ProgressSink,
        hashed_late: &Mutex<Vec<String>>,
    ) -> std::result::Result<Asked, VaiderError> {
        let uploaded = Arc::new(Notify::new());
        let files = checked.media().map(|(file, _)| file.clone()).collect();
        let mut hashing = self.hash_after(uploaded.clone(), files);
        let watch = UploadWatch {
            inner: progress,
            uploaded: &uploaded,
        };
        let remember = |shas: Vec<String>| async move {
            let key = call.cache_key(&shas);
            record
                .set_cache_key(key.clone(), shas.last().cloned())
                .await;
            if let Ok(mut late) = hashed_late.lock() {
                *late = shas;
            }
            key
        };
        let stop = CancellationToken::new();
        let upstream = self.ask(call, checked, record, &watch, &stop);
        tokio::pin!(upstream);
        let first = tokio::select! {
            answer = &mut upstream => First::Answer(Box::new(answer)),
            shas = &mut hashing => First::Hashed(shas.ok().and_then(|s| s.ok())),
        };
        match first {
            First::Answer(answer) => {
                // The answer does not wait for the hash: it is recorded once done, for the
                // next call with the same bytes.
                uploaded.notify_one();
                record.set_cache_key_when_hashed(hashing, call.key_parts());
                answer.map(Asked::Fresh)
            }
            First::Hashed(Some(shas)) => {
                let key = remember(shas).await;
                if let Some(cached) = self.cached(call, record, &key).await {
                    // Not dropped: a request that creates a file upstream is let finish, so
                    // the provider knows what to delete.
                    stop.cancel();
                    let _ = upstream.await;
                    return Ok(Asked::Cached(cached));
                }
                upstream.await.map(Asked::Fresh)
            }
            First::Hashed(None) => upstream.await.map(Asked::Fresh),
        }
    }

    /// Fits the media to the provider and asks it, within the concurrency limit (keyframe
    /// extraction included).
    async fn ask(
        &self,
        call: &Call,
        checked: &Checked,
        record: &Record,
        progress: &dyn ProgressSink,
        stop: &CancellationToken,
    ) -> std::result::Result<Fresh, VaiderError> {
        let _slot = self.free_slot(call, progress).await?;
        let mut prepared = self
            .prepare(
                checked.media(),
                &checked.provider,
                &call.model,
                call.request.tool,
                record.log_dir(),
                (call.sampling(), call.request.stretch),
            )
            .await?;
        let user_prompt = call.prompts.user(prepared.note.as_deref());
        let meter = self.take_turn(call, checked, progress).await;
        let answer = self
            .provider_for(call, checked)
            .describe(ProviderJob {
                parts: &prepared.parts,
                model: &call.model,
                job: call.job(),
                system_prompt: &call.prompts.system,
                user_prompt: &user_prompt,
                user_prompt_with: &|note| call.prompts.user(Some(note)),
                response_schema: call.prompts.schema.clone(),
                progress,
                deadline: call.clock.at(),
                meter: &meter,
                interaction_id: &call.id,
                stop,
            })
            .await;
        let answer = match answer {
            Err(e) if crate::models::is_model_not_found(&e, &call.model) => {
                return Err(self.model_not_found(call, checked, e).await);
            }
            other => other?,
        };
        prepared.settle();
        // The prompt as sent: with the note of a plan settled during the upload.
        let user_prompt = match prepared.sent.as_ref().and_then(|s| s.note.as_deref()) {
            Some(note) => call.prompts.user(Some(note)),
            None => user_prompt,
        };
        Ok(Fresh {
            answer,
            prepared,
            user_prompt,
        })
    }

    /// The provider's adapter, with the call's key and retry settings.
    fn provider_for(
        &self,
        call: &Call,
        checked: &Checked,
    ) -> Box<dyn crate::provider::VisionProvider> {
        crate::provider::build(
            &checked.provider,
            self.http.clone(),
            checked.key.clone(),
            call.config.max_attempts,
            &call.config.gemini,
        )
    }

    /// One of the `max_concurrent` upstream slots, waited for (and reported as queued) when
    /// all are taken; the wait does not count against the call's time limit.
    async fn free_slot(
        &self,
        call: &Call,
        progress: &dyn ProgressSink,
    ) -> std::result::Result<tokio::sync::OwnedSemaphorePermit, VaiderError> {
        let slots = self.upstream_slots();
        match slots.clone().try_acquire_owned() {
            Ok(permit) => Ok(permit),
            Err(_) => {
                progress.report(Progress::Queued);
                crate::quota::not_counted(&call.clock, slots.acquire_owned())
                    .await
                    .map_err(|e| VaiderError::internal("wait for a free slot", e))
            }
        }
    }

    /// The provider's per-minute quota, after the media is ready: a call that waits its turn
    /// holds its upload slot. Gemini takes its turn itself, right before generateContent
    /// (after its upload), and learns the quota from its 429s.
    async fn take_turn<'a>(
        &self,
        call: &'a Call,
        checked: &Checked,
        progress: &dyn ProgressSink,
    ) -> crate::quota::Meter<'a> {
        let meter = self.quotas.meter(
            &checked.provider.name,
            checked.key.as_ref(),
            &call.model,
            call.config.max_calls_per_minute,
            &call.clock,
        );
        if checked.provider.adapter != crate::config::Adapter::Gemini {
            meter.admit(progress).await;
        }
        meter
    }

    /// `MODEL_NOT_FOUND` for a model the provider does not know, with its current choices,
    /// listed within what is left of the call's time.
    async fn model_not_found(
        &self,
        call: &Call,
        checked: &Checked,
        error: VaiderError,
    ) -> VaiderError {
        let mut limits = crate::models::ListLimits::on_error_path();
        limits.timeout = limits.timeout.min(
            call.deadline
                .saturating_duration_since(std::time::Instant::now()),
        );
        let choices = crate::models::current_choices(
            &self.http,
            &checked.provider,
            checked.key.as_ref(),
            &call.model,
            limits,
        )
        .await;
        crate::models::not_found_error(&checked.provider, &call.model, choices, error)
    }

    async fn finish_fresh(
        &self,
        call: &Call,
        checked: &Checked,
        record: Record,
        fresh: Fresh,
        hashes: Vec<String>,
    ) -> AnalysisResult {
        let Fresh {
            answer,
            prepared,
            user_prompt,
        } = fresh;
        let (media_path, media) = &checked.subject;
        let result = answer::result(
            call,
            answer::Answered {
                answer: &answer,
                prepared: &prepared,
                media,
                media_path,
                log_dir: record.log_dir(),
            },
        )
        .await;
        let sent = json!({"userPrompt": user_prompt, "parts": prepared.describe_parts(), "mediaSha256": hashes});
        // What is kept has the answer's secrets replaced; the caller gets them to act on.
        let secrets = call.request.redact.secrets(result.details.as_ref());
        let (kept, raw, sent) = match secrets.is_empty() {
            true => (None, None, sent),
            false => (
                Some(crate::redact::record(&result, &secrets).unwrap_or_else(|| {
                    let mut kept = result.clone();
                    kept.description = crate::redact::REDACTED.into();
                    kept.details = None;
                    kept
                })),
                Some(crate::redact::json(&answer.raw_response, &secrets)),
                crate::redact::json(&sent, &secrets),
            ),
        };
        record
            .finish_ok(
                kept.as_ref().unwrap_or(&result),
                Sent {
                    calls: &answer.calls,
                    raw: Some(raw.as_ref().unwrap_or(&answer.raw_response)),
                    sent: Some(sent),
                },
            )
            .await;
        tracing::info!(
            duration_ms = result.duration_ms,
            cost_usd = result.cost_usd,
            "analysis done"
        );
        result
    }
}

/// Passes progress on, and notes when the media has been sent: the upload's last bytes, or
/// the provider processing or answering.
struct UploadWatch<'a> {
    inner: &'a dyn ProgressSink,
    uploaded: &'a Notify,
}

impl ProgressSink for UploadWatch<'_> {
    fn report(&self, progress: Progress) {
        let sent = match &progress {
            Progress::Uploading { sent, total } => sent >= total,
            Progress::Processing { .. } | Progress::Generating => true,
            Progress::Queued | Progress::QuotaQueued { .. } => false,
        };
        if sent {
            self.uploaded.notify_one();
        }
        self.inner.report(progress);
    }
}

/// What ended first when a new file is hashed beside its upload.
enum First {
    Answer(Box<std::result::Result<Fresh, VaiderError>>),
    Hashed(Option<Vec<String>>),
}

/// How the ask stage ended: the provider's answer, or the history's for the same bytes.
enum Asked {
    Fresh(Fresh),
    Cached(AnalysisResult),
}

async fn finish_cached(record: Record, cached: AnalysisResult) -> AnalysisResult {
    record
        .finish_ok(
            &cached,
            Sent {
                calls: &[],
                raw: None,
                sent: None,
            },
        )
        .await;
    cached
}

/// The history's time format (a re-export of the crate that owns it, vaider-history).
pub use vaider_history::now_rfc3339;
