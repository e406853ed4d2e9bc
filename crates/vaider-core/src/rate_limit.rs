//! At most `max_calls_per_minute` model calls a minute to one provider (config, default 15): a
//! token bucket per provider, besides the 429 backoff. Agents retry and visual comparisons come
//! in bursts; spreading the calls keeps them under a provider's per-minute quota instead of
//! running into it. A call waits its turn (reported as queued), within its own deadline.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::VaiderError;
use crate::progress::{Progress, ProgressSink};

/// One bucket per provider name.
#[derive(Default)]
pub struct RateLimits {
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// A full bucket holds a minute's calls; it refills at that rate.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    /// Takes a token at `now`, or says how long until one is there.
    fn take(&mut self, per_minute: u32, now: Instant) -> Result<(), Duration> {
        let capacity = f64::from(per_minute);
        let per_second = capacity / 60.0;
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_second).min(capacity);
        self.updated = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / per_second))
        }
    }
}

impl RateLimits {
    /// Takes a token from `provider`'s bucket at `now`, or says how long until one is free.
    /// `per_minute` 0 means no limit.
    fn take(&self, provider: &str, per_minute: u32, now: Instant) -> Result<(), Duration> {
        if per_minute == 0 {
            return Ok(());
        }
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        buckets
            .entry(provider.to_string())
            .or_insert(Bucket {
                tokens: f64::from(per_minute),
                updated: now,
            })
            .take(per_minute, now)
    }

    /// Waits for a call's turn to `provider`; an error when the turn would come after the
    /// call's deadline.
    pub async fn acquire(
        &self,
        provider: &str,
        per_minute: u32,
        deadline: Instant,
        progress: &dyn ProgressSink,
    ) -> Result<(), VaiderError> {
        loop {
            let wait = match self.take(provider, per_minute, Instant::now()) {
                Ok(()) => return Ok(()),
                Err(wait) => wait,
            };
            if Instant::now() + wait >= deadline {
                return Err(VaiderError::Upstream {
                    message: format!(
                        "more than {per_minute} calls a minute to {provider} (max_calls_per_minute): the next turn is in {:.0} s, after this call's time limit. Try again shortly, raise timeout_sec, or raise max_calls_per_minute if the provider's quota allows it.",
                        wait.as_secs_f64().ceil()
                    ),
                    response: None,
                });
            }
            progress.report(Progress::Queued);
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minutes_calls_go_at_once_then_one_every_sixtieth() {
        let limits = RateLimits::default();
        let start = Instant::now();
        for _ in 0..15 {
            assert_eq!(limits.take("gemini", 15, start), Ok(()));
        }
        let wait = limits.take("gemini", 15, start).unwrap_err();
        assert!((wait.as_secs_f64() - 4.0).abs() < 0.01, "{wait:?}");
        // Four seconds later one more call may go, and only one.
        let later = start + Duration::from_secs(4);
        assert_eq!(limits.take("gemini", 15, later), Ok(()));
        assert!(limits.take("gemini", 15, later).is_err());
        // Each provider has its own bucket; 0 means no limit.
        assert_eq!(limits.take("openai", 15, start), Ok(()));
        for _ in 0..100 {
            assert_eq!(limits.take("ollama", 0, start), Ok(()));
        }
    }

    #[tokio::test]
    async fn a_call_whose_turn_comes_too_late_is_told_why() {
        let limits = RateLimits::default();
        let deadline = Instant::now() + Duration::from_secs(1);
        limits
            .acquire("gemini", 1, deadline, &crate::progress::NoProgress)
            .await
            .unwrap();
        let err = limits
            .acquire("gemini", 1, deadline, &crate::progress::NoProgress)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("max_calls_per_minute"), "{err}");
    }

    #[tokio::test]
    async fn a_call_waits_for_its_turn_within_its_deadline() {
        let limits = RateLimits::default();
        let deadline = Instant::now() + Duration::from_secs(10);
        // 120 a minute: a token every half second.
        for _ in 0..120 {
            limits
                .acquire("gemini", 120, deadline, &crate::progress::NoProgress)
                .await
                .unwrap();
        }
        let started = Instant::now();
        limits
            .acquire("gemini", 120, deadline, &crate::progress::NoProgress)
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(400),
            "{:?}",
            started.elapsed()
        );
    }
}
