//! Holds every request a tab makes to its [`UrlPolicy`], inside the browser: Fetch
//! interception pauses each request (navigations, redirect hops, link clicks, scripts, images,
//! fetches) before it leaves Chromium, and only what the policy allows goes on; the rest fails
//! with `ERR_BLOCKED_BY_CLIENT`, so no byte of a refused address reaches the page. What was
//! refused is kept for the step to report. What the tab brings up in other targets (popups,
//! cross-site frames in their own process, workers) is held to the same policy by `warden`.

use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use crate::url_policy::{Refusal, UrlPolicy};
use crate::{cdp, BrowserError};

/// The most refusals a tab keeps (a page retrying in a loop must not fill memory).
const MAX_KEPT: usize = 100;

/// One request the policy refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub refusal: Refusal,
    /// The tab's own page was to be replaced (a navigation, a redirect, a link), rather than a
    /// part of it (an image, a script, a frame) left out.
    pub navigation: bool,
}

/// The refusals of one tab, shared with its guard.
pub(crate) type Refused = Arc<Mutex<Vec<Blocked>>>;

/// Starts guarding `page`: from now on every request waits for the policy's verdict.
pub(crate) async fn guard(
    page: &Page,
    policy: Arc<UrlPolicy>,
) -> Result<(JoinHandle<()>, Refused), BrowserError> {
    let mut paused = page
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(cdp("guarding the tab"))?;
    let main_frame = page.mainframe().await.map_err(cdp("guarding the tab"))?;
    let every_request = RequestPattern::builder()
        .url_pattern("*")
        .request_stage(RequestStage::Request)
        .build();
    page.execute(EnableParams::builder().pattern(every_request).build())
        .await
        .map_err(cdp("guarding the tab"))?;
    let refused: Refused = Arc::default();
    let (page, kept) = (page.clone(), refused.clone());
    let task = tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let navigation = event.resource_type == ResourceType::Document
                && main_frame
                    .as_ref()
                    .is_none_or(|main| *main == event.frame_id);
            // Each request is answered in its own task: a name being resolved holds up no other.
            let (page, policy, kept) = (page.clone(), policy.clone(), kept.clone());
            tokio::spawn(async move { answer(&page, &policy, &kept, &event, navigation).await });
        }
    });
    Ok((task, refused))
}

/// Lets the paused request go on, or fails it and keeps the refusal.
async fn answer(
    page: &Page,
    policy: &UrlPolicy,
    kept: &Refused,
    event: &EventRequestPaused,
    navigation: bool,
) {
    let document = event.resource_type == ResourceType::Document;
    let answered = match verdict(policy, &event.request.url, navigation, document).await {
        Ok(()) => page
            .execute(ContinueRequestParams::new(event.request_id.clone()))
            .await
            .map(drop),
        Err(refusal) => {
            tracing::info!(%refusal, "the browser's request was refused");
            keep(
                kept,
                Blocked {
                    refusal,
                    navigation,
                },
            );
            let fail =
                FailRequestParams::new(event.request_id.clone(), ErrorReason::BlockedByClient);
            page.execute(fail).await.map(drop)
        }
    };
    if let Err(error) = answered {
        tracing::debug!(%error, "answering a paused request");
    }
}

/// Keeps a refusal for the step to report, up to [`MAX_KEPT`].
pub(crate) fn keep(refused: &Refused, blocked: Blocked) {
    if let Ok(mut kept) = refused.lock() {
        if kept.len() < MAX_KEPT {
            kept.push(blocked);
        }
    }
}

/// The policy's verdict on a request: a `navigation` of the page itself, else a part of it
/// (a `document` part is a frame); `data:` and `blob:` parts never reach the network.
pub(crate) async fn verdict(
    policy: &UrlPolicy,
    url: &str,
    navigation: bool,
    document: bool,
) -> Result<(), Refusal> {
    if navigation {
        return policy.check_resolved(url).await;
    }
    let local = url.starts_with("data:") || url.starts_with("blob:");
    if local && !document {
        return Ok(());
    }
    policy.check_part_resolved(url).await
}
