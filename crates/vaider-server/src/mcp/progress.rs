//! MCP progress notifications for a tool call: the pipeline's upload, processing and
//! generation steps, sent when the client's request carries a progress token.

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use vaider_core::progress::{Progress, ProgressSink};

/// Turns pipeline progress into MCP progress notifications. The pipeline reports from sync
/// code, so reports go through a channel to a task that sends them; the progress value only
/// grows, as the spec requires: bytes during the upload, then one step per later stage.
pub(super) struct McpProgress {
    sender: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
}

impl McpProgress {
    pub(super) fn start(ctx: &RequestContext<RoleServer>) -> McpProgress {
        let Some(token) = ctx.meta.get_progress_token() else {
            return McpProgress { sender: None };
        };
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let mut last: Option<f64> = None;
            let mut upload_total = 0.0_f64;
            while let Some(step) = receiver.recv().await {
                let floor = last.unwrap_or(0.0);
                let (value, total) = match &step {
                    Progress::Queued => (floor, None),
                    Progress::Uploading { sent, total } => {
                        upload_total = *total as f64;
                        (*sent as f64, Some(*total as f64))
                    }
                    Progress::Processing { .. } | Progress::Generating => {
                        (floor.max(upload_total) + 1.0, None)
                    }
                };
                if last.is_some_and(|l| value <= l) {
                    continue;
                }
                last = Some(value);
                let mut param = ProgressNotificationParam::new(token.clone(), value)
                    .with_message(step.message());
                if let Some(total) = total {
                    param = param.with_total(total);
                }
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        McpProgress {
            sender: Some(sender),
        }
    }
}

impl ProgressSink for McpProgress {
    fn report(&self, progress: Progress) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(progress);
        }
    }
}
