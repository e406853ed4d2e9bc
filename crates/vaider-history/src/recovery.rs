//! Closing the calls a dead process left `running`. A call's row and `request.json` are
//! written before the provider is asked, so a crash or a SIGKILL leaves them behind; at the
//! next start they become `interrupted`, with a `response.json` saying so. Rows of another
//! live Vaider sharing the history (the tray app while `vaider analyse` runs in a terminal)
//! are left alone: only rows whose owner's lease is gone are closed.

use std::path::Path;

use serde_json::json;

use crate::interaction_log::InteractionLog;
use crate::lease::Lease;
use crate::now_rfc3339;
use crate::{History, Outcome};

/// What the history and `response.json` say of a call its process did not live to end.
pub const INTERRUPTED_MESSAGE: &str = "Vaider stopped while this call was running (the process ended before the model answered): nothing was returned to the caller. Run it again.";

/// Closes every `running` row whose owning process is gone. Failures are logged: they must
/// not stop the engine from starting.
pub fn close_abandoned_calls(history: &History, data_dir: &Path, lease: &Lease) {
    let running = match history.running_calls() {
        Ok(running) => running,
        Err(e) => {
            tracing::error!("could not look for interrupted calls: {e}");
            return;
        }
    };
    let mut dead_owners = Vec::new();
    for call in running {
        let owner = call.owner.as_deref();
        if owner == Some(lease.owner()) {
            continue;
        }
        // Rows from before leases existed have no owner: no process can still be running them
        // once a version with leases starts.
        if owner.is_some_and(|o| Lease::is_alive(data_dir, o)) {
            continue;
        }
        close(
            history,
            &call.id,
            call.log_dir.as_deref(),
            INTERRUPTED_MESSAGE,
        );
        if let Some(owner) = owner {
            dead_owners.push(owner.to_string());
        }
    }
    for owner in dead_owners {
        Lease::forget(data_dir, &owner);
    }
}

/// Marks one call interrupted, in the history and in its interaction folder, saying why.
pub fn close(history: &History, id: &str, log_dir: Option<&str>, message: &str) {
    let finished_at = now_rfc3339();
    if let Some(dir) = log_dir.map(Path::new).filter(|d| d.is_dir()) {
        let log = InteractionLog::at(dir);
        if !log.has_response() {
            let response = json!({
                "interactionId": id,
                "finishedAt": finished_at,
                "status": "interrupted",
                "error": {"code": "INTERRUPTED", "message": message},
            });
            if let Err(e) = log.write_response(&response) {
                tracing::error!(interaction_id = %id, "{e}");
            }
        }
    }
    match history.finish(id, &finished_at, Outcome::Interrupted { message }) {
        Ok(()) => tracing::warn!(interaction_id = %id, "call marked interrupted: {message}"),
        Err(e) => tracing::error!(interaction_id = %id, "{e}"),
    }
}
