//! The record stage: `request.json` and the history row are written before the provider is
//! asked, so a crash leaves a trace; the call's end is written to both, whichever way it ends:
//! an answer, an error, or, when the call is dropped or panics half-way, a closed row that
//! says so (a [`Record`] that was never finished closes its row when dropped).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::cache::KeyParts;
use super::call::Call;
use super::check::Checked;
use super::{now_rfc3339, AnalysisFailure, VERSION};
use crate::analysis::AnalysisResult;
use crate::engine::Vaider;
use crate::error::{ErrorCode, Result, UpstreamResponse, VaiderError};
use crate::history::{Answered, History, NewInteraction, Outcome, Status};
use crate::interaction_log::InteractionLog;
use crate::provider::UpstreamCall;
use crate::recovery;

/// A call's open record: its interaction folder and its `running` history row.
pub(super) struct Record {
    history: History,
    id: String,
    log_dir: PathBuf,
    /// The media the interaction is about, as the result names it.
    pub media_path: PathBuf,
    /// Set once the outcome is written; a record dropped before that closes its row.
    ended: bool,
}

/// What `response.json` holds besides the result, for a successful call.
pub(super) struct Sent<'a> {
    pub calls: &'a [UpstreamCall],
    pub raw: Option<&'a serde_json::Value>,
    pub sent: Option<serde_json::Value>,
}

impl Vaider {
    /// Writes `request.json` and opens the history row, as this process's.
    pub(super) async fn record(
        &self,
        call: &Call,
        checked: &Checked,
        shas: &[String],
        cache_key: Option<&str>,
    ) -> Result<Record> {
        let (path, info) = &checked.subject;
        let log = InteractionLog::create(path, &call.folder_name(), &self.data_dir)?;
        let request_file = request_json(call, checked, shas);
        let row = NewInteraction {
            media_path: Some(path.display().to_string()),
            media_type: Some(info.mime_type),
            media_sha256: shas.last().cloned(),
            size_bytes: Some(info.size_bytes),
            cache_key: cache_key.map(str::to_string),
            log_dir: Some(log.dir().display().to_string()),
            project: Some(project_of(path, &call.request.base_dirs)),
            expected_path: checked
                .expected
                .as_ref()
                .map(|(p, _)| p.display().to_string()),
            owner: Some(self.owner().to_string()),
            ..row_of(call)
        };
        let log_dir = log.dir().to_path_buf();
        self.history()
            .run(move |history| {
                log.write_request(&request_file)?;
                history.start(&row)
            })
            .await?;
        tracing::info!(provider = %call.provider, media = %path.display(), "analysis started");
        Ok(Record {
            history: self.history().clone(),
            id: call.id.clone(),
            log_dir,
            media_path: path.clone(),
            ended: false,
        })
    }

    /// A call refused before it had a folder: one history row, already closed.
    pub(super) async fn record_rejection(&self, call: &Call, error: &VaiderError) {
        let row = NewInteraction {
            project: call
                .request
                .base_dirs
                .first()
                .map(|d| d.display().to_string()),
            ..row_of(call)
        };
        let (status, code, message) = (status_of(error), error.code().as_str(), error.to_string());
        let duration_ms = call.elapsed_ms();
        let recorded = self
            .history()
            .run(move |history| {
                history.start(&row)?;
                let outcome = Outcome::Failed {
                    status,
                    code,
                    message: &message,
                    duration_ms,
                };
                history.finish(&row.id, &now_rfc3339(), outcome)
            })
            .await;
        if let Err(e) = recorded {
            tracing::error!("{e}");
        }
    }
}

/// The row's values that the call alone decides.
fn row_of(call: &Call) -> NewInteraction {
    NewInteraction {
        id: call.id.clone(),
        created_at: call.created_text(),
        tool: call.request.tool.as_str(),
        door: call.request.door.as_str(),
        source: call.source_label.clone(),
        provider: call.provider.clone(),
        model: call.model.clone(),
        prompt: call.prompts.prompt.clone(),
        expectations: call.request.expectations.clone(),
        parent_id: call.request.parent_id.clone(),
        ..NewInteraction::default()
    }
}

impl Record {
    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// Records the media's hash and the cache key once known (hashing runs beside the upload).
    pub async fn set_cache_key(&self, key: String, sha: Option<String>) {
        record_cache_key(self.history.clone(), self.id.clone(), key, sha).await;
    }

    /// Records the cache key once the hashing that outlived the answer is done.
    pub fn set_cache_key_when_hashed(
        &self,
        hashing: tokio::sync::oneshot::Receiver<Result<Vec<String>>>,
        parts: KeyParts,
    ) {
        let (history, id) = (self.history.clone(), self.id.clone());
        tokio::spawn(async move {
            if let Ok(Ok(shas)) = hashing.await {
                let sha = shas.last().cloned();
                record_cache_key(history, id, parts.key(&shas), sha).await;
            }
        });
    }

    /// Writes the answer to `response.json` and closes the row as ok. The answer is already in
    /// hand: a failure to record it is logged, not returned.
    pub async fn finish_ok(mut self, result: &AnalysisResult, sent: Sent<'_>) {
        self.ended = true;
        let finished_at = now_rfc3339();
        let response = json!({
            "interactionId": self.id,
            "finishedAt": finished_at,
            "status": "ok",
            "durationMs": result.duration_ms,
            "result": result,
            "sent": sent.sent,
            "upstreamCalls": sent.calls,
            "providerResponse": sent.raw,
        });
        let (id, log_dir, result) = (self.id.clone(), self.log_dir.clone(), result.clone());
        let done = self
            .history
            .run(move |history| {
                if let Err(e) = InteractionLog::at(&log_dir).write_response(&response) {
                    tracing::error!("{e}");
                }
                history.finish(&id, &finished_at, Outcome::Ok(answered(&result)))
            })
            .await;
        if let Err(e) = done {
            tracing::error!("{e}");
        }
    }

