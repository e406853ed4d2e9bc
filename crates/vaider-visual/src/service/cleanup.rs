//! `visual_cleanup`: which phases go, and their removal from the store.

use std::path::Path;

use super::CompareError;
use crate::store::Store;

/// `visual_cleanup`: what is removed.
pub use crate::store::Removal;

impl Removal {
    /// The cleanup's arguments as a removal: a phase number (0: none) wins; otherwise all but
    /// the newest `keep_last` (0: the default, 3).
    pub fn of(phase_to_remove: u32, keep_last: u32) -> Removal {
        match (phase_to_remove, keep_last) {
            (0, 0) => Removal::AllButLast(3),
            (0, n) => Removal::AllButLast(n as usize),
            (phase, _) => Removal::Phase(phase),
        }
    }
}

/// `visual_cleanup`: removes phases from the project's store, off the async threads; returns
/// what was removed.
pub async fn remove_screenshots(
    project: &Path,
    which: Removal,
) -> Result<Vec<crate::store::Screenshot>, CompareError> {
    let store = Store::in_project(project);
    tokio::task::spawn_blocking(move || store.remove(which))
        .await
        .map_err(|e| CompareError(format!("the cleanup stopped: {e}")))?
        .map_err(|e| CompareError(e.to_string()))
}
