//! Google's rules for a failed request: when to retry (429 after its RetryInfo delay, never
//! for a daily quota; 500/503/504 with backoff) and how the error reads.

use std::time::Duration;

use serde_json::Value;

use super::quota::Quota429;
use super::*;

/// How long to wait before retrying, or None when retrying will not help.
pub(super) fn retry_wait(
    status: u16,
    body: &str,
    attempt: u32,
    base: Duration,
) -> Option<Duration> {
    match status {
        429 => {
            let quota = Quota429::read(body);
            match quota.daily {
                true => None,
                false => quota.wait(attempt, base),
            }
        }
        500 | 503 | 504 => Some(crate::provider::backoff(attempt, base)),
        _ => None,
    }
}

pub(super) fn upstream_error(status: u16, body: &str) -> VaiderError {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let google_status = parsed["error"]["status"].as_str().unwrap_or("");
    let google_message = parsed["error"]["message"].as_str().unwrap_or("").trim();
    if status == 429 {
        let response = UpstreamResponse {
            status,
            body: body.to_string(),
        };
        return Quota429::read(body).error(response, google_message);
    }
    let hint = match (status, google_status) {
        (400, _) if body.contains("API_KEY_INVALID") => {
            " Check the key: `vaider key set` stores a new one; `vaider doctor` shows which key is used."
        }
        (403, _) => " The key may lack access to this model or file.",
        (404, _) => " Check the model name (config `model`, or the `model` argument).",
        (500..=599, _) => " The service had a problem; Vaider retried with backoff. Try again later.",
        _ => "",
    };
    let what = if google_message.is_empty() {
        format!("Gemini answered HTTP {status}.")
    } else {
        format!("Gemini answered HTTP {status} {google_status}: {google_message}")
    };
    VaiderError::Upstream {
        message: format!("{what}{hint}"),
        response: Some(UpstreamResponse {
            status,
            body: body.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_quota_is_not_retried_but_per_minute_waits_the_given_delay() {
        let per_minute = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
        assert_eq!(
            retry_wait(429, per_minute, 1, Duration::from_secs(1)),
            Some(Duration::from_millis(1500))
        );
        let per_day = per_minute.replace("PerMinute", "PerDay");
        assert_eq!(retry_wait(429, &per_day, 1, Duration::from_secs(1)), None);
        assert!(retry_wait(503, "", 1, Duration::from_secs(1)).is_some());
        assert_eq!(retry_wait(400, "", 1, Duration::from_secs(1)), None);
    }

    #[test]
    fn absurd_retry_delays_clamp_or_end_in_a_clear_error() {
        for delay in ["1e30s", "-5s", "garbage", "NaNs", "infs", "1e309s", ""] {
            let body = format!(
                r#"{{"error":{{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{delay}"}}]}}}}"#
            );
            let wait = retry_wait(429, &body, 1, Duration::from_secs(1));
            assert!(
                wait.is_none_or(|w| w < crate::provider::bounded::MAX_RETRY_WAIT),
                "{delay}: {wait:?}"
            );
            let error = upstream_error(429, &body);
            assert_eq!(
                error.code(),
                vaider_base::error::ErrorCode::RateLimited,
                "{delay}"
            );
        }
        let huge = upstream_error(
            429,
            r#"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1e30s"}]}}"#,
        );
        assert!(huge.to_string().contains("longer than"), "{huge}");
        // A video's length is clamped too.
        assert!(parse_duration("1e30s").is_some());
    }
}
