//! Progress of one analysis, reported by the pipeline and the provider and shown by each door
//! its own way: MCP progress notifications, a terminal progress bar, the UI.

/// A step of an analysis.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Waiting for a free upstream slot (the concurrency limit).
    Queued,
    /// Waiting for a turn under the provider's per-minute quota: `ahead` calls go first, the
    /// turn comes in about `wait`.
    QuotaQueued {
        ahead: usize,
        wait: std::time::Duration,
    },
    /// Bytes of the media sent so far.
    Uploading { sent: u64, total: u64 },
    /// The provider is still processing the uploaded video.
    Processing { polls: u32 },
    /// The model is writing its answer.
    Generating,
}

impl Progress {
    pub fn message(&self) -> String {
        match self {
            Progress::Queued => "waiting for a free slot (concurrency limit)".to_string(),
            Progress::QuotaQueued { ahead, wait } => format!(
                "queued: {ahead} ahead, about {} s (the provider's per-minute quota)",
                wait.as_secs_f64().ceil()
            ),
            Progress::Uploading { sent, total } => format!(
                "uploading {:.1} of {:.1} MB",
                *sent as f64 / 1e6,
                *total as f64 / 1e6
            ),
            Progress::Processing { polls } => {
                format!("waiting for the provider to process the video (check {polls})")
            }
            Progress::Generating => "the model is describing the media".to_string(),
        }
    }
}

/// Receives progress; implementations must be cheap and must not block.
pub trait ProgressSink: Send + Sync {
    fn report(&self, progress: Progress);
}

/// For callers that do not show progress.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn report(&self, _: Progress) {}
}

impl<F: Fn(Progress) + Send + Sync> ProgressSink for F {
    fn report(&self, progress: Progress) {
        self(progress)
    }
}
