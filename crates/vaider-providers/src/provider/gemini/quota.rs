//! Gemini's per-minute and daily quotas: generateContent takes its turn in the quota lane of
//! the key and model (crate::quota), and a 429's details (QuotaFailure's quotaId and
//! quotaValue, RetryInfo's retryDelay) teach the lane its limit and wait, or end the call at
//! once when the quota is daily.

use std::time::Duration;

use serde_json::Value;

use super::{retry_wait, upstream_error, GeminiProvider};
use crate::provider::{ProviderJob, RetryRules, UpstreamCall};
use vaider_base::error::{UpstreamResponse, VaiderError};
use vaider_base::progress::Progress;

impl GeminiProvider {
    /// generateContent, in its turn under the key's and model's per-minute quota. A 429 for
    /// that quota teaches the lane its limit and wait, and the call takes a new turn (the
    /// wait does not count against its time limit), up to `max_attempts` times; a daily
    /// quota fails at once.
    pub(super) async fn generate(
        &self,
        job: &ProviderJob<'_>,
        url: &str,
        endpoint: &str,
        body: &Value,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<reqwest::Response, VaiderError> {
        let mut tries = 0;
        loop {
            tries += 1;
            let sent = tokio::select! {
                sent = job.meter.admit(job.progress) => sent,
                _ = job.stop.cancelled() => return Err(crate::provider::stopped()),
            };
            job.progress.report(Progress::Generating);
            let rules = MeteredRules {
                meter: job.meter,
                sent,
            };
            // Nothing is created by generateContent, so it may be dropped when no longer wanted.
            let generate = self.upstream.send(
                || {
                    self.upstream
                        .http
                        .post(url)
                        .header("x-goog-api-key", self.key.expose())
                        .json(body)
                },
                "POST",
                endpoint,
                job.meter.deadline(),
                calls,
                &rules,
            );
            let outcome = tokio::select! {
                outcome = generate => outcome,
                _ = job.stop.cancelled() => return Err(crate::provider::stopped()),
            };
            match outcome {
                Err(VaiderError::RateLimited {
                    daily: false,
                    retry_after,
                    ..
                }) if tries < self.upstream.max_attempts
                    && retry_after.is_none_or(|w| w < crate::provider::bounded::MAX_RETRY_WAIT) =>
                {
                    tracing::info!(tries, "per-minute quota: waiting for a new turn");
                }
                outcome => return outcome,
            }
        }
    }
}

/// Google's rules for generateContent: a 429 for a per-minute quota is not retried in place
/// but handed to the quota lane, which learns from it; the call then takes a new turn.
struct MeteredRules<'a> {
    meter: &'a crate::quota::Meter<'a>,
    sent: crate::quota::Sent,
}

impl RetryRules for MeteredRules<'_> {
    fn wait(
        &self,
        status: u16,
        _: &reqwest::header::HeaderMap,
        body: &str,
        attempt: u32,
        base: Duration,
    ) -> Option<Duration> {
        if status != 429 {
            return retry_wait(status, body, attempt, base);
        }
        let quota = Quota429::read(body);
        if !quota.daily {
            self.meter
                .refused(self.sent, quota.limit, quota.wait(attempt, base));
        }
        None
    }

    fn error(&self, status: u16, body: &str) -> VaiderError {
        upstream_error(status, body)
    }
}

/// What a 429's details say: a daily quota or not, the limit, the wait.
pub(super) struct Quota429 {
    pub(super) daily: bool,
    /// The violated quota's id ("GenerateRequestsPerMinutePerProjectPerModel-FreeTier").
    quota_id: Option<String>,
    /// Its `quotaValue`: calls allowed in its period.
    pub(super) limit: Option<u32>,
    /// RetryInfo's `retryDelay`, clamped to [`crate::provider::bounded::MAX_RETRY_WAIT`].
    pub(super) retry: Option<Duration>,
    /// RetryInfo's `retryDelay` as sent.
    retry_text: Option<String>,
}

