//! Gemini's request quotas, per API key and model, as the real service enforces them: a
//! per-minute quota over a sliding minute and a per-day quota, both off unless set. A call
//! past either is answered Google's exact 429: RESOURCE_EXHAUSTED with a QuotaFailure detail
//! (`quotaId`, `quotaValue`) and a RetryInfo whose `retryDelay` is the real time left until a
//! call would pass ("37.5s"). A refused call does not count against the quota.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::errors::ApiError;

const MINUTE: Duration = Duration::from_secs(60);
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The quotas set, and the calls each key and model made.
#[derive(Default)]
pub(crate) struct Quotas {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
    used: HashMap<(String, String), Used>,
    /// When each call was refused for a quota.
    pub refused: Vec<Instant>,
}

#[derive(Default)]
struct Used {
    /// Calls that passed in the last minute.
    minute: VecDeque<Instant>,
    /// The day started with the first call; calls that passed in it.
    day: Option<(Instant, u32)>,
}

impl Quotas {
    /// Counts a generateContent call of `key` on `model` at `now`, or refuses it.
    pub fn take(&mut self, key: &str, model: &str, now: Instant) -> Result<(), ApiError> {
        if self.per_minute.is_none() && self.per_day.is_none() {
            return Ok(());
        }
        let used = self
            .used
            .entry((key.to_string(), model.to_string()))
            .or_default();
        while used
            .minute
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) >= MINUTE)
        {
            used.minute.pop_front();
        }
        let day = match used.day {
            Some((start, n)) if now.saturating_duration_since(start) < DAY => (start, n),
            _ => (now, 0),
        };
        used.day = Some(day);
        if let Some(limit) = self.per_day.filter(|l| day.1 >= *l) {
            self.refused.push(now);
            let left = (day.0 + DAY).saturating_duration_since(now);
            return Err(ApiError::quota_exceeded(
                &duration_text(left),
                true,
                model,
                limit,
            ));
        }
        if let Some(limit) = self.per_minute.filter(|l| used.minute.len() >= *l as usize) {
            // The call that would pass first is the one when the oldest leaves the window.
            let oldest = used.minute[used.minute.len() - limit as usize];
            let left = (oldest + MINUTE).saturating_duration_since(now);
            self.refused.push(now);
            return Err(ApiError::quota_exceeded(
                &duration_text(left),
                false,
                model,
                limit,
            ));
        }
        used.minute.push_back(now);
        if let Some((_, n)) = used.day.as_mut() {
            *n += 1;
        }
        Ok(())
    }
}

/// Google's duration string: seconds with up to nine decimals, trailing zeros dropped
/// ("37s", "37.5s", "45.837906927s").
pub(crate) fn duration_text(d: Duration) -> String {
    let text = format!("{}.{:09}", d.as_secs(), d.subsec_nanos());
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_googles() {
        assert_eq!(duration_text(Duration::from_secs(37)), "37s");
        assert_eq!(duration_text(Duration::from_millis(37_500)), "37.5s");
        assert_eq!(
            duration_text(Duration::new(45, 837_906_927)),
            "45.837906927s"
        );
        assert_eq!(duration_text(Duration::ZERO), "0s");
    }

    #[test]
    fn a_minute_quota_slides_and_is_per_key_and_model() {
        let mut quotas = Quotas {
            per_minute: Some(2),
            ..Default::default()
        };
        let start = Instant::now();
        assert!(quotas.take("k", "m", start).is_ok());
        assert!(quotas
            .take("k", "m", start + Duration::from_secs(20))
            .is_ok());
        let refused = quotas
            .take("k", "m", start + Duration::from_secs(30))
            .unwrap_err();
        let body = refused.body();
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
        let details = body["error"]["details"].as_array().unwrap();
        let retry = details
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.RetryInfo")
            .unwrap();
        assert_eq!(retry["retryDelay"], "30s");
        let failure = details
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.QuotaFailure")
            .unwrap();
        assert_eq!(failure["violations"][0]["quotaValue"], "2");
        // Other keys and models have their own; the refused call did not count.
        assert!(quotas
            .take("k2", "m", start + Duration::from_secs(30))
            .is_ok());
        assert!(quotas
            .take("k", "m2", start + Duration::from_secs(30))
            .is_ok());
        assert!(quotas
            .take("k", "m", start + Duration::from_secs(60))
            .is_ok());
        assert_eq!(quotas.refused.len(), 1);
    }

    #[test]
    fn a_day_quota_says_per_day() {
        let mut quotas = Quotas {
            per_day: Some(1),
            ..Default::default()
        };
        let now = Instant::now();
        assert!(quotas.take("k", "m", now).is_ok());
        let body = quotas.take("k", "m", now).unwrap_err().body();
        assert!(body
            .to_string()
            .contains("GenerateRequestsPerDayPerProjectPerModel"));
    }
}
