//! The one place in Vaider that starts and drives a browser over the Chrome DevTools Protocol.
//! It launches the Chromium or Chrome already on the machine, headless with a throwaway
//! profile, and takes page shots whose pixels do not depend on when they were taken. Every
//! page it opens is held to a [`UrlPolicy`] inside the browser (see `guard`), and so is every
//! popup, cross-site frame and worker that page brings up (see `warden`), and every
//! connection the browser makes goes through a proxy that holds it to the same policies
//! (`egress`: WebSockets too). Its DevTools are open to no other local user (`devtools`), and
//! it downloads nothing.

mod boxes;
mod devtools;
mod egress;
mod guard;
mod launch;
mod locate;
mod screencast;
mod secret_field;
mod settle;
mod snapshot;
mod tab;
pub mod url_policy;
mod warden;

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetDeviceMetricsOverrideParams, SetTouchEmulationEnabledParams, SetUserAgentOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::error::CdpError;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::task::JoinHandle;

pub use boxes::{CssBox, Matched, PageShot, MAX_BOXES, MAX_SELECTORS};
pub use guard::Blocked;
pub use locate::{find_chrome, find_chrome_in, CHROME_ENV};
pub use screencast::{RecordError, Recording, Video};
pub use snapshot::{typed_parts, ScrollDirection, Snapshot, Typed};
pub use tab::{StepError, Tab};
pub use url_policy::{Refusal, UrlPolicy};

/// The largest side Chromium can paint into one screenshot.
const MAX_SIDE: u32 = 16_384;

/// How long a page may take to load before the shot is abandoned.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a browser could not be started or a page could not be shot.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "no Chromium or Chrome found (looked at {looked}): install chromium \
         (apt-get install chromium) or set {env} to the browser's path",
        env = CHROME_ENV
    )]
    NoChrome { looked: String },
    #[error(
        "{env} names {path}, which is not a file: point it at a Chromium or Chrome program, \
         or unset it to use the one found on the machine",
        env = CHROME_ENV,
        path = path.display()
    )]
    ChosenChromeMissing { path: PathBuf },
    #[error("could not make a fresh profile folder for the browser: {0}")]
    Profile(#[source] std::io::Error),
    #[error("could not start the browser {path}: {source}", path = path.display())]
    Launch {
        path: PathBuf,
        #[source]
        source: CdpError,
    },
    #[error("the viewport must be 1 to {MAX_SIDE} pixels on each side, got {width}x{height}")]
    BadViewport { width: u32, height: u32 },
    #[error("could not open {url}: {source}")]
    Navigate {
        url: String,
        #[source]
        source: CdpError,
    },
    #[error("{url} did not finish loading within {} s", LOAD_TIMEOUT.as_secs())]
    LoadTimeout { url: String },
    /// The URL policy refused the address (a step's URL, a redirect, a link).
    #[error("NAVIGATION_REFUSED: {0}")]
    Refused(#[from] Refusal),
    #[error("the ignore selector `{selector}` is not a valid CSS selector ({reason})")]
    BadSelector { selector: String, reason: String },
    #[error("at most {MAX_SELECTORS} ignore selectors are taken, not {count}")]
    TooManySelectors { count: usize },
    #[error(
        "the ignore selectors matched more than {MAX_BOXES} elements: name their containers instead"
    )]
    TooManyBoxes,
    #[error("the page did not say where the ignored elements are (its own script replaced the DOM functions Vaider reads)")]
    BoxesUnread,
    #[error("the browser failed while {doing}: {source}")]
    Cdp {
        doing: &'static str,
        #[source]
        source: CdpError,
    },
}

/// The size of the page's visible area in CSS pixels; the shot has exactly this size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            width: 1280,
            height: 800,
        }
    }
}

/// A device a page is shown as (one of Playwright's descriptors: "iPhone 13", "Pixel 7"): its
/// device pixel ratio, a phone's mobile layout and touch, and its user agent. The viewport is
/// given beside it (the device's own, or one the caller chose); a shot is `viewport × scale`
/// pixels, as on the device.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: String,
    pub viewport: Viewport,
    pub scale: f64,
    pub mobile: bool,
    pub touch: bool,
    pub user_agent: String,
}

// A device's scale is a finite, positive number (see vaider-capture's descriptors), never NaN.
impl Eq for Device {}

