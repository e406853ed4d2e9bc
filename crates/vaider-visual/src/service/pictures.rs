//! The pictures nobody reads before the answer, written on another thread while it goes out,
//! and the wait for them (`pictures_settled`).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::LaterPictures;

/// Pictures being written off the answer's path, in this process.
static PICTURES_PENDING: AtomicUsize = AtomicUsize::new(0);
static PICTURES_SETTLED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Writes the pictures on a blocking thread, not awaited. A failure (a full disk) leaves that
/// picture missing, never half written; the answer has already gone.
pub(super) fn write_later(later: LaterPictures) {
    PICTURES_PENDING.fetch_add(1, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || {
        let _ = later.write();
        PICTURES_PENDING.fetch_sub(1, Ordering::SeqCst);
        PICTURES_SETTLED.notify_waiters();
    });
}

/// Waits until every picture that comparisons in this process left to be written is written
/// (or failed): the CLI calls it before it exits, tests before they look at the files.
pub async fn pictures_settled() {
    loop {
        let settled = PICTURES_SETTLED.notified();
        tokio::pin!(settled);
        // Registered before the check, so a notification in between is not lost.
        settled.as_mut().enable();
        if PICTURES_PENDING.load(Ordering::SeqCst) == 0 {
            return;
        }
        settled.await;
    }
}