    /// Writes the error to `response.json` and closes the row with its status.
    pub async fn finish_failed(mut self, failure: &AnalysisFailure) {
        self.ended = true;
        let finished_at = now_rfc3339();
        let status = status_of(&failure.error);
        let response = json!({
            "interactionId": self.id,
            "finishedAt": finished_at,
            "status": status.as_str(),
            "durationMs": failure.duration_ms,
            "error": error_json(&failure.error),
        });
        let (code, message) = (failure.error.code().as_str(), failure.error.to_string());
        let duration_ms = failure.duration_ms;
        let (id, log_dir) = (self.id.clone(), self.log_dir.clone());
        let done = self
            .history
            .run(move |history| {
                if let Err(e) = InteractionLog::at(&log_dir).write_response(&response) {
                    tracing::error!("{e}");
                }
                let outcome = Outcome::Failed {
                    status,
                    code,
                    message: &message,
                    duration_ms,
                };
                history.finish(&id, &finished_at, outcome)
            })
            .await;
        if let Err(e) = done {
            tracing::error!("{e}");
        }
    }
}

impl Drop for Record {
    /// A call that never reached its end: the client went away (its future was dropped) or a
    /// bug panicked. Either way the row must not stay `running`.
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let message = if std::thread::panicking() {
            "Vaider failed inside this call (an internal error) and returned nothing. Run it again; if it happens again, report it with this interaction's folder."
        } else {
            "The call was cancelled before it ended: the client disconnected or gave up waiting. Nothing was returned."
        };
        recovery::close(&self.history, &self.id, self.log_dir.to_str(), message);
    }
}

fn request_json(call: &Call, checked: &Checked, shas: &[String]) -> serde_json::Value {
    let request = &call.request;
    let media: Vec<serde_json::Value> = checked
        .media()
        .enumerate()
        .map(|(i, (p, m))| json!({
            "path": p, "type": m.mime_type, "format": m.format, "sizeBytes": m.size_bytes, "sha256": shas.get(i)
        }))
        .collect();
    json!({
        "interactionId": call.id,
        "createdAt": call.created_text(),
        "vaiderVersion": VERSION,
        "door": request.door,
        "tool": request.tool,
        "source": call.source_label,
        "compareWith": request.compare_with.as_deref().map(crate::source::label),
        "closeUps": request.close_ups.iter().map(|c| crate::source::label(c)).collect::<Vec<_>>(),
        "resolvedPath": checked.subject.0,
        "media": media,
        "provider": call.provider,
        "baseUrl": checked.provider.base_url,
        "model": call.model,
        "systemPrompt": call.prompts.system,
        "prompt": call.prompts.prompt,
        "options": request.options,
        "expectations": request.expectations,
        "timeoutSec": call.timeout.as_secs_f64(),
        "noCache": request.no_cache,
    })
}

pub(super) fn status_of(error: &VaiderError) -> Status {
    match error.code() {
        ErrorCode::Timeout => Status::Timeout,
        ErrorCode::InvalidPath
        | ErrorCode::InvalidRequest
        | ErrorCode::NoApiKey
        | ErrorCode::Paused => Status::Rejected,
        ErrorCode::UpstreamError
        | ErrorCode::RateLimited
        | ErrorCode::QuotaExhausted
        | ErrorCode::ModelNotFound
        | ErrorCode::Internal => Status::Error,
    }
}

/// The error as the interaction file keeps it.
pub fn error_json(error: &VaiderError) -> serde_json::Value {
    let mut value = json!({
        "code": error.code().as_str(),
        "message": error.to_string(),
        "upstreamResponse": error.upstream_response().map(|UpstreamResponse { status, body }| json!({"status": status, "body": body})),
    });
    // A model that is gone: the facts a program needs to pick another one.
    if let VaiderError::ModelNotFound(gone) = error {
        value["model"] = json!(gone.model);
        value["shutDown"] = json!(gone.shut_down);
        value["choices"] = json!(gone.choices);
    }
    value
}

/// What the history keeps of a successful call: the whole result, and the columns it lists.
fn answered(result: &AnalysisResult) -> Answered<'_> {
    Answered {
        cached: result.cached,
        description: &result.description,
        result_json: serde_json::to_string(result).ok(),
        input_tokens: result.usage.input_tokens,
        output_tokens: result.usage.output_tokens,
        cost_usd: result.cost_usd,
        duration_ms: result.duration_ms,
        model: &result.model,
        default_sampling_input_tokens: result
            .sampling
            .as_ref()
            .map(|s| s.default_sampling_input_tokens),
    }
}

/// Writes a call's cache key and media hash into its row; a failure only costs a later cache
/// hit, so it is logged.
async fn record_cache_key(history: History, id: String, key: String, sha: Option<String>) {
    let set = history
        .run(move |history| history.set_cache_key(&id, &key, sha.as_deref()))
        .await;
    if let Err(e) = set {
        tracing::error!("{e}");
    }
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