/// Polls the browser's connection: the handler carries every CDP message, and nothing moves
/// unless it is polled.
async fn carry_messages(mut handler: chromiumoxide::Handler) {
    while let Some(event) = handler.next().await {
        if let Err(error) = event {
            tracing::debug!(%error, "browser connection message");
        }
    }
}

/// A running headless browser. Dropping it kills the browser and removes its profile.
pub struct Browser {
    browser: chromiumoxide::Browser,
    handler: JoinHandle<()>,
    /// Chromium, when Vaider started it itself (on Unix, with its DevTools on pipes).
    child: Option<tokio::process::Child>,
    /// Carry the DevTools messages between Chromium, chromiumoxide and the warden.
    _carriers: devtools::Carriers,
    /// The proxy every connection of the browser goes through.
    _egress: egress::Egress,
    /// Holds popups, cross-site frames and workers to their tab's policy.
    warden: warden::Warden,
    /// How this browser resolves names it is told to map (`--host-resolver-rules`), so the
    /// policy judges a name by the address the browser will use.
    host_rules: url_policy::HostRules,
    // Kept for its Drop: the profile folder lives exactly as long as the browser.
    profile: tempfile::TempDir,
}

impl Browser {
    /// Starts the browser found by [`find_chrome`].
    pub async fn launch() -> Result<Browser, BrowserError> {
        Browser::launch_with(find_chrome()?).await
    }

    /// The browser's own profile folder (removed with the browser): where anything it would
    /// keep, a denied download included, could only land.
    pub fn profile_dir(&self) -> &std::path::Path {
        self.profile.path()
    }

    /// Starts the given Chromium or Chrome program, headless, with a fresh profile.
    pub async fn launch_with(program: PathBuf) -> Result<Browser, BrowserError> {
        Browser::launch_as(program, true, &[]).await
    }

    /// Starts the given program (None: the one found on the machine), headless or with its
    /// window shown (`headless: false`, for watching a run; it needs a display).
    pub async fn launch_shown(
        program: Option<PathBuf>,
        headless: bool,
    ) -> Result<Browser, BrowserError> {
        Browser::launch_with_flags(program, headless, &[]).await
    }

    /// Like [`Browser::launch_shown`], with more Chromium flags (the tests map host names to
    /// loopback listeners with `--host-resolver-rules`).
    pub async fn launch_with_flags(
        program: Option<PathBuf>,
        headless: bool,
        flags: &[String],
    ) -> Result<Browser, BrowserError> {
        let program = match program {
            Some(program) => program,
            None => find_chrome()?,
        };
        Browser::launch_as(program, headless, flags).await
    }

    async fn launch_as(
        program: PathBuf,
        headless: bool,
        flags: &[String],
    ) -> Result<Browser, BrowserError> {
        // A fresh profile per launch: no cache, cookies or lock files shared with another run.
        let profile = tempfile::Builder::new()
            .prefix("vaider-chrome-")
            .tempdir()
            .map_err(BrowserError::Profile)?;
        launch::quiet_profile(profile.path()).map_err(BrowserError::Profile)?;
        let registry = warden::Registry::default();
        let egress =
            egress::Egress::start(registry.clone())
                .await
                .map_err(|e| BrowserError::Launch {
                    path: program.clone(),
                    source: CdpError::Io(e),
                })?;
        let args = launch::chromium_args(headless, profile.path(), flags, &egress.flags());
        let started = devtools::start(&program, &args).await?;
        let handler = tokio::spawn(carry_messages(started.handler));
        let warden = match warden::Warden::start(started.warden, registry).await {
            Ok(warden) => warden,
            Err(error) => {
                // Without it popups and cross-site frames would run unguarded: no browser.
                handler.abort();
                return Err(error);
            }
        };
        Ok(Browser {
            browser: started.browser,
            handler,
            child: started.child,
            _carriers: started.carriers,
            _egress: egress,
            warden,
            host_rules: url_policy::HostRules::from_flags(flags),
            profile,
        })
    }

