//! Bounded parsing of the numbers a provider sends: Google's duration strings (RetryInfo's
//! `retryDelay`, a video's `videoDuration`), the `Retry-After` header of OpenAI, Anthropic and
//! Bedrock, and QuotaFailure's `quotaValue`. They come from the network, so none may panic or
//! overflow: garbage is None (the caller falls back to its own rule), and values past a bound
//! are clamped to it, so the caller can tell "too long" by comparing with the bound.

use std::time::{Duration, SystemTime};

/// The longest wait Vaider takes from a provider's retry hint (RetryInfo or Retry-After). A
/// per-minute quota never asks for more; a longer hint is clamped here, and the caller
/// reports it instead of waiting.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(10 * 60);

/// The longest media duration believed (about 31 years); anything longer is clamped.
pub const MAX_MEDIA_DURATION: Duration = Duration::from_secs(1_000_000_000);

/// The largest per-minute quota believed; a larger `quotaValue` is clamped.
pub const MAX_QUOTA_VALUE: u32 = 10_000_000;

/// Seconds as a Duration, clamped to `[0, max]`; None for NaN or a negative value.
pub fn seconds(value: f64, max: Duration) -> Option<Duration> {
    if value.is_nan() || value < 0.0 {
        return None;
    }
    if value >= max.as_secs_f64() {
        return Some(max);
    }
    Duration::try_from_secs_f64(value).ok().map(|d| d.min(max))
}

/// Google's duration strings ("37s", "45.837906927s", "1e3s"), clamped to `max`. None for
/// garbage, a missing `s`, NaN or a negative value.
pub fn google_duration(text: &str, max: Duration) -> Option<Duration> {
    let number = text.trim().strip_suffix('s')?;
    // Rust's float parser also takes "inf" and "nan"; Google never sends them.
    if !number
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    seconds(number.parse().ok()?, max)
}

/// A `Retry-After` value: delay-seconds (integer, or a decimal as some servers send) or an
/// HTTP date, measured from `now`; clamped to `max`. A date in the past is zero. None for
/// garbage.
pub fn retry_after_value(value: &str, now: SystemTime, max: Duration) -> Option<Duration> {
    let value = value.trim();
    if value
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return seconds(value.parse().ok()?, max);
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let date = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(u64::try_from(date.timestamp()).ok()?))?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO).min(max))
}

/// QuotaFailure's `quotaValue` ("20"; Google sends int64 as a string, a number is taken too),
/// clamped to [`MAX_QUOTA_VALUE`]. None for garbage, zero or a negative value.
pub fn quota_value(value: &serde_json::Value) -> Option<u32> {
    let n: u64 = match value {
        serde_json::Value::String(s) => s.trim().parse().ok()?,
        serde_json::Value::Number(n) => n.as_u64()?,
        _ => return None,
    };
    (n > 0).then(|| n.min(u64::from(MAX_QUOTA_VALUE)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn absurd_values_clamp_or_are_refused() {
        let max = MAX_RETRY_WAIT;
        assert_eq!(google_duration("37s", max), Some(Duration::from_secs(37)));
        assert_eq!(google_duration("1e30s", max), Some(max));
        assert_eq!(google_duration("-5s", max), None);
        assert_eq!(google_duration("infs", max), None);
        assert_eq!(google_duration("NaNs", max), None);
        assert_eq!(google_duration("soon", max), None);
        assert_eq!(google_duration("", max), None);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        assert_eq!(
            retry_after_value("120", now, max),
            Some(Duration::from_secs(120))
        );
        assert_eq!(retry_after_value("1e30", now, max), Some(max));
        assert_eq!(
            retry_after_value("99999999999999999999999", now, max),
            Some(max)
        );
        assert_eq!(retry_after_value("-1", now, max), None);
        assert_eq!(retry_after_value("soon", now, max), None);
        // 07:28:00 GMT is 80 s after `now` (07:26:40).
        assert_eq!(
            retry_after_value("Wed, 21 Oct 2015 07:28:00 GMT", now, max),
            Some(Duration::from_secs(80))
        );
        assert_eq!(
            retry_after_value("Sat, 21 Oct 2000 07:28:00 GMT", now, max),
            Some(Duration::ZERO)
        );
        assert_eq!(quota_value(&serde_json::json!("20")), Some(20));
        assert_eq!(quota_value(&serde_json::json!(20)), Some(20));
        assert_eq!(quota_value(&serde_json::json!("0")), None);
        assert_eq!(quota_value(&serde_json::json!("-3")), None);
        assert_eq!(
            quota_value(&serde_json::json!("99999999999999")),
            Some(MAX_QUOTA_VALUE)
        );
    }

    proptest! {
        // A fixed seed: every run tries the same inputs (see tests/no_panic.rs to search longer).
        #![proptest_config(ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(20),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn google_durations_never_panic_and_stay_in_bounds(text in ".{0,40}") {
            if let Some(d) = google_duration(&text, MAX_RETRY_WAIT) {
                prop_assert!(d <= MAX_RETRY_WAIT);
            }
        }

        #[test]
        fn any_number_of_seconds_is_clamped(value in proptest::num::f64::ANY) {
            let text = format!("{value}s");
            match google_duration(&text, MAX_RETRY_WAIT) {
                Some(d) => prop_assert!(value >= 0.0 && d <= MAX_RETRY_WAIT),
                None => prop_assert!(value.is_nan() || value < 0.0 || value.is_infinite()),
            }
            let text = format!("{value:e}s");
            if let Some(d) = google_duration(&text, MAX_MEDIA_DURATION) {
                prop_assert!(d <= MAX_MEDIA_DURATION);
            }
        }

        #[test]
        fn retry_after_never_panics_and_stays_in_bounds(
            text in "[0-9a-zA-Z ,:.+-]{0,40}",
            now in 0u64..4_000_000_000,
        ) {
            let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
            if let Some(d) = retry_after_value(&text, now, MAX_RETRY_WAIT) {
                prop_assert!(d <= MAX_RETRY_WAIT);
            }
        }

        #[test]
        fn quota_values_are_positive_and_bounded(text in ".{0,30}", n in proptest::num::i64::ANY) {
            for value in [serde_json::json!(text), serde_json::json!(n), serde_json::json!(n.to_string())] {
                if let Some(q) = quota_value(&value) {
                    prop_assert!((1..=MAX_QUOTA_VALUE).contains(&q));
                }
            }
        }
    }
}
