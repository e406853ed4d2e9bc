//! A video's plan worked out on its own task while the video uploads: the scan for screen
//! changes then adds nothing before the upload starts, and the provider takes the plan once
//! the file is ready. The scan tells what it foresees after each sample ([`ScanProgress`]);
//! once the upload is done, the answer waits for it only as long as what it is expected to
//! save is worth ([`wait_after_upload`]), and not at all when it has found that the whole
//! video goes: then it has stopped, and its answer is ready at once.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, Shared};
use futures_util::FutureExt;
use tokio::sync::watch;

use super::Plan;
use crate::provider::{MediaPart, VideoClips};

/// What goes to the model in place of the whole video: worked out while the video uploads,
/// so that the scan adds nothing before the upload starts.
#[derive(Debug, Default)]
pub struct Sending {
    /// None when no plan was made (the scan failed, or found early that the whole video goes).
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

/// What the scan has told so far: what the wait after the upload is decided on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanProgress {
    /// Seconds of the video scanned.
    pub seen: f64,
    /// Samples read, of which `changes` were lasting changes (the first frame not counted)
    /// and `flickering` flickered: for the reason given.
    pub samples: u64,
    pub changes: u64,
    pub flickering: u64,
    /// Tokens the plan is expected to save (see `outlook::Outlook`); None while the video's
    /// length is unknown.
    pub expected_saving: Option<u64>,
    /// Tokens of one frame of Gemini's default sampling, for the model called.
    pub frame_tokens: u64,
    /// Seconds of the video still to scan; None while its length is unknown.
    pub video_left: Option<f64>,
    /// Seconds of video scanned a second since the first sample (the start of ffmpeg not
    /// counted); None until a second sample.
    pub pace: Option<f64>,
    /// When it was told.
    pub at: Instant,
}

impl ScanProgress {
    /// What the scan has seen so far, in words.
    fn so_far(&self) -> String {
        super::outlook::seen_so_far(self.seen, self.samples, self.changes, self.flickering)
    }

    /// How long the scan still needs at its pace, from `now`; None when that is unknown.
    pub fn time_left(&self, now: Instant) -> Option<Duration> {
        let pace = self.pace.filter(|p| *p > 0.0)?;
        let from_then = Duration::try_from_secs_f64(self.video_left? / pace).ok()?;
        Some(from_then.saturating_sub(now.saturating_duration_since(self.at)))
    }
}

/// The scan's side of a [`PlannedVideo`]: where it tells its progress.
#[derive(Clone)]
pub struct Scanning(Arc<watch::Sender<Option<ScanProgress>>>);

impl Scanning {
    pub fn tell(&self, progress: ScanProgress) {
        self.0.send_replace(Some(progress));
    }

    /// One that no answer waits on, and what it was last told.
    pub fn unwatched() -> (Scanning, watch::Receiver<Option<ScanProgress>>) {
        let (tell, told) = watch::channel(None);
        (Scanning(Arc::new(tell)), told)
    }
}

/// A video's [`Sending`], being worked out on its own task. Clones share the one answer; when
/// the last clone is dropped (the call ended), or the answer is given up, the work stops and
/// ffmpeg with it.
#[derive(Clone)]
pub struct PlannedVideo {
    answer: Shared<BoxFuture<'static, Arc<Sending>>>,
    progress: watch::Receiver<Option<ScanProgress>>,
    /// Whether the provider sent what the plan chose.
    used: Arc<AtomicBool>,
    /// Why the provider sent the whole video without waiting for the plan, if it did.
    given_up: Arc<Mutex<Option<String>>>,
    abort: tokio::task::AbortHandle,
}

impl std::fmt::Debug for PlannedVideo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlannedVideo")
    }
}