impl Quota429 {
    pub(super) fn read(body: &str) -> Quota429 {
        let error: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let details = error["error"]["details"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let of_type = |name: &str| {
            details
                .iter()
                .find(|d| d["@type"].as_str().is_some_and(|t| t.ends_with(name)))
        };
        let violations = of_type("google.rpc.QuotaFailure")
            .and_then(|d| d["violations"].as_array())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let quota_id = |v: &Value| v["quotaId"].as_str().map(str::to_string);
        let daily_violation = violations
            .iter()
            .find(|v| quota_id(v).is_some_and(|q| q.contains("PerDay")));
        let violation = daily_violation.or(violations.first());
        let retry_text = of_type("google.rpc.RetryInfo")
            .and_then(|d| d["retryDelay"].as_str())
            .map(str::to_string);
        Quota429 {
            daily: daily_violation.is_some(),
            quota_id: violation.and_then(quota_id),
            limit: violation.and_then(|v| crate::provider::bounded::quota_value(&v["quotaValue"])),
            retry: retry_text.as_deref().and_then(|t| {
                crate::provider::bounded::google_duration(
                    t,
                    crate::provider::bounded::MAX_RETRY_WAIT,
                )
            }),
            retry_text,
        }
    }

    /// How long a per-minute refusal asks to wait: its RetryInfo, or the backoff when it
    /// names none; None when that is too long to wait (then reported instead).
    pub(super) fn wait(&self, attempt: u32, base: Duration) -> Option<Duration> {
        match self.retry {
            Some(wait) if wait >= crate::provider::bounded::MAX_RETRY_WAIT => None,
            Some(wait) => Some(wait),
            None => Some(crate::provider::backoff(attempt, base)),
        }
    }

    /// The error for a call the quota refused: daily (at once) or per-minute (after retries).
    pub(super) fn error(&self, response: UpstreamResponse, google_message: &str) -> VaiderError {
        let quota = match (&self.quota_id, self.limit) {
            (Some(id), Some(limit)) => format!(" ({id}: {limit})"),
            (Some(id), None) => format!(" ({id})"),
            _ => String::new(),
        };
        let message = if self.daily {
            format!(
                "Gemini's daily quota for this key and model is used up{quota}: waiting will not help today (it resets at midnight Pacific time). Use another model or key, or a paid tier. Gemini said: {google_message}"
            )
        } else {
            let wait = match (self.retry, &self.retry_text) {
                (Some(w), _) if w >= crate::provider::bounded::MAX_RETRY_WAIT => format!(
                    " It asks to wait {}, longer than the {} minutes Vaider waits for a per-minute quota: try again later.",
                    self.retry_text.as_deref().unwrap_or("?"),
                    crate::provider::bounded::MAX_RETRY_WAIT.as_secs() / 60
                ),
                (Some(w), _) => format!(" Its next turn is in about {:.0} s: try again then.", w.as_secs_f64().ceil()),
                (None, Some(text)) => format!(" Its wait ({text:?}) could not be read."),
                (None, None) => String::new(),
            };
            format!(
                "Gemini's per-minute quota refused the call{quota} after Vaider waited and retried as it asked (rate-limited).{wait} Vaider queues calls to stay under a quota once it has seen it."
            )
        };
        VaiderError::RateLimited {
            message,
            retry_after: self.retry,
            daily: self.daily,
            response: Some(response),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_failure_names_the_quota_and_its_size() {
        let body = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-3.5-flash-lite"},"quotaValue":"20"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37.5s"}]}}"#;
        let quota = Quota429::read(body);
        assert!(!quota.daily);
        assert_eq!(quota.limit, Some(20));
        assert_eq!(quota.retry, Some(Duration::from_millis(37_500)));
        assert!(Quota429::read(&body.replace("PerMinute", "PerDay")).daily);
    }
}
