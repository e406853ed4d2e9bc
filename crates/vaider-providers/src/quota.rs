//! The provider's quotas, learned from its answers, so that a burst of calls queues instead of
//! running into 429s. One lane per provider, API key (by a hash, never the key) and model: the
//! per-minute limit a 429's QuotaFailure named (`quotaValue`), the time its RetryInfo said to
//! wait, and when each call of the last minute went. A call takes its turn in FIFO order,
//! reporting its place ("queued: 12 ahead, about 40 s"); a caller that gives up (its future is
//! dropped) leaves the queue. Vaider has no per-minute limit of its own unless the user sets
//! `max_calls_per_minute`, which then caps every lane.
//!
//! Waiting here is not work: [`Deadline`] stops the call's clock while it waits, so the
//! analysis timeout bounds the work only.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use vaider_base::progress::{Progress, ProgressSink};
use vaider_base::secrets::ApiKey;

/// A minute, plus a margin for the time a request takes to reach the provider: the provider
/// counts a call when it arrives, Vaider when it leaves.
const WINDOW: Duration = Duration::from_millis(61_000);

/// How often a waiting call's progress is refreshed.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Every lane of the process, by provider, key and model.
#[derive(Default)]
pub struct Quotas {
    lanes: Mutex<HashMap<(String, String, String), Arc<Lane>>>,
}

impl Quotas {
    /// The meter of one call: its lane, the user's cap (0: none) and the call's clock.
    pub fn meter<'a>(
        &self,
        provider: &str,
        key: Option<&ApiKey>,
        model: &str,
        cap: u32,
        deadline: &'a Deadline,
    ) -> Meter<'a> {
        let id = (provider.to_string(), key_hash(key), model.to_string());
        let lane = lock(&self.lanes).entry(id).or_default().clone();
        Meter {
            lane,
            cap: (cap > 0).then_some(cap),
            deadline,
        }
    }
}

impl Quotas {
    /// Calls waiting for their turn, in every lane.
    pub fn waiting(&self) -> usize {
        lock(&self.lanes)
            .values()
            .map(|lane| lock(&lane.state).queue.len())
            .sum()
    }

    /// The per-minute limits learned so far: (provider, model, calls a minute).
    pub fn learned(&self) -> Vec<(String, String, u32)> {
        lock(&self.lanes)
            .iter()
            .filter_map(|((provider, _, model), lane)| {
                let learned = lock(&lane.state).learned?;
                Some((provider.clone(), model.clone(), learned))
            })
            .collect()
    }
}

/// A short hash that tells keys apart without revealing them.
fn key_hash(key: Option<&ApiKey>) -> String {
    let digest = Sha256::digest(key.map(ApiKey::expose).unwrap_or_default().as_bytes());
    hex::encode(&digest[..8])
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One provider, key and model.
#[derive(Default)]
struct Lane {
    state: Mutex<LaneState>,
    /// Signalled when a call leaves the queue or what was learned changes.
    changed: Notify,
}

#[derive(Default)]
struct LaneState {
    /// The per-minute limit the provider named.
    learned: Option<u32>,
    /// No call before this (the provider's RetryInfo).
    blocked_until: Option<Instant>,
    /// The calls sent in the last [`WINDOW`]: (id, when).
    sent: VecDeque<(u64, Instant)>,
    /// Waiting calls, first in line first.
    queue: VecDeque<u64>,
    next_id: u64,
}

impl LaneState {
    fn limit(&self, cap: Option<u32>) -> Option<usize> {
        let limit = match (self.learned, cap) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(limit.max(1) as usize)
    }

    fn prune(&mut self, now: Instant) {
        while self
            .sent
            .front()
            .is_some_and(|(_, at)| now.saturating_duration_since(*at) >= WINDOW)
        {
            self.sent.pop_front();
        }
    }

    /// When the `k`-th next call (0: the first in line) may go.
    fn turn_of(&self, k: usize, cap: Option<u32>, now: Instant) -> Instant {
        let start = self.blocked_until.map_or(now, |b| b.max(now));
        let Some(limit) = self.limit(cap) else {
            return start;
        };
        let mut times: Vec<Instant> = self.sent.iter().map(|(_, at)| *at).collect();
        let mut turn = start;
        for _ in 0..=k {
            turn = match times.len().checked_sub(limit) {
                Some(i) => (times[i] + WINDOW).max(start),
                None => start,
            };
            times.push(turn);
        }
        turn
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// A call's clock: its deadline, pushed back by the time it spent waiting for its turn.
pub struct Deadline {
    state: Mutex<Clock>,
    resumed: Notify,
}

struct Clock {
    at: Instant,
    /// Waits under way (nested waits stop the clock once).
    waits: u32,
    since: Instant,
}

impl Deadline {
    pub fn new(at: Instant) -> Deadline {
        Deadline {
            state: Mutex::new(Clock {
                at,
                waits: 0,
                since: at,
            }),
            resumed: Notify::new(),
        }
    }

    /// The deadline now, as if the current wait (if any) ended now.
    pub fn at(&self) -> Instant {
        let clock = lock(&self.state);
        if clock.waits > 0 {
            clock.at + clock.since.elapsed()
        } else {
            clock.at
        }
    }

    fn waiting(&self) -> bool {
        lock(&self.state).waits > 0
    }

    /// Stops the clock until the returned guard is dropped.
    pub fn pause(&self) -> Paused<'_> {
        let mut clock = lock(&self.state);
        if clock.waits == 0 {
            clock.since = Instant::now();
        }
        clock.waits += 1;
        Paused(self)
    }

    /// Runs `work` until it ends or the deadline passes (None). The deadline moves while the
    /// work waits for its turn.
    pub async fn run<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::pin!(work);
        loop {
            let resumed = self.resumed.notified();
            tokio::pin!(resumed);
            resumed.as_mut().enable();
            if self.waiting() {
                tokio::select! {
                    out = &mut work => return Some(out),
                    _ = &mut resumed => continue,
                }
            }
            let at = self.at();
            if Instant::now() >= at {
                return None;
            }
            tokio::select! {
                out = &mut work => return Some(out),
                _ = tokio::time::sleep_until(at.into()) => {}
                _ = &mut resumed => {}
            }
        }
    }
}

/// While alive, the call's clock is stopped.
pub struct Paused<'a>(&'a Deadline);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        let mut clock = lock(&self.0.state);
        clock.waits = clock.waits.saturating_sub(1);
        if clock.waits == 0 {
            let waited = clock.since.elapsed();
            clock.at += waited;
        }
        drop(clock);
        self.0.resumed.notify_waiters();
    }
}