impl PlannedVideo {
    /// Starts the work now, whether or not anyone awaits it yet; it tells its progress
    /// through the [`Scanning`] it is given.
    pub fn start<W, F>(work: W) -> PlannedVideo
    where
        W: FnOnce(Scanning) -> F,
        F: Future<Output = Sending> + Send + 'static,
    {
        let (tell, progress) = watch::channel(None);
        let task = tokio::spawn(work(Scanning(Arc::new(tell))));
        let abort = task.abort_handle();
        let task = AbortOnDrop(task);
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
            progress,
            used: Default::default(),
            given_up: Default::default(),
            abort,
        }
    }

    /// The answer, once the upload is done: at once if it is ready, else after waiting as
    /// [`wait_after_upload`] says, and never past `latest`. None means the whole video goes
    /// instead (the work is stopped; [`PlannedVideo::given_up`] says why).
    pub async fn resolve_after_upload(&self, latest: Instant) -> Option<Arc<Sending>> {
        let done = Instant::now();
        let mut progress = self.progress.clone();
        let mut telling = true;
        loop {
            let now = Instant::now();
            let last = *progress.borrow_and_update();
            let by = match wait_after_upload(last.as_ref(), now - done, now) {
                Wait::GiveUp(why) => return self.give_up(why),
                Wait::Until(worth) => latest.min(done + worth),
                Wait::ForTheScan => latest,
            };
            tokio::select! {
                biased;
                sending = self.answer.clone() => {
                    self.used.store(true, Ordering::SeqCst);
                    return Some(sending);
                }
                told = progress.changed(), if telling => telling = told.is_ok(),
                _ = tokio::time::sleep_until(by.into()) => {
                    if by >= latest {
                        return self.give_up(
                            "the scan for screen changes was not done in time (within half the \
                             call's time left), so the whole video was sent"
                                .into(),
                        );
                    }
                }
            }
        }
    }

    fn give_up(&self, why: String) -> Option<Arc<Sending>> {
        if let Ok(mut given_up) = self.given_up.lock() {
            *given_up = Some(why);
        }
        self.abort.abort();
        None
    }

    /// What the provider sent, if it used the plan (it has answered by then).
    pub fn sent(&self) -> Option<Arc<Sending>> {
        if !self.used.load(Ordering::SeqCst) {
            return None;
        }
        self.answer.clone().now_or_never()
    }

    /// Why the whole video went without the plan, when the provider gave it up.
    pub fn given_up(&self) -> Option<String> {
        self.given_up.lock().ok()?.clone()
    }
}

/// The exchange rate of the wait after the upload: seconds of waiting that one frame the plan
/// is expected to leave out of Gemini's one-frame-a-second sampling is worth (70 tokens on
/// Gemini 3, 258 on 2.x: the same wait whatever the family). A stated rate, not a
/// measurement. At one second a frame, a scan is worth finishing when it runs faster than
/// real time over what it saves: ten minutes of a mostly still screen are worth minutes (the
/// call's time left bounds it), where their scan takes 10 to 25 s; a screen that never stands
/// still is worth nothing.
pub const SECONDS_A_FRAME: f64 = 1.0;

/// What the answer does, once the upload is done, while the scan runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Wait {
    /// Nothing to weigh yet: no sample read (ffmpeg is starting), or a video of unknown
    /// length (a WebM written live, mostly small). Wait for the scan, up to the deadline.
    ForTheScan,
    /// Wait for the scan until this long after the upload.
    Until(Duration),
    /// Send the whole video now, for this reason.
    GiveUp(String),
}

