//! What a client hears while a tool call runs: MCP progress notifications of the pipeline's
//! upload, processing and generation steps when the request carries a progress token, and the
//! same steps as `info` log messages when the client asked for logs at that level (a 2025
//! session's `logging/setLevel`, or a 2026-07-28 request's own `_meta` log level; without
//! either, no log message is sent). Both go on the request's own stream.
// Logging is deprecated by 2026-07-28 (SEP-2577), yet 2025 clients still set a level.
#![allow(deprecated)]

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::json;
use vaider_core::progress::{Progress, ProgressSink};

/// The logger name log messages carry.
const LOGGER: &str = "vaider";

/// Turns pipeline progress into MCP notifications. The pipeline reports from sync code, so
/// reports go through a channel to a task that sends them; the progress value only grows, as
/// the spec requires: bytes during the upload, then one step per later stage.
pub(super) struct McpProgress {
    sender: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
}

impl McpProgress {
    /// `session_level` is the level a 2025 session set; a 2026-07-28 request's own wins.
    pub(super) fn start(
        ctx: &RequestContext<RoleServer>,
        session_level: Option<LoggingLevel>,
    ) -> McpProgress {
        let token = ctx.meta.get_progress_token();
        let logs = ctx
            .meta
            .log_level()
            .or(session_level)
            .is_some_and(|level| severity(level) <= severity(LoggingLevel::Info));
        if token.is_none() && !logs {
            return McpProgress { sender: None };
        }
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        tokio::spawn(forward(ctx.peer.clone(), receiver, token, logs));
        McpProgress {
            sender: Some(sender),
        }
    }
}

/// Sends each step the pipeline reports as a log message (when asked for) and a progress
/// notification (when there is a token), until the call ends or the client is gone.
async fn forward(
    peer: Peer<RoleServer>,
    mut receiver: tokio::sync::mpsc::UnboundedReceiver<Progress>,
    token: Option<ProgressToken>,
    logs: bool,
) {
    let mut values = ProgressValues::default();
    while let Some(step) = receiver.recv().await {
        if logs {
            let mut param =
                LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(step.message()));
            param.logger = Some(LOGGER.into());
            if peer.notify_logging_message(param).await.is_err() {
                break;
            }
        }
        let Some(token) = &token else { continue };
        let Some((value, total)) = values.next(&step) else {
            continue;
        };
        let mut param =
            ProgressNotificationParam::new(token.clone(), value).with_message(step.message());
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if peer.notify_progress(param).await.is_err() {
            break;
        }
    }
}

/// The progress values sent so far: each new one is higher, or it is not sent.
#[derive(Default)]
struct ProgressValues {
    last: Option<f64>,
    upload_total: f64,
}

impl ProgressValues {
    /// The value (and total, during the upload) of a step; none when it would not grow.
    fn next(&mut self, step: &Progress) -> Option<(f64, Option<f64>)> {
        let floor = self.last.unwrap_or(0.0);
        let (value, total) = match step {
            Progress::Queued => (floor, None),
            // A little higher each time, so each update of the place in line is sent.
            Progress::QuotaQueued { .. } => (floor + 0.001, None),
            Progress::Uploading { sent, total } => {
                self.upload_total = *total as f64;
                (*sent as f64, Some(*total as f64))
            }
            Progress::Processing { .. } | Progress::Generating => {
                (floor.max(self.upload_total) + 1.0, None)
            }
        };
        if self.last.is_some_and(|l| value <= l) {
            return None;
        }
        self.last = Some(value);
        Some((value, total))
    }
}

impl ProgressSink for McpProgress {
    fn report(&self, progress: Progress) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(progress);
        }
    }
}

/// RFC 5424's order: debug is the least severe.
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