/// One call's view of its lane.
pub struct Meter<'a> {
    lane: Arc<Lane>,
    cap: Option<u32>,
    deadline: &'a Deadline,
}

/// A call that was let go: its id in the lane's record of the last minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent(u64);

/// Takes a waiting call out of the queue when it goes, or when its caller gives up.
struct InLine<'a> {
    lane: &'a Lane,
    id: u64,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        lock(&self.lane.state).queue.retain(|id| *id != self.id);
        self.lane.changed.notify_waiters();
    }
}

impl Meter<'_> {
    /// The call's deadline now (later than at the start if it waited).
    pub fn deadline(&self) -> Instant {
        self.deadline.at()
    }

    /// Waits for the call's turn under the lane's quota, reporting its place; the wait does
    /// not count against the call's time limit. Dropping the future leaves the queue.
    pub async fn admit(&self, progress: &dyn ProgressSink) -> Sent {
        let lane = &*self.lane;
        let id = {
            let mut state = lock(&lane.state);
            let now = Instant::now();
            state.prune(now);
            let id = state.new_id();
            if state.queue.is_empty() && state.turn_of(0, self.cap, now) <= now {
                state.sent.push_back((id, now));
                return Sent(id);
            }
            state.queue.push_back(id);
            id
        };
        let _in_line = InLine { lane, id };
        let _paused = self.deadline.pause();
        let mut last_report = None;
        loop {
            let changed = lane.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let (ahead, turn) = {
                let mut state = lock(&lane.state);
                let now = Instant::now();
                state.prune(now);
                let ahead = state.queue.iter().position(|q| *q == id).unwrap_or(0);
                let turn = state.turn_of(ahead, self.cap, now);
                if ahead == 0 && turn <= now {
                    state.queue.pop_front();
                    state.sent.push_back((id, now));
                    return Sent(id);
                }
                (ahead, turn)
            };
            let wait = turn.saturating_duration_since(Instant::now());
            let report = (ahead, wait.as_secs());
            if last_report != Some(report) {
                progress.report(Progress::QuotaQueued { ahead, wait });
                last_report = Some(report);
            }
            let until = if ahead == 0 {
                turn
            } else {
                turn.min(Instant::now() + PROGRESS_EVERY)
            };
            tokio::select! {
                _ = tokio::time::sleep_until(until.into()) => {}
                _ = &mut changed => {}
            }
        }
    }

    /// The provider refused the call `sent` for its quota: it does not count in the last
    /// minute, the lane learns the limit when the provider named it (a guess from one 429
    /// could throttle a large quota for good), and no call goes before `retry` has passed.
    pub fn refused(&self, sent: Sent, limit: Option<u32>, retry: Option<Duration>) {
        let mut state = lock(&self.lane.state);
        state.sent.retain(|(id, _)| *id != sent.0);
        let now = Instant::now();
        state.prune(now);
        if limit.is_some() {
            state.learned = limit;
        }
        if let Some(retry) = retry {
            let until = now + retry;
            state.blocked_until = Some(state.blocked_until.map_or(until, |b| b.max(until)));
        }
        drop(state);
        self.lane.changed.notify_waiters();
    }

    /// The per-minute limit learned for this lane, if any.
    pub fn learned(&self) -> Option<u32> {
        lock(&self.lane.state).learned
    }

    /// Calls waiting in this lane.
    pub fn waiting(&self) -> usize {
        lock(&self.lane.state).queue.len()
    }
}