/// The wait after the upload, `waited` into it: what the scan is expected to save, at
/// [`SECONDS_A_FRAME`] for each frame saved, from the end of the upload; and none at all when the scan, at its
/// pace, cannot end within that.
pub fn wait_after_upload(progress: Option<&ScanProgress>, waited: Duration, now: Instant) -> Wait {
    let Some(saving) = progress.and_then(|p| p.expected_saving) else {
        return Wait::ForTheScan;
    };
    let Some(progress) = progress else {
        return Wait::ForTheScan;
    };
    if saving == 0 {
        return Wait::GiveUp(format!(
            "{}: as clips or keyframes the video could not be expected to cost fewer tokens, so \
             the whole video was sent at Gemini's uniform sampling without waiting for the rest \
             of the scan",
            progress.so_far()
        ));
    }
    let frames = saving as f64 / progress.frame_tokens.max(1) as f64;
    let worth = Duration::from_secs_f64(frames * SECONDS_A_FRAME);
    let over = |needed: Duration| {
        Wait::GiveUp(format!(
            "{}: the scan for screen changes was expected to save {saving} tokens, worth {:.1} s \
             of waiting (a second for each frame of {} tokens), and needed {:.1} s, so the \
             whole video was sent at Gemini's uniform sampling",
            progress.so_far(),
            worth.as_secs_f64(),
            progress.frame_tokens,
            needed.as_secs_f64()
        ))
    };
    let needed = waited + progress.time_left(now).unwrap_or_default();
    if waited >= worth || needed > worth {
        return over(needed.max(waited));
    }
    Wait::Until(worth)
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

    fn told(saving: u64, video_left: f64, pace: f64, at: Instant) -> ScanProgress {
        ScanProgress {
            seen: 10.0,
            samples: 40,
            changes: 39,
            flickering: 0,
            expected_saving: Some(saving),
            frame_tokens: 1_000,
            video_left: Some(video_left),
            pace: Some(pace),
            at,
        }
    }

    #[test]
    fn the_wait_is_what_the_expected_saving_is_worth() {
        let now = Instant::now();
        let zero = Duration::ZERO;
        assert_eq!(wait_after_upload(None, zero, now), Wait::ForTheScan);
        // 5,000 tokens are worth 5 s; 100 s of video left at 200 s a second take 0.5 s.
        let fast = told(5_000, 100.0, 200.0, now);
        assert_eq!(
            wait_after_upload(Some(&fast), zero, now),
            Wait::Until(Duration::from_secs(5))
        );
        // On Gemini 3 a frame is 70 tokens: 700 tokens are 10 frames, worth 10 s.
        let gemini_3 = ScanProgress {
            frame_tokens: 70,
            expected_saving: Some(700),
            ..fast
        };
        assert_eq!(
            wait_after_upload(Some(&gemini_3), zero, now),
            Wait::Until(Duration::from_secs(10))
        );
        // Worth 5 s but needs 10: not worth starting.
        let slow = told(5_000, 100.0, 10.0, now);
        assert!(matches!(
            wait_after_upload(Some(&slow), zero, now),
            Wait::GiveUp(why) if why.contains("5000 tokens") && why.contains("needed 10.0 s")
        ));
        // Nothing to save: no wait at all, however fast the scan.
        let never_still = told(0, 1.0, 1000.0, now);
        assert!(matches!(
            wait_after_upload(Some(&never_still), zero, now),
            Wait::GiveUp(why) if why.contains("unsure") && why.contains("39 of its 40 samples")
        ));
        // The wait is over once its worth has passed.
        let five = Duration::from_secs(5);
        assert!(matches!(
            wait_after_upload(Some(&fast), five, now),
            Wait::GiveUp(_)
        ));
    }

    #[test]
    fn the_time_the_scan_needs_counts_from_when_it_told_its_pace() {
        let then = Instant::now();
        let now = then + Duration::from_secs(3);
        // 40 s of video left at 10 s a second: 4 s from then, 1 s from now.
        let progress = told(5_000, 40.0, 10.0, then);
        assert_eq!(progress.time_left(now), Some(Duration::from_secs(1)));
        // 1 s waited and 1 s more needed: within the 5 s the saving is worth.
        let waited = Duration::from_secs(1);
        assert_eq!(
            wait_after_upload(Some(&progress), waited, now),
            Wait::Until(Duration::from_secs(5))
        );
        // Without a pace (one sample read) or a length, only the worth bounds the wait.
        let unknown = ScanProgress {
            pace: None,
            ..progress
        };
        assert_eq!(unknown.time_left(now), None);
        assert_eq!(
            wait_after_upload(Some(&unknown), waited, now),
            Wait::Until(Duration::from_secs(5))
        );
    }

    #[tokio::test]
    async fn a_scan_that_can_save_nothing_is_given_up_and_stopped_and_a_done_one_is_used() {
        let (stopped, gone) = tokio::sync::oneshot::channel::<()>();
        let never = PlannedVideo::start(|scanning| async move {
            scanning.tell(told(0, 100.0, 1.0, Instant::now()));
            // Dropped when the task is stopped.
            let _stopped = stopped;
            std::future::pending().await
        });
        // Wait until it has told its progress.
        let mut progress = never.progress.clone();
        progress.wait_for(Option::is_some).await.unwrap();
        // The deadline is an hour away: only the rule can end this.
        let latest = Instant::now() + Duration::from_secs(3600);
        assert!(never.resolve_after_upload(latest).await.is_none());
        assert!(never.sent().is_none(), "nothing of the plan was sent");
        let why = never.given_up().unwrap();
        assert!(why.contains("could not be expected to cost fewer"), "{why}");
        assert!(gone.await.is_err(), "the scan was stopped");

        let done = PlannedVideo::start(|_| async { Sending::whole("test".into()) });
        let used = done.resolve_after_upload(latest).await;
        assert_eq!(used.map(|s| s.reason.clone()).as_deref(), Some("test"));
        assert!(done.sent().is_some());
        assert!(done.given_up().is_none());
    }
}
