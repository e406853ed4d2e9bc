//! One call, worked out once when it arrives: what is asked, of which provider and model, with
//! which prompts, by when, under which id. Every stage of the pipeline reads it; none works
//! any of it out again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{cache, AnalysisFailure, MAX_TIMEOUT};
use crate::analysis::AnalysisRequest;
use crate::config::Config;
use crate::error::VaiderError;
use crate::prompts::Prompts;
use crate::source;

pub(super) struct Call {
    pub request: AnalysisRequest,
    pub id: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub started: Instant,
    pub timeout: Duration,
    /// The deadline as the call arrived: the checks and the download keep it.
    pub deadline: Instant,
    /// The deadline of the work after that, pushed back by each wait for a free slot or for
    /// the provider's quota (waiting is not work).
    pub clock: crate::quota::Deadline,
    /// The settings in force when the call arrived apply to all of it.
    pub config: Arc<Config>,
    /// The provider's name, lower case: the request's, else the configured default.
    pub provider: String,
    pub model: String,
    pub prompts: Prompts,
    /// The source as the history and request.json keep it: a `data:` URL only by a short
    /// label, never whole.
    pub source_label: String,
}

impl Call {
    pub fn new(config: Arc<Config>, request: AnalysisRequest) -> Call {
        let started = Instant::now();
        let timeout = request.timeout.unwrap_or_else(|| config.timeout());
        let provider = request
            .provider
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .unwrap_or(&config.provider)
            .to_ascii_lowercase();
        let model = request
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| config.provider(&provider).ok().map(|c| c.model))
            .unwrap_or_else(|| config.model.clone());
        let prompts = Prompts::new(
            request.tool,
            request.prompt.as_deref(),
            &request.options,
            &request.expectations,
        );
        // A limit too large for the clock is refused by the check stage; until then the
        // deadline is the longest allowed.
        let deadline = started
            .checked_add(timeout.min(MAX_TIMEOUT))
            .unwrap_or(started);
        Call {
            id: request
                .id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string()),
            created_at: chrono::Utc::now(),
            started,
            timeout,
            deadline,
            clock: crate::quota::Deadline::new(deadline),
            source_label: source::label(&request.source),
            config,
            provider,
            model,
            prompts,
            request,
        }
    }

    /// The span every log line of this call carries, so a line leads to its history row.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!(
            "analysis",
            interaction_id = %self.id,
            tool = self.request.tool.as_str(),
            door = self.request.door.as_str(),
        )
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub fn timed_out(&self) -> VaiderError {
        VaiderError::Timeout {
            limit: self.timeout,
            elapsed: self.started.elapsed(),
        }
    }

    pub fn failure(&self, error: VaiderError, log_dir: Option<String>) -> AnalysisFailure {
        AnalysisFailure {
            duration_ms: self.elapsed_ms(),
            interaction_id: Some(self.id.clone()),
            log_dir,
            error,
        }
    }

    /// What the call is for: its task's job, judged when expectations are asked.
    pub fn job(&self) -> crate::guidance::Job {
        let task = self.request.tool.task();
        task.job
            .with_expectations(!self.request.expectations.is_empty())
    }

    pub fn use_cache(&self) -> bool {
        self.config.cache && !self.request.no_cache
    }

    /// The cache key: the media's bytes, the question and who answers it.
    pub fn cache_key(&self, shas: &[String]) -> String {
        self.key_parts().key(shas)
    }

    /// How a video goes to a model that takes video: the call's `sampling`, else the config's.
    pub fn sampling(&self) -> crate::sampling::VideoSampling {
        self.request.sampling.unwrap_or(self.config.video_sampling)
    }

    pub fn key_parts(&self) -> cache::KeyParts {
        cache::KeyParts {
            tool: self.request.tool.as_str(),
            // A video sampled otherwise is another question.
            sampling: self
                .request
                .tool
                .takes_video()
                .then(|| self.sampling().as_str()),
            stretch: self.request.stretch.map(|s| s.key()),
            provider: self.provider.clone(),
            model: self.model.clone(),
            system: self.prompts.system.clone(),
            user: self.prompts.user(None),
        }
    }

    pub fn created_text(&self) -> String {
        self.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    /// The interaction folder's name: the UTC time, then the id's last characters.
    pub fn folder_name(&self) -> String {
        let tail: Vec<char> = self
            .id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let tail: String = tail[tail.len().saturating_sub(8)..].iter().collect();
        format!("{}-{tail}", self.created_at.format("%Y%m%dT%H%M%S%.3fZ"))
    }
}
