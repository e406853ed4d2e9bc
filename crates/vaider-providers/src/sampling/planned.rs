//! A video's plan worked out on its own task while the video uploads: the scan for screen
//! changes then adds nothing before the upload starts, and the provider takes the plan once
//! the file is ready (or sends the whole video when the scan is not done soon after the
//! upload, or is too slow for the time left).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, Shared};
use futures_util::FutureExt;

use super::Plan;
use crate::provider::{MediaPart, VideoClips};

/// What goes to the model in place of the whole video: worked out while the video uploads,
/// so that the scan adds nothing before the upload starts.
#[derive(Debug, Default)]
pub struct Sending {
    /// None when no plan was made (the scan failed): the whole video goes.
    pub plan: Option<Plan>,
    pub reason: String,
    /// Told to the model just before the clips or frames.
    pub note: Option<String>,
    /// The clips to send, when the plan chose clips.
    pub clips: Option<VideoClips>,
    /// Timestamped frames (label and image parts), when the plan chose keyframes.
    pub images: Vec<MediaPart>,
    pub frames_sent: Option<u64>,
    pub adaptations: Vec<String>,
}

impl Sending {
    /// The whole video, for a reason.
    pub fn whole(reason: String) -> Sending {
        Sending {
            adaptations: vec![reason.clone()],
            reason,
            ..Sending::default()
        }
    }
}

/// A video's [`Sending`], being worked out on its own task. Clones share the one answer; when
/// the last clone is dropped (the call ended), the work stops and ffmpeg with it.
#[derive(Clone)]
pub struct PlannedVideo {
    answer: Shared<BoxFuture<'static, Arc<Sending>>>,
    /// Whether the provider sent what the plan chose (it gives up on a scan slower than the
    /// time left allows).
    used: Arc<AtomicBool>,
}

impl std::fmt::Debug for PlannedVideo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlannedVideo")
    }
}

impl PlannedVideo {
    /// Starts the work now, whether or not anyone awaits it yet.
    pub fn start(
        work: impl std::future::Future<Output = Sending> + Send + 'static,
    ) -> PlannedVideo {
        let task = AbortOnDrop(tokio::spawn(work));
        let answer = async move {
            let mut task = task;
            match (&mut task.0).await {
                Ok(sending) => Arc::new(sending),
                Err(e) => Arc::new(Sending::whole(format!(
                    "the scan for screen changes stopped ({e}), so the whole video was sent"
                ))),
            }
        };
        PlannedVideo {
            answer: answer.boxed().shared(),
            used: Default::default(),
        }
    }

    /// The answer, if the work is done by `by`; None means the whole video goes instead.
    pub async fn resolve_by(&self, by: Instant) -> Option<Arc<Sending>> {
        let sending = tokio::time::timeout_at(by.into(), self.answer.clone())
            .await
            .ok()?;
        self.used.store(true, Ordering::SeqCst);
        Some(sending)
    }

    /// The answer, if the work is done soon after the upload of `size` bytes that took
    /// `upload` (see [`wait_after_upload`]), and never past `latest`. None means the whole
    /// video goes instead.
    pub async fn resolve_after_upload(
        &self,
        upload: Duration,
        size: u64,
        latest: Instant,
    ) -> Option<Arc<Sending>> {
        let by = match wait_after_upload(upload, size) {
            Some(wait) => latest.min(Instant::now() + wait),
            None => latest,
        };
        self.resolve_by(by).await
    }

    /// What the provider sent, if it used the plan (it has answered by then).
    pub fn sent(&self) -> Option<Arc<Sending>> {
        if !self.used.load(Ordering::SeqCst) {
            return None;
        }
        self.answer.clone().now_or_never()
    }
}

/// The least a call waits for a large video's scan still running when its upload is done.
pub const MIN_WAIT: Duration = Duration::from_secs(1);
/// From this size on, the answer waits for the scan only briefly after the upload. A smaller
/// video uploads in moments while its scan has a fixed cost (ffmpeg's start, the first
/// frames): there the scan is waited for (up to half the time left), as its savings in tokens
/// are worth more than a second.
pub const BOUNDED_WAIT_FROM_BYTES: u64 = 64 << 20;

/// How long a call waits for the scan once an upload of `size` bytes that took `upload` is
/// done: a tenth of the upload's time (so the whole call stays near the upload's own pace),
/// at least [`MIN_WAIT`]; None (no bound but the deadline) for a small video.
pub fn wait_after_upload(upload: Duration, size: u64) -> Option<Duration> {
    (size >= BOUNDED_WAIT_FROM_BYTES).then(|| (upload / 10).max(MIN_WAIT))
}

struct AbortOnDrop(tokio::task::JoinHandle<Sending>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_video_waits_a_tenth_of_its_upload_and_at_least_a_second() {
        let large = BOUNDED_WAIT_FROM_BYTES;
        let wait = |upload| wait_after_upload(upload, large);
        assert_eq!(wait(Duration::from_secs(20)), Some(Duration::from_secs(2)));
        assert_eq!(wait(Duration::from_millis(1500)), Some(MIN_WAIT));
        assert_eq!(wait(Duration::ZERO), Some(MIN_WAIT));
        assert_eq!(wait_after_upload(Duration::ZERO, large - 1), None);
    }

    #[tokio::test]
    async fn a_scan_not_done_soon_after_the_upload_is_given_up_and_a_done_one_is_used() {
        let never = PlannedVideo::start(std::future::pending());
        // The deadline is an hour away: only the wait after the upload can end this.
        let latest = Instant::now() + Duration::from_secs(3600);
        let size = BOUNDED_WAIT_FROM_BYTES;
        let given_up = never
            .resolve_after_upload(Duration::ZERO, size, latest)
            .await;
        assert!(given_up.is_none());
        assert!(never.sent().is_none(), "nothing of the plan was sent");

        let done = PlannedVideo::start(async { Sending::whole("test".into()) });
        let used = done
            .resolve_after_upload(Duration::ZERO, size, latest)
            .await;
        assert_eq!(used.map(|s| s.reason.clone()).as_deref(), Some("test"));
        assert!(done.sent().is_some());
    }
}