    /// Opens `url` in a new tab of `viewport`'s size, waits until the page is still, and returns
    /// a PNG of the viewport (or of the whole page when `full_page`). The page is held to
    /// [`UrlPolicy::for_page`]: web pages only, never link-local or metadata addresses, the
    /// machine's own ports only when `url` is on it.
    ///
    /// "Still" means: loaded, web fonts ready, every image decoded, no network request for
    /// half a second, CSS animations and transitions stopped, the caret hidden and focus taken
    /// away, so that two shots of an unchanged page are the same bytes.
    pub async fn page_screenshot(
        &self,
        url: &str,
        viewport: Viewport,
        full_page: bool,
    ) -> Result<Vec<u8>, BrowserError> {
        let shot = self
            .page_screenshot_ignoring(url, viewport, None, full_page, &[])
            .await?;
        Ok(shot.png)
    }

    /// [`Browser::page_screenshot`], shown as `device` when one is given, also reading, right
    /// before the shot, the boxes of the elements each of `ignore_selectors` matches (CSS
    /// selectors; an invalid one is refused with its name).
    pub async fn page_screenshot_ignoring(
        &self,
        url: &str,
        viewport: Viewport,
        device: Option<&Device>,
        full_page: bool,
        ignore_selectors: &[String],
    ) -> Result<PageShot, BrowserError> {
        check_viewport(viewport)?;
        boxes::check_selectors(ignore_selectors)?;
        let policy = std::sync::Arc::new(self.resolving_as_browser(UrlPolicy::for_page(url)?));
        let page = self
            .browser
            .new_page("about:blank")
            .await
            .map_err(cdp("opening a tab"))?;
        let target = page.target_id().inner().clone();
        // An invalid selector is refused on the blank tab, before the page is loaded for it.
        let guarded = match boxes::element_boxes(&page, ignore_selectors, false).await {
            Ok(_) => guard::guard(&page, policy.clone()).await,
            Err(error) => Err(error),
        };
        let shot = match guarded {
            Ok((guard, refused)) => {
                let _hold = self.warden.hold(&target, policy, refused.clone());
                let shot = shoot(&page, url, viewport, device, full_page, ignore_selectors).await;
                guard.abort();
                let navigation = refused
                    .lock()
                    .ok()
                    .and_then(|r| r.iter().find(|b| b.navigation).map(|b| b.refusal.clone()));
                match navigation {
                    // A redirect away: the shot would be the browser's error page, not the page.
                    Some(refusal) => Err(BrowserError::Refused(refusal)),
                    None => shot,
                }
            }
            Err(error) => Err(error),
        };
        if let Err(error) = page.close().await {
            tracing::debug!(%error, "closing the tab");
        }
        shot
    }

    /// `policy`, its names resolved as this browser resolves them (unless it has its own rules).
    pub(crate) fn resolving_as_browser(&self, policy: UrlPolicy) -> UrlPolicy {
        match policy.has_host_rules() {
            true => policy,
            false => policy.with_host_rules(self.host_rules.clone()),
        }
    }