/// Runs `work` with `deadline`'s clock stopped (a wait for a free slot, not work).
pub async fn not_counted<F: Future>(deadline: &Deadline, work: F) -> F::Output {
    let _paused = deadline.pause();
    work.await
}

#[cfg(test)]
mod tests {
    use super::*;
    use vaider_base::progress::NoProgress;

    fn meter<'a>(quotas: &Quotas, cap: u32, deadline: &'a Deadline) -> Meter<'a> {
        quotas.meter("gemini", Some(&ApiKey::new("k")), "m", cap, deadline)
    }

    #[tokio::test]
    async fn without_a_limit_every_call_goes_at_once() {
        let quotas = Quotas::default();
        let deadline = Deadline::new(Instant::now() + Duration::from_secs(30));
        let meter = meter(&quotas, 0, &deadline);
        for _ in 0..1000 {
            meter.admit(&NoProgress).await;
        }
        assert_eq!(meter.waiting(), 0);
    }

    #[test]
    fn a_learned_limit_spaces_the_turns_a_window_apart() {
        let mut state = LaneState {
            learned: Some(2),
            ..Default::default()
        };
        let now = Instant::now();
        assert_eq!(state.turn_of(0, None, now), now);
        assert_eq!(state.turn_of(1, None, now), now);
        assert_eq!(state.turn_of(2, None, now), now + WINDOW);
        assert_eq!(state.turn_of(4, None, now), now + WINDOW * 2);
        state.sent.push_back((1, now));
        assert_eq!(state.turn_of(1, None, now), now + WINDOW);
        // The user's cap is lower: it wins.
        assert_eq!(state.turn_of(0, Some(1), now), now + WINDOW);
        state.blocked_until = Some(now + Duration::from_secs(5));
        assert_eq!(state.turn_of(0, None, now), now + Duration::from_secs(5));
    }

    #[test]
    fn keys_are_kept_apart_by_a_hash_that_is_not_the_key() {
        let a = key_hash(Some(&ApiKey::new("AIza-secret-one")));
        let b = key_hash(Some(&ApiKey::new("AIza-secret-two")));
        assert_ne!(a, b);
        assert!(!a.contains("secret"));
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_leaves_the_queue() {
        let quotas = Quotas::default();
        let far = Instant::now() + Duration::from_secs(3600);
        let deadlines: Vec<Deadline> = (0..4).map(|_| Deadline::new(far)).collect();
        let first = meter(&quotas, 0, &deadlines[0]);
        let sent = first.admit(&NoProgress).await;
        // The provider refuses it: 1 a minute, and nothing for an hour.
        first.refused(sent, Some(1), Some(Duration::from_secs(3600)));
        let waiters: Vec<Meter> = deadlines[1..]
            .iter()
            .map(|d| meter(&quotas, 0, d))
            .collect();
        let mut futures: Vec<_> = waiters
            .iter()
            .map(|m| Box::pin(m.admit(&NoProgress)))
            .collect();
        for f in &mut futures {
            assert!(futures_util::poll!(f.as_mut()).is_pending());
        }
        assert_eq!(first.waiting(), 3);
        // The second waiter's caller gives up: it leaves, and the others keep their places.
        drop(futures.remove(1));
        assert_eq!(first.waiting(), 2);
        drop(futures);
        assert_eq!(first.waiting(), 0);
    }

    #[tokio::test]
    async fn waiting_for_a_turn_does_not_count_against_the_time_limit() {
        let quotas = Quotas::default();
        let start = Instant::now();
        let deadline = Deadline::new(start + Duration::from_millis(100));
        let meter = meter(&quotas, 0, &deadline);
        let sent = meter.admit(&NoProgress).await;
        meter.refused(sent, Some(1), Some(Duration::from_millis(600)));
        let reports = Mutex::new(Vec::new());
        let sink = |p: Progress| reports.lock().unwrap().push(p);
        // A wait longer than the call's whole time limit: it is let go, not timed out.
        let outcome = deadline.run(meter.admit(&sink)).await;
        assert!(outcome.is_some());
        assert!(deadline.at() >= start + Duration::from_millis(600));
        let first = reports.lock().unwrap().first().cloned();
        assert!(
            matches!(first, Some(Progress::QuotaQueued { ahead: 0, .. })),
            "{first:?}"
        );
        // Work itself is still bounded by the (moved) deadline.
        let worked = deadline.run(std::future::pending::<()>()).await;
        assert!(worked.is_none());
    }
}
