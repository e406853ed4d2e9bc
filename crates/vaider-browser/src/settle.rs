//! Waiting until a page is still before its shot, as visual-testing tools do: loaded, fonts
//! and images ready, the network quiet, animations, transitions and the caret stopped, focus
//! taken away. Without this two shots of the same page differ by a frame of an animation or a
//! blink of the caret, and every comparison reports a change that is not one.

use std::collections::HashSet;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, RequestId,
};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::BrowserError;

/// The network is quiet when no request started or ended for this long and none is in flight.
const NETWORK_QUIET: Duration = Duration::from_millis(500);

/// A page that keeps polling is shot anyway after this long: it will never be quiet.
const NETWORK_QUIET_LIMIT: Duration = Duration::from_secs(5);

/// How long fonts and images may take once the page has loaded.
const ASSETS_LIMIT_MS: u32 = 5_000;

/// Stops every CSS animation and transition and makes the caret invisible.
const STILL_STYLE: &str = "*,*::before,*::after{animation:none!important;\
transition:none!important;caret-color:transparent!important}";

/// The page's requests as they start and end, watched from before the navigation.
pub(crate) struct NetworkWatch {
    started: EventStream<EventRequestWillBeSent>,
    finished: EventStream<EventLoadingFinished>,
    failed: EventStream<EventLoadingFailed>,
}

impl NetworkWatch {
    pub(crate) async fn start(page: &Page) -> Result<NetworkWatch, BrowserError> {
        let listen = |source| BrowserError::Cdp {
            doing: "listening to the page's network",
            source,
        };
        Ok(NetworkWatch {
            started: page.event_listener().await.map_err(listen)?,
            finished: page.event_listener().await.map_err(listen)?,
            failed: page.event_listener().await.map_err(listen)?,
        })
    }

    /// Waits until the network is quiet; returns false when the limit came first.
    async fn quiet(mut self, quiet: Duration, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut in_flight: HashSet<RequestId> = HashSet::new();
        loop {
            tokio::select! {
                Some(event) = self.started.next() => {
                    in_flight.insert(event.request_id.clone());
                }
                Some(event) = self.finished.next() => {
                    in_flight.remove(&event.request_id);
                }
                Some(event) = self.failed.next() => {
                    in_flight.remove(&event.request_id);
                }
                // Restarted by every event above: "quiet" means nothing happened for this long.
                _ = tokio::time::sleep(quiet), if in_flight.is_empty() => return true,
                _ = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }
}

/// Brings the loaded page to rest, ready for a shot.
pub(crate) async fn settle(page: &Page, network: NetworkWatch) -> Result<(), BrowserError> {
    run(page, "waiting for the page to load", WAIT_FOR_LOAD).await?;
    if !network.quiet(NETWORK_QUIET, NETWORK_QUIET_LIMIT).await {
        tracing::warn!(
            limit_s = NETWORK_QUIET_LIMIT.as_secs(),
            "the page's network never went quiet; taking the shot anyway"
        );
    }
    let assets = WAIT_FOR_ASSETS.replace("LIMIT_MS", &ASSETS_LIMIT_MS.to_string());
    run(page, "waiting for fonts and images", &assets).await?;
    let still = HOLD_STILL.replace("STILL_STYLE", STILL_STYLE);
    run(page, "stopping animations", &still).await?;
    Ok(())
}

async fn run(page: &Page, doing: &'static str, script: &str) -> Result<(), BrowserError> {
    // Always an expression: the scripts are promises, never functions to call.
    page.evaluate_expression(script)
        .await
        .map_err(|source| BrowserError::Cdp { doing, source })?;
    Ok(())
}

/// `goto` returns on the load event of the main frame; a page replaced by script may not be
/// complete yet.
const WAIT_FOR_LOAD: &str = "new Promise(done => {
  if (document.readyState === 'complete') return done(true);
  window.addEventListener('load', () => done(true), { once: true });
})";

/// Fonts and images, bounded: a broken image must not hold the shot forever.
const WAIT_FOR_ASSETS: &str = "Promise.race([
  new Promise(done => setTimeout(() => done(false), LIMIT_MS)),
  (async () => {
    await document.fonts.ready;
    await Promise.all(Array.from(document.images).map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
    await Promise.all(Array.from(document.images).map(img => img.decode ? img.decode().catch(() => null) : null));
    return true;
  })(),
])";

/// Stops what moves, then waits two frames so the stopped state is what gets painted.
const HOLD_STILL: &str = "(async () => {
  const style = document.createElement('style');
  style.setAttribute('data-vaider', 'still');
  style.textContent = 'STILL_STYLE';
  (document.head || document.documentElement).appendChild(style);
  for (const animation of document.getAnimations()) {
    try { animation.cancel(); } catch (_) {}
  }
  if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  window.getSelection && window.getSelection().removeAllRanges();
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  return true;
})()";