    /// Closes the browser and waits for it to exit (dropping it kills it without waiting).
    pub async fn close(mut self) {
        if let Err(error) = self.browser.close().await {
            tracing::debug!(%error, "asking the browser to close");
        }
        if let Err(error) = self.browser.wait().await {
            tracing::debug!(%error, "waiting for the browser to exit");
        }
        if let Some(child) = self.child.as_mut() {
            if let Err(error) = child.wait().await {
                tracing::debug!(%error, "waiting for the browser to exit");
            }
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.handler.abort();
        // The child was started with kill-on-drop; killing it here too means it is gone before
        // the profile folder is removed rather than some time after.
        if let Some(child) = self.browser.get_mut_child() {
            if let Err(error) = child.as_mut_inner().start_kill() {
                tracing::debug!(%error, "killing the browser");
            }
        }
        if let Some(child) = self.child.as_mut() {
            if let Err(error) = child.start_kill() {
                tracing::debug!(%error, "killing the browser");
            }
        }
    }
}

async fn shoot(
    page: &Page,
    url: &str,
    viewport: Viewport,
    device: Option<&Device>,
    full_page: bool,
    ignore_selectors: &[String],
) -> Result<PageShot, BrowserError> {
    set_metrics(page, viewport, device).await?;
    if let Some(device) = device {
        emulate(page, device).await?;
    }
    // Listen before navigating, or the page's first requests would be missed.
    let network = settle::NetworkWatch::start(page).await?;
    match tokio::time::timeout(LOAD_TIMEOUT, page.goto(url)).await {
        Err(_) => return Err(BrowserError::LoadTimeout { url: url.into() }),
        Ok(Err(source)) => {
            return Err(BrowserError::Navigate {
                url: url.into(),
                source,
            })
        }
        Ok(Ok(_)) => {}
    }
    settle::settle(page, network).await?;
    // Set again: something the page did (or an earlier full-page shot) may have changed it.
    set_metrics(page, viewport, device).await?;
    // A device's whole page: the viewport grown to the page's height at the device's scale
    // (the browser's own full-page shot would drop the scale to 1).
    let device_full_page = full_page && device.is_some();
    if device_full_page {
        let height = page_height(page, viewport).await?;
        set_metrics(page, Viewport { height, ..viewport }, device).await?;
    }
    let full_page = full_page && !device_full_page;
    // Read at the viewport's size, right before the shot, where the page is still.
    let (device_pixel_ratio, matched) =
        boxes::element_boxes(page, ignore_selectors, full_page).await?;
    let params = ScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .full_page(full_page)
        .build();
    let png = page
        .screenshot(params)
        .await
        .map_err(cdp("taking the screenshot"))?;
    if full_page || device_full_page {
        // A full-page shot resizes the page to its content and leaves it so.
        set_metrics(page, viewport, device).await?;
    }
    Ok(PageShot {
        png,
        device_pixel_ratio,
        matched,
    })
}

/// The page's content height in CSS pixels, at least the viewport's, at most what Chromium
/// can paint at the device's scale.
async fn page_height(page: &Page, viewport: Viewport) -> Result<u32, BrowserError> {
    let metrics = page
        .layout_metrics()
        .await
        .map_err(cdp("measuring the page"))?;
    let height = metrics.css_content_size.height.ceil().max(1.0) as u32;
    Ok(height.clamp(viewport.height, MAX_SIDE / 4))
}

/// A device's user agent and touch, set before the page loads (its scripts read them).
async fn emulate(page: &Page, device: &Device) -> Result<(), BrowserError> {
    if !device.user_agent.is_empty() {
        page.execute(SetUserAgentOverrideParams::new(device.user_agent.clone()))
            .await
            .map_err(cdp("setting the device's user agent"))?;
    }
    if device.touch {
        let mut touch = SetTouchEmulationEnabledParams::new(true);
        touch.max_touch_points = Some(5);
        page.execute(touch)
            .await
            .map_err(cdp("turning on the device's touch"))?;
    }
    Ok(())
}

fn check_viewport(viewport: Viewport) -> Result<(), BrowserError> {
    let fits = |side: u32| (1..=MAX_SIDE).contains(&side);
    if fits(viewport.width) && fits(viewport.height) {
        Ok(())
    } else {
        Err(BrowserError::BadViewport {
            width: viewport.width,
            height: viewport.height,
        })
    }
}

async fn set_viewport(page: &Page, viewport: Viewport) -> Result<(), BrowserError> {
    set_metrics(page, viewport, None).await
}

/// The viewport, at the device's scale and with its mobile layout; without a device, scale 1
/// so one CSS pixel is one image pixel, whatever the machine's display.
async fn set_metrics(
    page: &Page,
    viewport: Viewport,
    device: Option<&Device>,
) -> Result<(), BrowserError> {
    let (scale, mobile) = device.map_or((1.0, false), |d| (d.scale, d.mobile));
    let metrics =
        SetDeviceMetricsOverrideParams::new(viewport.width, viewport.height, scale, mobile);
    page.execute(metrics)
        .await
        .map_err(cdp("setting the viewport"))?;
    Ok(())
}

fn cdp(doing: &'static str) -> impl FnOnce(CdpError) -> BrowserError {
    move |source| BrowserError::Cdp { doing, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viewport_outside_what_chromium_can_paint_is_refused() {
        for (width, height) in [(0, 600), (800, 0), (MAX_SIDE + 1, 600)] {
            let err = check_viewport(Viewport { width, height }).unwrap_err();
            assert!(
                err.to_string().contains(&format!("{width}x{height}")),
                "{err}"
            );
        }
        assert!(check_viewport(Viewport::default()).is_ok());
    }
}
